"""A call reads its input once (polyfw.graphs.reading), and a dense matrix in one compiled pass that gives
what numpy's passes gave (polyfw.graphs.dense_facts)."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path
from hypothesis import given, settings
from hypothesis import strategies as st

from polyfw import solve
from polyfw.graphs import dense_facts as facts_module
from polyfw.graphs import inputs, small
from polyfw.graphs.small import SMALL_BELOW
from polyfw.graphs.dense_facts import dense_facts
from polyfw.graphs.reading import one_reading
from tiling.code_cache import PARALLEL_FROM_ENTRIES


def numpy_facts(matrix: np.ndarray) -> tuple:
    values = matrix.astype(np.float64)
    finite = values[np.isfinite(values)]
    off_diagonal = ~np.eye(*matrix.shape, dtype=bool)
    return (finite.size, int((finite != np.floor(finite)).sum()),
            float(finite.min()) if finite.size else np.inf, float(finite.max()) if finite.size else -np.inf,
            int(((values == 0) & off_diagonal).sum()), int((np.isnan(values) | (values == -np.inf)).sum()),
            int((finite.astype(np.float32).astype(np.float64) != finite).sum()))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.sampled_from(["float64", "float32", "int32", "int16"]), st.integers(0, 2**32 - 1))
def test_facts_match_numpy(n, dtype, seed):
    rng = np.random.default_rng(seed)
    values = rng.choice([0.0, 1.0, -3.0, 2.5, 1e9 + 1, np.inf, -np.inf, np.nan, 7.0], size=(n, n),
                        p=[0.15, 0.2, 0.1, 0.1, 0.05, 0.2, 0.05, 0.05, 0.1])
    if dtype.startswith("int"):
        values = np.where(np.isfinite(values), np.trunc(np.clip(values, -100, 100)), 5)
    matrix = values.astype(dtype)
    assert astuple_of(dense_facts(matrix)) == numpy_facts(matrix)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["float64", "float32", "int32", "int16"]), st.integers(0, 130), st.integers(0, 130),
       st.integers(0, 130), st.integers(0, 130))
def test_parallel_bounds_find_one_extreme_anywhere(dtype, low_row, low_column, high_row, high_column):
    """The parallel pass keeps bounds per column and block of rows (131 rows split unevenly): the one
    lightest and the one heaviest entry are found wherever they are."""
    n = 131
    assert n * n >= PARALLEL_FROM_ENTRIES
    matrix = np.full((n, n), 7, dtype=dtype)
    if dtype.startswith("float"):
        matrix[::3] = np.inf
    matrix[low_row, low_column], matrix[high_row, high_column] = -5, 99
    assert astuple_of(dense_facts(matrix)) == numpy_facts(matrix)


@pytest.mark.parametrize("n", [1, 160])  # a serial pass, and a parallel one (160^2 >= PARALLEL_FROM_ENTRIES)
def test_bounds_stay_finite_among_refused_entries(n):
    """NaN and -inf make an input refused; the facts still name its finite range (the message quotes it),
    for a matrix and for a list of arc weights alike."""
    rng = np.random.default_rng(n)
    matrix = rng.choice([np.nan, -np.inf, np.inf, 4.0, -2.0], size=(n, n))
    matrix[0, 0] = np.nan
    assert astuple_of(dense_facts(matrix)) == numpy_facts(matrix)
    weights = matrix.ravel().copy()
    found = dense_facts(weights)
    expected = numpy_facts(weights.reshape(1, -1))
    assert astuple_of(found)[:4] == expected[:4] and astuple_of(found)[5:] == expected[5:]


def astuple_of(found) -> tuple:
    return (found.finite, found.fractional, found.lightest, found.heaviest, found.off_diagonal_zeros,
            found.not_allowed, found.float32_rounds)


def test_parallel_pass_on_a_large_strided_view():
    n = 160  # 160^2 entries: above PARALLEL_FROM_ENTRIES, so the prange copy runs
    assert n * n >= PARALLEL_FROM_ENTRIES
    padded = np.full((n, n + 16), -np.inf)
    view = padded[:, :n]
    view[...] = np.arange(n * n, dtype=np.float64).reshape(n, n) % 97
    found = dense_facts(view)
    assert (found.finite, found.not_allowed, found.lightest, found.heaviest) == (n * n, 0, 0.0, 96.0)
    assert found.off_diagonal_zeros == int((view == 0).sum() - (np.diagonal(view) == 0).sum())


def test_one_pass_a_call(monkeypatch):
    """Inside one_reading a matrix is gathered once however many readers ask; outside, every time."""
    calls = []
    gather = facts_module._gather
    monkeypatch.setattr(facts_module, "_gather", lambda matrix: calls.append(1) or gather(matrix))
    matrix = np.array([[0.0, 1.0], [np.inf, 0.0]])
    with one_reading():
        assert dense_facts(matrix) is dense_facts(matrix)
    assert len(calls) == 1
    dense_facts(matrix)
    assert len(calls) == 2
    calls.clear()
    solve(np.full((30, 30), 2.0), dtype="float32")  # summary, checks, copy and lightest edge: one pass
    assert len(calls) == 1


def test_readers_still_refuse_and_warn():
    with pytest.raises(ValueError, match="NaN or -inf"):
        solve(np.array([[0.0, np.nan], [1.0, 0.0]]))
    with pytest.warns(UserWarning, match="zeros off the diagonal"):
        solve(np.array([[0.0, 0.0], [1.0, 0.0]]))
    with pytest.warns(UserWarning, match="rounds 1 weight"):
        solve(np.array([[0.0, 16777217.0], [1.0, 0.0]]), dtype="float32")


@pytest.mark.parametrize("kind", ["csr", "networkx"])
@pytest.mark.parametrize("n", [3, SMALL_BELOW + 10])
def test_edges_read_once_a_call(monkeypatch, kind, n):
    """The weight summary, the vertex order and the matrix all read the same edges: one reading a call, on
    the quick path of a small input (polyfw.graphs.small) and on the general one alike."""
    calls = []
    rng = np.random.default_rng(n)
    weights = np.where(rng.random((n, n)) < 3 / n, rng.integers(1, 9, (n, n)), 0).astype(float)
    graph = sp.csr_array(weights) if kind == "csr" else nx.from_numpy_array(weights, create_using=nx.DiGraph)

    def counted(module, name):
        read = getattr(module, name)
        monkeypatch.setattr(module, name, lambda first, *rest: calls.append(first is graph) or read(first, *rest))

    # (the edges read, once, are handed on as they are: reading those again costs nothing)
    counted(inputs, "_edges_or_dense")
    counted(small, "sparse_edges" if kind == "csr" else "edges_from_networkx")
    found = solve(graph)
    assert sum(calls) == 1
    assert np.array_equal(found, shortest_path(sp.csr_array(weights)))
    solve(graph)
    assert sum(calls) == 2  # a new call reads again: the graph may have changed between calls
