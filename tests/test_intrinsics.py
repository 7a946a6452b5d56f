"""The LLVM intrinsics the CPU kernels are built from, one test each."""
import numpy as np
import pytest
from numba import njit

from codegen.intrinsics import prefetch, semiring_block, vector_width

UFUNCS = {"min": np.minimum, "max": np.maximum, "add": np.add}


@pytest.mark.parametrize("plus, times, dtype", [("min", "add", "float32"), ("min", "add", "float64"),
                                                ("min", "add", "int32"), ("max", "min", "float32"),
                                                ("min", "max", "int32"), ("max", "min", "uint8")])
@pytest.mark.parametrize("rows, vectors", [(1, 1), (3, 2), (8, 2)])
def test_semiring_block_matches_numpy(plus, times, dtype, rows, vectors):
    block = semiring_block(rows, vectors, plus, times)

    @njit
    def run(a, i0, j0, k0, depth):
        block(a, np.uint64(i0), np.uint64(j0), np.uint64(k0), np.uint64(depth))

    columns = vectors * vector_width(np.dtype(dtype).itemsize)
    rng = np.random.default_rng(rows * vectors)
    # an unaligned block (rows 5.., columns 3.., or 50.. for 64 lanes of uint8) apart from the rows
    # and columns k it reads, as in DD
    i0, j0, k0, depth = 5, 3 if columns < 37 else 50, 40, 9
    shape = (56, max(72, j0 + columns + 5))
    a = rng.integers(0, 2, size=shape) if dtype == "uint8" else rng.integers(-50, 1000, size=shape)
    a = a.astype(dtype)
    if dtype != "uint8":
        a[6, 41] = 2**30 - 1 if dtype == "int32" else np.inf  # an INF operand must not win or overflow
        a[41, 4] = a[6, 41]
    expected = a.copy()
    c = expected[i0:i0 + rows, j0:j0 + columns]
    for k in range(k0, k0 + depth):
        through = UFUNCS[times](expected[i0:i0 + rows, k:k + 1], expected[k:k + 1, j0:j0 + columns])
        UFUNCS[plus](c, through, out=c)
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
