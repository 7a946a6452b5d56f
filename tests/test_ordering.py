"""Nested-dissection order: a permutation, one that empties blocks, and solve exact through it."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, shortest_path

from polyfw import solve
from polyfw.graphs import Edges
from polyfw.graphs.ordering import LEAF, SMALLEST, dissection_order, worth_reordering


def grid_arcs(side: int) -> tuple[np.ndarray, np.ndarray]:
    index = np.arange(side * side).reshape(side, side)
    pairs = [(index[:, :-1], index[:, 1:]), (index[:-1, :], index[1:, :])]
    return (np.concatenate([a.ravel() for a, _ in pairs]), np.concatenate([b.ravel() for _, b in pairs]))


@pytest.mark.parametrize("case", ["grid", "two grids", "path", "star", "no arcs", "one vertex", "random"])
def test_the_order_is_a_permutation(case):
    rng = np.random.default_rng(3)
    if case == "grid":
        n, (source, target) = 900, grid_arcs(30)
    elif case == "two grids":  # disconnected: each component is ordered on its own
        source, target = grid_arcs(20)
        n, source, target = 800, np.concatenate([source, source + 400]), np.concatenate([target, target + 400])
    elif case == "path":
        n = 500
        source, target = np.arange(n - 1), np.arange(1, n)
    elif case == "star":
        n = 300
        source, target = np.zeros(n - 1, dtype=int), np.arange(1, n)
    elif case == "no arcs":
        n, source, target = 200, np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    elif case == "one vertex":
        n, source, target = 1, np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    else:
        n = 700
        source, target = rng.integers(0, n, 2000), rng.integers(0, n, 2000)
    order = dissection_order(n, source, target)
    assert sorted(order.tolist()) == list(range(n))


def test_every_component_is_ordered_contiguously_and_in_one_pass():
    """Many components (a forest of pairs, paths and isolated vertices, 60,000 vertices): each one's
    vertices end up together, and a large one is dissected. Splitting off one component at a time was
    quadratic in their number: 200,000 isolated vertices took 100 s."""
    rng = np.random.default_rng(8)
    pairs = np.arange(0, 20_000, 2)
    path = np.arange(20_000, 20_000 + 3 * LEAF)  # one component above LEAF
    source = np.concatenate([pairs, path[:-1]])
    target = np.concatenate([pairs + 1, path[1:]])
    n = 60_000  # the rest isolated
    shuffle = rng.permutation(n)
    order = dissection_order(n, shuffle[source], shuffle[target])
    assert sorted(order.tolist()) == list(range(n))
    position = np.empty(n, dtype=int)
    position[order] = np.arange(n)
    assert np.all(np.abs(position[shuffle[pairs]] - position[shuffle[pairs + 1]]) == 1)
    spread = position[shuffle[path]]
    assert spread.max() - spread.min() == len(path) - 1


def _empty_block_share(n: int, source, target, order, tile: int) -> float:
    """The share of DD tile-layers (kb, ib, jb) one of whose operand blocks holds no path, with
    vertices numbered by `order`: a path from I to J through vertices of blocks before K's goes
    through one component of those vertices (or is an arc)."""
    position = np.empty(n, dtype=int)
    position[order] = np.arange(n)
    arcs = sp.csr_matrix((np.ones(len(source)), (position[source], position[target])), shape=(n, n))
    arcs = arcs + arcs.T
    blocks, empty, total = -(-n // tile), 0, 0
    in_block = sp.csr_matrix((np.ones(n), (np.arange(n) // tile, np.arange(n))), shape=(blocks, n))
    for kb in range(blocks):
        prefix = kb * tile
        count, label = connected_components(arcs[:prefix, :prefix]) if prefix else (1, np.zeros(0, int))
        touches = sp.csr_matrix((np.ones(arcs[:, :prefix].nnz), (arcs[:, :prefix].tocoo().row,
                                                                  label[arcs[:, :prefix].tocoo().col])), shape=(n, count))
        touches = touches + sp.csr_matrix((np.ones(prefix), (np.arange(prefix), label)), shape=(n, count))
        linked = ((touches @ touches.T) + arcs + sp.eye(n)).tocsr()
        linked.data[:] = 1
        holds = (in_block @ linked @ in_block.T).toarray() > 0  # holds[ib, jb]: block (ib, jb) has a path
        others = np.arange(blocks) != kb
        total += int(others.sum()) ** 2
        empty += int((~np.logical_and.outer(holds[others, kb], holds[kb, others])).sum())
    return empty / total


def test_dissection_leaves_most_blocks_of_a_grid_empty():
    side, tile = 40, 64
    source, target = grid_arcs(side)
    n = side * side
    shuffled = np.random.default_rng(0).permutation(n)
    dissected = _empty_block_share(n, source, target, dissection_order(n, source, target), tile)
    assert dissected > 0.6
    assert dissected > _empty_block_share(n, source, target, np.arange(n), tile) + 0.1
    assert dissected > _empty_block_share(n, source, target, shuffled, tile) + 0.3


def test_only_large_sparse_graphs_are_reordered():
    assert worth_reordering(SMALLEST, 4 * SMALLEST)
    assert not worth_reordering(SMALLEST - 1, 4 * SMALLEST)
    assert not worth_reordering(4096, 4096**2 // 20)  # 5% of the arcs: 200 a vertex
    assert LEAF < SMALLEST


@pytest.fixture(scope="module")
def road_like():
    """A 24 x 24 grid with shortcuts, integer weights, directed arcs of different weights each way."""
    source, target = grid_arcs(24)
    rng = np.random.default_rng(5)
    extra = rng.integers(0, 576, (2, 60))
    source, target = np.concatenate([source, target, extra[0]]), np.concatenate([target, source, extra[1]])
    weights = rng.integers(1, 500, len(source)).astype(np.float64)
    matrix = sp.csr_array((weights, (source, target)), shape=(576, 576))
    matrix.sum_duplicates()
    return matrix


def test_solve_is_exact_in_dissection_order(road_like):
    want = shortest_path(road_like)
    assert road_like.shape[0] >= SMALLEST
    np.testing.assert_array_equal(solve(road_like), want)
    coo = road_like.tocoo()
    edges = Edges(576, coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data)
    got = solve(edges, dtype="int32", schedule="classic:tile=64")
    np.testing.assert_array_equal(np.where(got >= 2**30 - 1, np.inf, got), want)
    np.testing.assert_array_equal(solve(road_like, dtype="float32", schedule="recursive:tile=64"), want)


def test_solve_keeps_undirected_inputs_undirected_in_dissection_order(road_like):
    graph = nx.Graph()
    graph.add_nodes_from(range(576))  # first: a networkx graph's vertices are numbered in insertion order
    coo = sp.triu(road_like).tocoo()
    graph.add_weighted_edges_from(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()))
    symmetric = sp.triu(road_like)
    want = shortest_path(symmetric, directed=False)
    np.testing.assert_array_equal(solve(graph), want)
    np.testing.assert_array_equal(solve(symmetric, directed=False), want)


def test_predecessors_stay_in_the_input_order(road_like):
    distances, pred = solve(road_like, predecessors=True)
    want, want_pred = shortest_path(road_like, return_predecessors=True)
    np.testing.assert_array_equal(distances, want)
    # a predecessor is a vertex on a shortest path: d[i, p] + w(p, j) = d[i, j]
    weights = road_like.toarray()
    i, j = np.nonzero(pred >= 0)
    np.testing.assert_array_equal(distances[i, pred[i, j]] + weights[pred[i, j], j], distances[i, j])
    assert ((pred < 0) == (want_pred < 0)).all()
