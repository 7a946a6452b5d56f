"""codegen.distances: a kernel matrix's padded rows turned into the n x n result a caller gets."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse.csgraph import floyd_warshall

from codegen.distances import compacted
from polyfw import solve


@given(st.integers(1, 70), st.integers(0, 40), st.sampled_from(["float64", "float32", "int32", "int16"]))
def test_compacted_rows_are_the_padded_rows_in_the_same_memory(n, padding, dtype):
    matrix = np.random.default_rng(n + padding).integers(-99, 99, size=(n, n + padding)).astype(dtype)
    expected = matrix[:, :n].copy()
    found = compacted(matrix)
    assert found.flags.c_contiguous and found.shape == (n, n) and found.dtype == matrix.dtype
    assert np.shares_memory(found, matrix)
    assert np.array_equal(found, expected)


def test_compacted_refuses_a_matrix_it_cannot_compact_in_place():
    with pytest.raises(ValueError, match=r"C-contiguous n x stride array with stride >= n, got shape \(4, 8\) "
                                         r"\(not C-contiguous\)"):
        compacted(np.zeros((4, 16))[:, ::2])
    with pytest.raises(ValueError, match=r"got shape \(4, 3\)"):
        compacted(np.zeros((4, 3)))


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_solve_returns_its_matrix_compacted_with_its_predecessors(dtype):
    graph = np.random.default_rng(7).integers(1, 50, size=(203, 203)).astype(np.float64)
    graph[np.random.default_rng(8).random(graph.shape) < 0.9] = np.inf
    distances, predecessors = solve(graph, dtype=dtype, predecessors=True, schedule="classic:tile=32")
    expected, expected_predecessors = floyd_warshall(graph, return_predecessors=True)
    assert distances.flags.c_contiguous and distances.flags.writeable and predecessors.flags.c_contiguous
    assert np.array_equal(np.where(distances >= np.iinfo(np.int32).max // 2, np.inf, distances)
                          if dtype == "int32" else distances, expected)
    reached = np.isfinite(expected) & ~np.eye(203, dtype=bool)
    rows = np.nonzero(reached)[0]
    # each predecessor closes a shortest path: d(i, p) + w(p, j) == d(i, j)
    assert np.array_equal(expected[rows, predecessors[reached]] + graph[predecessors[reached], np.nonzero(reached)[1]],
                          expected[reached])
    assert expected_predecessors.shape == predecessors.shape
