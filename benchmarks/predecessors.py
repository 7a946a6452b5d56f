"""Shortest paths with their predecessors: solve(a, dtype=D, predecessors=True) beside the same call without
them and beside scipy's floyd_warshall(..., return_predecessors=True), calls taking turns, medians. Every answer
is checked first: the distances equal the call without predecessors, and the paths the predecessors give from
sampled sources have the lengths reported. Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/predecessors.py [--sizes 1024 2048] \
        [--dtypes float32 int32 float64 int16] [--rounds 5] [--scipy-up-to 1024]

Run it on two trees alternately to compare them (PYTHONPATH=OLD_TREE).
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from scipy.sparse.csgraph import floyd_warshall  # noqa: E402

import polyfw  # noqa: E402
from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw.solver import NO_PREDECESSOR  # noqa: E402
from interleaved import taking_turns  # noqa: E402  (benchmarks/interleaved.py)
from record import print_and_record  # noqa: E402  (benchmarks/record.py)

#: sources whose paths to every target are walked back through the predecessors
CHECKED_SOURCES = 8


def dense_graph(n: int, dtype: str) -> np.ndarray:
    """A random digraph with 30% of the arcs, integer weights 1..999 (exact in every dtype's sums at these
    sizes but int16's, which gets 1..9), inf elsewhere."""
    rng = np.random.default_rng(n)
    heaviest = 9 if dtype == "int16" else 999
    a = np.where(rng.random((n, n)) < 0.3, rng.integers(1, heaviest + 1, (n, n)), np.inf)
    np.fill_diagonal(a, 0)
    return a


def checked(a: np.ndarray, dtype: str) -> None:
    """The predecessors' paths have the reported lengths, and the distances are those of the call without."""
    distances, pred = polyfw.solve(a, dtype=dtype, predecessors=True)
    alone = np.asarray(polyfw.solve(a, dtype=dtype), dtype=np.float64)
    distances = np.asarray(distances, dtype=np.float64)
    if not np.array_equal(distances, alone):
        raise SystemExit(f"{dtype}, n = {len(a)}: distances with predecessors differ from those without")
    for source in np.random.default_rng(1).choice(len(a), min(CHECKED_SOURCES, len(a)), replace=False):
        for target in range(len(a)):
            if target == source or not np.isfinite(distances[source, target]):
                continue
            length, vertex = 0.0, target
            for _ in range(len(a)):
                before = pred[source, vertex]
                if before == NO_PREDECESSOR:
                    raise SystemExit(f"{dtype}: no predecessor on the path {source} -> {target}")
                length, vertex = length + a[before, vertex], before
                if vertex == source:
                    break
            if length != distances[source, target]:
                raise SystemExit(f"{dtype}: the path {source} -> {target} has length {length}, "
                                 f"not {distances[source, target]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "int32", "float64", "int16"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scipy-up-to", type=int, default=1024, help="largest n to time scipy's floyd_warshall at")
    args = parser.parse_args()
    cpu = cpu_description()
    rows = []
    for n in args.sizes:
        for dtype in args.dtypes:
            a = dense_graph(n, dtype)
            checked(a, dtype)
            calls = {"with": lambda: polyfw.solve(a, dtype=dtype, predecessors=True),
                     "without": lambda: polyfw.solve(a, dtype=dtype)}
            if n <= args.scipy_up_to:
                calls["scipy"] = lambda: floyd_warshall(a, return_predecessors=True)
            seconds = taking_turns(calls, args.rounds)
            scipy = seconds.get("scipy")
            rows.append([n, dtype, round(seconds["with"], 4), round(n**3 / seconds["with"] / 1e9, 1),
                         round(seconds["without"], 4), round(seconds["with"] / seconds["without"], 2),
                         None if scipy is None else round(scipy, 3),
                         None if scipy is None else round(scipy / seconds["with"], 1)])
            print(*rows[-1], flush=True)
    print_and_record("predecessors", "shortest paths with predecessors",
                     ["n", "dtype", "with predecessors s", "G relax/s", "without s", "with / without",
                      "scipy FW with predecessors s", "speed over scipy"], rows,
                     note=f"{cpu['model']} ({cpu['llvm_cpu']}, {cpu['isa']}), {numba.get_num_threads()} threads; "
                          f"medians of {args.rounds} interleaved rounds")


if __name__ == "__main__":
    main()
