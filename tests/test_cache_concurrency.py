"""Caches under contention: processes that compile the same generated code at once, one killed in
the middle of compiling, and two explorations writing one store all leave caches the next
process uses, and answers that are exact."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from polyfw.explore.store import Store

REPO = Path(__file__).resolve().parents[1]

#: a generated module whose cached functions take a moment to compile, loaded as polyfw loads its code
MODULE = "from numba import njit, prange\n" + "".join(
    f"\n\n@njit(cache=True, parallel=True)\ndef f{number}(x):\n    total = 0.0\n    for i in prange(x.shape[0]):\n"
    f"        total += x[i] * {number + 2}\n    return total\n" for number in range(8))
LOAD = f"""
import sys, time
import numpy as np
from tiling.code_cache import load_module
if len(sys.argv) > 1:
    time.sleep(float(sys.argv[1]))
module = load_module({MODULE!r}, "contention")
x = np.arange(10.0)
print("exact" if [getattr(module, f"f{{number}}")(x) for number in range(8)] == [45.0 * (n + 2) for n in range(8)]
      else "WRONG")
"""


def _environment(cache: Path) -> dict[str, str]:
    return {**os.environ, "POLYFW_CACHE": str(cache), "PYTHONPATH": str(REPO), "OMP_WAIT_POLICY": "passive"}


def test_four_processes_compiling_the_same_code_into_a_cold_cache_all_succeed(tmp_path):
    processes = [subprocess.Popen([sys.executable, "-c", LOAD], env=_environment(tmp_path), cwd=tmp_path,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [process.communicate(timeout=300) for process in processes]
    assert [process.returncode for process in processes] == [0] * 4, [err for _, err in outputs]
    assert [out.split()[-1] for out, _ in outputs] == ["exact"] * 4
    cached = list(tmp_path.glob("**/*.nbi"))
    assert cached, "nothing was cached"
    again = subprocess.run([sys.executable, "-c", LOAD], env=_environment(tmp_path), cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and again.stdout.split()[-1] == "exact", again.stderr


def test_a_process_killed_while_compiling_leaves_a_cache_the_next_one_uses(tmp_path):
    victim = subprocess.Popen([sys.executable, "-c", LOAD], env=_environment(tmp_path), cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob("polyfw_contention_*.py")) and time.monotonic() < deadline:
        time.sleep(0.05)  # the module is written: compiling has begun
    time.sleep(0.5)
    victim.send_signal(signal.SIGKILL)
    victim.communicate()
    assert victim.returncode == -signal.SIGKILL
    after = subprocess.run([sys.executable, "-c", LOAD], env=_environment(tmp_path), cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert after.returncode == 0 and after.stdout.split()[-1] == "exact", after.stderr


def test_two_explorations_sharing_one_store_both_record_everything(tmp_path):
    store = tmp_path / "shared.sqlite"
    command = [sys.executable, "-m", "polyfw.cli", "explore", "--n", "12", "--families", "classic", "--axis",
               "stages=I-SD-DD", "--strategy", "exhaustive", "--repeats", "1", "--no-ceiling", "--store", str(store)]
    environment = {**os.environ, "PYTHONPATH": str(REPO), "OMP_WAIT_POLICY": "passive"}
    runs = [subprocess.Popen(command + ["--axis", f"tile={tile}", "--plot", str(tmp_path / f"{tile}.png")],
                             env=environment, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for tile in (4, 6)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
    with Store(store) as opened:
        records = opened.records()
    tiles = sorted(r.key.split("tile=")[1].split(",")[0].split(";")[0] for r in records)
    assert len(records) == 6 and tiles == ["4", "4", "4", "6", "6", "6"]  # 3 runtimes per tile
    assert {r.status for r in records} == {"measured"}


def test_environment_reads_what_os_environ_holds(monkeypatch):
    from tiling.code_cache import environment

    monkeypatch.setenv("POLYFW_TEST_SETTING", "é 1")
    assert environment("POLYFW_TEST_SETTING") == os.environ.get("POLYFW_TEST_SETTING") == "é 1"
    monkeypatch.delenv("POLYFW_TEST_SETTING")
    assert environment("POLYFW_TEST_SETTING") is None


def test_a_file_stamp_changes_with_the_file_and_is_none_without_it(tmp_path):
    from tiling.code_cache import file_stamp

    path = tmp_path / "table.json"
    assert file_stamp(path) is None
    path.write_text("{}")
    first = file_stamp(path)
    path.write_text('{"a": 1}')
    assert first is not None and file_stamp(path) != first and file_stamp(str(path)) == file_stamp(path)
