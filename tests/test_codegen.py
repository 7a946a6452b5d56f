"""Generated CPU code: exact for every family, dtype and n; custom trees; predecessors; emit."""
import re
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError
from scipy.sparse.csgraph import floyd_warshall as scipy_floyd_warshall

import polyfw
import schedules
from codegen import floyd_warshall_nest, generate
from codegen.cpu import check_matrix
from codegen.profile import run_profile
from codegen.proved_ast import prepare
from polyfw.solver import NO_PREDECESSOR, initial_predecessors
from polyfw.graphs import as_dense, as_float_distances, dense_to_sparse, polybench_matrix, random_graph

FAMILY_CASES = [
    ("classic", {"tile": 16}),
    ("classic", {"tile": 32}),
    ("generalized", {"tile": 16, "kappa": 3}),
    ("generalized", {"tile": 16, "kappa": 2, "variant": "fused"}),
    ("recursive", {"base": 16}),
    ("recursive", {"base": 8, "paired": False}),
]
DTYPES = ["float32", "float64", "int32"]


def nest_result(matrix):
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    return expected


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 16, 45, 70])
@pytest.mark.parametrize("family, params", FAMILY_CASES)
def test_generated_code_reproduces_polybench(family, params, n, dtype):
    # PolyBench's floyd-warshall input: the generated nest must give PolyBench's output exactly
    matrix = polybench_matrix(n).astype(dtype)
    if "kappa" in params:
        params = {**params, "kappa": min(params["kappa"], -(-n // params["tile"]))}
    compiled = generate(schedules.build(family, n, **params), dtype=dtype)
    assert compiled(matrix) == -1
    np.testing.assert_array_equal(matrix, nest_result(polybench_matrix(n).astype(dtype)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_naive_family_is_generated_point_by_point(dtype):
    matrix = polybench_matrix(23).astype(dtype)
    compiled = generate(schedules.build("naive", 23), dtype=dtype)
    assert "relax_point(a, " in compiled.source and "prange(" in compiled.source
    compiled(matrix)
    np.testing.assert_array_equal(matrix, nest_result(polybench_matrix(23).astype(dtype)))


# three blocks a side (the last partial): small drivers, quick to compile, every kind of stage present
COMPILED_DRIVER_FAMILIES = [("classic", {"tile": 8}), ("generalized", {"tile": 8, "kappa": 2}),
                           ("generalized", {"tile": 8, "kappa": 3, "variant": "fused"}),
                           ("recursive", {"base": 8}), ("recursive", {"base": 8, "paired": False})]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("family, params", COMPILED_DRIVER_FAMILIES)
def test_compiled_tile_level_driver_is_exact(family, params, dtype):
    """The Numba-compiled driver (what runs above 100,000 tile-layers) on a small n, with
    negative edges and a partial last block, against the nest and the replayed driver."""
    n = 21
    schedule = schedules.build(family, n, **params)
    compiled = generate(schedule, dtype=dtype, driver="compiled")
    replayed = generate(schedule, dtype=dtype, driver="replayed")
    assert not isinstance(compiled._run, type(replayed._run))  # the compiled function, not the replay
    assert compiled._run.signatures  # compiled by Numba, for exactly one signature
    graph = random_graph(n, 4 * n, weights=(1, 30), seed=n, potential=12)
    matrix, again = as_dense(graph, dtype=dtype), as_dense(graph, dtype=dtype)
    expected = nest_result(as_dense(graph, dtype=dtype))
    assert compiled(matrix) == -1 and replayed(again) == -1
    np.testing.assert_array_equal(matrix, expected)
    np.testing.assert_array_equal(again, expected)


def test_compiled_driver_with_predecessors_matches_the_replayed_one():
    schedule = schedules.build("classic", 30, tile=8)
    graph = random_graph(30, 90, weights=(1, 9), seed=3)
    results = []
    for driver in ("compiled", "replayed"):
        matrix = as_dense(graph, dtype="float64")
        pred = initial_predecessors(matrix)
        generate(schedule, dtype="float64", predecessors=True, driver=driver)(matrix, pred)
        results.append((matrix, pred))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_later_calls_replay_the_recorded_program_on_new_matrices():
    # the first call records the kernel calls of the Python driver; later ones replay them
    n = 40
    compiled = generate(schedules.build("generalized", n, tile=8, kappa=2), dtype="int32")
    for seed in range(3):
        graph = random_graph(n, 3 * n, weights=(1, 9), seed=seed, potential=4)
        matrix = as_dense(graph, dtype="int32")
        expected = nest_result(matrix)
        padded = np.zeros((n, n + 5), dtype=np.int32)
        padded[:, :n] = matrix
        assert compiled(padded) == compiled(matrix)  # another object, another row stride
        np.testing.assert_array_equal(matrix, expected)
        np.testing.assert_array_equal(padded[:, :n], expected)


@pytest.mark.isa
def test_padded_rows_and_register_blocks():
    n = 50
    matrix = np.full((n, 80), -7, dtype=np.float32)  # columns beyond n must stay untouched
    matrix[:, :n] = polybench_matrix(n)
    generate(schedules.build("classic", n, tile=24), dtype="float32", register_block=(2, 16))(matrix)
    np.testing.assert_array_equal(matrix[:, :n], nest_result(polybench_matrix(n).astype(np.float32)))
    assert (matrix[:, n:] == -7).all()


REVERSED_DD = """
domain: "[n] -> { S[k, i, j] : 0 <= k < n and 0 <= i < n and 0 <= j < n }"
child:
  schedule: "[n] -> [{ S[k, i, j] -> [(floor(k/8))] }]"
  child:
    sequence:
    - filter: "[n] -> { S[k, i, j] : floor(i/8) = floor(k/8) and floor(j/8) = floor(k/8) }"
      child:
        schedule: "[n] -> [{ S[k, i, j] -> [(k)] }, { S[k, i, j] -> [(i)] }, { S[k, i, j] -> [(j)] }]"
    - filter: "[n] -> { S[k, i, j] : (floor(i/8) = floor(k/8) and floor(j/8) != floor(k/8)) or (floor(j/8) = floor(k/8) and floor(i/8) != floor(k/8)) }"
      child:
        schedule: "[n] -> [{ S[k, i, j] -> [(floor(i/8))] }, { S[k, i, j] -> [(floor(j/8))] }]"
        permutable: 1
        coincident: [ 1, 1 ]
        child:
          schedule: "[n] -> [{ S[k, i, j] -> [(k)] }, { S[k, i, j] -> [(i)] }, { S[k, i, j] -> [(j)] }]"
    - filter: "[n] -> { S[k, i, j] : floor(i/8) != floor(k/8) and floor(j/8) != floor(k/8) }"
      child:
        schedule: "[n] -> [{ S[k, i, j] -> [(-floor(i/8))] }, { S[k, i, j] -> [(-floor(j/8))] }]"
        permutable: 1
        coincident: [ 1, 1 ]
        child:
          schedule: "[n] -> [{ S[k, i, j] -> [(k)] }, { S[k, i, j] -> [(i)] }, { S[k, i, j] -> [(j)] }]"
"""


def test_custom_tree_runs_through_the_same_generator():
    # classic blocked with the DD blocks swept from the last to the first: legal, and exact when run
    n = 30
    custom = schedules.from_tree(REVERSED_DD, n, name="reversed-dd")
    assert schedules.check(custom).model == "relaxed"  # raises IllegalScheduleError otherwise
    graph = random_graph(n, seed=4, potential=True)
    distances = polyfw.solve(graph, schedule=custom, dtype="int32")
    expected = scipy_floyd_warshall(dense_to_sparse(as_dense(graph)))
    np.testing.assert_array_equal(as_float_distances(distances), expected)
    assert "prange(" in generate(custom, dtype="int32").source


def path_length(edges, pred, source, target):
    length, vertex, steps = 0.0, target, 0
    while vertex != source:
        before = pred[source, vertex]
        assert before != NO_PREDECESSOR and steps <= len(pred)
        length += edges[before, vertex]
        vertex, steps = before, steps + 1
    return length


@pytest.mark.parametrize("schedule", ["classic:tile=8", "generalized:tile=8,kappa=3", "recursive:tile=8", "naive"])
def test_predecessor_paths_have_the_reported_length(schedule):
    graph = random_graph(40, seed=9, potential=True)
    edges = as_float_distances(as_dense(graph, dtype="float64"))
    distances, pred = polyfw.solve(graph, schedule=schedule, dtype="float32", predecessors=True)
    expected, expected_pred = scipy_floyd_warshall(dense_to_sparse(as_dense(graph)), return_predecessors=True)
    np.testing.assert_array_equal(as_float_distances(distances), expected)
    for s in range(40):
        for t in range(40):
            if s != t and np.isfinite(expected[s, t]):
                assert path_length(edges, pred, s, t) == expected[s, t]
            else:
                assert pred[s, t] == NO_PREDECESSOR


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int16"])
@pytest.mark.parametrize("n, schedule", [(130, "classic:tile=64"), (67, "recursive:tile=32")])
@given(seed=st.integers(0, 2**16))
@settings(max_examples=3, deadline=None)
def test_predecessor_products_leave_paths_of_the_reported_length(n, schedule, dtype, seed):
    """Tiles wide enough for whole register blocks, so DD and SD tile-layers run as products that keep
    predecessors in registers (AVX-512 float32: 8 x 16), with rows and columns left over for the nest's order
    (n and the schedules fixed: each new pair is a driver to compile; the runtimes' dispatch is tested at
    small tiles in test_dataflow and mpi_cases)."""
    graph = random_graph(n, m=3 * n, weights=(1, 60), seed=seed, potential=20)
    edges = as_float_distances(as_dense(graph, dtype="float64"))
    distances, pred = polyfw.solve(graph, schedule=schedule, dtype=dtype, predecessors=True)
    expected = scipy_floyd_warshall(dense_to_sparse(as_dense(graph)))
    np.testing.assert_array_equal(as_float_distances(distances), expected)
    for s in range(n):
        for t in range(n):
            if s != t and np.isfinite(expected[s, t]):
                assert path_length(edges, pred, s, t) == expected[s, t]
            else:
                assert pred[s, t] == NO_PREDECESSOR


def tasks_read_each_others_blocks(schedule) -> bool:
    """Brute force: does some task read a block that another task of its stage writes?"""
    view = schedules.stage_view(schedule.tile_tree, schedule.n, schedule.tile)
    for stage in range(view.n_stages):
        tasks = view.tasks_of(stage)
        writes = [{(ib, jb) for _, ib, jb in task.units.tolist()} for task in tasks]
        for t, task in enumerate(tasks):
            reads = {block for kb, ib, jb in task.units.tolist() for block in ((ib, kb), (kb, jb))}
            if any(reads & written for other, written in enumerate(writes) if other != t):
                return True
    return False


@pytest.mark.parametrize("family, params", [("classic", {}), ("generalized", {"kappa": 2}),
                                            ("generalized", {"kappa": 2, "variant": "fused"}),
                                            ("recursive", {})])
def test_predecessors_run_on_one_thread_exactly_when_tasks_of_a_stage_read_each_others_blocks(family, params):
    """A (distance, predecessor) pair read while another task writes it could be torn."""
    schedule = (schedules.build(family, 64, tile=16, **params) if family != "recursive"
                else schedules.build(family, 64, base=16))
    compiled = generate(schedule, dtype="float32", predecessors=True)
    assert compiled.serial == tasks_read_each_others_blocks(schedule)
    assert compiled.serial == (family == "generalized")  # classic's and recursive's stages read closed blocks


def test_source_does_not_grow_with_n():
    small, large = (generate(schedules.build("generalized", n, tile=32, kappa=4)).source for n in (512, 8192))
    assert len(small.splitlines()) == len(large.splitlines())
    differing = [(a, b) for a, b in zip(small.splitlines(), large.splitlines()) if a != b]
    assert differing and all(a.strip("0123456789 ") != "" for a, _ in differing)
    assert all([c for c in a if not c.isdigit()] == [c for c in b if not c.isdigit()] for a, b in differing)


def test_tile_level_front_uses_role_marks():
    proved = prepare(schedules.build("classic", 64, tile=16))
    assert proved.level == "tile" and "parallel" in proved.tree.to_str()
    assert prepare(schedules.build("naive", 8)).level == "point"


def test_bad_matrix_is_named():
    compiled = generate(schedules.build("classic", 20, tile=8), dtype="float32")
    with pytest.raises(ValueError, match="a must be a C-contiguous float32"):
        compiled(np.zeros((20, 20)))
    with pytest.raises(ValueError, match="20 rows and at least 20 columns"):
        compiled(np.zeros((20, 10), dtype=np.float32))
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        generate(schedules.build("classic", 20, tile=8), target="tpu")


@given(n=st.integers(1, 60), tile=st.integers(2, 20), family=st.sampled_from(["classic", "generalized", "recursive"]),
       kappa=st.integers(1, 4), seed=st.integers(0, 2**16), dtype=st.sampled_from(DTYPES))
def test_random_graphs_and_schedules_match_scipy(n, tile, family, kappa, seed, dtype):
    params = {"generalized": {"tile": tile, "kappa": min(kappa, -(-n // tile))},
              "classic": {"tile": tile}, "recursive": {"base": tile}}[family]
    graph = random_graph(n, m=min(4 * n, n * (n - 1)), seed=seed, potential=True)
    schedule = schedules.build(family, n, **params)
    distances = polyfw.solve(graph, schedule=schedule, dtype=dtype)
    np.testing.assert_array_equal(as_float_distances(distances), scipy_floyd_warshall(dense_to_sparse(as_dense(graph))))


@given(n=st.integers(2, 30), tile=st.integers(2, 8), family=st.sampled_from(["classic", "generalized", "recursive"]),
       density=st.floats(0.05, 0.6), low=st.integers(-12, 0), seed=st.integers(0, 2**16))
def test_signed_weights_with_small_tiles_agree_with_scipy_or_both_see_a_negative_cycle(n, tile, family, density, low,
                                                                                       seed):
    # SD tiles are min-plus products with the closed pivot block: exact unless a negative cycle
    # spoils the closure, and then the pivot block's I tile-layer must already have reported it
    rng = np.random.default_rng(seed)
    matrix = np.where(rng.random((n, n)) < density, rng.integers(low, 40, (n, n)), np.inf)
    np.fill_diagonal(matrix, np.inf)
    params = {"generalized": {"tile": tile, "kappa": min(2, -(-n // tile))},
              "classic": {"tile": tile}, "recursive": {"base": tile}}[family]
    schedule = schedules.build(family, n, **params)
    try:
        expected = scipy_floyd_warshall(dense_to_sparse(matrix))
    except ScipyNegativeCycleError:
        with pytest.raises(polyfw.NegativeCycleError):
            polyfw.solve(matrix, schedule=schedule, dtype="float64")
        return
    np.testing.assert_array_equal(polyfw.solve(matrix, schedule=schedule, dtype="float64"), expected)


@pytest.mark.parametrize("order", ["reverse", "interleaved"])
@pytest.mark.parametrize("family, params", FAMILY_CASES)
def test_every_family_is_exact_whatever_order_a_stage_runs_its_tasks_in(family, params, order):
    # the tasks of a stage may run in any order and overlap: reversed and interleaved must give
    # the same answer as the nest (on a graph with signed weights and unreachable pairs)
    n = 70
    schedule = schedules.build(family, n, **params)
    graph = random_graph(n, m=4 * n, weights=(1, 9), seed=11, potential=6)  # negative arcs, no negative cycle
    matrix = as_dense(graph, dtype="float32")
    expected = nest_result(matrix)
    assert generate(schedule)(matrix, task_order=order) == -1
    np.testing.assert_array_equal(matrix, expected)


def test_reversed_tasks_expose_tasks_that_depend_on_each_other(monkeypatch):
    from schedules.proofs import RefusedScheduleError
    from tests.test_emitted import one_stage_schedule

    import codegen.cpu

    schedule = one_stage_schedule(24, 8)
    with pytest.raises(RefusedScheduleError, match=r"^refusing to run one-stage\(n=24, tile=8\): relaxed dependence "
                                                   r"R_row: .* they run concurrently"):
        generate(schedule)
    # generate it anyway, into a cache of its own: the refused code must not reach later callers
    monkeypatch.setattr(codegen.cpu, "_COMPILED", {})
    compiled = generate(schedules.unsafe_run_unproved(schedule))
    # 2 -> 9 -> 12 -> 20: both intermediates in block 1, so the DD tile-layer T[1, 0, 2] finds the
    # path only after the SD tile-layers T[1, 0, 1] and T[1, 1, 2] of the same layer
    matrix = np.full((24, 24), np.inf, dtype=np.float32)
    np.fill_diagonal(matrix, 0)
    matrix[2, 9] = matrix[9, 12] = matrix[12, 20] = 1
    expected = nest_result(matrix)
    assert expected[2, 20] == 3
    interleaved, reversed_ = matrix.copy(), matrix.copy()
    compiled(interleaved, task_order="interleaved")  # one tile-layer per task: index order
    np.testing.assert_array_equal(interleaved, expected)
    compiled(reversed_, task_order="reverse")
    assert reversed_[2, 20] == np.inf
    with pytest.raises(ValueError, match="task_order must be one of reverse, interleaved"):
        compiled(reversed_, task_order="random")


def test_task_orders_with_predecessors():
    n = 40
    compiled = generate(schedules.build("classic", n, tile=8), predecessors=True)
    matrix = polybench_matrix(n).astype(np.float32)
    expected = nest_result(matrix)
    pred = np.zeros((n, n), dtype=np.int32)
    assert compiled(matrix, pred, task_order="reverse") == -1
    np.testing.assert_array_equal(matrix, expected)


GOLDEN = Path(__file__).parent / "golden"
GOLDEN_CASES = {  # file -> (family, n, build parameters, generate options)
    "classic_n8_tile4_float32": ("classic", 8, {"tile": 4}, {"dtype": "float32"}),
    "classic_n8_tile4_panels_int32": ("classic", 8, {"tile": 4, "panels": True}, {"dtype": "int32"}),
    "generalized_n12_tile4_kappa2_float64_pred": ("generalized", 12, {"tile": 4, "kappa": 2},
                                                  {"dtype": "float64", "predecessors": True}),
    "naive_n3_int32_pred": ("naive", 3, {}, {"dtype": "int32", "predecessors": True}),
}


@pytest.mark.parametrize("name", GOLDEN_CASES)
def test_generated_source_is_pinned_line_for_line(name):
    """What `polyfw emit` shows a reader: every loop, comment, call and bound. A change to the
    generator that changes this text must change the golden file with it (tests/golden/)."""
    family, n, params, options = GOLDEN_CASES[name]
    source = generate(schedules.build(family, n, **params), **options).source
    assert re.sub(r"polyfw_kernels_\w+", "KERNELS", source) == (GOLDEN / f"{name}.py.txt").read_text()


def test_check_matrix_names_what_is_wrong_with_the_argument():
    good = np.zeros((4, 6), dtype=np.float32)
    check_matrix(good, 4, "float32", "a")  # padded rows are fine
    cases = [
        ([[0.0] * 4] * 4, "a must be a 2-D array with 4 rows and at least 4 columns, got list"),
        (np.zeros(16, dtype=np.float32), "a must be a 2-D array with 4 rows and at least 4 columns, got (16,)"),
        (np.zeros((5, 5), dtype=np.float32), "a must be a 2-D array with 4 rows and at least 4 columns, got (5, 5)"),
        (np.zeros((4, 3), dtype=np.float32), "a must be a 2-D array with 4 rows and at least 4 columns, got (4, 3)"),
        (np.zeros((4, 4)), "a must be a C-contiguous float32 array, got float64 (contiguous)"),
        (np.zeros((4, 8), dtype=np.float32)[:, ::2], "a must be a C-contiguous float32 array, got float32 "
                                                     "(not contiguous)"),
    ]
    for value, message in cases:
        with pytest.raises(ValueError) as refused:
            check_matrix(value, 4, "float32", "a")
        assert str(refused.value) == message


def test_a_predecessor_run_needs_a_predecessor_matrix_named_as_such():
    compiled = generate(schedules.build("classic", 12, tile=4), dtype="float64", predecessors=True)
    matrix = np.zeros((12, 12))
    with pytest.raises(ValueError) as refused:
        compiled(matrix)
    assert str(refused.value) == ("classic(n=12, tile=4) was generated with predecessors: pass pred (int32, 12 x n)")
    with pytest.raises(ValueError) as refused:
        compiled(matrix, np.zeros((12, 12), dtype=np.int64))
    assert str(refused.value) == "pred must be a C-contiguous int32 array, got int64 (contiguous)"


def test_a_run_reports_its_seconds_and_threads_and_a_serial_run_gives_the_threads_back():
    import numba

    from codegen.cpu import ONE_THREAD_BELOW

    threads = numba.get_num_threads()
    n = ONE_THREAD_BELOW  # (below it every run takes one thread: a second one costs more than it gives)
    for schedule, serial in ((schedules.build("classic", n, tile=n // 4), False),
                             (schedules.build("generalized", 24, tile=8, kappa=2), True),
                             (schedules.build("classic", n - 1, tile=8), False)):
        compiled = generate(schedule, dtype="float64", predecessors=True)
        assert compiled.serial == serial
        matrix = as_dense(random_graph(schedule.n, 4 * schedule.n, weights=(1, 9), seed=1), dtype="float64")
        started = time.perf_counter()
        assert compiled(matrix, initial_predecessors(matrix)) == -1
        elapsed = time.perf_counter() - started
        assert 0 < compiled.last_run["seconds"] <= elapsed
        assert compiled.last_run["threads"] == (1 if serial or schedule.n < n else threads)
        assert numba.get_num_threads() == threads


@pytest.mark.parametrize("family, params", [("classic", {"tile": 8}), ("generalized", {"tile": 8, "kappa": 2}),
                                           ("recursive", {"tile": 8})])
def test_a_small_run_replays_its_tile_layers_in_order_on_one_thread(family, params):
    """Below ONE_THREAD_BELOW, calls after the first run each stage's tasks one after another, calling
    the tile kernels directly (layer products joined, as the driver recorded them): the same distances,
    predecessors and negative-cycle pivot as the first, parallel call, and a profile whose parts add up."""
    from codegen.cpu import ONE_THREAD_BELOW

    n = ONE_THREAD_BELOW - 21
    schedule = schedules.build(family, n, **params)
    graph = as_dense(random_graph(n, 5 * n, weights=(-2, 9), seed=3), dtype="float64")
    graph[graph < 0] = 1.0
    expected = nest_result(graph)
    for predecessors in (False, True):
        compiled = generate(schedule, dtype="float64", predecessors=predecessors)
        for call in range(3):  # the first records the driver's calls, the next replay them in order
            matrix = graph.copy()
            pred = initial_predecessors(matrix) if predecessors else None
            assert compiled(matrix, *([pred] if predecessors else [])) == -1
            np.testing.assert_array_equal(matrix, expected)
            if predecessors:  # the last arc into j on each shortest path closes its length
                i, j = np.nonzero(np.isfinite(expected) & ~np.eye(n, dtype=bool))
                np.testing.assert_array_equal(matrix[i, pred[i, j]] + graph[pred[i, j], j], expected[i, j])
            assert compiled.last_run["threads"] == 1
            profile = run_profile(compiled.last_run)  # stamped in order as in parallel: the parts add up
            assert sum(profile.parts.values()) == pytest.approx(profile.seconds, rel=1e-9)
            assert profile.parts["I"] > 0 and profile.parts["DD"] > 0
        negative = graph.copy()
        negative[5, 6], negative[6, 5] = -4.0, 1.0
        pred = initial_predecessors(negative) if predecessors else None
        assert compiled(negative, *([pred] if predecessors else [])) >= 0


def test_race_analysis_at_tile_level_and_for_large_point_trees():
    """Tile-level drivers are analysed on tile-layers at any n; point trees above
    RACE_ANALYSIS_UP_TO points are taken as racing (one thread) without analysis."""
    from codegen.cpu import RACE_ANALYSIS_UP_TO

    n = round(RACE_ANALYSIS_UP_TO ** (1 / 3)) + 2
    assert generate(schedules.build("classic", n, tile=n // 4), dtype="float32", predecessors=True).serial is False
    assert generate(schedules.build("naive", 8), dtype="float32", predecessors=True).serial is True  # rows read row k
    assert generate(schedules.build("naive", 8), dtype="float32").serial is False
    sequential = ('{ domain: "[n] -> { S[k, i, j] : 0 <= k < n and 0 <= i < n and 0 <= j < n }", child: '
                  '{ schedule: "[n] -> [{ S[k, i, j] -> [(k)] }, { S[k, i, j] -> [(i)] }, { S[k, i, j] -> [(j)] }]" } }')
    assert generate(schedules.from_tree(sequential, 8), dtype="float32", predecessors=True).serial is False
    assert generate(schedules.from_tree(sequential, n), dtype="float32", predecessors=True).serial is True


def test_task_orders_are_checked_and_need_a_tile_level_driver():
    matrix = np.zeros((8, 8), dtype=np.float32)
    with pytest.raises(ValueError) as refused:
        generate(schedules.build("classic", 8, tile=4), dtype="float32")(matrix, task_order="random")
    assert str(refused.value) == "task_order must be one of reverse, interleaved, got 'random'"
    with pytest.raises(ValueError) as refused:
        generate(schedules.build("naive", 8), dtype="float32")(matrix, task_order="reverse")
    assert str(refused.value) == ("naive(n=8, tile=1) runs points with prange, not task lists; task_order needs a "
                                  "tile-level driver")


def test_ordered_runs_tasks_last_first_or_round_robin():
    from codegen.cpu import _ordered

    tasks = [range(0, 3), range(3, 4), range(4, 6)]
    assert _ordered(tasks, "reverse") == [4, 5, 3, 0, 1, 2]
    assert _ordered(tasks, "interleaved") == [0, 3, 4, 1, 5, 2]
    assert _ordered([], "interleaved") == [] and _ordered([range(0, 0)], "interleaved") == []


def test_the_replayed_program_writes_into_each_calls_own_matrices():
    """Recorded calls name the driver's arguments by position: a replay on new matrices (and a
    new status) updates those, not the first call's."""
    n = 20
    compiled = generate(schedules.build("classic", n, tile=8), dtype="float64", predecessors=True,
                        driver="replayed")
    first = as_dense(random_graph(n, 60, weights=(1, 9), seed=5), dtype="float64")
    first_pred = initial_predecessors(first)
    compiled(first, first_pred)
    kept, kept_pred = first.copy(), first_pred.copy()
    for seed in (6, 7):
        matrix = as_dense(random_graph(n, 60, weights=(1, 9), seed=seed), dtype="float64")
        expected = nest_result(matrix)
        pred = initial_predecessors(matrix)
        assert compiled(matrix, pred) == -1
        np.testing.assert_array_equal(matrix, expected)
        assert (pred[np.isfinite(matrix) & ~np.eye(n, dtype=bool)] >= 0).all()
        np.testing.assert_array_equal(first, kept)
        np.testing.assert_array_equal(first_pred, kept_pred)
    negative = np.full((n, n), np.inf)
    np.fill_diagonal(negative, 0.0)
    negative[3, 4], negative[4, 3] = 1.0, -2.0
    assert compiled(negative, initial_predecessors(negative)) >= 0  # the new status, not the first call's


def test_the_driver_is_replayed_up_to_the_threshold_and_compiled_above_or_when_asked(monkeypatch):
    from codegen import cpu

    schedule = schedules.build("classic", 24, tile=8)  # 27 tile-layers
    monkeypatch.setattr(cpu, "INTERPRET_UP_TO", 27)
    monkeypatch.setattr(cpu, "_COMPILED", {})  # what was generated before is generated again
    assert isinstance(generate(schedule, dtype="int32")._run, cpu._ReplayedDriver)
    monkeypatch.setattr(cpu, "INTERPRET_UP_TO", 26)
    monkeypatch.setattr(cpu, "_COMPILED", {})
    assert not isinstance(generate(schedule, dtype="int32")._run, cpu._ReplayedDriver)
    assert isinstance(generate(schedule, dtype="int32", driver="replayed")._run, cpu._ReplayedDriver)
    monkeypatch.setattr(cpu, "INTERPRET_UP_TO", 10**9)
    compiled = generate(schedule, dtype="int32", driver="compiled")
    assert not isinstance(compiled._run, cpu._ReplayedDriver) and compiled._run.signatures
    point = generate(schedules.build("naive", 6), dtype="int32", driver="replayed")
    assert not isinstance(point._run, cpu._ReplayedDriver)  # point-level code is always compiled
    with pytest.raises(ValueError) as refused:
        generate(schedule, dtype="int32", driver="fast")
    assert str(refused.value) == "driver must be one of auto, compiled, replayed, got 'fast'"


@pytest.mark.parametrize("runtime", ["dataflow", "dataflow-shared"])
def test_the_dataflow_runtimes_are_exact_and_describe_themselves(runtime):
    n = 24
    graph = random_graph(n, 4 * n, weights=(1, 9), seed=2)
    for predecessors in (False, True):
        compiled = generate(schedules.build("generalized", n, tile=8, kappa=2), dtype="float64", runtime=runtime,
                            predecessors=predecessors)
        assert (compiled.target, compiled.n, compiled.name, compiled.serial) == (
            "cpu", n, "generalized(n=24, tile=8, kappa=2, variant=seed)", predecessors)
        assert compiled.options.dtype == "float64" and compiled.options.predecessors == predecessors
        assert "def " in compiled.source and "def " in compiled.kernel_source and compiled.compile_seconds >= 0
        matrix = as_dense(graph, dtype="float64")
        expected = nest_result(matrix)
        assert compiled(matrix, initial_predecessors(matrix) if predecessors else None) == -1
        np.testing.assert_array_equal(matrix, expected)
    with pytest.raises(ValueError) as refused:
        generate(schedules.build("classic", n, tile=8), runtime="threads")
    assert str(refused.value) == "runtime must be one of barrier, dataflow, dataflow-shared, got 'threads'"


def test_a_stage_with_one_task_runs_its_tile_layers_directly_after_a_parallel_stage():
    """A leaf stage has no parallel region: its tile-layers are kernel calls in order, and the
    region before it must have been left (else they would be queued for a run_tasks never called)."""
    from schedules.tree import Band, Filter, Sequence_, stage

    spec = Band(("kb",), False, Sequence_((
        stage("pivot", "ib = kb and jb = kb", ("I",)),
        stage("row_and_column", "(ib = kb and jb != kb) or (jb = kb and ib != kb)", ("SD_row", "SD_col")),
        Filter("ib != kb and jb != kb", Band(("ib", "jb"), False)),  # the rest: one task, in order
    )))
    schedule = schedules.from_spec("one-task rest", spec, 20, 8)
    compiled = generate(schedule, dtype="float64")
    assert "        relax_layers(a, 8 * c0, " in compiled.source  # called directly, not queued
    matrix = as_dense(random_graph(20, 60, weights=(1, 9), seed=4), dtype="float64")
    expected = nest_result(matrix)
    compiled(matrix)
    np.testing.assert_array_equal(matrix, expected)


TWO_MEMBER_PARALLEL_BAND = (
    '{ domain: "[n] -> { S[k, i, j] : 0 <= k < n and 0 <= i < n and 0 <= j < n }", child: '
    '{ schedule: "[n] -> [{ S[k, i, j] -> [(k)] }]", child: '
    '{ schedule: "[n] -> [{ S[k, i, j] -> [(i)] }, { S[k, i, j] -> [(j)] }]", permutable: 1, coincident: [ 1, 1 ] } } }')


def test_only_the_outermost_loop_of_a_parallel_point_band_is_a_prange():
    compiled = generate(schedules.from_tree(TWO_MEMBER_PARALLEL_BAND, 6), dtype="int32")
    loops = [line.strip() for line in compiled.source.splitlines() if line.strip().startswith("for ")]
    assert loops == ["for c0 in range(0, 5 + 1):", "for c1 in prange(0, 5 + 1):", "for c2 in range(0, 5 + 1):"]
    assert compiled.target == "cpu"
    assert {mark: (workers.label, sorted(workers.depths)) for mark, workers in compiled.workers.items()} == {
        "parallel_0": ("prange loop 0", [1])}
    tiled = generate(schedules.build("classic", 16, tile=8), dtype="int32")
    assert {mark: workers.label for mark, workers in tiled.workers.items()} == {
        "parallel_0": "run_tasks stage 0", "parallel_1": "run_tasks stage 1", "parallel_2": "run_tasks stage 2"}
    matrix = as_dense(random_graph(6, 15, weights=(1, 9), seed=8), dtype="int32")
    expected = nest_result(matrix)
    compiled(matrix)
    np.testing.assert_array_equal(matrix, expected)


def test_point_trees_between_n_cubed_and_n_to_the_fourth_above_the_limit_are_still_analysed():
    sequential = ('{ domain: "[n] -> { S[k, i, j] : 0 <= k < n and 0 <= i < n and 0 <= j < n }", child: '
                  '{ schedule: "[n] -> [{ S[k, i, j] -> [(k)] }, { S[k, i, j] -> [(i)] }, { S[k, i, j] -> [(j)] }]" } }')
    assert generate(schedules.from_tree(sequential, 40), dtype="float32", predecessors=True).serial is False
