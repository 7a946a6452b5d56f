"""The LLVM intrinsics the CPU kernels are built from, one test each."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

from codegen.intrinsics import prefetch, prefetch_read, semiring_block, target_isa, vector_width
from tiling.semirings import top

UFUNCS = {"min": np.minimum, "max": np.maximum, "add": np.add}


@pytest.mark.isa
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
        a[6, 41] = top(dtype)  # an INF operand must not win or overflow
        a[41, 4] = a[6, 41]
    expected = a.copy()
    c = expected[i0:i0 + rows, j0:j0 + columns]
    for k in range(k0, k0 + depth):
        through = UFUNCS[times](expected[i0:i0 + rows, k:k + 1], expected[k:k + 1, j0:j0 + columns])
        UFUNCS[plus](c, through, out=c)
    run(a, i0, j0, k0, depth)
    assert np.array_equal(a, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int16"])
def test_a_block_that_keeps_predecessors_takes_the_nest_orders_improvements(dtype):
    """With C and its predecessors in registers, each entry sees a[i, k] + a[k, j] in ascending k and takes the
    strictly better ones with pred[k, j]: what the nest's order does, ties included (weights 0..50 tie often)."""
    rows, vectors = 3, 2
    block = semiring_block(rows, vectors, "min", "add", predecessors=True)

    @njit
    def run(a, pred, i0, j0, k0, depth):
        block(a, pred, np.uint64(i0), np.uint64(j0), np.uint64(k0), np.uint64(depth))

    columns = vectors * vector_width(np.dtype(dtype).itemsize)
    rng = np.random.default_rng(7)
    i0, j0, k0, depth = 1, 3, columns + 8, 37
    a = rng.integers(0, 50, size=(k0 + depth + 2, k0 + depth + 2)).astype(dtype)
    a[2, k0 + 1] = a[k0 + 1, 4] = top(dtype)  # an INF operand must not win or overflow
    pred = rng.integers(0, a.shape[0], size=a.shape).astype(np.int32)
    expected, expected_pred = a.copy(), pred.copy()
    for k in range(k0, k0 + depth):
        for i in range(i0, i0 + rows):
            for j in range(j0, j0 + columns):
                through = min(int(expected[i, k]) + int(expected[k, j]), int(top(dtype))) if dtype == "int16" \
                    else expected[i, k] + expected[k, j]
                if through < expected[i, j]:
                    expected[i, j], expected_pred[i, j] = through, expected_pred[k, j]
    run(a, pred, i0, j0, k0, depth)
    assert np.array_equal(a, expected) and np.array_equal(pred, expected_pred)
    assert (pred != rng.integers(0, 1, size=1)).any()


def test_prefetch_changes_nothing():
    @njit
    def touch(a):
        for i in range(a.shape[0]):
            prefetch(a, i, 0)

    a = np.arange(12.0).reshape(3, 4)
    touch(a)
    assert np.array_equal(a, np.arange(12.0).reshape(3, 4))


def test_prefetch_read_asks_for_a_line_to_read_and_changes_nothing():
    """llvm.prefetch's second argument is 0 (read) for prefetch_read, 1 (write) for prefetch."""
    @njit
    def touch(a, rows):
        for i in range(a.shape[0]):
            prefetch_read(a, i)
            prefetch(rows, i % rows.shape[0], 0)

    a, rows = np.arange(5), np.zeros((2, 3))
    touch(a, rows)
    assert np.array_equal(a, np.arange(5)) and not rows.any()
    calls = re.findall(r"call void @llvm\.prefetch\.p0\([^,]*, i32 (\d), i32 (\d)", touch.inspect_llvm(touch.signatures[0]))
    assert sorted(set(calls)) == [("0", "3"), ("1", "3")]


FORCED_ISA = """
import numpy as np, schedules
from codegen import floyd_warshall_nest, generate
from codegen.intrinsics import target_isa, vector_registers, vector_width
from codegen.kernels import KernelOptions
from polyfw.graphs import polybench_matrix
for family, params in (("classic", {"tile": 16}), ("generalized", {"tile": 16, "kappa": 2})):
    matrix = polybench_matrix(45).astype(DTYPE)
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    generate(schedules.build(family, 45, **params), dtype=DTYPE)(matrix)
    assert (matrix == expected).all(), family
print(target_isa(), vector_width(4), vector_registers(), *KernelOptions("float32").register_block)
"""


@pytest.mark.parametrize("isa, dtype, shape", [("avx2", "float32", "avx2 8 16 4 16"),
                                               ("sse2", "int32", "sse2 4 16 4 8")])
def test_a_narrower_isa_shapes_the_kernels_and_stays_exact(isa, dtype, shape):
    # AVX2 and SSE2 code runs on a wider machine: POLYFW_ISA picks the shapes it would get there
    # (one dtype each: every kernel module is compiled afresh in the subprocess)
    done = subprocess.run([sys.executable, "-c", f"DTYPE = {dtype!r}\n" + FORCED_ISA], capture_output=True,
                          text=True, env={**os.environ, "POLYFW_ISA": isa})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-5:] == shape.split()


@pytest.mark.isa
def test_a_register_block_that_does_not_fit_is_refused():
    from codegen.intrinsics import vector_registers
    from codegen.kernels import KernelOptions

    rows = vector_registers() // 2  # rows x 4 vectors + 4 + 2 (+ 1 on sse2) > registers
    width = vector_width(4)
    needed = rows * 4 + 6 + (target_isa() == "sse2")
    with pytest.raises(ValueError, match=rf"needs {needed} vector registers \({rows} x 4 accumulators"):
        KernelOptions("float32", register_block=(rows, 4 * width))
