"""polyfw explore's habits as an autotuner: a search resumed where it stopped, nothing written
unasked, budgets kept to within one candidate, impossible values refused with the valid range,
two stores compared, and the best configuration pasted into solve as printed."""
import os
import re
import time
import zlib

import numpy as np
import pytest
from scipy.stats import kendalltau

from polyfw.cli import main
from polyfw.configuration import chosen_runtime, resolve_schedule
from polyfw.explore import Budget, Outcome, Problem, Record, Space, Store, StoredSearch, explore, order_candidates
from polyfw.graphs import random_graph

FAST = ["--repeats", "1", "--no-ceiling"]


class Timed:
    """A runner that runs nothing: each candidate 'takes' a time fixed by its key (so that a
    strategy that follows the measurements walks the same way every time), after `pause` seconds
    that stand for the work. `ran` lists what it was asked to run."""

    target, processes, threads, tile_layer_overhead = "cpu", 1, 1, 0.0

    def __init__(self, pause: float = 0.0):
        self.pause, self.ran = pause, []

    def __call__(self, schedule, recipe, candidate, problem, repeats):
        self.ran.append(candidate.key)
        time.sleep(self.pause)
        return Outcome("measured", times=[1e-3 * (1 + zlib.crc32(candidate.key.encode()) % 997)])


def _guided_space() -> Space:
    return Space(48, families=("classic", "generalized"), values={
        "tile": [8, 16], "variant": ["seed"], "reverse": ["descending"], "step_order": ["LeadBlock-LeadRowCol"],
        "part_order": ["forward-reverse-rest"], "stages": ["I-SD-DD"]}, run_axes=())


# ---------------------------------------------------------------- 1. --resume


def test_a_resumed_model_search_walks_on_as_an_uninterrupted_one_and_measures_only_what_is_new(tmp_path):
    space = _guided_space()
    explore_ = dict(strategy="model", repeats=1, progress=False, top=2)
    with Store(tmp_path / "whole.sqlite") as store:
        whole = explore(space, max_candidates=9, store=store, runner=Timed(), **explore_)
    # the top two, then the refinement: at least two of it, so that the resumed search below starts inside it (how
    # far it walks depends on the model's ranking, which depends on the machine's ISA: 4 on an AVX-512 Xeon)
    assert len(whole.records) >= 4
    with Store(tmp_path / "parts.sqlite") as store:
        first = explore(space, max_candidates=3, store=store, runner=Timed(), **explore_)
        later = Timed()
        rest = explore(space, max_candidates=6, store=store, runner=later, resume=True, **explore_)
        assert not first.finished and rest.search == first.search and rest.resumed == 3
        assert [r.key for r in rest.records] == [r.key for r in whole.records]  # the refinement went on
        assert later.ran == [r.key for r in whole.records[3:]]  # nothing twice
        assert store.visited(first.search) == [r.key for r in whole.records]
        searched = store.search(first.search)
        assert (searched.strategy, searched.settings["top"], searched.n, searched.max_candidates) == ("model", 2, 48, 6)


def test_resuming_another_search_or_none_is_refused_by_name(tmp_path):
    space = _guided_space()
    with Store(tmp_path / "s.sqlite") as store:
        found = explore(space, "random", max_candidates=1, store=store, runner=Timed(), progress=False, seed=1)
        with pytest.raises(ValueError, match=r"has no search 7; its searches: 1$"):
            explore(space, "random", store=store, runner=Timed(), progress=False, resume=7)
        with pytest.raises(ValueError, match=r"search 1 in .* is another search: seed 1 vs 2"):
            explore(space, "random", store=store, runner=Timed(), progress=False, seed=2, resume=found.search)
    with pytest.raises(ValueError, match="needs the store"):
        explore(space, "random", runner=Timed(), progress=False, resume=True)


def test_the_command_resumes_the_random_order_where_max_candidates_stopped_it(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    argv = ["explore", "--n", "64", "--families", "classic", "--axis", "tile=16,32", "--strategy", "random",
            "--seed", "5", "--store", str(store), *FAST, "--max-candidates"]
    order = [c.key for c in order_candidates(Space(64, families=("classic",), values={"tile": [16, 32]}), "random",
                                             seed=5)]
    assert len(order) > 5
    assert main([*argv, "2"]) == 0
    assert "search 1: 2 visited, not finished: --resume 1 continues it" in capsys.readouterr().out
    assert main([*argv, "3", "--resume"]) == 0
    out, err = capsys.readouterr()
    assert "resuming search 1: 2 visited, continuing" in err
    assert "search 1: 5 visited (2 before), not finished" in out and "budget used: 3 of 3 candidates" in out
    with Store(store) as opened:
        assert opened.visited(1) == order[:5] and len(opened.searches()) == 1
    assert main([*argv, "3"]) == 0  # without --resume: a search of its own, the store's records reused
    assert "3 from the store" in capsys.readouterr().out


# ---------------------------------------------------------------- 2. nothing written unasked


def test_explore_writes_nothing_but_the_store_it_is_given(tmp_path, monkeypatch):
    cwd, elsewhere = tmp_path / "cwd", tmp_path / "elsewhere"
    cwd.mkdir(), elsewhere.mkdir()
    monkeypatch.chdir(cwd)
    assert main(["explore", "--n", "64", "--families", "classic", "--axis", "tile=32", "--axis", "stages=I-SD-DD",
                 "--axis", "runtime=barrier", "--store", str(elsewhere / "s.sqlite"), *FAST]) == 0
    assert os.listdir(cwd) == [] and os.listdir(elsewhere) == ["s.sqlite"]


# ---------------------------------------------------------------- 3. budgets


def test_a_budget_judges_the_next_candidate_by_the_recent_ones():
    now = time.perf_counter()
    assert Budget(1.0, started=now - 0.4, spent=[0.5]).allows_measuring()
    assert not Budget(1.0, started=now - 0.6, spent=[0.5]).allows_measuring()  # 0.4 s left, 0.5 s needed
    assert Budget(1.0, started=now - 0.6, spent=[5.0, 0.1, 0.1, 0.1]).allows_measuring()  # the first forgotten
    assert not Budget(1.0, started=now - 1.1).allows_visit() and Budget(1.0, started=now - 0.9).allows_visit()
    assert not Budget(candidates=2, visited=2).allows_visit()
    for bad in (dict(seconds=-1.0), dict(seconds=0.0), dict(candidates=0)):
        with pytest.raises(ValueError, match="budget is"):
            Budget(**bad)


def test_a_time_budget_ends_the_run_within_one_candidate(tmp_path):
    space = Space(64, families=("generalized",), values={"tile": [16], "runtime": ["barrier"]})
    assert len(space) > 10  # (and what reading the space costs is paid before the clock starts)
    started = time.perf_counter()
    with Store(tmp_path / "s.sqlite") as store:
        found = explore(space, "random", budget_seconds=1.5, store=store, runner=Timed(pause=0.4), progress=False,
                        started=started)
    elapsed = time.perf_counter() - started
    assert not found.finished and 1 <= found.budget.visited <= 4
    assert elapsed <= 1.5 + max(found.budget.spent)
    assert found.budget.report().startswith("budget used: ") and "of 1.5 s" in found.budget.report()


def test_time_spent_before_the_search_counts_against_its_budget(tmp_path):
    found = explore(_guided_space(), "random", budget_seconds=5, runner=Timed(), progress=False,
                    started=time.perf_counter() - 6)
    assert found.records == [] and not found.finished


def test_the_command_prints_the_budget_it_used(tmp_path, capsys):
    started = time.perf_counter()
    assert main(["explore", "--n", "64", "--families", "classic", "--axis", "tile=16,32", "--strategy", "random",
                 "--budget", "3s", "--store", str(tmp_path / "s.sqlite"), *FAST]) == 0
    elapsed = time.perf_counter() - started
    used = re.search(r"budget used: ([\d.]+) s of 3 s \(\d+%\)", capsys.readouterr().out)
    assert used and float(used.group(1)) <= elapsed + 0.05  # printed to 0.1 s


# ---------------------------------------------------------------- 4. impossible values


@pytest.mark.parametrize("arguments, refusal", [
    (["--families", "generalized", "--axis", "kappa=2,99"],
     "kappa=99 is out of range at n=256: kappa takes 1..Q, Q = 8 at tile 32, 4 at tile 64, 2 at tile 128, "
     "1 at tile 256"),
    (["--families", "generalized", "--axis", "kappa=x"], "generalized parameter kappa must be an int in 1..Q"),
    (["--axis", "tile=0"], "tile=0 is out of range at n=256: tile takes 1..256"),
    (["--axis", "tile=64,512"], "tile=512 is out of range at n=256: tile takes 1..256"),
    (["--families", "recursive", "--axis", "base=16"], "base is the recursive family's block size, which the tile "
                                                       "axis sets: narrow it as tile=16"),
    (["--axis", "runtime=fast"], "runtime cannot be fast here; its values: barrier, dataflow, dataflow-shared"),
    (["--axis", "variant=quick"], "generalized parameter variant must be one of seed, fused, got 'quick'"),
    (["--families", "classic,blocked"], "unknown families ['blocked']"),
    (["--max-candidates", "-3"], "argument --max-candidates: an int of at least 1, got '-3'"),
    (["--budget=-5s"], "argument --budget: a budget is a positive time like 300s, 5m or 1h, got '-5s'"),
    (["--budget", "0"], "argument --budget: a budget is a positive time"),
])
def test_an_impossible_value_is_one_line_naming_it_and_the_valid_range(tmp_path, capsys, arguments, refusal):
    try:
        status = main(["explore", "--n", "256", "--store", str(tmp_path / "s.sqlite"), *FAST, *arguments])
    except SystemExit as parser_exit:  # argparse's own refusals
        status = parser_exit.code
    assert status == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("polyfw: error: ") and refusal in err, err
    assert not (tmp_path / "s.sqlite").exists()


def test_explore_refuses_an_impossible_value_too():
    with pytest.raises(ValueError, match=r"kappa=9 is out of range at n=64: kappa takes 1..Q, Q = 4 at tile 16"):
        explore(Space(64, families=("generalized",), values={"tile": [16], "kappa": [9]}), progress=False)


# ---------------------------------------------------------------- 5. --compare-store


def _put(store: Store, machine: str, seconds: dict[str, float], n: int = 64) -> None:
    for key, value in seconds.items():
        store.put(Record(machine, "cpu", "float32", n, key, "classic", {}, "measured", seconds=value))


def test_two_stores_compare_candidate_by_candidate_and_by_ranking(tmp_path, capsys):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    first = {"classic:tile=8": 4.0, "classic:tile=16": 2.0, "classic:tile=32": 1.0, "classic:tile=64": 3.0}
    second = {"classic:tile=8": 6.0, "classic:tile=16": 1.0, "classic:tile=32": 3.0, "classic:tile=128": 0.5}
    with Store(a) as store:
        _put(store, "m1", first)
        _put(store, "m1", {"classic:tile=8": 9.0}, n=128)  # measured in A only: not compared
    with Store(b) as store:
        _put(store, "m2", second)
    before = a.read_bytes()
    assert main(["explore", "--compare-store", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "space:" not in out and a.read_bytes() == before
    assert "cpu float32 n=64: 3 measured on both" in out and "n=128" not in out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("  classic:")}
    assert rows["classic:tile=8"] == ["4.0000", "6.0000", "1.50"] and rows["classic:tile=16"][2] == "0.50"
    tau = kendalltau([4.0, 2.0, 1.0], [6.0, 1.0, 3.0])[0]
    assert f"median B/A 1.50; Kendall tau between the rankings {tau:.3f}" in out
    assert "A's best: classic:tile=32 (1.0000 s): rank 3 of 4 in B (3.0000 s)" in out
    assert "B's best: classic:tile=128 (0.5000 s): not measured in A" in out


def test_a_machine_or_a_search_in_a_store_is_one_side(tmp_path, capsys):
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        _put(store, "m1", {"classic:tile=8": 2.0, "classic:tile=16": 1.0})
        _put(store, "m2", {"classic:tile=8": 1.0, "classic:tile=16": 4.0})
        search = store.begin(StoredSearch("m2", "cpu", "float32", 64, {}, "random", {}, 0))
        store.visit(search.id, "classic:tile=8")
    assert main(["explore", "--compare-store", f"{path}#m1", f"{path}#m2"]) == 0
    assert "n=64: 2 measured on both" in capsys.readouterr().out
    assert main(["explore", "--compare-store", f"{path}#m1", f"{path}@{search.id}"]) == 0
    assert "n=64: 1 measured on both" in capsys.readouterr().out
    assert main(["explore", "--compare-store", str(path), f"{path}#m2"]) == 1
    assert "holds the records of 2 machines (m1, m2): pick one as" in capsys.readouterr().err
    assert main(["explore", "--compare-store", str(tmp_path / "none.sqlite"), str(path)]) == 1
    assert "no explore store at" in capsys.readouterr().err and not (tmp_path / "none.sqlite").exists()


# ---------------------------------------------------------------- 6. the best line into solve


@pytest.mark.parametrize("family, narrowed", [
    ("classic", ["tile=16", "stages=I-SD-DD"]),
    ("generalized", ["tile=16", "kappa=2", "reverse=ascending", "part_order=forward-rest-reverse", "variant=fused"]),
    ("recursive", ["tile=16", "paired=false"]),
])
@pytest.mark.parametrize("runtime", ["barrier", "dataflow"])
def test_the_best_line_pastes_into_solve_schedule_and_solves_exactly(tmp_path, capsys, family, narrowed, runtime):
    axes = [item for axis in [*narrowed, "step_order=LeadBlock-LeadRowCol", f"runtime={runtime}"]
            if family == "generalized" or not axis.startswith("step_order") for item in ("--axis", axis)]
    assert main(["explore", "--n", "64", "--families", family, *axes, "--strategy", "exhaustive",
                 "--max-candidates", "1", "--store", str(tmp_path / "s.sqlite"), *FAST]) == 0
    out = capsys.readouterr().out
    best_line = re.search(r"^best: (\S+) \(.*polyfw solve --schedule takes it as is\)$", out, re.MULTILINE)
    assert best_line, out
    text = best_line.group(1)
    with Store(tmp_path / "s.sqlite") as store:
        (best,) = store.records()
    assert chosen_runtime(text, 64, "float32") == runtime
    assert resolve_schedule(text, 64, "float32").tree_text() == resolve_schedule(best.key.split(";")[0], 64,
                                                                                  "float32").tree_text()
    graph = random_graph(64, m=256, seed=4)  # Problem.random's graph: its exact distances are known
    (tmp_path / "g.gr").write_text(f"p sp 64 {len(graph.source)}\n" + "".join(
        f"a {s + 1} {t + 1} {int(w)}\n" for s, t, w in zip(graph.source, graph.target, graph.weight)))
    assert main(["solve", str(tmp_path / "g.gr"), "-o", str(tmp_path / "d.npy"), "--schedule", text,
                 "--dtype", "float32"]) == 0
    assert np.array_equal(np.load(tmp_path / "d.npy"), Problem.random(64, "float32", seed=4).expected)


def test_the_model_strategy_measures_when_its_ranking_deadline_passed_before_it_began():
    # issue 53's new user: preparing took more than the ranking's quarter of the budget, so the model
    # ranked nothing; it used to report an empty search as finished. Now it measures the stratified
    # order until the budget is spent.
    runner = Timed(pause=0.05)
    found = explore(_guided_space(), "model", budget_seconds=4.0, started=time.perf_counter() - 1.5,
                    progress=False, runner=runner, repeats=1)
    whole = len(list(_guided_space()))
    assert len(found.measured) >= min(whole, 4) and len(runner.ran) == len(found.measured)
    assert found.ranking_seconds < 1.0 and found.prepared_seconds >= 1.5
    # finished only when every candidate was visited; else the budget stopped it, with time spent
    assert found.finished == (len(found.records) == whole)
    assert found.finished or found.budget.left() < found.budget.next_candidate() + 0.5


def test_the_cli_with_a_stored_calibration_and_a_short_budget_measures_and_says_where_the_time_went(
        tmp_path, capsys):
    from polyfw.machine import calibrations
    from polyfw.explore.model import calibration_for
    import numba

    store = tmp_path / "s.sqlite"
    calibrations.save(calibration_for("float32", numba.get_num_threads()), store)  # as a first run leaves it
    assert main(["explore", "--n", "96", "--budget", "12", "--store", str(store), *FAST]) == 0
    out = capsys.readouterr().out
    measured = int(re.search(r"(\d+) measured, \d+ from the store", out).group(1))
    assert measured >= 3 and "calibrating" not in out
    assert re.search(r"search \d+: \d+ visited, (finished|not finished: --resume \d+ continues it)", out)


def test_a_budget_spent_mostly_before_measuring_is_said():
    from polyfw.explore.search import Exploration

    found = Exploration([], "model", 1.0, budget=Budget(10.0), prepared_seconds=4.5, ranking_seconds=1.0)
    assert found.overhead_note().startswith("preparing (the problem, the ceiling, calibration, the model) took 4.5 s "
                                            "and ranking 1.0 s of the 10 s budget: most of it went before measuring")
    assert Exploration([], "model", 1.0, budget=Budget(10.0), prepared_seconds=2.0).overhead_note() is None
