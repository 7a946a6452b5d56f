"""Per-call cost of polyfw.solve on a 20-vertex graph: the median of many calls, by default and
forced dense in float64. Run it on two trees alternately to compare them (PYTHONPATH=OLD_TREE)."""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402

import polyfw  # noqa: E402


def median_microseconds(call, calls: int) -> float:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return float(np.median(times)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--calls", type=int, default=400)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    matrix = np.where(rng.random((args.n, args.n)) < 0.2, rng.integers(1, 9, (args.n, args.n)), np.inf)
    for _ in range(20):  # compile and warm the caches
        polyfw.solve(matrix)
        polyfw.solve(matrix, method="dense", dtype="float64")
    default = median_microseconds(lambda: polyfw.solve(matrix), args.calls)
    dense = median_microseconds(lambda: polyfw.solve(matrix, method="dense", dtype="float64"), args.calls)
    print(f"n = {args.n}: solve default {default:.0f} us, dense float64 {dense:.0f} us (median of {args.calls})")


if __name__ == "__main__":
    main()
