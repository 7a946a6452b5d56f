"""Packed operands: a stage's product operands copied once into micro-panels, proved, generated, exact."""
import itertools
import sys

import islpy as isl
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import codegen.dataflow
import schedules
from codegen import floyd_warshall_nest, generate
from codegen.cpu import kernel_module
from codegen.kernels import PANELS, TILE_KERNEL_NUMBERS
from polyfw.graphs import as_dense, random_graph
from schedules.families import CLASSIC_STAGES, from_spec
from schedules.legality import IllegalScheduleError, check, find_violations, illegal_sizes
from schedules.packing import (PUBLISHERS, packed_instances, published_operand_problem, published_reader_condition,
                               published_readers)
from schedules.proofs import RefusedScheduleError
from schedules.tree import PACK_MARK, Band, Sequence_, stage
from tiling.tile_dependences import predecessor_rules


def marks_in(schedule) -> int:
    return schedule.tree_text("tile").count(f'mark: "{PACK_MARK}"')


def test_the_families_pack_the_stages_whose_operands_no_tile_layer_of_the_stage_writes():
    assert marks_in(schedules.build("classic", 512, 64, panels=True)) == 1  # DD
    assert marks_in(schedules.build("generalized", 512, 64, kappa=4, panels=True)) == 1  # Rest(K)
    assert marks_in(schedules.build("classic", 512, 64)) == 0  # not by default
    assert schedules.build("classic", 512, 64, panels=True).name.endswith("panels=True)")
    assert packed_instances(schedules.build("classic", 512, 64).tile_tree) is None
    with pytest.raises(ValueError, match="use overlap or panels"):
        schedules.build("classic", 512, 64, overlap=True, panels=True)


@pytest.mark.parametrize("family, params", [("classic", {}), ("generalized", {"kappa": 3})])
def test_packed_stages_are_proved_for_every_n(family, params):
    assert illegal_sizes(schedules.build(family, None, 64, panels=True, **params)).is_empty()


def _classic_packing(stage_name: str, n: int = 10, tile: int = 4):
    spec = Band(("kb",), False, Sequence_(tuple(stage(f"mine.{name}", *CLASSIC_STAGES[name], packed=name == stage_name)
                                                for name in ("I", "SD", "DD"))))
    return from_spec("mine", spec, n, tile, {"packed": stage_name})


def test_packing_a_stage_that_writes_its_own_operands_is_refused_with_a_witness():
    """An SD tile-layer reads its own block as B (row panel) or A (column panel): a copy taken as the stage
    starts would hold values the stage has since improved. Both reads are named, with a point that writes
    what another point of the same stage reads."""
    schedule = _classic_packing("SD")
    violations = find_violations(schedule)
    assert {v.dependence for v in violations} == {"packed a[i,k]", "packed a[k,j]"}
    for violation in violations:
        k, i, j = violation.reader
        written = violation.writer[1:]
        assert written == ((i, k) if violation.read == "a[i,k]" else (k, j))
        assert violation.tiles[0][0] == violation.tiles[1][0]  # one block layer: one instance of the stage
        assert PACK_MARK in violation.explain()
    with pytest.raises(IllegalScheduleError, match="packed operands"):
        check(schedule)
    with pytest.raises(RefusedScheduleError, match="packed operands"):
        generate(schedule, dtype="int32")
    assert find_violations(_classic_packing("DD")) == []


def test_a_packed_stage_copies_each_operand_block_once_and_its_products_read_the_copy():
    """pack_operands on classic's DD stage at layer 1: one A slot per block row, one B slot per block
    column, laid out as the register block reads them (MR rows k-major; NR columns k-major)."""
    n, tile = 40, 16
    compiled = generate(schedules.build("classic", n, tile, panels=True), dtype="int32", driver="compiled")
    kernels = compiled._kernels
    assert compiled.source.count("profile, panels, True)") == 1 and compiled.source.count("profile, panels, False)") == 2
    rows, columns = compiled.options.register_block
    a = np.arange(n * compiled.options.columns(n), dtype=np.int32).reshape(n, -1)
    product = TILE_KERNEL_NUMBERS["relax_product"]
    calls = np.array([[product, 1, ib, jb, 1] for ib in (0, 2) for jb in (0, 2)], dtype=np.int64)
    panels, stride = kernels.pack_operands(a, calls, len(calls), tile, n, np.empty(0, np.int32))
    assert stride == tile and (calls[:, 0] == PANELS).all()
    q = 3
    for ib in (0, 2):  # A: block row ib, layers 16..31, full micro-panels of `rows` rows
        i0, i1 = tile * ib, min(tile * ib + tile, n)
        for i in range(i0, i0 + (i1 - i0) // rows * rows):
            for k in range(16, 32):
                at = ib * tile * stride + (i - i0) // rows * rows * stride + (k - 16) * rows + (i - i0) % rows
                assert panels[at] == a[i, k]
    for jb in (0, 2):  # B: block column jb, full micro-panels of `columns` columns
        j0, j1 = tile * jb, min(tile * jb + tile, n)
        for j in range(j0, j0 + (j1 - j0) // columns * columns):
            for k in range(16, 32):
                at = (q + jb) * tile * stride + (j - j0) // columns * columns * stride + (k - 16) * columns + (j - j0) % columns
                assert panels[at] == a[k, j]


@pytest.mark.parametrize("dtype, driver", [("float32", "compiled"), ("int32", "replayed"), ("int16", "compiled"),
                                           ("float64", "replayed")])
@pytest.mark.parametrize("family, n, tile, params", [("classic", 70, 16, {}), ("generalized", 203, 32, {"kappa": 3})])
def test_panels_are_exact_in_every_dtype_and_driver(dtype, driver, family, n, tile, params):
    """Negative arcs (no negative cycle), n not a multiple of the tile, nor the tile of the register block."""
    graph = random_graph(n, m=6 * n, weights=(1, 40), seed=n, potential=8)
    matrix = as_dense(graph, dtype=dtype)
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    compiled = generate(schedules.build(family, n, tile, panels=True, **params), dtype=dtype, driver=driver)
    for _ in range(2):  # a replayed driver's second run replays the recorded stages
        got = matrix.copy()
        assert compiled(got) == -1
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("runtime", ["barrier", "dataflow"])
def test_a_negative_cycle_is_still_reported_through_packed_operands(runtime):
    matrix = as_dense(random_graph(50, m=200, weights=(1, 9), seed=2), dtype="int32")
    matrix[40, 3], matrix[3, 40] = -30, 1
    assert generate(schedules.build("classic", 50, 16, panels=True), dtype="int32", runtime=runtime)(matrix) >= 0


@pytest.mark.parametrize("runtime", ["barrier", "dataflow"])
@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 80), tile=st.sampled_from([4, 8, 16, 32]), kappa=st.integers(1, 4),
       family=st.sampled_from(["classic", "generalized"]), seed=st.integers(0, 2**16))
def test_random_packed_schedules_are_exact(runtime, n, tile, kappa, family, seed):
    blocks = -(-n // tile)
    params = {"kappa": min(kappa, blocks)} if family == "generalized" else {}
    graph = random_graph(n, m=min(4 * n, n * (n - 1)), weights=(1, 9), seed=seed, potential=6)
    matrix = as_dense(graph, dtype="float32")
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    compiled = generate(schedules.build(family, n, tile, panels=True, **params), dtype="float32", runtime=runtime)
    assert compiled(matrix) == -1
    np.testing.assert_array_equal(matrix, expected)


def test_operand_blocks_with_no_path_are_not_copied_and_products_over_them_stay_exact():
    """Every product skips a block with no path (holds_no_path), so packing leaves it alone: on a graph
    of two components most of classic's DD operands are such blocks."""
    n, tile = 150, 32
    compiled = generate(schedules.build("classic", n, tile, panels=True), dtype="int32", driver="compiled")
    empty = np.full((n, compiled.options.columns(n)), np.iinfo(np.int32).max // 2, dtype=np.int32)
    calls = np.array([[TILE_KERNEL_NUMBERS["relax_product"], 1, 0, 2, 1]], dtype=np.int64)
    sentinel = np.full(2 * 5 * tile * tile, 7, dtype=np.int32)
    panels, _ = compiled._kernels.pack_operands(empty, calls, 1, tile, n, sentinel)
    assert (panels == 7).all() and calls[0, 0] == PANELS
    matrix = np.full((n, n), np.inf)
    rng = np.random.default_rng(4)
    for lo, hi in ((0, 70), (70, n)):
        block = rng.integers(1, 30, (hi - lo, hi - lo)).astype(float)
        block[rng.random(block.shape) < 0.9] = np.inf
        matrix[lo:hi, lo:hi] = block
    np.fill_diagonal(matrix, 0)
    matrix = matrix.astype(np.float32)
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    assert generate(schedules.build("classic", n, tile, panels=True), dtype="float32")(matrix) == -1
    np.testing.assert_array_equal(matrix, expected)


# the dataflow runtime: blocks published by the call that gives them their readers' layer

def _published(family: str, n: int, tile: int, dtype: str, runtime: str = "dataflow", **params):
    compiled = generate(schedules.build(family, n, tile, panels=True, **params), dtype=dtype, runtime=runtime)
    assert compiled._run.panels == np.dtype(dtype) and "relax_published(" in compiled.source
    return compiled


@pytest.mark.parametrize("tile", [16, 64, 256])
def test_published_operands_are_proved_for_every_n_and_a_wrong_publisher_is_refused_with_a_witness(tile):
    """The copy a product reads holds every update the relaxed model asks for and exists before it: proved
    with isl for every n. A copy taken a layer early misses the operand's own layer; one taken a layer late
    is one no reader waits for."""
    rules = predecessor_rules(None, tile)
    assert published_operand_problem(tile, rules) is None
    early = (("R_row", "T[kb, ib, jb] -> T[kb - 1, ib, kb]"), PUBLISHERS[1])
    late = (PUBLISHERS[0], ("R_col", "T[kb, ib, jb] -> T[kb + 1, kb, jb]"))
    assert "does not hold it" in published_operand_problem(tile, rules, early)
    assert "without waiting for it" in published_operand_problem(tile, rules, late)


def test_a_last_block_one_vertex_wide_has_its_layers_products_read_in_place():
    """Its layer moves nothing, so the readiness rules do not wait for its publishers: those products are
    not readers, and every product of every other layer is."""
    tile = 16
    rules = predecessor_rules(None, tile)
    readers = published_readers(tile, rules)
    condition = compile(published_reader_condition(tile, rules), "<readers>", "eval")
    for n in (33, 40, 48):
        blocks = -(-n // tile)
        for kb, ib, jb in itertools.product(range(blocks), repeat=3):
            product = ib != kb and jb != kb
            one_wide = tile * kb == n - 1
            expected = product and not (one_wide and ib < kb and jb < kb)
            point = isl.Set(f"{{ T[{kb}, {ib}, {jb}] }}")
            assert (not readers.fix_val(isl.dim_type.param, 0, n).intersect(point).is_empty()) == expected
            assert bool(eval(condition, {}, {"kb": kb, "ib": ib, "jb": jb, "n": n})) == expected


def test_a_call_publishes_its_block_where_the_products_of_its_layer_read_it():
    """Block (ib, jb) with layer jb run is A of layer jb, with layer ib run B of layer ib: each in a tile x tile
    slot per layer and block, A's of every layer first, laid out as a packed stage's (MR rows k-major; NR
    columns k-major)."""
    n, tile = 40, 16
    q = 3
    compiled = _published("classic", n, tile, "int32")
    publish = sys.modules[compiled._run.runtime.py_func.__module__].publish_operands
    rows, columns = compiled.options.register_block
    a = np.arange(n * n, dtype=np.int32).reshape(n, n)
    panels = np.full(2 * (q * tile) ** 2, -1, dtype=np.int32)
    publish(a, panels, 1, 0, 1, 1, tile, n)  # block (0, 1) at layer 1: A of layer 1, block row 0
    publish(a, panels, 0, 0, 2, 1, tile, n)  # block (0, 2) at layer 0: neither
    at = (1 * q + 0) * tile * tile
    for i in range(0, tile // rows * rows):
        for k in range(16, 32):
            assert panels[at + i // rows * rows * tile + (k - 16) * rows + i % rows] == a[i, k]
    assert (panels[q * q * tile * tile:] == -1).all()
    publish(a, panels, 2, 2, 1, 1, tile, n)  # block (2, 1) at layer 2: B of layer 2, block column 1
    at = (q * q + 2 * q + 1) * tile * tile
    for j in range(16, 16 + tile // columns * columns):
        for k in range(32, 40):
            assert panels[at + (j - 16) // columns * columns * tile + (k - 32) * columns + (j - 16) % columns] == a[k, j]


def test_kernel_module_is_the_drivers_and_its_published_products_match_the_products_in_place():
    """codegen.cpu.kernel_module hands a study the module a driver calls; a layer's DD product read from
    the slots publish_operands fills (what benchmarks/dd_residency.py times) gives what the product in place
    gives."""
    n, tile = 48, 16
    compiled = generate(schedules.build("classic", n, tile, panels=True), dtype="int32", driver="compiled")
    kernels = kernel_module(compiled.options)
    assert kernels is compiled._kernels
    rng = np.random.default_rng(3)
    a = rng.integers(0, 50, (n, compiled.options.columns(n))).astype(np.int32)
    in_place, published = a.copy(), a.copy()
    panels, status = np.zeros(2 * (3 * tile) ** 2, dtype=np.int32), np.zeros(4, dtype=np.int64)
    layer = 1
    for block in (0, 2):
        kernels.publish_operands(published, panels, layer, block, layer, 1, tile, n)
        kernels.publish_operands(published, panels, layer, layer, block, 1, tile, n)
    for ib, jb in itertools.product((0, 2), repeat=2):
        bounds = (layer * tile, layer * tile + tile, ib * tile, ib * tile + tile, jb * tile, jb * tile + tile)
        kernels.relax_product(in_place, *bounds, status)
        kernels.relax_panels(published, panels, kernels.published_slot(layer, ib, tile, n, False),
                             kernels.published_slot(layer, jb, tile, n, True), tile, *bounds, status)
    assert not np.array_equal(in_place, a) and np.array_equal(published, in_place)


@pytest.mark.parametrize("runtime", ["dataflow", "dataflow-shared"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int16", "float64"])
@pytest.mark.parametrize("family, n, tile, params", [("classic", 70, 16, {}), ("classic", 65, 16, {}),
                                                     ("generalized", 203, 32, {"kappa": 3})])
def test_published_operands_are_exact_in_every_dtype(runtime, dtype, family, n, tile, params):
    """Negative arcs (no negative cycle); n not a multiple of the tile, a last block one vertex wide."""
    graph = random_graph(n, m=6 * n, weights=(1, 40), seed=n, potential=8)
    matrix = as_dense(graph, dtype=dtype)
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    compiled = _published(family, n, tile, dtype, runtime, **params)
    for _ in range(2):
        got = matrix.copy()
        assert compiled(got) == -1
        np.testing.assert_array_equal(got, expected)


def test_published_operands_stay_exact_under_any_priority_and_delays():
    """Calls taken in random orders and slowed at random: a product still reads a copy its publisher
    finished, whatever ran since in place."""
    n, tile = 75, 8
    graph = random_graph(n, m=5 * n, weights=(1, 30), seed=3, potential=5)
    matrix = as_dense(graph, dtype="int32")
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    compiled = _published("generalized", n, tile, "int32", kappa=2)
    run = compiled._run
    rng = np.random.default_rng(11)
    for _ in range(4):
        run.priorities = rng.permutation(len(run.calls))
        run.delays = rng.integers(0, 3000, size=len(run.calls)) * (rng.random(len(run.calls)) < 0.3)
        got = matrix.copy()
        assert compiled(got) == -1
        np.testing.assert_array_equal(got, expected)


def test_panels_past_the_memory_bound_leave_the_products_in_place(monkeypatch):
    monkeypatch.setattr(schedules.packing, "PUBLISHED_BYTES", 2 * 64 * 64 * 4 - 1)
    compiled = generate(schedules.build("classic", 63, 16, panels=True), dtype="int32", runtime="dataflow")
    assert compiled._run.panels is None
    matrix = as_dense(random_graph(63, m=300, weights=(1, 9), seed=5), dtype="int32")
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    assert compiled(matrix) == -1
    np.testing.assert_array_equal(matrix, expected)



def test_published_panels_are_kept_for_the_next_run_up_to_their_bound(monkeypatch):
    """A run takes the idle buffer when it is large enough, whatever the dtype it last held, and gives it back;
    past KEPT_BYTES it is freed."""
    pool = codegen.dataflow.PanelPool()
    monkeypatch.setattr(codegen.dataflow, "PANEL_POOL", pool)
    compiled = _published("classic", 70, 16, "int32")
    matrix = as_dense(random_graph(70, m=300, weights=(1, 9), seed=1), dtype="int32")
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    got = matrix.copy()
    compiled(got)
    kept, view = pool.take(1, np.dtype("int16"))
    assert kept.nbytes == 2 * 80 * 80 * 4 and view.dtype == np.int16 and view.size == 1
    pool.give(kept)
    got = matrix.copy()
    compiled(got)
    np.testing.assert_array_equal(got, expected)
    assert pool.take(1, np.dtype("float64"))[0] is kept  # the same bytes served the second run
    monkeypatch.setattr(pool, "KEPT_BYTES", kept.nbytes - 1)
    got = matrix.copy()
    compiled(got)
    np.testing.assert_array_equal(got, expected)
    assert pool.take(1, np.dtype("int32"))[0].nbytes == 4  # nothing was kept
