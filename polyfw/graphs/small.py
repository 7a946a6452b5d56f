"""A small graph read for solve's quick path: its arcs (or its matrix) with the facts a plan needs, in
one or two compiled passes, and written into the kernels' rows in one more.

The general reader asks each thing of the input through polyfw.graphs.inputs (its summary, its arcs,
its checks, its lightest weight), which costs more than a 20-vertex run. Here a plain call's input is
read once, into exactly what the plan and the run take. Anything that reader would have to say more
about (a warning, an error, a kind of input or an option it does not know) is left to the general
reader: `read_small` then returns None, and nothing here warns or raises in its place.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tiling.semirings import top

from .dense_facts import DenseFacts, dense_facts
from .edges import Edges, is_scipy_sparse
from .inputs import WeightSummary, closed_copy, edges_from_networkx, scatter_arcs, sparse_edges
from .ordering import SMALLEST

#: inputs below this many vertices are read here: below it no sparse input is renumbered or priced by
#: its empty blocks (polyfw.graphs.ordering), so the plan is the one the general reader would make
SMALL_BELOW = SMALLEST
#: the scipy.sparse formats read from their own arrays
SPARSE_FORMATS = ("csr", "csc", "coo")


@dataclass(frozen=True)
class SmallGraph:
    """A small input as the run takes it: arcs, or a dense matrix (inf: no arc), with their facts."""

    n: int
    arcs: Edges | None
    matrix: np.ndarray | None
    #: the input's own direction (an undirected networkx graph's arcs go both ways)
    directed: bool
    summary: WeightSummary

    def arc_count(self, directed: bool) -> int | None:
        """The arcs a sparse input's run sees (each twice when undirected), None for a dense matrix:
        what the general reader passes the plan."""
        if self.arcs is None:
            return None
        return len(self.arcs.source) * (1 if directed and self.directed else 2)

    def write(self, out: np.ndarray, directed: bool) -> None:
        """The distance problem's matrix into `out` (n x n, in the plan's dtype): INF where no arc, the
        lighter of parallel arcs, both directions unless directed, a diagonal of min(0, self-loop)."""
        inf = out.dtype.type(top(out.dtype))
        both_ways = not (directed and self.directed)
        if self.arcs is None:
            closed_copy(self.matrix, out, inf, both_ways)
        else:
            scatter_arcs(self.arcs.source, self.arcs.target, self.arcs.weight, out, inf, both_ways)


def read_small(graph, weight: str, null_value: float | None) -> SmallGraph | None:
    """`graph` read for the quick path (a dense array, a CSR, CSC or COO matrix, a networkx graph or Edges
    of 1 to SMALL_BELOW - 1 vertices, with real weights and no NaN or -inf), or None: then the general
    reader reads it, and gives whatever warning or error it has."""
    if type(graph) is np.ndarray:
        return _dense(graph, null_value)
    directed = True
    if type(graph) is Edges:
        arcs = graph
    elif is_scipy_sparse(graph):
        if graph.format not in SPARSE_FORMATS or graph.ndim != 2 or graph.shape[0] != graph.shape[1] \
                or not 0 < graph.shape[0] < SMALL_BELOW:
            return None
        arcs = sparse_edges(graph)
    elif type(graph).__module__.startswith("networkx"):
        if not 0 < graph.number_of_nodes() < SMALL_BELOW:
            return None
        arcs, directed = edges_from_networkx(graph, weight)
    else:
        return None
    weights = np.asarray(arcs.weight)
    if not 0 < arcs.n < SMALL_BELOW or weights.dtype.kind not in "iuf" or weights.ndim != 1:
        return None
    facts = dense_facts(weights)
    if facts.not_allowed:
        return None
    return SmallGraph(arcs.n, arcs, None, directed, WeightSummary.of(arcs.n, facts))


def _dense(matrix: np.ndarray, null_value: float | None) -> SmallGraph | None:
    """A square real matrix whose zeros off the diagonal need no warning and no null_value other than inf."""
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or not 0 < matrix.shape[0] < SMALL_BELOW \
            or matrix.dtype.kind not in "iuf" or not (null_value is None or np.isinf(null_value)):
        return None
    facts: DenseFacts = dense_facts(matrix)
    if facts.not_allowed or (null_value is None and facts.off_diagonal_zeros):
        return None
    n = matrix.shape[0]
    return SmallGraph(n, None, matrix, True, WeightSummary.of(n, facts))
