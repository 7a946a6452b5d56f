"""What a user sees goes back in: `polyfw show`'s tree and an exploration's stored mutant trees
into `--tree` (a file or standard input) unchanged; the best configuration `polyfw explore`
prints into `polyfw solve --schedule`; `solve -o` writes the format its extension names; and a
command whose reader stops early ends quietly."""
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from polyfw.cli import READER_GONE, main
from polyfw.explore import best_line
from polyfw.configuration import parse_schedule
from schedules import build, cost, from_tree

POLYFW = str(Path(sys.executable).parent / "polyfw")
N, TILE = 14, 4  # 4 blocks a side, the last one partial
FAMILIES = [("classic", ["--tile", str(TILE)]), ("generalized", ["--tile", str(TILE), "--kappa", "2"]),
            ("recursive", ["--base", str(TILE)]), ("naive", [])]


def _built(family: str):
    return build(family, N, TILE, **({"kappa": 2} if family == "generalized" else {}))


def _same_order(read, built) -> bool:
    """The same order: of the tile-layers, in tiles of the same size, where `read` has them (its
    points run in (k, i, j) order inside each, as the families' do), else of the points."""
    if read.tile_tree is not None:
        if read.tile != built.tile:
            return False
        a, b = read.tile_schedule_map(), built.tile_schedule_map()
    else:
        a, b = read.as_schedule_map(), built.as_schedule_map()
    return a.map.is_equal(b.map) and a.parallel == b.parallel


def _show(capsys, *argv) -> str:
    assert main(["show", *argv]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("family, extra", FAMILIES, ids=[f for f, _ in FAMILIES])
def test_show_prints_the_tree_that_tree_reads_back(tmp_path, capsys, family, extra):
    shown = _show(capsys, family, "--n", str(N), *extra)
    assert all(line.startswith("#") for line in shown.splitlines()[:-1])  # comments to isl, then one tree
    tree = tmp_path / "t.txt"
    tree.write_text(shown)
    assert main(["check", "--tree", str(tree), "--n", str(N)]) == 0
    assert "is legal" in capsys.readouterr().out
    read = from_tree(shown, N)
    assert read.tile == (1 if family == "naive" else TILE) and _same_order(read, _built(family))
    # and what show prints of what it read is that tree again
    assert _show(capsys, "--tree", str(tree), "--n", str(N)).splitlines()[-1] == read.tree_file_text()


def test_the_point_level_tree_goes_back_too(tmp_path, capsys):
    shown = _show(capsys, "classic", "--n", str(N), "--tile", str(TILE), "--level", "point")
    assert "S[k, i, j]" in shown and "T[" not in shown
    read = from_tree(shown, N)
    assert read.tile == 1 and read.tile_tree is None and _same_order(read, _built("classic"))


def test_a_parametric_tree_goes_back_for_any_n(capsys):
    shown = _show(capsys, "classic", "--tile", str(TILE))
    assert "[n] ->" in shown
    for n in (8, N):
        assert _same_order(from_tree(shown, n), build("classic", n, TILE))


def test_isls_own_text_of_a_tile_tree_is_read_with_its_tile_size():
    """isl writes a mark over a leaf without the child its own reader requires."""
    built = _built("classic")
    assert "{ mark: \"DD\" }" in built.tree_text("tile")
    assert _same_order(from_tree(built.tree_text("tile"), N, tile=TILE), built)
    with pytest.raises(ValueError, match="needs its tile size"):
        from_tree(built.tree_text("tile"), N)
    with pytest.raises(ValueError, match="not those of n = 20 in tiles of 4"):
        from_tree(built.tree_file_text(), 20)


def test_a_mutant_tree_goes_back_as_the_exploration_stores_it():
    from polyfw.explore import measure
    from polyfw.explore.mutants import BASES, base_mutants, mutant_schedule

    base = BASES[0]  # classic's every single mutation
    mutants = base_mutants(base, N, TILE)
    for mutant in mutants:
        schedule = mutant_schedule(base, mutant, N, TILE)
        assert _same_order(from_tree(schedule.tree_file_text(), N), schedule), mutant.description
    # the record of a mutant keeps that text (a refused one is not run, so this is quick)
    reversed_layers = next(m for m in mutants if m.description == "reverse_band(root)")
    schedule = mutant_schedule(base, reversed_layers, N, TILE)
    candidate = SimpleNamespace(key="mutant", family="mutant", param_dict=dict)
    record = measure(candidate, SimpleNamespace(n=N, dtype="float64", stored_as="float64"), None, 1, SimpleNamespace(target="cpu"), "here",
                     {}, "mutant", lambda: schedule)
    assert record.status == "illegal" and record.tree == schedule.tree_file_text()
    assert _same_order(from_tree(record.tree, N), schedule)


def test_tree_from_standard_input_and_cost_reads_the_tile_size(tmp_path):
    shown = subprocess.run([POLYFW, "show", "classic", "--n", str(N), "--tile", str(TILE)], capture_output=True,
                           text=True, check=True).stdout
    done = subprocess.run([POLYFW, "cost", "--tree", "-", "--n", str(N), "--json"], input=shown,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report, direct = json.loads(done.stdout), cost(_built("classic")).as_dict()
    assert report["tile"] == TILE and report["blocks"] == 4
    assert {k: report[k] for k in ("stages", "tasks", "units", "traffic")} == \
        {k: direct[k] for k in ("stages", "tasks", "units", "traffic")}


def test_cost_of_a_point_tree_is_per_point(tmp_path, capsys):
    tree = tmp_path / "p.txt"
    tree.write_text(_show(capsys, "classic", "--n", "6", "--tile", "3", "--level", "point"))
    assert main(["cost", "--tree", str(tree), "--n", "6", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tile"] == 1 and report["blocks"] == 6 and report["units"] == 6**3


def test_show_draws_a_tree_file(tmp_path, capsys):
    for level in ("tile", "point"):
        tree, png = tmp_path / f"{level}.txt", tmp_path / f"{level}.png"
        tree.write_text(_show(capsys, "classic", "--n", "12", "--tile", str(TILE), "--level", level))
        assert main(["show", "--tree", str(tree), "--n", "12", "--png", str(png)]) == 0
        assert png.stat().st_size > 1000
        assert f"drawn to {png}" in capsys.readouterr().err


def test_the_best_configuration_explore_prints_is_what_solve_takes(tmp_path, capsys):
    from polyfw.explore.space import Candidate

    candidate = Candidate("classic", (("tile", 64), ("stages", ("I", "SD", "DD"))), (("runtime", "dataflow"),))
    line = best_line(SimpleNamespace(key=candidate.key, rate=2e9), candidate, 20e9)
    text = line.split()[1]
    assert line.startswith("best: classic:tile=64,stages=I-SD-DD,runtime=dataflow (2.00 G relaxations/s = 10% ")
    assert parse_schedule(text) == parse_schedule(candidate.key) == \
        ("classic", {"tile": 64, "stages": ("I", "SD", "DD"), "runtime": "dataflow"})
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 3 2\na 1 2 4\na 2 3 5\n")
    assert main(["solve", str(graph), "-o", str(tmp_path / "d.npy"), "--schedule", text]) == 0
    assert np.load(tmp_path / "d.npy")[0, 2] == 9


def test_solve_writes_csv_or_npy_by_the_extension_and_refuses_others(tmp_path, capsys):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 3 2\na 1 2 4\na 2 3 5\n")
    for dtype in ("float64", "int32"):
        out, pred = tmp_path / f"d-{dtype}.csv", tmp_path / f"p-{dtype}.csv"
        assert main(["solve", str(graph), "-o", str(out), "--predecessors", str(pred), "--dtype", dtype,
                     "--schedule", "classic:tile=2"]) == 0
        assert out.read_text().splitlines() == ["0,4,9", "inf,0,5", "inf,inf,0"]
        assert np.array_equal(np.loadtxt(out, delimiter=","), [[0, 4, 9], [np.inf, 0, 5], [np.inf, np.inf, 0]])
        assert np.array_equal(np.loadtxt(pred, delimiter=","), [[-9999, 0, 1], [-9999, -9999, 1], [-9999] * 3])
    assert main(["solve", str(graph), "-o", str(tmp_path / "d.npy")]) == 0
    assert np.load(tmp_path / "d.npy")[0, 2] == 9 and not (tmp_path / "d.npy.npy").exists()
    capsys.readouterr()
    for argv in (["-o", str(tmp_path / "d.txt")], ["-o", str(tmp_path / "e.npy"), "--predecessors", "p.mat"]):
        assert main(["solve", str(graph), *argv]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and "extension must be .npy or .csv" in err
    assert not (tmp_path / "d.txt").exists() and not (tmp_path / "e.npy").exists()


@pytest.mark.parametrize("argv", [["deps"], ["show", "classic", "--n", "12", "--tile", "4"]], ids=["deps", "show"])
def test_output_cut_short_by_its_reader_ends_quietly(argv):
    # the reader gone before the first write: the write fails for certain
    process = subprocess.Popen([POLYFW, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, "OMP_WAIT_POLICY": "passive"})
    process.stdout.close()
    assert process.wait(timeout=120) == READER_GONE and process.stderr.read() == b""
    process.stderr.close()
    # and as a shell pipeline: the first line, nothing on stderr
    done = subprocess.run(f"{POLYFW} {' '.join(argv)} | head -1; exit ${{PIPESTATUS[0]}}", shell=True,
                          executable="/bin/bash", capture_output=True, text=True)
    assert done.returncode in (0, READER_GONE) and done.stderr == "" and len(done.stdout.splitlines()) == 1
