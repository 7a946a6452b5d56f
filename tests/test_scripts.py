import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_legality_table_script():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "legality_table.py"), "--n", "4", "--tile", "2"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "classic-map" in result.stdout and "breaks anti" in result.stdout


def test_dataflow_table_script():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "dataflow_table.py"), "--blocks", "4", "--procs", "2"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    # seed 004's example: barrier 36 steps at 88.9%, dataflow 33 at 97.0%, the bound 33
    assert "| 4 | 2 | generalized κ=2 | schedule | 36 | 88.9% | 33 | 97.0% | 33 | +0.0% |" in result.stdout
