"""No public function changes the caller's data.

Every entry point (solve, the scipy drop-ins, the BFS/SSSP helpers, compare and the CLI) runs on
dense float64 (C and Fortran order), float32, int32 and bool matrices and on CSR and CSC ones
(where it accepts the type; where it does not, it refuses by name), some of them read-only, and
the input must be byte-equal to a deep copy afterwards: values, dtype, shape, strides, and for
sparse inputs data, indices and indptr with their dtypes. Negative weights come with vertex
potentials, so no directed cycle is negative (undirected calls may still meet a negative edge as
a cycle: NegativeCycleError is an answer like any other). overwrite=True is scipy's: the result
in a dense float64 C-contiguous input, exactly what scipy leaves there, and nothing else touched.
"""
from __future__ import annotations

import copy
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import polyfw
from polyfw import NegativeCycleError
from polyfw.cli import main
from polyfw.sparse import bfs, sssp
from polyfw.graphs import GraphInputError

MAX_N = 12
DENSE = ("float64", "float64-fortran", "float32", "int32", "bool")
SPARSE = ("csr", "csc")
KINDS = DENSE + SPARSE
#: weighted inputs: all but bool (a bool matrix is semiring 'or-and''s input, and scipy's)
WEIGHTED = tuple(kind for kind in KINDS if kind != "bool")


@st.composite
def graphs(draw, kinds=KINDS, readonly=True):
    """(kind, graph, has negative weights): integer weights, edges where drawn; a missing dense
    entry is inf or 0 (scipy's two spellings) in floats and 0 in integers."""
    n = draw(st.integers(1, MAX_N))
    kind = draw(st.sampled_from(kinds))
    edge = draw(arrays(np.bool_, (n, n)))
    weight = draw(arrays(np.int64, (n, n), elements=st.integers(0, 9)))
    negative = kind != "bool" and draw(st.booleans())
    if negative:  # w(u, v) = base + p(u) - p(v): every cycle keeps its non-negative base weight
        potential = draw(arrays(np.int64, n, elements=st.integers(0, 6)))
        weight = weight + potential[:, None] - potential[None, :]
    if kind in SPARSE:
        graph = _sparse(kind, edge, weight, draw)
    elif kind == "bool":
        graph = edge.copy()
    else:
        missing = draw(st.sampled_from([np.inf, 0.0])) if kind != "int32" else 0
        dtype = "float64" if kind.startswith("float64") else kind
        graph = np.where(edge, weight, missing).astype(dtype)
        if kind == "float64-fortran":
            graph = np.asfortranarray(graph)
    if readonly and draw(st.booleans()):
        for array in ([graph.data, graph.indices, graph.indptr] if sp.issparse(graph) else [graph]):
            array.flags.writeable = False
    return kind, graph, bool(negative and (weight[edge] < 0).any())


def _sparse(kind: str, edge: np.ndarray, weight: np.ndarray, draw):
    """Explicit entries where edge (explicit zeros included), in a drawn data and index dtype,
    sometimes with each row's (column's) entries in reverse order (not canonical)."""
    data_dtype = draw(st.sampled_from(["float64", "float32", "int32"]))
    index_dtype = draw(st.sampled_from([np.int32, np.int64]))
    cls = draw(st.sampled_from(["array", "matrix"]))
    major = edge if kind == "csr" else edge.T
    values = weight if kind == "csr" else weight.T
    indptr = np.concatenate([[0], np.cumsum(major.sum(axis=1))]).astype(index_dtype)
    rows, minor = np.nonzero(major)
    data = values[rows, minor].astype(data_dtype)
    if draw(st.booleans()):  # unsorted indices
        order = np.lexsort((-minor, rows))
        minor, data = minor[order], data[order]
    constructor = getattr(sp, f"{kind}_{cls}")
    return constructor((data, minor.astype(index_dtype), indptr), shape=edge.shape)


def snapshot(graph):
    """What must not change: a deep copy, with the layout of each array."""
    arrays_of = [graph.data, graph.indices, graph.indptr] if sp.issparse(graph) else [graph]
    return copy.deepcopy(graph), [(a.dtype, a.shape, a.strides, a.tobytes(order="A")) for a in arrays_of]


def assert_unchanged(graph, before, where: str) -> None:
    copied, layout = before
    assert type(graph) is type(copied), where
    assert graph.shape == copied.shape, where
    arrays_of = [graph.data, graph.indices, graph.indptr] if sp.issparse(graph) else [graph]
    now = [(a.dtype, a.shape, a.strides, a.tobytes(order="A")) for a in arrays_of]
    assert now == layout, f"{where} changed its input"
    if sp.issparse(graph):
        for name in ("data", "indices", "indptr"):
            mine, theirs = getattr(graph, name), getattr(copied, name)
            assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes(), f"{where} changed {name}"
    else:
        assert graph.dtype == copied.dtype and graph.tobytes(order="A") == copied.tobytes(order="A"), where


def _indices(n: int):
    return [0, n - 1]


#: entry point -> (call, the kinds it accepts; the rest it refuses with GraphInputError)
ENTRY_POINTS = {
    "solve": (lambda g, n: polyfw.solve(g), WEIGHTED),
    "solve(predecessors, undirected)": (lambda g, n: polyfw.solve(g, predecessors=True, directed=False),
                                        WEIGHTED),
    "solve(int32)": (lambda g, n: polyfw.solve(g, dtype="int32"), WEIGHTED),
    "solve(method='sparse')": (lambda g, n: polyfw.solve(g, method="sparse", predecessors=True),
                               WEIGHTED),
    "solve(semiring='or-and')": (lambda g, n: polyfw.solve(g, semiring="or-and"), KINDS),
    "solve(semiring='max-min')": (lambda g, n: polyfw.solve(g, semiring="max-min"), WEIGHTED),
    "floyd_warshall": (lambda g, n: polyfw.floyd_warshall(g, return_predecessors=True), KINDS),
    "floyd_warshall(undirected, unweighted)": (
        lambda g, n: polyfw.floyd_warshall(g, directed=False, unweighted=True), KINDS),
    **{f"shortest_path({method})": ((lambda g, n, method=method: polyfw.shortest_path(
        g, method=method, return_predecessors=True)), KINDS) for method in ("auto", "FW", "D", "BF", "J")},
    **{f"shortest_path({method}, indices)": ((lambda g, n, method=method: polyfw.shortest_path(
        g, method=method, indices=_indices(n), directed=False)), KINDS) for method in ("auto", "D", "BF", "J")},
    "dijkstra": (lambda g, n: polyfw.dijkstra(g, indices=_indices(n), return_predecessors=True, limit=12), KINDS),
    "dijkstra(min_only)": (lambda g, n: polyfw.dijkstra(g, indices=_indices(n), min_only=True,
                                                        return_predecessors=True), KINDS),
    "dijkstra(undirected, unweighted)": (lambda g, n: polyfw.dijkstra(g, directed=False, unweighted=True), KINDS),
    "bellman_ford": (lambda g, n: polyfw.bellman_ford(g, indices=n - 1, return_predecessors=True), KINDS),
    "johnson": (lambda g, n: polyfw.johnson(g, return_predecessors=True), KINDS),
    "johnson(indices, undirected)": (lambda g, n: polyfw.johnson(g, indices=_indices(n), directed=False), KINDS),
    "bfs": (lambda g, n: bfs(g, 0), WEIGHTED),
    "bfs(top-down, undirected)": (lambda g, n: bfs(g, n - 1, direction="top-down", directed=False),
                                  WEIGHTED),
    "sssp": (lambda g, n: sssp(g, 0), WEIGHTED),
    "sssp(bellman-ford, undirected)": (lambda g, n: sssp(g, n - 1, method="bellman-ford", directed=False),
                                       WEIGHTED),
}


@given(graphs())
def test_no_entry_point_changes_its_input(drawn):
    kind, graph, _ = drawn
    n = graph.shape[0]
    before = snapshot(graph)
    for name, (call, accepts) in ENTRY_POINTS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dijkstra's warning on negative weights, as scipy's
            try:
                call(graph, n)
            except NegativeCycleError:
                pass  # an undirected negative edge is a negative cycle
            except GraphInputError:
                assert kind not in accepts, f"{name} refused a {kind} input"
            else:
                assert kind in accepts, f"{name} accepted a {kind} input it should refuse"
        assert_unchanged(graph, before, f"{name} on {kind}")


@settings(max_examples=6)
@given(graphs(kinds=("float64", "float32", "int32")))
def test_compare_does_not_change_its_matrix(drawn):
    _, graph, _ = drawn
    before = snapshot(graph)
    polyfw.compare(graph, ["classic:tile=4"], repeats=1, with_cost=False, progress=False)
    assert_unchanged(graph, before, "compare")


def _write_graph(graph, path: Path) -> None:
    """A DIMACS .gr file (1-based) of a drawn graph: its explicit entries (sparse) or its entries
    that scipy reads as edges (dense: nonzero and finite)."""
    coo = sp.coo_array(graph) if sp.issparse(graph) else None
    if coo is None:
        dense = np.asarray(graph, dtype=np.float64)
        rows, cols = np.nonzero(np.isfinite(dense) & (dense != 0))
        values = dense[rows, cols]
    else:
        rows, cols, values = coo.row, coo.col, coo.data
    lines = [f"p sp {graph.shape[0]} {len(rows)}"]
    lines += [f"a {u + 1} {v + 1} {int(w)}" for u, v, w in zip(rows, cols, values)]
    path.write_text("\n".join(lines) + "\n")


@settings(max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graphs(kinds=("float64", "csr"), readonly=False))
def test_the_cli_does_not_change_its_graph_file(tmp_path, capsys, drawn):
    _, graph, _ = drawn
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = folder / "g.gr"
    _write_graph(graph, path)
    before = path.read_bytes()
    out = str(folder / "out.npy")
    for argv in (["solve", str(path), "-o", out, "--predecessors", str(folder / "p.npy")],
                 ["solve", str(path), "-o", out, "--method", "sparse"],
                 ["solve", str(path), "-o", out, "--semiring", "or-and"],
                 ["sssp", str(path), "--source", "1", "-o", out, "--parents", str(folder / "parents.npy")],
                 ["bfs", str(path), "--source", "1", "-o", out, "--undirected"],
                 ["compare", str(path), "--schedules", "classic:tile=4", "--repeats", "1", "--dtype", "float64"]):
        assert main(argv) == 0, capsys.readouterr().err  # negative weights, but no negative cycle
        assert path.read_bytes() == before, f"polyfw {argv[0]} changed its input file"
    capsys.readouterr()


# ---------------------------------------------------------------- overwrite=True: scipy's behaviour


@given(graphs(kinds=("float64",), readonly=False), st.sampled_from(["floyd_warshall", "FW"]),
       st.booleans(), st.booleans())
def test_overwrite_puts_the_result_where_scipy_does(drawn, entry, unweighted, predecessors):
    _, graph, _ = drawn
    graph = np.ascontiguousarray(graph)
    theirs, mine = graph.copy(), graph.copy()
    options = {"unweighted": unweighted, "return_predecessors": predecessors, "overwrite": True}
    if entry == "FW":
        expected = csgraph.shortest_path(theirs, method="FW", **options)
        found = polyfw.shortest_path(mine, method="FW", **options)
    else:
        expected, found = csgraph.floyd_warshall(theirs, **options), polyfw.floyd_warshall(mine, **options)
    expected_distances, found_distances = (expected[0], found[0]) if predecessors else (expected, found)
    assert np.shares_memory(expected_distances, theirs)  # scipy's documented behaviour
    assert np.shares_memory(found_distances, mine)
    np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(found_distances, expected_distances)
    if predecessors:
        assert found[1].dtype == expected[1].dtype == np.int32


@given(graphs(kinds=("float64-fortran", "float32", "int32", "bool") + SPARSE))
def test_overwrite_leaves_every_other_input_alone(drawn):
    # scipy writes only into a dense float64 C-contiguous input (its Fortran-ordered one it
    # garbles, nulls set to inf and no result); polyfw writes into none of these
    _, graph, _ = drawn
    assume(not (isinstance(graph, np.ndarray) and graph.dtype == np.float64 and graph.flags.c_contiguous))  # n = 1
    before = snapshot(graph)
    for method in ("FW", "auto"):
        try:
            polyfw.shortest_path(graph, method=method, overwrite=True)
        except NegativeCycleError:
            pass
        assert_unchanged(graph, before, f"shortest_path({method}, overwrite=True)")
    try:
        polyfw.floyd_warshall(graph, overwrite=True)
    except NegativeCycleError:
        pass
    assert_unchanged(graph, before, "floyd_warshall(overwrite=True)")


def test_the_drop_in_no_longer_turns_the_callers_zeros_into_inf():
    # the bug: scipy's validate_graph (copy_if_dense=False) masks a float64 input's zeros in place
    graph = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    before = graph.copy()
    np.testing.assert_array_equal(polyfw.floyd_warshall(graph), csgraph.floyd_warshall(before.copy()))
    np.testing.assert_array_equal(graph, before)
    masked = np.ma.masked_equal(graph, 1.0)
    polyfw.floyd_warshall(masked)
    np.testing.assert_array_equal(masked.data, before)


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_input_gives_scipys_answer(kind):
    # the strategy's inputs are ones scipy itself reads: the drop-ins' reference
    graph = {"bool": np.eye(3, k=1, dtype=bool)}.get(kind)
    if graph is None:
        dense = np.eye(3, k=1) * 2
        graph = (sp.csr_array(dense) if kind == "csr" else sp.csc_array(dense) if kind == "csc"
                 else np.asfortranarray(dense) if kind == "float64-fortran"
                 else dense.astype(kind))
    np.testing.assert_array_equal(polyfw.shortest_path(graph), csgraph.shortest_path(graph))
