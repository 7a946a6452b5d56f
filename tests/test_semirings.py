"""Semirings as data: every family exact for every shipped semiring; plus-times refused by name;
each semiring takes its natural input (or-and: a bool adjacency matrix) and refuses others by name."""
import re

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path as scipy_shortest_path

import schedules
from codegen import generate
from codegen.targets import TARGETS
from codegen import floyd_warshall_naive, floyd_warshall_nest
from polyfw import solve
from polyfw.cli import main
from tiling.semirings import INT32_INF, SEMIRINGS, UnsupportedSemiringError

SELECTIVE = ["min-plus", "max-min", "min-max", "or-and"]
FAMILIES = [("classic", {"tile": 8}), ("generalized", {"tile": 8, "kappa": 3}),
            ("generalized", {"tile": 8, "kappa": 2, "variant": "fused"}), ("recursive", {"base": 8}),
            ("recursive", {"base": 4, "paired": False}), ("naive", {})]


def random_matrix(name, dtype, n, seed):
    """Edges on about a fifth of the pairs, 'no path' elsewhere, each vertex reaching itself."""
    ring = SEMIRINGS[name]
    rng = np.random.default_rng(seed)
    weights = rng.integers(0, 2, (n, n)) if dtype == "uint8" else rng.integers(1, 60, (n, n))
    matrix = np.where(rng.random((n, n)) < 0.2, weights, ring.no_path(dtype)).astype(dtype)
    np.fill_diagonal(matrix, ring.identity(dtype))
    return matrix


def test_shipped_semirings_and_their_identities():
    assert [name for name, ring in SEMIRINGS.items() if ring.selective] == SELECTIVE
    assert (SEMIRINGS["max-min"].no_path("float32"), SEMIRINGS["max-min"].identity("float32")) == (-np.inf, np.inf)
    assert (SEMIRINGS["min-max"].no_path("int32"), SEMIRINGS["min-max"].identity("int32")) == (INT32_INF, -INT32_INF)
    assert (SEMIRINGS["or-and"].no_path("uint8"), SEMIRINGS["or-and"].identity("uint8")) == (0, 1)


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize("family, params", FAMILIES)
@pytest.mark.parametrize("name", SELECTIVE)
def test_every_family_is_exact_for_every_semiring(name, family, params, target):
    schedule = schedules.build(family, 37, **params)
    # every dtype of min-plus the target computes in (the other tests compile them anyway); one or
    # two of each other semiring's, so the suite compiles few new kernel modules
    dtypes = {"max-min": ("float32", "int32"), "min-max": ("float64",)}.get(name, SEMIRINGS[name].dtypes)
    for dtype in (dtype for dtype in dtypes if dtype in TARGETS[target].dtypes):
        matrix = random_matrix(name, dtype, 37, seed=len(family) + len(name))
        expected = matrix.copy()
        floyd_warshall_nest(expected, name)
        assert generate(schedule, target=target, dtype=dtype, semiring=name)(matrix) == -1
        np.testing.assert_array_equal(matrix, expected)


def test_or_and_is_networkx_transitive_closure():
    graph = nx.gnp_random_graph(45, 0.04, seed=5, directed=True)
    closure = nx.transitive_closure(graph, reflexive=True)
    expected = np.zeros((45, 45), dtype=bool)
    expected[tuple(np.array(list(closure.edges)).T)] = True
    for schedule in ("classic:tile=8", "generalized:tile=8,kappa=3", "recursive:tile=8"):
        np.testing.assert_array_equal(solve(graph, semiring="or-and", schedule=schedule), expected)


def test_widest_and_minimax_paths_of_a_small_graph():
    edges = [(0, 1, 5.0), (1, 2, 2.0), (0, 2, 1.0), (2, 3, 7.0)]
    graph = nx.DiGraph()
    graph.add_weighted_edges_from(edges)
    widest = solve(graph, semiring="max-min", schedule="classic:tile=2")
    assert (widest[0, 2], widest[0, 3], widest[3, 0]) == (2.0, 2.0, -np.inf)  # 0-1-2 carries 2, 0-2 only 1
    minimax = solve(graph, semiring="min-max", schedule="recursive:tile=2")
    assert (minimax[0, 2], minimax[0, 3], minimax[3, 0]) == (1.0, 7.0, np.inf)


def test_plus_times_is_refused_by_the_checker_the_generator_and_solve():
    classic = schedules.build("classic", 16, tile=8)
    message = r"semiring 'plus-times': its \(\+\) is add, not selective \(min or max\), so the relaxed"
    with pytest.raises(UnsupportedSemiringError, match=message):
        schedules.check(classic, semiring="plus-times")
    with pytest.raises(UnsupportedSemiringError, match=message):
        generate(classic, semiring="plus-times", dtype="float64")
    with pytest.raises(UnsupportedSemiringError, match=message):
        solve(np.ones((4, 4)), semiring="plus-times")
    # the exact model holds whatever the operation: the checker still answers there
    assert schedules.find_violations(classic, "exact", semiring="plus-times")


def test_semiring_dtypes_are_checked():
    with pytest.raises(ValueError, match="semiring or-and computes in uint8, not 'float32'"):
        generate(schedules.build("classic", 8, tile=4), dtype="float32", semiring="or-and")


def test_cli_solves_with_a_semiring(tmp_path, capsys):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 3 2\na 1 2 4\na 2 3 9\n")
    out = tmp_path / "w.npy"
    assert main(["solve", str(graph), "-o", str(out), "--semiring", "max-min"]) == 0
    assert np.load(out)[0, 2] == 4
    assert main(["solve", str(graph), "-o", str(out), "--semiring", "or-and"]) == 0
    assert np.load(out).tolist() == [[True, True, True], [False, True, True], [False, False, True]]


@pytest.mark.parametrize("name", SELECTIVE)
def test_reference_kernels_agree_for_every_semiring(name):
    # the serial nest and the parallel baseline are instantiated from the same definition
    dtype = SEMIRINGS[name].dtypes[-1]
    matrix = random_matrix(name, dtype, 40, seed=3)
    serial, parallel = matrix.copy(), matrix.copy()
    floyd_warshall_nest(serial, name)
    assert floyd_warshall_naive(parallel, name) == -1
    np.testing.assert_array_equal(serial, parallel)


def test_dense_inputs_for_reachability_and_widest_paths():
    adjacency = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=np.uint8)  # zeros are no edge for or-and
    assert solve(adjacency, semiring="or-and").tolist() == [[True, True, True], [False, True, True],
                                                            [False, False, True]]
    widths = np.array([[0, 5, -np.inf], [-np.inf, 0, 2], [-np.inf, -np.inf, 0]])  # -inf: no edge
    widest = solve(widths, semiring="max-min")
    assert (widest[0, 2], widest[2, 0], widest[1, 1]) == (2.0, -np.inf, np.inf)


def _closure(adjacency: np.ndarray) -> np.ndarray:
    """Reachability with the diagonal True, by networkx and by scipy (which must agree)."""
    graph = nx.from_numpy_array(adjacency.astype(np.uint8), create_using=nx.DiGraph)
    by_networkx = np.zeros(adjacency.shape, dtype=bool)
    closure = nx.transitive_closure(graph, reflexive=True)
    by_networkx[tuple(np.array(list(closure.edges), dtype=np.int64).reshape(-1, 2).T)] = True
    by_scipy = np.isfinite(scipy_shortest_path(adjacency.astype(np.float64), unweighted=True))
    np.testing.assert_array_equal(by_networkx, by_scipy)
    return by_networkx


@pytest.mark.parametrize("n, density, seed", [(1, 0.5, 0), (9, 0.15, 1), (40, 0.05, 2), (40, 0.3, 3)])
def test_or_and_takes_a_bool_adjacency_matrix_and_returns_its_closure(n, density, seed):
    adjacency = np.random.default_rng(seed).random((n, n)) < density
    before = adjacency.copy()
    expected = _closure(adjacency)
    for graph in (adjacency, adjacency.astype(np.int32), adjacency.astype(np.int64),  # 0/1 integers
                  adjacency.astype(np.uint8), sp.csr_array(adjacency)):
        found = solve(graph, semiring="or-and")
        assert found.dtype == np.bool_, graph.dtype
        np.testing.assert_array_equal(found, expected, err_msg=str(graph.dtype))
    np.testing.assert_array_equal(adjacency, before)


def test_an_explicit_false_in_a_sparse_bool_matrix_is_no_edge():
    graph = sp.csr_array((np.array([True, False]), np.array([1, 2]), np.array([0, 1, 2, 2])), shape=(3, 3))
    assert solve(graph, semiring="or-and").tolist() == [[True, True, False], [False, True, False],
                                                        [False, False, True]]


@pytest.mark.parametrize("graph, semiring, options, message", [
    (np.eye(3, dtype=np.complex128), "or-and", {},
     "semiring or-and reads a bool adjacency matrix, 0/1 integers or real weights (nonzero: an edge), not dtype "
     "complex128"),
    (np.array([["a", "b"], ["c", "d"]]), "or-and", {},
     "semiring or-and reads a bool adjacency matrix, .*not dtype <U1"),
    (np.eye(3, dtype=bool), "max-min", {},
     "semiring max-min reads integer or float weights (a bool adjacency matrix is the input of semiring 'or-and'), "
     "not dtype bool"),
    (np.eye(3, dtype=bool), "min-plus", {}, "weights must be real numbers (an integer or float dtype), got dtype bool "
                                            "(a bool adjacency matrix is the input of semiring 'or-and'"),
    (np.eye(3, dtype=bool), "or-and", {"dtype": "float32"}, "semiring or-and computes in uint8, not float32"),
])
def test_a_wrong_dtype_is_one_line_naming_what_is_accepted(graph, semiring, options, message):
    with pytest.raises(ValueError) as error:
        solve(graph, semiring=semiring, **options)
    assert len(str(error.value).splitlines()) == 1
    assert re.search(message if ".*" in message else re.escape(message), str(error.value)), str(error.value)
