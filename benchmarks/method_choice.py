"""method='auto' on sparse graphs: the cost model's predictions beside both methods measured, with the
share of DD tile-layers a dense run leaves to run (polyfw.graphs.blocks) and the dense prediction with
and without it, on the Minnesota road network, the power grid and a random graph. Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/method_choice.py [--repeats 3]

Each graph's default call, its dense call and its sparse call run interleaved, round after round;
the medians are quoted. The choice is right when the method it picks is the faster one measured.
"""
from __future__ import annotations

import argparse
import logging
import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import polyfw  # noqa: E402
from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw.graphs import minnesota_road_graph, power_grid, random_graph, summarize_weights  # noqa: E402
from polyfw.method import choose_method, method_rates  # noqa: E402
from polyfw.plan import chosen_dtype  # noqa: E402
from polyfw.graphs.blocks import TileLayers, tile_layers_run  # noqa: E402
from polyfw.graphs.inputs import edges_or_dense  # noqa: E402
from polyfw.graphs.ordering import dissection_order, worth_reordering  # noqa: E402
from polyfw.method import RATE_TILE  # noqa: E402
from tiling.semirings import MIN_PLUS  # noqa: E402

from record import print_and_record  # noqa: E402  (benchmarks/record.py)

GRAPHS = {
    "Minnesota road network": minnesota_road_graph,
    "power grid": power_grid,
    "random, 2,000 vertices, 40,000 arcs": lambda: random_graph(2000, 40_000, seed=0).to_sparse().tocsr(),
}


def dense_layers(graph, n: int, arcs: int) -> TileLayers:
    """The RATE_TILE-wide tile-layers solve's dense run runs: in nested-dissection order where solve
    computes in it."""
    edges, _ = edges_or_dense(graph, "weight")
    finite = np.isfinite(edges.weight)
    source, target = edges.source[finite], edges.target[finite]
    if worth_reordering(n, arcs):
        position = np.empty(n, dtype=np.int64)
        position[dissection_order(n, edges.source, edges.target)] = np.arange(n)
        source, target = position[source], position[target]
    return tile_layers_run(n, source, target, RATE_TILE)


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("polyfw").setLevel(logging.WARNING)
    cpu = cpu_description()
    print(f"CPU: {cpu['model']} (LLVM {cpu['llvm_cpu']}), {cpu['isa']}; {numba.get_num_threads()} threads; "
          f"medians of {args.repeats} interleaved rounds")
    rows = []
    for name, make in GRAPHS.items():
        graph = make()
        summary = summarize_weights(graph)
        n, m = summary.n, summary.arcs
        dtype = chosen_dtype(MIN_PLUS, "cpu", summary)
        rates = method_rates("cpu")
        started = time.perf_counter()
        layers = dense_layers(graph, n, m)
        counting = time.perf_counter() - started
        one_weight = 0 <= summary.lightest == summary.heaviest  # (Johnson is then a BFS from every source)
        full = choose_method(n, m, dtype, rates, one_weight=one_weight)
        skipping = choose_method(n, m, dtype, rates, one_weight=one_weight, layers=layers)
        calls = {"default": lambda: polyfw.solve(graph), "dense": lambda: polyfw.solve(graph, method="dense"),
                 "sparse": lambda: polyfw.solve(graph, method="sparse")}
        for call in calls.values():
            call()  # compiled, proved and cached before the timing
        seconds = {what: [] for what in calls}
        for _ in range(args.repeats):
            for what, call in calls.items():
                seconds[what].append(timed(call))
        measured = {what: statistics.median(times) for what, times in seconds.items()}
        faster = min(("dense", "sparse"), key=measured.get)
        chosen = polyfw.solve(graph).method_choice.method  # what the default call ran
        rows.append([name, f"{n:,}, {m:,}, {dtype}",
                     f"{layers.dd:.1%} / {layers.panels:.1%} ({counting * 1e3:.0f} ms)",
                     f"{full.dense_seconds:.3f} / {skipping.dense_seconds:.3f}", round(full.sparse_seconds, 3),
                     f"{measured['dense']:.3f} / {measured['sparse']:.3f} / {measured['default']:.3f}",
                     f"{full.method} / {skipping.method} ({chosen})", faster])
    print_and_record("method_choice", "method='auto' on sparse graphs",
                     ["graph", "n, arcs, dtype", "DD / panel tile-layers run (counted in)",
                      "predicted dense s: all / run", "predicted Johnson s", "measured s: dense / Johnson / default",
                      "chosen: all / run (default ran)", "faster"], rows,
                     note=f"medians of {args.repeats} interleaved rounds")


if __name__ == "__main__":
    main()
