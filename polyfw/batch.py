"""solve_batch: the shortest paths of every graph of a data set, as one proved batch schedule.

Graph learning needs all-pairs hop distances of many small graphs
(Graphormer's spatial encoding, GraphGPS, shortest-path kernels). Each
graph alone is all per-call overhead; as a batch the work is one parallel
loop, which the batch schedule's proof allows (schedules.batch), run by one
generated kernel (codegen.batch). Graphs arrive as dense, scipy or networkx
graphs, or as PyG-style edge_index arrays; they leave as one padded
(B, N, N) array or a list of n x n matrices.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, repeat
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from codegen.batch import CUDA_BLOCK, CUDA_MAX_VERTICES, CompiledBatch, generate_batch, task_count
from codegen.intrinsics import vector_width
from schedules.batch import batch_schedule
from tiling.pages import mapped_empty
from tiling.semirings import INTEGER_INF

from .dask_batch import is_bag, solve_partitions
from .graphs.device_arrays import check_device_request, device_view, is_device_array, returned
from .errors import NegativeCycleError
from .graphs.edges import Edges, GraphInputError
from .graphs.inputs import check_weights, edges_or_dense, null_as_inf
from .progress import bar as progress_bar
from .solver import MEMORY_WORTH_CHECKING, InsufficientMemoryError, available_memory

#: graphs handed to the kernel at once while a progress bar is shown
PROGRESS_CHUNK = 8192
TARGETS = ("cpu", "cuda", "cudasim")


class NegativeCycleInBatch(NegativeCycleError):
    """Graph `graph` of the batch has a negative cycle through `vertex`."""

    def __init__(self, graph: int, vertex: int):
        super().__init__(vertex)
        self.graph = graph
        self.args = (f"graph {graph} of the batch has a negative cycle through its vertex {vertex}: "
                     "shortest paths are undefined",)


@dataclass(frozen=True)
class Batch:
    """A batch as flat arrays: graph g has sizes[g] vertices and arcs indptr[g]:indptr[g+1] of
    (sources, targets, weights), vertices numbered from 0 within each graph."""

    sizes: np.ndarray
    indptr: np.ndarray
    sources: np.ndarray
    targets: np.ndarray
    weights: np.ndarray
    #: every weight is an integer (or the graphs carry none: hop counts)
    integer: bool

    @property
    def largest(self) -> int:
        return int(self.sizes.max(initial=0))

    @property
    def heaviest(self) -> float:
        """The largest weight's magnitude (0 without arcs)."""
        return float(np.abs(self.weights).max(initial=0))

    @property
    def negative(self) -> bool:
        return bool((self.weights < 0).any())

    def weights_as(self, dtype: str):
        return self.weights.astype(dtype)


@dataclass(frozen=True)
class DeviceBatch(Batch):
    """A batch whose arcs were gathered on the GPU from a stack of dense matrices there
    (polyfw.device_solve.stack_arcs): sources, targets and weights are device arrays, and the weights'
    range was read on the device."""

    lightest: float = 0.0
    heaviest_weight: float = 0.0

    @property
    def heaviest(self) -> float:
        return max(abs(self.lightest), abs(self.heaviest_weight))

    @property
    def negative(self) -> bool:
        return self.lightest < 0

    def weights_as(self, dtype: str):
        from .device_solve import cast

        return cast(self.weights, dtype)


def _device_batch(stack, null_value: float | None, directed: bool) -> DeviceBatch:
    """A (B, n, n) stack of dense matrices on the GPU, read there (no copy of it to the host)."""
    from .device_solve import FINITE, FRACTIONAL, stack_arcs

    stack = device_view(stack, "graphs")
    indptr, sources, targets, weights, counts, lightest, heaviest = stack_arcs(stack, null_value, directed)
    finite = bool(counts[FINITE])
    return DeviceBatch(np.full(stack.shape[0], stack.shape[1], dtype=np.int64), indptr, sources, targets, weights,
                       not counts[FRACTIONAL], lightest if finite else 0.0, heaviest if finite else 0.0)


def _concatenate(parts: list[Edges]) -> Batch:
    sizes = np.array([part.n for part in parts], dtype=np.int64)
    counts = np.array([part.source.size for part in parts], dtype=np.int64)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    join = (lambda key, dtype: np.concatenate([getattr(p, key) for p in parts]).astype(dtype)) if parts else (
        lambda key, dtype: np.empty(0, dtype))
    weights = join("weight", np.float64)
    return Batch(sizes, indptr, join("source", np.int32), join("target", np.int32), weights, _integers(weights))


def _one_graph(graph, position: int, weight: str, null_value: float) -> Edges:
    """A list element as arcs: an (2, E) edge_index, a PyG-like object, or any solve input."""
    if hasattr(graph, "edge_index") and hasattr(graph, "num_nodes"):
        graph = (np.asarray(graph.edge_index), int(graph.num_nodes))
    if isinstance(graph, tuple) and len(graph) == 2 and np.ndim(graph[0]) == 2:
        index, n = np.asarray(graph[0]), int(graph[1])
        return _from_edge_index(index, n, None, f"graph {position}")
    edges, directed = edges_or_dense(graph, weight)
    if not isinstance(edges, Edges):
        matrix = null_as_inf(np.asarray(edges, dtype=np.float64), null_value)
        check_weights(matrix, f"graph {position}")
        source, target = np.nonzero(np.isfinite(matrix))
        edges = Edges(matrix.shape[0], source, target, matrix[source, target])
    else:
        check_weights(edges.weight, f"graph {position}")
    if not directed:  # an undirected networkx graph: each edge both ways
        edges = Edges(edges.n, np.concatenate([edges.source, edges.target]),
                      np.concatenate([edges.target, edges.source]), np.concatenate([edges.weight, edges.weight]))
    return edges


def _check_edge_index(index: np.ndarray, where: str) -> None:
    if index.ndim != 2 or index.shape[0] != 2 or (index.size and index.dtype.kind not in "iu"):
        raise GraphInputError(f"{where}: an edge_index must be an integer array of shape (2, E), got "
                              f"{index.dtype} {index.shape}")


def _from_edge_index(index: np.ndarray, n: int, weights, where: str) -> Edges:
    _check_edge_index(index, where)
    if index.size and (index.min() < 0 or index.max() >= n):
        bad = int(np.flatnonzero((index < 0).any(axis=0) | (index >= n).any(axis=0))[0])
        raise GraphInputError(f"{where}: edge {bad} ({index[0, bad]} -> {index[1, bad]}) leaves the graph's "
                              f"{n} vertices (valid: 0..{n - 1})")
    values = np.ones(index.shape[1]) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if values.size != index.shape[1]:
        raise GraphInputError(f"{where}: {values.size} edge weights for {index.shape[1]} edges")
    check_weights(values, where)
    return Edges(n, index[0], index[1], values)


def read_batch(graphs, num_nodes=None, edge_weight=None, weight: str = "weight", null_value: float = 0,
               directed: bool = True) -> Batch:
    """Any of solve_batch's inputs as flat arrays (see solve_batch for the forms; a Batch is taken as
    it is)."""
    if isinstance(graphs, Batch):
        return graphs if directed else _both_ways(graphs)
    if isinstance(graphs, np.ndarray) and graphs.ndim == 2 and graphs.shape[0] == 2 and num_nodes is not None:
        parts = _split_joined(graphs, np.asarray(num_nodes, dtype=np.int64), edge_weight)
    else:
        if isinstance(graphs, (np.ndarray, sp.sparray, sp.spmatrix)) or not isinstance(graphs, Sequence):
            raise GraphInputError(
                f"solve_batch takes a list of graphs, or one (2, E) edge_index with num_nodes per graph; got "
                f"{type(graphs).__name__}{getattr(graphs, 'shape', '')}")
        if num_nodes is not None and len(num_nodes) != len(graphs):
            raise GraphInputError(f"{len(num_nodes)} num_nodes for {len(graphs)} graphs")
        if edge_weight is not None and len(edge_weight) != len(graphs):
            raise GraphInputError(f"{len(edge_weight)} edge_weight arrays for {len(graphs)} graphs")
        if num_nodes is not None or edge_weight is not None:
            return _edge_index_list(graphs, num_nodes, edge_weight, directed)
        door = _list_door(graphs)
        if door == "dense" and null_value is None:  # zeros read as arcs warn, graph by graph
            door = None
        if door == "edge_index":
            return _edge_index_list([_edge_index_of(g) for g in graphs], [_vertices_of(g) for g in graphs],
                                    None, directed)
        batch = _networkx_list(graphs, weight) if door == "networkx" else None
        if batch is not None:
            return batch if directed else _both_ways(batch)
        if door not in (None, "networkx"):
            batch = (_sparse_list if door == "sparse" else _dense_list)(graphs, null_value)
            return batch if directed else _both_ways(batch)
        parts = [_one_graph(graph, g, weight, null_value) for g, graph in enumerate(graphs)]
    batch = _concatenate(parts)
    return batch if directed else _both_ways(batch)


#: scipy's sparse formats a list of them is read from in one pass (others go graph by graph)
_SPARSE_FORMATS = ("csr", "csc", "coo")


def _list_door(graphs: Sequence) -> str | None:
    """The one kind every graph of a list is, read as a whole: 'edge_index' ((edge_index, n) pairs and
    PyG-like objects), 'sparse' (square scipy CSR, CSC or COO matrices), 'dense' (square real 2-D
    arrays), 'networkx' (graphs and digraphs, not multigraphs); None for an empty or mixed list, read
    graph by graph."""
    if not graphs:
        return None
    if all(hasattr(g, "edge_index") and hasattr(g, "num_nodes") or (isinstance(g, tuple) and len(g) == 2
                                                                      and np.ndim(g[0]) == 2) for g in graphs):
        return "edge_index"
    if all(sp.issparse(g) and g.format in _SPARSE_FORMATS and g.ndim == 2 and g.shape[0] == g.shape[1]
           for g in graphs):
        return "sparse"
    if all(type(g) is np.ndarray and g.ndim == 2 and g.shape[0] == g.shape[1] and g.dtype.kind in "iuf"
           for g in graphs):
        return "dense"
    if all(type(g).__module__.startswith("networkx") and hasattr(g, "adjacency") and not g.is_multigraph()
           for g in graphs):
        return "networkx"
    return None


def _networkx_list(graphs: Sequence, weight: str) -> Batch | None:
    """A list of networkx graphs (not multigraphs): every graph's arcs gathered from its adjacency (which
    holds an undirected graph's edges both ways) into one list a field, then read as arrays once. Each
    list is extended by C iterators over the adjacency's dicts (neighbours, their data, their weights),
    never a Python loop over arcs: a comprehension's 0.5 us an arc was 85% of the door; what remains is
    walking networkx's dicts, scattered in memory (about 0.2 us an arc to reach each arc's data). None where a
    weight is not a number: the graph-by-graph reading names the edge."""
    degrees: list[int] = []
    targets: list = []
    values: list = []
    for graph in graphs:
        adjacency = graph._adj  # (networkx's dict of dicts: its public views wrap each dict in Python)
        before = len(targets)
        degrees.extend(map(len, adjacency.values()))
        targets.extend(chain.from_iterable(adjacency.values()))
        data = list(chain.from_iterable(map(dict.values, adjacency.values())))
        # (a graph whose arcs carry no data, hop counts, needs no lookup an arc)
        values.extend(map(dict.get, data, repeat(weight), repeat(1)) if any(data) else repeat(1, len(data)))
        nodes = list(adjacency)
        if nodes != list(range(len(nodes))):  # (vertices named other than 0..n-1 in order)
            targets[before:] = map(dict(zip(nodes, range(len(nodes)))).__getitem__, targets[before:])
    weights = np.array(values) if values else np.empty(0)
    if weights.dtype.kind not in "biuf":
        return None
    weights = weights.astype(np.float64)
    check_weights(weights, "the batch's networkx graphs")
    sizes = np.fromiter(map(len, graphs), dtype=np.int64, count=len(graphs))
    degrees = np.array(degrees, dtype=np.int64)
    first_vertex = np.cumsum(sizes) - sizes
    arcs_before = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)  # (by vertex of the whole batch)
    local = np.arange(len(degrees), dtype=np.int32) - np.repeat(first_vertex, sizes).astype(np.int32)
    return Batch(sizes, arcs_before[np.append(first_vertex, len(degrees))], np.repeat(local, degrees),
                 np.array(targets, dtype=np.int32), weights, _integers(weights))


def _edge_index_of(graph) -> np.ndarray:
    return np.asarray(graph.edge_index if hasattr(graph, "edge_index") else graph[0])


def _vertices_of(graph) -> int:
    return int(graph.num_nodes if hasattr(graph, "edge_index") else graph[1])


def _sparse_list(graphs: Sequence, null_value: float) -> Batch:
    """A list of scipy CSR, CSC and COO matrices: their arrays gathered once, then one compiled pass
    (explicit entries are arcs, as one graph's are; null_value does not apply to sparse input)."""
    sizes = np.array([g.shape[0] for g in graphs], dtype=np.int64)
    kinds = np.array([_SPARSE_FORMATS.index(g.format) for g in graphs], dtype=np.int8)
    # per graph: its arcs' data, minor indices (CSR columns, CSC rows, COO columns) and major positions
    # (CSR/CSC pointers, n + 1 of them, or COO rows)
    data = [np.asarray(g.data, dtype=np.float64) for g in graphs]
    minor = [g.col if g.format == "coo" else g.indices for g in graphs]
    major = [g.row if g.format == "coo" else g.indptr for g in graphs]
    counts = np.array([d.size for d in data], dtype=np.int64)
    weights = np.concatenate(data)
    check_weights(weights, "the batch's sparse matrices")
    sources, targets = np.empty(weights.size, dtype=np.int32), np.empty(weights.size, dtype=np.int32)
    major_counts = np.array([m.size for m in major], dtype=np.int64)
    _expand_sparse(kinds, counts, np.concatenate(major).astype(np.int64), major_counts,
                   np.concatenate(minor).astype(np.int64), sources, targets)
    return Batch(sizes, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), sources, targets, weights,
                 _integers(weights))


@njit(cache=True)
def _expand_sparse(kinds, counts, major, major_counts, minor, sources, targets):
    """Each graph's arcs as (source, target): CSR rows from its pointers, CSC columns likewise with the
    roles swapped, COO as given."""
    e = 0
    m = 0
    for g in range(kinds.size):
        if kinds[g] == 2:  # COO: rows given
            for a in range(counts[g]):
                sources[e + a], targets[e + a] = major[m + a], minor[e + a]
        else:
            for line in range(major_counts[g] - 1):
                for a in range(major[m + line], major[m + line + 1]):
                    if kinds[g] == 0:
                        sources[e + a], targets[e + a] = line, minor[e + a]
                    else:
                        sources[e + a], targets[e + a] = minor[e + a], line
        e += counts[g]
        m += major_counts[g]


def _dense_list(graphs: Sequence, null_value: float) -> Batch:
    """A list of dense matrices: flattened into one array, then two compiled passes over the graphs in
    parallel, one counting each graph's arcs (finite entries other than null_value) and checking the
    weights, one gathering them."""
    sizes = np.array([g.shape[0] for g in graphs], dtype=np.int64)
    flat = np.concatenate([np.asarray(g, dtype=np.float64).ravel() for g in graphs])
    null = float(null_value)
    starts = np.concatenate([[0], np.cumsum(sizes * sizes)]).astype(np.int64)
    counts = np.zeros(sizes.size, dtype=np.int64)
    if not _count_dense_arcs(flat, starts, sizes, null, counts):
        check_weights(flat, "the batch's dense matrices")  # (which entry, and why)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    sources, targets = np.empty(indptr[-1], dtype=np.int32), np.empty(indptr[-1], dtype=np.int32)
    weights = np.empty(indptr[-1], dtype=np.float64)
    _gather_dense_arcs(flat, starts, sizes, null, indptr, sources, targets, weights)
    return Batch(sizes, indptr, sources, targets, weights, _integers(weights))


@njit(parallel=True, cache=True)
def _count_dense_arcs(flat, starts, sizes, null, counts):
    """Each graph's arcs counted into `counts`, in the same pass as the weights' check: whether every
    entry is allowed (no NaN, no -inf)."""
    allowed = 0
    for g in prange(sizes.size):
        found, fine = 0, True
        for x in flat[starts[g]:starts[g + 1]]:
            found += np.isfinite(x) and x != null
            fine &= x > -np.inf
        counts[g] = found
        allowed += fine
    return allowed == sizes.size


@njit(parallel=True, cache=True)
def _gather_dense_arcs(flat, starts, sizes, null, indptr, sources, targets, weights):
    for g in prange(sizes.size):
        n, e = sizes[g], indptr[g]
        for i in range(n):
            for j in range(n):
                x = flat[starts[g] + i * n + j]
                if np.isfinite(x) and x != null:
                    sources[e], targets[e], weights[e] = i, j, x
                    e += 1


def _both_ways(batch: Batch) -> Batch:
    """Every arc also reversed (directed=False)."""
    counts = np.diff(batch.indptr)
    graph_of = np.repeat(np.arange(counts.size), counts)
    order = np.argsort(np.concatenate([graph_of, graph_of]), kind="stable")
    join = lambda x, y: np.concatenate([x, y])[order]  # noqa: E731
    return Batch(batch.sizes, np.concatenate([[0], np.cumsum(2 * counts)]).astype(np.int64),
                 join(batch.sources, batch.targets), join(batch.targets, batch.sources),
                 join(batch.weights, batch.weights), batch.integer)


def _edge_index_list(graphs, num_nodes, edge_weight, directed: bool) -> Batch:
    """A list of (2, E) edge_index arrays (or objects holding one), read in a few array passes:
    the shape a data loader hands over, where a loop per graph would cost more than the paths."""
    indices = [np.asarray(g.edge_index if hasattr(g, "edge_index") else g) for g in graphs]
    for g, index in enumerate(indices):
        _check_edge_index(index, f"graph {g}")
    counts = np.array([index.shape[1] for index in indices], dtype=np.int64)
    joined = np.concatenate(indices, axis=1) if indices else np.empty((2, 0), dtype=np.int64)
    graph_of = np.repeat(np.arange(len(indices)), counts)
    if num_nodes is None:
        sizes = np.zeros(len(indices), dtype=np.int64)
        np.maximum.at(sizes, graph_of, joined.max(axis=0, initial=-1) + 1)
    else:
        sizes = np.asarray(num_nodes, dtype=np.int64)
    sources, targets = np.empty(joined.shape[1], dtype=np.int32), np.empty(joined.shape[1], dtype=np.int32)
    e = _split_arcs(joined, counts, sizes, sources, targets)
    if e >= 0:
        g = int(graph_of[e])
        raise GraphInputError(f"graph {g}: edge {e - int(counts[:g].sum())} ({joined[0, e]} -> {joined[1, e]}) leaves "
                              f"its {sizes[g]} vertices (valid: 0..{sizes[g] - 1})")
    if edge_weight is None:
        weights, integer = np.ones(joined.shape[1]), True
    else:
        weights = [np.asarray(w, dtype=np.float64).ravel() for w in edge_weight]
        wrong = [g for g, (w, c) in enumerate(zip(weights, counts)) if w.size != c]
        if wrong:
            raise GraphInputError(f"graph {wrong[0]}: {weights[wrong[0]].size} edge weights for {counts[wrong[0]]} edges")
        weights = np.concatenate(weights) if weights else np.empty(0)
        check_weights(weights, "edge_weight")
        integer = _integers(weights)
    batch = Batch(sizes, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), sources, targets, weights, integer)
    return batch if directed else _both_ways(batch)


@njit(cache=True)
def _split_arcs(joined, counts, sizes, sources, targets):
    """Rows of a joined edge_index as int32 sources and targets; the first arc that leaves its
    graph's vertices, or -1."""
    e = 0
    for g in range(counts.size):
        for _ in range(counts[g]):
            u, v = joined[0, e], joined[1, e]
            if u < 0 or v < 0 or u >= sizes[g] or v >= sizes[g]:
                return e
            sources[e], targets[e] = u, v
            e += 1
    return -1


def _integers(weights: np.ndarray) -> bool:
    return bool(np.all(np.mod(weights, 1) == 0))


def _split_joined(index: np.ndarray, num_nodes: np.ndarray, edge_weight) -> list[Edges]:
    """One PyG Batch-style edge_index (vertices numbered across the batch) cut into its graphs."""
    if num_nodes.ndim != 1 or (num_nodes < 0).any():
        raise GraphInputError(f"num_nodes must be one non-negative count per graph, got {num_nodes!r}")
    first = np.concatenate([[0], np.cumsum(num_nodes)])
    whole = _from_edge_index(index, int(first[-1]), edge_weight, "edge_index")
    graph_of = np.searchsorted(first, whole.source, side="right") - 1
    across = np.flatnonzero(graph_of != np.searchsorted(first, whole.target, side="right") - 1)
    if across.size:
        e = int(across[0])
        raise GraphInputError(f"edge {e} ({whole.source[e]} -> {whole.target[e]}) joins two graphs of the batch; "
                              "each edge must stay within one graph's vertices")
    order = np.argsort(graph_of, kind="stable")
    bounds = np.searchsorted(graph_of[order], np.arange(num_nodes.size + 1))
    return [Edges(int(num_nodes[g]), whole.source[order[a:b]] - first[g], whole.target[order[a:b]] - first[g],
                  whole.weight[order[a:b]]) for g, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]


def compute_dtype(batch: Batch, target: str, asked) -> tuple[str, float]:
    """The narrowest type whose sums are exact for this batch, and the largest distance it can hold
    (a larger value is a 'no path' that a negative arc lowered)."""
    bound = max(batch.largest - 1, 0) * batch.heaviest
    if batch.integer and (asked is None or np.dtype(asked).kind in "iu"):
        for dtype in ("int16", "int32") if target == "cpu" else ("int32",):
            if 2 * bound < INTEGER_INF[dtype]:
                return dtype, bound
    if asked is not None and np.dtype(asked) == np.float32 and (not batch.integer or bound < 2**24):
        return "float32", float(np.finfo(np.float32).max)
    return "float64", float(np.finfo(np.float64).max)


def _result_dtype(batch: Batch, asked, compute: str) -> np.dtype:
    if asked is not None:
        return np.dtype(asked)
    return np.dtype(compute if batch.integer and compute.startswith("int") else np.float64)


def _fill_value(value, dtype: np.dtype, name: str, negative: bool):
    if value is None:  # -1 cannot be a distance unless an arc is negative
        value = np.inf if dtype.kind == "f" else (np.iinfo(dtype).max if negative else -1)
    if dtype.kind in "iu" and not (np.isfinite(value) and value == int(value)
                                   and np.iinfo(dtype).min <= value <= np.iinfo(dtype).max):
        raise ValueError(f"{name}={value!r} does not fit the {dtype} result; give an integer in "
                         f"{np.iinfo(dtype).min}..{np.iinfo(dtype).max}, or a float dtype")
    return dtype.type(value)


def _check_memory(entries: int, dtype: np.dtype, predecessors: bool) -> None:
    needed = entries * (dtype.itemsize + (4 if predecessors else 0))
    if needed < MEMORY_WORTH_CHECKING:
        return
    available = available_memory()
    if available is not None and needed > available:
        raise InsufficientMemoryError(
            f"the batch's result needs {needed / 2**30:.1f} GiB ({entries:,} entries of {dtype}"
            f"{' and int32 predecessors' if predecessors else ''}) and this machine has {available / 2**30:.1f} GiB "
            "available: ask for padded=False (no padding), a narrower dtype, or solve the batch in parts")


def _layout(layout: str, target: str, predecessors: bool, dtype: str):
    if layout == "auto":
        layout = "blocks" if target != "cpu" else ("graphs" if predecessors else "lanes")
    lanes = vector_width(np.dtype(dtype).itemsize) if layout == "lanes" else 1
    return batch_schedule(layout, lanes)


def _run_cpu(compiled: CompiledBatch, batch: Batch, order: np.ndarray, weights: np.ndarray, out: np.ndarray,
             out_pred: np.ndarray, offsets: np.ndarray, widths: np.ndarray, status: np.ndarray, fills: tuple,
             progress: bool | None) -> None:
    shown = None if progress is False else progress_bar(len(order), "solve_batch", unit="graph", show=progress)
    step = len(order) if shown is None or shown.disable else max(PROGRESS_CHUNK // compiled.lanes, 1) * compiled.lanes
    for first in range(0, max(len(order), 1), max(step, 1)):
        part = order[first:first + step]
        compiled.run(part, batch.sizes, batch.sources, batch.targets, weights, batch.indptr, out, out_pred,
                     offsets, widths, status, *fills, len(part), batch.largest)
        if shown is not None:
            shown.update(len(part))
    if shown is not None:
        shown.close()


def _run_cuda(compiled: CompiledBatch, batch: Batch, weights, out: np.ndarray, offsets: np.ndarray,
              widths: np.ndarray, status: np.ndarray, fills: tuple, keep: bool = False):
    """The batch's arcs to the device (those there already stay), each graph built, relaxed and stored by
    its own thread block straight into the result's layout and dtype, and the result back into `out`, or
    with `keep` returned on the device (the simulator's, run on the host, is moved there)."""
    from numba import cuda

    from codegen.gpu_semantics import ConcurrentBlocksMatrix

    count, side = len(batch.sizes), compiled.side
    found = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    grid = task_count(compiled, count, side)
    arrays = (batch.sizes, batch.indptr, batch.sources, batch.targets, weights)
    result = None
    if compiled.target == "cudasim":
        device = ConcurrentBlocksMatrix(out)
        device.begin_launch(f"batch {compiled.schedule.name}")
        compiled.run[grid, CUDA_BLOCK[::-1]](*arrays, device, offsets, widths, found, *fills, count, side, 0)
        device.end_launch()
        out[...] = device.copy_to_host()
        result = cuda.to_device(out) if keep else None
    else:
        result, found_device = cuda.device_array(out.shape, out.dtype), cuda.to_device(found)
        if count:
            compiled.run[grid, CUDA_BLOCK[::-1]](*(cuda.to_device(x) if isinstance(x, np.ndarray) else x
                                                   for x in arrays), result, cuda.to_device(offsets),
                                                 cuda.to_device(widths), found_device, *fills, count, side, 0)
            found = found_device.copy_to_host()
        if not keep:
            result.copy_to_host(out)
    status[found < side] = found[found < side]
    return result


def solve_batch(graphs, num_nodes=None, *, edge_weight=None, directed: bool = True, padded: bool = True,
                unreachable=None, padding=None, dtype=None, predecessors: bool = False, weight: str = "weight",
                null_value: float = 0, layout: str = "auto", target: str = "cpu", progress: bool | None = False,
                client=None, store=None, device_result: bool = False, like: object | None = None):
    """All-pairs shortest path lengths of every graph of a batch.

    graphs: a list of graphs — dense matrices (entries equal to `null_value`, 0 by default, or inf
    are no arc: an adjacency matrix reads as hop counts), scipy.sparse matrices (explicit entries
    are arcs), networkx graphs (attribute `weight`, 1 if missing), (edge_index, n) pairs or
    PyG-like objects with .edge_index and .num_nodes; or a list of (2, E) edge_index arrays with
    `num_nodes` (a count per graph; without it, the largest index + 1); or one (2, E) edge_index
    numbering vertices across the batch (a PyG Batch) with `num_nodes` per graph.
    edge_weight: per-graph weight arrays (or one array for a joined edge_index); none: every arc
    weighs 1. directed=False uses every arc both ways.

    Returns a (B, N, N) array, N the largest graph's size (padded=False: a list of n x n arrays),
    and with predecessors=True also their predecessors (int32, -9999 where none: scipy's
    convention). Distances are integers when every weight is (int16 or int32, the type that
    computes them), float64 otherwise; `dtype` sets another. `unreachable` is what a missing path
    reads as (inf for floats; for integers -1, or the type's largest value where an arc is negative;
    Graphormer uses 510) and `padding` what fills the
    entries beyond a graph's own size (default: unreachable). layout: 'auto' (lanes: graphs of a
    size side by side in vector lanes; graphs with predecessors; blocks on CUDA) or one of
    schedules.batch.LAYOUTS. target: 'cpu', 'cuda' or 'cudasim'. progress: a bar (polyfw.progress; True
    wherever stderr goes, None in a terminal or a notebook only).
    On target 'cuda' or 'cudasim', `graphs` may also be one (B, n, n) stack of dense matrices on the GPU (a
    torch or cupy array, a numba device array; entries read as in a list of dense matrices, zeros as arcs
    with the list's one warning where null_value=None): its arcs are gathered there, never copied to the host.
    device_result=True returns the distances on the GPU (numba device arrays, which torch and cupy wrap
    without a copy; padded=False: views of one), like=x as arrays of x's kind; on those targets only.
    No input is changed. A graph with a negative cycle raises NegativeCycleInBatch, naming it.

    Beyond one machine: with a dask.distributed `client` (or a dask.bag, on the default client),
    `graphs` is a list of partitions (lists of graphs) or a dask.bag, each partition is solved on a
    worker, and the result is one future a partition; `store` (a directory every worker can write)
    has each worker write its partition's answers there as part-00000.npy, ... instead of holding
    them (polyfw.dask_batch).
    """
    if client is not None or is_bag(graphs):
        if client is None:
            from distributed import default_client

            client = default_client()
        return solve_partitions(graphs, client, solve_batch, read_batch, store=store, num_nodes=num_nodes,
                                edge_weight=edge_weight, directed=directed, padded=padded, unreachable=unreachable,
                                padding=padding, dtype=dtype, predecessors=predecessors, weight=weight,
                                null_value=null_value, layout=layout, target=target)
    if store is not None:
        raise ValueError("store= is where a dask cluster's workers write their partitions: pass client= too")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    on_device = is_device_array(graphs)
    check_device_request(target, on_device, device_result, like)
    if on_device and (num_nodes is not None or edge_weight is not None):
        raise ValueError("a (B, n, n) stack on the GPU holds its graphs' sizes and weights: num_nodes and "
                         "edge_weight go with edge_index inputs; pass neither")
    batch = _device_batch(graphs, null_value, directed) if on_device else \
        read_batch(graphs, num_nodes, edge_weight, weight, null_value, directed)
    compute, limit = compute_dtype(batch, target, dtype)
    result = _result_dtype(batch, dtype, compute_dtype(batch, "cpu", dtype)[0])  # the same on every target
    negative = batch.negative
    unreachable = _fill_value(unreachable, result, "unreachable", negative)
    padding = unreachable if padding is None else _fill_value(padding, result, "padding", negative)
    schedule = _layout(layout, target, predecessors, compute)
    side = batch.largest if target == "cpu" else min(max(batch.largest, 1), CUDA_MAX_VERTICES + 1)
    compiled = generate_batch(schedule, target, compute, predecessors, 0 if target == "cpu" else side)
    count = len(batch.sizes)
    widths = np.full(count, batch.largest, dtype=np.int64) if padded else batch.sizes.copy()
    offsets = np.concatenate([[0], np.cumsum(widths * widths)]).astype(np.int64)
    _check_memory(int(offsets[-1]), result, predecessors)
    out = mapped_empty(int(offsets[-1]), result)
    out_pred = mapped_empty(int(offsets[-1]) if predecessors else 0, np.int32)
    status = np.full(count, -1, dtype=np.int64)
    weights = batch.weights_as(compute)
    fills = (unreachable, padding, np.dtype(compute).type(limit))  # (limit: a larger value is a lowered INF)
    kept = None  # the result on the device, where asked
    if target == "cpu":
        order = np.argsort(-batch.sizes, kind="stable").astype(np.int64)  # largest first: even work, even groups
        _run_cpu(compiled, batch, order, weights, out, out_pred, offsets, widths, status, fills, progress)
    else:
        kept = _run_cuda(compiled, batch, weights, out, offsets, widths, status, fills,
                         device_result or like is not None)
    negative = np.flatnonzero(status >= 0)
    if negative.size:
        raise NegativeCycleInBatch(int(negative[0]), int(status[negative[0]]))
    compiled.last_run.update(graphs=count, layout=schedule.name, dtype=compute)
    if kept is not None:
        shape = (count, batch.largest, batch.largest)
        return returned(kept.reshape(shape), True, like) if padded else \
            [returned(kept[a:b].reshape((n, n)), True, like) for a, b, n in zip(offsets[:-1], offsets[1:], batch.sizes)]
    if padded:
        shape = (count, batch.largest, batch.largest)
        distances = out.reshape(shape)
        return (distances, out_pred.reshape(shape)) if predecessors else distances
    split = [out[a:b].reshape(n, n) for a, b, n in zip(offsets[:-1], offsets[1:], batch.sizes)]
    if not predecessors:
        return split
    return split, [out_pred[a:b].reshape(n, n) for a, b, n in zip(offsets[:-1], offsets[1:], batch.sizes)]
