"""The front door proves: every path that runs a schedule refuses an illegal one with a witness,
remembers a proof, and runs an unproved schedule only when asked by the one unsafe name."""
import re

import numpy as np
import pytest

import polyfw
import schedules
from codegen import floyd_warshall_nest, generate
from polyfw.cli import main
from schedules import RefusedScheduleError, from_tree, prove, unsafe_run_unproved
from schedules import proofs
from polyfw.graphs import as_dense, as_float_distances, random_graph

ILLEGAL_STAGES = ["I-DD-SD", "DD-SD-I", "SD-I-DD"]
DOMAIN = 'domain: "[n] -> { S[k, i, j] : 0 <= k < n and 0 <= i < n and 0 <= j < n }"\n'
#: hand-written trees over points, each breaking the relaxed model: layers backwards, j outermost,
#: and every (i, j) a task of its own running its k loop
ILLEGAL_TREES = {
    "layers backwards": DOMAIN + 'child:\n  schedule: "[n] -> [{ S[k, i, j] -> [(-k)] }, { S[k, i, j] -> [(i)] }, '
                                 '{ S[k, i, j] -> [(j)] }]"\n',
    "j outermost": DOMAIN + 'child:\n  schedule: "[n] -> [{ S[k, i, j] -> [(j)] }, { S[k, i, j] -> [(k)] }, '
                            '{ S[k, i, j] -> [(i)] }]"\n',
    "(i, j) tasks": DOMAIN + 'child:\n  schedule: "[n] -> [{ S[k, i, j] -> [(i)] }, { S[k, i, j] -> [(j)] }, '
                             '{ S[k, i, j] -> [(k)] }]"\n  coincident: [ 1, 1, 0 ]\n',
}
N = 12


def graph_matrix(dtype="float64"):
    return as_dense(random_graph(N, 4 * N, weights=(1, 9), seed=5), dtype=dtype)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("stages", ILLEGAL_STAGES)
def test_illegal_stage_orders_are_refused_by_solve_and_generate(stages, dtype):
    text = f"classic:tile=4,stages={stages}"
    with pytest.raises(RefusedScheduleError, match=r"^refusing to run classic\(n=12, tile=4, stages=.*\): relaxed "
                                                   r"dependence R_(row|col): S\[\d+,\d+,\d+\] reads a\[\d+,\d+\]"):
        polyfw.solve(graph_matrix(), schedule=text, dtype=dtype)
    schedule = schedules.build("classic", N, tile=4, stages=tuple(stages.split("-")))
    for target in ("cpu", "python", "cudasim"):
        with pytest.raises(RefusedScheduleError):
            generate(schedule, target=target, dtype="int32" if target == "cudasim" else dtype)
    with pytest.raises(RefusedScheduleError):
        generate(schedule, runtime="dataflow", dtype=dtype)


@pytest.mark.parametrize("name", ILLEGAL_TREES)
def test_hand_written_illegal_trees_are_refused(name):
    schedule = from_tree(ILLEGAL_TREES[name], N, name=name)
    with pytest.raises(RefusedScheduleError, match=rf"^refusing to run tree:{re.escape(name)}\(n=12, tile=1\): relaxed "
                                                   r"dependence"):
        polyfw.solve(graph_matrix(), schedule=schedule)
    with pytest.raises(RefusedScheduleError):
        generate(schedule, target="python", dtype="float64")


def test_what_the_gate_keeps_out_is_wrong():
    # the refusals are not over-cautious: the same orders, run unproved, give wrong distances
    wrong = 0
    for stages in ILLEGAL_STAGES:
        schedule = unsafe_run_unproved(schedules.build("classic", N, tile=4, stages=tuple(stages.split("-"))))
        matrix = graph_matrix()
        expected = matrix.copy()
        floyd_warshall_nest(expected)
        generate(schedule, target="python", dtype="float64")(matrix)
        wrong += int((matrix != expected).sum())
    assert wrong > 0


def test_a_proof_is_remembered_on_the_object_by_its_text_and_on_disk(monkeypatch, tmp_path):
    monkeypatch.setenv("POLYFW_CACHE", str(tmp_path))
    monkeypatch.setattr(proofs, "_BY_KEY", {})
    proved = []
    real_check = proofs.check
    monkeypatch.setattr(proofs, "check", lambda schedule: proved.append(schedule.name) or real_check(schedule))
    first = schedules.build("generalized", 20, tile=4, kappa=2)
    assert prove(first).n == 20 and prove(first) is prove(first)
    prove(schedules.build("generalized", 20, tile=4, kappa=2))  # another object, the same tree
    assert len(proved) == 1 and len(list((tmp_path / "proofs").iterdir())) == 1
    monkeypatch.setattr(proofs, "_BY_KEY", {})  # a new process: the proof on disk is read
    prove(schedules.build("generalized", 20, tile=4, kappa=2))
    assert len(proved) == 1
    monkeypatch.setenv("POLYFW_PROVE_ALWAYS", "1")
    monkeypatch.setattr(proofs, "_BY_KEY", {})
    prove(schedules.build("generalized", 20, tile=4, kappa=2))
    assert len(proved) == 2
    prove(schedules.build("generalized", 24, tile=4, kappa=2))  # another n: another proof
    assert len(proved) == 3


def test_the_cli_refuses_in_one_line_with_the_witness(tmp_path, capsys):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 12 3\na 1 2 3\na 2 3 4\na 3 12 5\n")
    status = main(["solve", str(graph), "-o", str(tmp_path / "d.npy"), "--schedule", "classic:tile=4,stages=SD-I-DD"])
    error = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(error) == 1 and not (tmp_path / "d.npy").exists()
    assert error[0].startswith("polyfw: error: refusing to run classic(n=12, tile=4, stages=SD-I-DD): relaxed "
                               "dependence R_")
    assert "but the schedule runs S[" in error[0]


def test_legal_schedules_still_solve_exactly_through_every_entry():
    matrix = graph_matrix()
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    for text in ("classic:tile=4", "classic:tile=4,stages=I-SD-DD", "generalized:tile=4,kappa=3",
                 "recursive:tile=4", "classic:tile=4,runtime=dataflow"):
        assert np.array_equal(as_float_distances(polyfw.solve(matrix, schedule=text)), expected), text


def test_the_dataflow_runtimes_task_graph_is_proved_from_its_rules():
    from schedules.emitted import UnsafeCodeError, check_task_graph
    from tiling.tile_dependences import predecessor_rules

    schedule = schedules.build("classic", 20, tile=4)
    units = schedules.stage_view(schedule.tile_tree, 20, 4).units.astype(np.int64)
    rules = predecessor_rules(None, 4)
    check_task_graph(units, 20, 4, rules, "dataflow")
    # a readiness test rendered without one of its rules lets a tile-layer run too early
    with pytest.raises(UnsafeCodeError, match=r"^refusing dataflow: its readiness test is incomplete: at n = \d+, "
                                              r"T\[.*\] need not wait for T\[.*\], which it depends on"):
        check_task_graph(units, 20, 4, rules[1:], "dataflow")
    with pytest.raises(UnsafeCodeError, match=r"runs tile-layer T\[\d+,\d+,\d+\] 0 times, not once"):
        check_task_graph(units[1:], 20, 4, rules, "dataflow")


def test_the_mpi_message_plan_is_proved_before_it_runs():
    from dataclasses import replace

    from schedules.distribute import Grid, check_plan, plan_distribution
    from schedules.emitted import UnsafeCodeError
    from tiling.tile_dependences import predecessor_rules

    rules = predecessor_rules(None, 4)
    for family, params in (("classic", {}), ("generalized", {"kappa": 2, "variant": "fused"})):
        for lookahead in (True, False):
            plan = plan_distribution(schedules.build(family, 22, tile=4, **params), Grid(2, 2), lookahead)
            check_plan(plan, rules, "mpi")
    # one message fewer: a process would compute with an old block
    missing = replace(plan, sends=plan.sends[1:])
    with pytest.raises(UnsafeCodeError, match=r"^refusing mpi: T\[\d+, \d+, \d+\] waits for T\[.*\], but block "
                                              r"\(\d+,\d+\) after layer \d+ is never sent from process \d to process \d"):
        check_plan(missing, rules, "mpi")
    # a block moved to another process than its owner
    moved = replace(plan, owner=(plan.owner + 1) % 4)
    with pytest.raises(UnsafeCodeError, match=r"runs on process \d, not on its block's owner \d"):
        check_plan(moved, rules, "mpi")
    # the plan's order run backwards: operands after their readers
    backwards = plan_distribution(schedules.build("classic", 22, tile=4), Grid(2, 2), False)
    order = np.arange(len(backwards.units))[::-1]
    renumber = np.empty_like(order)
    renumber[order] = np.arange(len(order))
    reversed_plan = replace(backwards, units=backwards.units[order], owner=backwards.owner[order],
                            operands=np.where(backwards.operands[order] >= 0, renumber[np.maximum(
                                backwards.operands[order], 0)], -1),
                            sends=np.column_stack([renumber[backwards.sends[:, 0]], backwards.sends[:, 1:]]))
    with pytest.raises(UnsafeCodeError, match=r"runs after it"):
        check_plan(reversed_plan, rules, "mpi")
