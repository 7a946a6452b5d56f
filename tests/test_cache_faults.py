"""Faults heal: a garbage, truncated or empty file anywhere in polyfw's or Numba's caches is
detected, rebuilt and logged (a warning on the 'polyfw' logger naming the file and what was done),
never a traceback. Each scenario solves once in a fresh process on a warm copy of a code cache,
damages files there, and solves again in another process: it must succeed, exact, with the warning.
"""
from __future__ import annotations

import json
import logging
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen import register_blocks
from polyfw.machine import tuning
from polyfw.cli import main
from polyfw.explore.store import DamagedStoreError, Record, Store

REPO = Path(__file__).resolve().parents[1]

#: solve a 40-vertex graph of integer weights (sums exact in float64) and compare with scipy
SOLVE = r"""
import sys
import numpy as np
import scipy.sparse.csgraph as csgraph
if "--stub-search" in sys.argv:  # the measured register block, without the minutes of measuring
    from codegen import register_blocks
    def search(dtype, ring="min-plus", **kwargs):
        return register_blocks.BlockChoice(*register_blocks.default_register_block(dtype), source="measured")
    register_blocks.search = search
import polyfw
rng = np.random.default_rng(1)
graph = rng.integers(1, 10, (40, 40)).astype(np.float64)
graph[rng.random((40, 40)) < 0.75] = np.inf
np.fill_diagonal(graph, 0)
distances = polyfw.solve(graph, method="sparse" if "--sparse" in sys.argv else "dense")
expected = csgraph.floyd_warshall(np.where(np.isinf(graph), 0, graph))
print("exact" if np.array_equal(distances, expected) else "WRONG")
"""
#: a generated module of six small cached functions, loaded as polyfw loads its generated code
TINY = "from numba import njit\n" + "".join(
    f"\n\n@njit(cache=True)\ndef f{number}(x):\n    return x * {number + 2}\n" for number in range(6))
LOAD_TINY = f"""
from tiling.code_cache import load_module
module = load_module({TINY!r}, "faults")
print("exact" if [getattr(module, f"f{{number}}")(3) for number in range(6)] == [6, 9, 12, 15, 18, 21] else "WRONG")
"""

#: two of the package's own @njit(cache=True) kernels, called directly (polyfw.sparse.kernels)
PACKAGE_KERNELS = """
import numpy as np
import scipy.sparse as sparse
import scipy.sparse.csgraph as csgraph
from polyfw.sparse import kernels
rng = np.random.default_rng(1)
graph = sparse.csr_matrix(rng.integers(1, 10, (40, 40)) * (rng.random((40, 40)) < 0.2))
indptr, indices, weights = graph.indptr.astype(np.int64), graph.indices.astype(np.int64), graph.data.astype(float)
found = np.full(40, np.inf)
kernels.dijkstra(indptr, indices, weights, 0, found, np.full(40, -1), np.empty(len(weights) + 1),
                 np.empty(len(weights) + 1, dtype=np.int64))
rounds = np.full(40, np.inf)
rounds[0] = 0.0
kernels.bellman_ford(indptr, indices, weights, rounds, np.full(40, -1), np.arange(40) == 0)
expected = csgraph.dijkstra(graph, indices=0)
print("exact" if np.array_equal(found, expected) and np.array_equal(rounds, expected) else "WRONG")
"""


def solve(cache: Path, *args: str, script: str = SOLVE, **env: str | None) -> str:
    """Run `script` (SOLVE) in a fresh process on `cache`; it must succeed exactly, without a
    traceback. Returns its stderr (the warnings). `env`: variables to set, None to unset."""
    environment = {**os.environ, "POLYFW_CACHE": str(cache), "POLYFW_REGISTER_BLOCK": "default",
                   "POLYFW_TUNING": str(cache / "no-tuning.json"), "OMP_WAIT_POLICY": "passive"}
    for name in ("PYTHONDONTWRITEBYTECODE", "NUMBA_CACHE_DIR"):  # bytecode beside the modules too
        environment.pop(name, None)
    for name, value in env.items():
        environment.pop(name, None) if value is None else environment.__setitem__(name, value)
    done = subprocess.run([sys.executable, "-c", script, *args], env=environment, capture_output=True, text=True,
                          cwd=REPO, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.split()[-1:] == ["exact"], done.stdout + done.stderr
    return done.stderr


def warned(stderr: str, path: Path | str, *words: str) -> list[str]:
    """The stderr lines that name `path` and every one of `words`."""
    return [line for line in stderr.splitlines() if str(path) in line and all(word in line for word in words)]


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> Path:
    """A code cache that one dense solve filled (generated modules, their bytecode, Numba's index
    and data files beside them, proofs)."""
    cache = tmp_path_factory.mktemp("warm") / "cache"
    solve(cache)
    return cache


@pytest.fixture
def cache(warm, tmp_path) -> Path:
    copy = tmp_path / "cache"
    shutil.copytree(warm, copy)  # copy2: times kept, so bytecode and Numba's index stay fresh
    return copy


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "garbage":
        path.write_bytes(b"\xff\xfe\x80" + os.urandom(max(len(data), 64)))
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "wrong payload":  # a good pickle of what Numba cannot rebuild
        path.write_bytes(pickle.dumps(("not", "a", "compiled function")))
    else:
        raise ValueError(how)


def data_file(index: Path) -> Path:
    """The (first) data file a Numba index lists."""
    return next(index.parent.glob(f"{index.name[:-len('.nbi')]}.*.nbc"))


def test_garbage_truncated_or_empty_numba_index_and_data_files_compile_again(tmp_path):
    cache = tmp_path / "cache"
    solve(cache, script=LOAD_TINY)
    indexes = sorted((cache / "__pycache__").glob("polyfw_faults_*.nbi"))
    assert len(indexes) == 6, indexes
    # one fault a function (a removed index would hide its data file)
    damaged = indexes[:3] + [data_file(index) for index in indexes[3:]]
    for path, how in zip(damaged, ("garbage", "truncated", "empty") * 2):
        damage(path, how)
    stderr = solve(cache, script=LOAD_TINY)
    for path in damaged:
        kind = "index" if path.suffix == ".nbi" else "data"
        assert len(warned(stderr, path, f"Numba cache {kind}", "damaged", "removed it, compiling again")) == 1, stderr
    assert "damaged" not in solve(cache, script=LOAD_TINY)  # rewritten: the next process loads them


def test_damaged_generated_modules_proofs_and_tuning_table_heal(cache):
    kernels, driver = (next(cache.glob(f"polyfw_{prefix}_*.py")) for prefix in ("kernels", "cpu"))
    damage(kernels, "truncated")
    damage(driver, "garbage")  # not UTF-8
    proofs = sorted((cache / "proofs").iterdir())
    damage(proofs[0], "empty")  # only a proof's existence is read
    damage(proofs[-1], "garbage")
    table = cache / "my-tuning.json"
    table.write_bytes(b"\x00\xff garbage")
    stderr = solve(cache, POLYFW_TUNING=str(table))
    assert warned(stderr, kernels, "generated module", "damaged", "characters", "wrote it again"), stderr
    assert warned(stderr, driver, "generated module", "damaged", "UnicodeDecodeError", "wrote it again"), stderr
    assert len(warned(stderr, table, "tuning table", "damaged", "the shipped table is used")) == 1, stderr
    assert "proofs" not in stderr


def test_damaged_bytecode_and_numba_cache_of_the_solver_kernels_heal(cache):
    compiled = sorted((cache / "__pycache__").glob("polyfw_*.pyc"))
    assert len(compiled) >= 2, compiled
    compiled[0].write_bytes(compiled[0].read_bytes()[:40])  # header intact: 'marshal data too short'
    body = compiled[1].read_bytes()
    compiled[1].write_bytes(body[:16] + b"\xff" * (len(body) - 16))  # 'bad marshal data'
    indexes = sorted((cache / "__pycache__").glob("polyfw_kernels_*.nbi"))
    product = next(index for index in indexes if ".relax_product-" in index.name)
    other = next(index for index in indexes if index != product)
    damage(product, "garbage")
    damage(data_file(other), "truncated")
    stderr = solve(cache)
    for path in compiled[:2]:
        assert warned(stderr, path, "bytecode", "marshal", "removed it"), stderr
    assert warned(stderr, product, "Numba cache index", "damaged", "compiling again"), stderr
    assert warned(stderr, data_file(other), "Numba cache data", "damaged", "compiling again"), stderr
    assert "damaged" not in solve(cache)


def test_a_garbage_register_block_cache_is_measured_again_and_rewritten(cache):
    path = cache / "register_blocks.json"
    path.write_bytes(b"\xff\xfe garbage" + os.urandom(64))
    stderr = solve(cache, "--stub-search", POLYFW_REGISTER_BLOCK=None)
    assert len(warned(stderr, path, "register block cache", "damaged", "measured again")) == 1, stderr
    rewritten = json.loads(path.read_text())
    assert rewritten["search"] == register_blocks.SEARCH_VERSION
    assert [choice["source"] for cpu in rewritten.values() if isinstance(cpu, dict)
            for choice in cpu.values()] == ["measured"]


def test_the_register_block_cache_read_in_process(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("POLYFW_CACHE", str(tmp_path))
    monkeypatch.delenv("POLYFW_REGISTER_BLOCK", raising=False)
    monkeypatch.setattr(register_blocks, "_REPORTED", set())
    monkeypatch.setattr(register_blocks, "search", lambda *args, **kwargs: register_blocks.BlockChoice(
        3, 1, source="measured"))
    path = tmp_path / "register_blocks.json"
    whole = json.dumps({"search": register_blocks.SEARCH_VERSION, "some-cpu": {
        "int32/min-plus": {"rows": 8, "vectors": 2, "unroll": 1, "prefetch": [1, 0], "source": "measured"}}})
    for text in (whole[: len(whole) // 2], "\udcff garbage", '{"search": 4, "x": [1, 2]}', "[]",
                 json.dumps({"search": register_blocks.SEARCH_VERSION, register_blocks.cpu_key(): {
                     "int32/min-plus": {"rows": 3}}})):
        path.write_text(text, errors="surrogateescape")
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="polyfw"):
            assert register_blocks.choose_register_block("int32").source == "measured"
        assert [record.name for record in caplog.records] == ["polyfw"] and str(path) in caplog.text
    assert register_blocks.choose_register_block("int32").source == "cached"


def test_package_kernels_numba_cache_heals(tmp_path):
    """The package's own @njit(cache=True) kernels (polyfw.sparse's, their cache under NUMBA_CACHE_DIR
    here: the package's own __pycache__ is shared with every other run)."""
    numba_cache = tmp_path / "numba"
    solve(tmp_path / "cache", script=PACKAGE_KERNELS, NUMBA_CACHE_DIR=str(numba_cache))
    indexes = {index.name.split(".")[1].split("-")[0]: index for index in numba_cache.glob("sparse_*/kernels.*.nbi")}
    garbage, rebuilt = indexes["dijkstra"], indexes["bellman_ford"]
    damage(garbage, "garbage")
    damage(data_file(rebuilt), "wrong payload")  # unpickles, but does not rebuild
    stderr = solve(tmp_path / "cache", script=PACKAGE_KERNELS, NUMBA_CACHE_DIR=str(numba_cache))
    assert warned(stderr, garbage, "Numba cache index", "damaged", "compiling again"), stderr
    assert warned(stderr, rebuilt, "Numba cache index", "did not load", "compiling again"), stderr
    assert "damaged" not in solve(tmp_path / "cache", script=PACKAGE_KERNELS, NUMBA_CACHE_DIR=str(numba_cache))


@pytest.mark.parametrize("text", [b"\x00\xff not JSON", b'{"cpu": {"float32": [[1000', b"[1, 2]"])
def test_a_damaged_user_tuning_table_is_reported_once_and_the_shipped_one_used(tmp_path, monkeypatch, caplog, text):
    path = tmp_path / "tuning.json"
    path.write_bytes(text)
    monkeypatch.setenv("POLYFW_TUNING", str(path))
    with caplog.at_level(logging.WARNING, logger="polyfw"):
        shipped = tuning.read_table(tuning.shipped_path())
        assert shipped and tuning.tuning_table() == shipped
        tuning.tuned_rows("cpu", "float32")
        tuning.tuning_table()
    assert len([r for r in caplog.records if str(path) in r.getMessage()]) == 1, caplog.text


def test_a_damaged_explore_store_is_one_line_naming_it(tmp_path, capsys):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"\xff" * 3000)
    status = main(["explore", "--n", "32", "--families", "classic", "--max-candidates", "1", "--no-ceiling",
                   "--store", str(garbage), "--plot", str(tmp_path / "p.png")])
    error = capsys.readouterr().err
    assert status == 1 and len(error.splitlines()) == 1, error
    assert error.startswith("polyfw: error: the explore store") and str(garbage) in error and "move it aside" in error
    store = tmp_path / "store.sqlite"
    with Store(store) as good:
        for number in range(200):
            good.put(Record("m", "cpu", "float32", 64, f"k{number}", "classic", {}, "measured", tree="x" * 300))
    store.write_bytes(store.read_bytes()[: store.stat().st_size // 2])
    with pytest.raises(DamagedStoreError, match=re.escape(str(store))):
        with Store(store) as truncated:
            truncated.records()
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with Store(empty) as fresh:  # an empty file is an empty database
        assert fresh.records() == []
