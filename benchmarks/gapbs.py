"""polyfw's BFS and SSSP beside the GAP Benchmark Suite's on the same graphs and roots (issue 39).
Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/gapbs.py [--scales 16 18] [--roots 32] [--wait active]

GAPBS is built from ../shared/peers/gapbs into a temporary folder (with -fopenmp: the Makefile's
flags are replaced by CXX_FLAGS). Each graph is written once as an edge list that both sides read:
a Kronecker graph of polyfw's generator (Graph500's parameters, edge factor 16) or a uniform random
graph of the same size, weights 1-255, undirected, without self-loops or repeated pairs (the lightest
kept), so that GAPBS's builder and polyfw's CSR hold the same edges. Roots are drawn among vertices of
degree >= 1 and shared. The two sides take turns root by root: GAPBS runs its trials from a root (its
kernel-only "Trial Time", its own verifier on), and polyfw its trials from the same root (the call from
Python), one right after the other, the side that goes first alternating, and all of it --passes
times. polyfw runs in a process of its own, which loads the graph once and is stopped while GAPBS
runs: this one never starts OpenMP threads, and under OMP_WAIT_POLICY=active the child's spin on the
cores after every parallel region. Each side's turn starts with --warm-ups untimed searches of each kind
(default 3): GAPBS's process has just read its graph, where polyfw's wakes with its caches taken by
GAPBS's turn (on a 2-vCPU Xeon guest, even a 0.5 s pause alone slowed polyfw's next Kronecker-16 BFS
3.7x and the three after it 1.1-1.4x; with one warm-up, polyfw's uniform-18 BFS read 4.11 ms in its
turns against 3.13 alone in a process, with three 3.14, GAPBS's 3.3-3.7 and 3.17 ms). The speed is the
median, over every (root, pass), of GAPBS's median trial over polyfw's from that root in that pass: a
pair timed seconds apart, so that the shared machine's drift (2x within minutes on some hosts) falls on both sides of it; the middle half of those
pairs is printed beside it. The times are the median over roots of each root's median over all its
trials. Every polyfw answer passes Graph500's rules, and its levels and distances equal scipy's on the
first roots. TEPS, one definition for both: the undirected edges of the root's component over the
search's seconds. Both sides run on the same threads (OMP_NUM_THREADS, default all cores) with the same
OMP_WAIT_POLICY (--wait).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
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
    parser.add_argument("--trials", type=int, default=3, help="searches per root on each side, each pass")
    parser.add_argument("--warm-ups", type=int, default=3,
                        help="untimed searches each side runs from a root before its trials, each turn")
    parser.add_argument("--passes", type=int, default=2,
                        help="rounds over the roots, each root timed on both sides in turn")
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="thread counts each root is timed at on both sides (default: OMP_NUM_THREADS); with "
                             "several, a second table gives each side's speed-up from the fewest to the most")
    parser.add_argument("--checked-roots", type=int, default=3, help="roots whose answers are compared with scipy's")
    parser.add_argument("--wait", choices=("passive", "active"), default=os.environ.get("OMP_WAIT_POLICY", "passive"))
    parser.add_argument("--graphs", nargs="+", choices=("kronecker", "uniform"), default=["kronecker", "uniform"])
    parser.add_argument("--gapbs", type=Path, default=PEERS, help="GAPBS's source folder")
    parser.add_argument("--profile", action="store_true",
                        help="also print both BFSs level by level and both SSSPs round by round from each graph's "
                             "first root")
    parser.add_argument("--polyfw-side", type=Path, help=argparse.SUPPRESS)  # the child: a graph's .npz
    return parser.parse_args()


ARGUMENTS = parse_arguments() if __name__ == "__main__" else None
if ARGUMENTS is not None:
    os.environ["OMP_WAIT_POLICY"] = ARGUMENTS.wait  # before any OpenMP runtime starts, on both sides
    os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count()))
    ARGUMENTS.threads = ARGUMENTS.threads or [int(os.environ["OMP_NUM_THREADS"])]
    os.environ["NUMBA_NUM_THREADS"] = str(max(ARGUMENTS.threads))

import numpy as np  # noqa: E402

from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw.graphs import Edges  # noqa: E402
from polyfw.sparse import rmat_edges  # noqa: E402
from record import Table, print_and_record  # noqa: E402  (benchmarks/record.py)


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
    """Each unordered pair once, with its lightest weight, ordered by (lower, higher) end; no self-loops. One
    sort of (pair, weight) packed in an int64 (the weights are integers 1-255), in numpy: this process must
    start no OpenMP threads (PolyfwSide), and a lexsort of three keys took minutes at scale 22."""
    assert np.array_equal(edges.weight, np.clip(np.round(edges.weight), 1, 255)), "weights must be integers 1-255"
    low, high = np.minimum(edges.source, edges.target), np.maximum(edges.source, edges.target)
    keep = low != high
    packed = np.sort(((low[keep] * edges.n + high[keep]) << 8) | edges.weight[keep].astype(np.int64))
    pair = packed >> 8
    first = np.ones(len(pair), dtype=bool)
    first[1:] = pair[1:] != pair[:-1]
    return Edges(edges.n, pair[first] // edges.n, pair[first] % edges.n, (packed[first] & 255).astype(np.float64))


def make_graph(kind: str, scale: int) -> Edges:
    if kind == "kronecker":
        found = rmat_edges(scale, seed=scale, weighted=True)
    else:
        rng = np.random.default_rng(scale)
        n, m = 2**scale, 16 * 2**scale
        found = Edges(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 256, m).astype(np.float64))
    return simple_undirected(found)


def write_columns(path: Path, columns: list[np.ndarray], lines_a_chunk: int = 1 << 20) -> None:
    """Non-negative integer columns as text, one row a line, each column zero-padded to its widest value:
    GAPBS's reader (`>>` in base 10) skips the zeros, and the digits come from whole-array arithmetic:
    5.6 s for a three-column scale-20 list, where np.savetxt took 42 s for two columns."""
    widths = [len(str(int(column.max(initial=0)))) for column in columns]
    powers = [10 ** np.arange(width - 1, -1, -1, dtype=np.int64) for width in widths]
    with open(path, "wb") as out:
        for start in range(0, len(columns[0]), lines_a_chunk):
            parts = []
            for column, power in zip(columns, powers):
                chunk = column[start:start + lines_a_chunk].astype(np.int64)
                parts += [(chunk[:, None] // power % 10 + ord("0")).astype(np.uint8),
                          np.full((len(chunk), 1), ord(" "), dtype=np.uint8)]
            parts[-1][:] = ord("\n")
            out.write(np.hstack(parts).tobytes())


def write_gapbs_graphs(edges: Edges, folder: Path, tools: Path) -> tuple[Path, Path]:
    """The edge list as GAPBS's serialized graphs (.sg for BFS, .wsg for SSSP), symmetrized by its builder."""
    write_columns(folder / "g.el", [edges.source, edges.target])
    write_columns(folder / "g.wel", [edges.source, edges.target, edges.weight.astype(np.int64)])
    for source, target, flags in (("g.el", "g.sg", ["-b"]), ("g.wel", "g.wsg", ["-w", "-b"])):
        subprocess.run([str(tools / "converter"), "-s", "-f", str(folder / source), *flags, str(folder / target)],
                       check=True, capture_output=True, text=True)
    return folder / "g.sg", folder / "g.wsg"


def on_threads(threads: int) -> dict[str, str]:
    """The environment a GAPBS run on `threads` OpenMP threads gets."""
    return os.environ | {"OMP_NUM_THREADS": str(threads)}


def gapbs_seconds(binary: Path, graph: Path, root: int, trials: int, threads: int, *extra: str,
                  warm_ups: int = 0) -> list[float]:
    """GAPBS's kernel-only trial times for one root after `warm_ups` untimed ones, its own verifier passing
    on every trial."""
    searches = trials + warm_ups
    done = subprocess.run([str(binary), "-f", str(graph), "-r", str(root), "-n", str(searches), "-v", *extra],
                          check=True, capture_output=True, text=True, env=on_threads(threads))
    verdicts = re.findall(r"Verification:\s+(\S+)", done.stdout)
    if len(verdicts) != searches or any(verdict != "PASS" for verdict in verdicts):
        raise RuntimeError(f"GAPBS's {binary.name} failed its verification from root {root}:\n{done.stdout[-2000:]}")
    return [float(value) for value in re.findall(r"Trial Time:\s+([\d.]+)", done.stdout)][warm_ups:]


def best_delta(tools: Path, weighted: Path, root: int, threads: int) -> int:
    """GAPBS's fastest delta of DELTAS from one root (its README: keep its best)."""
    return min(DELTAS, key=lambda delta: median(gapbs_seconds(tools / "sssp", weighted, root, 3, threads, "-d",
                                                              str(delta))))


def polyfw_side(graph: Path, trials: int, warm_ups: int, checked_roots: int) -> None:
    """The child: loads the graph once, then answers each request line on stdin with a JSON line. A root:
    polyfw's times from it (BFS, SSSP distances only, SSSP with parents), every answer validated, the
    first `checked_roots` roots' checked against scipy's too. Each request ends
    with the threads to run on; 'steps ROOT THREADS': both searches' logs."""
    import numba
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order, dijkstra

    from polyfw.sparse import as_csr, bfs, sssp, validate_bfs, validate_sssp
    from polyfw.sparse.paths import delta_stepping

    saved = np.load(graph)
    csr = as_csr(Edges(int(saved["n"]), saved["source"], saved["target"], saved["weight"]), directed=False)
    matrix = sp.csr_array((csr.weights, csr.indices, csr.indptr), shape=(csr.n, csr.n))
    first = int(saved["roots"][0])
    bfs(csr, first)  # compile
    sssp(csr, first)
    print(json.dumps({"ready": True}), flush=True)
    checked: set[int] = set()
    for request in sys.stdin:
        words = request.split()
        numba.set_num_threads(int(words[-1]))
        if words[0] == "steps":
            found = {"bfs steps": [], "sssp steps": []}
            bfs(csr, int(words[1]), steps=found["bfs steps"])
            delta_stepping(csr, int(words[1]), steps=found["sssp steps"])
            print(json.dumps(found), flush=True)
            continue
        root = int(words[0])
        found = {"threads": numba.get_num_threads()}
        found["bfs"], (levels, parents) = _timed(lambda: bfs(csr, root), trials, warm_ups)
        validate_bfs(csr, root, levels, parents)
        reached = levels != np.iinfo(levels.dtype).max
        found["edges"] = int(csr.out_degree[reached].sum()) // 2  # the component's undirected edges
        found["sssp"], distances = _timed(lambda: delta_stepping(csr, root), trials, warm_ups)
        found["sssp+parents"], (with_parents, parents) = _timed(lambda: sssp(csr, root), trials, warm_ups)
        validate_sssp(csr, root, with_parents, parents)
        assert np.array_equal(distances, with_parents), f"root {root}: distances differ with and without parents"
        if len(checked) < checked_roots and root not in checked:
            checked.add(root)
            expected = dijkstra(matrix, directed=False, indices=root)
            assert np.array_equal(distances, expected), f"root {root}: not scipy's"
            order = breadth_first_order(matrix, root, directed=False, return_predecessors=False)
            assert set(order.tolist()) == set(np.flatnonzero(reached).tolist()), f"root {root}: BFS reach differs"
        print(json.dumps(found), flush=True)


class PolyfwSide:
    """The child process that times polyfw on one graph, kept for the whole graph so that each root's turn is
    a request, not a process; stopped (SIGSTOP) between requests: under OMP_WAIT_POLICY=active its OpenMP
    threads spin after every parallel region and would slow GAPBS running beside them."""

    def __init__(self, saved: Path, arguments: argparse.Namespace) -> None:
        self.process = subprocess.Popen([sys.executable, __file__, "--polyfw-side", str(saved), "--trials",
                                         str(arguments.trials), "--warm-ups", str(arguments.warm_ups),
                                         "--checked-roots", str(arguments.checked_roots),
                                         "--wait", arguments.wait], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
        self._answer()
        self.process.send_signal(signal.SIGSTOP)

    def _answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"polyfw's side ended (exit status {self.process.wait()})")
        return json.loads(line)

    def ask(self, request: str) -> dict:
        self.process.send_signal(signal.SIGCONT)
        self.process.stdin.write(request + "\n")
        self.process.stdin.flush()
        found = self._answer()
        self.process.send_signal(signal.SIGSTOP)
        return found

    def __enter__(self) -> PolyfwSide:
        return self

    def __exit__(self, kind, *_) -> None:
        """Ends the child: after a failure (or an interrupt) at once, so that no stopped process is left."""
        self.process.send_signal(signal.SIGCONT)
        if kind is not None:
            self.process.kill()
        self.process.stdin.close()
        if self.process.wait() != 0 and kind is None:
            raise RuntimeError(f"polyfw's side failed (exit status {self.process.returncode})")


def _timed(run, trials: int, warm_ups: int) -> tuple[list[float], object]:
    times, found = [], None
    for _ in range(warm_ups):
        run()
    for _ in range(trials):
        started = time.perf_counter()
        found = run()
        times.append(time.perf_counter() - started)
    return times, found


def gapbs_steps(binary: Path, graph: Path, root: int, threads: int, *extra: str) -> list[str]:
    """GAPBS's own log of one search (-l), a line per step. BFS: 'td' top-down with the queue's size,
    'bu' bottom-up with the vertices it woke, 'e' and 'c' its conversions between queue and bitmap, in
    seconds. SSSP: the bin, its frontier and milliseconds."""
    done = subprocess.run([str(binary), "-f", str(graph), "-r", str(root), "-n", "1", "-l", *extra],
                          check=True, capture_output=True, text=True, env=on_threads(threads))
    lines = done.stdout.splitlines()
    first = next(at for at, line in enumerate(lines) if line.startswith("Graph has")) + 1
    last = next(at for at, line in enumerate(lines) if line.startswith(("took", "Trial Time")))
    return [line.strip() for line in lines[first:last] if not line.startswith("Source")]


def level_profile(title: str, gapbs: list[str], polyfw: list) -> list[str]:
    """Both BFSs from one root, level by level (GAPBS in seconds as it prints them, polyfw in milliseconds)."""
    lines = [f"{title}", "", "    GAPBS (-l): step, count, seconds"]
    lines += [f"    {line}" for line in gapbs]
    lines += ["    polyfw (bfs(..., steps=)): level, direction, step kernel ms, level in all ms, next frontier"]
    lines += [f"    {depth:5d} {kind:>3} {kernel * 1e3:9.3f} {total * 1e3:9.3f} {frontier:10d}"
              for depth, (kind, kernel, total, frontier) in enumerate(polyfw)]
    return lines + [""]


def bucket_profile(title: str, gapbs: list[str], polyfw: list) -> list[str]:
    """Both SSSPs from one root, round by round."""
    lines = [f"{title}", "", "    GAPBS (-l): bin, frontier, ms"]
    lines += [f"    {line}" for line in gapbs]
    lines += ["    polyfw (sssp(..., steps=)): bucket, where, round ms, since the round before ms, frontier"]
    lines += [f"    {bucket:5d} {where:>8} {kernel * 1e3:9.3f} {since * 1e3:9.3f} {frontier:10d}"
              for bucket, where, kernel, since, frontier in polyfw]
    return lines + [""]


def bench_graph(kind: str, scale: int, tools: Path, folder: Path, arguments: argparse.Namespace,
                profiles: list[str]) -> tuple[list[list], list[list]]:
    """The graph's rows of the speed table (a row per thread count and kernel) and of the scaling table."""
    edges = make_graph(kind, scale)
    unweighted, weighted = write_gapbs_graphs(edges, folder, tools)
    degree = np.bincount(np.concatenate([edges.source, edges.target]), minlength=edges.n)
    rng = np.random.default_rng(1000 + scale)
    roots = rng.choice(np.flatnonzero(degree > 0), size=arguments.roots, replace=False)
    most = max(arguments.threads)
    delta = best_delta(tools, weighted, int(roots[0]), most)
    saved = folder / "graph.npz"
    np.savez(saved, n=edges.n, source=edges.source, target=edges.target, weight=edges.weight, roots=roots)
    kernels = (("BFS", "bfs", "bfs"), (f"SSSP (GAPBS delta {delta})", "sssp", "sssp"),
               ("SSSP, polyfw with parents", "sssp", "sssp+parents"))
    # per thread count: each side's times per kernel and root, and each (root, pass) pair's ratio
    gapbs = {t: {key: [[] for _ in roots] for key in ("bfs", "sssp")} for t in arguments.threads}
    polyfw = {t: {key: [[] for _ in roots] for _, _, key in kernels} for t in arguments.threads}
    ratios = {t: {key: [] for _, _, key in kernels} for t in arguments.threads}
    edges_reached = []
    with PolyfwSide(saved, arguments) as side:
        for turn in range(arguments.passes):
            for at, root in enumerate(roots):
                for threads in arguments.threads:
                    # a root's turns side by side, the side that goes first alternating: a drift in the shared
                    # machine's speed falls on both sides of a pair
                    polyfw_first = (turn + at) % 2 == 1
                    ours = side.ask(f"{root} {threads}") if polyfw_first else None
                    theirs = {"bfs": gapbs_seconds(tools / "bfs", unweighted, int(root), arguments.trials, threads,
                                                   warm_ups=arguments.warm_ups),
                              "sssp": gapbs_seconds(tools / "sssp", weighted, int(root), arguments.trials, threads,
                                                    "-d", str(delta), warm_ups=arguments.warm_ups)}
                    ours = ours or side.ask(f"{root} {threads}")
                    assert ours["threads"] == threads, "GAPBS and polyfw must run on the same threads"
                    for key in ("bfs", "sssp"):
                        gapbs[threads][key][at] += theirs[key]
                    for _, their_key, our_key in kernels:
                        polyfw[threads][our_key][at] += ours[our_key]
                        ratios[threads][our_key].append(median(theirs[their_key]) / median(ours[our_key]))
                    edges_reached.append(ours["edges"])
        component = median(edges_reached)
        if arguments.profile:
            steps = side.ask(f"steps {int(roots[0])} {most}")
            profiles += level_profile(f"BFS, {kind}, scale {scale}, root {int(roots[0])}, {most} threads:",
                                      gapbs_steps(tools / "bfs", unweighted, int(roots[0]), most), steps["bfs steps"])
            profiles += bucket_profile(f"SSSP, {kind}, scale {scale}, root {int(roots[0])} (GAPBS delta {delta}), "
                                       f"{most} threads:",
                                       gapbs_steps(tools / "sssp", weighted, int(roots[0]), most, "-d", str(delta)),
                                       steps["sssp steps"])
    graph = f"{kind}, scale {scale}"
    rows = []
    for threads in arguments.threads:
        for kernel, their_key, our_key in kernels:
            their = median(median(times) for times in gapbs[threads][their_key])
            our = median(median(times) for times in polyfw[threads][our_key])
            paired = sorted(ratios[threads][our_key])
            rows.append([graph, kernel, threads, edges.n, len(edges.source), round(their * 1e3, 2),
                         round(our * 1e3, 2), round(median(paired), 2),
                         f"{paired[len(paired) // 4]:.2f}-{paired[(3 * len(paired)) // 4]:.2f}",
                         round(component / their / 1e6), round(component / our / 1e6)])
    fewest = min(arguments.threads)
    scaling = []
    if fewest < most:
        for kernel, their_key, our_key in kernels:
            theirs = [speed_up(gapbs[fewest][their_key], gapbs[most][their_key])]
            ours = [speed_up(polyfw[fewest][our_key], polyfw[most][our_key])]
            scaling.append([graph, kernel, f"{fewest} -> {most}", *theirs, *ours])
    return rows, scaling


def speed_up(fewer: list[list[float]], more: list[list[float]]) -> float:
    """The median over roots of a root's median time on fewer threads over its median on more."""
    return round(median(median(slow) / median(fast) for slow, fast in zip(fewer, more)), 2)


def main(arguments: argparse.Namespace) -> None:
    if arguments.polyfw_side is not None:
        polyfw_side(arguments.polyfw_side, arguments.trials, arguments.warm_ups, arguments.checked_roots)
        return
    print(f"CPU: {cpu_description()}")
    how = (f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}; {arguments.roots} roots, {arguments.trials} trials "
           f"each in each of {arguments.passes} passes, after {arguments.warm_ups} untimed")
    table = Table("gapbs", "BFS and SSSP beside GAPBS",
                  ["graph", "kernel", "threads", "vertices", "edges", "GAPBS ms", "polyfw ms", "polyfw / GAPBS speed",
                   "middle half of the pairs", "GAPBS MTEPS", "polyfw MTEPS"],
                  note=f"the same threads on both sides, {how}, medians; the speed is the median over (root, pass) "
                       f"of the two sides' times from one root timed one after the other")
    scaling: list[list] = []
    profiles: list[str] = []
    with tempfile.TemporaryDirectory(prefix="polyfw-gapbs-") as work:
        tools = build_gapbs(arguments.gapbs, Path(work))
        for scale in arguments.scales:
            for kind in arguments.graphs:
                rows, scaled = bench_graph(kind, scale, tools, Path(work), arguments, profiles)
                for row in rows:
                    table.add(*row)
                scaling += scaled
    table.record()
    if scaling:
        print_and_record("gapbs", "BFS and SSSP: each side's speed-up with threads",
                         ["graph", "kernel", "threads", "GAPBS speed-up", "polyfw speed-up"], scaling,
                         note=f"{how}; each root timed at every thread count in turn, the median over roots of a "
                              f"root's median time on the fewest threads over its median on the most")
    if profiles:
        print("\nBFS level by level and SSSP round by round, one root a graph:\n")
        print("\n".join(profiles))


if __name__ == "__main__":
    sys.exit(main(ARGUMENTS))
