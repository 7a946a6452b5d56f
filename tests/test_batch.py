"""A batch of graphs as one proved schedule (issue 38): the model, the proof, the code, solve_batch."""
import dataclasses
import json
import os
import subprocess
import sys

import islpy as isl
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import shortest_path

import polyfw
from codegen.batch import CUDA_MAX_VERTICES, generate_batch
from codegen.intrinsics import vector_width
from polyfw.batch import NegativeCycleInBatch, read_batch
from polyfw.graphs.datasets import molecule_like
from polyfw.graphs.edges import GraphInputError
from schedules import batch as batch_schedules
from schedules.emitted import UnsafeCodeError
from schedules.legality import IllegalScheduleError
from tiling import batch as batch_model
from tiling.dependences import relaxed_dependences
from tests.bruteforce import chain_length


def test_no_dependence_crosses_graphs_and_each_graph_keeps_the_nests_own():
    deps = batch_model.relaxed_dependences()
    assert all(pairs.is_empty() for pairs in batch_model.crossing_dependences(deps).values())
    single = relaxed_dependences(3).relations()
    for name, relation in deps.relations().items():
        # B = 2, N = 3, graph 1: the batch relation restricted to it is the nest's at n = 3
        fixed = relation.fix_val(isl.dim_type.param, 0, 2).fix_val(isl.dim_type.param, 1, 3)
        fixed = fixed.fix_val(isl.dim_type.in_, 0, 1).project_out(isl.dim_type.in_, 0, 1)
        fixed = fixed.project_out(isl.dim_type.out, 0, 1).project_out(isl.dim_type.param, 0, 2)
        assert fixed.set_tuple_name(isl.dim_type.in_, "S").set_tuple_name(isl.dim_type.out, "S").is_equal(
            single[name]), name


@pytest.mark.parametrize("layout, lanes", [("graphs", 1), ("lanes", 16), ("lanes", 4), ("blocks", 1)])
def test_every_layout_is_proved_for_every_batch_and_graph_size(layout, lanes):
    verdict = batch_schedules.prove(batch_schedules.batch_schedule(layout, lanes))
    assert "every batch size B and graph size N" in str(verdict) and verdict.relations == ("R_row", "R_col", "W")


def test_running_layers_at_once_is_refused_with_a_witness_inside_one_graph():
    wrong = batch_schedules.from_map("[B, N] -> { S[b, k, i, j] -> [b, k, i, j] }", (True, True, False, False),
                                     "layers at once")
    with pytest.raises(IllegalScheduleError) as refused:
        batch_schedules.prove(wrong)
    first = refused.value.violations[0]
    assert first.dependence == "R_row" and first.source[0] == first.sink[0]
    assert first.source[1] < first.sink[1] and "parallel dimension 1" in str(refused.value)
    assert "(B=1) (N=2)" in str(refused.value)


def test_a_generator_refuses_a_kernel_that_runs_at_once_what_the_schedule_orders():
    ordered = dataclasses.replace(batch_schedules.batch_schedule("blocks"), parallel=(True, False, False, False))
    with pytest.raises(UnsafeCodeError, match="time dimension 2"):
        generate_batch(ordered, "cudasim", "int32", side=8)
    with pytest.raises(ValueError, match="no code for target 'cpu'"):
        generate_batch(batch_schedules.batch_schedule("blocks"), "cpu", "int32")
    with pytest.raises(ValueError, match="unknown batch layout"):
        batch_schedules.batch_schedule("diagonal")


@pytest.mark.isa
def test_the_driver_is_isls_task_loop_as_a_prange():
    lanes = vector_width(2)  # int16 graphs a vector on the target ISA (16 on AVX2)
    compiled = generate_batch(batch_schedules.batch_schedule("lanes", lanes), "cpu", "int16")
    assert f"for c0 in prange(0, ((B - 1) // {lanes}) + 1):" in compiled.source
    assert "run_task(c0," in compiled.source and "for (int c0 = 0;" in compiled.isl_c


def _reference(edges: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """The nest itself, on a dense float64 matrix (explicit zeros kept as arcs)."""
    a = np.full((n, n), np.inf)
    for (u, v), w in zip(edges.T, weights):
        a[u, v] = min(a[u, v], w)
    np.fill_diagonal(a, np.minimum(np.diagonal(a), 0))
    for k in range(n):
        a = np.minimum(a, a[:, k:k + 1] + a[k:k + 1, :])
    return a


@st.composite
def batches(draw, negative: bool = False):
    count = draw(st.integers(1, 12))
    graphs, sizes, weights = [], [], []
    for _ in range(count):
        n = draw(st.integers(1, 20))
        m = draw(st.integers(0, 3 * n))
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        edges = rng.integers(0, n, (2, m))
        if negative:  # arcs only forward: no cycle, negative weights allowed
            edges = edges[:, edges[0] < edges[1]]
        graphs.append(edges)
        sizes.append(n)
        weights.append(rng.integers(-5 if negative else 0, 10, edges.shape[1]).astype(np.float64))
    return graphs, sizes, weights


@pytest.mark.isa
@given(batches(), st.sampled_from(["lanes", "graphs"]), st.booleans())
def test_hop_distances_equal_scipys_in_every_layout(batch, layout, padded):
    graphs, sizes, _ = batch
    found = polyfw.solve_batch(graphs, sizes, layout=layout, padded=padded, unreachable=510)
    largest = max(sizes)
    for g, (edges, n) in enumerate(zip(graphs, sizes)):
        matrix = sp.csr_array((np.ones(edges.shape[1]), (edges[0], edges[1])), shape=(n, n))
        expected = np.where(np.isinf(shortest_path(matrix, unweighted=True)), 510, shortest_path(matrix, unweighted=True))
        mine = found[g][:n, :n]
        assert mine.dtype == np.int16 and np.array_equal(mine, expected)
        if padded:
            assert found.shape == (len(graphs), largest, largest)
            assert (found[g, n:, :] == 510).all() and (found[g, :, n:] == 510).all()
        else:
            assert found[g].shape == (n, n)


@pytest.mark.isa
@given(batches(negative=True), st.sampled_from(["lanes", "graphs"]), st.sampled_from([None, np.float32, np.float64]))
def test_weighted_distances_with_negative_arcs_equal_the_nests(batch, layout, dtype):
    graphs, sizes, weights = batch
    found = polyfw.solve_batch(graphs, sizes, edge_weight=weights, layout=layout, dtype=dtype, padded=False)
    for g, (edges, n) in enumerate(zip(graphs, sizes)):
        expected = _reference(edges, weights[g], n)
        negative = any((w < 0).any() for w in weights)  # -1 reads as 'no path' only where it cannot be a length
        unreachable = np.inf if found[g].dtype.kind == "f" else (np.iinfo(found[g].dtype).max if negative else -1)
        assert np.array_equal(found[g], np.where(np.isinf(expected), unreachable, expected))


def test_every_input_form_gives_the_same_distances():
    graphs, sizes = molecule_like(6, sizes=(1, 9), mean=5, seed=4)
    expected = polyfw.solve_batch(graphs, sizes)
    dense = [np.zeros((n, n)) for n in sizes]
    for matrix, edges in zip(dense, graphs):
        matrix[edges[0], edges[1]] = 1
    networkx_graphs = [nx.from_numpy_array(matrix) for matrix in dense]  # undirected, weight 1
    first = np.concatenate([[0], np.cumsum(sizes)])

    class Data:  # what PyG's Data offers
        def __init__(self, edge_index, num_nodes):
            self.edge_index, self.num_nodes = edge_index, num_nodes

    forms = {
        "dense adjacency": dense,
        "scipy": [sp.csr_array(matrix) for matrix in dense],
        "networkx": networkx_graphs,
        "pairs": list(zip(graphs, sizes)),
        "PyG-like": [Data(e, n) for e, n in zip(graphs, sizes)],
        "joined": np.concatenate([e + f for e, f in zip(graphs, first)], axis=1),
    }
    for name, form in forms.items():
        got = polyfw.solve_batch(form, sizes if name == "joined" else None)
        assert np.array_equal(got, expected), name
    # weights per graph, and directed=False on one direction of each bond
    one_way = [e[:, : e.shape[1] // 2] for e in graphs]
    assert np.array_equal(polyfw.solve_batch(one_way, sizes, directed=False), expected)
    twice = polyfw.solve_batch(graphs, sizes, edge_weight=[np.full(e.shape[1], 2.0) for e in graphs])
    assert np.array_equal(twice[expected >= 0], 2 * expected[expected >= 0])


def test_predecessors_trace_paths_of_the_right_length():
    graphs, sizes = molecule_like(5, sizes=(1, 12), mean=8, seed=5)
    rng = np.random.default_rng(5)
    weights = [rng.integers(1, 9, e.shape[1]).astype(float) for e in graphs]
    distances, pred = polyfw.solve_batch(graphs, sizes, edge_weight=weights, predecessors=True, padded=False)
    for edges, w, d, p, n in zip(graphs, weights, distances, pred, sizes):
        arc = {}
        for (u, v), x in zip(edges.T, w):
            arc[u, v] = min(arc.get((u, v), np.inf), x)
        for i in range(n):
            for j in range(n):
                if i == j or d[i, j] < 0:
                    assert p[i, j] == -9999
                    continue
                assert chain_length(p, arc, i, j) == d[i, j]


def test_a_negative_cycle_names_its_graph():
    graphs = [np.array([[0], [1]]), np.array([[0, 1], [1, 0]])]
    with pytest.raises(NegativeCycleInBatch, match="graph 1 of the batch") as raised:
        polyfw.solve_batch(graphs, [2, 2], edge_weight=[np.array([1.0]), np.array([1.0, -3.0])])
    assert raised.value.graph == 1 and isinstance(raised.value, polyfw.NegativeCycleError)


def test_bad_inputs_are_refused_by_name():
    with pytest.raises(GraphInputError, match="graph 1: edge 0 .* leaves its 2 vertices"):
        polyfw.solve_batch([np.array([[0], [1]]), np.array([[0], [2]])], [2, 2])
    with pytest.raises(GraphInputError, match="joins two graphs"):
        polyfw.solve_batch(np.array([[0], [2]]), [2, 2])
    with pytest.raises(ValueError, match="unreachable=inf does not fit the int16"):
        polyfw.solve_batch([np.array([[0], [1]])], [2], unreachable=np.inf)
    with pytest.raises(ValueError, match="target must be one of"):
        polyfw.solve_batch([np.array([[0], [1]])], [2], target="tpu")
    with pytest.raises(GraphInputError, match="a list of graphs"):
        polyfw.solve_batch(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="keeps no predecessors"):
        polyfw.solve_batch([np.array([[0], [1]])], [2], layout="lanes", predecessors=True)


def test_no_input_is_changed_and_floats_come_back_as_asked():
    graphs, sizes = molecule_like(4, seed=6)
    weights = [np.full(e.shape[1], 0.5) for e in graphs]
    before = [g.copy() for g in graphs], [w.copy() for w in weights], sizes.copy()
    found = polyfw.solve_batch(graphs, sizes, edge_weight=weights)
    assert found.dtype == np.float64 and np.isinf(found[0, sizes[0]:, :]).all() if sizes[0] < found.shape[1] else True
    assert all(np.array_equal(a, b) for a, b in zip(graphs, before[0]))
    assert all(np.array_equal(a, b) for a, b in zip(weights, before[1])) and np.array_equal(sizes, before[2])


def test_memory_is_checked_before_the_result_is_allocated(monkeypatch):
    from polyfw import batch as module

    monkeypatch.setattr(module, "available_memory", lambda: 10_000)
    monkeypatch.setattr(module, "MEMORY_WORTH_CHECKING", 0)
    with pytest.raises(polyfw.solver.InsufficientMemoryError, match="padded=False"):
        polyfw.solve_batch(*molecule_like(50, seed=7))


def test_a_long_batch_shows_progress(capsys, monkeypatch):
    from polyfw import batch as module

    monkeypatch.setattr(module, "PROGRESS_CHUNK", 32)
    graphs, sizes = molecule_like(100, sizes=(2, 6), mean=4, seed=8)
    assert np.array_equal(polyfw.solve_batch(graphs, sizes, progress=True), polyfw.solve_batch(graphs, sizes))
    shown = capsys.readouterr().err
    assert "solve_batch" in shown and "100/100" in shown and "graph/s" in shown


def test_graph_per_thread_block_under_concurrent_block_semantics():
    graphs, sizes = molecule_like(7, sizes=(1, 11), mean=6, seed=9)
    weights = [np.arange(e.shape[1], dtype=float) % 4 + 1 for e in graphs]
    for options in ({}, {"edge_weight": weights}, {"padded": False}):
        on_gpu = polyfw.solve_batch(graphs, sizes, target="cudasim", **options)
        on_cpu = polyfw.solve_batch(graphs, sizes, **options)
        assert all(np.array_equal(a, b) for a, b in zip(on_gpu, on_cpu)), options
    with pytest.raises(NegativeCycleInBatch, match="graph 0"):
        polyfw.solve_batch([np.array([[0, 1], [1, 0]])], [2], edge_weight=[np.array([1.0, -2.0])], target="cudasim")
    too_big = CUDA_MAX_VERTICES + 1
    with pytest.raises(ValueError, match="solve larger graphs with target 'cpu'"):
        polyfw.solve_batch([np.array([[0], [1]])], [too_big], target="cudasim")


BATCH_REPORT = """
import json
from codegen.batch import generate_batch
from codegen.machine_code import batch_report
from schedules.batch import batch_schedule
report = batch_report(generate_batch(batch_schedule("blocks"), "cuda", "float32", side=50))
print(json.dumps(dict(spills=report.spill_stores + report.spill_loads, blocks=report.blocks_per_sm,
                      shared=report.shared_bytes, loop=report.loop is not None)))
"""


def test_the_cuda_batch_kernel_reads_well_in_machine_code():
    done = subprocess.run([sys.executable, "-c", BATCH_REPORT], capture_output=True, text=True,
                          env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {"spills": 0, "blocks": 4, "shared": 64 * 64 * 4, "loop": True}


def test_read_batch_keeps_arcs_in_graph_order_with_local_numbers():
    batch = read_batch([np.array([[0, 1], [1, 2]]), np.array([[0], [0]])], [3, 1])
    assert batch.indptr.tolist() == [0, 2, 3] and batch.sources.tolist() == [0, 1, 0]
    assert batch.targets.tolist() == [1, 2, 0] and batch.integer


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=6), st.integers(0, 2**32 - 1))
def test_a_list_read_as_a_whole_equals_graph_by_graph(sizes, seed):
    """Lists of sparse matrices (CSR, CSC and COO mixed, explicit zeros and duplicates kept), of dense
    matrices (inf and zeros as no arc) and of (edge_index, n) pairs: one pass gives the arcs that
    reading each graph alone gives, in the same order."""
    rng = np.random.default_rng(seed)
    dense, sparse, pairs = [], [], []
    for n in sizes:
        matrix = np.where(rng.random((n, n)) < 0.4, rng.integers(0, 5, (n, n)).astype(float), np.inf)
        dense.append(matrix)
        rows, columns = np.nonzero(np.isfinite(matrix))
        repeat = rng.random(rows.size) < 0.2  # some arcs twice: COO keeps duplicates
        coo = sp.coo_array((np.concatenate([matrix[rows, columns], matrix[rows, columns][repeat] + 1]),
                            (np.concatenate([rows, rows[repeat]]), np.concatenate([columns, columns[repeat]]))),
                           shape=(n, n))
        sparse.append([coo, sp.csr_array(coo), sp.csc_matrix(coo)][rng.integers(3)])
        pairs.append((np.stack([rows, columns]), n))
    for graphs in (sparse, dense, pairs):
        whole = read_batch(graphs)
        one_by_one = polyfw.batch._concatenate([polyfw.batch._one_graph(g, i, "weight", 0)
                                                for i, g in enumerate(graphs)])
        for field in dataclasses.fields(whole):
            assert np.array_equal(getattr(whole, field.name), getattr(one_by_one, field.name)), field.name


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=6), st.integers(0, 2**32 - 1))
def test_a_list_of_networkx_graphs_read_as_a_whole_gives_each_graphs_arcs(sizes, seed):
    """Graphs and digraphs mixed, vertices named in any order, weights missing (1) or given, self-loops:
    the adjacency walk gives each graph the arcs reading it alone gives (an undirected self-loop once,
    not twice)."""
    rng = np.random.default_rng(seed)
    graphs = []
    for n in sizes:
        graph = (nx.Graph if rng.random() < 0.5 else nx.DiGraph)()
        names = [f"v{x}" for x in rng.permutation(n)] if rng.random() < 0.5 else list(range(n))
        graph.add_nodes_from(names)
        for u in range(n):
            for v in range(n):
                if rng.random() < 0.3:
                    graph.add_edge(names[u], names[v], **({"weight": int(rng.integers(-2, 5))} if rng.random() < 0.7
                                                         else {}))
        graphs.append(graph)
    assert polyfw.batch._list_door(graphs) == "networkx"
    whole = read_batch(graphs)
    one_by_one = polyfw.batch._concatenate([polyfw.batch._one_graph(g, i, "weight", 0) for i, g in enumerate(graphs)])
    assert np.array_equal(whole.sizes, one_by_one.sizes) and whole.integer == one_by_one.integer
    for g in range(len(graphs)):
        def arcs(batch):
            part = slice(batch.indptr[g], batch.indptr[g + 1])
            return set(zip(batch.sources[part].tolist(), batch.targets[part].tolist(), batch.weights[part].tolist()))

        assert arcs(whole) == arcs(one_by_one)


def test_a_networkx_weight_that_is_not_a_number_is_named():
    graphs = [nx.path_graph(3), nx.Graph([(0, 1, {"weight": "heavy"})])]
    with pytest.raises(GraphInputError, match="attribute 'weight' = 'heavy' is not a number"):
        read_batch(graphs)
