"""int16: an exact element type with saturating sums, used only where a proved bound on every path
fits below INT16_INF, and dtype='auto' choosing the narrowest exact type (never an inexact one).

Small n and a few shared schedules: each new dtype's kernel module costs seconds to compile."""
import logging

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError
from scipy.sparse.csgraph import floyd_warshall, shortest_path

from codegen import floyd_warshall_nest
from codegen.distances import float64_distances
from codegen.kernels import KernelOptions
from polyfw import NegativeCycleError, graphs, solve
from polyfw.cli import main
from polyfw.graphs import GraphInputError, as_float_distances, missing_edges, summarize_weights
from polyfw.plan import chosen_dtype
from tiling.semirings import INT16_INF, INT32_INF, MIN_PLUS, bottom, top

#: a tile that leaves partial blocks for every n below, and one whose DD blocks hold full register
#: blocks (AVX2 and AVX-512: the vector IR's saturating add runs)
SMALL, VECTOR = "classic:tile=8", "classic:tile=64"


def weighted(n, seed, potential=15):
    """Integer weights, negative ones (potentials) where they close no negative cycle."""
    m = min(n * (n - 1), 3 * n)
    return graphs.random_graph(n, m, weights=(0, 20), seed=seed, potential=potential).to_sparse().tocsr()


def hops(n, seed, degree=3):
    """An unweighted graph: every arc 1, distances are hop counts."""
    rng = np.random.default_rng(seed)
    rows, columns = rng.integers(0, n, degree * n), rng.integers(0, n, degree * n)
    keep = rows != columns
    graph = sp.csr_array((np.ones(int(keep.sum())), (rows[keep], columns[keep])), shape=(n, n))
    graph.data[:] = 1  # an arc drawn twice was summed
    return graph


def test_int16_is_declared_once_with_its_infinity_and_saturating_sums():
    assert (top("int16"), bottom("int16"), INT16_INF) == (32767, -32767, 2**15 - 1)
    assert "int16" in MIN_PLUS.dtypes
    # the Python kernels clamp to the type's range before the cast, as llvm.sadd.sat does in the vector IR
    assert MIN_PLUS.narrow("int16", "x + y") == "np.int16(min(max(x + y, -32768), 32767))"
    assert MIN_PLUS.narrow("int32", "x + y") == "np.int32(x + y)"
    assert KernelOptions(dtype="int16").relax("c", "x", "y") == "keep(c, np.int16(min(max(x + y, -32768), 32767)))"
    matrix = np.array([[0, INT16_INF], [-3, 0]], dtype=np.int16)
    assert missing_edges(matrix).tolist() == [[False, True], [False, False]]
    assert float64_distances(matrix).tolist() == [[0.0, np.inf], [-3.0, 0.0]]


@pytest.mark.parametrize("schedule", [SMALL, VECTOR])
@pytest.mark.parametrize("n", [1, 2, 13, 150])
def test_int16_matches_scipy_and_the_nest(n, schedule):
    graph = weighted(n, seed=n)
    got = solve(graph, dtype="int16", schedule=schedule)
    expected = floyd_warshall(graph)
    assert got.dtype == np.int16
    assert np.array_equal(as_float_distances(got), expected)
    nest = graphs.as_dense(graph, dtype="int16")
    floyd_warshall_nest(nest)  # the bare nest: INF + (a negative arc) left where nothing is reachable
    reachable = np.isfinite(expected)
    assert np.array_equal(got[reachable], nest[reachable])


def test_unreachable_pairs_keep_int16_inf_without_overflow():
    # two components: INF + INF and INF + w saturate at INF in every kernel (tiles, register blocks)
    graph = sp.block_diag([weighted(80, 1, potential=0), weighted(70, 2, potential=0)]).tocsr()
    for schedule in (SMALL, VECTOR):
        got = solve(graph, dtype="int16", schedule=schedule)
        assert got[0, 100] == INT16_INF and got[100, 0] == INT16_INF
        assert np.array_equal(as_float_distances(got), floyd_warshall(graph))
    assert np.isinf(solve(graph, schedule=VECTOR)[0, 100])  # dtype 'auto': float64 with inf


def test_negative_edges_never_leak_through_missing_edges():
    # 0 -> 1 costs -5 and nothing reaches 0: INF + (-5) must not become a distance to 1 from 2
    matrix = np.array([[0, -5, np.inf], [np.inf, 0, np.inf], [np.inf, np.inf, 0]])
    got = solve(matrix, dtype="int16")
    assert got[2, 1] == INT16_INF and got[0, 1] == -5
    disconnected = sp.block_diag([weighted(40, 3), weighted(30, 4)]).tocsr()  # negative arcs in both
    assert disconnected.min() < 0
    for method in ("dense", "sparse"):
        got = solve(disconnected, dtype="int16", schedule=VECTOR if method == "dense" else "auto", method=method)
        assert np.array_equal(as_float_distances(got), floyd_warshall(disconnected))


@pytest.mark.parametrize("method", ["dense", "sparse"])
def test_a_negative_cycle_is_a_clear_error(method):
    matrix = np.full((4, 4), np.inf)
    matrix[0, 1], matrix[1, 2], matrix[2, 0], matrix[2, 3] = 1, -3, 1, 1
    with pytest.raises(NegativeCycleError, match="negative cycle"):
        solve(matrix, dtype="int16", method=method)


def test_paths_beyond_int16_are_refused_by_name_and_auto_computes_them_exactly(caplog):
    # a chain of 40 arcs of 1000: its end is 40,000 from its start, past INT16_INF
    n = 41
    chain = sp.csr_array((np.full(n - 1, 1000.0), (np.arange(n - 1), np.arange(1, n))), shape=(n, n))
    message = r"\(n-1\)\*\(max-min\) = 40000 must stay below INT16_INF = 32767 for exact int16 distances; use int32"
    for method in ("dense", "sparse"):
        with pytest.raises(GraphInputError, match=message):
            solve(chain, dtype="int16", method=method)
    with pytest.raises(GraphInputError, match=message):
        graphs.as_dense(chain, dtype="int16")
    with caplog.at_level(logging.INFO, logger="polyfw"):
        got = solve(chain, schedule=SMALL)
    assert "dtype='auto' chose int32: integer weights whose path lengths stay below INT32_INF" in caplog.text
    assert got.dtype == np.float64 and got[0, n - 1] == 40000.0
    assert np.array_equal(got, shortest_path(chain))


def test_hop_counts_are_exact_and_auto_picks_int16_for_them(caplog):
    graph = hops(300, seed=5)
    expected = shortest_path(graph, unweighted=True)
    assert np.isinf(expected).any()
    got = solve(graph, dtype="int16", schedule=VECTOR)
    assert np.array_equal(as_float_distances(got), expected)
    with caplog.at_level(logging.INFO, logger="polyfw"):
        auto = solve(graph, schedule=VECTOR)
    assert auto.dtype == np.float64 and np.array_equal(auto, expected)
    assert ("dtype='auto' chose int16: integer weights whose path lengths stay below INT16_INF = 32767 "
            "((n-1)*(max-min) = 299)") in caplog.text


def test_int16_predecessors_agree_with_the_distances():
    graph = weighted(30, seed=7)
    distances, pred = solve(graph, dtype="int16", schedule=SMALL, predecessors=True)
    expected, _ = floyd_warshall(graph, return_predecessors=True)
    assert np.array_equal(as_float_distances(distances), expected)
    for i, j in zip(*np.nonzero(np.isfinite(expected) & ~np.eye(30, dtype=bool))):
        # the last arc into j on i's shortest path is an arc that closes that length
        assert distances[i, pred[i, j]] + graph[pred[i, j], j] == distances[i, j]


def test_auto_is_the_narrowest_exact_type_the_target_offers():
    small = summarize_weights(weighted(50, seed=1))
    reasons = []
    assert chosen_dtype(MIN_PLUS, "cpu", small, reasons=reasons) == "int16"
    assert chosen_dtype(MIN_PLUS, "cudasim", small, reasons=reasons) == "int32"
    assert "chose int32: integer weights whose path lengths stay below INT32_INF" in reasons[-1]
    assert "(target cudasim has no int16)" in reasons[-1]
    huge = summarize_weights(weighted(50, seed=1) * 10**8)
    assert list(huge.exact_dtypes()) == ["float64"]
    assert chosen_dtype(MIN_PLUS, "cpu", huge) == "float64"
    # never inexact: a target with none of the exact types is refused, not rounded
    with pytest.raises(ValueError, match="target 'cudasim' computes in none of the types exact for these weights "
                                         r"\(float64\); pass a dtype by name to accept rounding"):
        chosen_dtype(MIN_PLUS, "cudasim", huge)
    fractional = summarize_weights(weighted(50, seed=1) * 0.5)
    assert list(fractional.exact_dtypes()) == ["float64"]
    # integer weights past int32 but below 2**24 in every path: float32 holds them exactly
    assert list(summarize_weights(sp.csr_array(np.array([[0, 2**20], [0, 0]]))).exact_dtypes()) == \
        ["int32", "float32", "float64"]
    assert INT32_INF > 2**24  # so on the CPU int32 always comes first


@given(n=st.integers(1, 24), density=st.floats(0.0, 1.0), low=st.integers(-4, 10), potential=st.integers(0, 30),
       tile=st.sampled_from([1, 3, 8, 64]), seed=st.integers(0, 2**16))
def test_property_random_graphs_match_scipy(n, density, low, potential, tile, seed):
    # negative weights below 0 (low < 0) may close negative cycles: both must then report one
    sparse = graphs.random_graph(n, int(density * n * (n - 1)), weights=(low, 50), seed=seed,
                                 potential=potential).to_sparse().tocsr()
    try:
        expected = floyd_warshall(sparse)
    except ScipyNegativeCycleError:
        with pytest.raises(NegativeCycleError):
            solve(sparse, dtype="int16", schedule=f"classic:tile={tile}")
        return
    got = solve(sparse, dtype="int16", schedule=f"classic:tile={tile}")
    assert got.dtype == np.int16 and np.array_equal(as_float_distances(got), expected)


def test_the_cli_computes_and_saves_int16(tmp_path):
    graph = tmp_path / "g.gr"
    graph.write_text("p sp 3 2\na 1 2 4\na 2 3 9\n")
    out = tmp_path / "d.npy"
    assert main(["solve", str(graph), "-o", str(out), "--dtype", "int16", "--schedule", SMALL]) == 0
    saved = np.load(out)
    assert saved.dtype == np.int16 and saved[0].tolist() == [0, 4, 13] and saved[2, 0] == INT16_INF
