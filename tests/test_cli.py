import subprocess
import sys
from pathlib import Path

import numpy as np

from schedules.cli import main


def test_deps_prints_both_models(capsys):
    assert main(["deps", "--n", "4"]) == 0
    out = capsys.readouterr().out
    assert "n = 4" in out and "Exact dependences" in out and "Relaxed dependences" in out
    assert "(1, 0, j - k)" in out and "(k - k', 0, j - k)" in out


def test_solve_writes_distances(tmp_path, capsys):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 3 2\na 1 2 4\na 2 3 5\n")
    out = tmp_path / "d.npy"
    assert main(["solve", str(graph), "-o", str(out), "--dtype", "int32"]) == 0
    assert np.load(out)[0, 2] == 9
    assert "int32 distances" in capsys.readouterr().out


def test_bad_input_exits_2_with_the_reason(tmp_path, capsys):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 2 1\na 1 5 1\n")
    assert main(["solve", str(graph), "-o", str(tmp_path / "d.npy")]) == 2
    assert "g.gr:2: vertex 5 is outside 1..2" in capsys.readouterr().err


def test_demo_on_part_of_the_road_network(capsys):
    assert main(["demo", "--vertices", "150"]) == 0
    out = capsys.readouterr().out
    assert "Minnesota road network" in out and "results identical: True" in out


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "polyfw"
    result = subprocess.run([str(script), "deps", "--n", "2"], capture_output=True, text=True)
    assert result.returncode == 0 and "Relaxed dependences" in result.stdout
