"""What parents cost a delta-stepping search: distances alone against distances with parents, on the
graphs of benchmarks/gapbs.py, in interleaved rounds; optionally the same on other source trees (a
before and after), or a BFS (levels and parents from one search) across trees. Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/sssp_forms.py [--scales 16 18] [--rounds 5]
        [--search sssp|bfs] [--trees . /path/to/other/checkout] [--waits active passive]

Each round runs every tree once, in turn, in a process of its own (Python's imports cannot hold two
trees), and under each OMP_WAIT_POLICY of --waits in turn (default: the environment's), so that active
and passive waiting are compared in one run; every other round takes the runs in reverse order, and a
process calls each form from every root, alternating forms root by root. The figure is the median over
rounds of the median over roots, and beside it the median over rounds of each run's time over the first
run's in the same round, with the lowest and highest of those ratios (the host's speed drifts within a
run: a round's pair is timed within seconds); answers are checked equal between forms (in the child)
and trees (a digest of the distances or levels: BFS parents may differ between equally right runs).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402

from codegen.register_blocks import cpu_description  # noqa: E402
from gapbs import make_graph  # noqa: E402  (benchmarks/gapbs.py)
from record import Table  # noqa: E402  (benchmarks/record.py)

#: the forms timed of each search, the first one's answer the one compared
FORMS = {"sssp": ("distances", "with parents"), "bfs": ("levels and parents",)}


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[16, 18])
    parser.add_argument("--graphs", nargs="+", choices=("kronecker", "uniform"), default=["kronecker", "uniform"])
    parser.add_argument("--roots", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--search", choices=sorted(FORMS), default="sssp")
    parser.add_argument("--trees", type=Path, nargs="+", default=[Path(__file__).resolve().parent.parent],
                        help="source trees to time side by side (each needs this script's benchmarks/ beside it)")
    parser.add_argument("--waits", nargs="+", choices=("active", "passive"), default=None,
                        help="OMP_WAIT_POLICY values each tree runs under in every round (default: the environment's)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)  # a graph's .npz, timed in this tree
    return parser.parse_args()


def child(graph: Path, search: str) -> dict:
    """One round in this process's tree: seconds per form and root, and a digest of the answers."""
    from polyfw.graphs import Edges
    from polyfw.sparse import as_csr, bfs, sssp
    from polyfw.sparse.paths import delta_stepping

    saved = np.load(graph)
    csr = as_csr(Edges(int(saved["n"]), saved["source"], saved["target"], saved["weight"]), directed=False)
    roots = [int(root) for root in saved["roots"]]
    calls = {"distances": lambda root: delta_stepping(csr, root), "with parents": lambda root: sssp(csr, root)[0],
             "levels and parents": lambda root: bfs(csr, root)[0]}
    forms = FORMS[search]
    for form in forms:  # compiled (or read from the cache) before any timing
        calls[form](roots[0])
    seconds: dict[str, list[float]] = {form: [] for form in forms}
    digest = 0.0
    for at, root in enumerate(roots):
        found = {}
        for form in (forms if at % 2 == 0 else forms[::-1]):
            started = time.perf_counter()
            found[form] = calls[form](root)
            seconds[form].append(time.perf_counter() - started)
        answers = list(found.values())
        assert all(np.array_equal(answers[0], other) for other in answers[1:]), f"root {root}: the forms differ"
        reached = answers[0][np.isfinite(answers[0])] if answers[0].dtype.kind == "f" else answers[0]
        digest += float(reached.sum())
    return {"seconds": seconds, "digest": digest}


def paired_ratios(found_runs: list[dict], first_runs: list[dict], forms: tuple[str, ...]) -> list[str]:
    """Per form, the median over rounds of this run's time over the first run's in the same round, and the
    lowest and highest of those ratios: a difference the rounds' spread covers is none."""
    cells = []
    for form in forms:
        ratios = sorted(median(found["seconds"][form]) / median(first["seconds"][form])
                        for found, first in zip(found_runs, first_runs))
        cells.append(f"{median(ratios):.3f} ({ratios[0]:.2f}-{ratios[-1]:.2f})")
    return cells


def main(arguments: argparse.Namespace) -> None:
    forms = FORMS[arguments.search]
    if arguments.child is not None:
        print(json.dumps(child(arguments.child, arguments.search)))
        return
    print(f"CPU: {cpu_description()}, {os.environ.get('OMP_NUM_THREADS', os.cpu_count())} threads")
    trees = [tree.resolve() for tree in arguments.trees]
    runs = [(tree, wait) for tree in trees for wait in arguments.waits or [os.environ["OMP_WAIT_POLICY"]]]
    title = {"sssp": "delta-stepping with and without parents, interleaved",
             "bfs": "BFS (levels and parents), interleaved"}[arguments.search]
    table = Table("sssp_forms", title, ["graph", "tree", "waiting", *(f"{form} ms" for form in forms)]
                  + (["parents cost"] if len(forms) == 2 else [])
                  + [f"{form} / first run's (spread)" for form in forms],
                  note=f"{arguments.roots} roots, {arguments.rounds} rounds, medians; trees: "
                       + ", ".join(str(tree) for tree in trees))
    with tempfile.TemporaryDirectory(prefix="polyfw-sssp-forms-") as work:
        for scale in arguments.scales:
            for kind in arguments.graphs:
                edges = make_graph(kind, scale)
                degree = np.bincount(np.concatenate([edges.source, edges.target]), minlength=edges.n)
                roots = np.random.default_rng(2000 + scale).choice(np.flatnonzero(degree > 0), arguments.roots,
                                                                   replace=False)
                saved = Path(work) / f"{kind}{scale}.npz"
                np.savez(saved, n=edges.n, source=edges.source, target=edges.target, weight=edges.weight,
                         roots=roots)
                rounds: dict[tuple[Path, str], list[dict]] = {run: [] for run in runs}
                for at in range(arguments.rounds):
                    for tree, wait in (runs if at % 2 == 0 else runs[::-1]):  # no run always first
                        done = subprocess.run(
                            [sys.executable, str(tree / "benchmarks" / "sssp_forms.py"), "--child", str(saved),
                             "--search", arguments.search],
                            check=True, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'benchmarks'}",
                                 "OMP_WAIT_POLICY": wait})
                        rounds[tree, wait].append(json.loads(done.stdout))
                digests = {found["digest"] for found_runs in rounds.values() for found in found_runs}
                assert len(digests) == 1, f"{kind} {scale}: the trees' answers differ"
                for tree, wait in runs:
                    ms = [1e3 * median(median(found["seconds"][form]) for found in rounds[tree, wait])
                          for form in forms]
                    table.add(f"{kind}, scale {scale}", tree.name, wait, *(round(value, 2) for value in ms),
                              *([f"{ms[1] / ms[0] - 1:+.1%}"] if len(ms) == 2 else []),
                              *paired_ratios(rounds[tree, wait], rounds[runs[0]], forms))
    table.record()


if __name__ == "__main__":
    sys.exit(main(parse_arguments()))
