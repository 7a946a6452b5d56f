"""What a user meets first: the defaults take the fastest exact path, dense zeros are said
what they are, and odd inputs get an answer or one clear line."""
import logging
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import csgraph_from_dense
from scipy.sparse.csgraph import shortest_path as scipy_shortest_path

import polyfw
import polyfw.method
from polyfw.cli import main
from polyfw.graphs import GraphInputError, random_graph
from tiling.semirings import INT16_INF, INT32_INF


def road_like(n=60, seed=3):
    """A sparse graph with integer weights (a few arcs per vertex)."""
    return random_graph(n, 3 * n, weights=(1, 50), seed=seed).to_sparse().tocsr()


def test_no_options_computes_in_the_narrowest_exact_type_and_returns_what_scipy_returns(caplog):
    graph = road_like()  # 59 arcs of at most 50 on any path: below INT16_INF
    with caplog.at_level(logging.INFO, logger="polyfw"):
        got = polyfw.solve(graph)
    assert got.dtype == np.float64 and np.array_equal(got, scipy_shortest_path(graph))
    assert f"dtype='auto' chose int16: integer weights whose path lengths stay below INT16_INF = {INT16_INF}" \
        in caplog.text
    assert "method='auto' chose" in caplog.text and got.method_choice is not None
    heavier = road_like() * 20  # up to 59 x 1000: past INT16_INF, far below INT32_INF
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="polyfw"):
        assert np.array_equal(polyfw.solve(heavier), scipy_shortest_path(heavier))
    assert f"dtype='auto' chose int32: integer weights whose path lengths stay below INT32_INF = {INT32_INF}" \
        in caplog.text


def test_fractional_or_huge_integer_weights_stay_in_float64(caplog):
    fractional = road_like().astype(np.float64) * 0.5
    with caplog.at_level(logging.INFO, logger="polyfw"):
        got = polyfw.solve(fractional)
    assert "dtype='auto' chose float64: fractional weights" in caplog.text
    assert np.array_equal(got, scipy_shortest_path(fractional))
    huge = road_like() * 10**8
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="polyfw"):
        assert np.array_equal(polyfw.solve(huge), scipy_shortest_path(huge))
    assert f"chose float64: integer weights whose path lengths may pass INT32_INF = {INT32_INF}" in caplog.text


def test_a_named_dtype_is_computed_in_and_returned():
    got = polyfw.solve(road_like(), dtype="int32", method="dense")
    assert got.dtype == np.int32


def test_method_auto_weighs_dense_against_sparse_at_the_chosen_type(monkeypatch):
    plan_module = sys.modules["polyfw.plan"]
    dense_graph = random_graph(40, 40 * 39, seed=1).to_sparse().tocsr()
    assert polyfw.solve(dense_graph).method_choice.method == "dense"
    asked = []
    real = plan_module.choose_method
    monkeypatch.setattr(plan_module, "_PLANS", {})  # (a plan made earlier for the graph would not choose again)
    monkeypatch.setattr(plan_module, "choose_method", lambda n, m, dtype, rates, **given: asked.append((n, m, dtype))
                        or real(n, m, dtype, {"dense": {dtype: 1e6}}, **given))  # a slow dense rate: sparse wins
    graph = road_like()
    got = polyfw.solve(graph)
    assert asked == [(60, graph.nnz, "int16")] and got.method_choice.method == "sparse"
    assert np.array_equal(got, scipy_shortest_path(graph))
    # a schedule asked for is Floyd-Warshall by that schedule
    assert not hasattr(polyfw.solve(road_like(), schedule="classic:tile=16"), "method_choice") or \
        polyfw.solve(road_like(), schedule="classic:tile=16").method_choice is None


def grid(side: int) -> sp.csr_array:
    """A side x side grid of unit arcs both ways: a mesh whose nested-dissection order leaves blocked
    FW few tile-layers to run."""
    vertex = np.arange(side * side).reshape(side, side)
    source = np.concatenate([vertex[:, :-1].ravel(), vertex[:-1, :].ravel()])
    target = np.concatenate([vertex[:, 1:].ravel(), vertex[1:, :].ravel()])
    n = side * side
    return sp.csr_array((np.ones(2 * len(source)), (np.concatenate([source, target]),
                                                   np.concatenate([target, source]))), shape=(n, n))


def test_method_auto_prices_a_dense_run_by_the_tile_layers_it_runs(monkeypatch):
    import polyfw.plan

    monkeypatch.setattr(polyfw.plan, "_PLANS", {})
    graph = grid(24)  # 576 vertices: reordered, 5 blocks of 128 a side
    got = polyfw.solve(graph)
    layers = got.method_choice.layers
    assert layers is not None and layers.tile == 128 and 0 < layers.dd < 1 and 0 < layers.panels < 1
    assert np.array_equal(got, scipy_shortest_path(graph))
    full = polyfw.method.choose_method(576, graph.nnz, "int16", polyfw.method.method_rates("cpu"), one_weight=True)
    assert got.method_choice.dense_seconds < full.dense_seconds
    # where the skips decide: searches priced between the full dense run and the one that skips
    def choice(rates, layers):
        return polyfw.method.choose_method(576, graph.nnz, "int16", rates, one_weight=True, layers=layers)

    rates = {"dense": {"int16": 1e9}}
    between = (choice(rates, None).dense_seconds * choice(rates, layers).dense_seconds) ** 0.5
    rates["breadth_first"] = 576 * (576 + graph.nnz) / between
    assert (choice(rates, None).method, choice(rates, layers).method) == ("sparse", "dense")
    # a dense matrix and a schedule asked for read no blocks
    assert polyfw.solve(graph.toarray()).method_choice.layers is None


def test_dense_zeros_are_arcs_with_one_warning_or_missing_arcs_with_null_value():
    matrix = np.array([[0, 4, 0, 0], [0, 0, 1, 0], [7, 0, 0, 2], [0, 3, 0, 0]], dtype=float)
    with pytest.warns(UserWarning, match="zeros off the diagonal: read as arcs of weight 0; pass null_value=0"):
        as_arcs = polyfw.solve(matrix)
    assert (as_arcs == 0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        as_missing = polyfw.solve(matrix, null_value=0)
        polyfw.solve(matrix, null_value=np.inf)
        polyfw.floyd_warshall(matrix)  # the scipy drop-in reads zeros as scipy does, silently
    assert np.array_equal(as_missing, scipy_shortest_path(csgraph_from_dense(matrix, null_value=0)))
    assert np.array_equal(as_missing, polyfw.floyd_warshall(matrix))


def test_an_empty_graph_has_an_empty_answer():
    for graph in (np.zeros((0, 0)), sp.csr_array((0, 0))):
        assert polyfw.solve(graph).shape == (0, 0)
    distances, pred = polyfw.solve(np.zeros((0, 0)), predecessors=True)
    assert distances.shape == pred.shape == (0, 0)


def test_sums_that_would_overflow_are_refused_not_returned_as_unreachable():
    matrix = np.array([[0, 1e308, np.inf], [np.inf, 0, 1e308], [np.inf, np.inf, 0]])
    with pytest.raises(GraphInputError, match=r"weights up to 1e\+308 over 3 vertices: a path sum can overflow float64"):
        polyfw.solve(matrix)
    with pytest.raises(GraphInputError, match="overflow float32"):
        polyfw.solve(np.array([[0, 2e38, np.inf], [np.inf, 0, 2e38], [np.inf, np.inf, 0]]), dtype="float32")


def test_a_narrowing_dtype_that_rounds_a_weight_warns():
    with pytest.warns(UserWarning, match=r"dtype float32 rounds 1 weight\(s\), e.g. 16777217.0 to 16777216.0"):
        polyfw.solve(np.array([[0, 2.0**24 + 1], [np.inf, 0]]), dtype="float32")


def test_a_file_in_the_wrong_format_names_the_file_and_the_format(tmp_path, capsys):
    binary = tmp_path / "g.gr"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(GraphInputError, match=rf"^{binary}: not text; a \.gr file must be a DIMACS shortest-path"):
        polyfw.solve(str(binary))
    assert main(["solve", str(binary), "-o", str(tmp_path / "d.npy")]) == 1
    assert capsys.readouterr().err.startswith(f"polyfw: error: {binary}: not text")


def test_vertices_are_numbered_as_the_file_numbers_them(tmp_path, capsys):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 3 2\na 1 2 5\na 2 3 1\n")
    assert main(["sssp", str(graph), "--source", "99", "-o", str(tmp_path / "d.npy")]) == 2
    assert "--source must be a vertex 1..3 as " in capsys.readouterr().err
    assert main(["sssp", str(graph), "--source", "3", "-o", str(tmp_path / "d.npy")]) == 0


WARN_TWICE = """
import warnings
from polyfw import solve  # (import polyfw alone loads nothing: generated code runs only after this)
from numba.core.errors import NumbaPerformanceWarning
warnings.warn(NumbaPerformanceWarning("parallel=True was specified but no transformation was possible\\n"
                                      'File "/root/.cache/polyfw/polyfw_cpu_0123.py", line 12'))
warnings.warn(NumbaPerformanceWarning("a user's own kernel"))
"""


def test_numbas_performance_warnings_about_generated_code_never_reach_the_user():
    # in a fresh interpreter: pytest keeps warning filters of its own around each test
    done = subprocess.run([sys.executable, "-W", "always", "-c", WARN_TWICE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "a user's own kernel" in done.stderr and "polyfw_cpu_0123" not in done.stderr


def test_the_cli_defaults_are_the_fast_exact_path(tmp_path):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 4 4\na 1 2 5\na 2 3 1\na 3 4 2\na 4 1 1\n")
    done = subprocess.run([sys.executable, "-m", "polyfw.cli", "solve", str(graph), "-o", str(tmp_path / "d.npy")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    saved = np.load(tmp_path / "d.npy")
    assert saved.dtype == np.float64 and saved[0, 3] == 8.0


def test_a_negative_cycle_in_a_file_is_named_as_the_file_numbers_vertices(tmp_path, capsys):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 4 3\na 1 2 1\na 2 4 -5\na 4 2 1\n")  # the cycle 2 -> 4 -> 2 (1 and 3 from 0)
    for command in (["solve", str(graph), "-o", str(tmp_path / "d.npy")],
                    ["sssp", str(graph), "--source", "1", "-o", str(tmp_path / "s.npy")]):
        assert main(command) == 1
        error = capsys.readouterr().err
        assert re.fullmatch(r"polyfw: error: negative cycle through vertex [24]: shortest paths are undefined\n",
                            error), error


def test_a_small_call_keeps_its_choice_until_the_tuning_table_changes(monkeypatch, tmp_path, caplog):
    """Per-call work is done once a process: a call like an earlier one gets the same plan (and its
    compiled schedule), logged as chosen; a changed tuning table is read at the next call."""
    import json

    from polyfw.graphs import summarize_weights
    from polyfw.plan import Asked, plan_for

    table = tmp_path / "tuning.json"
    monkeypatch.setenv("POLYFW_TUNING", str(table))
    weights = random_graph(12, 30, weights=(1, 9), seed=4).to_sparse().toarray()
    weights[weights == 0] = np.inf

    def tune(family: str, **params) -> None:
        row = [1000, family, {"tile": 4, **params}, [1, 10**9]]
        table.write_text(json.dumps({"cpu": {dtype: [row] for dtype in ("int16", "int32", "float32", "float64")}}))

    def chosen() -> str:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="polyfw"):
            assert np.array_equal(polyfw.solve(weights, method="dense"), scipy_shortest_path(weights))
        return re.search(r"schedule='auto' chose (\w+)", caplog.text)[1]

    tune("classic")
    assert chosen() == "classic" and chosen() == "classic"
    asked = Asked("min-plus", "cpu", "auto", "auto", None, None, False, "dense")
    summary = summarize_weights(weights)
    assert plan_for(asked, 12, summary, None, False) is plan_for(asked, 12, summary, None, False)
    tune("generalized", kappa=2)
    assert chosen() == "generalized"


@pytest.mark.parametrize("family, params, runtime", [("generalized", {"tile": 16, "kappa": 2}, None),
                                                     ("classic", {"tile": 16}, "dataflow")])
def test_predecessors_by_default_run_on_every_thread(monkeypatch, family, params, runtime):
    """A tuned schedule that would keep predecessors on one thread (tasks of a stage reading each other's blocks,
    or the dataflow runtime) gives way to classic at its tile on the barrier runtime, with the reason said."""
    import polyfw.plan
    from schedules.families import build

    monkeypatch.setattr(polyfw.plan, "resolve_schedule", lambda *args, **kwargs: build(family, 64, **params))
    monkeypatch.setattr(polyfw.plan, "chosen_runtime", lambda *args: runtime)
    reasons: list[str] = []
    compiled = polyfw.plan.compiled_for("auto", 64, polyfw.plan.MIN_PLUS, None, None, "cpu", "float32", True, reasons)
    assert not compiled.serial and compiled.name.startswith("classic") and "tile=16" in compiled.name
    assert "predecessors: classic, tile 16, barrier runtime" in reasons[-1]
    tuned = polyfw.plan.compiled_for("auto", 64, polyfw.plan.MIN_PLUS, None, None, "cpu", "float32", False, [])
    assert tuned.name.startswith(family)  # without predecessors the tuned schedule runs as it is
    graph = random_graph(64, 256, weights=(1, 40), seed=2)
    distances, pred = polyfw.solve(graph, predecessors=True)
    expected = scipy_shortest_path(graph.to_sparse().tocsr())
    assert np.array_equal(distances, expected) and pred.shape == (64, 64)
