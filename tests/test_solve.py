import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError
from scipy.sparse.csgraph import floyd_warshall

from codegen import floyd_warshall_naive, floyd_warshall_nest
from polyfw import NegativeCycleError, solve
from polyfw import graphs
from tiling.semirings import INT32_INF
from polyfw.graphs import as_float_distances

DTYPES = [np.float32, np.float64, np.int32]


def scipy_distances(sparse, directed=True):
    return floyd_warshall(sp.csr_array(sparse), directed=directed)


def make_graph(n, directed, seed=0):
    m = min(n * (n - 1), 3 * n)
    # negative edges only where they cannot close a negative cycle: directed graphs with potentials
    return graphs.random_graph(n, m, weights=(0, 20), seed=seed, potential=15 if directed else 0).to_sparse()


@pytest.mark.isa
@pytest.mark.parametrize("n", [1, 2, 3, 17, 64, 200])
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("form", ["dense", "sparse"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_scipy(n, directed, form, dtype):
    sparse = make_graph(n, directed, seed=n)
    expected = scipy_distances(sparse, directed)
    graph = sparse if form == "sparse" else graphs.as_dense(sparse)
    got = solve(graph, dtype=dtype, directed=directed, method="dense", null_value=np.inf)  # 0-weight arcs are arcs
    assert got.dtype == np.dtype(dtype)
    assert np.array_equal(as_float_distances(got), expected)


def test_disconnected_graph_keeps_inf():
    sparse = sp.block_diag([make_graph(10, True, 1).tocsr(), make_graph(7, True, 2).tocsr()])
    for dtype in DTYPES:
        got = solve(sparse, dtype=dtype)
        assert np.array_equal(as_float_distances(got), scipy_distances(sparse))
        assert got[0, 15] == (INT32_INF if dtype == np.int32 else np.inf)


def test_int32_negative_edges_never_leak_through_missing_edges():
    # 0 -> 1 costs -5, nothing reaches 0: INF + (-5) must not become a distance to 1 from 2.
    matrix = np.array([[0, -5, np.inf], [np.inf, 0, np.inf], [np.inf, np.inf, 0]])
    got = solve(matrix, dtype=np.int32)
    assert got[2, 1] == INT32_INF and got[0, 1] == -5


def test_n_equal_one():
    assert solve(np.array([[7.0]])).tolist() == [[0.0]]


@pytest.mark.parametrize("dtype", DTYPES)
def test_negative_cycle_is_a_clear_error(dtype):
    matrix = np.full((4, 4), np.inf)
    matrix[0, 1], matrix[1, 2], matrix[2, 0], matrix[2, 3] = 1, -3, 1, 1
    with pytest.raises(NegativeCycleError, match="negative cycle through vertex") as caught:
        solve(matrix, dtype=dtype)
    assert caught.value.vertex in (0, 1, 2)
    assert isinstance(caught.value, ScipyNegativeCycleError)


def test_negative_self_loop_is_a_negative_cycle():
    with pytest.raises(NegativeCycleError):
        solve(np.array([[-1.0, 0.0], [0.0, 0.0]]))


def test_unknown_schedule_is_named():
    with pytest.raises(ValueError, match="unknown schedule .magic.*classic"):
        solve(np.zeros((2, 2)), schedule="magic")


def literal_nest(a):
    a = a.copy()
    n = len(a)
    for k in range(n):
        for i in range(n):
            for j in range(n):
                a[i, j] = min(a[i, j], a[i, k] + a[k, j])
    return a


@pytest.mark.parametrize("dtype", DTYPES)
def test_kernels_reproduce_the_polybench_nest(dtype):
    matrix = graphs.polybench_matrix(24, dtype)
    expected = literal_nest(matrix)
    nest, naive = matrix.copy(), matrix.copy()
    floyd_warshall_nest(nest)
    assert floyd_warshall_naive(naive) == -1
    assert np.array_equal(nest, expected) and np.array_equal(naive, expected)


@given(
    n=st.integers(1, 40),
    density=st.floats(0.0, 1.0),
    low=st.integers(-10, 10),
    potential=st.integers(0, 30),
    dtype=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**16),
)
def test_property_random_graphs_match_scipy(n, density, low, potential, dtype, seed):
    m = int(density * n * (n - 1))
    sparse = graphs.random_graph(n, m, weights=(max(low, 0), 50), seed=seed, potential=potential).to_sparse()
    try:
        expected = scipy_distances(sparse)
    except ScipyNegativeCycleError:
        with pytest.raises(NegativeCycleError):
            solve(sparse, dtype=dtype)
        return
    assert np.array_equal(as_float_distances(solve(sparse, dtype=dtype)), expected)


@given(
    n=st.integers(1, 12),
    entries=st.data(),
    dtype=st.sampled_from(DTYPES),
)
def test_property_arbitrary_signed_weights(n, entries, dtype):
    # Any signs at all: either both agree on the distances or both report a negative cycle.
    # (scipy ignores self-loops; a negative one is a negative cycle for polyfw.)
    weights = entries.draw(st.lists(st.one_of(st.none(), st.integers(-20, 60)), min_size=n * n, max_size=n * n))
    matrix = np.array([np.inf if w is None else w for w in weights], dtype=np.float64).reshape(n, n)
    sparse = graphs.dense_to_sparse(matrix)
    try:
        expected = scipy_distances(sparse)
        if np.any(np.diagonal(matrix) < 0):
            raise ScipyNegativeCycleError("negative self-loop")
    except ScipyNegativeCycleError:
        with pytest.raises(NegativeCycleError):
            solve(matrix, dtype=dtype)
        return
    assert np.array_equal(as_float_distances(solve(matrix, dtype=dtype)), expected)


@pytest.mark.parametrize("options", [{}, {"directed": False}, {"unweighted": True}, {"return_predecessors": True},
                                     {"dtype": "int32", "schedule": "generalized:tile=8,kappa=2"}])
def test_floyd_warshall_is_a_drop_in_for_scipy(options):
    from scipy.sparse.csgraph import floyd_warshall as scipy_floyd_warshall

    from polyfw import floyd_warshall
    from polyfw.graphs import as_dense, dense_to_sparse, random_graph

    graph = dense_to_sparse(as_dense(random_graph(40, seed=3)))
    scipy_options = {k: v for k, v in options.items() if k not in ("dtype", "schedule")}
    expected, ours = scipy_floyd_warshall(graph, **scipy_options), floyd_warshall(graph, **options)
    for theirs, mine in zip(*((expected, ours) if isinstance(ours, tuple) else ((expected,), (ours,)))):
        assert mine.dtype == theirs.dtype
        np.testing.assert_array_equal(mine, theirs)
    dense = graph.toarray()  # scipy reads dense zeros as missing edges; so must the drop-in
    np.testing.assert_array_equal(floyd_warshall(dense), scipy_floyd_warshall(dense))


def test_floyd_warshall_raises_scipys_negative_cycle_error():
    from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError

    from polyfw import floyd_warshall

    with pytest.raises(ScipyNegativeCycleError):
        floyd_warshall(np.array([[0.0, 1.0], [-2.0, 0.0]]))
