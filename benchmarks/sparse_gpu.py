"""Seed 002's GPU kernels (level-synchronous BFS, Bellman-Ford on the extended CSR) in TEPS, beside
polyfw's CPU BFS and delta-stepping on the same machine, same graph and roots (issue 39, item 5).
Needs a CUDA GPU. Not a test.

    OMP_WAIT_POLICY=passive python3 benchmarks/sparse_gpu.py [--scales 18 20] [--roots 8]

Graph: polyfw's Kronecker generator (Graph500's parameters, edge factor 16, weights 1-255), undirected.
Every GPU answer is checked equal to the CPU's (levels; distances) before it is timed. TEPS: the
undirected edges of the root's component over the search's seconds (median over roots of each root's
median of 3), as benchmarks/gapbs.py counts them. The GPU time is a whole call: the graph's copy to the
device, the launches and the copies back.
"""
from __future__ import annotations

import argparse
import os
import time
from statistics import median

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numba  # noqa: E402
import numpy as np  # noqa: E402

from polyfw.sparse import as_csr, bfs, rmat_edges, sssp  # noqa: E402
from polyfw.sparse.cuda import bfs_cuda, sssp_cuda  # noqa: E402


def seconds(run, trials: int = 3) -> float:
    run()
    found = []
    for _ in range(trials):
        started = time.perf_counter()
        run()
        found.append(time.perf_counter() - started)
    return median(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[18, 20])
    parser.add_argument("--roots", type=int, default=8)
    args = parser.parse_args()
    from numba import cuda

    name = cuda.get_current_device().name
    print(f"GPU: {name.decode() if isinstance(name, bytes) else name}; CPU side: {numba.get_num_threads()} threads")
    for scale in args.scales:
        csr = as_csr(rmat_edges(scale, seed=scale, weighted=True), directed=False)
        roots = np.random.default_rng(scale).choice(np.flatnonzero(csr.out_degree), args.roots, replace=False)
        rows = {}
        for root in map(int, roots):
            levels, _ = bfs(csr, root)
            reached = levels != np.iinfo(levels.dtype).max
            edges = int(csr.out_degree[reached].sum()) // 2
            distances, _ = sssp(csr, root)
            for variant in ("vertex", "edge"):
                gpu_levels, _ = bfs_cuda(csr, root, variant)
                assert np.array_equal(gpu_levels >= 0, reached) and np.array_equal(gpu_levels[reached], levels[reached])
                gpu_distances, _ = sssp_cuda(csr, root, variant)
                assert np.array_equal(gpu_distances, distances), f"SSSP {variant} from {root} differs"
            runs = {"BFS, CPU (direction-optimizing)": lambda: bfs(csr, root),
                    "BFS, GPU vertex-parallel": lambda: bfs_cuda(csr, root, "vertex"),
                    "BFS, GPU edge-parallel": lambda: bfs_cuda(csr, root, "edge"),
                    "SSSP, CPU (delta-stepping)": lambda: sssp(csr, root),
                    "SSSP, GPU edge-parallel Bellman-Ford": lambda: sssp_cuda(csr, root, "edge"),
                    "SSSP, GPU vertex-parallel Bellman-Ford": lambda: sssp_cuda(csr, root, "vertex")}
            for name, run in runs.items():
                rows.setdefault(name, []).append((seconds(run), edges))
        print(f"\nKronecker scale {scale}: {csr.n:,} vertices, {csr.m // 2:,} edges, {args.roots} roots (answers equal)")
        for name, found in rows.items():
            time_ms = median(t for t, _ in found) * 1e3
            mteps = median(e / t for t, e in found) / 1e6
            print(f"  {name:42} {time_ms:9.2f} ms {mteps:9.0f} MTEPS")


if __name__ == "__main__":
    main()
