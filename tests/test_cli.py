import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from polyfw import NegativeCycleError
from polyfw.cli import main


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


FAILURES = [
    # (graph file text or None for a missing file, extra arguments, the one line expected on stderr)
    ("p sp 2 1\na 1 5 1\n", [], r"polyfw: error: .*g\.gr:2: vertex 5 is outside 1\.\.2"),
    (None, [], r"polyfw: error: .*g\.gr: cannot be read \(No such file or directory\)"),
    ("p sp 3 3\na 1 2 1\na 2 3 -5\na 3 1 1\n", [], r"polyfw: error: negative cycle through vertex \d: shortest paths "
                                                    r"are undefined"),
    ("p sp 200000 1\na 1 2 1\n", [], r"polyfw: error: 200,000 vertices in float64 need about 633\.3 GiB \(298\.0 GiB "
                                     r"per matrix\) and this machine has [\d.]+ GiB available: use dtype float32 or int32"),
    ("p sp 2 1\na 1 2 1\n", ["--schedule", "bogus"], r"polyfw: error: unknown schedule 'bogus'; use 'auto', one of "),
]


@pytest.mark.parametrize("text, extra, line", FAILURES)
def test_every_failure_is_one_line_and_exit_status_1(tmp_path, capsys, text, extra, line):
    graph = tmp_path / "g.gr"
    if text is not None:
        graph.write_text(text)
    assert main(["solve", str(graph), "-o", str(tmp_path / "d.npy"), *extra]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and re.fullmatch(line + ".*", err.strip())


def test_usage_errors_are_one_line_and_exit_status_2(capsys):
    for argv, line in ([["solve", "g.gr"], "polyfw: error: the following arguments are required: -o/--output "
                                           "(see polyfw solve --help)"],
                       [["frobnicate"], "polyfw: error: argument command: invalid choice: 'frobnicate'"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and len(err.splitlines()) == 1 and err.startswith(line)


def test_debug_shows_the_traceback(tmp_path):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 3 3\na 1 2 1\na 2 3 -5\na 3 1 1\n")
    with pytest.raises(NegativeCycleError):
        main(["--debug", "solve", str(graph), "-o", str(tmp_path / "d.npy")])


def test_a_target_that_cannot_start_is_one_line(tmp_path):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 2 1\na 1 2 1\n")
    done = subprocess.run([sys.executable, "-m", "polyfw.cli", "solve", str(graph), "-o", str(tmp_path / "d.npy"),
                           "--target", "cudasim"], capture_output=True, text=True,
                          env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"})
    assert done.returncode == 1 and done.stderr.strip() == (
        "polyfw: error: target 'cudasim' needs NUMBA_ENABLE_CUDASIM=1 in the environment before numba is imported "
        "(e.g. NUMBA_ENABLE_CUDASIM=1 polyfw ...)")


def test_demo_on_part_of_the_road_network(tmp_path, capsys):
    csv_path, png = tmp_path / "c.csv", tmp_path / "c.png"
    assert main(["demo", "--vertices", "150", "--tile", "32", "--repeats", "1",
                 "--csv", str(csv_path), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "Minnesota road network" in out
    for family in ("scipy", "naive-kernel", "classic", "generalized", "recursive", "scipy-auto", "polyfw-sparse"):
        assert family in out
    rows = list(csv.DictReader(csv_path.open()))
    assert len(rows) == 8 and all(row["exact"] == "True" for row in rows)
    assert png.stat().st_size > 1000


def test_compare_random_graph_and_emit(capsys):
    assert main(["compare", "--n", "70", "--tile", "16", "--repeats", "1", "--dtype", "float32",
                 "--schedules", "classic;generalized:kappa=3,variant=fused"]) == 0
    assert "kappa=3, variant=fused" in capsys.readouterr().out
    assert main(["emit", "classic", "--n", "100", "--tile", "32"]) == 0
    out = capsys.readouterr().out
    assert "for (int c0 = 0; c0 <= 3; c0 += 1)" in out  # isl's C AST
    assert "run_tasks(a, status" in out and "calls = put(calls, n_calls, 1," in out  # DD calls the product kernel


def test_solve_writes_predecessors(tmp_path):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 3 2\na 1 2 5\na 2 3 -2\n")
    out, pred = tmp_path / "d.npy", tmp_path / "p.npy"
    assert main(["solve", str(graph), "-o", str(out), "--predecessors", str(pred), "--schedule", "classic:tile=2"]) == 0
    assert np.load(out)[0, 2] == 3 and list(np.load(pred)[0]) == [-9999, 0, 1]


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "polyfw"
    result = subprocess.run([str(script), "deps", "--n", "2"], capture_output=True, text=True)
    assert result.returncode == 0 and "Relaxed dependences" in result.stdout


def test_bfs_and_sssp_number_vertices_as_the_file_does(tmp_path, capsys):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 4 3\na 1 2 4\na 2 3 5\na 4 1 1\n")
    levels, dist, parents = tmp_path / "l.npy", tmp_path / "d.npy", tmp_path / "p.npy"
    assert main(["bfs", str(graph), "--source", "1", "-o", str(levels), "--parents", str(parents)]) == 0
    assert list(np.load(levels)) == [0, 1, 2, 255] and list(np.load(parents)) == [0, 0, 1, -1]
    assert main(["sssp", str(graph), "--source", "2", "-o", str(dist)]) == 0
    found = np.load(dist)
    assert found[1] == 0 and found[2] == 5 and np.isinf(found[0]) and np.isinf(found[3])
    assert "(2 vertices unreachable: inf) from vertex 2" in capsys.readouterr().out
    assert main(["solve", str(graph), "-o", str(dist), "--method", "sparse"]) == 0
    assert np.load(dist)[3, 2] == 10
