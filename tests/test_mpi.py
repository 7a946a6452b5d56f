"""The MPI target under `mpiexec -n P` (P = 1..4, oversubscribed on small machines): exact against
scipy, the runtime's message counts equal to the plan's, skip-INF, negative cycles and faults.

Each launch runs many cases (tests/mpi_cases.py) to keep the start-up cost of P interpreters low.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from polyfw.graphs import random_graph

HERE = Path(__file__).parent
CASES = HERE / "mpi_cases.py"


def mpiexec() -> str:
    """The launcher next to this interpreter (the mpich wheel's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    assert found, "mpiexec not found: install the project's mpi extra (pip install '.[mpi]')"
    return found


def launch(processes: int, *arguments: str, timeout: float = 240, env: dict | None = None,
           check: bool = True) -> subprocess.CompletedProcess:
    command = [mpiexec(), "-n", str(processes), *arguments]
    environment = {**os.environ, "OMP_WAIT_POLICY": "passive", **(env or {})}
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environment,
                          cwd=HERE.parent)
    if check:
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr[-3000:]}"
    return done


def results(processes: int, which: str) -> list[dict]:
    done = launch(processes, sys.executable, str(CASES), which)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("processes", [1, 2, 3, 4])
def test_every_family_dtype_and_order_is_exact_on_p_processes(processes):
    found = results(processes, "exact")
    exact = [case for case in found if case["case"] == "exact"]
    assert len(exact) == 3 * (3 if processes > 2 else 1) * 2  # families x dtypes x lookahead on/off
    assert all(case["exact"] for case in found), [case for case in found if not case["exact"]]
    grids = {case["grid"] for case in exact}
    assert grids == {{1: "1 x 1", 2: "1 x 2", 3: "1 x 3", 4: "2 x 2"}[processes] + " block-cyclic"}
    cases = {case["case"] for case in found}
    assert {"predecessors", "predecessor products", "n=1", "one-wide"} <= cases and ("strips" in cases) == (processes > 1)


def test_runtime_counts_equal_the_plans_messages_and_bytes():
    for case in results(4, "counts"):
        assert case["measured"] == case["model"], case
        assert sum(case["measured"]["messages_sent"]) > 0


def test_skip_inf_skips_most_of_a_disconnected_graph_and_stays_exact():
    on, off, straddling, straddling_off = results(4, "disconnected")
    assert all(case["exact"] for case in (on, off, straddling, straddling_off))
    # four components on 8 x 8 blocks: of the 512 tile-layers only the 4 x 2 x 2 x 2 inside components move
    assert on["skipped_tile_layers"] == on["tile_layers"] - 4 * 2**3 and on["empty_messages_sent"] > 0
    assert straddling["skipped_tile_layers"] > 0 and straddling["skipped_rows"] > 0
    for off_case in (off, straddling_off):
        assert off_case["skipped_tile_layers"] == off_case["empty_messages_sent"] == off_case["skipped_rows"] == 0


def test_reachable_row_runs_merge_short_gaps():
    from codegen.mpi import reachable_runs

    reachable = np.zeros(40, dtype=bool)
    reachable[[2, 3, 5, 30, 31]] = True
    assert reachable_runs(reachable, 8) == [(2, 6), (30, 32)]
    assert reachable_runs(reachable, 30) == [(2, 32)]
    assert reachable_runs(np.zeros(5, dtype=bool), 8) == [] and reachable_runs(np.ones(5, dtype=bool), 8) == [(0, 5)]


@pytest.fixture
def graph_file(tmp_path):
    graph = random_graph(60, 240, weights=(1, 30), seed=5)
    path = tmp_path / "g.gr"
    lines = [f"p sp {graph.n} {len(graph.source)}"]
    lines += [f"a {s + 1} {t + 1} {int(w)}" for s, t, w in zip(graph.source, graph.target, graph.weight)]
    path.write_text("\n".join(lines) + "\n")
    return graph, path


def polyfw_command() -> list[str]:
    return [sys.executable, "-m", "polyfw.cli"]


def test_cli_under_mpiexec_writes_the_same_npy_as_one_process(graph_file, tmp_path):
    _, path = graph_file
    alone = tmp_path / "alone.npy"
    launch(1, *polyfw_command(), "solve", str(path), "-o", str(alone), "--schedule", "classic", "--tile", "16")
    together = tmp_path / "together.npy"
    done = launch(3, *polyfw_command(), "solve", str(path), "-o", str(together), "--schedule", "classic",
                  "--tile", "16", "--grid", "3x1")
    assert done.stdout.count("wrote distances") == 1  # rank 0 reports
    assert np.array_equal(np.load(alone), np.load(together))


def test_npy_input_is_read_by_every_rank_and_written_in_parallel(graph_file, tmp_path):
    from polyfw import solve

    graph, _ = graph_file
    from polyfw.graphs import as_dense

    source = tmp_path / "w.npy"
    np.save(source, as_dense(graph, dtype="float64"))
    out, pred = tmp_path / "d.npy", tmp_path / "p.npy"
    launch(4, *polyfw_command(), "solve", str(source), "-o", str(out), "--predecessors", str(pred),
           "--schedule", "classic", "--tile", "16", "--dtype", "int32")
    distances, predecessors = solve(graph, schedule="classic", tile=16, dtype="int32", predecessors=True)
    assert np.array_equal(np.load(out), distances) and np.array_equal(np.load(pred), predecessors)


def test_negative_cycle_is_reported_once_by_rank_0_and_every_rank_exits(tmp_path):
    path = tmp_path / "cycle.gr"
    path.write_text("p sp 40 3\na 3 17 2\na 17 30 -5\na 30 3 1\n")
    done = launch(3, *polyfw_command(), "solve", str(path), "-o", str(tmp_path / "d.npy"), "--schedule",
                  "classic", "--tile", "8", check=False)
    assert done.returncode == 1
    assert done.stderr.count("negative cycle") == 1, done.stderr


def test_a_bad_input_on_one_rank_ends_every_rank_with_its_message(tmp_path):
    weights = np.full((40, 40), np.inf)
    weights[35, 36] = np.nan  # in the last block row: one rank's blocks only
    path = tmp_path / "bad.npy"
    np.save(path, weights)
    started = time.perf_counter()
    done = launch(4, *polyfw_command(), "solve", str(path), "-o", str(tmp_path / "d.npy"), "--schedule",
                  "classic", "--tile", "8", check=False, timeout=60)
    assert done.returncode == 1 and time.perf_counter() - started < 60
    assert done.stderr.count("NaN weights") == 1, done.stderr


def test_an_exception_inside_the_run_ends_every_rank_within_seconds(graph_file, tmp_path):
    _, path = graph_file
    started = time.perf_counter()
    done = launch(4, *polyfw_command(), "solve", str(path), "-o", str(tmp_path / "d.npy"), "--schedule", "classic",
                  "--tile", "8", check=False, timeout=60, env={"POLYFW_MPI_FAULT": "2:3"})
    assert done.returncode != 0 and time.perf_counter() - started < 60
    assert "rank 2 failed: RuntimeError: injected fault" in done.stderr
