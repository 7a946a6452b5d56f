"""Per-call cost of polyfw.solve on a 20-vertex graph beside scipy's shortest_path(method='FW') on the
same graph, calls interleaved: the median of many calls, by default and forced dense in float64.
Issue 38's target: the default call within 1.5x of scipy's. Run it on two trees alternately to
compare them (PYTHONPATH=OLD_TREE)."""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402

import polyfw  # noqa: E402
from scipy.sparse.csgraph import shortest_path  # noqa: E402


def median_microseconds(calls: dict, rounds: int) -> dict[str, float]:
    """Each call's median time in microseconds, the calls taking turns (the host drifts)."""
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            started = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - started)
    return {name: float(np.median(found)) * 1e6 for name, found in times.items()}


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
    assert np.array_equal(polyfw.solve(matrix), shortest_path(matrix, method="FW"))
    found = median_microseconds({"default": lambda: polyfw.solve(matrix),
                                 "dense": lambda: polyfw.solve(matrix, method="dense", dtype="float64"),
                                 "scipy": lambda: shortest_path(matrix, method="FW")}, args.calls)
    print(f"n = {args.n}: solve default {found['default']:.0f} us, dense float64 {found['dense']:.0f} us, "
          f"scipy shortest_path(method='FW') {found['scipy']:.0f} us: default / scipy "
          f"{found['default'] / found['scipy']:.2f} (median of {args.calls}, interleaved)")


if __name__ == "__main__":
    main()
