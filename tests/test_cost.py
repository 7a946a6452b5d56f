import json

import numpy as np
import pytest

from schedules import build, cost, stage_view
from polyfw.cli import main
from schedules.stages import ROLES, mark_stages
from tiling.isl_ast import schedule_to_c


def test_classic_on_four_by_four_blocks_with_two_processors_matches_seed_004():
    report = cost(build("classic", 16, 4), procs=2)
    assert (report.stages, report.time_on_procs, round(100 * report.load, 1)) == (12, 36, 88.9)
    assert report.critical_path == 12


def brute_force_traffic(view, n, tile) -> int:
    """Elements loaded and written back, each block once per task that touches it (sets, no numba)."""
    size = {b: min(tile, n - tile * b) for b in range(-(-n // tile))}
    total = 0
    for task in range(view.n_tasks):
        units = view.units[view.task_start[task]:view.task_start[task + 1]].tolist()
        loaded = {block for kb, ib, jb in units for block in ((ib, jb), (ib, kb), (kb, jb))}
        written = {(ib, jb) for _, ib, jb in units}
        total += sum(size[i] * size[j] for i, j in loaded) + sum(size[i] * size[j] for i, j in written)
    return total


@pytest.mark.parametrize("n, tile", [(16, 4), (64, 8), (96, 32)])
def test_classic_traffic_is_okuyamas_nb(n, tile):
    """Per block layer: I loads and writes one block, each of the 2(Q-1) SD tasks loads two and
    writes one, each of the (Q-1)^2 DD tasks loads three and writes one: Q t^2 (4Q^2 - 2Q) elements."""
    schedule = build("classic", n, tile)
    report = cost(schedule)
    q = n // tile
    per_layer = (1 + 1) + 2 * (q - 1) * (2 + 1) + (q - 1) ** 2 * (3 + 1)
    assert report.traffic == brute_force_traffic(stage_view(schedule.tile_tree, n, tile), n, tile)
    assert report.traffic == q * tile**2 * per_layer == 4 * n**3 // tile - 2 * n**2


def test_classic_traffic_with_partial_blocks_counts_their_true_size():
    # N_b assumes full blocks; with r not dividing n the model counts each partial block by its size,
    # which is exactly the full-block formula's count on a matrix padded to Q*r, minus the padding.
    schedule = build("classic", 10, 4)
    report = cost(schedule)
    assert report.okuyama_nb is None
    assert report.traffic == brute_force_traffic(stage_view(schedule.tile_tree, 10, 4), 10, 4) < 4 * 12**3 // 4 - 2 * 12**2


def test_generalized_saves_write_backs_as_kappa_grows():
    saved = [cost(build("generalized", 64, 8, kappa=kappa)).writebacks_saved for kappa in (1, 2, 4, 8)]
    assert saved[0] == 0 and saved == sorted(saved) and saved[-1] > 0
    assert cost(build("generalized", 64, 8, kappa=1)).traffic == cost(build("classic", 64, 8)).traffic


@pytest.mark.parametrize("n, base", [(1024, 32), (96, 4)])
def test_recursive_launch_counts(n, base):
    q = n // base
    report = cost(build("recursive", n, base=base))
    assert (report.launches_paired, report.launches_separate) == (5 * q - 4, 7 * q - 6)
    assert report.stages == 5 * q - 4 and cost(build("recursive", n, base=base, paired=False)).stages == 7 * q - 6


def test_generalized_stage_counts_seed_and_fused():
    # per group: 2 kappa' forward stages, kappa'-1 reverse, 1 Rest (none when kappa = Q); fused: 2 kappa' + 1
    assert cost(build("generalized", 64, 8, kappa=2)).stages == 4 * (2 * 2 + 1 + 1)
    assert cost(build("generalized", 64, 8, kappa=2, variant="fused")).stages == 4 * (2 * 2 + 1)
    assert cost(build("generalized", 64, 8, kappa=8)).stages == 2 * 8 + 7


def test_stage_view_lists_every_tile_layer_once_with_its_role():
    view = stage_view(build("classic", 12, 4).tile_tree, 12, 4)
    assert len(view.units) == 27 and view.n_stages == 9 and view.n_tasks == 27
    assert len({tuple(u) for u in view.units.tolist()}) == 27
    kb, ib, jb = view.units.T
    expected = np.where((ib == kb) & (jb == kb), 0, np.where(ib == kb, 1, np.where(jb == kb, 2, 3)))
    assert np.array_equal(view.role, expected) and ROLES[0] == "I"
    (pivot,) = view.tasks_of(0)
    assert pivot.kind == "classic.I" and pivot.blocks == [(0, 0)] and pivot.layers == (0, 0)


def test_marked_tree_shows_stage_and_task_marks_in_isl_c():
    text = schedule_to_c(mark_stages(build("classic", 8, 4).tile_tree))
    assert "// stage" in text and "// task" in text and "// SD_row" in text


def test_cli_check_cost_show(tmp_path, capsys):
    assert main(["check", "generalized", "--n", "9", "--tile", "2", "--kappa", "3"]) == 0
    assert "is legal under the relaxed model" in capsys.readouterr().out
    assert main(["check", "classic", "--n", "9", "--tile", "2", "--model", "exact"]) == 1
    assert "exact dependence" in capsys.readouterr().out
    assert main(["cost", "classic", "--n", "16", "--tile", "4", "--procs", "2", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["time_on_procs"] == 36 and figures["okuyama_nb"] == figures["traffic"]
    png = tmp_path / "order.png"
    assert main(["show", "generalized", "--n", "16", "--tile", "4", "--kappa", "2", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert png.stat().st_size > 1000
    assert "reverse loop run ascending (l = 0 up): legal" in out and "Rest(K) before the forward loop: illegal" in out
    assert main(["schedules"]) == 0 and "kappa       an int in 1..Q" in capsys.readouterr().out


def test_cli_check_tree_file(tmp_path, capsys):
    tree = tmp_path / "order.yaml"
    tree.write_text(build("classic", 6, 3).tree_text())
    assert main(["check", "--tree", str(tree), "--n", "6"]) == 0
    assert main(["check", "classic", "--tree", str(tree), "--n", "6"]) == 2
    assert "either a family or --tree" in capsys.readouterr().err


def test_tasks_know_their_stage_and_an_unmarked_task_has_no_kind():
    from schedules import from_tree

    plain = ('{ domain: "[n] -> { S[k, i, j] : 0 <= k < n and 0 <= i < n and 0 <= j < n }", child: { schedule: '
             '"[n] -> [{ S[k, i, j] -> [(k)] }, { S[k, i, j] -> [(i)] }, { S[k, i, j] -> [(j)] }]" } }')
    view = stage_view(from_tree(plain, 3, name="plain").tree, 3, 1)
    # nothing coincident: every point is a stage of its own, with one task and no kind mark
    assert view.n_stages == 27 and [task.kind for task in view.tasks_of(5)] == ["-"]
    classic = stage_view(build("classic", 8, 4).tile_tree, 8, 4)
    for stage in range(classic.n_stages):
        tasks = classic.tasks_of(stage)
        assert tasks and all(task.stage == stage for task in tasks)
        assert {task.kind for task in tasks} <= {"classic.I", "classic.SD", "classic.DD"}
