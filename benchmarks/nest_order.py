"""The tile kernels that are not products, by dtype, on one thread: the pivot block's closure (I) and the
nest order (relax_layers, what the closure runs on its sub-pivots), beside the product on a DD
tile-layer; then whole small `solve` calls beside scipy's floyd_warshall. A small call is mostly pivots,
so these are what it waits on. Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/nest_order.py [--tiles 32 128] [--sizes 128 256 384]
        [--dtypes float32 float64 int32 int16] [--rounds 9]

Kernels and calls take turns in rounds (medians); run it on two trees alternately to compare them
(PYTHONPATH=OLD_TREE).
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from codegen.cpu import _compile_kernels  # noqa: E402  (first: it sets Numba's CPU features)

import numpy as np  # noqa: E402
from scipy.sparse.csgraph import floyd_warshall  # noqa: E402

from codegen.kernels import KernelOptions, padded_stride  # noqa: E402
from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw import solve  # noqa: E402

from interleaved import random_distances  # noqa: E402  (benchmarks/interleaved.py)
from record import Table  # noqa: E402  (benchmarks/record.py)

#: kernel name -> the bounds (k0, k1, i0, i1, j0, j1) of its tile-layer in a 3 x 3 block matrix of tiles
KERNELS = {
    "relax_closure": lambda t: (0, t, 0, t, 0, t),
    "relax_layers": lambda t: (0, t, 0, t, 0, t),
    "relax_product": lambda t: (0, t, t, 2 * t, 2 * t, 3 * t),
}


def kernel_calls(dtypes: list[str], tiles: list[int]) -> dict[tuple, tuple]:
    """(dtype, tile, kernel) -> (kernel, its matrix, the matrix's starting values, bounds)."""
    calls = {}
    status = np.full(1, -1, dtype=np.int64)
    for dtype in dtypes:
        kernels = _compile_kernels(KernelOptions(dtype=dtype))[0]
        for tile in tiles:
            side = 3 * tile
            base = np.zeros((side, padded_stride(side)), dtype=dtype)
            base[:, :side] = random_distances(side, dtype)
            for name, bounds in KERNELS.items():
                kernel = getattr(kernels, name)
                calls[dtype, tile, name] = (lambda a, k=kernel, b=bounds(tile): k(a, *b, status), base.copy(), base)
    return calls


def median_rounds(calls: dict, rounds: int) -> dict:
    """Median seconds of each call, the calls taking turns; a kernel starts from its starting values."""
    times = {key: [] for key in calls}
    for round_ in range(rounds + 1):
        for key, (call, matrix, base) in calls.items():
            if base is not None:
                matrix[...] = base
            started = time.perf_counter()
            call(matrix)
            if round_:  # the first round compiles and warms up
                times[key].append(time.perf_counter() - started)
    return {key: float(np.median(found)) for key, found in times.items()}


def solve_calls(dtypes: list[str], sizes: list[int]) -> dict[tuple, tuple]:
    """(n, contender) -> a call on a random graph, 30% of the arcs, weights 1-50 (int16 holds every path
    up to n = 668 exactly), each answer checked against scipy's once."""
    calls = {}
    for n in sizes:
        rng = np.random.default_rng(n)
        graph = np.where(rng.random((n, n)) < 0.3, rng.integers(1, 51, (n, n)).astype(float), np.inf)
        np.fill_diagonal(graph, 0)
        expected = floyd_warshall(graph)
        calls[n, "scipy floyd_warshall"] = (lambda _, g=graph: floyd_warshall(g), None, None)
        for dtype in dtypes:
            if not np.array_equal(solve(graph, dtype=dtype).astype(float), expected):
                raise SystemExit(f"solve(dtype={dtype!r}) differs from scipy at n = {n}")
            calls[n, f"solve(dtype={dtype!r})"] = (lambda _, g=graph, d=dtype: solve(g, dtype=d), None, None)
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiles", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256, 384])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64", "int32", "int16"])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    cpu = cpu_description()
    machine = f"{cpu['model']} ({cpu['llvm_cpu']}, {cpu['isa']}, {cpu['vector_bytes']}-byte vectors)"
    kernels = median_rounds(kernel_calls(args.dtypes, args.tiles), args.rounds)
    table = Table("nest_order", "tile kernels on one thread", ["dtype", "tile", "kernel", "µs", "G relax/s"],
                  note=f"{machine}; medians of {args.rounds} interleaved rounds")
    for (dtype, tile, name), seconds in kernels.items():
        table.add(dtype, tile, name, round(seconds * 1e6, 1), round(tile**3 / seconds / 1e9, 2))
    table.record()
    calls = median_rounds(solve_calls(args.dtypes, args.sizes), args.rounds)
    table = Table("nest_order", "small solve calls", ["n", "call", "ms", "G relax/s", "scipy's time over it"],
                  note=f"{machine}, all threads; medians of {args.rounds} interleaved rounds")
    for (n, name), seconds in calls.items():
        table.add(n, name, round(seconds * 1e3, 3), round(n**3 / seconds / 1e9, 2),
                  round(calls[n, "scipy floyd_warshall"] / seconds, 1))
    table.record()


if __name__ == "__main__":
    main()
