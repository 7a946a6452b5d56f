"""Strongly connected parts on packed rows (polyfw.graphs.components), and reachability taken through
them by solve's default path: parts as scipy finds them, numbered in topological order, closures exact
against a plain Warshall."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

import polyfw
import polyfw.graphs.components as components
import polyfw.solver
from codegen.packed_kernels import pack_rows

from .test_packed import random_adjacency, warshall


def with_cycles(n: int, arcs: int, cycles: int, seed: int) -> np.ndarray:
    """A random DAG's arcs (tail before head) and a few arcs back, so that parts of every size occur."""
    rng = np.random.default_rng(seed)
    adjacency = np.zeros((n, n), dtype=bool)
    tails, heads = rng.integers(0, n, arcs), rng.integers(0, n, arcs)
    adjacency[np.minimum(tails, heads), np.maximum(tails, heads)] = True
    back = rng.integers(0, n, (2, cycles))
    adjacency[np.maximum(*back), np.minimum(*back)] = True
    return adjacency


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.floats(0.0, 6.0), st.integers(0, 40), st.integers(0, 2**16))
def test_parts_are_scipys_in_topological_order(n, degree, cycles, seed):
    adjacency = with_cycles(n, int(degree * n), cycles, seed)
    part, parts = components.strong_components(pack_rows(adjacency | np.eye(n, dtype=bool)), n)
    count, labels = connected_components(csr_matrix(adjacency), directed=True, connection="strong")
    assert parts == count and part.min() == 0 and part.max() == parts - 1
    assert len(set(zip(part.tolist(), labels.tolist()))) == count  # the same partition
    tails, heads = np.nonzero(adjacency)
    assert np.all(part[tails] <= part[heads])


@pytest.fixture
def condensing_always(monkeypatch):
    """Every graph with fewer parts than vertices is condensed, however small."""
    monkeypatch.setattr(components, "_PAIR_UPDATES_A_BIT", 0)
    taken = []
    real = components.condensation
    monkeypatch.setattr(polyfw.solver, "condensation",
                        lambda *args: taken.append(real(*args)) or taken[-1])
    return taken


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 200), st.floats(0.0, 8.0), st.integers(0, 60), st.integers(0, 2**16), st.booleans())
def test_closures_through_the_parts_are_warshall(n, degree, cycles, seed, directed):
    adjacency = with_cycles(n, int(degree * n), cycles, seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(components, "_PAIR_UPDATES_A_BIT", 0)
        reach = polyfw.solve(adjacency, semiring="or-and", directed=directed)
    assert np.array_equal(reach, warshall(adjacency if directed else adjacency | adjacency.T))


def test_a_graph_with_a_giant_part_is_closed_through_it(condensing_always):
    adjacency = random_adjacency(300, 1200, 3)  # four arcs a vertex: most vertices in one part
    reach = polyfw.solve(adjacency, semiring="or-and")
    condensed, part = condensing_always[-1]
    assert part.max() + 1 < 50 and len(condensed) == 64  # the closure ran on one tile of whole words
    assert np.array_equal(reach, warshall(adjacency))
    assert np.array_equal(reach, polyfw.solve(adjacency, semiring="or-and", dtype="uint8"))


def test_an_asked_schedule_runs_over_every_vertex(condensing_always):
    adjacency = random_adjacency(300, 1200, 3)
    reach = polyfw.solve(adjacency, semiring="or-and", tile=64)
    assert condensing_always == [] and np.array_equal(reach, warshall(adjacency))


def test_a_dag_or_a_small_graph_is_not_condensed():
    dag = with_cycles(2048, 8192, 0, 1)
    assert components.condensation(pack_rows(dag | np.eye(2048, dtype=bool)), 2048, lambda parts: parts) is None
    pairs = np.zeros((200, 200), dtype=bool)  # 100 parts of 2 vertices: half the vertices, too small to pay
    pairs[np.arange(0, 200, 2), np.arange(1, 200, 2)] = pairs[np.arange(1, 200, 2), np.arange(0, 200, 2)] = True
    assert components.condensation(pack_rows(pairs | np.eye(200, dtype=bool)), 200, lambda parts: 128) is None
    big_cycle = np.roll(np.eye(2048, dtype=bool), 1, axis=1)
    condensed, part = components.condensation(pack_rows(big_cycle | np.eye(2048, dtype=bool)), 2048,
                                              lambda parts: 64)
    assert condensed.shape == (64, 1) and not part.any() and int(condensed[0, 0]) == 1


def test_a_large_answer_is_copied_out_by_every_thread_alike():
    n = components.COPIED_IN_PARALLEL_FROM + 52
    adjacency = random_adjacency(n, 4 * n, 5)
    assert components.condensation(pack_rows(adjacency | np.eye(n, dtype=bool)), n, lambda parts: parts) is not None
    assert np.array_equal(polyfw.solve(adjacency, semiring="or-and"),
                          polyfw.solve(adjacency, semiring="or-and", dtype="uint8"))
