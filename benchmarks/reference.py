"""Reference kernels side by side: scipy's floyd_warshall and polyfw's naive Numba kernel.

Run: OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/reference.py [--sizes 1024 2048] [--repeats 3]
Rates are relaxations per second (n^3 / seconds); every row is a median of
--repeats runs, and ratios compare runs made in this one process.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from scipy.sparse.csgraph import floyd_warshall  # noqa: E402

from codegen import floyd_warshall_naive  # noqa: E402
from polyfw import graphs  # noqa: E402
from record import Table  # noqa: E402  (benchmarks/record.py)


def median_seconds(run, prepare, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        data = prepare()
        start = time.perf_counter()
        run(data)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    table = Table("reference", "reference kernels", ["n", "kernel", "median s", "G relax/s", "speed over scipy"],
                  note=f"numba {numba.__version__}, {numba.config.NUMBA_NUM_THREADS} threads; medians of "
                       f"{args.repeats}; a random graph with 4n arcs")
    for n in args.sizes:
        matrix = graphs.as_dense(graphs.random_graph(n, 4 * n, seed=n))
        edges = graphs.dense_to_sparse(matrix)
        scipy_s = median_seconds(floyd_warshall, lambda: edges, args.repeats)
        table.add(n, "scipy floyd_warshall (f64)", round(scipy_s, 3), round(n**3 / scipy_s / 1e9, 2), 1.0)
        for dtype in (np.float32, np.float64, np.int32):
            typed = graphs.as_dense(edges, dtype=dtype)
            floyd_warshall_naive(typed[:2, :2].copy())  # compile outside the timing
            seconds = median_seconds(floyd_warshall_naive, typed.copy, args.repeats)
            table.add(n, f"naive numba prange ({np.dtype(dtype).name})", round(seconds, 3),
                      round(n**3 / seconds / 1e9, 2), round(scipy_s / seconds, 2))
    table.record()


if __name__ == "__main__":
    main()
