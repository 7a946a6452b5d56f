"""The road network of `make demo` (Minnesota, 2,642 vertices, int32): polyfw's dense path through
`solve` against scipy's shortest_path(method="auto") (Dijkstra from every source), in one run.
Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/road.py [--repeats 5]

Rounds interleave the contenders (the shared host drifts); every polyfw result
is checked against scipy's before it is timed. Issue 12's target: the best
schedule >= 2x scipy on an AVX2 CPU, >= 3x on an AVX-512 one. Issue 32's: the call a
user writes first, `solve(graph)` with no options (float64 distances with inf, as
scipy returns), >= 2x scipy's default shortest_path.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from polyfw import solve  # noqa: E402  (first: tiling sets Numba's CPU features)

import numba  # noqa: E402
import numpy as np  # noqa: E402
from scipy.sparse.csgraph import shortest_path  # noqa: E402

from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw.configuration import auto_configuration  # noqa: E402
from tiling.semirings import INT32_INF  # noqa: E402
from polyfw.graphs import as_dense, dense_to_sparse, minnesota_road_graph  # noqa: E402

SCHEDULES = ["auto", "classic:tile=128", "classic:tile=256", "generalized:tile=128,kappa=2",
             "generalized:tile=128,kappa=4", "recursive:tile=128"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds; each times every contender once")
    args = parser.parse_args()
    cpu = cpu_description()
    graph = minnesota_road_graph()
    matrix = as_dense(graph, dtype="int32")
    n = matrix.shape[0]
    sparse = dense_to_sparse(matrix)
    print(f"CPU: {cpu['model']} ({cpu['llvm_cpu']}, {cpu['isa']}), {numba.get_num_threads()} threads; "
          f"road network: {n} vertices, {sparse.nnz} arcs; auto = {auto_configuration(n, 'int32')}")
    expected = shortest_path(sparse, method="auto")
    contenders = {"scipy shortest_path(method='auto')": lambda: shortest_path(sparse, method="auto")}
    default = solve(graph)
    if default.dtype != np.float64 or not np.array_equal(default, expected):
        raise SystemExit(f"polyfw solve(graph) differs from scipy on {int((default != expected).sum())} pairs")
    contenders["polyfw solve(graph), no options"] = lambda: solve(graph)
    for spec in SCHEDULES:
        got = solve(graph, schedule=spec, dtype="int32").astype(np.float64)
        got[got >= INT32_INF] = np.inf
        if not np.array_equal(got, expected):
            raise SystemExit(f"polyfw {spec} differs from scipy on {int((got != expected).sum())} pairs")
        contenders[f"polyfw solve {spec}"] = lambda spec=spec: solve(graph, schedule=spec, dtype="int32")
    seconds: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(args.repeats):
        for name, run in contenders.items():
            started = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - started)
    scipy_median = float(np.median(seconds["scipy shortest_path(method='auto')"]))
    for name, times in seconds.items():
        median = float(np.median(times))
        print(f"  {name:42s} {median:7.3f} s  {n**3 / median / 1e9:6.1f} G relax/s  {scipy_median / median:5.2f}x scipy")
    print(f"  => solve(graph) with no options: {scipy_median / np.median(seconds['polyfw solve(graph), no options']):.2f}x "
          f"scipy's default shortest_path (target: 2x); it chose {default.method_choice}")
    best = min((name for name in seconds if name.startswith("polyfw")), key=lambda name: np.median(seconds[name]))
    print(f"  => best {best}: {scipy_median / np.median(seconds[best]):.2f}x scipy's Dijkstra "
          f"(target on {cpu['isa']}: {'3' if cpu['isa'] == 'avx512' else '2'}x)")


if __name__ == "__main__":
    main()
