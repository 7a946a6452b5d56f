"""The documentation's performance page is written from what the benchmarks record: each table with its
command, date and machine, the latest one per benchmark, table and machine (`make docs` builds the site)."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


record = _module(ROOT / "benchmarks" / "record.py")
performance = _module(ROOT / "docs" / "performance.py")


def test_a_recorded_table_carries_its_command_and_machine(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(ROOT / "benchmarks" / "per_call.py"), "--calls", "5"])
    log = tmp_path / "results.jsonl"
    record.record("per_call", "n = 20", ["input", "polyfw µs"], [["dense", 12.5]], path=log)
    entry = json.loads(log.read_text())
    assert entry["command"] == "OMP_WAIT_POLICY=passive python benchmarks/per_call.py --calls 5"
    assert entry["machine"]["cpu"] and entry["machine"]["vector_bits"] >= 128 and entry["machine"]["gpu"] is None
    assert entry["rows"] == [["dense", 12.5]]
    with pytest.raises(ValueError, match="needs 2 values"):
        record.record("per_call", "n = 20", ["input", "polyfw µs"], [["dense"]], path=log)


def _entry(date: str, cpu: str, value: float) -> str:
    machine = {"cpu": cpu, "isa": "avx2", "vector_bits": 256, "cores": 2, "gpu": None}
    return json.dumps({"benchmark": "road", "title": "default call", "command": "python benchmarks/road.py",
                       "date": date, "machine": machine, "columns": ["x / scipy"], "rows": [[value]], "note": ""})


def test_the_page_keeps_the_latest_table_of_each_machine(tmp_path):
    log = tmp_path / "results.jsonl"
    log.write_text("\n".join([_entry("2026-11-02T00:00:00+00:00", "AMD EPYC", 6.38),
                              _entry("2026-11-01T00:00:00+00:00", "AMD EPYC", 4.54),
                              _entry("2026-10-01T00:00:00+00:00", "Intel Xeon", 5.5)]) + "\n")
    page = performance.performance_page(log, tmp_path / "no_gpu.json")
    assert "6.38" in page and "4.54" not in page and "5.5" in page
    assert page.count("command: `python benchmarks/road.py`") == 2
    assert "AMD EPYC (avx2, 256-bit vectors, 2 cores)" in page and "Intel Xeon" in page


def test_a_damaged_log_is_named_by_line(tmp_path):
    log = tmp_path / "results.jsonl"
    log.write_text(_entry("2026-11-02T00:00:00+00:00", "AMD EPYC", 1.0) + "\n{not json\n")
    with pytest.raises(ValueError, match="line 2"):
        performance.performance_page(log, tmp_path / "no_gpu.json")


def test_the_shipped_gpu_measurements_are_on_the_page(tmp_path):
    page = performance.performance_page(tmp_path / "none.jsonl", ROOT / "polyfw" / "machine" / "gpu_measurements.json")
    assert "## GPU: whole calls" in page and "H200" in page and "T relax/s" in page
