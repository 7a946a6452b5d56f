"""The result a scipy user expects, from a kernel's matrix: float64 with inf where unreachable.

One parallel pass over the (padded) kernel matrix: numpy's where/astype took three passes and
60-110 ms at n = 2642, a fifth of solve's default call on the road network.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from tiling.code_cache import mapped_empty, parallel_above
from tiling.semirings import top


@parallel_above()
def _as_float64(matrix, unreachable, position, out):
    n = out.shape[0]
    for i in prange(n):
        row = position[i]
        for j in range(n):
            value = matrix[row, position[j]]
            out[i, j] = np.inf if value >= unreachable else np.float64(value)


def float64_distances(matrix: np.ndarray, position: np.ndarray | None = None,
                      out: np.ndarray | None = None) -> np.ndarray:
    """float64 copy of an n x n kernel result (any row stride) with inf for its dtype's INF;
    `position[v]`: where vertex v's row and column are, when the kernel ran in another vertex order;
    `out`: an n x n float64 array to write it into."""
    n = matrix.shape[0]
    out = mapped_empty((n, n), np.float64) if out is None else out
    where = np.arange(n, dtype=np.int64) if position is None else position
    _as_float64(matrix[:, :n], matrix.dtype.type(top(matrix.dtype)), where, out)
    return out
