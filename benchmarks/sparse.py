"""Graph500-style TEPS for BFS and SSSP on R-MAT graphs, and all pairs on the road network and the
power grid (issues 14 and 39), beside scipy (and networkx) in the same run. Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/sparse.py [--scales 14 16 18] [--roots 64] [--repeats 5]

Roots are drawn among vertices of degree >= 1 (Graph500). Every polyfw result
is validated by Graph500's five rules and its distances or levels compared
with scipy's; TEPS counts the input edges (R-MAT's list, self-loops and
repeats included) whose endpoints the search reached, and the figure per
contender is the harmonic mean over roots. The contenders alternate root by root.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from polyfw.sparse import as_csr, bfs, johnson, rmat_edges, sssp, validate_bfs, validate_sssp  # noqa: E402

import networkx as nx  # noqa: E402
import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.sparse.csgraph import breadth_first_order, dijkstra, shortest_path  # noqa: E402

from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw import solve  # noqa: E402
from polyfw.graphs import minnesota_road_graph, power_grid  # noqa: E402
from record import print_and_record  # noqa: E402  (benchmarks/record.py)


def harmonic_mean(values: list[float]) -> float:
    return len(values) / sum(1.0 / v for v in values)


def timed(run):
    started = time.perf_counter()
    found = run()
    return found, time.perf_counter() - started


def bench_scale(scale: int, roots: int, networkx_roots: int, bellman_ford_roots: int) -> None:
    edges = rmat_edges(scale, seed=scale, weighted=True)
    csr = as_csr(edges, directed=False)
    matrix = sp.csr_array((csr.weights, csr.indices, csr.indptr), shape=(csr.n, csr.n))
    rng = np.random.default_rng(scale)
    chosen = rng.choice(np.flatnonzero(csr.out_degree > 0), size=roots, replace=False)
    teps: dict[str, list[float]] = {}
    graph = nx.Graph() if networkx_roots else None
    if graph is not None:
        graph.add_edges_from(zip(csr.sources.tolist(), csr.indices.tolist()))
    bfs(csr, int(chosen[0]))  # compile
    sssp(csr, int(chosen[0]))
    sssp(csr, int(chosen[0]), method="delta-stepping")
    sssp(csr, int(chosen[0]), method="bellman-ford")
    for number, root in enumerate(int(r) for r in chosen):
        contenders = {
            "polyfw BFS direction-optimizing": lambda: bfs(csr, root),
            "polyfw BFS top-down": lambda: bfs(csr, root, direction="top-down"),
            "scipy breadth_first_order": lambda: breadth_first_order(matrix, root, directed=False),
            "polyfw SSSP (Dijkstra)": lambda: sssp(csr, root),
            "polyfw SSSP (delta-stepping)": lambda: sssp(csr, root, method="delta-stepping"),
            "scipy dijkstra": lambda: dijkstra(matrix, indices=root),
        }
        if number < bellman_ford_roots:
            contenders["polyfw SSSP (Bellman-Ford)"] = lambda: sssp(csr, root, method="bellman-ford")
        if number < networkx_roots:
            contenders["networkx BFS"] = lambda: nx.single_source_shortest_path_length(graph, root)
        results = {name: timed(run) for name, run in contenders.items()}
        levels, parent = results["polyfw BFS direction-optimizing"][0]
        validate_bfs(csr, root, levels, parent)
        dist, dparent = results["polyfw SSSP (Dijkstra)"][0]
        validate_sssp(csr, root, dist, dparent)
        stepped, sparent = results["polyfw SSSP (delta-stepping)"][0]
        validate_sssp(csr, root, stepped, sparent)
        if not (np.array_equal(dist, results["scipy dijkstra"][0]) and np.array_equal(stepped, dist)):
            raise SystemExit(f"SSSP from {root} differs from scipy's")
        reached = levels != np.iinfo(levels.dtype).max
        component_edges = int((reached[edges.source] & reached[edges.target]).sum())
        for name, (_, seconds) in results.items():
            teps.setdefault(name, []).append(component_edges / seconds)
    print_and_record("sparse", f"R-MAT scale {scale}", ["search", "M TEPS", "roots timed"],
                     [[name, round(harmonic_mean(values) / 1e6, 1), len(values)] for name, values in teps.items()],
                     note=f"{csr.n} vertices, {len(edges.source)} input edges; harmonic means over the roots")
    for ours, theirs in (("polyfw BFS direction-optimizing", "scipy breadth_first_order"),
                         ("polyfw SSSP (Dijkstra)", "scipy dijkstra"),
                         ("polyfw SSSP (delta-stepping)", "scipy dijkstra"),
                         ("polyfw SSSP (Bellman-Ford)", "scipy dijkstra")):
        print(f"  {ours} / {theirs}: x{harmonic_mean(teps[ours]) / harmonic_mean(teps[theirs]):.2f}")


def bench_all_pairs(name: str, edges, repeats: int) -> None:
    """All pairs beside scipy's default shortest_path, the contenders taking turns: Johnson, and solve
    with method='sparse' (Johnson in solve's conventions) and with no options (its own choice)."""
    csr = as_csr(edges)
    matrix = sp.csr_array((csr.weights, csr.indices, csr.indptr), shape=(csr.n, csr.n))
    expected = shortest_path(matrix, method="auto")
    contenders = {"scipy shortest_path(method='auto')": lambda: shortest_path(matrix, method="auto"),
                  "polyfw Johnson": lambda: johnson(csr),
                  "polyfw solve(method='sparse')": lambda: solve(matrix, method="sparse"),
                  "polyfw solve()": lambda: solve(matrix)}
    for label, run in contenders.items():
        if not np.array_equal(np.asarray(run()), expected):
            raise SystemExit(f"{label} differs from scipy on the {name}")
    seconds: dict[str, list[float]] = {label: [] for label in contenders}
    for _ in range(repeats):
        for label, run in contenders.items():
            seconds[label].append(timed(run)[1])
    medians = {label: float(np.median(values)) for label, values in seconds.items()}
    scipy_seconds = medians["scipy shortest_path(method='auto')"]
    print_and_record("sparse", f"all pairs, {name}", ["call", "median s", "speed-up over scipy"],
                     [[label, round(value, 3), round(scipy_seconds / value, 2)] for label, value in medians.items()],
                     note=f"{csr.n} vertices, {csr.m} arcs; median of {repeats}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="*", default=[14, 16, 18], help="R-MAT scales (none: all pairs only)")
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--networkx-roots", type=int, default=4, help="roots networkx is timed on (it is slow)")
    parser.add_argument("--bellman-ford-roots", type=int, default=16, help="roots Bellman-Ford is timed on")
    parser.add_argument("--repeats", type=int, default=5, help="rounds on the road network and the power grid")
    args = parser.parse_args()
    cpu = cpu_description()
    print(f"CPU: {cpu['model']} (LLVM {cpu['llvm_cpu']}), {cpu['isa']}; {numba.get_num_threads()} threads")
    bench_all_pairs("road network", minnesota_road_graph(), args.repeats)
    bench_all_pairs("power grid", power_grid(), args.repeats)
    for scale in args.scales:
        bench_scale(scale, args.roots, args.networkx_roots, args.bellman_ford_roots)


if __name__ == "__main__":
    main()
