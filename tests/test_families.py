"""Every family proved legal, scheduled exactly once, and right when run; the wrong variants refuted."""
import dataclasses

import islpy as isl
import numpy as np
import pytest

from codegen import floyd_warshall_nest
from schedules import IllegalScheduleError, build, check, execute, find_violations, from_spec, from_tree
from schedules.families import classic_spec, generalized_spec
from schedules.tree_to_map import leaf_domains
from schedules.tree import Band, Mark, roles
from tests import bruteforce
from polyfw import graphs
from tiling.isl_utils import count_points

TILES = [1, 2, 3, 4, 5]


def blocks(n, tile):
    return -(-n // tile)


def configurations(sizes):
    """(family, n, tile, params) for every family over the given sizes and r in 1..5, kappa in 1..Q."""
    for n in sizes:
        yield "naive", n, 1, {}
        for tile in TILES:
            yield "classic", n, tile, {}
            yield "recursive", n, None, {"base": tile}
            for kappa in range(1, blocks(n, tile) + 1):
                yield "generalized", n, tile, {"kappa": kappa}
                yield "generalized", n, tile, {"kappa": kappa, "variant": "fused"}


def quick(config):
    """The CI share of the sweep (the rest is marked slow): every classic and naive case,
    generalized at three sizes (the parametric proofs below cover every n for fixed kappa),
    recursive at eight sizes with at most 3 levels (deeper trees take seconds each)."""
    family, n, tile, params = config
    if family == "generalized":
        return n in (7, 13, 24)
    if family == "recursive":
        return n in (1, 2, 3, 5, 8, 13, 17, 24) and blocks(n, params["base"]) <= 8
    return True


SWEEP = list(configurations(range(1, 25)))


def _id(config):
    family, n, tile, params = config
    return f"{family}-n{n}-r{tile}-" + "-".join(f"{k}{v}" for k, v in params.items())


@pytest.mark.parametrize("config", [c for c in SWEEP if quick(c)], ids=_id)
def test_sweep_every_family_is_legal(config):
    family, n, tile, params = config
    assert check(build(family, n, tile, **params), "relaxed")


@pytest.mark.slow
@pytest.mark.parametrize("config", [c for c in SWEEP if not quick(c)], ids=_id)
def test_sweep_every_family_is_legal_slow_part(config):
    family, n, tile, params = config
    assert check(build(family, n, tile, **params), "relaxed")


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("kappa, variant", [(1, "seed"), (2, "seed"), (3, "fused"), (4, "seed"), (24, "fused")])
def test_classic_and_generalized_are_legal_for_every_n(tile, kappa, variant):
    # parametric n: one proof covers every size (kappa beyond Q just means one group)
    verdict = check(build("generalized", None, tile, kappa=kappa, variant=variant), "relaxed")
    assert verdict.n is None
    if kappa == 1:
        assert check(build("classic", None, tile), "relaxed").n is None


@pytest.mark.parametrize("family, n, tile, params", [
    ("naive", 5, 1, {}), ("classic", 7, 3, {}), ("generalized", 8, 2, {"kappa": 3}),
    ("generalized", 7, 2, {"kappa": 4, "variant": "fused"}), ("recursive", 9, None, {"base": 2}),
    ("recursive", 9, None, {"base": 1, "paired": False}),
])
def test_every_point_and_every_tile_layer_is_scheduled_exactly_once(family, n, tile, params):
    schedule = build(family, n, tile, **params)
    for tree, size in ((schedule.tree, n**3), (schedule.tile_tree, blocks(n, schedule.tile) ** 3)):
        leaves = leaf_domains(tree)
        # the leaves partition the domain: their counts add up to the domain's, and they cover it
        assert count_points(tree.get_domain()) == size
        assert sum(count_points(leaf) for leaf in leaves) == size
        union = leaves[0]
        for leaf in leaves[1:]:
            union = union.union(leaf)
        assert union.is_equal(tree.get_domain())
    # and in the flat order every point has exactly one time, no two points the same time
    flat = schedule.as_schedule_map().map
    assert count_points(flat.wrap()) == n**3 == count_points(flat.range())


def reference(matrix):
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    return expected


def graph(n, seed):
    return graphs.as_dense(graphs.random_graph(n, 3 * n, weights=(1, 30), seed=seed), dtype=np.int32)


@pytest.mark.parametrize("family, n, tile, params", [
    ("naive", 6, 1, {}), ("classic", 11, 4, {}), ("generalized", 11, 2, {"kappa": 4}),
    ("generalized", 12, 3, {"kappa": 2, "variant": "fused", "reverse": "ascending"}),
    ("recursive", 13, None, {"base": 2}), ("recursive", 10, None, {"base": 3, "paired": False}),
])
def test_legal_schedules_give_exact_distances_when_run(family, n, tile, params):
    schedule = build(family, n, tile, **params)
    for seed in range(3):
        matrix = graph(n, seed)
        assert np.array_equal(execute(schedule, matrix), reference(matrix))


def wrong_somewhere(schedule, n):
    """Run the order on a few graphs; True as soon as one answer is wrong."""
    return any(not np.array_equal(execute(schedule, graph(n, seed)), reference(graph(n, seed))) for seed in range(8))


def _rest_split_per_layer(n, tile, kappa):
    """Generalized, but Rest(K) gives each (block, layer) its own task: one block, several tasks, one stage."""
    spec = generalized_spec(kappa)
    parts = spec.child.children
    rest = parts[2]
    split = dataclasses.replace(rest, child=Mark("generalized.Rest", Band(("ib", "jb", "kb"), True, roles(("DD",)))))
    return from_spec("generalized-rest-split", dataclasses.replace(spec, child=dataclasses.replace(spec.child, children=(*parts[:2], split))), n, tile)


ILLEGAL = [
    ("LeadRowCol before LeadBlock", lambda: build("generalized", 12, 2, kappa=3, step_order=("LeadRowCol", "LeadBlock")), {"R_row", "R_col"}),
    ("Rest before the forward loop", lambda: build("generalized", 12, 2, kappa=3, part_order=("rest", "forward", "reverse")), {"R_row", "R_col"}),
    ("classic DD before SD", lambda: build("classic", 12, 3, stages=("I", "DD", "SD")), {"R_row", "R_col"}),
    ("two multitiles of one block in one stage", lambda: _rest_split_per_layer(12, 2, 3), {"W"}),
]


@pytest.mark.parametrize("name, make, broken", ILLEGAL, ids=[c[0] for c in ILLEGAL])
def test_wrong_variants_are_rejected_with_a_witness_and_give_wrong_distances(name, make, broken):
    schedule = make()
    with pytest.raises(IllegalScheduleError) as caught:
        check(schedule)
    assert {v.dependence for v in caught.value.violations} == broken
    witness = caught.value.violations[0]
    assert f"S[{','.join(map(str, witness.source))}]" in str(caught.value)
    assert wrong_somewhere(schedule, schedule.n)


def test_sd_tiles_with_k_innermost_are_rejected_though_correct_on_every_graph():
    """Sweeping an SD tile with k innermost reads a[k,j] (or a[i,k]) of the tile itself
    before this layer block has finished updating it: outside the relaxed model. It is still
    right, because once the pivot block is closed the SD update is a min-plus product with
    it (DESIGN.md §1: the relaxed model is sound, not complete)."""
    inner_k = from_spec("classic-sd-k-inner", classic_spec(), 12, 4,
                        point_order={"SD_row": ("i", "j", "k"), "SD_col": ("i", "j", "k")})
    broken = {v.dependence for v in find_violations(inner_k)}
    assert broken & {"R_row", "R_col"}
    assert not wrong_somewhere(inner_k, 12)


def test_user_tree_runs_through_the_same_checker():
    legal = """
domain: "[n] -> { S[k, i, j] : 0 <= k < n and 0 <= i < n and 0 <= j < n }"
child:
  schedule: "[n] -> [{ S[k, i, j] -> [(k)] }]"
  child:
    schedule: "[n] -> [{ S[k, i, j] -> [(j)] }]"
    coincident: [ 1 ]
    child:
      schedule: "[n] -> [{ S[k, i, j] -> [(i)] }]"
"""
    assert check(from_tree(legal, n=None), "relaxed")
    schedule = from_tree(legal, n=5)
    matrix = graph(5, 1)
    assert np.array_equal(execute(schedule, matrix), reference(matrix))
    illegal = legal.replace("[(k)] }]\"\n  child:\n    schedule: \"[n] -> [{ S[k, i, j] -> [(j)] }]\"\n    coincident: [ 1 ]",
                            "[(j)] }]\"\n  child:\n    schedule: \"[n] -> [{ S[k, i, j] -> [(k)] }]\"\n    coincident: [ 0 ]")
    with pytest.raises(IllegalScheduleError):
        check(from_tree(illegal, n=4))
    with pytest.raises(ValueError, match="not an isl schedule tree"):
        from_tree("domain: nonsense", n=3)


@pytest.mark.parametrize("schedule", [build("generalized", 4, 2, kappa=2, products=False),
                                      build("recursive", 4, base=1, products=False)], ids=str)
def test_tile_level_proof_agrees_with_point_level_brute_force(schedule):
    assert bruteforce.violated(schedule.as_schedule_map(), "relaxed") == set()
    assert bruteforce.violated(schedule.as_schedule_map(), "exact") == {v.dependence for v in find_violations(schedule, "exact")}


@pytest.mark.parametrize("family, params", [("generalized", {"kappa": 2}), ("recursive", {"base": 1})])
def test_layer_products_respect_the_relaxed_model_and_break_the_exact_one(family, params):
    """A layer product runs a block's layers in any order: the relaxed model allows it (no dependence
    joins them but the exclusive writes), the exact one does not (layer k + 1 reads what layer k wrote)."""
    together = build(family, 4, 2 if family == "generalized" else None, **params)
    apart = build(family, 4, 2 if family == "generalized" else None, products=False, **params)
    assert find_violations(together, "relaxed") == []
    extra = find_violations(together, "exact")[len(find_violations(apart, "exact")):]
    assert {v.dependence for v in extra} == {"flow", "anti", "output"}
    assert all("layer_product" in v.explain() for v in extra)


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match=r"generalized parameter kappa must be an int in 1..Q \(blocks per side\), "
                                         "Q = 3 here, got 4"):
        build("generalized", 9, 3, kappa=4)
    with pytest.raises(ValueError, match="the classic family has no parameter 'kappa'; its parameters: tile, stages"):
        build("classic", 9, 3, kappa=2)
    with pytest.raises(ValueError, match="recursive parameter paired must be true or false, got 'maybe'"):
        build("recursive", 9, base=3, paired="maybe")
    with pytest.raises(ValueError, match="recursive parameter paired must be true or false, got 1"):
        build("recursive", 9, base=3, paired=1)  # an int is not a bool: no silent truthiness
    with pytest.raises(ValueError, match="available: naive, classic, generalized, recursive"):
        build("blocked", 9, 3)
    with pytest.raises(ValueError, match="needs a tile size \\(tile=...\\)"):
        build("classic", 9)
    with pytest.raises(ValueError, match="variant"):
        build("generalized", 9, 3, kappa=1, variant="fast")


@pytest.mark.parametrize("text, expected", [("false", False), ("False", False), ("no", False), ("0", False),
                                            ("true", True), ("yes", True), ("1", True)])
def test_paired_text_is_parsed_as_a_bool(text, expected):
    from polyfw.configuration import parse_schedule

    family, params = parse_schedule(f"recursive:base=4,paired={text}")
    assert params == {"base": 4, "paired": expected}
    schedule = build(family, 20, **params)
    assert schedule.params["paired"] is expected
    # the tree itself differs: separate SD products take 7Q - 6 launches, paired ones 5Q - 4
    from schedules.cost import tile_view

    assert tile_view(schedule).n_stages == (5 * 5 - 4 if expected else 7 * 5 - 6)


def test_every_declared_parameter_parses_its_default_and_refuses_junk():
    from schedules.parameters import FAMILY_PARAMETERS

    for family, parameters in FAMILY_PARAMETERS.items():
        for declared in parameters:
            if declared.default is not None:
                text = "-".join(declared.default) if declared.kind == "order" else str(declared.default)
                assert declared.check(declared.parse(text, family), family, blocks=8) == declared.default
            with pytest.raises(ValueError, match=f"{family} parameter {declared.name} must be"):
                declared.check(declared.parse("x-y", family) if declared.kind != "int" else "x-y", family, 8)


@pytest.mark.parametrize("text, message", [
    ("generalized:kappa=x", "generalized parameter kappa must be an int in 1..Q"),
    ("generalized:variant=fast", "generalized parameter variant must be one of seed, fused, got 'fast'"),
    ("classic:kappa=2", "the classic family has no parameter 'kappa'; its parameters: tile, stages"),
    ("classic:tile=8,runtime=fast", "runtime in 'classic:tile=8,runtime=fast' must be one of barrier"),
    ("blocked:tile=8", "unknown schedule family 'blocked'"),
    ("classic:tile", "is not key=value"),
])
def test_schedule_text_errors_name_the_parameter_and_what_is_valid(text, message):
    from polyfw import solve

    with pytest.raises(ValueError, match=message):
        solve(np.zeros((12, 12)), schedule=text)


def test_the_cli_flags_come_from_the_declarations(capsys):
    from polyfw.cli import main

    assert main(["cost", "recursive", "--n", "20", "--base", "4", "--paired", "false", "--json"]) == 0
    import json

    report = json.loads(capsys.readouterr().out)
    assert report["stages"] == 7 * 5 - 6 and report["launches_separate"] == 7 * 5 - 6
    assert main(["cost", "classic", "--n", "20", "--tile", "4", "--kappa", "2"]) == 1
    assert "the classic family has no parameter 'kappa'" in capsys.readouterr().err
    assert main(["schedules"]) == 0
    listing = capsys.readouterr().out
    assert "paired      true or false" in listing and "kappa       an int in 1..Q (blocks per side)" in listing


SEQUENTIAL_POINTS = ('{ domain: "[n] -> { S[k, i, j] : 0 <= k < n and 0 <= i < n and 0 <= j < n }", child: '
                     '{ schedule: "[n] -> [{ S[k, i, j] -> [(k)] }, { S[k, i, j] -> [(i)] }, { S[k, i, j] -> [(j)] }]" } }')


def test_a_view_keeps_its_n_tile_and_array_types_and_an_unmarked_tree_has_no_roles():
    from schedules import from_tree, stage_view

    view = stage_view(from_tree(SEQUENTIAL_POINTS, 3).tree, 3, 1)
    assert (view.n, view.tile, view.units.shape) == (3, 1, (27, 3))
    assert [a.dtype.name for a in (view.units, view.stage, view.task, view.role, view.kind)] == [
        "int32", "int32", "int32", "int8", "int16"]
    assert (view.role == -1).all() and (view.kind == -1).all() and view.n_stages == view.n_tasks == 27
    tiled = stage_view(build("classic", 12, 4).tile_tree, 12, 4)
    assert (tiled.n, tiled.tile) == (12, 4)


def test_a_view_refuses_more_units_than_it_may_list(monkeypatch):
    from schedules import from_tree, stage_view

    tree = from_tree(SEQUENTIAL_POINTS, 3).tree
    monkeypatch.setattr("schedules.stages.MAX_UNITS", 27)
    assert len(stage_view(tree, 3, 1).units) == 27
    monkeypatch.setattr("schedules.stages.MAX_UNITS", 26)
    with pytest.raises(ValueError) as refused:
        stage_view(tree, 3, 1)
    assert str(refused.value) == "the stage view would list 27 units (more than 26); use a larger tile"


def test_each_child_of_a_set_without_a_parallel_band_is_one_task():
    from schedules import stage_view
    from schedules.tree import Band, Filter, Sequence_, build_tree

    spec = Band(("kb",), False, Sequence_((Filter("ib = kb", Band(("jb",), False)), Filter("ib != kb")),
                                          unordered=True))
    view = stage_view(build_tree(spec, 12, 4), 12, 4)
    assert view.n_stages == 3 and view.n_tasks == 6
    for stage in range(3):
        first, second = view.tasks_of(stage)
        assert {tuple(u[1:]) for u in first.units} == {(stage, j) for j in range(3)}
        assert len(second.units) == 6 and all(u[1] != stage for u in second.units)


def test_a_family_spec_takes_the_builders_defaults_and_refuses_bad_orders_by_name():
    from schedules.families import family_spec

    assert family_spec("generalized", 12, 4, kappa=2) == generalized_spec(2, "seed", reverse="descending")
    assert family_spec("classic", 12, 4) == classic_spec(("I", "SD", "DD"))
    for call, message in ((lambda: generalized_spec(2, step_order=("LeadBlock", "Rest")),
                           "generalized step order must order LeadBlock, LeadRowCol; got LeadBlock, Rest"),
                          (lambda: classic_spec(("I", "DD")), "classic stages must order I, SD, DD; got I, DD"),
                          (lambda: family_spec("blocked", 12, 4), "unknown schedule family 'blocked'; available: "
                                                                  "naive, classic, generalized, recursive")):
        with pytest.raises(ValueError) as refused:
            call()
        assert str(refused.value) == message


def test_a_filter_inside_a_filter_restricts_the_tile_layers_below_it():
    from schedules import stage_view
    from schedules.tree import Filter, Sequence_, build_tree

    spec = Band(("kb",), False, Sequence_((Filter("ib = kb", Sequence_((Filter("jb >= kb", Mark("upper")),
                                                                        Filter("jb < kb", Mark("lower"))))),
                                           Filter("ib != kb", Filter("jb >= 0", Mark("rest"))))))
    view = stage_view(build_tree(spec, 12, 4), 12, 4)
    kinds = {view.kinds[k] for k in view.kind}
    assert len(view.units) == 27 and kinds == {"upper", "lower", "rest"}
    rest = [tuple(u) for u, k in zip(view.units.tolist(), view.kind) if view.kinds[k] == "rest"]
    assert sorted(rest) == sorted((kb, ib, jb) for kb in range(3) for ib in range(3) for jb in range(3) if ib != kb)


def test_a_parametric_family_tree_has_n_as_its_only_parameter():
    for schedule in (build("classic", None, 4), build("generalized", None, 4, kappa=2)):
        for tree in (schedule.tree, schedule.tile_tree):
            space = tree.get_domain().get_space()
            assert [space.get_dim_name(isl.dim_type.param, d) for d in range(space.dim(isl.dim_type.param))] == ["n"]


def test_a_band_of_sequential_and_parallel_members_is_split_into_stages_and_tasks():
    from schedules import stage_view

    mixed = ('{ domain: "[n] -> { S[k, i, j] : 0 <= k < n and 0 <= i < n and 0 <= j < n }", child: '
             '{ schedule: "[n] -> [{ S[k, i, j] -> [(k)] }, { S[k, i, j] -> [(i)] }]", coincident: [ 0, 1 ], child: '
             '{ schedule: "[n] -> [{ S[k, i, j] -> [(j)] }]" } } }')
    view = stage_view(from_tree(mixed, 4).tree, 4, 1)
    assert view.n_stages == 4 and view.n_tasks == 16
    assert all(len(task.units) == 4 for stage in range(4) for task in view.tasks_of(stage))
