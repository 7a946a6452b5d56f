"""Tree mutations: one small test per mutation, the checker's soundness on every mutant of the
families (a proved mutant runs exactly), and novelty against every family instance."""
import pytest

from polyfw.explore.mutants import BASES, PROBE_N, PROBE_TILE, explore_mutants, family_signatures, judge, summary
from schedules.cost import tile_view
from schedules.families import build, classic_spec, family_spec, from_spec, generalized_spec
from schedules.mutate import (Mutant, delay_child, fuse_bands, interchange_band, mutants, node_at, order_signature,
                              parallelize_band, replace_at, reverse_band, split_band, swap_children, unorder_sequence,
                              walk)
from schedules.tree import Band, Filter, Mark, Sequence_


def test_walk_visits_parents_first_and_node_at_follows_a_path():
    spec = classic_spec()
    paths = [path for path, _ in walk(spec)]
    assert paths[0] == () and all(path[:-1] in paths[: paths.index(path)] for path in paths[1:])
    assert isinstance(node_at(spec, (0,)), Sequence_) and node_at(spec, (0, 2)).condition == "ib != kb and jb != kb"


def test_replace_at_changes_one_node_and_leaves_the_original_alone():
    spec = classic_spec()
    changed = replace_at(spec, (0, 1), Filter("false_condition"))
    assert node_at(changed, (0, 1)).condition == "false_condition"
    assert node_at(spec, (0, 1)).condition.startswith("(ib = kb")
    assert node_at(changed, (0, 0)) is node_at(spec, (0, 0))


def test_swap_children_exchanges_two_stages():
    spec = swap_children(classic_spec(), (0,), 0, 2)
    marks = [node_at(spec, (0, position, 0)).name for position in range(3)]
    assert marks == ["classic.DD", "classic.SD", "classic.I"]


def test_reverse_band_negates_every_member_and_piece():
    assert reverse_band(Band(("kb", "ib"), False), ()).members == ("-(kb)", "-(ib)")
    pieces = ((("ib", "ib > 0"), ("jb", "ib = 0")),)
    assert reverse_band(Band(pieces, False), ()).members == ((("-(ib)", "ib > 0"), ("-(jb)", "ib = 0")),)


def test_interchange_split_and_fuse_bands():
    band = Band(("ib", "jb"), True, Mark("leaf"))
    assert interchange_band(band, ()).members == ("jb", "ib")
    split = split_band(band, ())
    assert split == Band(("ib",), True, Band(("jb",), True, Mark("leaf")))
    assert fuse_bands(split, ()) == band


def test_parallelize_band_and_unorder_sequence():
    assert parallelize_band(Band(("kb",), False), ()).coincident is True
    assert unorder_sequence(Sequence_((Filter("kb = 0"), Filter("kb > 0"))), ()).unordered is True


def test_delay_child_moves_one_child_to_the_bands_next_iteration():
    spec = Band(("kb",), False, Sequence_((Filter("ib = kb"), Filter("ib != kb"))))
    delayed = delay_child(spec, (), 0)
    assert delayed.members == ((("(kb) + 1", "(0 = 0) and (ib = kb)"), ("kb", "(0 = 0) and not (ib = kb)")),)
    schedule = from_spec("delayed", delayed, 8, 2)
    units = tile_view(schedule).units.tolist()
    # the pivot-row tile-layers of layer 0 now run after every other tile-layer of layer 0
    assert units.index([0, 0, 0]) > units.index([0, 1, 0])


def test_mutants_lists_every_applicable_single_mutation():
    found = [m.description for m in mutants(classic_spec())]
    assert "swap_children(0, 0, 1)" in found and "swap_children(0, 1, 2)" in found
    assert "unorder_sequence(0)" in found and "reverse_band(root)" in found and "parallelize_band(root)" in found
    assert "delay_child(root, 0)" in found and "delay_child(root, 1)" in found
    assert len(found) == len(set(found))


def test_the_order_signature_ignores_the_order_of_concurrent_tasks_only():
    classic = build("classic", 12, 4)
    interchanged = from_spec("x", interchange_band(classic_spec(), (0, 2, 0, 0)), 12, 4)
    reversed_layers = from_spec("x", reverse_band(classic_spec(), ()), 12, 4)
    assert order_signature(tile_view(classic)) == order_signature(tile_view(interchanged))
    assert order_signature(tile_view(classic)) != order_signature(tile_view(reversed_layers))


@pytest.fixture(scope="module")
def verdicts():
    return explore_mutants(BASES[:2])


def test_every_mutant_the_checker_proves_runs_exactly(verdicts):
    """The checker's soundness over the families' mutants: none is proved and wrong."""
    assert [v for v in verdicts if v.status in ("wrong", "failed")] == []
    assert sum(v.status == "exact" for v in verdicts) >= 20 and sum(v.status == "illegal" for v in verdicts) >= 10
    assert all("dependence" in v.note for v in verdicts if v.status == "illegal")


def test_a_mutant_a_family_parameter_already_gives_is_not_novel(verdicts):
    """Swapping a group's reverse loop and Rest is the family's part_order forward-rest-reverse."""
    swapped = next(v for v in verdicts if v.base == BASES[1].key and v.description == "swap_children(0, 1, 2)")
    assert swapped.status == "exact" and not swapped.novel
    assert swapped.same_as.startswith("generalized:tile=4,kappa=2,variant=seed,reverse=descending")
    assert "part_order=forward-rest-reverse" in swapped.same_as


def test_a_coarser_task_split_is_a_novel_legal_order(verdicts):
    """Splitting classic's DD task band makes each block row one task: legal, and no family does it."""
    split = next(v for v in verdicts if v.base == BASES[0].key and v.description == "split_band(0/2/0/0)")
    assert split.status == "exact" and split.novel
    assert "novel legal order: classic:tile=4 + split_band(0/2/0/0)" in summary(verdicts)


def test_reversed_block_layers_are_refused_though_exact(verdicts):
    """The relaxed model is sound, not complete: FW is exact for any order of the pivots (it is FW
    on relabelled vertices), but the model asks for layer k' < k before k."""
    reversed_layers = next(v for v in verdicts if v.base == BASES[0].key and v.description == "reverse_band(root)")
    assert reversed_layers.status == "illegal"
    assert "R_row" in reversed_layers.note or "R_col" in reversed_layers.note
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr("polyfw.explore.mutants.refusal_of", lambda schedule: None)
    try:
        assert judge(BASES[0], Mutant("reverse_band(root)", reverse_band(classic_spec(), ()))).status == "exact"
    finally:
        monkeypatch.undo()


def test_a_proved_but_wrong_mutant_is_reported_as_a_checker_bug(monkeypatch):
    """If the checker accepted an illegal order, judge would say so: 'wrong', with the element."""
    dd_first = Mutant("swap_children(0, 0, 2)", swap_children(classic_spec(), (0,), 0, 2))
    monkeypatch.setattr("polyfw.explore.mutants.refusal_of", lambda schedule: None)
    verdict = judge(BASES[0], dd_first)
    assert verdict.status == "wrong" and verdict.found_by == "run"
    assert verdict.note.startswith("proved legal, but the run gave wrong (cpu): a[")


def test_family_signatures_cover_every_family_instance_of_the_tile():
    found = family_signatures(PROBE_N, PROBE_TILE)
    generalized = build("generalized", PROBE_N, PROBE_TILE, kappa=3, variant="fused", reverse="ascending")
    assert order_signature(tile_view(generalized)) in found
    assert family_spec("generalized", PROBE_N, PROBE_TILE, kappa=2) == generalized_spec(2)


def test_a_novel_order_is_proved_again_verified_and_timed_at_the_explorations_size(verdicts, tmp_path):
    from polyfw.explore import Problem
    from polyfw.explore.mutants import measure_novel
    from polyfw.explore.store import Store

    novel = next(v for v in verdicts if v.novel and v.description == "split_band(0/2/0/0)")
    with Store(tmp_path / "s.sqlite") as store:
        records = measure_novel([novel], Problem.random(24, "float32"), tile=8, repeats=1, store=store)
        assert [r.status for r in records] == ["measured"] and records[0].origin == "mutant"
        assert records[0].key == "mutant[split_band(0/2/0/0)] of classic:tile=8" and records[0].seconds > 0
        assert [r.key for r in store.records()] == [records[0].key]


def test_a_mutant_that_adds_parallelism_is_found_by_running_it_concurrently_too(verdicts):
    """Running every block layer at once is refused by the prover, and the cpu target's threads
    (its stages' tasks interleaved) give wrong distances: the report says both found it."""
    parallel = next(v for v in verdicts if v.base == BASES[0].key and v.description == "parallelize_band(root)")
    assert parallel.status == "illegal" and parallel.found_by == "prover and run"
    assert parallel.run_note.startswith("wrong (cpu")
    assert "prover   run  both" in summary(verdicts).splitlines()[0]
    reversed_layers = next(v for v in verdicts if v.base == BASES[0].key and v.description == "reverse_band(root)")
    assert reversed_layers.found_by == "prover" and reversed_layers.run_note == ""  # exact, but not provable


def test_on_the_cuda_simulator_a_mutant_is_judged_by_the_simulator_run():
    from polyfw.explore import RunHere

    dd_first = Mutant("swap_children(0, 0, 2)", swap_children(classic_spec(), (0,), 0, 2))
    verdict = judge(BASES[0], dd_first, runner=RunHere("cudasim"))
    assert verdict.status == "illegal" and verdict.found_by == "prover and run"
    assert verdict.run_note.startswith("wrong (cudasim): a[")
