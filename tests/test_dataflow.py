"""The dataflow runtime: exact against the nest, scipy and the barrier runtime under each priority,
every order it ran checked against the isl tile relation under random priorities and injected
delays, and the critical path's priorities checked on the tile graph and in the simulator."""
from __future__ import annotations

import numba
import numpy as np
import pytest
from scipy.sparse.csgraph import floyd_warshall as scipy_floyd_warshall

import codegen.dataflow
import schedules
from codegen import generate
from codegen.dataflow import call_priorities, call_units, tile_calls
from codegen.reference import floyd_warshall_nest
from polyfw.graphs import polybench_matrix
from schedules.cost import tile_view
from schedules.simulate import (PRIORITIES, dataflow_times, predecessor_table, priority_order, role_durations,
                                stage_barrier_times)
from tiling.isl_utils import enumerate_points
from tiling.tile_dependences import tile_relation
from tests.bruteforce import chain_length

FAMILIES = [("classic", {}), ("generalized", {"kappa": 2}), ("recursive", {})]


def _schedule(family: str, n: int, tile: int, params: dict):
    size = {"base": tile} if family == "recursive" else {"tile": tile}
    return schedules.build(family, n, **size, **params)


@pytest.mark.parametrize("family, params", FAMILIES)
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_dataflow_is_exact_for_every_family(family, params, dtype):
    for n in (1, 45, 64):
        if n == 1 and family == "generalized":
            params = {"kappa": 1}  # kappa is at most the blocks per side
        matrix = polybench_matrix(n).astype(dtype)
        expected = matrix.copy()
        floyd_warshall_nest(expected)
        compiled = generate(_schedule(family, n, 16, params), dtype=dtype, runtime="dataflow")
        assert compiled(matrix) == -1
        assert np.array_equal(matrix, expected), (family, n)


def test_dataflow_matches_scipy_with_negative_edges_and_predecessors():
    n = 37
    rng = np.random.default_rng(3)
    # positive weights shifted by vertex potentials: negative edges, no negative cycle
    potential = rng.integers(0, 20, size=n)
    weights = rng.integers(1, 30, size=(n, n)) + potential[:, None] - potential[None, :]
    weights = np.where(weights == 0, 1, weights).astype(np.float64)  # scipy reads 0 as no edge
    weights[rng.random((n, n)) < 0.6] = np.inf
    np.fill_diagonal(weights, 0)
    assert (weights < 0).any()
    expected, expected_pred = scipy_floyd_warshall(weights, return_predecessors=True)
    a = np.where(np.isinf(weights), 1e30, weights).astype(np.float32)
    pred = np.where(np.isinf(weights) | (np.arange(n)[:, None] == np.arange(n)), -9999,
                    np.arange(n)[:, None]).astype(np.int32)
    compiled = generate(_schedule("classic", n, 8, {}), dtype="float32", predecessors=True, runtime="dataflow")
    assert compiled(a, pred) == -1
    reached = a < 1e29
    assert np.array_equal(a[reached], expected[reached].astype(np.float32))
    assert np.array_equal(reached, np.isfinite(expected))
    # every predecessor chain ends at its source with the path's length
    for i, j in zip(*np.nonzero(reached & (np.arange(n)[:, None] != np.arange(n)))):
        assert chain_length(pred, weights, i, j) == expected[i, j]


def test_a_negative_cycle_is_reported():
    n = 20
    a = polybench_matrix(n).astype(np.int32)
    a[5, 6], a[6, 5] = -3, 1
    compiled = generate(_schedule("generalized", n, 8, {"kappa": 2}), dtype="int32", runtime="dataflow")
    assert compiled(a) >= 0


def _relation_pairs(n: int, tile: int, blocks: int) -> np.ndarray:
    def number(kb, ib, jb):
        return (kb * blocks + ib) * blocks + jb

    return np.array([(number(*p[:3]), number(*p[3:])) for p in enumerate_points(tile_relation(n, tile).wrap())])


@pytest.mark.parametrize("family, params", FAMILIES)
def test_every_order_that_ran_respects_the_tile_relation(family, params, monkeypatch):
    # random priorities and random delays: the runtime must still wait for what isl says; with a
    # window of 3 entries a random order's window often holds nothing ready, and it must not hang
    n, tile = 41, 8
    blocks = -(-n // tile)
    schedule = _schedule(family, n, tile, params)
    compiled = generate(schedule, dtype="int32", runtime="dataflow")
    run = compiled._run
    calls = run.calls
    units = call_units(calls)  # a layer product's layers are one call
    number = (units[:, 0] * blocks + units[:, 1]) * blocks + units[:, 2]
    call_of = np.empty(blocks**3, dtype=np.int64)
    call_of[number] = np.repeat(np.arange(len(calls)), calls[:, 4])
    pairs = call_of[_relation_pairs(n, tile, blocks)]
    assert calls[:, 4].max() > 1 or family == "classic"
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]  # inside one product: proved independent
    expected = polybench_matrix(n).astype(np.int32)
    floyd_warshall_nest(expected)
    rng = np.random.default_rng(7)
    chosen, window = run.priorities, codegen.dataflow.WINDOW
    for trial in range(4):
        monkeypatch.setattr(codegen.dataflow, "WINDOW", 3 if trial % 2 else window)
        run.priorities = rng.permutation(len(calls))
        run.delays = rng.integers(0, 4000, size=len(calls)) * (rng.random(len(calls)) < 0.3)
        matrix = polybench_matrix(n).astype(np.int32)
        compiled(matrix)
        stamps = run.stamps
        assert np.all(stamps[pairs[:, 0], 1] < stamps[pairs[:, 1], 0]), trial
        assert np.array_equal(matrix, expected)
    run.priorities, run.delays = chosen, np.zeros(len(calls), dtype=np.int64)


def _places(view, priority: str) -> np.ndarray:
    """Each unit's place in the priority order."""
    place = np.empty(len(view.units), dtype=np.int64)
    place[priority_order(view, priority)] = np.arange(len(view.units))
    return place


@pytest.mark.parametrize("family, params", FAMILIES)
def test_every_priority_is_a_topological_order_of_the_tile_graph(family, params):
    for n, tile in ((64, 8), (41, 8), (33, 8)):  # 33: the last block one wide
        view = tile_view(_schedule(family, n, tile, params))
        predecessors = predecessor_table(view.units, n, tile)
        for priority in PRIORITIES:
            place = _places(view, priority)
            waited = np.where(predecessors >= 0, place[predecessors], -1)
            assert np.all(waited < place[:, None]), (n, tile, priority)


def test_the_next_layers_pivot_and_panels_overtake_this_layers_products():
    blocks = 8
    view = tile_view(_schedule("classic", 8 * blocks, 8, {}))
    units = list(map(tuple, view.units.tolist()))
    place = dict(zip(units, _places(view, "critical-path").tolist()))
    own_order = dict(zip(units, _places(view, "schedule").tolist()))
    for kb in range(blocks - 1):
        after = kb + 1
        leading = [(after, after, j) for j in range(blocks)] + [(after, i, after) for i in range(blocks) if i != after]
        # the products of this layer that no pivot or panel of the next one waits for
        remaining = [(kb, i, j) for i in range(blocks) for j in range(blocks) if not {kb, after} & {i, j}]
        assert max(place[u] for u in leading) < min(place[u] for u in remaining), kb
        # the schedule's own order runs the whole layer first
        assert own_order[(after, after, after)] > max(own_order[u] for u in remaining)


def test_the_critical_path_shortens_the_simulated_makespan_most_on_few_tiles_per_core():
    seconds = {"I": 3.0, "SD_row": 1.0, "SD_col": 1.0, "DD": 1.0}
    gains = {}
    for family, params in FAMILIES:
        for n, tile in ((1024, 256), (1024, 128), (2048, 128)):
            view = tile_view(_schedule(family, n, tile, params))
            durations = role_durations(view, seconds)
            for procs in (2, 16):
                barrier = stage_barrier_times(view, procs, durations)[0]
                own = dataflow_times(view, procs, durations, "schedule")
                critical = dataflow_times(view, procs, durations, "critical-path")
                assert critical.lower_bound <= critical.makespan <= own.makespan <= barrier
                gains[family, n // tile, procs] = barrier / critical.makespan
            if n // tile == 4:  # 4 x 4 tiles on 16 cores: the lower bound, the pivots' chain
                assert critical.makespan == critical.lower_bound == 20
    for family, _ in FAMILIES:  # the fewer tiles per core, the more the barriers cost
        assert gains[family, 8, 16] > gains[family, 16, 16] > gains[family, 16, 2] > 1


@pytest.mark.parametrize("family, params", FAMILIES)
def test_every_priority_and_list_gives_the_barrier_runtimes_result(family, params):
    n = 70  # 5 x 5 blocks of 16, the last one 6 wide
    schedule = _schedule(family, n, 16, params)
    base = np.random.default_rng(5).integers(1, 1000, size=(n, n)).astype(np.int32)
    np.fill_diagonal(base, 0)
    expected = base.copy()
    generate(schedule, dtype="int32", runtime="barrier")(expected)
    view = tile_view(schedule)
    threads = numba.get_num_threads()
    for runtime in ("dataflow", "dataflow-shared"):
        compiled = generate(schedule, dtype="int32", runtime=runtime)
        run, chosen = compiled._run, compiled._run.priorities
        _, first = tile_calls(view)
        assert np.array_equal(chosen, call_priorities(priority_order(view, codegen.dataflow.PRIORITY), first))
        try:
            for priority in PRIORITIES:
                run.priorities = call_priorities(priority_order(view, priority), first)
                for workers in (1, threads):
                    numba.set_num_threads(workers)
                    matrix = base.copy()
                    assert compiled(matrix) == -1
                    numba.set_num_threads(threads)
                    assert np.array_equal(matrix, expected), (runtime, priority, workers)
                    if workers == 1:  # one worker runs the priority order itself: it never waits
                        assert np.array_equal(np.argsort(run.stamps[:, 0]), run.priorities)
        finally:
            numba.set_num_threads(threads)
            run.priorities = chosen


def test_an_unknown_runtime_is_named():
    with pytest.raises(ValueError, match="runtime"):
        generate(_schedule("classic", 8, 4, {}), dtype="int32", runtime="eager")


def test_seed_004_example_barrier_36_dataflow_33_which_is_optimal():
    # 4 x 4 blocks, 2 processors, unit time per tile-layer (seed 004's worked example)
    from schedules.cost import cost

    barrier = cost(schedules.build("classic", 8, tile=2), procs=2)
    assert (barrier.time_on_procs, round(100 * barrier.load, 1)) == (36, 88.9)
    flow = cost(schedules.build("generalized", 8, tile=2, kappa=2), procs=2, runtime="dataflow")
    assert (flow.time_on_procs, round(100 * flow.load)) == (33, 97)
    # at step 0 only the first pivot block is ready, so one processor idles: 64 + 1 > 2 * 32
    assert flow.lower_bound == 33
    # classic's own order as the priority leaves one step more
    assert cost(schedules.build("classic", 8, tile=2), procs=2, runtime="dataflow").time_on_procs == 34


def test_the_simulated_dataflow_never_breaks_a_dependence_nor_beats_its_bounds():
    from schedules.cost import tile_view
    from schedules.simulate import dataflow_times, tile_predecessors

    schedule = schedules.build("classic", 40, tile=8)  # 5 blocks a side
    view = tile_view(schedule)
    rng = np.random.default_rng(0)
    durations = rng.integers(1, 5, size=len(view.units)).astype(float)
    for procs in (1, 2, 3, 8):
        times = dataflow_times(view, procs, durations)
        assert times.makespan >= times.lower_bound >= times.critical_path
        assert times.idle == procs * times.makespan - durations.sum()
    assert dataflow_times(view, 1).makespan == len(view.units)
    # every unit waits for its own block's previous layer and isl's direct predecessors only
    predecessors = tile_predecessors(view.units, 40, 8)
    assert max(len(p) for p in predecessors) == 3 and min(len(p) for p in predecessors) == 0


def test_solve_takes_the_runtime_from_the_schedule_text_or_the_tuning_table(monkeypatch):
    import importlib

    from polyfw import solve

    plan_module = importlib.import_module("polyfw.plan")

    seen = []
    real_generate = plan_module.generate

    def spy(*args, **kwargs):
        seen.append(kwargs.get("runtime", "barrier"))
        return real_generate(*args, **kwargs)

    monkeypatch.setattr(plan_module, "generate", spy)
    monkeypatch.setattr(plan_module, "_PLANS", {})  # (plans made earlier would not generate again)
    matrix = polybench_matrix(40).astype(np.float64)
    expected = scipy_floyd_warshall(matrix)
    assert np.array_equal(solve(matrix, schedule="classic:tile=8,runtime=dataflow"), expected)
    monkeypatch.setattr(importlib.import_module("polyfw.configuration"), "auto_configuration",
                        lambda n, dtype, target="cpu": ("generalized", {"tile": 8, "kappa": 2, "runtime": "dataflow"}))
    assert np.array_equal(solve(matrix), expected)
    assert np.array_equal(solve(matrix, schedule="classic:tile=8"), expected)
    # fewer than four tiles a side: the table's dataflow entry gives way to the barrier runtime
    small = polybench_matrix(20).astype(np.float64)
    assert np.array_equal(solve(small), scipy_floyd_warshall(small))
    assert seen == ["dataflow", "dataflow", "barrier", "barrier"]


def test_costs_with_per_role_times_weigh_the_pivot_blocks():
    from schedules.cost import cost

    schedule = schedules.build("classic", 8, tile=2)
    unit = {"I": 1.0, "SD_row": 1.0, "SD_col": 1.0, "DD": 1.0}
    assert cost(schedule, procs=2, role_seconds=unit).time_on_procs == 36
    # the pivot block three times slower (the nest's order against the product): 4 layers x 2 more
    slow_pivot = {**unit, "I": 3.0}
    assert cost(schedule, procs=2, role_seconds=slow_pivot).time_on_procs == 44
    assert cost(schedule, procs=2, runtime="dataflow", role_seconds=slow_pivot).time_on_procs < 44


def test_a_schedule_given_over_points_is_refused_with_what_would_do():
    schedule = schedules.from_tree('{ domain: "{ S[k, i, j] : 0 <= k, i, j < 4 }", child: { schedule: '
                                   '"[{ S[k, i, j] -> [(k)] }, { S[k, i, j] -> [(i)] }, { S[k, i, j] -> [(j)] }]" } }',
                                   n=4)
    with pytest.raises(ValueError, match="runs tile-level schedules"):
        generate(schedule, dtype="int32", runtime="dataflow")
