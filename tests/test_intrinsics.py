"""The LLVM intrinsics the CPU kernels are built from, one test each."""
import numpy as np
import pytest
from numba import njit

from codegen.intrinsics import min_plus_block, prefetch, vector_width


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("rows, vectors", [(1, 1), (3, 2), (8, 2)])
def test_min_plus_block_matches_numpy(dtype, rows, vectors):
    block = min_plus_block(rows, vectors)

    @njit
    def run(a, i0, j0, k0, depth):
        block(a, np.uint64(i0), np.uint64(j0), np.uint64(k0), np.uint64(depth))

    columns = vectors * vector_width(np.dtype(dtype).itemsize)
    rng = np.random.default_rng(rows * vectors)
    a = rng.integers(-50, 1000, size=(56, 72)).astype(dtype)
    a[6, 41] = 2**30 - 1 if dtype == "int32" else np.inf  # an INF operand must not win or overflow
    a[41, 4] = a[6, 41]
    # an unaligned block (rows 5.., columns 3..) apart from the rows and columns k it reads, as in DD
    i0, j0, k0, depth = 5, 3, 40, 9
    expected = a.copy()
    c = expected[i0:i0 + rows, j0:j0 + columns]
    for k in range(k0, k0 + depth):
        np.minimum(c, expected[i0:i0 + rows, k:k + 1] + expected[k:k + 1, j0:j0 + columns], out=c)
    run(a, i0, j0, k0, depth)
    assert np.array_equal(a, expected)


def test_prefetch_changes_nothing():
    @njit
    def touch(a):
        for i in range(a.shape[0]):
            prefetch(a, i, 0)

    a = np.arange(12.0).reshape(3, 4)
    touch(a)
    assert np.array_equal(a, np.arange(12.0).reshape(3, 4))
