"""polyfw explore: the space read from the declarations, the store, the strategies, the model's
quality, the tuning table, and the CLI; all at sizes that run in seconds."""
import csv
import itertools
import json
import math

import numpy as np
import pytest
from scipy.stats import kendalltau

import polyfw
from polyfw.cli import main
from polyfw.explore import Exploration, Problem, explore, order_candidates
from polyfw.configuration import auto_configuration, parse_schedule, resolve_schedule, write_winner
from polyfw.explore.space import Space, label
from polyfw.explore.store import Record, Store
from polyfw.machine.tuning import (EVERY_LARGER_N, machine_tuning, merge_winner, read_table, same_kind_keys,
                                   shipped_path, tuning_path, tuning_table)
from codegen.register_blocks import cpu_key
from schedules import build
from scipy.sparse.csgraph import floyd_warshall as scipy_floyd_warshall
from polyfw.graphs import as_float_distances, random_graph


def test_the_space_takes_each_axis_from_the_declared_parameters():
    space = Space(24, families=("generalized",), values={"tile": [8]}, run_axes=())
    candidates = list(space)
    seen = {name: {dict(c.params)[name] for c in candidates} for name in ("kappa", "variant", "reverse")}
    assert seen == {"kappa": {1, 2, 3}, "variant": {"seed", "fused"}, "reverse": {"descending", "ascending"}}
    # the orders the prover refutes are left out by rule (schedules.order_rules), and counted
    assert {dict(c.params)["part_order"] for c in candidates} == {
        ("forward", "reverse", "rest"), ("forward", "rest", "reverse")}
    assert {dict(c.params)["step_order"] for c in candidates} == {("LeadBlock", "LeadRowCol")}
    assert len(candidates) == len({c.key for c in candidates}) == 3 * 2 * 2 * 2
    assert space.pruned() == 3 * 2 * 2 * 10


def test_a_narrowed_axis_and_the_cpu_runtimes():
    space = Space(64, families=("generalized", "recursive"), values={"tile": [16, 32], "kappa": [1, 4, 99],
                                                                     "variant": ["fused"]})
    kappas = {(c.size, dict(c.params)["kappa"]) for c in space if c.family == "generalized"}
    assert kappas == {(16, 1), (16, 4), (32, 1)}  # kappa 4 > Q = 2 blocks at tile 32, 99 never fits
    assert {dict(c.options)["runtime"] for c in space} == {"barrier", "dataflow", "dataflow-shared"}
    assert {c.size for c in space if c.family == "recursive"} == {16, 32}


def test_an_unknown_axis_or_family_is_refused_by_name():
    with pytest.raises(ValueError, match=r"no axis named kapa in this space; its axes: .*kappa"):
        Space(64, values={"kapa": [1]})
    with pytest.raises(ValueError, match=r"unknown families \['blocked'\]"):
        Space(64, families=("blocked",))


def test_a_candidate_key_is_schedule_text_that_builds_the_same_schedule():
    for candidate in Space(40, values={"tile": [16], "kappa": [2]}):
        family, params = parse_schedule(candidate.schedule_text)
        assert family == candidate.family and params.get("runtime", "barrier") == dict(candidate.options)["runtime"]
        params.pop("runtime", None)
        size = params.pop("tile", None) or params["base"]
        assert size == 16
        expected = build(family, 40, None if family == "recursive" else 16, **params)
        assert resolve_schedule(candidate.schedule_text, 40, "float32").tree_text() == expected.tree_text()


def test_a_label_leaves_out_the_defaults():
    key = ("generalized:tile=32,kappa=3,variant=seed,reverse=ascending,step_order=LeadBlock-LeadRowCol,"
           "part_order=forward-reverse-rest;runtime=barrier")
    assert label(key) == "generalized:tile=32,kappa=3,reverse=ascending"
    assert label("recursive:base=8,paired=false;runtime=dataflow") == "recursive:base=8,paired=false,runtime=dataflow"


def test_neighbours_differ_in_one_axis_by_one_step():
    space = Space(64, families=("generalized",), values={"tile": [8, 16, 32], "variant": ["seed"]}, run_axes=())
    centre = next(c for c in space if c.size == 16 and dict(c.params)["kappa"] == 2
                  and dict(c.params)["reverse"] == "descending"
                  and dict(c.params)["part_order"] == ("forward", "reverse", "rest")
                  and dict(c.params)["step_order"] == ("LeadBlock", "LeadRowCol"))
    around = space.neighbours(centre)
    keys = {c.key for c in space}
    for neighbour in around:
        assert neighbour.key in keys
        changed = [k for k in ("tile", "kappa", "reverse", "part_order", "step_order")
                   if (neighbour.size if k == "tile" else dict(neighbour.params)[k])
                   != (centre.size if k == "tile" else dict(centre.params)[k])]
        assert len(changed) == 1
    sizes_and_kappas = {(c.size, dict(c.params)["kappa"]) for c in around}
    assert {(8, 2), (32, 2), (16, 1), (16, 3)} <= sizes_and_kappas


def _record(key: str, seconds: float | None, predicted: float | None, status: str = "measured") -> Record:
    return Record("m", "cpu", "float32", 16, key, "classic", {"tile": 4}, status, seconds=seconds,
                  predicted_seconds=predicted)


def test_the_store_keeps_records_across_connections_and_exports_them(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.put(_record("classic:tile=4", 0.5, 0.4))
        store.put(_record("classic:tile=8", None, None, "illegal"))
        store.put(_record("classic:tile=4", 0.25, 0.4))  # the same machine and candidate: replaced
    with Store(path) as store:
        assert [(r.key, r.seconds, r.status) for r in store.records()] == [
            ("classic:tile=8", None, "illegal"), ("classic:tile=4", 0.25, "measured")]
        assert store.get("m", "cpu", "float32", 16, "classic:tile=4").params == {"tile": 4}
        assert store.get("other machine", "cpu", "float32", 16, "classic:tile=4") is None
        assert store.export(tmp_path / "s.csv") == 2 and store.export(tmp_path / "s.json") == 2
        with pytest.raises(ValueError, match=r"\.csv or \.json"):
            store.export(tmp_path / "s.txt")
    rows = list(csv.DictReader(open(tmp_path / "s.csv")))
    assert {r["key"] for r in rows} == {"classic:tile=4", "classic:tile=8"}
    assert {r["key"]: r["seconds"] for r in json.loads((tmp_path / "s.json").read_text())}["classic:tile=4"] == 0.25


def test_the_models_quality_is_kendalls_tau_and_the_regret():
    seconds = [1.0, 2.0, 3.0, 4.0, 5.0]
    for predicted, regret in (([0.1, 0.2, 0.3, 0.4, 0.5], 0.0), ([0.5, 0.4, 0.3, 0.2, 0.1], 4.0),
                              ([0.3, 0.1, 0.5, 0.2, 0.4], 1.0)):
        records = [_record(f"c{i}", s, p) for i, (s, p) in enumerate(zip(seconds, predicted))]
        quality = Exploration(records, "model", 0.0).quality()
        assert quality["kendall_tau"] == pytest.approx(kendalltau(predicted, seconds)[0])
        assert quality["regret"] == pytest.approx(regret) and quality["pairs"] == 5
    assert Exploration([_record("c", 1.0, 1.0)], "model", 0.0).quality()["kendall_tau"] is None


def test_explore_proves_verifies_times_and_stores_and_a_rerun_reads_the_store(tmp_path):
    every_order = ["-".join(order) for order in itertools.permutations(("I", "SD", "DD"))]
    space = Space(24, families=("classic",), values={"tile": [8, 12], "stages": every_order}, run_axes=())
    with Store(tmp_path / "s.sqlite") as store:
        first = explore(space, "exhaustive", store=store, repeats=1, progress=False)
        assert len(first.records) == 12 and first.skipped == 0
        # only I-SD-DD is legal; the checker's witness is the refused candidates' note
        legal = [r for r in first.records if r.status == "measured"]
        assert [tuple(r.params["stages"]) for r in legal] == [("I", "SD", "DD")] * 2
        assert all("dependence" in r.note for r in first.records if r.status == "illegal")
        assert all(r.seconds > 0 and len(r.times) == 1 and r.predicted_seconds > 0 and "S[" not in r.tree
                   and "T[" in r.tree for r in legal)
        assert all(r.machine_description["threads"] >= 1 for r in first.records)
        again = explore(space, "exhaustive", store=store, repeats=1, progress=False)
        assert again.skipped == 12 and [r.key for r in again.records] == [r.key for r in first.records]
        assert len(store.records()) == 12


def test_a_runner_with_several_slots_visits_and_stores_as_one_that_runs_them_in_turn(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from polyfw.explore import RunHere

    class Slots(RunHere):
        """Three candidates in flight, finished by threads in whatever order they end."""

        slots = 3

        def __init__(self, pool):
            super().__init__("cpu")
            self.pool, self.started = pool, []

        def submit(self, schedule, recipe, candidate, problem, repeats):
            self.started.append(candidate.key)
            return self.pool.submit(self, schedule, recipe, candidate, problem, repeats)

    space = Space(32, families=("classic", "generalized"), values={"tile": [8, 16], "variant": ["seed"]})
    alone = explore(space, "random", max_candidates=9, repeats=1, progress=False, seed=3)
    with ThreadPoolExecutor(3) as pool, Store(tmp_path / "s.sqlite") as store:
        runner = Slots(pool)
        together = explore(space, "random", max_candidates=9, repeats=1, progress=False, seed=3, runner=runner,
                           store=store)
        assert sorted(r.key for r in store.records()) == sorted(r.key for r in together.records)
    assert [r.key for r in together.records] == [r.key for r in alone.records]  # visited in the order proposed
    assert [r.status for r in together.records] == [r.status for r in alone.records]
    assert runner.started == [r.key for r in together.records if r.status == "measured"]
    assert together.budget.visited == 9 and not together.finished


def test_a_checker_bug_would_be_reported_as_wrong_not_measured():
    problem = Problem.random(12, "int32")
    problem.expected[3, 4] += 1  # a reference the schedule cannot match, as if the proof had been wrong
    found = explore(Space(12, families=("classic",), values={"tile": [4], "stages": ["I-SD-DD"]}, run_axes=()),
                    "exhaustive", repeats=1, progress=False, problem=problem)
    assert [r.status for r in found.records] == ["wrong"] and "a[3, 4]" in found.records[0].note


def test_the_model_strategy_measures_its_top_then_refines(tmp_path):
    space = Space(32, families=("classic", "generalized"), values={"tile": [8, 16], "variant": ["seed"],
                                                                  "reverse": ["descending"],
                                                                  "step_order": ["LeadBlock-LeadRowCol"],
                                                                  "part_order": ["forward-reverse-rest"],
                                                                  "stages": ["I-SD-DD"]}, run_axes=())
    ranked = order_candidates(space, "model")
    assert len(ranked) == len(space) == 8
    found = explore(space, "model", top=2, max_candidates=4, repeats=1, progress=False)
    assert [r.key for r in found.records[:2]] == [c.key for c in ranked[:2]]
    assert 2 < len(found.records) <= 4 and all(r.status == "measured" for r in found.records)


def test_every_shipped_cpu_entry_has_rows_for_every_min_plus_dtype_each_proved_where_it_stands():
    # a CPU's own rows, else the generic ones (polyfw.machine.tuning.tuned_rows); a row of a family
    # with a parametric tree proved legal over every size it stands for, as write_winner proves a
    # winner; one without (recursive) stands for the one size it was proved at, and is proved again
    # before it runs there, as every schedule is (16 s cold at n = 4096: not here)
    from polyfw.configuration import build_configuration, proved_sizes

    table = read_table(shipped_path())
    entries = {"generic": table["cpu"], **{key: entry.get("cpu", {}) for key, entry in table["by_cpu"].items()}}
    checked = set()
    for name, rows in entries.items():
        for dtype in ("float32", "float64", "int32", "int16"):
            assert rows.get(dtype) or table["cpu"].get(dtype), f"{name} has no {dtype} rows"
        for dtype, dtype_rows in rows.items():
            for up_to, family, params, (first, last) in dtype_rows:
                try:
                    build_configuration(family, dict(params), None)
                except ValueError:  # no parametric tree
                    assert first == last <= up_to, (name, dtype, family, params, first, last)
                    continue
                if (family, str(params), up_to) not in checked:
                    checked.add((family, str(params), up_to))
                    proved = proved_sizes(family, params, min(up_to, 4096))
                    assert proved[0] <= first and last <= proved[1], (name, dtype, family, params, proved)


def test_a_winner_goes_into_the_tuning_table_solve_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYFW_TUNING", str(tmp_path / "tuning.json"))
    assert read_table(tuning_path()) == {}
    write_winner(64, "float32", "cpu", "generalized", {"tile": 16, "kappa": 2}, cpu_key(), "a CPU")
    write_winner(32, "float32", "cpu", "classic", {"tile": 8}, cpu_key(), "a CPU")
    rows = tuning_table()["by_cpu"][cpu_key()]["cpu"]["float32"]
    every = [1, EVERY_LARGER_N]  # both proved for every n
    assert rows == [[32, "classic", {"tile": 8}, every], [64, "generalized", {"tile": 16, "kappa": 2}, every],
                    [EVERY_LARGER_N, "generalized", {"tile": 16, "kappa": 2}, every]]
    assert auto_configuration(20, "float32") == ("classic", {"tile": 8})
    assert auto_configuration(50, "float32") == ("generalized", {"tile": 16, "kappa": 2})


def test_a_winner_legal_only_for_some_sizes_is_applied_only_there(tmp_path, monkeypatch):
    # classic stages SD-DD-I are legal while one tile covers the graph: isl says up to n = 64
    monkeypatch.setenv("POLYFW_TUNING", str(tmp_path / "tuning.json"))
    write_winner(64, "float32", "cpu", "classic", {"tile": 64, "stages": ("SD", "DD", "I")}, cpu_key(), "a CPU")
    rows = read_table(tuning_path())["by_cpu"][cpu_key()]["cpu"]["float32"]
    assert [row[3] for row in rows] == [[1, 64], [1, 64]]
    assert auto_configuration(64, "float32") == ("classic", {"tile": 64, "stages": "SD-DD-I"})
    family, params = auto_configuration(512, "float32")
    assert params.get("stages", "I-SD-DD") == "I-SD-DD"  # the shipped table's or the default: legal
    graph = random_graph(512, 512 * 8, seed=2)
    expected = scipy_floyd_warshall(graph.to_sparse().tocsr())
    assert np.array_equal(as_float_distances(polyfw.solve(graph, dtype="float32")), expected)
    # a recursive winner (its tree needs a concrete n) is proved at the size measured only
    write_winner(48, "float32", "cpu", "recursive", {"base": 8}, cpu_key(), "a CPU")
    assert read_table(tuning_path())["by_cpu"][cpu_key()]["cpu"]["float32"][0][3] == [48, 48]


def test_a_users_tuning_goes_to_the_user_data_directory_never_into_the_package(tmp_path, monkeypatch):
    monkeypatch.delenv("POLYFW_TUNING", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    shipped = shipped_path().read_bytes()
    written = write_winner(40, "int32", "cpu", "classic", {"tile": 8}, cpu_key(), "a CPU")
    assert written == tmp_path / "polyfw" / "tuning.json" and shipped_path().read_bytes() == shipped
    assert auto_configuration(40, "int32") == ("classic", {"tile": 8})  # the user's row first
    assert tuning_table()["about"] == read_table(shipped_path())["about"]  # the shipped rows under it


def test_a_cpu_of_the_same_kind_with_other_features_reads_its_rows():
    # two guests of one CPU model see different feature sets (a hypervisor's choice): the digest
    # differs, the LLVM name and ISA do not, and neither does the fastest schedule
    keys = ["znver3-avx2-000000000000", "emeraldrapids-avx512-bbb", "emeraldrapids-avx512-aaa"]
    assert same_kind_keys(keys, "emeraldrapids-avx512-ccc") == ["emeraldrapids-avx512-aaa",
                                                                "emeraldrapids-avx512-bbb"]
    assert same_kind_keys(keys, "emeraldrapids-avx512-bbb")[0] == "emeraldrapids-avx512-bbb"
    assert same_kind_keys(keys, "emeraldrapids-avx2-aaa") == []  # narrower kernels: another kind
    kind = cpu_key().rsplit("-", 1)[0]
    table = {"cpu": {"int32": [["generic"]]},
             "by_cpu": {f"{kind}-elsewhere": {"cpu": {"int32": [["same kind"]]}},
                        f"not{kind}-x": {"cpu": {"int32": [["other"]]}}}}
    assert machine_tuning(table, "cpu") == {"int32": [["same kind"]]}
    table["by_cpu"][cpu_key()] = {"cpu": {"int32": [["this one"]]}}
    assert machine_tuning(table, "cpu") == {"int32": [["this one"]]}


def test_merge_winner_replaces_the_entry_of_that_n():
    every = [1, EVERY_LARGER_N]
    entries = [[1024, "classic", {"tile": 128}, every], [EVERY_LARGER_N, "classic", {"tile": 256}, every]]
    assert merge_winner(entries, 512, "recursive", {"base": 64}, (512, 512)) == [
        [512, "recursive", {"base": 64}, [512, 512]], *entries]
    assert merge_winner(entries, 1024, "recursive", {"base": 64}, (1024, 1024))[-2:] == [
        [1024, "recursive", {"base": 64}, [1024, 1024]], [EVERY_LARGER_N, "recursive", {"base": 64}, [1024, 1024]]]


def test_the_explore_command_writes_the_store_the_plot_and_the_tuning_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("POLYFW_TUNING", str(tmp_path / "tuning.json"))
    store, plot = tmp_path / "s.sqlite", tmp_path / "e.png"
    argv = ["explore", "--n", "24", "--families", "classic,recursive", "--axis", "tile=8,12", "--axis",
            "stages=I-SD-DD", "--strategy", "exhaustive", "--repeats", "1", "--store", str(store), "--plot",
            str(plot), "--tune", "--no-ceiling", "--export", str(tmp_path / "s.csv")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "cost model: Kendall tau" in out and "wrote" in out and plot.stat().st_size > 10_000
    assert len(list(csv.DictReader(open(tmp_path / "s.csv")))) == 2 * 3 + 2 * 2 * 3  # classic: 2 tiles x 3 runtimes; recursive: also paired or not
    rows = read_table(tuning_path())["by_cpu"][cpu_key()]["cpu"]["float32"]
    assert rows[0][0] == 24 and rows[0][1] in ("classic", "recursive")
    assert f"for n <= 24, proved legal for n in {rows[0][3][0]}..{rows[0][3][1]}" in out


def test_every_measured_record_is_exact_against_the_naive_kernel():
    problem = Problem.random(20, "float32", seed=3)
    reference = problem.matrix.copy()
    from codegen import floyd_warshall_nest

    floyd_warshall_nest(reference)
    assert np.array_equal(reference, problem.expected)
    assert math.isinf(problem.matrix.max())


def test_the_cuda_simulator_is_a_target_of_the_same_exploration(tmp_path):
    """cudasim runs the cuda target's kernels (tiny n): its run axis is the kernel method, and classic's
    overlap (a GPU's second stream) is an axis there, not on the CPU."""
    space = Space(6, target="cudasim", families=("classic",), values={"tile": [3], "stages": ["I-SD-DD"]})
    assert {dict(c.options)["method"] for c in space} == {"R", "A", "B"}
    assert {dict(c.params)["overlap"] for c in space} == {True, False}
    assert "overlap" not in dict(next(iter(Space(6, families=("classic",), values={"tile": [3]}))).params)
    found = explore(space, "exhaustive", repeats=1, progress=False)
    assert [r.status for r in found.records] == ["measured"] * 6
    assert {r.target for r in found.records} == {"cudasim"}


def test_a_winner_with_orders_is_kept_as_text_and_solve_builds_it(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYFW_TUNING", str(tmp_path / "tuning.json"))
    winner = {"tile": 8, "kappa": 2, "variant": "seed", "reverse": "ascending",
              "step_order": ("LeadBlock", "LeadRowCol"), "part_order": ("forward", "reverse", "rest")}
    write_winner(32, "float32", "cpu", "generalized", winner, cpu_key(), "a CPU")
    stored = tuning_table()["by_cpu"][cpu_key()]["cpu"]["float32"][0][2]
    assert stored["step_order"] == "LeadBlock-LeadRowCol" and stored["part_order"] == "forward-reverse-rest"
    schedule = resolve_schedule("auto", 32, "float32")
    assert schedule.name == ("generalized(n=32, tile=8, kappa=2, variant=seed, part_order=forward-reverse-rest, "
                             "step_order=LeadBlock-LeadRowCol, reverse=ascending)")
    matrix = np.random.default_rng(0).integers(1, 9, (32, 32)).astype(np.float32)
    from polyfw import solve
    from codegen import floyd_warshall_nest

    expected = matrix.copy()
    np.fill_diagonal(expected, 0)
    floyd_warshall_nest(expected)
    assert np.array_equal(solve(matrix, dtype="float32"), expected)
