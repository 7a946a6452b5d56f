"""A first call in a fresh process, caches warm: each door a user takes, beside a whole scipy process
on the same graph and the floor any Numba program pays (one cached function called). Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/first_call.py [--rounds 9] [--n 200]

Every process is started anew and timed from its start to its exit; the doors run interleaved,
round after round, and the medians are quoted. Issue 55's targets: solve <= 0.8 s, `polyfw solve
small.gr -o d.npy` <= 1.2 s (a scipy process took 0.8 s on the issue's host).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from polyfw.graphs import random_graph
from codegen.register_blocks import cpu_description
from record import print_and_record  # (benchmarks/record.py)

#: what each door runs in its fresh process (the graph's files are written before)
_MATRIX = "import numpy as np\nmatrix = np.load({matrix!r})\n"
DOORS = {
    "polyfw solve(dense array)": _MATRIX + "import polyfw\npolyfw.solve(matrix)\n",
    "polyfw solve(scipy CSR)": _MATRIX + ("import scipy.sparse as sp\nimport polyfw\n"
                                          "polyfw.solve(sp.csr_array(np.where(np.isinf(matrix), 0, matrix)))\n"),
    "polyfw solve small.gr -o d.npy": None,  # the command line, as a user types it
    "scipy shortest_path(dense array)": _MATRIX + ("from scipy.sparse.csgraph import shortest_path\n"
                                                   "shortest_path(matrix)\n"),
    "numba floor (one cached function)": ("import numpy as np\nfrom numba import njit\n\n\n"
                                          "@njit(cache=True)\ndef total(a):\n    return a.sum()\n\n\n"
                                          "total(np.ones(3))\n"),
}


def write_inputs(folder: Path, n: int) -> tuple[Path, Path]:
    """The graph as a .npy dense matrix (inf: no arc) and as a DIMACS .gr file."""
    edges = random_graph(n, seed=0)
    matrix = np.full((n, n), np.inf)
    matrix[edges.source, edges.target] = edges.weight
    np.fill_diagonal(matrix, 0.0)
    np.save(folder / "matrix.npy", matrix)
    arcs = [f"a {s + 1} {t + 1} {int(w)}" for s, t, w in zip(edges.source, edges.target, edges.weight)]
    (folder / "small.gr").write_text(f"p sp {n} {len(arcs)}\n" + "\n".join(arcs) + "\n")
    return folder / "matrix.npy", folder / "small.gr"


def command(number: int, door: str, matrix: Path, graph: Path, folder: Path) -> list[str]:
    """The door's process: a script file (Numba caches only the functions of a file) or the command."""
    code = DOORS[door]
    if code is None:
        return [sys.executable, "-m", "polyfw.cli", "solve", str(graph), "-o", str(folder / "d.npy")]
    script = folder / f"door_{number}.py"
    script.write_text(code.format(matrix=str(matrix)))
    return [sys.executable, str(script)]


def timed(arguments: list[str], folder: Path) -> float:
    started = time.perf_counter()
    subprocess.run(arguments, cwd=folder, env={**os.environ, "OMP_WAIT_POLICY": "passive"}, check=True,
                   capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--n", type=int, default=200, help="vertices of the random graph (4n arcs)")
    args = parser.parse_args()
    cpu = cpu_description()
    print(f"CPU: {cpu['model']} (LLVM {cpu['llvm_cpu']}), {cpu['isa']}, {cpu['cores']} cores")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        matrix, graph = write_inputs(folder, args.n)
        commands = {door: command(number, door, matrix, graph, folder) for number, door in enumerate(DOORS)}
        for arguments in commands.values():  # warm every cache (compiled code, proofs, the OS's file cache)
            timed(arguments, folder)
        times: dict[str, list[float]] = {door: [] for door in DOORS}
        for _ in range(args.rounds):
            for door, arguments in commands.items():
                times[door].append(timed(arguments, folder))
    medians = {door: statistics.median(seconds) for door, seconds in times.items()}
    scipy_process = medians["scipy shortest_path(dense array)"]
    floor = medians["numba floor (one cached function)"]
    print_and_record("first_call", f"a first call in a fresh process, n = {args.n}",
                     ["door", "median s", "min - max s", "over a scipy process", "above the numba floor s"],
                     [[door, round(medians[door], 3), f"{min(seconds):.3f}-{max(seconds):.3f}",
                       round(medians[door] / scipy_process, 2), round(medians[door] - floor, 3)]
                      for door, seconds in times.items()], note=f"median of {args.rounds} interleaved rounds")


if __name__ == "__main__":
    main()
