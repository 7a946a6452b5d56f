"""Drop-ins for scipy.sparse.csgraph's shortest-path functions: change the import, keep the code.

floyd_warshall, shortest_path, dijkstra, bellman_ford and johnson take scipy's arguments and give
scipy's results: float64 distances, int32 predecessors with -9999, the shapes scipy gives for
`indices` (indices.shape + (N,); (N,) for one index or min_only) and scipy's NegativeCycleError
(polyfw's subclass of it). Inputs are read exactly as scipy reads them: dense zeros, inf and NaN
are missing edges; every explicit entry of a sparse matrix is an edge (an explicit inf or NaN is
one no path can use, so it is left out; with unweighted=True it weighs 1 like every other, as in
scipy's searches). No function writes into its input; only floyd_warshall (and shortest_path with
'FW') with overwrite=True puts the result into a dense float64 C-contiguous input, as scipy does.

Where a variant has no kernel of its own the substitute is named in the function's docstring;
distances are scipy's exactly on integer weights. Of equally short paths the predecessors may
name another than scipy's (scipy says so of its own methods too).
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.sparse.csgraph._validation import validate_graph

from .graphs import NO_PREDECESSOR, Edges, as_float_distances
from .method import choose_method
from .solver import solve
from .sparse import as_csr, sssp
from .sparse.csr import CSRGraph, _from_arrays
from .sparse.paths import dijkstra_rows, potentials

#: scipy's shortest_path methods
SHORTEST_PATH_METHODS = ("auto", "FW", "D", "BF", "J")


def floyd_warshall(csgraph, directed: bool = True, return_predecessors: bool = False,
                   unweighted: bool = False, overwrite: bool = False, **schedule_options):
    """scipy's floyd_warshall, computed by a polyfw schedule (schedule_options go to solve).

    Inputs are read exactly as scipy reads them (dense zeros, inf and NaN are
    missing edges; sparse explicit entries are edges); results are float64,
    predecessors int32 with -9999, and negative cycles raise scipy's
    NegativeCycleError (polyfw's subclass of it). The input is never changed,
    except that overwrite=True writes the result into a dense float64
    C-contiguous input, as scipy does.
    """
    # copy_if_dense: without it scipy's validate_graph writes inf over the zeros of the caller's
    # float64 (or masked float64) array in place
    dense = validate_graph(csgraph, directed, np.float64, csr_output=False, dense_output=True, copy_if_dense=True)
    np.fill_diagonal(dense, np.inf)  # scipy starts every vertex at distance 0 and ignores self-loops
    if unweighted:
        dense = np.where(np.isfinite(dense), 1.0, np.inf)
    # dtype 'auto': the narrowest exact type, float64 with inf returned; method: Floyd-Warshall, as asked
    schedule_options.setdefault("method", "dense")
    result = solve(dense, directed=directed, predecessors=return_predecessors, null_value=np.inf, **schedule_options)
    distances, predecessors = result if return_predecessors else (result, None)
    if distances.dtype != np.float64:  # a kernel dtype asked for by name
        distances = as_float_distances(distances)
    if overwrite and isinstance(csgraph, np.ndarray) and csgraph.dtype == np.float64 \
            and csgraph.flags.c_contiguous and csgraph.flags.writeable and csgraph.shape == distances.shape:
        csgraph[...] = distances
        distances = csgraph
    if return_predecessors:
        return distances, predecessors.astype(np.int32, copy=False)
    return distances


def shortest_path(csgraph, method: str = "auto", directed: bool = True, return_predecessors: bool = False,
                  unweighted: bool = False, overwrite: bool = False, indices=None):
    """scipy's shortest_path: 'FW' is floyd_warshall above (a polyfw schedule), 'D' dijkstra, 'BF'
    bellman_ford and 'J' johnson below; 'auto' takes Floyd-Warshall or Dijkstra from every source
    (Johnson's where a weight is negative) by polyfw's cost model, and with `indices` the searches
    from those sources, as scipy does. overwrite applies to 'FW' only (and to 'auto' where it
    chose it), as in scipy; indices cannot go with 'FW' (ValueError, as in scipy)."""
    if method not in SHORTEST_PATH_METHODS:
        raise ValueError(f"unrecognized method {method!r}: use one of {', '.join(map(repr, SHORTEST_PATH_METHODS))}")
    if method == "FW" and indices is not None:
        raise ValueError("Cannot specify indices with method == 'FW'.")
    if method == "FW":
        return floyd_warshall(csgraph, directed, return_predecessors, unweighted, overwrite)
    graph = _graph(csgraph, directed, unweighted)
    if method == "auto":
        if indices is None and choose_method(graph.n, graph.m, "float64",
                                             one_weight=0 <= graph.lightest == graph.heaviest).method == "dense":
            return floyd_warshall(csgraph, directed, return_predecessors, unweighted, overwrite)
        method = "J" if graph.lightest < 0 else "D"
    sources, shape = _sources(indices, graph.n)
    if method == "D":
        return _dijkstra(graph, sources, shape, return_predecessors)
    if method == "BF":
        return _shaped(*_bellman_ford_rows(graph, sources), shape, return_predecessors)
    return _shaped(*_johnson_rows(graph, sources), shape, return_predecessors)


def dijkstra(csgraph, directed: bool = True, indices=None, return_predecessors: bool = False,
             unweighted: bool = False, limit: float = np.inf, min_only: bool = False):
    """scipy's dijkstra: binary-heap Dijkstra from each source, in parallel over the sources.

    limit: pairs further apart than limit are np.inf with predecessor -9999 (every vertex on a
    shortest path within limit is itself within it, so this is scipy's early stop exactly).
    min_only=True: one search from all of `indices` at once (a virtual vertex joined to each by a
    zero edge): distances and predecessors of shape (N,), and with return_predecessors the source
    each vertex is nearest to (-9999 where none is within limit). Negative weights: scipy warns and
    may give inaccurate results; polyfw warns the same and computes exact distances by
    Bellman-Ford (raising NegativeCycleError on a negative cycle the search reaches).
    """
    graph = _graph(csgraph, directed, unweighted)
    sources, shape = _sources(indices, graph.n)
    limit = float(limit)
    if not limit >= 0:
        raise ValueError("limit must be >= 0")
    return _dijkstra(graph, sources, shape, return_predecessors, limit, min_only)


def bellman_ford(csgraph, directed: bool = True, indices=None, return_predecessors: bool = False,
                 unweighted: bool = False):
    """scipy's bellman_ford: frontier Bellman-Ford from each source (polyfw.sparse.sssp), raising
    NegativeCycleError where a search reaches a negative cycle (an undirected negative edge is
    one). Without negative weights the distances are Dijkstra's (the same numbers, found faster)."""
    graph = _graph(csgraph, directed, unweighted)
    sources, shape = _sources(indices, graph.n)
    return _shaped(*_bellman_ford_rows(graph, sources), shape, return_predecessors)


def johnson(csgraph, directed: bool = True, indices=None, return_predecessors: bool = False,
            unweighted: bool = False):
    """scipy's johnson: Bellman-Ford potentials of the whole graph (NegativeCycleError on any
    negative cycle, reachable from `indices` or not), then Dijkstra from each source on the
    reweighted graph, in parallel over the sources. unweighted: dijkstra, as in scipy."""
    if unweighted:
        return dijkstra(csgraph, directed, indices, return_predecessors, unweighted=True)
    graph = _graph(csgraph, directed, unweighted)
    sources, shape = _sources(indices, graph.n)
    return _shaped(*_johnson_rows(graph, sources), shape, return_predecessors)


# ---------------------------------------------------------------- scipy's inputs


def _graph(csgraph, directed: bool, unweighted: bool) -> CSRGraph:
    """The graph scipy's searches see, as polyfw's CSR: scipy's own validation (dense zeros, inf
    and NaN are no edge; sparse explicit entries are edges), weights 1 if unweighted, and the
    entries no path can use (inf, NaN) left out. The caller's arrays are only read: validate_graph
    may hand back the caller's own CSR, and nothing here writes into it."""
    graph = validate_graph(csgraph, directed, np.float64, csr_output=True, dense_output=False)
    n = graph.shape[0]
    weights = np.ones(graph.data.shape) if unweighted else np.asarray(graph.data, dtype=np.float64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.indptr))
    usable = weights < np.inf  # False for inf and NaN: scipy's relaxations never take them
    return as_csr(Edges(n, rows[usable], np.asarray(graph.indices)[usable].astype(np.int64), weights[usable]),
                  directed=directed)


def _sources(indices, n: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """scipy's reading of `indices`: the sources in order (negative ones count from the end) and
    the shape the results take before their last axis of N."""
    if indices is None:
        return np.arange(n, dtype=np.int64), (n,)
    chosen = np.array(indices, dtype=np.int32)  # scipy's index type: the same casts and errors
    shape = chosen.shape
    chosen = np.atleast_1d(chosen).reshape(-1).astype(np.int64)
    chosen[chosen < 0] += n
    if np.any(chosen < 0) or np.any(chosen >= n):
        raise ValueError("indices out of range 0...N")
    return chosen, shape


def _shaped(distances: np.ndarray, predecessors: np.ndarray, shape: tuple[int, ...], return_predecessors: bool):
    distances = distances.reshape(shape + distances.shape[1:])
    return (distances, predecessors.reshape(distances.shape)) if return_predecessors else distances


# ---------------------------------------------------------------- the searches


def _predecessors(parent: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """polyfw's parents (-1: unreached) as scipy's predecessors (-9999, also at each source)."""
    predecessors = np.where(parent < 0, NO_PREDECESSOR, parent).astype(np.int32)
    predecessors[np.arange(len(sources)), sources] = NO_PREDECESSOR
    return predecessors


def _dijkstra_rows(graph: CSRGraph, sources: np.ndarray, potential: np.ndarray | None = None):
    """Distances and predecessors from each source (non-negative weights, or Johnson's reweighting
    by `potential`), in parallel over the sources."""
    distances, parent = dijkstra_rows(graph, sources, potential)
    return distances, _predecessors(parent, sources)


def _bellman_ford_rows(graph: CSRGraph, sources: np.ndarray):
    if graph.lightest >= 0:
        return _dijkstra_rows(graph, sources)
    distances = np.empty((len(sources), graph.n))
    parent = np.empty((len(sources), graph.n), dtype=np.int64)
    for row, source in enumerate(sources):
        distances[row], parent[row] = sssp(graph, int(source), method="bellman-ford")
    return distances, _predecessors(parent, sources)


def _johnson_rows(graph: CSRGraph, sources: np.ndarray):
    return _dijkstra_rows(graph, sources, potentials(graph) if graph.lightest < 0 else None)


def _nearest_source(graph: CSRGraph, sources: np.ndarray):
    """scipy's min_only: one search from a virtual vertex N joined to every source by a zero edge.
    (distances, predecessors, the source each vertex hangs from), each of shape (N,)."""
    n = graph.n
    starts = np.unique(sources)
    joined = _from_arrays(n + 1, np.concatenate([graph.sources, np.full(len(starts), n, dtype=np.int64)]),
                          np.concatenate([graph.indices.astype(np.int64), starts]),
                          np.concatenate([graph.weights, np.zeros(len(starts))]))
    found, parent = sssp(joined, n, method="bellman-ford" if graph.lightest < 0 else "dijkstra")
    distances, parent = found[:n].copy(), parent[:n]
    reached = np.isfinite(distances)
    inner = reached & (parent != n)
    vertex = np.arange(n)
    up = np.where(inner, parent, vertex)
    for _ in range(max(n, 2).bit_length()):  # pointer jumping up the tree to a source
        up = up[up]
    origin = np.where(reached, up, NO_PREDECESSOR).astype(np.int32)
    predecessors = np.where(inner, parent, NO_PREDECESSOR).astype(np.int32)
    predecessors[starts] = NO_PREDECESSOR
    origin[starts] = starts
    return distances, predecessors, origin


def _dijkstra(graph: CSRGraph, sources: np.ndarray, shape: tuple[int, ...], return_predecessors: bool,
              limit: float = np.inf, min_only: bool = False):
    if graph.lightest < 0:
        warnings.warn("Graph has negative weights: dijkstra will give inaccurate results if the graph contains "
                      "negative cycles. Consider johnson or bellman_ford. (polyfw: exact distances by "
                      "Bellman-Ford instead)", UserWarning, stacklevel=3)
    if min_only:
        found = _nearest_source(graph, sources)
    else:
        found = _bellman_ford_rows(graph, sources)  # Dijkstra's unless a weight is negative
    distances = found[0]
    if limit < np.inf:
        far = distances > limit
        distances[far] = np.inf
        for predecessors in found[1:]:
            predecessors[far] = NO_PREDECESSOR
    if min_only:
        return found if return_predecessors else distances
    return _shaped(*found, shape, return_predecessors)


__all__ = ["NO_PREDECESSOR", "bellman_ford", "dijkstra", "floyd_warshall", "johnson", "shortest_path"]
