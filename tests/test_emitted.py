"""The code each generator emits is proved, not only the tree: its parallel regions as run."""
import islpy as isl
import pytest

import codegen.cpu
import codegen.cuda
import codegen.proved_ast
import schedules
from codegen import generate
from codegen.proved_ast import prepare
from schedules.emitted import UnsafeCodeError, Workers, find_unsafe

FAMILIES = [
    ("classic", {}),
    ("generalized", {"kappa": 2}),
    ("generalized", {"kappa": 3}),
    ("generalized", {"kappa": 3, "variant": "fused"}),
    ("recursive", {}),
    ("recursive", {"paired": False}),
]
VARIANTS = [("cpu", {}), ("cudasim", {"method": "A"}), ("cudasim", {"method": "A", "sub_tile": (4, 8), "per_block": 2}),
            ("cudasim", {"method": "B", "t_prime": 2}), ("cudasim", {"method": "B", "t_prime": 4})]


def build(family, n, tile, params):
    key = "base" if family == "recursive" else "tile"
    return schedules.build(family, n, **{key: tile}, **params)


@pytest.mark.parametrize("target, variant", VARIANTS)
@pytest.mark.parametrize("family, params", FAMILIES)
@pytest.mark.parametrize("n", [64, 70])  # 8 tiles per side, and 9 with a ragged last one
def test_every_family_target_and_dd_variant_is_proved_as_emitted(family, params, n, target, variant):
    schedule = build(family, n, 8, params)
    compiled = generate(schedule, target=target, **variant)
    proved = prepare(schedule)
    assert find_unsafe(proved.tree, compiled.workers, n, 8) == []
    # what runs at once are loops of the band between a parallel mark and its task mark, never a
    # loop inside a task; and some stage does run loops at once
    task_loops = task_loop_depths(proved.tree)
    assert set(compiled.workers) == set(task_loops)
    assert all(region.depths <= task_loops[mark] for mark, region in compiled.workers.items())
    assert any(region.depths for region in compiled.workers.values())


def task_loop_depths(tree):
    """Schedule depths of the band below each parallel mark (its members are the stage's tasks)."""
    found = {}

    def visit(node):
        if node.get_type() == isl.schedule_node_type.mark and node.mark_get_id().get_name().startswith("parallel_"):
            band = node.child(0)
            depth = band.get_schedule_depth()
            found[node.mark_get_id().get_name()] = frozenset(range(depth, depth + band.band_n_member()))
        return True

    tree.get_root().foreach_descendant_top_down(visit)
    return found


def test_point_trees_are_proved_as_emitted():
    compiled = generate(schedules.build("naive", 9))
    assert [region.label for region in compiled.workers.values()] == ["prange loop 0"]
    assert find_unsafe(prepare(schedules.build("naive", 9)).tree, compiled.workers, 9, 1) == []


def test_a_loop_inside_a_task_run_as_thread_blocks_is_refused(monkeypatch):
    # the bug found on an H100: the CUDA generator walked through the task mark and made the
    # task's own loop a grid dimension. A mark name that never matches reproduces that walk.
    monkeypatch.setattr(codegen.cuda, "TASK_MARK", "no-such-mark")
    monkeypatch.setattr(codegen.cuda, "_COMPILED", {})  # generate anew, not the copy of an earlier test
    generate(schedules.build("classic", 32, tile=4), target="cudasim")  # one tile-layer per task: still safe
    with pytest.raises(UnsafeCodeError, match=r"^refusing cudasim code for generalized\(n=32.*: launch of band_0 "
                                              r"\(at c0=0, c1=1\) runs T\[0,1,1\] and T\[1,1,1\] in different workers "
                                              r"at once, but T\[1,1,1\] reads as its a\[i,k\] what T\[0,1,1\] writes"):
        generate(schedules.build("generalized", 32, tile=4, kappa=2), target="cudasim")
    with pytest.raises(UnsafeCodeError, match=r"launch of band_4 .* in different workers at once.*\(R_col\)$"):
        generate(schedules.build("recursive", 32, base=4), target="cudasim")


def test_cpu_tasks_split_inside_a_task_are_refused(monkeypatch):
    # the same mistake on the CPU: every loop of a parallel band taken as a task boundary
    enter = codegen.proved_ast.MarkState.enter
    monkeypatch.setattr(codegen.proved_ast.MarkState, "enter", lambda marks, name: "role" if name == "task" else
                        enter(marks, name))  # the task mark missed: every loop of the region taken as tasks
    monkeypatch.setattr(codegen.cpu, "_COMPILED", {})
    with pytest.raises(UnsafeCodeError, match=r"^refusing cpu code for generalized.*: run_tasks stage 0 \(at c0=0, "
                                              r"c1=1\) runs T\[0,1,1\] and T\[1,1,1\] in different workers at once"):
        generate(schedules.build("generalized", 32, tile=4, kappa=2))


ONE_STAGE = """{{ domain: "{{ T[kb, ib, jb] : 0 <= kb, ib, jb < {q} }}", child: {{
  schedule: "[{{ T[kb, ib, jb] -> [(kb)] }}]", child: {{ sequence: [
    {{ filter: "{{ T[kb, ib, jb] : ib = kb and jb = kb }}" }},
    {{ filter: "{{ T[kb, ib, jb] : ib != kb or jb != kb }}", child: {{
      schedule: "[{{ T[kb, ib, jb] -> [((ib - kb + {q}) mod {q})] }}, {{ T[kb, ib, jb] -> [((jb - kb + {q}) mod {q})] }}]",
      coincident: [ 1, 1 ] }} }} ] }} }} }}"""


def one_stage_schedule(n, tile):
    """Per block layer: the pivot, then every other tile-layer at once, each its own task, the
    pivot's row and column first in index order. Right when the tasks run one at a time in
    index order, wrong when they overlap: a DD tile needs the SD tiles of its row and column."""
    q = -(-n // tile)
    tiles = isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, ONE_STAGE.format(q=q))
    points = schedules.build("classic", n, tile=tile).tree
    return schedules.Schedule("one-stage", n, tile, points, tiles)


def test_checker_names_the_stage_and_pair_of_an_illegal_parallel_band():
    schedule = schedules.unsafe_run_unproved(one_stage_schedule(24, 8))  # the tree's own proof refuses it
    proved = prepare(schedule)
    problems = find_unsafe(proved.tree, {"parallel_0": Workers("stage X", frozenset({1, 2}))}, 24, 8)
    assert problems == ["stage X (at c0=0) runs T[0,1,0] and T[0,1,1] in different workers at once, but T[0,1,1] "
                        "reads as its a[i,k] what T[0,1,0] writes (R_row)"]
    # the same tile-layers, one worker: safe (index order is a legal order)
    assert find_unsafe(proved.tree, {"parallel_0": Workers("stage X", frozenset())}, 24, 8) == []


def test_a_region_written_without_a_record_is_refused():
    proved = prepare(schedules.build("classic", 16, tile=4))
    with pytest.raises(UnsafeCodeError, match=r"^refusing x: parallel region parallel_0 was written without a "
                                              r"record of what it runs at once"):
        proved.check({}, "x")


def test_a_proof_on_disk_is_reused_unless_proving_always_is_asked(monkeypatch, tmp_path):
    """The checker's verdict on emitted code is kept on disk under its tree, regions, n and tile;
    POLYFW_PROVE_ALWAYS=1 proves again (mutation testing changes the checker, not its files)."""
    schedule = schedules.build("classic", 12, tile=4)
    regions = generate(schedule, dtype="float32").workers
    proved = prepare(schedule)
    checked = []
    monkeypatch.setattr(codegen.proved_ast, "check_emitted", lambda *arguments: checked.append(arguments[2:4]))
    monkeypatch.setenv("POLYFW_CACHE", str(tmp_path))
    proved.check(regions, "classic")
    proved.check(regions, "classic")
    assert checked == [(12, 4)] and len(list((tmp_path / "proofs").iterdir())) == 1
    other = {mark: Workers("another label", workers.depths) for mark, workers in regions.items()}
    proved.check(other, "classic")  # other regions: another proof
    assert len(checked) == 2
    monkeypatch.setenv("POLYFW_PROVE_ALWAYS", "1")
    proved.check(regions, "classic")
    assert len(checked) == 3
    point = prepare(schedules.build("naive", 5))
    point.check(generate(schedules.build("naive", 5), dtype="float32").workers, "naive")
    assert checked[-1] == (5, 1)  # point-level code is proved with tile 1
