import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from schedules import IllegalScheduleError, MalformedScheduleError, ScheduleMap, check, find_violations, map_baselines
from tests import bruteforce
from tiling.isl_utils import enumerate_points

BLOCKED_CASES = [(4, 2), (5, 2), (7, 3), (8, 4), (6, 4), (9, 2)]


def violated(schedule, model):
    return {v.dependence for v in find_violations(schedule, model)}


@pytest.mark.parametrize("n", [None, 1, 5])
def test_original_order_is_legal_under_both_models(n):
    for model in ("exact", "relaxed"):
        verdict = check(map_baselines.loop_order(n, "kij"), model)
        assert verdict.model == model and verdict.n == n


@pytest.mark.parametrize("n", [None, 4])
def test_order_ijk_is_illegal_under_both_models(n):
    schedule = map_baselines.loop_order(n, "ijk")
    for model, first in (("exact", "flow"), ("relaxed", "R_row")):
        with pytest.raises(IllegalScheduleError) as caught:
            check(schedule, model)
        error = caught.value
        assert error.violations[0].dependence == first
        assert "S[0,0,1]" in str(error) and "S[1,0,0]" in str(error), str(error)
        assert "runs first" in str(error)


@pytest.mark.parametrize("n, tile", BLOCKED_CASES)
def test_classic_blocked_violates_exact_but_respects_relaxed(n, tile):
    schedule = map_baselines.classic_blocked(n, tile)
    assert check(schedule, "relaxed")
    with pytest.raises(IllegalScheduleError, match="exact dependence"):
        check(schedule, "exact")


@pytest.mark.parametrize("n, tile", BLOCKED_CASES)
def test_classic_blocked_with_dd_before_sd_is_illegal_under_both(n, tile):
    schedule = map_baselines.classic_blocked(n, tile, stages=("I", "DD", "SD"))
    assert violated(schedule, "relaxed") >= {"R_row", "R_col"}
    assert "flow" in violated(schedule, "exact")


def _parallel_writes(n: int) -> ScheduleMap:
    """The original order, but S[0,0,0] deferred into a parallel task beside layer n-1.

    It reads nothing from earlier layers and feeds no later a[i,k] or a[k,j],
    so only write exclusion can catch it: it updates a[0,0] concurrently
    with S[n-1,0,0].
    """
    text = (
        f"{{ S[k, i, j] -> [k, 0, i, j] : k > 0 or i > 0 or j > 0; "
        f"S[0, 0, 0] -> [{n - 1}, 1, 0, 0] }}"
    )
    return ScheduleMap.from_text(text, parallel=(False, True, False, False), n=n, name="parallel-writes")


@pytest.mark.parametrize("n", [2, 4])
def test_two_writes_of_one_element_in_parallel_tasks_are_illegal(n):
    with pytest.raises(IllegalScheduleError) as caught:
        check(_parallel_writes(n), "relaxed")
    (violation,) = caught.value.violations
    assert violation.dependence == "W" and violation.exclusive
    assert {violation.source, violation.sink} == {(0, 0, 0), (n - 1, 0, 0)}
    assert "concurrently" in str(caught.value)


def test_parametric_witness_uses_the_smallest_n():
    (first, *_) = find_violations(map_baselines.loop_order(None, "jik"), "relaxed")
    assert first.params == {"n": 2}
    assert "(n=2)" in first.explain()


def test_malformed_schedules_are_rejected():
    missing = ScheduleMap.from_text("{ S[k, i, j] -> [k, i, j] : k > 0 }", n=3, name="missing")
    with pytest.raises(MalformedScheduleError, match=r"no time to S\[0, 0, 0\]"):
        check(missing)
    twice = ScheduleMap.from_text("{ S[k, i, j] -> [t, i, j] : t = k or t = k + 5 }", n=3, name="twice")
    with pytest.raises(MalformedScheduleError, match="more than one time"):
        check(twice)
    with pytest.raises(ValueError, match="parallel flags"):
        ScheduleMap.from_text("{ S[k, i, j] -> [k, i, j] }", parallel=(True,), n=3)
    with pytest.raises(ValueError, match="parametric"):
        ScheduleMap.from_text("[n] -> { S[k, i, j] -> [k, i, j] }", n=3)
    with pytest.raises(TypeError, match="expected a schedule"):
        check("{ S[k,i,j] -> [k,i,j] }")


def test_verdict_says_what_was_proved():
    text = str(check(map_baselines.classic_blocked(6, 4)))
    assert "legal under the relaxed model for n = 6" in text and "R_row" in text


# ---- isl's verdict against a pair-by-pair enumeration

NAMED = [
    map_baselines.loop_order(4, "kij"),
    map_baselines.loop_order(4, "ijk"),
    map_baselines.loop_order(4, "kji"),
    map_baselines.loop_order(3, "jki"),
    map_baselines.classic_blocked(5, 2),
    map_baselines.classic_blocked(5, 2, stages=("I", "DD", "SD")),
    map_baselines.classic_blocked(5, 3, stages=("SD", "I", "DD")),
    _parallel_writes(3),
]


@pytest.mark.parametrize("schedule", NAMED, ids=lambda s: f"{s.name}-n{s.n}")
@pytest.mark.parametrize("model", ["exact", "relaxed"])
def test_isl_agrees_with_brute_force(schedule, model):
    assert violated(schedule, model) == bruteforce.violated(schedule, model)


@given(
    n=st.integers(1, 5),
    tile=st.integers(1, 5),
    stages=st.permutations(["I", "SD", "DD"]),
    parallel=st.lists(st.booleans(), min_size=7, max_size=7),
    model=st.sampled_from(["exact", "relaxed"]),
)
# isl's lexmin fails on this one's broken pairs; the witness must still come out
@example(n=4, tile=2, stages=["I", "SD", "DD"], parallel=[False] * 6 + [True], model="exact")
def test_isl_agrees_with_brute_force_on_random_blocked_variants(n, tile, stages, parallel, model):
    base = map_baselines.classic_blocked(n, tile, stages)
    schedule = ScheduleMap(base.map, tuple(parallel), n, "random-variant")
    assert violated(schedule, model) == bruteforce.violated(schedule, model)


def test_a_witness_explains_itself_word_for_word():
    """The witness is what a user reads when a schedule is wrong: every part of it is pinned."""
    from schedules.legality import IllegalScheduleError, Verdict, Violation

    # anti: the element is the one the sink overwrites (S[1,2,3] reads a[2,1] as its a[i,k])
    anti = Violation("exact", "anti", False, (1, 2, 3), (2, 2, 1), (0, 5), (0, 3), (False, False), {"n": 4})
    assert anti.explain() == (
        "exact dependence anti (n=4): S[1,2,3] reads a[2,1] before S[2,2,1] overwrites it, so S[1,2,3] must "
        "finish before S[2,2,1] starts; but the schedule runs S[1,2,3] at [0, 5] and S[2,2,1] at [0, 3]: "
        "the sink runs first (times first differ at sequential dimension 1)")
    two_parameters = Violation("exact", "output", False, (0, 1, 1), (1, 1, 1), (1,), (0,), (False,), {"n": 4, "m": 2})
    assert two_parameters.explain().startswith("exact dependence output (n=4) (m=2): ")
    flow = Violation("exact", "flow", False, (0, 2, 0), (1, 3, 2), (4,), (5,), (False,), {})
    assert flow.explain() == (
        "exact dependence flow: S[0,2,0] writes a[2,0] and S[1,3,2] reads that value, so S[0,2,0] must finish "
        "before S[1,3,2] starts; but the schedule runs S[0,2,0] at [4] and S[1,3,2] at [5]: the source runs "
        "first (times first differ at sequential dimension 0)")
    writes = Violation("relaxed", "W", True, (0, 1, 1), (2, 1, 1), (1, 0), (1, 7), (False, True), {"n": 3})
    assert writes.explain() == (
        "relaxed dependence W (n=3): S[0,1,1] and S[2,1,1] both update a[1,1], so must not run concurrently; "
        "but the schedule runs S[0,1,1] at [1, 0] and S[2,1,1] at [1, 7]: they run concurrently (times first "
        "differ at parallel dimension 1)")
    same = Violation("relaxed", "R_row", False, (0, 1, 2), (2, 1, 3), (2, 2), (2, 2), (False, False), {})
    assert same.explain().endswith("both get the same time, so their order is undefined")
    error = IllegalScheduleError("mine", "exact", [anti, flow])
    assert (error.schedule_name, error.model, error.violations) == ("mine", "exact", [anti, flow])
    assert str(error) == ("schedule 'mine' is illegal under the exact dependence model:\n"
                          f"  - {anti.explain()}\n  - {flow.explain()}")
    assert str(Verdict("mine", "relaxed", None, ("R_row", "W"))) == (
        "schedule 'mine' is legal under the relaxed model for every n (R_row, W respected)")
    assert str(Verdict("mine", "exact", 8, ("flow",))) == (
        "schedule 'mine' is legal under the exact model for n = 8 (flow respected)")


def test_checking_something_that_is_not_a_schedule_names_its_type():
    from schedules.legality import check

    with pytest.raises(TypeError, match=r"got dict$"):
        check({"tree": None})


def test_a_witness_found_on_tile_layers_for_every_n_carries_its_model_and_true_times():
    """Classic breaks the exact model; proved on tile-layers with n a parameter, the witness is a pair
    of points, its n, and their times in the point-level order of that n."""
    from schedules import build, find_violations

    found = find_violations(build("classic", None, 4), "exact")
    assert found and all(v.model == "exact" for v in found)
    for violation in found:
        n = violation.params["n"]
        concrete = build("classic", n, 4).as_schedule_map()
        times = {p[:3]: p[3:] for p in enumerate_points(concrete.map.wrap())}
        # the tile-level time, then the point: ordered as the point-level order orders them
        source_first = times[violation.source] < times[violation.sink]
        tile_time_source_first = violation.source_time < violation.sink_time
        assert source_first == tile_time_source_first
        assert violation.source_time[-3:] == violation.source and violation.sink_time[-3:] == violation.sink
        tile_times = {p[:3]: p[3:] for p in enumerate_points(build("classic", n, 4).tile_schedule_map().map.wrap())}
        for point, time in ((violation.source, violation.source_time), (violation.sink, violation.sink_time)):
            assert time[:-3] == tile_times[tuple(c // 4 for c in point)]


def test_a_point_level_witness_for_every_n_carries_its_model_n_and_the_trees_times():
    """A tree given over points, parametric in n: each witness names its model and its n, and its
    times are the tree's own times of those points at that n."""
    from schedules import from_tree

    # rows outermost, the last row first: each row runs every layer before the row above it, so
    # a row reads a[k, j] of rows not updated yet (the times depend on n: n - i)
    rows_first = ('{ domain: "[n] -> { S[k, i, j] : 0 <= k < n and 0 <= i < n and 0 <= j < n }", child: '
                  '{ schedule: "[n] -> [{ S[k, i, j] -> [(n - i)] }, { S[k, i, j] -> [(k)] }, { S[k, i, j] -> [(j)] }]" } }')
    found = find_violations(from_tree(rows_first), "relaxed")
    assert found and all(v.model == "relaxed" and set(v.params) == {"n"} for v in found)
    for violation in found:
        concrete = from_tree(rows_first, violation.params["n"]).as_schedule_map()
        times = {p[:3]: p[3:] for p in enumerate_points(concrete.map.wrap())}
        assert violation.source_time == times[violation.source] and violation.sink_time == times[violation.sink]


def test_the_relaxed_model_refuses_a_semiring_it_does_not_hold_for_and_names_the_schedule():
    from schedules import build
    from tiling.semirings import UnsupportedSemiringError

    classic = build("classic", 8, 4)
    for call in (lambda: check(classic, "relaxed", "plus-times"), lambda: find_violations(classic, "relaxed", "plus-times")):
        with pytest.raises(UnsupportedSemiringError):
            call()
    assert find_violations(classic, "exact", "plus-times")  # the exact model holds for every semiring
    with pytest.raises(IllegalScheduleError) as refused:
        check(classic, "exact")
    assert refused.value.schedule_name == "classic(n=8, tile=4)" and refused.value.model == "exact"
