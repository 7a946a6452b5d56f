"""polyfw as a networkx backend: the entry points, the conversions, every dispatched function
against networkx's own on the same graphs, its errors, can_run and should_run, and networkx's
own test modules run through the backend."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from importlib.metadata import entry_points

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polyfw.networkx_backend import interface
from polyfw.networkx_backend.algorithms import ContradictoryPaths
from polyfw.networkx_backend.graph import UnsupportedWeights, convert_from_nx
from polyfw.networkx_backend.info import DISPATCHED, backend_info

pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs:UserWarning")

KINDS = (nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph)


def _weighted(kind, n: int, arcs: list[tuple[int, int, int]], labels=None) -> nx.Graph:
    graph = kind()
    name = labels or (lambda v: v)
    graph.add_nodes_from(name(v) for v in range(n))
    graph.add_weighted_edges_from((name(u), name(v), w) for u, v, w in arcs)
    return graph


@st.composite
def graphs(draw, negative: bool = False):
    """Random graphs of every kind with integer weights; with negative=True a directed one whose
    weights are shifted by vertex potentials (negative arcs, no negative cycle)."""
    kind = draw(st.sampled_from(KINDS[1::2] if negative else KINDS))
    n = draw(st.integers(1, 14))
    arcs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, 9)), max_size=40))
    if negative:
        potential = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
        arcs = [(u, v, w + potential[u] - potential[v]) for u, v, w in arcs if u != v]
    labels = draw(st.sampled_from([None, lambda v: f"v{v}", lambda v: (v, "x")]))
    return _weighted(kind, n, arcs, labels)


def _no_numpy_scalars(value) -> bool:
    if isinstance(value, np.generic):
        return False
    if isinstance(value, dict):
        return all(_no_numpy_scalars(k) and _no_numpy_scalars(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(map(_no_numpy_scalars, value))
    return True


# ---------------------------------------------------------------- registration


def test_the_entry_points_name_polyfw_and_every_dispatched_function():
    assert "polyfw" in {point.name for point in entry_points(group="networkx.backends")}
    info = nx.utils.backends.backend_info["polyfw"]
    assert set(info["functions"]) == set(DISPATCHED) == set(backend_info()["functions"])
    backend = nx.utils.backends._load_backend("polyfw")
    assert backend is interface.BackendInterface
    for name in DISPATCHED:
        assert callable(getattr(backend, name)), name
        assert "polyfw" in nx.utils.backends._registered_algorithms[name].backends, name


def test_importing_networkx_does_not_load_polyfws_kernels():
    code = "import networkx, sys; print(json.dumps([m in sys.modules for m in ('numba', 'islpy', 'polyfw.solver')]))"
    found = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(found.stdout) == [False, False, False]


# ---------------------------------------------------------------- conversion


def test_conversion_keeps_labels_order_and_the_lightest_parallel_edge():
    graph = nx.MultiDiGraph()
    graph.add_edge(("a", 1), "b", weight=5)
    graph.add_edge(("a", 1), "b", weight=2)
    graph.add_edge("b", frozenset({3}))
    graph.add_edge(("a", 1), frozenset({3}), weight=7)
    converted = convert_from_nx(graph, edge_attrs={"weight": 1})
    assert converted.nodes == [("a", 1), "b", frozenset({3})]
    assert converted.indptr.tolist() == [0, 2, 3, 3]
    assert converted.indices.tolist() == [1, 2, 2]  # networkx's neighbour order
    assert converted.arc_weights("weight").values.tolist() == [2, 7, 1]
    assert converted.arc_weights("weight").integral
    assert nx.utils.backends._load_backend("polyfw").convert_to_nx(converted) is graph


def test_undirected_graphs_get_both_arcs_and_weight_functions_may_hide_edges():
    graph = nx.Graph([(0, 1, {"w": 2.5}), (1, 2, {"w": 1.5})])
    converted = convert_from_nx(graph, edge_attrs={"w": 1})
    assert converted.indptr.tolist() == [0, 1, 3, 4]
    weights = converted.arc_weights(lambda u, v, d: None if {u, v} == {1, 2} else d["w"] * 2)
    assert weights.values.tolist() == [5.0, 5.0, np.inf, np.inf] and not weights.integral
    assert nx.single_source_dijkstra_path_length(graph, 0, weight=lambda u, v, d: None if {u, v} == {1, 2} else 1,
                                                 backend="polyfw") == {0: 0, 1: 1}


@pytest.mark.parametrize("bad", [Fraction(1, 3), "heavy", float("nan"), 2**80])
def test_weights_polyfw_cannot_compute_exactly_go_back_to_networkx(bad):
    graph = nx.DiGraph([(0, 1, {"weight": bad}), (1, 2, {"weight": 1})])
    with pytest.raises(UnsupportedWeights):
        convert_from_nx(graph, edge_attrs={"weight": 1})
    if isinstance(bad, Fraction):  # networkx computes it in Fractions; polyfw hands it over
        with nx.config(backend_priority=["polyfw"], fallback_to_nx=True):
            assert nx.floyd_warshall(graph)[0][2] == Fraction(4, 3)


# ---------------------------------------------------------------- the answers, against networkx's


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_distances_are_networkxs(graph):
    ours = nx.floyd_warshall_numpy(graph, backend="polyfw")
    assert ours.dtype == np.float64 and np.array_equal(ours, nx.floyd_warshall_numpy(graph))
    order = list(graph)[::-1]
    assert np.array_equal(nx.floyd_warshall_numpy(graph, nodelist=order, backend="polyfw"),
                          nx.floyd_warshall_numpy(graph, nodelist=order))
    assert nx.floyd_warshall(graph, backend="polyfw") == nx.floyd_warshall(graph)
    for name in ("all_pairs_dijkstra_path_length", "all_pairs_bellman_ford_path_length",
                 "all_pairs_shortest_path_length"):
        ours, theirs = dict(getattr(nx, name)(graph, backend="polyfw")), dict(getattr(nx, name)(graph))
        assert ours == theirs, name
        assert _no_numpy_scalars(ours)
    source = next(iter(graph))
    assert nx.single_source_dijkstra_path_length(graph, source, cutoff=6, backend="polyfw") == \
        nx.single_source_dijkstra_path_length(graph, source, cutoff=6)
    assert list(nx.single_source_shortest_path_length(graph, source, cutoff=2, backend="polyfw").items()) == \
        list(nx.single_source_shortest_path_length(graph, source, cutoff=2).items())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(negative=True))
def test_negative_weights_without_negative_cycles(graph):
    expected = nx.floyd_warshall_numpy(graph)
    assert np.array_equal(nx.floyd_warshall_numpy(graph, backend="polyfw"), expected)
    assert dict(nx.all_pairs_bellman_ford_path_length(graph, backend="polyfw")) == \
        dict(nx.all_pairs_bellman_ford_path_length(graph))
    # networkx's Dijkstra may miss shorter paths through negative arcs; polyfw's distances are exact
    nodes = list(graph)
    for u, row in nx.all_pairs_dijkstra_path_length(graph, backend="polyfw"):
        assert row == {nodes[v]: int(d) for v, d in enumerate(expected[nodes.index(u)]) if d < np.inf}


def _path_weight(graph, path) -> float:
    return sum(min(d.get("weight", 1) for d in graph[u][v].values()) if graph.is_multigraph()
               else graph[u][v].get("weight", 1) for u, v in zip(path, path[1:]))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_paths_and_predecessors_are_shortest(graph):
    """Of equally short paths polyfw may name others than networkx: each is checked to be a path
    of the graph whose weight is the distance."""
    distances = nx.floyd_warshall(graph)
    for source, paths in nx.johnson(graph, backend="polyfw").items():
        assert paths.keys() == {v for v, d in distances[source].items() if d < np.inf}
        for target, path in paths.items():
            assert path[0] == source and path[-1] == target
            assert _path_weight(graph, path) == distances[source][target]
    predecessors, ours = nx.floyd_warshall_predecessor_and_distance(graph, backend="polyfw")
    assert ours == distances
    theirs, _ = nx.floyd_warshall_predecessor_and_distance(graph)
    assert {u: set(row) for u, row in predecessors.items()} == {u: set(row) for u, row in theirs.items()}
    for source, row in predecessors.items():
        for target in row:
            if target != source:
                path = nx.reconstruct_path(source, target, predecessors)
                assert _path_weight(graph, path) == distances[source][target]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(0, 3))
def test_breadth_first_orders_are_networkxs(graph, depth):
    nodes = list(graph)
    sources = nodes[: 1 + len(nodes) // 3]
    assert list(nx.bfs_layers(graph, sources, backend="polyfw")) == list(nx.bfs_layers(graph, sources))
    for arguments in ({}, {"depth_limit": depth}, {"reverse": True},
                      {"sort_neighbors": lambda each: sorted(each, key=str, reverse=True)}):
        assert list(nx.bfs_edges(graph, nodes[-1], backend="polyfw", **arguments)) == \
            list(nx.bfs_edges(graph, nodes[-1], **arguments)), arguments
    for target in nodes:
        assert nx.has_path(graph, nodes[0], target, backend="polyfw") == nx.has_path(graph, nodes[0], target)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.sampled_from([False, True, None]))
def test_transitive_closure_is_networkxs_graph_with_its_attributes(graph, reflexive):
    graph.graph["name"] = "g"
    for node in graph:
        graph.nodes[node]["colour"] = str(node)
    ours, theirs = nx.transitive_closure(graph, reflexive, backend="polyfw"), nx.transitive_closure(graph, reflexive)
    assert type(ours) is type(theirs) and ours.graph == theirs.graph
    assert dict(ours.nodes(data=True)) == dict(theirs.nodes(data=True))
    assert nx.utils.edges_equal(ours.edges(data=True), theirs.edges(data=True), directed=graph.is_directed())
    assert ours is not graph


def test_integer_weights_give_ints_and_the_callers_graph_is_unchanged():
    graph = nx.DiGraph([(0, 1, {"weight": 2}), (1, 2, {"weight": 3}), (2, 0, {"weight": 1.5})])
    before = nx.to_dict_of_dicts(graph)
    distances = nx.single_source_dijkstra_path_length(graph, 0, backend="polyfw")
    assert distances == {0: 0.0, 1: 2.0, 2: 5.0}  # a float weight in the graph: floats, as networkx's sums
    integral = nx.DiGraph([(0, 1, {"weight": 2}), (1, 2, {"weight": 3})])
    found = nx.single_source_dijkstra_path_length(integral, 0, backend="polyfw")
    assert found == {0: 0, 1: 2, 2: 5} and all(type(d) is int for d in found.values())
    assert nx.to_dict_of_dicts(graph) == before


# ---------------------------------------------------------------- errors


def test_negative_cycles_raise_networkx_unbounded():
    graph = nx.DiGraph([(0, 1, {"weight": 1}), (1, 2, {"weight": -3}), (2, 0, {"weight": 1}), (3, 0, {"weight": 1})])
    for call in (lambda: nx.floyd_warshall_numpy(graph, backend="polyfw"),
                 lambda: nx.floyd_warshall(graph, backend="polyfw"),
                 lambda: nx.floyd_warshall_predecessor_and_distance(graph, backend="polyfw"),
                 lambda: nx.johnson(graph, backend="polyfw"),
                 lambda: dict(nx.all_pairs_bellman_ford_path_length(graph, backend="polyfw"))):
        with pytest.raises(nx.NetworkXUnbounded):
            call()
    # networkx's Dijkstra raises ValueError on the cycles it notices: polyfw's error is both
    for call in (lambda: nx.single_source_dijkstra_path_length(graph, 3, backend="polyfw"),
                 lambda: dict(nx.all_pairs_dijkstra_path_length(graph, backend="polyfw"))):
        with pytest.raises(ContradictoryPaths) as raised:
            call()
        assert isinstance(raised.value, ValueError) and isinstance(raised.value, nx.NetworkXUnbounded)
    with pytest.raises(nx.NetworkXUnbounded):  # an undirected negative edge is a negative cycle
        nx.floyd_warshall_numpy(nx.Graph([(0, 1, {"weight": -1})]), backend="polyfw")


def test_unknown_nodes_raise_what_networkx_raises():
    graph = nx.path_graph(3)
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_dijkstra_path_length(graph, 9, backend="polyfw")
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_shortest_path_length(graph, 9, backend="polyfw")
    with pytest.raises(nx.NodeNotFound):
        nx.has_path(graph, 0, 9, backend="polyfw")
    with pytest.raises(nx.NetworkXError):
        list(nx.bfs_edges(graph, 9, backend="polyfw"))
    with pytest.raises(nx.NetworkXError):
        list(nx.bfs_layers(graph, [0, 9], backend="polyfw"))
    with pytest.raises(nx.NetworkXError):
        nx.floyd_warshall_numpy(graph, nodelist=[0, 1, 1], backend="polyfw")
    with pytest.raises(nx.NetworkXError):
        nx.transitive_closure(nx.DiGraph(), reflexive="wrong", backend="polyfw")


def test_empty_and_single_node_graphs():
    assert nx.floyd_warshall_numpy(nx.DiGraph(), backend="polyfw").shape == (0, 0)
    assert nx.floyd_warshall_numpy(nx.empty_graph(1), backend="polyfw").tolist() == [[0.0]]
    assert dict(nx.all_pairs_dijkstra_path_length(nx.empty_graph(1), backend="polyfw")) == {0: {0: 0}}
    assert list(nx.bfs_layers(nx.path_graph(2), [], backend="polyfw")) == []


# ---------------------------------------------------------------- can_run, should_run


def test_can_run_refuses_a_matrix_larger_than_memory(monkeypatch):
    monkeypatch.setattr(interface, "available_memory", lambda: 2**20)
    verdict = interface.can_run("floyd_warshall_numpy", (nx.path_graph(5000),), {})  # 400 MB: worth checking
    assert isinstance(verdict, str) and "GiB" in verdict
    assert interface.can_run("single_source_shortest_path_length", (nx.path_graph(1000), 0), {}) is True
    assert interface.can_run("shortest_path", (nx.path_graph(3),), {}) == "polyfw does not implement shortest_path"


def test_should_run_leaves_small_graphs_and_single_searches_to_networkx():
    small = nx.path_graph(20)
    verdict = interface.should_run("floyd_warshall_numpy", (small,), {})
    assert isinstance(verdict, str) and "networkx runs it" in verdict and "converting" in verdict
    large = nx.gnp_random_graph(600, 0.02, seed=1)
    assert interface.should_run("floyd_warshall_numpy", (large,), {}) is True
    assert interface.should_run("all_pairs_dijkstra_path_length", (large,), {}) is True
    assert isinstance(interface.should_run("single_source_dijkstra_path_length", (large, 0), {}), str)
    nx.floyd_warshall_numpy(large, backend="polyfw")  # now networkx's cache holds the converted graph
    big = nx.gnp_random_graph(3000, 0.005, seed=1)
    nx.has_path(big, 0, 1, backend="polyfw")
    assert interface.should_run("single_source_dijkstra_path_length", (big, 0), {}) is True


def test_backend_priority_sends_calls_to_polyfw_where_it_pays():
    graph = nx.gnp_random_graph(300, 0.05, seed=2, directed=True)
    with nx.config(backend_priority=["polyfw"]):
        distances = nx.floyd_warshall_numpy(graph)
        assert isinstance(graph.__networkx_cache__["backends"]["polyfw"], dict)  # converted: polyfw ran it
    assert np.array_equal(distances, nx.floyd_warshall_numpy(graph))
    small = nx.path_graph(10)
    with nx.config(backend_priority=["polyfw"]):
        assert np.array_equal(nx.floyd_warshall_numpy(small), np.abs(np.subtract.outer(range(10), range(10))))
    assert "polyfw" not in small.__networkx_cache__.get("backends", {})  # should_run said no: networkx ran it


# ---------------------------------------------------------------- networkx's own tests

DRIVER = textwrap.dedent("""
    import logging, sys, pytest
    from polyfw.networkx_backend.info import DISPATCHED
    handed_back = []

    class Watch(logging.Handler):
        def emit(self, record):
            message = record.getMessage()
            if ("Falling back" in message or "raised when calling" in message or "can't run" in message) \\
                    and any(f"'{name}'" in message or f"`{name}`" in message for name in DISPATCHED):
                handed_back.append(message[:300])

    log = logging.getLogger("networkx")
    log.setLevel(logging.DEBUG)
    log.addHandler(Watch())
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-W", "ignore::UserWarning", "--pyargs", *sys.argv[1:]])
    print("HANDED BACK", len(handed_back), *handed_back[:5], sep="\\n")
    sys.exit(code or bool(handed_back))
""")


def test_networkx_own_shortest_path_and_dag_tests_pass_through_polyfw(tmp_path):
    """networkx's test modules, run against the installed networkx with NETWORKX_TEST_BACKEND=polyfw:
    every dispatched call converts the graph and runs polyfw's function; falling back to networkx
    is allowed only for functions polyfw does not implement (checked in networkx's log)."""
    environment = dict(os.environ, NETWORKX_TEST_BACKEND="polyfw", NETWORKX_FALLBACK_TO_NX="True")
    environment.pop("PYTEST_XDIST_WORKER", None)
    run = subprocess.run([sys.executable, "-c", DRIVER, "networkx.algorithms.shortest_paths",
                          "networkx.algorithms.tests.test_dag"], capture_output=True, text=True, cwd=tmp_path,
                         env=environment, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "HANDED BACK\n0" in run.stdout
