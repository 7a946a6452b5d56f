"""Reference kernels: the loop nest as written, and the plain parallel baseline (min-plus);
the nest for any shipped semiring in numpy.

The Numba ones work in place on a C-contiguous square matrix of float32,
float64 or int32. They are the yardsticks every generated schedule is
compared with.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from tiling.semirings import semiring as find_semiring


@njit(cache=True)
def floyd_warshall_nest(a: np.ndarray) -> None:
    """The nest exactly as defined (k, i, j; serial), with no graph semantics at all."""
    n = a.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                through_k = a[i, k] + a[k, j]
                if through_k < a[i, j]:
                    a[i, j] = through_k


@njit(parallel=True, cache=True)
def floyd_warshall_naive(a: np.ndarray) -> int:
    """Layer by layer, rows in parallel; returns the first layer k with a[k, k] < 0, else -1.

    Row k is copied first: within a layer a[k, j] and a[i, k] do not change
    while a[k, k] >= 0, and the copy lets LLVM vectorise the j loop (it
    cannot prove rows i and k apart). A negative a[k, k] at the start of
    layer k proves a negative cycle through k; stopping there keeps every
    value a simple-path length, so int32 cannot overflow.
    """
    n = a.shape[0]
    pivot_row = np.empty(n, dtype=a.dtype)
    for k in range(n):
        if a[k, k] < 0:
            return k
        for j in range(n):
            pivot_row[j] = a[k, j]
        for i in prange(n):
            a_ik = a[i, k]
            for j in range(n):
                through_k = a_ik + pivot_row[j]
                if through_k < a[i, j]:
                    a[i, j] = through_k
    return -1


_UFUNCS = {"min": np.minimum, "max": np.maximum, "add": np.add}


def floyd_warshall_semiring(a: np.ndarray, semiring: str = "min-plus") -> None:
    """The nest over a selective semiring, in place, one layer k at a time in numpy.

    Within layer k, row k and column k are fixed points (a[i,k] (+) a[i,k] (x)
    a[k,k] = a[i,k] for max-min and min-max always, for min-plus when
    a[k,k] >= 0), so updating the whole layer from them at once is the nest.
    """
    ring = find_semiring(semiring)
    ring.check_relaxed()
    plus, times = _UFUNCS[ring.plus], _UFUNCS[ring.times]
    for k in range(a.shape[0]):
        plus(a, times(a[:, k:k + 1], a[k:k + 1, :]), out=a)
