"""A networkx graph as polyfw's kernels read it, and back.

networkx hands a backend each graph once per call (or once per graph, from its conversion
cache); the arrays built here are what every dispatched algorithm runs on. The arcs keep
networkx's neighbour order, so that breadth-first orders come out as networkx's own.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import chain

import networkx as nx
import numpy as np

from ..graphs import Edges
from ..sparse.csr import CSRGraph

#: an integer weight above this could make a path's sum inexact in float64 (2**53 / n is checked too)
EXACT_INTEGER = 2**53


class UnsupportedWeights(NotImplementedError):
    """Weights polyfw cannot compute with exactly (not real numbers, NaN, inf, integers beyond
    float64's exact range): networkx falls back to its own code, which computes in Python's."""


@dataclass(frozen=True)
class ArcWeights:
    """One weight per arc (float64; inf for an arc a weight function hides) and whether every
    one was a Python or numpy integer: networkx's sums of integers are integers, and so are ours."""

    values: np.ndarray
    integral: bool

    @property
    def lightest(self) -> float:
        return float(self.values.min()) if self.values.size else np.inf


@dataclass(eq=False)
class PolyfwGraph:
    """A networkx graph as compressed sparse rows over its nodes in networkx's order.

    Row u holds u's successors (every neighbour of an undirected graph), each once, in
    networkx's neighbour order; a multigraph's parallel edges are one arc of their lightest
    weight. `weights` holds the edge attributes read so far (those the call named are read at
    conversion); `original` is the networkx graph itself (a reference, not a copy), read for
    what a call needs beyond that: a weight function, predecessor order, attributes a result
    copies."""

    __networkx_backend__ = "polyfw"

    nodes: list
    index: dict
    directed: bool
    multigraph: bool
    indptr: np.ndarray
    indices: np.ndarray
    weights: dict[str, ArcWeights]
    original: nx.Graph

    @property
    def n(self) -> int:
        return len(self.nodes)

    @cached_property
    def labels(self) -> np.ndarray:
        """The nodes as an object array (fancy indexing picks many labels at C speed)."""
        return np.fromiter(self.nodes, dtype=object, count=len(self.nodes))

    @property
    def sources(self) -> np.ndarray:
        """The tail of every arc."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))

    def is_directed(self) -> bool:
        return self.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    def __len__(self) -> int:
        return self.n

    def __contains__(self, node) -> bool:
        try:
            return node in self.index
        except TypeError:  # an unhashable value is no node, as in networkx
            return False

    def arc_weights(self, weight) -> ArcWeights:
        """The arcs' weights for networkx's `weight` argument: an attribute name (1 where an
        edge lacks it), None (every arc 1) or a function of (u, v, edge data) whose None hides
        the arc."""
        if weight is None:
            return ArcWeights(np.ones(self.indices.shape[0]), True)
        if callable(weight):
            return _function_weights(self.original, self.nodes, weight)
        if weight not in self.weights:
            self.weights[weight] = _attribute_weights(self.original, self.nodes, weight, 1)
        return self.weights[weight]

    def rows(self, reverse: bool = False, sort_neighbors=None) -> tuple[np.ndarray, np.ndarray]:
        """(indptr, indices) of the rows a breadth-first search reads: successors, or predecessors
        of a directed graph with reverse=True, in networkx's order or sort_neighbors' (called with
        an iterator over each node's neighbours, as networkx calls it)."""
        if not (reverse and self.directed) and sort_neighbors is None:
            return self.indptr, self.indices
        adjacency = self.original._pred if reverse and self.directed else self.original._adj
        neighbours = [adjacency[u] for u in self.nodes]
        if sort_neighbors is not None:
            neighbours = [list(sort_neighbors(iter(each))) for each in neighbours]
        return _compressed(neighbours, self.index)

    def csr(self, weights: ArcWeights) -> CSRGraph:
        """polyfw's CSR graph with these weights (arcs a weight function hid left out)."""
        values = weights.values
        if np.isinf(values).any():
            kept = ~np.isinf(values)
            rows = np.zeros(self.n + 1, dtype=np.int64)
            np.cumsum(np.bincount(self.sources[kept], minlength=self.n), out=rows[1:])
            return CSRGraph(self.n, rows, self.indices[kept], values[kept])
        return CSRGraph(self.n, self.indptr, self.indices, values)

    def edges(self, weights: ArcWeights) -> Edges:
        """The arcs as polyfw's edge list (every input of polyfw.solve reads it)."""
        kept = ~np.isinf(weights.values)
        return Edges(self.n, self.sources[kept], self.indices[kept].astype(np.int64), weights.values[kept])


def _compressed(neighbours: list, index: dict) -> tuple[np.ndarray, np.ndarray]:
    """Row offsets and column positions of each node's neighbours (labels), in their order."""
    indptr = np.zeros(len(neighbours) + 1, dtype=np.int64)
    np.cumsum([len(each) for each in neighbours], out=indptr[1:])
    indices = np.fromiter(chain.from_iterable(map(index.__getitem__, each) for each in neighbours),
                          dtype=np.int32 if len(index) < 2**31 else np.int64, count=int(indptr[-1]))
    return indptr, indices


def python_numbers(values: np.ndarray, integral: bool) -> list:
    """Python ints (integral weights, inf kept as float inf) or floats: networkx's number types."""
    if not integral:
        return values.tolist()
    finite = np.isfinite(values)
    numbers = np.where(finite, values, 0).astype(np.int64).tolist()
    for at in np.flatnonzero(~finite).tolist():
        numbers[at] = float(values[at])
    return numbers


def _checked(values: list, n: int, where: str) -> ArcWeights:
    """Weights read from edge data as float64, refused where float64 would not compute networkx's
    answer exactly."""
    found = np.array(values) if values else np.zeros(0, dtype=np.int64)
    if found.dtype.kind == "b":
        found = found.astype(np.int64)
    if found.dtype.kind not in "iuf" or found.dtype.itemsize > 8:
        odd = next((w for w in values if not isinstance(w, (int, float, np.integer, np.floating))), None)
        why = (f"weight {odd!r} ({type(odd).__name__}) is not an int or a float" if odd is not None
               else "an integer weight is beyond int64")
        raise UnsupportedWeights(f"{where}: {why}; polyfw computes in float64 and left this graph to networkx")
    integral = found.dtype.kind in "iu"
    floats = found.astype(np.float64)
    if not integral and not np.isfinite(floats).all():
        raise UnsupportedWeights(f"{where}: a weight is NaN or infinite; polyfw left this graph to networkx")
    if integral and floats.size and float(np.abs(floats).max()) * max(n - 1, 1) >= EXACT_INTEGER:
        raise UnsupportedWeights(f"{where}: integer weights up to {int(np.abs(found).max())} could make path "
                                 "sums beyond float64's exact integers; polyfw left this graph to networkx")
    return ArcWeights(floats, integral)


def _attribute_weights(graph: nx.Graph, nodes: list, attribute, default) -> ArcWeights:
    adjacency = graph._adj
    if graph.is_multigraph():
        values = [min(data.get(attribute, default) for data in keyed.values())
                  for u in nodes for keyed in adjacency[u].values()]
    else:
        values = [data.get(attribute, default) for u in nodes for data in adjacency[u].values()]
    return _checked(values, len(nodes), f"edge attribute {attribute!r}")


def _function_weights(graph: nx.Graph, nodes: list, function) -> ArcWeights:
    """networkx's weight function, called once per arc (with a multigraph's dict of parallel
    edges, as networkx calls it); None hides the arc (inf here)."""
    adjacency = graph._adj
    values = [function(u, v, data) for u in nodes for v, data in adjacency[u].items()]
    hidden = [at for at, value in enumerate(values) if value is None]
    for at in hidden:
        values[at] = 0
    weights = _checked(values, len(nodes), "the weight function's values")
    weights.values[hidden] = np.inf
    return weights


def convert_from_nx(graph: nx.Graph, *, edge_attrs: dict | None = None, node_attrs=None,
                    preserve_edge_attrs: bool = False, preserve_node_attrs: bool = False,
                    preserve_graph_attrs: bool = False, name: str | None = None,
                    graph_name: str | None = None) -> PolyfwGraph:
    """networkx's conversion hook: the arcs in networkx's order and the weights of `edge_attrs`
    ({attribute: default}); node and graph attributes stay in the graph, which is kept."""
    nodes = list(graph)
    index = {node: position for position, node in enumerate(nodes)}
    indptr, indices = _compressed([graph._adj[u] for u in nodes], index)
    weights = {attribute: _attribute_weights(graph, nodes, attribute, default)
               for attribute, default in (edge_attrs or {}).items()}
    return PolyfwGraph(nodes, index, graph.is_directed(), graph.is_multigraph(), indptr, indices, weights, graph)


def convert_to_nx(obj, *, name: str | None = None):
    """networkx's hook for results: a polyfw graph as a networkx graph; everything polyfw's
    algorithms return is already networkx's own type."""
    return obj.original if isinstance(obj, PolyfwGraph) else obj
