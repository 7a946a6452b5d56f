"""The `polyfw` command line."""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np


def _cmd_deps(args: argparse.Namespace) -> int:
    from tiling.report import dependence_report

    print(dependence_report(args.n))
    return 0


def _cmd_solve(args: argparse.Namespace) -> int:
    from tiling.graphs import read_graph

    from .solve import solve

    distances = solve(read_graph(args.input), dtype=args.dtype, directed=not args.undirected)
    np.save(args.output, distances)
    print(f"wrote {distances.shape[0]} x {distances.shape[1]} {distances.dtype} distances to {args.output}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from scipy.sparse.csgraph import floyd_warshall

    from tiling.graphs import as_dense, as_float_distances, dense_to_sparse, minnesota_road_graph
    from tiling.report import dependence_report

    from .solve import solve

    print(dependence_report(None))
    road = minnesota_road_graph()
    matrix = as_dense(road)
    if args.vertices:
        matrix = np.ascontiguousarray(matrix[: args.vertices, : args.vertices])
    n = matrix.shape[0]
    print(f"Default input: Minnesota road network (pygsp), {n} vertices, "
          f"{int(np.isfinite(matrix).sum()) - n} arcs, weights in whole metres")
    solve(matrix[:2, :2], dtype=args.dtype)  # compile outside the timing
    start = time.perf_counter()
    distances = solve(matrix, dtype=args.dtype)
    ours = time.perf_counter() - start
    edges = dense_to_sparse(matrix)
    start = time.perf_counter()
    expected = floyd_warshall(edges)
    scipy_seconds = time.perf_counter() - start
    same = np.array_equal(as_float_distances(distances), expected)
    print(f"naive Numba kernel ({args.dtype}): {ours:.3f} s, {n**3 / ours / 1e9:.2f} G relaxations/s")
    print(f"scipy floyd_warshall (float64): {scipy_seconds:.3f} s, {n**3 / scipy_seconds / 1e9:.2f} G relaxations/s")
    print(f"speed-up over scipy: {scipy_seconds / ours:.1f}x; results identical: {same}")
    finite = expected[np.isfinite(expected) & (expected > 0)]
    if finite.size:
        print(f"longest shortest path: {finite.max() / 1000:.1f} km; mean: {finite.mean() / 1000:.1f} km")
    return 0 if same else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="polyfw", description="Polyhedral schedules for Floyd-Warshall.")
    commands = parser.add_subparsers(dest="command", required=True)

    deps = commands.add_parser("deps", help="print the exact and relaxed dependence models")
    deps.add_argument("--n", type=int, default=None, help="concrete problem size (default: parametric n)")
    deps.set_defaults(run=_cmd_deps)

    solve = commands.add_parser("solve", help="all-pairs shortest paths of a graph file")
    solve.add_argument("input", help="DIMACS .gr or Matrix Market .mtx file")
    solve.add_argument("-o", "--output", required=True, help="where to save the distance matrix (.npy)")
    solve.add_argument("--dtype", default="float64", choices=["float32", "float64", "int32"])
    solve.add_argument("--undirected", action="store_true", help="use every edge in both directions")
    solve.set_defaults(run=_cmd_solve)

    demo = commands.add_parser("demo", help="dependence analysis, then solve the built-in road network")
    demo.add_argument("--vertices", type=int, default=None, help="use only the first N vertices")
    demo.add_argument("--dtype", default="int32", choices=["float32", "float64", "int32"])
    demo.set_defaults(run=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError) as error:
        print(f"polyfw: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
