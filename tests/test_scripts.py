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
