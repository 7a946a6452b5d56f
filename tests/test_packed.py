"""Reachability on packed rows (codegen.packed_kernels): 64 vertices a word, the same proved schedules,
exact against the uint8 or-and path, networkx and a plain Warshall."""
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polyfw
import schedules
from codegen import generate
from codegen.packed_kernels import pack_rows, unpack_rows
from polyfw.graphs import random_graph


def warshall(adjacency: np.ndarray) -> np.ndarray:
    reach = adjacency.astype(bool) | np.eye(len(adjacency), dtype=bool)
    for k in range(len(reach)):
        reach |= reach[:, k:k + 1] & reach[k]
    return reach


def random_adjacency(n: int, arcs: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    adjacency = np.zeros((n, n), dtype=bool)
    adjacency[rng.integers(0, n, arcs), rng.integers(0, n, arcs)] = True
    return adjacency


def test_rows_pack_64_vertices_a_word_and_back():
    reach = random_adjacency(70, 900, 1)
    words = pack_rows(reach)
    assert words.shape == (70, 2) and words.dtype == np.uint64
    assert int(words[3, 1]) >> 6 == 0  # columns 70..127 are padding: 0
    assert all(bool(int(words[i, j // 64]) >> (j % 64) & 1) == reach[i, j] for i in (0, 5) for j in range(70))
    assert np.array_equal(unpack_rows(words, 70), reach)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 420), st.sampled_from([0.0, 0.02, 0.5, 1.0]), st.sampled_from([bool, np.uint8]),
       st.integers(0, 2**32 - 1))
def test_compiled_packing_is_numpys_packbits(n, density, dtype, seed):
    """Rows of whole bytes are packed eight bools a multiply (in parallel from n = 363); the words equal
    numpy's little-endian packbits, padding bits 0, for bool and 0/1 uint8 input."""
    reach = (np.random.default_rng(seed).random((n, n)) < density).astype(dtype)
    expected = np.zeros((n, -(-n // 64) * 8), dtype=np.uint8)
    expected[:, :-(-n // 8)] = np.packbits(reach.astype(bool), axis=1, bitorder="little")
    assert np.array_equal(pack_rows(reach), expected.view("<u8"))


@pytest.mark.parametrize("family, parameters", [("classic", {"tile": 64}), ("classic", {"tile": 128}),
                                                 ("generalized", {"tile": 64, "kappa": 2}),
                                                 ("recursive", {"base": 64}),
                                                 ("classic", {"tile": 64, "overlap": True})])
@pytest.mark.parametrize("n", [1, 130, 200])
def test_every_family_on_packed_rows_is_warshall(family, parameters, n):
    if family == "generalized" and n <= 64:
        parameters = {"tile": 64, "kappa": 1}
    adjacency = random_adjacency(n, 2 * n, n)
    words = pack_rows(adjacency | np.eye(n, dtype=bool))
    compiled = generate(schedules.build(family, n, **parameters), dtype="uint8", semiring="or-and", packed=True)
    assert compiled(words) == -1
    assert np.array_equal(unpack_rows(words, n), warshall(adjacency))


@pytest.mark.parametrize("n", [67, 200])
@pytest.mark.parametrize("family, parameters", [("classic", {"tile": 64}), ("classic", {"tile": 128}),
                                                 ("generalized", {"tile": 64, "kappa": 2})])
def test_full_words_are_looked_up_and_sparse_ones_walked_alike(family, parameters, n):
    """Rows of 30% arcs fill A's words past the walked limit (table lookups), a DAG's rows keep them sparse
    (bit walks): one graph of both, its closure against a plain Warshall."""
    rng = np.random.default_rng(n)
    adjacency = np.zeros((n, n), dtype=bool)
    adjacency[: n // 3] = rng.random((n // 3, n)) < 0.3
    tails = rng.integers(n // 3, n - 1, n)
    adjacency[tails, rng.integers(tails + 1, n)] = True
    words = pack_rows(adjacency | np.eye(n, dtype=bool))
    generate(schedules.build(family, n, **parameters), dtype="uint8", semiring="or-and", packed=True)(words)
    assert np.array_equal(unpack_rows(words, n), warshall(adjacency))


def test_packed_rows_need_whole_words_and_no_predecessors():
    with pytest.raises(ValueError, match="packed rows run tile-layers whose columns are whole words: a family "
                                         r"schedule whose tile is a multiple of 64, not classic\(n=100, tile=32\)"):
        generate(schedules.build("classic", 100, tile=32), dtype="uint8", semiring="or-and", packed=True)
    with pytest.raises(ValueError, match="packed rows .* hold reachability: semiring or-and without predecessors"):
        generate(schedules.build("classic", 100, tile=64), dtype="float32", semiring="min-plus", packed=True)
    compiled = generate(schedules.build("classic", 100, tile=64), dtype="uint8", semiring="or-and", packed=True)
    with pytest.raises(ValueError, match="a 2-D array with 100 rows and at least 2 columns"):
        compiled(np.zeros((100, 1), dtype=np.uint64))


def test_solve_takes_packed_rows_by_default_and_matches_uint8_and_networkx(monkeypatch):
    import codegen.cpu

    built = []
    real = codegen.cpu.build
    monkeypatch.setattr(codegen.cpu, "build", lambda *a, **k: built.append(k.get("packed")) or real(*a, **k))
    graph = random_graph(150, 400, weights=(1, 1), seed=2)
    reach = polyfw.solve(graph, semiring="or-and")
    assert built[-1] is True and reach.dtype == bool
    assert np.array_equal(reach, polyfw.solve(graph, semiring="or-and", dtype="uint8"))
    assert built[-1] is None or built[-1] is False  # dtype named: the uint8 path
    closure = nx.transitive_closure(nx.DiGraph(zip(graph.source.tolist(), graph.target.tolist())), reflexive=True)
    expected = np.zeros((150, 150), dtype=bool)
    for u, v in closure.edges:
        expected[u, v] = True
    np.fill_diagonal(expected, True)
    present = np.zeros(150, dtype=bool)
    present[list(closure.nodes)] = True
    assert np.array_equal(reach[np.ix_(present, present)], expected[np.ix_(present, present)])


def test_a_tile_that_is_not_whole_words_keeps_the_uint8_path():
    graph = random_graph(90, 200, weights=(1, 1), seed=4)
    assert np.array_equal(polyfw.solve(graph, semiring="or-and", tile=16),
                          polyfw.solve(graph, semiring="or-and", dtype="uint8"))


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 160), st.floats(0.0, 40.0), st.integers(0, 2**16),
       st.sampled_from([("classic", {"tile": 64}), ("generalized", {"tile": 64, "kappa": 1}),
                        ("classic", {"tile": 128})]))
def test_random_digraphs_on_packed_rows_are_warshall(n, degree, seed, family):
    adjacency = random_adjacency(n, int(degree * n), seed)
    name, parameters = family
    words = pack_rows(adjacency | np.eye(n, dtype=bool))
    generate(schedules.build(name, n, **parameters), dtype="uint8", semiring="or-and", packed=True)(words)
    assert np.array_equal(unpack_rows(words, n), warshall(adjacency))


def test_a_dense_bool_input_is_packed_as_it_is_directed_or_not():
    adjacency = random_adjacency(100, 150, 9)
    for directed in (True, False):
        assert np.array_equal(polyfw.solve(adjacency, semiring="or-and", directed=directed),
                              polyfw.solve(adjacency, semiring="or-and", directed=directed, dtype="uint8"))
