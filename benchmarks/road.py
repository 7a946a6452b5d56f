"""The road network of `make demo` (Minnesota, 2,642 vertices): polyfw's exact calls against scipy's
default shortest_path (Dijkstra from every source), networkit's APSP (parallel Dijkstra) and
igraph's distances, in one run. Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/road.py [--repeats 5] [--schedules]

Rounds interleave the contenders (the shared host drifts); every answer is
checked equal to scipy's before it is timed, and a call that is not exact on
this graph (int16: its paths run past the type's range) is left out with the
reason. networkit and igraph are optional (`pip install -e .[bench]`): a
missing one is named and skipped. benchmarks/cpu.py runs this comparison too.
Issue 12's target: the best schedule >= 3x scipy on an AVX-512 CPU (2x on
AVX2); issue 32's: `solve(graph)` with no options >= 2x scipy's default.
"""
from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable, Sequence

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from polyfw import solve  # noqa: E402  (first: tiling sets Numba's CPU features)

import numba  # noqa: E402
import numpy as np  # noqa: E402
from scipy.sparse.csgraph import shortest_path  # noqa: E402

from codegen.distances import float64_distances  # noqa: E402
from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw.graphs import Edges, as_dense, dense_to_sparse, minnesota_road_graph  # noqa: E402
from tiling.semirings import semiring  # noqa: E402

from interleaved import taking_turns  # noqa: E402  (benchmarks/interleaved.py)
from record import print_and_record  # noqa: E402  (benchmarks/record.py)

SCIPY = "scipy shortest_path() default"
SCHEDULES = ["classic:tile=128", "classic:tile=256", "generalized:tile=128,kappa=2",
             "generalized:tile=128,kappa=4", "recursive:tile=128"]


def _networkit(graph: Edges) -> Callable[[], np.ndarray]:
    import networkit

    directed = networkit.Graph(graph.n, weighted=True, directed=True)
    directed.addEdges((graph.weight.astype(np.float64), (graph.source, graph.target)))

    def run() -> np.ndarray:
        apsp = networkit.distance.APSP(directed)
        apsp.run()
        distances = np.asarray(apsp.getDistances(asarray=True))
        distances[distances == np.finfo(np.float64).max] = np.inf  # its 'unreachable'
        return distances

    return run


def _igraph(graph: Edges) -> Callable[[], np.ndarray]:
    import igraph

    directed = igraph.Graph(n=graph.n, edges=np.column_stack([graph.source, graph.target]), directed=True,
                            edge_attrs={"weight": graph.weight})
    return lambda: np.array(directed.distances(weights="weight"), dtype=np.float64)


#: other libraries a user could call instead: (package, contender name, its call on the graph)
OTHERS = [("networkit", "networkit distance.APSP", _networkit), ("igraph", "igraph Graph.distances", _igraph)]


def contenders(graph: Edges, schedules: Sequence[str]) -> tuple[dict[str, Callable[[], object]], list[str]]:
    """scipy's default first, then every contender whose answer equals scipy's (as float64 with inf),
    and one line per contender left out and why."""
    sparse = dense_to_sparse(as_dense(graph, dtype="float64"))
    expected = shortest_path(sparse)
    runs: dict[str, Callable[[], object]] = {SCIPY: lambda: shortest_path(sparse)}
    left_out = []
    for package, name, make in OTHERS:
        try:
            importlib.import_module(package)
        except ImportError:
            left_out.append(f"{name}: {package} is not installed (pip install -e .[bench])")
            continue
        runs[name] = make(graph)
    calls = {"polyfw solve(graph), no options": lambda: solve(graph)}
    exact_dtypes = [dtype for dtype in ("int32", "int16") if dtype in semiring("min-plus").dtypes]
    left_out += [f"polyfw dtype={dtype!r}: not a min-plus dtype of this tree yet"
                 for dtype in ("int32", "int16") if dtype not in exact_dtypes]
    for dtype in exact_dtypes:
        calls[f"polyfw solve(graph, dtype={dtype!r})"] = lambda dtype=dtype: solve(graph, dtype=dtype)
    for spec in schedules:
        calls[f"polyfw solve(graph, dtype='int32', schedule={spec!r})"] = (
            lambda spec=spec: solve(graph, dtype="int32", schedule=spec))
    runs.update(calls)
    for name, run in list(runs.items())[1:]:
        try:
            got = np.asarray(run())
        except (ValueError, OverflowError) as refused:  # a dtype that cannot hold the weights
            left_out.append(f"{name}: refused ({refused})")
            del runs[name]
            continue
        got = got if got.dtype == np.float64 else float64_distances(got)
        if not np.array_equal(got, expected):
            left_out.append(f"{name}: not exact on this graph ({int((got != expected).sum())} pairs differ from "
                            f"scipy's; longest path {expected[np.isfinite(expected)].max():.0f})")
            del runs[name]
    return runs, left_out


def compare(rounds: int, schedules: Sequence[str] = ()) -> dict:
    """Median seconds of every exact contender over interleaved rounds, and the ratios that matter:
    polyfw's fastest exact call against scipy's default and each other library."""
    graph = minnesota_road_graph()
    runs, left_out = contenders(graph, schedules)
    medians = taking_turns(runs, rounds)
    fastest = min((name for name in medians if name.startswith("polyfw")), key=medians.get)
    chose = getattr(solve(graph), "method_choice", None)  # dense or sparse, and the cost model's predictions
    return {"n": graph.n, "arcs": len(graph.source), "seconds": medians, "left_out": left_out, "fastest": fastest,
            "default_chose": str(chose),
            "speedups": {name: medians[name] / medians[fastest] for name in medians if not name.startswith("polyfw")}}


def table(found: dict, benchmark: str, note: str) -> None:
    """Each contender's median, printed and recorded under the benchmark that ran the comparison."""
    n, medians = found["n"], found["seconds"]
    print_and_record(benchmark, f"Minnesota road network ({n:,} vertices, {found['arcs']:,} arcs)",
                     ["call", "median s", "G relax/s", "speed-up over scipy"],
                     [[name, round(seconds, 3), round(n**3 / seconds / 1e9, 1), round(medians[SCIPY] / seconds, 2)]
                      for name, seconds in medians.items()], note=note)


def report(found: dict) -> list[str]:
    """The lines under the table: what was left out, and polyfw's fastest against the others."""
    lines = [f"  left out: {line}" for line in found["left_out"]]
    lines.append(f"  solve(graph) chose {found['default_chose']}")
    lines.append(f"  => fastest exact polyfw call, {found['fastest']}: " + ", ".join(
        f"{speedup:.2f}x {name}" for name, speedup in found["speedups"].items()) + " (target: 3x scipy)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds; each times every contender once")
    parser.add_argument("--schedules", action="store_true", help="also time solve(dtype='int32') per schedule")
    args = parser.parse_args()
    cpu = cpu_description()
    found = compare(args.repeats, SCHEDULES if args.schedules else [])
    print(f"CPU: {cpu['model']} ({cpu['llvm_cpu']}, {cpu['isa']}, {cpu['vector_bytes']}-byte vectors), "
          f"{numba.get_num_threads()} threads; road network: {found['n']} vertices, {found['arcs']} arcs; "
          f"medians of {args.repeats} interleaved rounds")
    table(found, "road", f"medians of {args.repeats} interleaved rounds")
    print("\n".join(report(found)))


if __name__ == "__main__":
    main()
