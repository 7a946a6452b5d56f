"""Drop-ins for scipy.sparse.csgraph's floyd_warshall and shortest_path: change the import, keep the code."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph._validation import validate_graph

from tiling.graphs import GraphInputError, as_float_distances

from .method import choose_method
from .solve import NO_PREDECESSOR, solve
from .sparse import as_csr, johnson, sssp


def floyd_warshall(csgraph, directed: bool = True, return_predecessors: bool = False,
                   unweighted: bool = False, overwrite: bool = False, **schedule_options):
    """scipy's floyd_warshall, computed by a polyfw schedule (schedule_options go to solve).

    Inputs are read exactly as scipy reads them (dense zeros, inf and NaN are
    missing edges; sparse explicit entries are edges); results are float64,
    predecessors int32 with -9999, and negative cycles raise scipy's
    NegativeCycleError (polyfw's subclass of it). overwrite=True writes the
    result into a dense float64 C-contiguous input, as scipy may.
    """
    dense = np.array(validate_graph(csgraph, directed, np.float64, csr_output=False, dense_output=True))
    np.fill_diagonal(dense, np.inf)  # scipy starts every vertex at distance 0 and ignores self-loops
    if unweighted:
        dense = np.where(np.isfinite(dense), 1.0, np.inf)
    schedule_options.setdefault("dtype", np.float64)
    result = solve(dense, directed=directed, predecessors=return_predecessors, **schedule_options)
    distances, predecessors = result if return_predecessors else (result, None)
    distances = as_float_distances(distances)  # int32's INF sentinel becomes np.inf
    if overwrite and isinstance(csgraph, np.ndarray) and csgraph.dtype == np.float64 \
            and csgraph.flags.c_contiguous and csgraph.shape == distances.shape:
        csgraph[...] = distances
        distances = csgraph
    if return_predecessors:
        return distances, predecessors.astype(np.int32, copy=False)
    return distances


def shortest_path(csgraph, method: str = "auto", directed: bool = True, return_predecessors: bool = False,
                  unweighted: bool = False, overwrite: bool = False, indices=None):
    """scipy's shortest_path: 'FW' by a polyfw schedule (floyd_warshall above), 'D' by Dijkstra
    from every source, 'BF' and 'J' by Johnson (Bellman-Ford potentials, then Dijkstra), 'auto'
    by polyfw's cost model (dense Floyd-Warshall or sparse Johnson). indices: only the rows of
    these sources (by single-source searches). Inputs are read as scipy reads them."""
    if method not in ("auto", "FW", "D", "BF", "J"):
        raise ValueError(f"method must be one of 'auto', 'FW', 'D', 'BF', 'J', got {method!r}")
    graph = sp.csr_array(validate_graph(csgraph, directed, np.float64, csr_output=True, dense_output=False),
                         copy=True)
    if unweighted:
        graph.data[:] = 1.0
    csr = as_csr(graph, directed=directed)
    negative = csr.lightest < 0
    if method == "D" and negative:
        raise GraphInputError("method 'D' (Dijkstra) needs non-negative weights; use 'J' or 'BF'")
    if indices is None and (method == "FW" or (method == "auto" and choose_method(
            csr.n, csr.m, "float64").method == "dense")):
        return floyd_warshall(csgraph, directed, return_predecessors, unweighted, overwrite)
    if indices is None:
        return johnson(csr, predecessors=return_predecessors)
    rows = np.atleast_1d(np.asarray(indices))
    search = "bellman-ford" if negative else "dijkstra"
    found = [sssp(csr, int(source), method=search) for source in rows]
    distances = np.array([dist for dist, _ in found]).reshape(rows.shape + (csr.n,))
    if not return_predecessors:
        return distances if np.ndim(indices) else distances[0]
    predecessors = np.array([parent for _, parent in found]).reshape(distances.shape)
    predecessors[predecessors < 0] = NO_PREDECESSOR
    flat = predecessors.reshape(-1, csr.n)
    flat[np.arange(len(flat)), rows.reshape(-1)] = NO_PREDECESSOR  # a source has none
    predecessors = predecessors.astype(np.int32)
    return (distances, predecessors) if np.ndim(indices) else (distances[0], predecessors[0])


__all__ = ["floyd_warshall", "shortest_path", "NO_PREDECESSOR"]
