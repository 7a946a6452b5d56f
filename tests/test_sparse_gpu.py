"""Searches on target 'cuda' under Numba's simulator: one persistent launch a search over a graph
left on the device, exact against scipy and the CPU, with a fixed number of reads back."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra as scipy_dijkstra
from scipy.sparse.csgraph import shortest_path

import polyfw
from polyfw.errors import NegativeCycleError
from polyfw.graphs import GraphInputError, random_graph
from polyfw.sparse import DeviceGraph, as_csr, bfs, johnson, rmat_edges, sssp, to_device, validate_bfs, validate_sssp
from polyfw.sparse.device_graph import DeviceGraph as Resident


def scipy_matrix(csr) -> csr_matrix:
    return csr_matrix((csr.weights, csr.indices, csr.indptr), shape=(csr.n, csr.n))


def path_graph(n: int) -> np.ndarray:
    """0 -> 1 -> ... -> n-1, weights 1..n-1: n levels."""
    arcs = np.arange(n - 1)
    return as_csr(polyfw.graphs.Edges(n, arcs, arcs + 1, arcs + 1.0))


@pytest.fixture(scope="module")
def kronecker():
    return as_csr(rmat_edges(7, seed=2, weighted=True), directed=False)


def test_bfs_optimizing_and_top_down_match_scipy_and_pass_graph500s_rules(kronecker):
    graph = to_device(kronecker)
    source = int(np.flatnonzero(kronecker.out_degree > 0)[0])
    expected = scipy_dijkstra(scipy_matrix(kronecker), indices=source, unweighted=True)
    for direction in ("optimizing", "top-down"):
        steps = []
        levels, parents = bfs(graph, source, direction=direction, steps=steps)
        reached = np.isfinite(expected)
        assert np.array_equal(levels[reached], expected[reached]) and (levels[~reached] == 255).all()
        validate_bfs(kronecker, source, levels, parents)
        # Beamer's switch on a Kronecker graph: bottom-up steps in the middle, none top-down only
        assert (steps[0]["bottom_up"] > 0) == (direction == "optimizing")
        assert steps[0]["levels"] == int(expected[reached].max()) + 1


def test_a_search_device_reads_a_fixed_few_arrays_whatever_its_depth(device_reads):
    counts = {}
    for n in (30, 100):
        graph = to_device(path_graph(n))
        device_reads.clear()
        levels, parents = bfs(graph, 0)
        assert levels[-1] == n - 1 and parents[-1] == n - 2
        searched = len(device_reads)
        device_reads.clear()
        dist, parent = sssp(graph, 0)
        assert dist[-1] == (n - 1) * n / 2 and parent[-1] == n - 2
        counts[n] = (searched, len(device_reads))
    assert counts[30] == counts[100] == (3, 2)  # counters, levels, parents; distances, parents


def test_a_graph_left_on_the_device_is_not_copied_again(monkeypatch):
    kronecker = as_csr(rmat_edges(4, seed=2, weighted=True), directed=False)
    graph = to_device(kronecker)
    assert isinstance(graph, DeviceGraph) and to_device(graph) is graph and as_csr(graph) is kronecker
    uploaded = []
    real = Resident.upload
    monkeypatch.setattr(Resident, "upload", lambda self, host: uploaded.append(np.shape(host)) or real(self, host))
    bfs(graph, 0, direction="top-down")
    sssp(graph, 0)
    johnson(graph)
    assert uploaded and all(shape != (kronecker.m,) and shape != (kronecker.n + 1,) for shape in uploaded)


def test_results_stay_on_the_device_on_request():
    kronecker = as_csr(rmat_edges(4, seed=2, weighted=True), directed=False)
    graph = to_device(kronecker)
    levels, parents = bfs(graph, 0, device_result=True)
    dist, dparents = sssp(graph, 0, device_result=True)
    everything = johnson(graph, device_result=True)
    for found in (levels, parents, dist, dparents, everything):
        # the simulator's device arrays; on a GPU numba's, whose __cuda_array_interface__ cupy and torch read
        assert isinstance(found, FakeCUDAArray)
    expected = scipy_dijkstra(scipy_matrix(kronecker), indices=0)
    assert np.array_equal(dist.copy_to_host(), expected)
    assert np.array_equal(levels.copy_to_host() >= 0, np.isfinite(expected))
    with pytest.raises(ValueError, match="device_result=True keeps a GPU search's result on the GPU"):
        bfs(kronecker, 0, device_result=True)


@pytest.mark.parametrize("delta", [None, 0.5, 1e9])
def test_near_far_matches_scipy_with_far_sets_forced_and_none(kronecker, delta):
    from polyfw.sparse.cuda import sssp_cuda

    source = int(np.flatnonzero(kronecker.out_degree > 0)[0])
    dist, parents = sssp_cuda(kronecker, source, delta=delta)
    assert np.array_equal(dist, scipy_dijkstra(scipy_matrix(kronecker), indices=source))
    validate_sssp(kronecker, source, dist, parents)


def test_negative_arcs_take_bellman_ford_and_a_negative_cycle_is_named():
    rng = np.random.default_rng(4)
    weights = np.full((12, 12), np.inf)
    for u in range(12):  # arcs only forwards: no cycle, some negative
        for v in rng.choice(np.arange(u + 1, 12), size=min(3, 11 - u), replace=False) if u < 11 else []:
            weights[u, v] = rng.integers(-5, 10)
    csr = as_csr(weights)
    dist, parents = sssp(csr, 0, target="cuda")
    assert np.array_equal(dist, shortest_path(scipy_matrix(csr), method="BF", indices=0))
    validate_sssp(csr, 0, dist, parents)
    with pytest.raises(GraphInputError, match="delta-stepping needs non-negative weights"):
        sssp(csr, 0, method="delta-stepping", target="cuda")
    cycle = np.full((4, 4), np.inf)
    cycle[0, 1], cycle[1, 2], cycle[2, 1] = 1, -3, 1
    with pytest.raises(NegativeCycleError) as error:
        sssp(cycle, 0, target="cuda")
    assert error.value.vertex in (1, 2)
    with pytest.raises(NegativeCycleError):
        johnson(cycle, target="cuda")


def test_disconnected_parts_stay_unreached():
    graph = random_graph(16, 20, weights=(1, 5), seed=1)
    weights = np.full((32, 32), np.inf)
    weights[:16, :16] = polyfw.graphs.as_dense(graph)
    levels, parents = bfs(weights, 0, target="cuda")
    dist, dparents = sssp(weights, 0, target="cuda")
    assert (levels[16:] == 255).all() and (parents[16:] == -1).all()
    assert np.isinf(dist[16:]).all() and (dparents[16:] == -1).all()


def valid_predecessors(csr, dist, pred) -> bool:
    weight = scipy_matrix(csr).toarray()
    weight[weight == 0] = np.inf
    weight[csr.sources, csr.indices] = csr.weights
    s, v = np.nonzero(np.isfinite(dist) & (pred >= 0))
    return bool(np.all(dist[s, pred[s, v]] + weight[pred[s, v], v] == dist[s, v])) and \
        np.array_equal(pred < 0, ~np.isfinite(dist) | np.eye(csr.n, dtype=bool))


@pytest.mark.parametrize("weights, potential", [((1, 1), 0), ((1, 9), 0), ((1, 9), 6)])
def test_johnson_on_the_device_matches_the_cpus(weights, potential):
    # one weight: a BFS a source; else near-far a source, after potentials where arcs are negative
    csr = as_csr(random_graph(12, 40, weights=weights, seed=7, potential=potential))
    assert (csr.lightest < 0) == (potential > 0)
    dist, pred = johnson(csr, predecessors=True, target="cuda")
    assert np.array_equal(dist, johnson(csr)) and valid_predecessors(csr, dist, pred)


@settings(max_examples=8, deadline=None)
@given(st.integers(2, 14), st.integers(0, 40), st.integers(0, 2**16), st.sampled_from([None, 0.25, 3.0, 1e6]))
def test_random_graphs_match_scipy(n, arcs, seed, delta):
    from polyfw.sparse.cuda import sssp_cuda

    csr = as_csr(random_graph(n, min(arcs, n * (n - 1)), weights=(0, 6), seed=seed))  # zero weights: tight cycles
    expected = scipy_dijkstra(scipy_matrix(csr), indices=0)
    levels, parents = bfs(csr, 0, target="cuda")
    validate_bfs(csr, 0, levels, parents)
    dist, dparents = sssp_cuda(csr, 0, delta=delta)
    assert np.array_equal(dist, expected)
    validate_sssp(csr, 0, dist, dparents)


def test_solve_on_the_gpu_targets_takes_johnson_on_a_sparse_graph():
    graph = random_graph(16, 30, weights=(1, 9), seed=3)
    found = polyfw.solve(graph, target="cudasim", method="auto", dtype="float32")
    assert found.method_choice.method == "sparse"
    expected = johnson(graph).astype(np.float32)
    assert np.array_equal(found, expected)


def test_hubs_are_expanded_by_every_thread_of_the_search(monkeypatch, kronecker):
    # with a heavy threshold of 4 edges most frontier vertices of the Kronecker graph are hubs
    import polyfw.sparse.cuda

    monkeypatch.setattr(polyfw.sparse.cuda, "HEAVY_EDGES", 4)
    source = int(np.argmax(kronecker.out_degree))
    levels, parents = bfs(kronecker, source, direction="top-down", target="cuda")
    validate_bfs(kronecker, source, levels, parents)
    dist, dparents = sssp(kronecker, source, target="cuda")
    assert np.array_equal(dist, scipy_dijkstra(scipy_matrix(kronecker), indices=source))
    validate_sssp(kronecker, source, dist, dparents)


def test_without_a_gpu_or_the_simulator_a_gpu_search_is_refused_in_words():
    import os
    import subprocess
    import sys

    code = ("import numpy as np; from polyfw.sparse import bfs\n"
            "try:\n    bfs(np.array([[0.0, 1.0], [np.inf, 0.0]]), 0, target='cuda')\n"
            "except RuntimeError as error:\n    print(error)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"})
    assert done.stdout.startswith("the GPU searches run on a CUDA GPU and none is available"), done.stderr
