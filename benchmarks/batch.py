"""Many small graphs: polyfw.solve_batch beside what graph-learning users run today (issue 38).

    .venv/bin/python benchmarks/batch.py [--graphs 100000] [--repeats 3] [--graphormer-graphs 5000]
                                         [--targets cpu cuda] [--no-graphormer] [--doors GRAPHS]

Every method starts from the same input, a PyG-style list of (2, E) edge_index arrays of
molecule-like graphs (polyfw.graphs.datasets.molecule_like: 10-50 atoms, mean 30, both
directions of each bond), and ends with every graph's distances, unreachable pairs as 510:

- solve_batch: polyfw's call with its defaults (and with dtype=int32, the plain kernel's type);
- plain padded kernel: what a Numba user writes, the batch padded to (B, 50, 50) int32, a prange
  over graphs, the nest inside (the adjacency built with numpy);
- Graphormer: its Cython floyd_warshall (../shared/peers/graphormer/algos.pyx, built here in a
  virtual environment of its own with cython and cythonize(language_level=2)), called per graph
  on the bool adjacency as Graphormer's preprocessing does, timed on the first --graphormer-graphs
  graphs (a rate per graph: the whole set takes minutes a repeat);
- scipy loop: shortest_path per graph on a CSR matrix, scipy's default method and method='FW'.

Then the weighted case (integer bond weights 1-10; solve_batch against the scipy loop). Every
answer is checked equal to solve_batch's before it is timed; times are medians of --repeats,
interleaved, rates in graphs per second and ratios in one run. --targets cuda adds solve_batch on
the GPU (a graph per thread block; host padding and copies included).
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import networkx as nx  # noqa: E402
import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from numba import njit, prange  # noqa: E402
from scipy.sparse.csgraph import shortest_path  # noqa: E402

import polyfw  # noqa: E402
from polyfw.graphs.datasets import molecule_like  # noqa: E402
from record import print_and_record  # noqa: E402  (benchmarks/record.py)

UNREACHABLE = 510
#: issue 55: every door of solve_batch within this factor of the fastest
DOOR_BOUND = 1.5
SCIPY_LOOP = "scipy loop on the CSR list, method='auto' (rate of 2,000)"
PEERS = Path(__file__).resolve().parents[2] / "shared" / "peers" / "graphormer"


@njit(parallel=True, cache=True)
def _plain_fw(a):
    for b in prange(a.shape[0]):
        n = a.shape[1]
        for k in range(n):
            for i in range(n):
                a_ik = a[b, i, k]
                for j in range(n):
                    a[b, i, j] = min(a[b, i, j], a_ik + a[b, k, j])


def plain_padded(graphs, sizes, weights=None):
    """The batch as a (B, 50, 50) int32 array and the plain kernel over it."""
    count, side = len(graphs), int(sizes.max())
    a = np.full((count, side, side), UNREACHABLE, dtype=np.int32)
    a[:, np.arange(side), np.arange(side)] = 0  # (padding vertices too: only each graph's own block is compared)
    graph_of = np.repeat(np.arange(count), [g.shape[1] for g in graphs])
    joined = np.concatenate(graphs, axis=1)
    a[graph_of, joined[0], joined[1]] = 1 if weights is None else np.concatenate(weights)
    _plain_fw(a)
    return np.minimum(a, UNREACHABLE)


def scipy_loop(graphs, sizes, method, weights=None):
    results = []
    for g, (index, n) in enumerate(zip(graphs, sizes)):
        values = np.ones(index.shape[1]) if weights is None else weights[g]
        matrix = sp.csr_array((values, (index[0], index[1])), shape=(n, n))
        distances = shortest_path(matrix, method=method, unweighted=weights is None)
        results.append(np.where(np.isinf(distances), UNREACHABLE, distances))
    return results


def build_graphormer(folder: Path):
    """Graphormer's algos.pyx compiled in a virtual environment of its own; the module, imported here."""
    environment = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(environment)], check=True)
    pip = environment / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", "cython", "setuptools", f"numpy=={np.__version__}"], check=True)
    (folder / "algos.pyx").write_text((PEERS / "algos.pyx").read_text())
    (folder / "setup.py").write_text(
        "import numpy\nfrom setuptools import setup, Extension\nfrom Cython.Build import cythonize\n"
        "setup(ext_modules=cythonize([Extension('algos', ['algos.pyx'], include_dirs=[numpy.get_include()])],"
        " language_level=2))\n")
    subprocess.run([str(environment / "bin" / "python"), "setup.py", "build_ext", "--inplace", "-q"], cwd=folder,
                   check=True, capture_output=True)
    sys.path.insert(0, str(folder))
    import algos  # noqa: PLC0415

    return algos


def graphormer_loop(algos, graphs, sizes):
    results = []
    for index, n in zip(graphs, sizes):
        adjacency = np.zeros((n, n), dtype=bool)
        adjacency[index[0], index[1]] = True
        distances, _ = algos.floyd_warshall(adjacency)
        results.append(distances)
    return results


def same(padded, listed, sizes) -> bool:
    return all(np.array_equal(padded[g, :n, :n], listed[g]) for g, n in enumerate(sizes))


def timed(run, repeats: int) -> tuple[float, object]:
    """Median seconds of `repeats` calls, after one that compiles and warms the caches."""
    seconds, result = [], run()
    for _ in range(repeats):
        started = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - started)
    return float(np.median(seconds)), result


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


class PyGLike:
    """What PyG's Data offers solve_batch: an edge_index and num_nodes."""

    def __init__(self, edge_index: np.ndarray, num_nodes: int) -> None:
        self.edge_index, self.num_nodes = edge_index, num_nodes


def doors(graphs, sizes) -> dict[str, object]:
    """The same graphs as every list a user may hold (dense matrices use 0 for no arc, solve_batch's
    default null_value)."""
    csr = [sp.csr_array((np.ones(g.shape[1]), (g[0], g[1])), shape=(n, n)) for g, n in zip(graphs, sizes)]
    return {"edge_index list + num_nodes": (graphs, sizes), "(edge_index, n) pairs": (list(zip(graphs, sizes)), None),
            "PyG-like objects": ([PyGLike(g, n) for g, n in zip(graphs, sizes)], None),
            "dense matrices": ([m.toarray() for m in csr], None), "scipy CSR": (csr, None),
            "scipy CSC": ([m.tocsc() for m in csr], None), "scipy COO": ([m.tocoo() for m in csr], None),
            "networkx graphs": ([nx.from_scipy_sparse_array(m, create_using=nx.DiGraph) for m in csr], None)}


def door_table(graphs, sizes, repeats: int) -> None:
    """solve_batch through every door on the same graphs (each answer checked), beside the plain padded
    kernel and a scipy loop on the CSR list; graphs per second and each door over the fastest."""
    reference = polyfw.solve_batch(graphs, sizes, unreachable=UNREACHABLE)
    rows = {}
    for door, (form, num_nodes) in doors(graphs, sizes).items():
        run = lambda form=form, num_nodes=num_nodes: polyfw.solve_batch(form, num_nodes,  # noqa: E731
                                                                        unreachable=UNREACHABLE)
        seconds, found = timed(run, repeats)
        if not np.array_equal(found, reference):
            raise SystemExit(f"{door}: solve_batch's answer differs from the edge_index list's")
        rows[f"solve_batch, {door}"] = seconds
    rows["plain padded Numba kernel"] = timed(lambda: plain_padded(graphs, sizes), repeats)[0]
    csr = doors(graphs[:2000], sizes[:2000])["scipy CSR"][0]
    loop = timed(lambda: [shortest_path(m, method="auto", unweighted=True) for m in csr], repeats)[0]
    rows[SCIPY_LOOP] = loop * len(graphs) / len(csr)
    fastest = min(seconds for name, seconds in rows.items() if name.startswith("solve_batch"))
    print_and_record("batch", f"every door, {len(graphs):,} graphs",
                     ["input", "graphs/s", "time over the fastest door"],
                     [[name, round(len(graphs) / taken), round(taken / fastest, 2)] for name, taken in rows.items()],
                     note=f"median of {repeats}; bound: each door within {DOOR_BOUND}x the fastest door")
    scipy_list = rows["solve_batch, scipy CSR"]
    print(f"a scipy user's CSR list: {rows[SCIPY_LOOP] / scipy_list:.1f}x a scipy loop, "
          f"{rows['plain padded Numba kernel'] / scipy_list:.2f}x the plain padded kernel")


def method_table(title: str, per_graph: dict[str, float], note: str) -> None:
    """Each method's seconds a graph as graphs per second, and as a multiple of solve_batch's defaults."""
    ours = per_graph["solve_batch (defaults)"]
    print_and_record("batch", title, ["method", "graphs/s", "solve_batch is (x faster)"],
                     [[name, round(1 / seconds), round(seconds / ours, 2)] for name, seconds in per_graph.items()],
                     note=note)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--graphormer-graphs", type=int, default=5000)
    parser.add_argument("--no-graphormer", action="store_true")
    parser.add_argument("--no-scipy", action="store_true", help="leave out the scipy loops (minutes at 100k graphs)")
    parser.add_argument("--targets", nargs="+", default=["cpu"], choices=["cpu", "cuda"])
    parser.add_argument("--doors", type=int, default=0, metavar="GRAPHS",
                        help="only time solve_batch through every input door on this many graphs, then stop")
    args = parser.parse_args()
    from codegen.intrinsics import target_isa

    print(f"CPU: {cpu_name()} ({target_isa()}), {numba.config.NUMBA_NUM_THREADS} threads; "
          f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}")
    started = time.perf_counter()
    graphs, sizes = molecule_like(args.graphs, seed=38)
    arcs = sum(g.shape[1] for g in graphs)
    print(f"{len(graphs):,} molecule-like graphs, {sizes.min()}-{sizes.max()} atoms (mean {sizes.mean():.1f}), "
          f"mean degree {arcs / sizes.sum():.2f}; generated in {time.perf_counter() - started:.1f} s")
    if args.doors:
        door_table(graphs[:args.doors], sizes[:args.doors], args.repeats)
        return
    rng = np.random.default_rng(38)
    bond_weights = []
    for g in graphs:  # one weight a bond, the same both ways
        half = rng.integers(1, 11, g.shape[1] // 2)
        bond_weights.append(np.concatenate([half, half]).astype(np.float64))

    def ours(**options):
        return lambda: polyfw.solve_batch(graphs, sizes, unreachable=UNREACHABLE, **options)

    # warm every method (compiles), and check each answer against solve_batch's
    reference = ours()()
    checks = {"solve_batch int32": np.array_equal(reference, ours(dtype=np.int32)()),
              "plain padded": same(reference, [m[:n, :n] for m, n in zip(plain_padded(graphs, sizes), sizes)], sizes)}
    few = min(2000, len(graphs))
    for method in () if args.no_scipy else ("auto", "FW"):
        checks[f"scipy {method}"] = same(reference[:few], scipy_loop(graphs[:few], sizes[:few], method), sizes[:few])
    algos = None
    if not args.no_graphormer:
        folder = Path(tempfile.mkdtemp(prefix="polyfw-graphormer-"))
        algos = build_graphormer(folder)
        checks["Graphormer"] = same(reference[:few], graphormer_loop(algos, graphs[:few], sizes[:few]), sizes[:few])
    if "cuda" in args.targets:
        checks["solve_batch cuda"] = np.array_equal(reference, ours(target="cuda")())
    print("answers equal to solve_batch's:", ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in checks.items()))
    if not all(checks.values()):
        raise SystemExit("a method disagrees: nothing timed")

    rows = {}
    rows["solve_batch (defaults)"] = timed(ours(), args.repeats)[0] / len(graphs)
    rows["solve_batch dtype=int32"] = timed(ours(dtype=np.int32), args.repeats)[0] / len(graphs)
    if "cuda" in args.targets:
        rows["solve_batch target=cuda"] = timed(ours(target="cuda"), args.repeats)[0] / len(graphs)
    rows["plain padded Numba kernel"] = timed(lambda: plain_padded(graphs, sizes), args.repeats)[0] / len(graphs)
    for method in () if args.no_scipy else ("auto", "FW"):
        rows[f"scipy loop, method={method!r}"] = timed(lambda: scipy_loop(graphs, sizes, method),
                                                       args.repeats)[0] / len(graphs)
    if algos is not None:
        part = min(args.graphormer_graphs, len(graphs))
        rows[f"Graphormer Cython (first {part:,} graphs)"] = timed(
            lambda: graphormer_loop(algos, graphs[:part], sizes[:part]), args.repeats)[0] / part
    method_table(f"unweighted hop distances, {len(graphs):,} graphs", rows, f"median of {args.repeats}")

    weighted = {}
    reference = ours(edge_weight=bond_weights)()
    weighted_scipy = scipy_loop(graphs[:few], sizes[:few], "auto", bond_weights[:few])  # seconds, not minutes
    if not same(reference[:few], weighted_scipy, sizes[:few]):
        raise SystemExit("weighted: scipy disagrees with solve_batch: nothing timed")
    weighted["solve_batch (defaults)"] = timed(ours(edge_weight=bond_weights), args.repeats)[0] / len(graphs)
    weighted["solve_batch dtype=float64"] = timed(ours(edge_weight=bond_weights, dtype=np.float64),
                                                  args.repeats)[0] / len(graphs)
    if "cuda" in args.targets:
        weighted["solve_batch target=cuda"] = timed(ours(edge_weight=bond_weights, target="cuda"),
                                                    args.repeats)[0] / len(graphs)
    for method in () if args.no_scipy else ("auto", "FW", "D"):
        weighted[f"scipy loop, method={method!r}"] = timed(
            lambda: scipy_loop(graphs, sizes, method, bond_weights), args.repeats)[0] / len(graphs)
    method_table(f"weighted (bond weights 1-10), {len(graphs):,} graphs", weighted,
                 f"median of {args.repeats}; answers checked on the first {few:,}")


if __name__ == "__main__":
    main()
