"""polyfw explore on the mpi target: grid, placement and lookahead as axes, the model on a grid, the
runs on every rank (a one-process world here, and `mpiexec -n 2`), and the tuned layout that
solve_distributed takes."""
import json
import sys

import pytest

from polyfw.distributed import _layout
from polyfw.explore import Problem, explore
from polyfw.explore.mpi import Team, run_together
from polyfw.configuration import parse_schedule, resolve_schedule, run_settings
from polyfw.explore.space import Candidate, Space
from polyfw.explore.store import Store
from polyfw.configuration import write_winner
from polyfw.machine import tuning as tuning_module
from polyfw.machine.tuning import tuning_table
from codegen.register_blocks import cpu_key
from schedules import build
from tests.test_mpi import launch

#: a CPU key no entry of the shipped tuning table has, nor one of its kind
UNKNOWN_CPU = "nocpu-none-000000000000"

CLASSIC = {"tile": [16], "stages": ["I-SD-DD"]}


def _layouts(space):
    return {(c.option_dict()["grid"], c.option_dict()["placement"]) for c in space}


def test_the_grid_axis_factors_the_processes_and_strips_need_one_column():
    space = Space(64, target="mpi", families=("classic",), values=CLASSIC, processes=4)
    assert _layouts(space) == {("1x4", "block-cyclic"), ("2x2", "block-cyclic"), ("4x1", "block-cyclic"),
                               ("4x1", "strips")}
    assert {c.option_dict()["lookahead"] for c in space} == {True, False} and len(space) == 8
    # on one process row strips is block-cyclic under another name
    assert _layouts(Space(64, target="mpi", families=("classic",), values=CLASSIC, processes=1)) == {
        ("1x1", "block-cyclic")}


def test_run_axes_are_narrowed_by_their_text_and_a_bad_value_is_refused_with_the_valid_ones():
    narrowed = Space(64, target="mpi", families=("classic",), processes=4,
                     values={**CLASSIC, "grid": ["2x2"], "lookahead": ["false"]})
    assert [c.key for c in narrowed] == ["classic:tile=16,stages=I-SD-DD;grid=2x2;placement=block-cyclic;"
                                         "lookahead=false"]
    with pytest.raises(ValueError, match=r"grid cannot be 3x3 here; its values: 1x4, 2x2, 4x1"):
        list(Space(64, target="mpi", families=("classic",), processes=4, values={**CLASSIC, "grid": ["3x3"]}))
    with pytest.raises(ValueError, match=r"no axis named threads in this space"):
        Space(64, target="mpi", values={"threads": [1]})


def test_an_mpi_candidates_text_carries_its_layout_and_builds_the_same_schedule():
    candidate = Candidate("classic", (("tile", 16), ("stages", ("I", "SD", "DD"))),
                          (("grid", "1x2"), ("placement", "block-cyclic"), ("lookahead", False)))
    assert candidate.schedule_text == "classic:tile=16,stages=I-SD-DD,grid=1x2,lookahead=false"
    assert parse_schedule(candidate.schedule_text)[1]["grid"] == "1x2"
    assert run_settings(candidate.schedule_text, 64, "float32", "mpi") == {"grid": (1, 2), "lookahead": False}
    assert run_settings(candidate.schedule_text, 64, "float32", "cpu") == {}
    assert resolve_schedule(candidate.schedule_text, 64, "float32", "mpi").name == build("classic", 64, 16).name
    with pytest.raises(ValueError, match=r"placement in 'classic:placement=rows' must be one of block-cyclic, "
                                         r"strips, got 'rows'"):
        parse_schedule("classic:placement=rows")
    with pytest.raises(ValueError, match=r"lookahead in 'classic:lookahead=maybe': expected true or false"):
        parse_schedule("classic:lookahead=maybe")


def test_solve_distributed_takes_a_tuned_layout_whole_and_only_where_it_fits(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYFW_TUNING", str(tmp_path / "tuning.json"))
    # a CPU the shipped table does not know (the table ships grid rows for some CPUs, this test's host
    # among them, perhaps): not yet tuned on a grid, so the cpu target's winner stands in, with the
    # default layout
    monkeypatch.setattr(tuning_module, "cpu_key", lambda: UNKNOWN_CPU)
    assert resolve_schedule("auto", 64, "float32", "mpi").name == resolve_schedule("auto", 64, "float32", "cpu").name
    assert _layout("auto", 64, "float32", 2, None, None, None) == (None, "block-cyclic", True)
    write_winner(64, "float32", "mpi", "generalized", {"tile": 16, "kappa": 2, "grid": "2x1",
                                                       "placement": "strips", "lookahead": "false"}, UNKNOWN_CPU, "a CPU")
    assert tuning_table()["by_cpu"][UNKNOWN_CPU]["mpi"]["float32"][0][2]["grid"] == "2x1"  # kept per CPU
    assert resolve_schedule("auto", 64, "float32", "mpi").name == build("generalized", 64, 16, kappa=2).name
    assert _layout("auto", 64, "float32", 2, None, None, None) == ((2, 1), "strips", False)
    assert _layout("auto", 64, "float32", 4, None, None, None) == (None, "block-cyclic", False)  # needs 2
    assert _layout("auto", 64, "float32", 2, (1, 2), None, True) == ((1, 2), "block-cyclic", True)  # the caller's
    assert _layout("classic:tile=8", 64, "float32", 2, None, None, None) == (None, "block-cyclic", True)


def test_explore_runs_mpi_candidates_exactly_and_models_their_messages():
    """A one-process world: the same Team and collective runs as under mpiexec."""
    team = Team()
    space = Space(40, target="mpi", families=("classic", "recursive"), processes=team.processes,
                  values={"tile": [16], "stages": ["I-SD-DD", "SD-I-DD"], "paired": ["true"]})
    found = explore(space, "exhaustive", repeats=2, progress=False, runner=team)
    statuses = {r.key.split(";")[0]: r.status for r in found.records}
    assert statuses == {"classic:tile=16,stages=I-SD-DD": "measured", "classic:tile=16,stages=SD-I-DD": "illegal",
                        "recursive:base=16,paired=true": "measured"}
    measured = found.measured
    assert {r.target for r in measured} == {"mpi"} and all(len(r.times) == 2 and r.seconds > 0 for r in measured)
    assert all({"messages_sent", "bytes_sent", "efficiency"} <= set(r.model) for r in measured)
    assert all(r.machine_description["threads"] == team.threads for r in measured)
    # the model pays the runtime's overhead, timed on 4-wide tiles, on each tile-layer of a process
    assert 0 < team.tile_layer_overhead < 1e-2
    assert {r.machine_description["tile_layer_overhead"] for r in measured} == {team.tile_layer_overhead}
    classic = next(r for r in measured if r.family == "classic")
    assert classic.predicted_seconds > 3**3 / team.processes * team.tile_layer_overhead


def test_a_run_that_cannot_be_generated_fails_on_every_rank_alike():
    team = Team()
    problem = Problem.random(16, "float32")
    outcome = run_together(team.comm, build("classic", 16, 8), {"grid": "2x2"}, 16, "float32", 1, problem)
    assert outcome.status == "failed"
    assert outcome.note == (f"rank 0: ValueError: grid 2 x 2 needs 4 processes; mpiexec started {team.processes}")


def test_explore_under_mpiexec_searches_on_rank_0_and_tunes_the_layout(tmp_path):
    store, tuning = tmp_path / "s.sqlite", tmp_path / "tuning.json"
    done = launch(2, sys.executable, "-m", "polyfw.cli", "explore", "--target", "mpi", "--n", "48",
                  "--families", "classic", "--axis", "tile=16", "--axis", "stages=I-SD-DD", "--strategy",
                  "exhaustive", "--repeats", "1", "--no-ceiling", "--store", str(store), "--plot",
                  str(tmp_path / "e.png"), "--tune", env={"POLYFW_TUNING": str(tuning)})
    assert done.stdout.count("space: 6 candidates") == 1  # rank 0 reports; rank 1 only runs
    with Store(store) as opened:
        records = opened.records()
    assert [r.status for r in records] == ["measured"] * 6
    assert {r.key.split(";grid=")[1].split(";")[0] for r in records} == {"1x2", "2x1"}
    assert {r.machine_description["processes"] for r in records} == {2}
    up_to, family, params, proved = json.loads(tuning.read_text())["by_cpu"][cpu_key()]["mpi"]["float32"][0]
    assert (up_to, family, proved) == (48, "classic", [1, 10**9]) and params["grid"] in ("1x2", "2x1")
