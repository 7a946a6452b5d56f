"""The result a caller gets from a kernel's matrix (rows padded to codegen.kernels.padded_stride): float64
with inf where unreachable, as a scipy user expects, or the matrix itself without its padding.

float64 is one parallel pass over the padded matrix: numpy's where/astype took three passes and
60-110 ms at n = 2642, a fifth of solve's default call on the road network.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from tiling.code_cache import parallel_above
from tiling.pages import mapped_empty
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


@njit(cache=True)
def _rows_moved_down(flat, n, stride):
    for i in range(1, n):
        source, target = i * stride, i * n
        for j in range(n):  # forward: a row's new place starts below its old one
            flat[target + j] = flat[source + j]


def compacted(matrix: np.ndarray) -> np.ndarray:
    """The n x n result in the padded C-contiguous `matrix`'s own memory, C-contiguous: its rows moved down
    in order, row i from i * stride to i * n (below its old place and every later row's). It leaves the
    matrix's memory scrambled. One thread, in place: faster than a copy into a fresh n x n array on every
    thread (Zen 4, float64 at n = 4096: 12.5 ms against 21 ms into just-freed memory), and no second array
    to take fresh pages for."""
    n, stride = matrix.shape[0], matrix.shape[1]
    if not matrix.flags.c_contiguous or stride < n:
        raise ValueError(f"matrix must be a C-contiguous n x stride array with stride >= n, got shape "
                         f"{matrix.shape} ({'' if matrix.flags.c_contiguous else 'not '}C-contiguous)")
    flat = matrix.reshape(-1)
    _rows_moved_down(flat, n, stride)
    return flat[:n * n].reshape(n, n)
