"""GPU searches on a device-resident graph in TEPS, beside polyfw's CPU searches on the same machine,
same graph and roots (issue 50, item 7). Needs a CUDA GPU. Not a test.

    OMP_WAIT_POLICY=passive python3 benchmarks/sparse_gpu.py [--scales 20 22] [--roots 16] [--json F]
        [--no-all-pairs]

Graph: polyfw's Kronecker generator (Graph500's parameters, edge factor 16, weights 1-255), undirected,
moved to the GPU once (polyfw.sparse.to_device); every search reuses it. Every GPU answer is checked
first: levels equal to the CPU's and Graph500's validation of the parents; distances equal to the
CPU's and the SSSP rules. A GPU time is a search with the graph resident: its few small uploads, one
persistent launch, the reads back (synchronised); the median of 3 per root, then the median over roots.
TEPS are stated in both counts the field uses: Graph500's (the undirected edges of the root's
component, each once) and Gunrock's (every directed edge out of a reached vertex: twice Graph500's).

All pairs: the Western US power grid (one weight: a BFS a source) and the Minnesota road network
(metres: near-far a source), Johnson on the GPU against Johnson on the CPU, both checked equal.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from statistics import median

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

from polyfw.graphs import minnesota_road_graph, power_grid  # noqa: E402
from polyfw.sparse import as_csr, bfs, johnson, rmat_edges, sssp, to_device, validate_bfs, validate_sssp  # noqa: E402
from record import print_and_record  # noqa: E402  (benchmarks/record.py)


def seconds(run, trials: int = 3) -> float:
    """Median seconds of `trials` calls after one to compile and warm, the device drained around each."""
    run()
    found = []
    for _ in range(trials):
        cuda.synchronize()
        started = time.perf_counter()
        run()
        cuda.synchronize()
        found.append(time.perf_counter() - started)
    return median(found)


def searches(scale: int, roots: int) -> dict[str, dict]:
    """Rows of one Kronecker graph: GPU and CPU BFS and SSSP over the same roots."""
    csr = as_csr(rmat_edges(scale, seed=scale, weighted=True), directed=False)
    graph = to_device(csr)
    chosen = np.random.default_rng(scale).choice(np.flatnonzero(csr.out_degree), roots, replace=False)
    rows: dict[str, list] = {}
    for root in map(int, chosen):
        levels, parents = bfs(graph, root)
        expected, _ = bfs(csr, root)
        assert np.array_equal(levels, expected), f"GPU BFS from {root} differs"
        validate_bfs(csr, root, levels, parents)
        dist, dparents = sssp(graph, root)
        assert np.array_equal(dist, sssp(csr, root)[0]), f"GPU SSSP from {root} differs"
        validate_sssp(csr, root, dist, dparents)
        reached = levels != np.iinfo(levels.dtype).max
        directed = int(csr.out_degree[reached].sum())
        runs = {"BFS, GPU (direction-optimizing, one launch)": lambda: bfs(graph, root),
                "BFS, CPU (direction-optimizing)": lambda: bfs(csr, root),
                "SSSP, GPU (near-far, one launch, parents)": lambda: sssp(graph, root),
                "SSSP, CPU (delta-stepping, parents)": lambda: sssp(csr, root)}
        for name, run in runs.items():
            rows.setdefault(name, []).append((seconds(run), directed))
    return {name: {"ms": median(t for t, _ in found) * 1e3,
                   "graph500_gteps": median(e / 2 / t for t, e in found) / 1e9,
                   "gunrock_gteps": median(e / t for t, e in found) / 1e9} for name, found in rows.items()}


def all_pairs() -> dict[str, dict]:
    rows = {}
    for name, graph in (("power grid", power_grid()), ("Minnesota roads", minnesota_road_graph())):
        csr = as_csr(graph, directed=False)
        on_device = to_device(csr)
        assert np.array_equal(johnson(on_device), johnson(csr)), f"{name}: GPU Johnson differs"
        gpu, cpu = seconds(lambda: johnson(on_device), 1), seconds(lambda: johnson(csr), 1)
        rows[name] = {"n": csr.n, "gpu_s": gpu, "cpu_s": cpu, "speedup": cpu / gpu}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[20, 22])
    parser.add_argument("--roots", type=int, default=16)
    parser.add_argument("--json", default=None, help="also write the rows here")
    parser.add_argument("--no-all-pairs", action="store_true", help="only the single-source searches")
    args = parser.parse_args()
    name = getattr(cuda.get_current_device(), "name", "Numba's CUDA simulator")
    device = name.decode() if isinstance(name, bytes) else name
    print(f"GPU: {device}; CPU side: {numba.get_num_threads()} threads")
    found = {"device": device, "threads": numba.get_num_threads(), "kronecker": {}, "all_pairs": {}}
    for scale in args.scales:
        rows = found["kronecker"][scale] = searches(scale, args.roots)
        print_and_record("sparse_gpu", f"Kronecker scale {scale}, edge factor 16",
                         ["search", "ms", "G TEPS (Graph500)", "G TEPS (Gunrock)"],
                         [[row_name, round(row["ms"], 3), round(row["graph500_gteps"], 2),
                           round(row["gunrock_gteps"], 2)] for row_name, row in rows.items()], gpu=device,
                         note=f"{args.roots} roots, answers checked; medians over the roots; CPU side: "
                              f"{found['threads']} threads")
    if not args.no_all_pairs:
        found["all_pairs"] = all_pairs()
        print_and_record("sparse_gpu", "all pairs (Johnson)", ["graph", "n", "GPU s", "CPU s", "GPU speed-up"],
                         [[row_name, row["n"], round(row["gpu_s"], 3), round(row["cpu_s"], 3), round(row["speedup"], 1)]
                          for row_name, row in found["all_pairs"].items()], gpu=device,
                         note=f"answers equal; CPU side: {found['threads']} threads")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(found, out, indent=1)


if __name__ == "__main__":
    main()
