"""Layer products: a task's layers of one block run as one product, proved, generated, exact."""
from dataclasses import replace

import islpy as isl
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import floyd_warshall as scipy_floyd_warshall

import polyfw
import schedules
from codegen import floyd_warshall_nest, generate
from polyfw.graphs import as_dense, as_float_distances, dense_to_sparse, random_graph
from schedules.cost import tile_view
from schedules.families import family_spec, from_spec
from schedules.layer_products import product_instances
from schedules.legality import IllegalScheduleError, check, find_violations, illegal_sizes
from schedules.mutate import join_layers, mutants, node_at, walk
from schedules.predict import Calibration, predict
from schedules.tree import PRODUCT_MARK, Mark


def marks_in(schedule) -> int:
    return schedule.tree_text("tile").count(f'mark: "{PRODUCT_MARK}"')


def test_the_families_mark_the_layers_their_tasks_hold_on_one_block():
    assert marks_in(schedules.build("generalized", 512, 64, kappa=4)) == 2  # reverse steps and Rest
    assert marks_in(schedules.build("generalized", 512, 64, kappa=4, variant="fused")) == 1
    assert marks_in(schedules.build("recursive", 512, base=64)) == 3  # one product stage a level
    assert marks_in(schedules.build("classic", 512, 64)) == 0  # a task holds one layer
    for family, params in (("generalized", {"tile": 64, "kappa": 4}), ("recursive", {"base": 64})):
        apart = schedules.build(family, 512, products=False, **params)
        assert marks_in(apart) == 0 and apart.name.endswith("products=False)")
        assert product_instances(apart.tile_tree) is None


def test_a_product_instance_is_one_task_s_layers_of_one_block():
    schedule = schedules.build("generalized", 512, 64, kappa=4)
    pairs = isl.Map.from_union_map(product_instances(schedule.tile_tree))
    other_block = isl.Map("{ T[kb, ib, jb] -> T[kb2, ib2, jb2] : ib2 != ib or jb2 != jb }")
    assert pairs.intersect(other_block).is_empty()
    # Rest of group 0 holds blocks (ib, jb) with both outside 0..3 over layers 0..3, all four together
    assert pairs.intersect_domain(isl.Set("{ T[0, 5, 6] }")).range() == isl.Set("{ T[kb, 5, 6] : 0 <= kb <= 3 }")


def test_joining_layers_that_depend_on_each_other_is_refused_with_a_witness():
    """The recursive order's pivot-row stage holds a block over several layers too, but an SD tile-layer
    reads its own block: joined into one product, layer k would read what layer k' < k had not yet
    written. The tile-level order stays legal; the product is refused, naming the pair."""
    spec = family_spec("recursive", 256, 32)
    path = next(path for path, node in walk(spec) if isinstance(node, Mark) and node.name == "recursive.SD_row")
    band = next(path for path, node in walk(node_at(spec, path), path) if getattr(node, "members", None) == ("kb",))
    joined = from_spec("recursive", join_layers(spec, band), 256, 32, {"joined": "SD_row"})
    violations = find_violations(joined)
    assert violations and all(PRODUCT_MARK in v.explain() for v in violations)
    assert {v.dependence for v in violations} <= {"R_row", "R_col"}
    with pytest.raises(IllegalScheduleError, match="one instance of a layer_product band"):
        check(joined)
    with pytest.raises(schedules.RefusedScheduleError, match="layer_product"):
        generate(joined)
    # the families' own products are among the legal mutants; the SD one among the refused
    descriptions = {m.description: m.spec for m in mutants(family_spec("recursive", 256, 32, products=False))}
    joins = [spec for description, spec in descriptions.items() if description.startswith("join_layers")]
    verdicts = [not find_violations(from_spec("recursive", spec, 256, 32)) for spec in joins]
    assert True in verdicts and False in verdicts


def test_products_are_proved_for_every_n():
    assert illegal_sizes(schedules.build("generalized", None, 64, kappa=3)).is_empty()


def _replayed_calls(schedule, dtype="int32"):
    """Every row (kernel, kb, ib, jb, layers) the replayed driver handed to run_tasks."""
    compiled = generate(schedule, dtype=dtype)
    matrix = np.zeros((schedule.n, compiled.options.columns(schedule.n)), dtype=dtype)
    compiled(matrix)
    return np.concatenate([recorded[2][:recorded[3]] for _, recorded in compiled._run._program
                           if len(recorded) > 4])


@pytest.mark.parametrize("family, params", [("generalized", {"tile": 64, "kappa": 4}),
                                            ("generalized", {"tile": 64, "kappa": 3, "variant": "fused"}),
                                            ("recursive", {"base": 64})])
def test_generated_calls_join_a_blocks_layers_and_run_every_tile_layer_once(family, params):
    n = 700  # 11 blocks: a partial last block and a partial last group
    blocks = -(-n // 64)
    calls = _replayed_calls(schedules.build(family, n, **params))
    ran = np.zeros((blocks, blocks, blocks), dtype=int)
    for _, kb, ib, jb, layers in calls:
        ran[kb:kb + layers, ib, jb] += 1
    assert (ran == 1).all()
    assert len(calls) < blocks**3 and calls[:, 4].max() > 1
    assert len(_replayed_calls(schedules.build(family, n, products=False, **params))) == blocks**3


@pytest.mark.parametrize("dtype", ["int32", "float32", "int16"])
@pytest.mark.parametrize("family, params", [("generalized", {"tile": 32, "kappa": 4}), ("recursive", {"base": 32})])
def test_products_over_sparse_blocks_skip_empty_spans_and_stay_exact(family, params, dtype):
    """Two components and a band: whole spans of the joined layers hold no path and are skipped."""
    n = 300
    rng = np.random.default_rng(5)
    matrix = np.full((n, n), np.inf)
    for lo, hi in ((0, 140), (140, n)):
        for i in range(lo, hi):
            for j in range(max(lo, i - 20), min(hi, i + 21)):
                if rng.random() < 0.3:
                    matrix[i, j] = rng.integers(1, 50)
    np.fill_diagonal(matrix, 0)
    expected = scipy_floyd_warshall(dense_to_sparse(matrix))
    for products in (True, False):
        schedule = schedules.build(family, n, products=products, **params)
        np.testing.assert_array_equal(as_float_distances(polyfw.solve(matrix, schedule=schedule, dtype=dtype)),
                                      expected)


@pytest.mark.parametrize("order", ["reverse", "interleaved"])
def test_products_are_exact_whatever_order_a_stage_runs_its_tasks_in(order):
    n = 200
    graph = random_graph(n, m=4 * n, weights=(1, 9), seed=3, potential=6)
    matrix = as_dense(graph, dtype="float32")
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    assert generate(schedules.build("generalized", n, 32, kappa=4))(matrix, task_order=order) == -1
    np.testing.assert_array_equal(matrix, expected)


@settings(max_examples=12, deadline=None)  # a dataflow runtime compiles once per tile: few tiles keep it quick
@given(n=st.integers(1, 70), tile=st.sampled_from([4, 8, 16]), kappa=st.integers(1, 5), variant=st.sampled_from(["seed", "fused"]),
       runtime=st.sampled_from(["barrier", "dataflow", "dataflow-shared"]), seed=st.integers(0, 2**16))
def test_random_products_are_exact_in_every_runtime(n, tile, kappa, variant, runtime, seed):
    blocks = -(-n // tile)
    schedule = schedules.build("generalized", n, tile, kappa=min(kappa, blocks), variant=variant)
    graph = random_graph(n, m=min(4 * n, n * (n - 1)), weights=(1, 9), seed=seed, potential=6)
    matrix = as_dense(graph, dtype="float32")  # negative arcs: in float32 no path stays inf under a skip
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    assert generate(schedule, dtype="float32", runtime=runtime)(matrix) == -1
    np.testing.assert_array_equal(matrix, expected)


def test_the_model_prices_a_product_as_one_call():
    """What a runtime pays a call (the driver's row, the dataflow runtime's claim) is paid once a product."""
    together = tile_view(schedules.build("generalized", 1024, 64, kappa=4))
    apart = tile_view(schedules.build("generalized", 1024, 64, kappa=4, products=False))
    assert np.array_equal(together.units, apart.units) and apart.call_start.all()
    calls = int(together.call_start.sum())
    assert calls == len(_replayed_calls(schedules.build("generalized", 1024, 64, kappa=4))) < len(together.units)
    calibration = replace(Calibration.assumed("float32", 2, 1e10, ("dataflow",)), driver={"compiled": 1e-6},
                          dataflow={"dataflow": 1e-6})
    for view, count in ((together, calls), (apart, len(apart.units))):
        assert predict(view, calibration).parts["between stages"] == pytest.approx(count * 1e-6)
        assert predict(view, calibration, "dataflow").parts["runtime"] == pytest.approx(count * 1e-6 / 2)
