"""solve's quick path for a plain call on a small input (polyfw.graphs.small): the same answers, choices,
warnings and errors as the general path, read once."""
from __future__ import annotations

import logging

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import shortest_path

import polyfw
from polyfw import solver
from polyfw.graphs import Edges, GraphInputError
from polyfw.graphs.small import SMALL_BELOW, read_small

KINDS = ("dense", "csr", "csc", "coo", "networkx", "edges")


def as_kind(weights: np.ndarray, kind: str, directed: bool = True):
    """The arcs of `weights` (0: none) as the input kind a user passes."""
    if kind == "dense":
        return np.where(weights != 0, weights, np.inf)
    if kind == "networkx":
        graph = (nx.DiGraph if directed else nx.Graph)()
        graph.add_nodes_from(range(len(weights)))
        graph.add_weighted_edges_from((int(i), int(j), weights[i, j]) for i, j in zip(*np.nonzero(weights)))
        return graph
    if kind == "edges":
        source, target = np.nonzero(weights)
        return Edges(len(weights), source.astype(np.int64), target.astype(np.int64), weights[source, target])
    return {"csr": sp.csr_array, "csc": sp.csc_array, "coo": sp.coo_array}[kind](weights)


@pytest.fixture
def general_path_calls(monkeypatch):
    """How many calls went the general way."""
    calls = []
    general = solver._solve
    monkeypatch.setattr(solver, "_solve", lambda *args: calls.append(1) or general(*args))
    return calls


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 70), st.sampled_from(KINDS), st.booleans(), st.sampled_from(["hops", "integer", "fractional"]),
       st.integers(0, 2**32 - 1))
def test_the_quick_path_answers_as_scipy(n, kind, directed, weights_kind, seed):
    rng = np.random.default_rng(seed)
    arcs = rng.random((n, n)) < min(1.0, 3.0 / n)
    np.fill_diagonal(arcs, False)
    values = {"hops": np.ones((n, n)), "integer": rng.integers(1, 1000, (n, n)).astype(float),
              "fractional": rng.random((n, n)) * 10 + 0.25}[weights_kind]
    weights = np.where(arcs, values, 0.0)
    graph = as_kind(weights, kind, directed)
    assert read_small(graph, "weight", None) is not None
    undirected = not directed
    found = polyfw.solve(graph, directed=directed)
    arcs_read = nx.to_scipy_sparse_array(graph, nodelist=range(n)) if kind == "networkx" else sp.csr_array(weights)
    expected = shortest_path(arcs_read, directed=directed)  # (an undirected networkx graph keeps one arc a pair)
    assert found.dtype == np.float64 and found.method_choice is not None
    assert np.array_equal(found, expected) if weights_kind != "fractional" else np.allclose(found, expected)
    if kind == "networkx" and undirected:  # an undirected networkx graph is undirected whatever `directed` says
        assert np.array_equal(polyfw.solve(graph, directed=True), found)


def test_plain_small_calls_never_take_the_general_path(general_path_calls):
    weights = np.array([[0, 2, 0], [0, 0, -1], [4, 0, 0]], dtype=float)
    for kind in KINDS:
        assert np.array_equal(polyfw.solve(as_kind(weights, kind)), [[0, 2, 1], [3, 0, -1], [4, 6, 0]])
    assert type(polyfw.solve(as_kind(weights, "csr"), method="dense")) is np.ndarray  # no method chosen
    assert general_path_calls == []


def test_what_the_general_reader_has_to_say_it_says(general_path_calls):
    """Warnings, errors, options and inputs the quick path leaves to the general reader, each once."""
    with pytest.raises(GraphInputError, match="NaN or -inf"):
        polyfw.solve(np.array([[0.0, np.nan], [1.0, 0.0]]))
    with pytest.raises(GraphInputError, match="NaN or -inf"):
        polyfw.solve(sp.csr_array(np.array([[0.0, np.nan], [1.0, 0.0]])))
    with pytest.warns(UserWarning, match="zeros off the diagonal"):
        polyfw.solve(np.array([[0.0, 0.0], [1.0, 0.0]]))
    assert np.array_equal(polyfw.solve(np.array([[0.0, 0.0], [1.0, 0.0]]), null_value=0), [[0, np.inf], [1, 0]])
    assert polyfw.solve(np.zeros((0, 0))).shape == (0, 0)
    assert len(general_path_calls) == 5
    with pytest.raises(GraphInputError, match="can overflow float64"):  # the quick path's own checks
        polyfw.solve(np.full((3, 3), 1e308))
    with pytest.raises(polyfw.NegativeCycleError):  # and its own run
        polyfw.solve(sp.csr_array(np.array([[0.0, 1.0], [-2.0, 0.0]])))
    assert len(general_path_calls) == 5
    big = sp.random_array((SMALL_BELOW, SMALL_BELOW), density=0.01, random_state=1, format="csr")
    polyfw.solve(big)
    assert len(general_path_calls) == 6


def test_the_quick_path_logs_its_plan_once_a_call(caplog):
    graph = as_kind(np.array([[0, 3.0], [1.0, 0]]), "csr")
    with caplog.at_level(logging.INFO, logger="polyfw"):
        polyfw.solve(graph)
    chosen = [record for record in caplog.records if "dtype='auto' chose" in record.getMessage()]
    assert len(chosen) == 1 and "int16" in chosen[0].getMessage()


def test_the_quick_path_leaves_the_input_as_it_was():
    weights = np.array([[5.0, 2.0, np.inf], [np.inf, -0.0, 1.5], [1.0, np.inf, 0.0]])
    for kind in ("dense", "csr"):
        graph = weights.copy() if kind == "dense" else sp.csr_array(np.where(np.isinf(weights), 0, weights))
        before = graph.copy()
        polyfw.solve(graph, directed=False)
        same = np.array_equal if kind == "dense" else lambda a, b: (a != b).nnz == 0
        assert same(graph, before)
