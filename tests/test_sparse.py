"""Sparse algorithms: exact against scipy, every tree checked by Graph500's five rules, and the
rules shown to catch broken trees."""
from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit, prange
from scipy.sparse.csgraph import dijkstra as scipy_dijkstra
from scipy.sparse.csgraph import shortest_path

from codegen.intrinsics import fetch_add, prange_only
from polyfw import NegativeCycleError, solve
from polyfw.sparse import (ValidationError, as_csr, bfs, johnson, rmat_edges, sssp, validate_bfs,
                           validate_sssp)
from polyfw.sparse.csr import PULLS_BEFORE_LIGHTEST_FIRST
from polyfw.sparse.kernels import LIGHTEST_AHEAD, breadth_first, hubs_first, lightest_first
from polyfw.sparse.searches import ALPHA, BETA
from polyfw.sparse.team import STEP_ROWS, SUMMED, TEAM_WORDS, join, next_step, step_rows, team_deadline
from tiling.semirings import INT32_INF
from polyfw.graphs import Edges, GraphInputError, minnesota_road_graph
from tests.bruteforce import chain_length


def _scipy(csr) -> sp.csr_array:
    return sp.csr_array((csr.weights, csr.indices, csr.indptr), shape=(csr.n, csr.n))


def _levels_by_scipy(csr, source: int) -> np.ndarray:
    return scipy_dijkstra(_scipy(csr), indices=source, unweighted=True)


def _graphs():
    rmat = as_csr(rmat_edges(10, seed=1, weighted=True), directed=False)
    road = as_csr(minnesota_road_graph())
    rng = np.random.default_rng(5)
    dense = rng.integers(1, 50, size=(60, 60)).astype(np.float64)
    dense[rng.random((60, 60)) < 0.9] = np.inf
    return {"rmat": rmat, "road": road, "random": as_csr(dense)}


GRAPHS = _graphs()


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("direction", ["top-down", "optimizing"])
def test_bfs_levels_are_scipys_and_the_tree_passes_graph500s_rules(name, direction):
    csr = GRAPHS[name]
    for source in np.flatnonzero(csr.out_degree > 0)[:3]:
        levels, parent = bfs(csr, int(source), direction=direction)
        validate_bfs(csr, int(source), levels, parent)
        expected = _levels_by_scipy(csr, int(source))
        reached = np.isfinite(expected)
        assert np.array_equal(levels != np.iinfo(levels.dtype).max, reached)
        assert np.array_equal(levels[reached], expected[reached])


def test_levels_take_the_smallest_dtype():
    path = nx.path_graph(300)
    levels, _ = bfs(path, 0)
    assert levels.dtype == np.uint16 and levels[-1] == 299
    assert bfs(nx.path_graph(10), 0)[0].dtype == np.uint8


@pytest.mark.parametrize("tail", [253, 254, 255, 400])
def test_a_search_deeper_than_a_byte_goes_bottom_up_with_exact_levels(tail):
    """A path of `tail` edges, then a dense random graph at its end: the search writes its levels in a byte
    a vertex until a level would be 255 (a byte's 'unreached'), copies them into int32 and goes on there,
    and the dense part's big frontiers run bottom-up past that point (and before it, for the short paths)."""
    rng = np.random.default_rng(tail)
    blob = 3000
    heads, tails_ = rng.integers(0, blob, 20 * blob) + tail, rng.integers(0, blob, 20 * blob) + tail
    source = np.concatenate([np.arange(tail), heads])
    target = np.concatenate([np.arange(1, tail + 1), tails_])
    csr = as_csr(Edges(tail + blob, source, target, np.ones(len(source))), directed=False)
    steps: list = []
    levels, parent = bfs(csr, 0, steps=steps)
    validate_bfs(csr, 0, levels, parent)
    expected = _levels_by_scipy(csr, 0)
    reached = np.isfinite(expected)
    assert levels.dtype == (np.uint8 if expected[reached].max() < 255 else np.uint16)
    assert np.array_equal(levels != np.iinfo(levels.dtype).max, reached)
    assert np.array_equal(levels[reached], expected[reached])
    assert "bu" in {kind for kind, *_ in steps}


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 60), st.floats(0.0, 0.4), st.integers(0, 10**6), st.booleans())
def test_hubs_first_rows_lead_with_their_two_longest_rows_and_keep_the_rest_in_order(n, density, seed, directed):
    """The rows a bottom-up step reads: a row's two entries whose own rows are longest come first (ties:
    the first in row order), then the others as the graph holds them; every row keeps its entries."""
    rng = np.random.default_rng(seed)
    weights = np.where(rng.random((n, n)) < density, 1.0, np.inf)
    csr = as_csr(weights, directed=directed).reverse
    length = np.diff(csr.indptr)
    for v in range(n):
        row, hubs = csr.indices[csr.indptr[v]:csr.indptr[v + 1]], csr.hubs_first[csr.indptr[v]:csr.indptr[v + 1]]
        lead = []
        rest = list(row)
        for _ in range(min(2, len(row))):
            longest = max(rest, key=lambda u: length[u])  # max keeps the first of equals
            lead.append(longest)
            rest.remove(longest)
        assert list(hubs) == lead + rest, f"row {v}: {list(row)} -> {list(hubs)}"
    for compiled in (hubs_first.serial, hubs_first.parallel):  # small graphs take the serial copy
        copied = np.empty_like(csr.indices)
        compiled(csr.indices, csr.indptr, copied)
        assert np.array_equal(copied, csr.hubs_first)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 60), st.floats(0.0, 0.6), st.integers(1, 12), st.integers(1, 5), st.integers(0, 10**6))
def test_lightest_first_rows_lead_with_their_lightest_entries_and_keep_the_rest_in_order(n, density, heaviest,
                                                                                        ahead, seed):
    """The rows a parent pull reads: a row's `ahead` lightest entries come first, lightest first (ties: the
    first in row order), then the others as the graph holds them, each with its own weight; few distinct
    weights make many ties."""
    rng = np.random.default_rng(seed)
    weights = np.where(rng.random((n, n)) < density, rng.integers(1, heaviest + 1, (n, n)), np.inf)
    csr = as_csr(weights)
    for compiled in (lightest_first.serial, lightest_first.parallel):
        copied = np.empty_like(csr.indices), np.empty_like(csr.weights)
        compiled(csr.indices, csr.weights, csr.indptr, ahead, *copied)
        for v in range(n):
            row = slice(csr.indptr[v], csr.indptr[v + 1])
            entries = list(zip(csr.weights[row], range(row.stop - row.start), csr.indices[row]))
            lead = sorted(entries)[:ahead]
            expected = [(w, u) for w, _, u in lead] + [(w, u) for w, at, u in entries if (w, at, u) not in lead]
            assert list(zip(copied[1][row], copied[0][row])) == expected, f"row {v}"


def test_parents_are_pulled_in_row_order_until_a_lightest_first_copy_pays():
    """A graph's first PULLS_BEFORE_LIGHTEST_FIRST parent searches read its in-rows as it holds them, later
    ones the lightest-first copy (int32 weights where the search ran on them); both give trees of tight
    edges, and a directed graph's copy is its reverse's."""
    rng = np.random.default_rng(3)
    dense = rng.integers(1, 50, size=(120, 120)).astype(np.float64)
    dense[rng.random((120, 120)) < 0.8] = np.inf
    for directed in (False, True):
        csr = as_csr(dense, directed=directed)
        into = csr.reverse
        for search in range(PULLS_BEFORE_LIGHTEST_FIRST + 2):
            assert ("lightest_first" in into.__dict__) == (search > PULLS_BEFORE_LIGHTEST_FIRST)
            dist, parent = sssp(csr, 0, method="delta-stepping")
            validate_sssp(csr, 0, dist, parent)
            assert np.array_equal(dist, scipy_dijkstra(_scipy(csr), indices=0))
        indices, weights = into.lightest_first
        assert weights.dtype == np.int32 and (np.diff(weights[into.indptr[7]:into.indptr[7] + 2]) >= 0).all()
        assert "lightest_first" not in csr.__dict__ or not directed


def test_auto_is_dijkstra_below_the_arcs_a_team_pays_for_and_delta_stepping_above(monkeypatch):
    """sssp(method='auto') on fewer than DIJKSTRA_BELOW_ARCS arcs never starts delta-stepping's team (a
    search that would refuses here); with the bound at 0 it does, and with steps= it does whatever the size."""
    from polyfw.sparse import paths

    csr = GRAPHS["rmat"]
    expected = scipy_dijkstra(_scipy(csr), indices=0)
    stepping = paths._stepping

    def refused(*args, **kwargs):
        raise AssertionError("delta-stepping ran")

    monkeypatch.setattr(paths, "_stepping", refused)
    dist, parent = sssp(csr, 0)
    assert csr.m < paths.DIJKSTRA_BELOW_ARCS and np.array_equal(dist, expected)
    validate_sssp(csr, 0, dist, parent)
    with pytest.raises(AssertionError, match="delta-stepping ran"):
        sssp(csr, 0, steps=[])
    monkeypatch.setattr(paths, "DIJKSTRA_BELOW_ARCS", 0)
    with pytest.raises(AssertionError, match="delta-stepping ran"):
        sssp(csr, 0)
    monkeypatch.setattr(paths, "_stepping", stepping)
    assert np.array_equal(sssp(csr, 0)[0], expected)


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("method", ["dijkstra", "delta-stepping", "bellman-ford"])
def test_sssp_is_exact_and_passes_graph500s_rules(name, method):
    csr = GRAPHS[name]
    for source in np.flatnonzero(csr.out_degree > 0)[:3]:
        dist, parent = sssp(csr, int(source), method=method)
        validate_sssp(csr, int(source), dist, parent)
        assert np.array_equal(dist, scipy_dijkstra(_scipy(csr), indices=int(source)))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 30), st.integers(0, 120), st.booleans(), st.integers(0, 10**6))
def test_arcs_in_order_skip_the_sort_and_give_the_sorted_graph(n, m, shuffled, seed):
    """A CSR from arcs already strictly ordered by (source, target) (a canonical scipy matrix's) equals the
    one the sort builds; repeats or any disorder take the sort, which keeps the lightest of a pair."""
    from polyfw.sparse.csr import _from_arrays

    rng = np.random.default_rng(seed)
    source, target = rng.integers(0, n, m), rng.integers(0, n, m)
    weight = rng.integers(1, 9, m).astype(np.float64)
    pairs = np.unique(np.stack([source, target], axis=1), axis=0)  # ordered, no repeats
    order = rng.permutation(m) if shuffled else np.arange(m)
    for arcs in ((source[order], target[order], weight[order]),
                 (pairs[:, 0], pairs[:, 1], rng.integers(1, 9, len(pairs)).astype(np.float64))):
        built = _from_arrays(n, *arcs)
        lightest = {}
        for u, v, w in zip(*arcs):
            lightest[u, v] = min(w, lightest.get((u, v), np.inf))
        keys = sorted(lightest)
        assert [(int(u), int(v)) for u in range(n) for v in built.indices[built.indptr[u]:built.indptr[u + 1]]] \
            == [(int(u), int(v)) for u, v in keys]
        assert built.weights.tolist() == [lightest[key] for key in keys]


@pytest.mark.parametrize("hubs", [False, True])
def test_rows_built_in_parallel_are_the_lexsorted_ones(hubs):
    """Past PARALLEL_FROM_ENTRIES arcs the rows are placed, sorted and packed by the parallel copies: the
    same CSR as numpy's lexsort of (source, target, weight), lightest of each repeated pair, whether the
    rows are short (insertion sort) or a few hold most arcs (argsort)."""
    from polyfw.sparse.csr import _from_arrays

    rng = np.random.default_rng(5)
    n, m = 3000, 2**16
    source = rng.choice([0, 1, 2, 7], m) if hubs else rng.integers(0, n, m)
    source[:500] = rng.integers(0, n, 500)
    target, weight = rng.integers(0, 1500, m), rng.integers(1, 9, m).astype(np.float64)
    built = _from_arrays(n, source, target, weight)
    order = np.lexsort((weight, target, source))
    source, target, weight = source[order], target[order], weight[order]
    first = np.ones(m, dtype=bool)
    first[1:] = (source[1:] != source[:-1]) | (target[1:] != target[:-1])
    assert first.sum() < m  # repeats were cut
    assert np.array_equal(built.indptr[1:], np.cumsum(np.bincount(source[first], minlength=n)))
    assert np.array_equal(built.indices, target[first]) and np.array_equal(built.weights, weight[first])


def test_parents_pushed_or_pulled_are_trees_of_tight_edges():
    """A directed graph's parents are pushed along out-edges until its reverse exists, then pulled
    along in-edges; an undirected graph is its own reverse (no transpose is built for it)."""
    rng = np.random.default_rng(11)
    dense = rng.integers(1, 9, size=(80, 80)).astype(np.float64)
    dense[rng.random((80, 80)) < 0.85] = np.inf
    directed = as_csr(dense)
    assert not directed.has_reverse
    pushed = sssp(directed, 0, method="delta-stepping")
    transposed = directed.reverse
    assert directed.has_reverse and transposed is not directed
    pulled = sssp(directed, 0, method="delta-stepping")
    for dist, parent in (pushed, pulled):
        validate_sssp(directed, 0, dist, parent)
    undirected = as_csr(dense, directed=False)
    assert undirected.symmetric and undirected.reverse is undirected
    again = as_csr(sp.csr_array((undirected.weights, undirected.indices, undirected.indptr)).T.tocsr())
    assert np.array_equal(again.indptr, undirected.indptr) and np.array_equal(again.indices, undirected.indices)
    validate_sssp(undirected, 0, *sssp(undirected, 0))


def test_delta_stepping_loses_no_update_under_contention():
    """Every relaxation of a bucket races for the same vertices: the atomic min must decide on the
    value it replaces (a second, reordered read of dist once let a larger distance overwrite a smaller
    one: about 1 search in 500 on R-MAT scale 16 when the cores were shared). Many roots, each
    checked exactly; the other pytest worker or a parallel kernel supplies the contention."""
    csr = as_csr(rmat_edges(12, seed=7, weighted=True), directed=False)
    roots = np.flatnonzero(csr.out_degree > 0)[::16][:150]
    expected = scipy_dijkstra(_scipy(csr), indices=roots)
    for row, root in enumerate(roots):
        dist, parent = sssp(csr, int(root), method="delta-stepping")
        assert np.array_equal(dist, expected[row]), f"root {root}"
    validate_sssp(csr, int(root), dist, parent)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.sampled_from([0.25, 3.0, 40.0, np.inf]), st.booleans())
def test_delta_stepping_is_exact_for_any_bucket_width(n, seed, delta, fractional):
    """Weights up to 1000 against buckets of width 0.25 put most vertices beyond the 255 slots (the far
    set); zero weights keep a vertex in its bucket; delta inf is one bucket."""
    from polyfw.sparse.paths import delta_stepping

    rng = np.random.default_rng(seed)
    dense = rng.integers(0, 1000, size=(n, n)) + (rng.random((n, n)) if fractional else 0.0)
    dense[rng.random((n, n)) < 0.8] = np.inf
    csr = as_csr(dense)
    source = int(rng.integers(n))
    assert np.array_equal(delta_stepping(csr, source, delta), scipy_dijkstra(_scipy(csr), indices=source))


@pytest.mark.parametrize("workers, deadline", [(None, None), (1, 0), (8, 0), (8, 10**7)])
def test_a_full_bucket_slot_sends_its_overflow_to_the_far_set(workers, deadline):
    """Slots of one entry each: every bucket but the first overflows into the far set, and the answers stay
    exact, whoever makes up the team (as in test_a_bfs_team_of_any_size_finds_the_same_levels)."""
    import numba

    from polyfw.sparse.kernels import stepping
    from polyfw.sparse.paths import bucket_slots

    csr = as_csr(rmat_edges(10, seed=2, weighted=True), directed=False)
    expected = scipy_dijkstra(_scipy(csr), indices=[1, 5])
    for row, source in enumerate((1, 5)):
        dist = np.full(csr.n, np.inf)
        log = np.empty((4 * csr.n, 5), dtype=np.int64)
        assert stepping(csr.indptr, csr.indices, csr.weights, source, dist, 8.0, bucket_slots(csr, 8.0)[0], 1,
                        workers or numba.get_num_threads(), -1, team_deadline() if deadline is None else deadline,
                        log)[0]
        assert np.array_equal(dist, expected[row])


def test_a_vertex_first_reached_in_the_bucket_of_the_unreached_mark_joins_that_bucket():
    """A vertex joins a later bucket only when its distance was in another bucket; an int32 'unreached'
    mark is a distance too, and with delta past half of it a reached vertex shares its bucket (1 here):
    vertex 1 must still join bucket 1, or vertex 2 behind it is never reached."""
    from polyfw.sparse.csr import _from_arrays
    from polyfw.sparse.kernels import UNREACHED_INT32, stepping

    csr = _from_arrays(3, np.array([0, 1]), np.array([1, 2]), np.array([1.5e9, 1.0]))
    for workers in (1, 2):
        dist = np.full(3, UNREACHED_INT32, dtype=np.int32)
        log = np.empty((16, 5), dtype=np.int64)
        assert stepping(csr.indptr, csr.indices, csr.weights.astype(np.int32), 0, dist, 1.2e9, 4, 3, workers, -1,
                        team_deadline(), log)[0]
        assert dist.tolist() == [0, 1_500_000_000, 1_500_000_001]


def test_the_bucket_width_is_the_mean_weight_over_the_mean_degree_and_its_slots_reach_the_heaviest():
    """Six arcs of mean weight 10 among three vertices: width 5. An edgeless graph: width 1 (mean weight 1).
    A sparse graph (0.5 arcs a vertex): the mean weight, not more. The slots reach heaviest / width + 2
    buckets ahead, at most BUCKET_SLOTS; a slot holds n entries unless window * n passes SLOT_ENTRIES."""
    from polyfw.sparse import paths
    from polyfw.sparse.csr import _from_arrays

    dense = _from_arrays(3, np.array([0, 0, 1, 1, 2, 2]), np.array([1, 2, 0, 2, 0, 1]),
                         np.array([4.0, 16.0, 10.0, 10.0, 10.0, 10.0]))
    assert dense.bucket_width == 5.0
    assert paths.bucket_slots(dense, 5.0) == (math.ceil(16 / 5) + 2, 3)
    assert _from_arrays(3, np.zeros(0, int), np.zeros(0, int), np.zeros(0)).bucket_width == 1.0
    sparse = _from_arrays(8, np.array([0, 1, 2, 3]), np.array([1, 2, 3, 4]), np.array([1.0, 2.0, 3.0, 1000.0]))
    assert sparse.bucket_width == sparse.mean_weight
    assert paths.bucket_slots(sparse, 0.001) == (paths.BUCKET_SLOTS, 8)
    assert paths.bucket_slots(sparse, np.inf) == (2, 8)
    assert paths.bucket_slots(sparse, 1e-307) == (paths.BUCKET_SLOTS, 8)  # heaviest / width: inf
    huge = paths.SLOT_ENTRIES // 10 + 1
    big = _from_arrays(huge, np.array([0]), np.array([1]), np.array([37.0]))
    window, capacity = paths.bucket_slots(big, 4.0)
    assert window == 12 and capacity == paths.SLOT_ENTRIES // 12 < huge


def test_a_vertex_lowered_many_times_into_one_later_bucket_is_found_exactly():
    """A sink that 3,000 leaves of one bucket each lower into the same later bucket, again and again; the
    leaves' round runs on one member (3,000 + 3,000 edges at most), which claims its whole frontier at
    once. Distances and parents equal scipy's, with one thread and with all."""
    import numba

    from polyfw.sparse.csr import _from_arrays
    from polyfw.sparse.paths import delta_stepping

    leaves = 3000
    rng = np.random.default_rng(4)
    sink, tail = leaves + 1, leaves + 2
    source = np.concatenate([np.zeros(leaves, dtype=np.int64), np.arange(1, leaves + 1), [sink]])
    target = np.concatenate([np.arange(1, leaves + 1), np.full(leaves, sink), [tail]])
    # later leaves reach the sink by lighter edges: it is lowered again and again, never below bucket 12
    weights = np.concatenate([rng.integers(1, 4, leaves), 100 + np.arange(leaves, 0, -1) % 7, [5]]).astype(float)
    csr = _from_arrays(tail + 1, source, target, weights)
    expected = scipy_dijkstra(_scipy(csr), indices=0)
    threads = numba.get_num_threads()
    try:
        for count in {1, threads}:
            numba.set_num_threads(count)
            assert np.array_equal(delta_stepping(csr, 0, 8.0), expected)
            dist, parent = sssp(csr, 0, method="delta-stepping")
            assert np.array_equal(dist, expected)
            validate_sssp(csr, 0, dist, parent)
    finally:
        numba.set_num_threads(threads)


def test_the_atomic_min_lowers_only_to_smaller_values_on_float64_and_int32_distances():
    from numba import njit

    from polyfw.sparse.kernels import UNREACHED_INT32, _lower

    @njit
    def lower_all(bits, values):
        return [_lower(bits, 0, value) for value in values]

    # (lowered, the distance before): the bucket it was in tells whether it is in a later bucket's slot already
    dist = np.full(1, np.inf)
    assert lower_all(dist.view(np.int64), np.array([7.0, 9.0, 7.0, 3.0, -0.0, 0.0])) == [
        (True, np.inf), (False, 7.0), (False, 7.0), (True, 7.0), (True, 3.0), (False, 0.0)]
    assert dist[0] == 0.0
    dist = np.full(1, UNREACHED_INT32, dtype=np.int32)
    assert lower_all(dist, np.array([7, 9, 7, 3, 0, 0], dtype=np.int64)) == [
        (True, UNREACHED_INT32), (False, 7), (False, 7), (True, 7), (True, 3), (False, 0)] and dist[0] == 0


@pytest.mark.parametrize("weights, n, integral", [
    ([1.0, 255.0, 0.0], 1000, True),
    ([1.0, 2.5], 10, False),  # a fraction
    ([-1.0, 2.0], 10, False),  # negative: Bellman-Ford's, and a sum could fall below any bound
    ([1.0, 2**21], 1024, False),  # n x heaviest reaches the int32 'unreached'
    ([1.0, 2**21 - 1], 1023, True),
])
def test_integer_weights_only_where_no_path_reaches_unreached(weights, n, integral):
    from polyfw.sparse.csr import _from_arrays

    m = len(weights)
    csr = _from_arrays(n, np.arange(m), np.arange(1, m + 1), np.array(weights))
    found = csr.integer_weights
    assert (found is not None) == integral
    if integral:
        assert found.dtype == np.int32 and np.array_equal(found, csr.weights)


@pytest.mark.parametrize("lightest, heaviest", [(1, 1000), (0, 1000), (1, 2**30)])
def test_sssp_on_integer_weights_returns_floats_with_inf_and_a_tree(lightest, heaviest):
    """Integer weights run on int32 distances, parents pulled along tight edges (1..1000) or, with a zero
    weight, from the tight edges' BFS tree (0..1000); weights a path could sum past the
    int32 sentinel on float64 distances (2**30). All three answer float64 distances, inf where
    unreached, and valid parents, directed or not, equal to scipy's."""
    rng = np.random.default_rng(heaviest % 97 + lightest)
    n = 300
    dense = rng.integers(lightest, heaviest, size=(n, n)).astype(np.float64)
    dense[rng.random((n, n)) < 0.97] = np.inf
    dense[:, :10] = dense[:10, :] = np.inf  # isolated: unreachable in either direction
    for directed in (True, False):
        csr = as_csr(dense, directed=directed)
        assert (csr.integer_weights is not None) == (heaviest == 1000)
        dist, parent = sssp(csr, 20, method="delta-stepping")
        assert dist.dtype == np.float64 and np.isinf(dist[:10]).all() and (parent[:10] == -1).all()
        assert parent[20] == 20
        assert np.array_equal(dist, scipy_dijkstra(_scipy(csr), indices=20))
        validate_sssp(csr, 20, dist, parent)


def _with_negative_edges(n: int, seed: int) -> np.ndarray:
    """Positive weights shifted by vertex potentials: negative edges, no negative cycle."""
    rng = np.random.default_rng(seed)
    potential = rng.integers(0, 20, size=n)
    weights = (rng.integers(1, 30, size=(n, n)) + potential[:, None] - potential[None, :]).astype(np.float64)
    weights[weights == 0] = 1  # scipy reads a stored 0 as no edge
    weights[rng.random((n, n)) < 0.85] = np.inf
    np.fill_diagonal(weights, np.inf)
    return weights


def test_negative_edges_bellman_ford_and_johnson_match_scipy():
    weights = _with_negative_edges(50, 2)
    csr = as_csr(weights)
    assert csr.weights.min() < 0
    reference = shortest_path(_scipy(csr), method="BF")
    dist, parent = sssp(csr, 0)  # 'auto' takes Bellman-Ford for negative weights
    validate_sssp(csr, 0, dist, parent)
    assert np.array_equal(dist, reference[0])
    distances, pred = johnson(csr, predecessors=True)
    assert np.array_equal(distances, reference)
    # every predecessor chain ends at its source with the path's length
    for i, j in zip(*np.nonzero(np.isfinite(distances) & ~np.eye(50, dtype=bool))):
        assert chain_length(pred, weights, i, j) == distances[i, j]
    assert pred[0, 0] == -9999


@pytest.mark.parametrize("weight", [0.1, 3.0, 0.0])
def test_one_weight_on_every_edge_takes_a_search_per_source_with_dijkstras_sums(weight):
    """Every edge weighs the same: Johnson runs a BFS from each source, adding the weight once a hop
    as Dijkstra does, so even 0.1 (not exact in binary) gives scipy's very floats; predecessors trace
    paths of that length."""
    rng = np.random.default_rng(4)
    dense = np.where(rng.random((70, 70)) < 0.05, weight, np.inf)
    np.fill_diagonal(dense, np.inf)
    distances, pred = johnson(dense, predecessors=True)
    assert np.array_equal(distances, shortest_path(_scipy(as_csr(dense)), method="D"))  # zeros stored: edges
    for i, j in zip(*np.nonzero(np.isfinite(distances) & ~np.eye(70, dtype=bool))):
        assert chain_length(pred, dense, i, j) == distances[i, j]


def test_the_power_grid_is_watts_and_strogatzs():
    """4,941 vertices and 6,594 lines, connected; its rows from Johnson are scipy's."""
    from polyfw.graphs import power_grid
    from polyfw.sparse.paths import dijkstra_rows

    edges = power_grid()
    assert edges.n == 4941 and len(edges.source) == 2 * 6594 and set(edges.weight) == {1.0}
    csr = as_csr(edges)
    rows = np.arange(0, 4941, 97)
    dist, _ = dijkstra_rows(csr, rows)
    assert np.isfinite(dist).all()
    assert np.array_equal(dist, scipy_dijkstra(_scipy(csr), indices=rows))


def test_a_negative_cycle_names_a_vertex_on_it():
    weights = np.full((6, 6), np.inf)
    for u, v, w in [(0, 1, 1), (1, 2, -2), (2, 3, 1), (3, 1, -1), (4, 5, 1)]:
        weights[u, v] = w
    with pytest.raises(NegativeCycleError) as error:
        sssp(weights, 0, method="bellman-ford")
    assert error.value.vertex in (1, 2, 3)
    with pytest.raises(NegativeCycleError) as error:
        johnson(weights)
    assert error.value.vertex in (1, 2, 3)
    # not reachable from the source: no error from a single-source search
    dist, _ = sssp(weights, 4)
    assert dist[5] == 1 and np.isinf(dist[0])


def test_zero_weight_cycles_isolated_vertices_and_bad_input():
    weights = np.full((5, 5), np.inf)
    weights[0, 1] = weights[1, 0] = 0.0  # a zero-weight cycle
    weights[1, 2] = 3
    dist, parent = sssp(weights, 0)
    assert list(dist[:3]) == [0, 0, 3] and np.isinf(dist[3:]).all()
    validate_sssp(as_csr(weights), 0, dist, parent)
    levels, _ = bfs(weights, 4)  # isolated
    assert levels[4] == 0 and (levels[:4] == 255).all()
    with pytest.raises(GraphInputError, match="source must be a vertex 0..4, got 5"):
        bfs(weights, 5)
    with pytest.raises(GraphInputError, match="source must be a vertex"):
        sssp(np.zeros((0, 0)), 0)
    nan = weights.copy()
    nan[2, 3] = np.nan
    with pytest.raises(GraphInputError, match="NaN"):
        sssp(nan, 0)
    with pytest.raises(GraphInputError, match="dijkstra needs non-negative weights"):
        sssp(_with_negative_edges(10, 1), 0, method="dijkstra")


def test_parallel_edges_keep_the_lightest_and_negative_self_loops_are_cycles():
    graph = nx.MultiDiGraph()
    graph.add_weighted_edges_from([(0, 1, 5), (0, 1, 2), (1, 2, 1)])
    dist, _ = sssp(graph, 0)
    assert list(dist) == [0, 2, 3]
    loop = np.full((3, 3), np.inf)
    loop[0, 1], loop[1, 1] = 1, -1
    with pytest.raises(NegativeCycleError):
        sssp(loop, 0)


def test_the_rules_catch_broken_trees():
    csr = GRAPHS["rmat"]
    source = int(np.flatnonzero(csr.out_degree > 0)[0])
    levels, parent = bfs(csr, source)
    deep = int(np.flatnonzero((levels >= 2) & (levels != 255))[0])
    broken = parent.copy()
    broken[deep] = source  # not an edge, or a level jump
    with pytest.raises(ValidationError, match="rule [25]"):
        validate_bfs(csr, source, levels, broken)
    cycle = parent.copy()
    child = int(np.flatnonzero(parent == deep)[0]) if (parent == deep).any() else deep
    cycle[deep], cycle[child] = child, deep
    with pytest.raises(ValidationError, match="rule"):
        validate_bfs(csr, source, levels, cycle)
    shallow = levels.copy()
    shallow[deep] += 1
    with pytest.raises(ValidationError, match="rule [23]"):
        validate_bfs(csr, source, shallow, parent)
    dist, dparent = sssp(csr, source)
    longer = dist.copy()
    longer[deep] += 1
    with pytest.raises(ValidationError, match="rule [23]"):
        validate_sssp(csr, source, longer, dparent)
    unreached = dist.copy()
    unreached[deep] = np.inf
    with pytest.raises(ValidationError, match="rule 4"):
        validate_sssp(csr, source, unreached, dparent)


def test_rmat_follows_graph500():
    edges = rmat_edges(8, seed=3)
    assert edges.n == 256 and len(edges.source) == 16 * 256
    assert edges.source.max() < 256 and edges.target.min() >= 0
    # the skew survives the permutation: a few vertices hold many edges
    degree = np.bincount(np.concatenate([edges.source, edges.target]), minlength=256)
    assert degree.max() > 8 * np.median(degree)
    assert np.array_equal(rmat_edges(8, seed=3).source, edges.source)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(2, 30), st.floats(0.05, 0.5), st.integers(0, 10**6))
def test_random_graphs_sssp_bfs_and_johnson(n, density, seed):
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 20, size=(n, n)).astype(np.float64)
    weights[rng.random((n, n)) > density] = np.inf
    csr = as_csr(weights)
    source = int(rng.integers(n))
    for method in ("dijkstra", "delta-stepping"):
        dist, parent = sssp(csr, source, method=method)
        validate_sssp(csr, source, dist, parent)
    levels, bparent = bfs(csr, source)
    validate_bfs(csr, source, levels, bparent)
    assert np.array_equal(johnson(csr), shortest_path(_scipy(csr)))


def test_solve_picks_dense_or_sparse_and_both_agree(caplog):
    graph = minnesota_road_graph()
    with caplog.at_level("INFO", logger="polyfw"):
        sparse = solve(graph, method="sparse", dtype="int32")
    assert "predicted: dense Floyd-Warshall" in caplog.text
    assert np.array_equal(sparse, solve(graph, dtype="int32"))
    assert sparse.method_choice.method == "dense"  # forced sparse; the model would have picked dense
    assert sparse.method_choice.dense_seconds > 0 and sparse.method_choice.sparse_seconds > 0
    weights = np.full((4, 4), np.inf)
    weights[0, 1] = 2
    small = solve(weights, method="auto", dtype="int32")
    assert small[0, 1] == 2 and small[1, 0] == INT32_INF
    assert small.method_choice.method in ("dense", "sparse")
    distances, pred = solve(weights, method="auto", predecessors=True)
    assert distances.method_choice is not None and pred[0, 1] == 0
    with pytest.raises(ValueError, match="method must be 'dense', 'sparse' or 'auto'"):
        solve(weights, method="fast")


@pytest.mark.parametrize("method", ["auto", "FW", "D", "BF", "J"])
def test_the_scipy_drop_in_shortest_path_matches_scipy(method):
    from polyfw.scipy_api import shortest_path as drop_in

    rng = np.random.default_rng(11)
    dense = rng.integers(0, 20, size=(40, 40)).astype(np.float64)
    dense[rng.random((40, 40)) < 0.8] = 0  # scipy reads dense zeros as missing edges
    expected, expected_pred = shortest_path(dense, method=method, return_predecessors=True)
    found, pred = drop_in(dense, method=method, return_predecessors=True)
    assert np.array_equal(found, expected)
    assert np.array_equal(pred == -9999, expected_pred == -9999)
    if method == "FW":  # as scipy: Floyd-Warshall computes every row or none
        with pytest.raises(ValueError, match="Cannot specify indices with method == 'FW'"):
            drop_in(dense, method=method, indices=[3, 7])
    else:
        rows = drop_in(dense, method=method, indices=[3, 7])
        assert np.array_equal(rows, expected[[3, 7]])
        single, single_pred = drop_in(dense, method=method, indices=5, return_predecessors=True)
        assert np.array_equal(single, expected[5]) and single_pred[5] == -9999
    assert np.array_equal(drop_in(dense, method=method, unweighted=True),
                          shortest_path(dense, method=method, unweighted=True))


def test_the_edge_parallel_frontier_rounds_handle_negative_edges_and_cycles():
    from polyfw.sparse.paths import _stepping

    weights = _with_negative_edges(40, 9)
    csr = as_csr(weights)
    dist, settled, _ = _stepping(csr, 0, np.inf, rounds=csr.n)
    assert settled and np.array_equal(dist, shortest_path(_scipy(csr), method="BF")[0])
    cycle = np.full((4, 4), np.inf)
    cycle[0, 1], cycle[1, 2], cycle[2, 1] = 1, -3, 1
    assert not _stepping(as_csr(cycle), 0, np.inf, rounds=4)[1]


def test_sssp_steps_record_each_round_without_changing_the_search():
    csr = as_csr(rmat_edges(10, seed=3, weighted=True), directed=False)
    steps: list = []
    dist, _ = sssp(csr, 0, steps=steps)
    assert np.array_equal(dist, sssp(csr, 0)[0])
    buckets = [bucket for bucket, *_ in steps]
    assert buckets == sorted(buckets) and buckets[0] == 0 and steps[0][4] == 1  # in order, from the source alone
    assert all(kind in ("parallel", "serial") and 0 <= kernel <= since for _, kind, kernel, since, _ in steps)
    assert sum(frontier for *_, frontier in steps) >= int(np.isfinite(dist).sum())  # each reached vertex relaxed


def test_bfs_steps_record_each_level_without_changing_the_search():
    csr = as_csr(rmat_edges(10, seed=3), directed=False)
    steps: list = []
    levels, parents = bfs(csr, 0, steps=steps)
    expected_levels, expected_parents = bfs(csr, 0)
    assert np.array_equal(levels, expected_levels)
    validate_bfs(csr, 0, levels, parents)
    reached = levels != np.iinfo(levels.dtype).max
    assert len(steps) == int(levels[reached].max()) + 1  # one per level, the last finding nothing
    assert sum(frontier for *_, frontier in steps) == int(reached.sum()) - 1 and steps[-1][3] == 0
    assert all(kind in ("td", "bu") and 0 <= kernel <= total for kind, kernel, total, _ in steps)
    assert {kind for kind, *_ in steps} == {"td", "bu"}  # a Kronecker graph's big levels go bottom-up


@pytest.mark.parametrize("workers, deadline", [(1, 0), (2, 0), (8, 0), (8, 10**7)])
def test_a_bfs_team_of_any_size_finds_the_same_levels(workers, deadline):
    """The team is whoever joined before it closed: with a deadline of 0 cycles often the first worker
    alone, and with more workers than threads some run one after another and arrive after it closed.
    Every step's work is claimed, so each team does all of it."""
    csr = GRAPHS["rmat"]
    source = int(np.flatnonzero(csr.out_degree > 0)[0])
    parent = np.empty(csr.n, dtype=csr.indices.dtype)
    level = np.empty(csr.n, dtype=np.int32)
    levels = np.empty(csr.n, dtype=np.uint8)
    log = np.empty((csr.n + 1, 4), dtype=np.int64)
    depth = breadth_first(csr.indptr, csr.indices, csr.indptr, csr.indices, source, parent, level, levels, ALPHA,
                          BETA, workers, deadline, log)
    validate_bfs(csr, source, levels, parent)
    expected = _levels_by_scipy(csr, source)
    reached = np.isfinite(expected)
    assert np.array_equal(levels[reached], expected[reached]) and (levels[~reached] == 255).all()
    assert depth == int(expected[reached].max()) + 1 and {kind for kind in log[:depth, 0]} == {0, 1}


@njit(parallel=prange_only())
def _team_counts(workers, deadline, steps):
    """Each member adds 1 to a step's sum; after the step's barrier every member reads the team's size there."""
    team = np.zeros(TEAM_WORDS, dtype=np.int64)
    rows = step_rows()
    seen = np.full((workers, steps), -1, dtype=np.int64)
    sizes = np.zeros(workers, dtype=np.int64)
    for w in prange(workers):
        rank, size = join(team, workers, deadline)
        if rank >= 0:
            sizes[w] = size
            step = 0
            for s in range(steps):
                fetch_add(rows[step % STEP_ROWS], SUMMED, 1)
                step = next_step(team, size, rank, rows, step)
                seen[w, s] = rows[(step - 1) % STEP_ROWS, SUMMED]
    return seen, sizes


@pytest.mark.parametrize("workers, deadline", [(2, 10**7), (8, 0), (8, 10**7)])
def test_team_members_read_each_steps_sum_whole(workers, deadline):
    seen, sizes = _team_counts(workers, deadline, 200)
    members = sizes > 0
    assert 1 <= members.sum() <= workers and (sizes[members] == members.sum()).all()
    assert (seen[members] == members.sum()).all() and (seen[~members] == -1).all()
