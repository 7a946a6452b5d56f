"""polyfw's BFS and SSSP beside the GAP Benchmark Suite's on the same graphs and roots (issue 39).
Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/gapbs.py [--scales 16 18] [--roots 32] [--wait active]

GAPBS is built from ../shared/peers/gapbs into a temporary folder (with -fopenmp: the Makefile's
flags are replaced by CXX_FLAGS). Each graph is written once as an edge list that both sides read:
a Kronecker graph of polyfw's generator (Graph500's parameters, edge factor 16) or a uniform random
graph of the same size, weights 1-255, undirected, without self-loops or repeated pairs (the lightest
kept), so that GAPBS's builder and polyfw's CSR hold the same edges. Roots are drawn among vertices of
degree >= 1 and shared. Per root, GAPBS runs its trials (its kernel-only "Trial Time", its own
verifier on) and then polyfw its trials in this process (the call from Python); the figure is the
median over roots of each root's median. Every polyfw answer passes Graph500's rules, and its levels
and distances equal scipy's on the first roots. TEPS, one definition for both: the undirected edges
of the root's component over the search's seconds. Both sides run on the same threads with the same
OMP_WAIT_POLICY (--wait; set before Numba starts its threads).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

PEERS = Path(__file__).resolve().parent.parent.parent / "shared" / "peers" / "gapbs"
GAPBS_FLAGS = "-std=c++11 -O3 -Wall -march=native -fopenmp"
DELTAS = (1, 2, 8, 32)


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[16, 18])
    parser.add_argument("--roots", type=int, default=32)
    parser.add_argument("--trials", type=int, default=3, help="searches per root on each side")
    parser.add_argument("--checked-roots", type=int, default=3, help="roots whose answers are compared with scipy's")
    parser.add_argument("--wait", choices=("passive", "active"), default=os.environ.get("OMP_WAIT_POLICY", "passive"))
    parser.add_argument("--graphs", nargs="+", choices=("kronecker", "uniform"), default=["kronecker", "uniform"])
    parser.add_argument("--gapbs", type=Path, default=PEERS, help="GAPBS's source folder")
    return parser.parse_args()


ARGUMENTS = parse_arguments() if __name__ == "__main__" else None
if ARGUMENTS is not None:
    os.environ["OMP_WAIT_POLICY"] = ARGUMENTS.wait  # before Numba's OpenMP layer starts
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.sparse.csgraph import breadth_first_order, dijkstra  # noqa: E402

from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw.graphs import Edges  # noqa: E402
from polyfw.sparse import as_csr, bfs, rmat_edges, sssp, validate_bfs, validate_sssp  # noqa: E402
from polyfw.sparse.paths import delta_stepping  # noqa: E402


def build_gapbs(source: Path, into: Path) -> Path:
    """bfs, sssp and converter built from a copy of `source` (which is read-only); their folder."""
    folder = into / "gapbs"
    shutil.copytree(source, folder)
    subprocess.run(["make", "-C", str(folder), "-B", "bfs", "sssp", "converter", f"CXX_FLAGS={GAPBS_FLAGS}"],
                   check=True, capture_output=True, text=True)
    linked = subprocess.run(["ldd", str(folder / "bfs")], capture_output=True, text=True).stdout
    if "gomp" not in linked:
        raise RuntimeError("GAPBS's bfs is not linked with OpenMP: it would run on one thread")
    return folder


def simple_undirected(edges: Edges) -> Edges:
    """Each unordered pair once, with its lightest weight; no self-loops."""
    low, high = np.minimum(edges.source, edges.target), np.maximum(edges.source, edges.target)
    keep = low != high
    low, high, weight = low[keep], high[keep], edges.weight[keep]
    order = np.lexsort((weight, high, low))
    low, high, weight = low[order], high[order], weight[order]
    first = np.ones(len(low), dtype=bool)
    first[1:] = (low[1:] != low[:-1]) | (high[1:] != high[:-1])
    return Edges(edges.n, low[first], high[first], weight[first])


def make_graph(kind: str, scale: int) -> Edges:
    if kind == "kronecker":
        found = rmat_edges(scale, seed=scale, weighted=True)
    else:
        rng = np.random.default_rng(scale)
        n, m = 2**scale, 16 * 2**scale
        found = Edges(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 256, m).astype(np.float64))
    return simple_undirected(found)


def write_gapbs_graphs(edges: Edges, folder: Path, tools: Path) -> tuple[Path, Path]:
    """The edge list as GAPBS's serialized graphs (.sg for BFS, .wsg for SSSP), symmetrized by its builder."""
    pairs = np.column_stack([edges.source, edges.target]).astype(np.int64)
    weighted = np.column_stack([pairs, edges.weight.astype(np.int64)])
    np.savetxt(folder / "g.el", pairs, fmt="%d")
    np.savetxt(folder / "g.wel", weighted, fmt="%d")
    for source, target, flags in (("g.el", "g.sg", ["-b"]), ("g.wel", "g.wsg", ["-w", "-b"])):
        subprocess.run([str(tools / "converter"), "-s", "-f", str(folder / source), *flags, str(folder / target)],
                       check=True, capture_output=True, text=True)
    return folder / "g.sg", folder / "g.wsg"


def gapbs_seconds(binary: Path, graph: Path, root: int, trials: int, *extra: str) -> list[float]:
    """GAPBS's kernel-only trial times for one root, its own verifier passing on every trial."""
    done = subprocess.run([str(binary), "-f", str(graph), "-r", str(root), "-n", str(trials), "-v", *extra],
                          check=True, capture_output=True, text=True)
    verdicts = re.findall(r"Verification:\s+(\S+)", done.stdout)
    if len(verdicts) != trials or any(verdict != "PASS" for verdict in verdicts):
        raise RuntimeError(f"GAPBS's {binary.name} failed its verification from root {root}:\n{done.stdout[-2000:]}")
    return [float(value) for value in re.findall(r"Trial Time:\s+([\d.]+)", done.stdout)]


def polyfw_seconds(run, trials: int) -> tuple[list[float], object]:
    times, found = [], None
    for _ in range(trials):
        started = time.perf_counter()
        found = run()
        times.append(time.perf_counter() - started)
    return times, found


def component_edges(csr, reached: np.ndarray) -> int:
    """The undirected edges of the searched component (both arcs of each are in the CSR)."""
    return int(csr.out_degree[reached].sum()) // 2


def best_delta(tools: Path, weighted: Path, root: int) -> int:
    """GAPBS's fastest delta of DELTAS from one root (its README: keep its best)."""
    return min(DELTAS, key=lambda delta: median(gapbs_seconds(tools / "sssp", weighted, root, 3, "-d", str(delta))))


def bench_graph(kind: str, scale: int, tools: Path, folder: Path, arguments: argparse.Namespace) -> list[str]:
    edges = make_graph(kind, scale)
    csr = as_csr(edges, directed=False)
    unweighted, weighted = write_gapbs_graphs(edges, folder, tools)
    matrix = sp.csr_array((csr.weights, csr.indices, csr.indptr), shape=(csr.n, csr.n))
    rng = np.random.default_rng(1000 + scale)
    roots = [int(r) for r in rng.choice(np.flatnonzero(csr.out_degree > 0), size=arguments.roots, replace=False)]
    bfs(csr, roots[0])  # compile
    sssp(csr, roots[0])
    delta = best_delta(tools, weighted, roots[0])
    medians: dict[str, list[float]] = {name: [] for name in
                                        ("gapbs bfs", "polyfw bfs", "gapbs sssp", "polyfw sssp", "polyfw sssp+parents")}
    edges_reached = []
    for number, root in enumerate(roots):
        medians["gapbs bfs"].append(median(gapbs_seconds(tools / "bfs", unweighted, root, arguments.trials)))
        times, (levels, parents) = polyfw_seconds(lambda: bfs(csr, root), arguments.trials)
        medians["polyfw bfs"].append(median(times))
        validate_bfs(csr, root, levels, parents)
        reached = levels != np.iinfo(levels.dtype).max
        edges_reached.append(component_edges(csr, reached))
        medians["gapbs sssp"].append(median(gapbs_seconds(tools / "sssp", weighted, root, arguments.trials,
                                                          "-d", str(delta))))
        times, distances = polyfw_seconds(lambda: delta_stepping(csr, root), arguments.trials)
        medians["polyfw sssp"].append(median(times))
        times, (with_parents, parents) = polyfw_seconds(lambda: sssp(csr, root), arguments.trials)
        medians["polyfw sssp+parents"].append(median(times))
        validate_sssp(csr, root, with_parents, parents)
        assert np.array_equal(distances, with_parents), f"root {root}: distances differ with and without parents"
        if number < arguments.checked_roots:
            expected = dijkstra(matrix, directed=False, indices=root)
            assert np.array_equal(distances, expected), f"root {root}: distances differ from scipy's"
            order = breadth_first_order(matrix, root, directed=False, return_predecessors=False)
            assert set(order.tolist()) == set(np.flatnonzero(reached).tolist()), f"root {root}: BFS reach differs"
    typical_edges = median(edges_reached)
    figures = {name: median(values) for name, values in medians.items()}
    rows = []
    for kernel, ours in (("BFS", "polyfw bfs"), (f"SSSP (GAPBS delta {delta})", "polyfw sssp"),
                         ("SSSP, polyfw with parents", "polyfw sssp+parents")):
        theirs = figures["gapbs bfs" if kernel == "BFS" else "gapbs sssp"]
        rows.append(f"| {kind}, scale {scale} | {kernel} | {csr.n:,} | {len(edges.source):,} | {theirs * 1e3:.2f} | "
                    f"{figures[ours] * 1e3:.2f} | **{theirs / figures[ours]:.2f}x** | "
                    f"{typical_edges / theirs / 1e6:.0f} | {typical_edges / figures[ours] / 1e6:.0f} |")
    return rows


def main(arguments: argparse.Namespace) -> None:
    print(f"CPU: {cpu_description()}; {numba.get_num_threads()} threads on both sides, OMP_WAIT_POLICY="
          f"{os.environ['OMP_WAIT_POLICY']}; {arguments.roots} roots, {arguments.trials} trials each, medians\n")
    print("| graph | kernel | vertices | edges | GAPBS ms | polyfw ms | polyfw / GAPBS speed | GAPBS MTEPS | "
          "polyfw MTEPS |")
    print("|---|---|---|---|---|---|---|---|---|")
    environment_threads = os.environ.setdefault("OMP_NUM_THREADS", str(numba.get_num_threads()))
    assert int(environment_threads) == numba.get_num_threads(), "GAPBS and polyfw must run on the same threads"
    with tempfile.TemporaryDirectory(prefix="polyfw-gapbs-") as work:
        tools = build_gapbs(arguments.gapbs, Path(work))
        for scale in arguments.scales:
            for kind in arguments.graphs:
                for row in bench_graph(kind, scale, tools, Path(work), arguments):
                    print(row, flush=True)


if __name__ == "__main__":
    sys.exit(main(ARGUMENTS))
