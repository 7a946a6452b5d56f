import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from polyfw import graphs
from tiling.semirings import INT32_INF
from polyfw.graphs import GraphInputError, as_dense, random_graph

INF = np.inf


def test_dense_inf_is_no_edge_and_zero_is_an_edge():
    matrix = as_dense(np.array([[5.0, 0.0], [INF, 3.0]]))
    assert matrix.tolist() == [[0.0, 0.0], [INF, 0.0]]


def test_negative_self_loop_stays_on_the_diagonal():
    assert as_dense(np.array([[-1.0, 2.0], [INF, 0.0]]))[0, 0] == -1.0


def test_masked_entries_are_missing_edges():
    masked = np.ma.masked_array([[0, 4], [7, 0]], mask=[[False, True], [False, False]])
    assert as_dense(masked).tolist() == [[0.0, INF], [7.0, 0.0]]


def test_sparse_explicit_zero_is_an_edge_and_duplicates_keep_the_lightest():
    coo = sp.coo_array(([0.0, 9.0, 4.0], ([0, 1, 1], [1, 2, 2])), shape=(3, 3))
    matrix = as_dense(coo)
    assert matrix[0, 1] == 0.0 and matrix[1, 2] == 4.0 and matrix[2, 0] == INF


def test_undirected_uses_edges_both_ways():
    matrix = as_dense(np.array([[0.0, 3.0], [INF, 0.0]]), directed=False)
    assert matrix[1, 0] == 3.0


def test_int32_uses_a_sentinel_that_cannot_overflow():
    matrix = as_dense(np.array([[0.0, INF], [2.0, 0.0]]), dtype=np.int32)
    assert matrix.dtype == np.int32 and matrix[0, 1] == INT32_INF
    # no edge at all: every relaxation adds INF to INF; a wrapped sum would be negative
    alone = np.full((20, 20), INF)
    np.fill_diagonal(alone, 0)
    from polyfw import solve

    distances = solve(alone, schedule="classic", tile=8, dtype="int32")
    assert distances.min() == 0 and (distances[~np.eye(20, dtype=bool)] == INT32_INF).all()


def test_networkx_graphs():
    directed = nx.DiGraph()
    directed.add_edge("a", "b", weight=2.5)
    directed.add_edge("b", "c")  # no weight: 1
    assert as_dense(directed).tolist() == [[0, 2.5, INF], [INF, 0, 1], [INF, INF, 0]]
    undirected = nx.Graph([(0, 1, {"length": 4})])
    assert as_dense(undirected, weight="length").tolist() == [[0, 4], [4, 0]]
    multi = nx.MultiDiGraph([(0, 1, {"weight": 5}), (0, 1, {"weight": 2})])
    assert as_dense(multi)[0, 1] == 2
    bad = nx.DiGraph([(0, 1, {"weight": "far"})])
    with pytest.raises(GraphInputError, match="not a number"):
        as_dense(bad)


@pytest.mark.parametrize(
    "graph, dtype, message",
    [
        (np.zeros((2, 3)), None, "square"),
        (np.array([[0, np.nan], [1, 0]]), None, "NaN"),
        (np.array([[0, -INF], [1, 0]]), None, "NaN or -inf"),
        (np.zeros((2, 2)), np.int64, "float32, float64, int16 or int32"),
        (np.array([["a", "b"], ["c", "d"]]), None, "real numbers"),
        (np.array([[0, 0.5], [1, 0]]), np.int32, "integer weights"),
        (np.array([[0, 2e9], [1, 0]]), np.int32, f"INT32_INF = {INT32_INF}"),
        ({"not": "a graph"}, None, "cannot read a graph from dict"),
        (sp.csr_array((2, 3)), None, "square"),
    ],
)
def test_bad_input_is_named(graph, dtype, message):
    with pytest.raises(GraphInputError, match=message):
        as_dense(graph, dtype=dtype)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_dimacs_reader(tmp_path):
    path = write(tmp_path, "g.gr", "c a comment\np sp 3 3\na 1 2 7\na 2 3 -1\n\na 2 3 4\n")
    assert as_dense(path).tolist() == [[0, 7, INF], [INF, 0, -1], [INF, INF, 0]]


@pytest.mark.parametrize(
    "text, message",
    [
        ("p sp 2 1\na 1 3 5\n", "g.gr:2: vertex 3 is outside 1..2"),
        ("p sp 2 1\na 1 2 x\n", "g.gr:2: weight 'x' is not a number"),
        ("a 1 2 3\n", "g.gr:1: arc before the problem line"),
        ("p sp 2 2\na 1 2 3\n", "announces 2 arcs but the file has 1"),
        ("p sp 2 1\nq 1 2\n", "g.gr:2: unknown line type 'q'"),
        ("p max 2 1\n", "g.gr:1: expected 'p sp"),
        ("p sp 2 1\na 1 2\n", "g.gr:2: expected 'a <from> <to> <weight>'"),
        ("c nothing\n", "no problem line"),
    ],
)
def test_dimacs_errors_name_the_line(tmp_path, text, message):
    with pytest.raises(GraphInputError, match=message):
        graphs.read_graph(write(tmp_path, "g.gr", text))


def test_matrix_market_reader(tmp_path):
    general = write(tmp_path, "g.mtx", "%%MatrixMarket matrix coordinate integer general\n% c\n3 3 2\n1 2 5\n3 1 -2\n")
    assert as_dense(general).tolist() == [[0, 5, INF], [INF, 0, INF], [-2, INF, 0]]
    symmetric = write(tmp_path, "s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n2 1 1.5\n")
    assert as_dense(symmetric).tolist() == [[0, 1.5], [1.5, 0]]
    pattern = write(tmp_path, "p.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n")
    assert as_dense(pattern).tolist() == [[0, 1], [INF, 0]]


@pytest.mark.parametrize(
    "text, message",
    [
        ("%%MatrixMarket matrix array real general\n2 2\n", "only the 'coordinate' layout"),
        ("%%MatrixMarket matrix coordinate complex general\n", "field 'complex'"),
        ("%%MatrixMarket matrix coordinate real hermitian\n", "symmetry 'hermitian'"),
        ("hello\n", "g.mtx:1: expected the header"),
        ("%%MatrixMarket matrix coordinate real general\n2 3 1\n", "g.mtx:2: an adjacency matrix must be square"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2\n", "g.mtx:3: expected 3 fields"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n", "announces 2 entries but the file has 1"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n0 2 1\n", "g.mtx:3: vertex 0 is outside 1..2"),
    ],
)
def test_matrix_market_errors_name_the_line(tmp_path, text, message):
    with pytest.raises(GraphInputError, match=message):
        graphs.read_graph(write(tmp_path, "g.mtx", text))


def test_unknown_file_type(tmp_path):
    with pytest.raises(GraphInputError, match="use one of .gr, .mtx"):
        graphs.read_graph(write(tmp_path, "g.csv", ""))


def test_random_graph_is_seeded_simple_and_sized():
    edges = graphs.random_graph(50, seed=3)
    assert len(edges.source) == 200
    assert not np.any(edges.source == edges.target)
    assert len(set(zip(edges.source.tolist(), edges.target.tolist()))) == 200
    again = graphs.random_graph(50, seed=3)
    assert np.array_equal(edges.weight, again.weight) and np.array_equal(edges.target, again.target)
    assert edges.weight.min() >= 1 and edges.weight.max() <= 1000


def test_random_graph_with_potential_has_negative_edges():
    edges = graphs.random_graph(40, 300, weights=(0, 10), potential=50, seed=1)
    assert edges.weight.min() < 0


def test_random_graph_rejects_impossible_sizes():
    with pytest.raises(GraphInputError, match="n\\(n-1\\) = 6"):
        graphs.random_graph(3, 7)


def test_polybench_matrix_matches_the_c_initialisation():
    n = 30
    matrix = graphs.polybench_matrix(n)
    for i in range(n):
        for j in range(n):
            expected = i * j % 7 + 1
            if (i + j) % 13 == 0 or (i + j) % 7 == 0 or (i + j) % 11 == 0:
                expected = 999
            assert matrix[i, j] == expected


def test_minnesota_road_graph():
    road = graphs.minnesota_road_graph()
    matrix = as_dense(road, dtype=np.int32)
    assert road.n == 2642
    assert np.array_equal(matrix, matrix.T)
    assert np.all(road.weight == np.round(road.weight)) and road.weight.max() < 100_000


def test_float_and_sparse_views_of_a_kernel_matrix():
    matrix = np.array([[0, INT32_INF], [0, 0]], dtype=np.int32)
    assert graphs.as_float_distances(matrix).tolist() == [[0, INF], [0, 0]]
    assert graphs.dense_to_sparse(matrix).nnz == 3


def test_exact_weights_narrow_only_where_a_dtype_would_not_hold_the_distances():
    from polyfw.graphs import exact_weights

    assert exact_weights(4096, "float32") == exact_weights(4096, "int32") == (1, 1000)
    for n, heaviest in ((2, 1000), (512, 64), (4096, 8), (40_000, 1)):
        assert exact_weights(n, "int16") == (1, heaviest)
    for n in (2, 512, 2048):  # what calibrate and explore's problems draw: exact in int16
        as_dense(random_graph(n, m=min(4 * n, n * (n - 1)), weights=exact_weights(n, "int16")), dtype="int16")
