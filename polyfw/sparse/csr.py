"""A graph as compressed sparse rows, from every input polyfw.graphs accepts.

Seed 002 "extends" CSR with the source vertex of every edge, so that an
edge-parallel kernel has each edge as a work item without searching the row
offsets; `sources` is that array. Parallel edges keep the lightest (as the
dense path does); a self-loop matters only when negative (a negative cycle).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..graphs import Edges, GraphInputError
from ..graphs.inputs import check_weights, edges_or_dense
from .building import rows_of_arcs
from .kernels import LIGHTEST_AHEAD, UNREACHED_INT32, hubs_first, lightest_first


#: parent pulls a graph's rows serve in target order before parent_rows copies them lightest first
PULLS_BEFORE_LIGHTEST_FIRST = 4


@dataclass(frozen=True, eq=False)
class CSRGraph:
    n: int
    #: row offsets (n + 1), targets and weights of each vertex's out-edges, sorted by target
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    #: every arc's reverse is an arc of the same weight (an undirected graph read with both arcs): the
    #: graph is its own reverse, so searches that read in-edges read these rows without a transpose
    symmetric: bool = False
    #: parent pulls that read these rows so far (parent_rows: whether a lightest-first copy pays yet)
    pulls: list[int] = field(default_factory=lambda: [0], repr=False)

    @property
    def m(self) -> int:
        return int(self.indices.shape[0])

    @cached_property
    def sources(self) -> np.ndarray:
        """The source vertex of every edge (seed 002's extended CSR)."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))

    @cached_property
    def reverse(self) -> CSRGraph:
        """The graph with every edge turned around (in-edges as rows): bottom-up BFS reads it."""
        return self if self.symmetric else _from_arrays(self.n, self.indices.astype(np.int64), self.sources,
                                                         self.weights)

    @cached_property
    def hubs_first(self) -> np.ndarray:
        """indices with each row's two entries of the longest rows first (kernels.hubs_first): the rows a
        bottom-up BFS step reads, built once a graph, at its first such search (about 150 ms at 2**20
        vertices and 2**25 arcs, where building the graph took 2.5 s)."""
        hubs = np.empty_like(self.indices)
        hubs_first(self.indices, self.indptr, hubs)
        return hubs

    @cached_property
    def lightest_first(self) -> tuple[np.ndarray, np.ndarray]:
        """(indices, search_weights) with each row's LIGHTEST_AHEAD lightest entries first
        (kernels.lightest_first): the rows a parent pull reads once it has read them often enough (parent_rows)."""
        weights = self.search_weights
        copied = np.empty_like(self.indices), np.empty_like(weights)
        lightest_first(self.indices, weights, self.indptr, LIGHTEST_AHEAD, *copied)
        return copied

    def parent_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(indices, search_weights) for one more parent pull over these rows (as in-rows): as the graph holds
        them for its first PULLS_BEFORE_LIGHTEST_FIRST pulls, then the lightest-first copy. The copy costs
        about what that many pulls lose to target order (scale 20, 2 threads: Kronecker 100 ms against
        35 -> 11 ms a pull, uniform 230 ms against 70 -> 24), so a graph searched once pays nothing for it
        and one searched often pays at most twice the best choice in hindsight (the ski-rental rule)."""
        self.pulls[0] += 1
        if self.pulls[0] > PULLS_BEFORE_LIGHTEST_FIRST or "lightest_first" in self.__dict__:
            return self.lightest_first
        return self.indices, self.search_weights

    @property
    def search_weights(self) -> np.ndarray:
        """The weights a search compares distances with: integer_weights where they exist, else weights."""
        return self.weights if self.integer_weights is None else self.integer_weights

    @property
    def has_reverse(self) -> bool:
        """Whether `reverse` costs nothing now (the graph is its own, or it was built already)."""
        return self.symmetric or "reverse" in self.__dict__

    @cached_property
    def lightest(self) -> float:
        """The smallest weight (inf without edges): negative ones need Bellman-Ford."""
        return float(self.weights.min()) if self.m else np.inf

    @cached_property
    def heaviest(self) -> float:
        """The largest weight (0 without edges): how far ahead of its bucket delta-stepping puts a vertex."""
        return float(self.weights.max()) if self.m else 0.0

    @cached_property
    def mean_weight(self) -> float:
        """The mean weight (1 without edges): read once a graph."""
        return float(self.weights.mean()) if self.m else 1.0

    @cached_property
    def bucket_width(self) -> float:
        """Delta-stepping's default bucket width: the mean weight over the mean out-degree (at least
        1), Meyer and Sanders' delta of order 1 / degree for weights of order 1: narrow buckets for
        dense Kronecker graphs, wide ones for a grid, where no fixed fraction of the mean weight served
        both (benchmarks/bucket_width.py)."""
        return max(self.mean_weight / max(self.m / max(self.n, 1), 1.0), 1e-300)

    @cached_property
    def integer_weights(self) -> np.ndarray | None:
        """The weights as int32 when every one is a non-negative integer small enough that no path of
        n - 1 edges, nor such a path and one edge more, reaches kernels.UNREACHED_INT32 (GAPBS's int32
        distances: half a float64's bytes for every distance read and swapped), else None."""
        if self.m == 0 or self.lightest < 0 or self.heaviest * self.n >= UNREACHED_INT32:
            return None
        as_int = self.weights.astype(np.int32)
        return as_int if np.array_equal(as_int, self.weights) else None

    @property
    def out_degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    def on_host(self) -> CSRGraph:
        """The graph with its arrays on the host (itself; polyfw.sparse.cuda.DeviceCSR's are copied there)."""
        return self


def _from_arrays(n: int, source: np.ndarray, target: np.ndarray, weight: np.ndarray,
                 symmetric: bool = False) -> CSRGraph:
    """Rows sorted by target; of repeated (source, target) pairs the lightest stays (symmetric: the arcs
    come in reverse pairs of one weight). Arcs already in strictly increasing (source, target) order, as a
    canonical scipy CSR gives them, are counted into rows only: on 425K arcs a sort took 100 ms of a 117 ms
    search from a scipy matrix, 20x scipy's own Dijkstra call; others are sorted row by row (building.py)."""
    index_dtype = np.int32 if n < 2**31 else np.int64
    if not _strictly_ordered(source, target):
        return CSRGraph(n, *rows_of_arcs(n, source, target, weight, index_dtype), symmetric)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(source, minlength=n), out=indptr[1:])
    return CSRGraph(n, indptr, target.astype(index_dtype), weight.astype(np.float64), symmetric)


def _strictly_ordered(source: np.ndarray, target: np.ndarray) -> bool:
    """Whether the arcs are sorted by (source, target) with no pair repeated."""
    same = source[1:] == source[:-1]
    return bool(np.all((source[1:] > source[:-1]) | (same & (target[1:] > target[:-1]))))


def as_csr(graph, directed: bool = True, weight: str = "weight") -> CSRGraph:
    """The CSR form of a numpy matrix (INF: no edge), scipy.sparse matrix, networkx graph, Edges
    or DIMACS / Matrix Market path; undirected graphs (directed=False, or networkx) get both arcs."""
    if isinstance(graph, CSRGraph):
        return graph
    if isinstance(getattr(graph, "csr", None), CSRGraph):  # a graph on the GPU (device_graph.DeviceGraph)
        return graph.csr
    found, input_directed = edges_or_dense(graph, weight)
    directed = directed and input_directed
    if isinstance(found, Edges):
        edges = found
        values = np.asarray(edges.weight)
        check_weights(values, "edge weights")
        if values.size and np.isinf(values).any():
            raise GraphInputError("edge weights must be finite (leave a missing edge out instead of giving it inf)")
        source, target, values = np.asarray(edges.source), np.asarray(edges.target), values.astype(np.float64)
        n = edges.n
    else:
        matrix = np.asarray(found)
        n = matrix.shape[0]
        present = np.isfinite(matrix)
        np.fill_diagonal(present, np.diag(matrix) < 0)  # a self-loop matters only when negative
        source, target = np.nonzero(present)
        values = matrix[source, target].astype(np.float64)
    if source.size and (source.min() < 0 or target.min() < 0 or max(source.max(), target.max()) >= n):
        raise GraphInputError(f"an edge names a vertex outside 0..{n - 1}")
    source, target = source.astype(np.int64), target.astype(np.int64)
    if not directed:
        source, target, values = (np.concatenate([source, target]), np.concatenate([target, source]),
                                  np.concatenate([values, values]))
    return _from_arrays(n, source, target, values, symmetric=not directed)
