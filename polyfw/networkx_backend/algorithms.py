"""The networkx functions polyfw runs: networkx's arguments and result types, polyfw's kernels.

Each function takes the graph networkx converted (graph.PolyfwGraph) and returns what networkx
returns: dicts keyed by node in node order, numpy arrays in node order, generators where networkx
yields. networkx's errors are kept: NodeNotFound for an unknown node, NetworkXUnbounded for a
negative cycle (networkx's Floyd-Warshall returns negative distances instead; its Dijkstra raises
ValueError, and so does ours, ContradictoryPaths being both). Negative weights get exact
distances everywhere, Dijkstra's functions included.
"""
from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager
from typing import Iterator

import networkx as nx
import numpy as np

from ..errors import NegativeCycleError
from ..solver import available_memory, memory_needed, solve
from ..sparse.kernels import breadth_first_from_sources, discovery_order, path_sums
from ..sparse.paths import dijkstra_rows, potentials, sssp, worker_count
from .graph import ArcWeights, PolyfwGraph, python_numbers

#: all-pairs searches run this many (source, node) entries at a time: 32 MiB of distances
BLOCK_ENTRIES = 2**22


def _infinity() -> float:
    return float("inf")


class ContradictoryPaths(nx.NetworkXUnbounded, ValueError):
    """A negative cycle met by a Dijkstra function: networkx's Dijkstra raises ValueError there
    (when it notices), every other networkx function NetworkXUnbounded; this is both."""


@contextmanager
def _unbounded(error: type[nx.NetworkXUnbounded] = nx.NetworkXUnbounded):
    """polyfw's NegativeCycleError as networkx's error."""
    try:
        yield
    except NegativeCycleError as cycle:
        raise error("Negative cycle detected." if error is nx.NetworkXUnbounded else
                    "Contradictory paths found: negative weights? (a negative cycle is reachable)") from cycle


def _position(G: PolyfwGraph, node, missing: str) -> int:
    if node not in G:
        raise nx.NodeNotFound(missing)
    return G.index[node]


def _by_distance(G: PolyfwGraph, row: np.ndarray, integral: bool, cutoff=None) -> dict:
    """{node: distance} of the nodes reached (within cutoff), nearest first, in networkx's number types."""
    reached = np.flatnonzero(row < np.inf if cutoff is None else row <= cutoff)
    reached = reached[np.argsort(row[reached], kind="stable")]
    return dict(zip(G.labels[reached].tolist(), python_numbers(row[reached], integral)))


def _row_dict(G: PolyfwGraph, row: np.ndarray, integral: bool, cutoff=None) -> dict:
    """{node: distance} of the nodes reached (within cutoff) in node order: an all-pairs function
    builds n of these, and ordering each by distance cost a sixth of the call on a road network."""
    reached = row < np.inf if cutoff is None else row <= cutoff
    if reached.all():
        return dict(zip(G.nodes, python_numbers(row, integral)))
    at = np.flatnonzero(reached)
    return dict(zip(G.labels[at].tolist(), python_numbers(row[at], integral)))


# ---------------------------------------------------------------- Floyd-Warshall


def _all_pairs(G: PolyfwGraph, weight, predecessors: bool = False):
    """(weights, solve's result): float64 distances with inf, and scipy-style predecessors if asked."""
    weights = G.arc_weights(weight)
    with _unbounded():
        return weights, solve(G.edges(weights), predecessors=predecessors)


def _distance_dicts(G: PolyfwGraph, distances: np.ndarray, integral: bool) -> dict:
    """networkx's dict of defaultdicts: every pair, inf where unreachable (and for absent keys)."""
    return {u: defaultdict(_infinity, zip(G.nodes, python_numbers(row, integral)))
            for u, row in zip(G.nodes, distances)}


def floyd_warshall_numpy(G: PolyfwGraph, nodelist=None, weight="weight") -> np.ndarray:
    order = None
    if nodelist is not None:
        if not len(nodelist) == len(G) == len(set(nodelist)):
            raise nx.NetworkXError("nodelist must contain every node in G with no repeats."
                                   "If you wanted a subgraph of G use G.subgraph(nodelist)")
        unknown = [node for node in nodelist if node not in G]
        if unknown:
            raise nx.NetworkXError(f"Nodes {unknown} in nodelist is not in G")
        order = np.array([G.index[node] for node in nodelist], dtype=np.int64)
    distances = np.asarray(_all_pairs(G, weight)[1])
    return distances if order is None else distances[np.ix_(order, order)]


def floyd_warshall(G: PolyfwGraph, weight="weight") -> dict:
    weights, distances = _all_pairs(G, weight)
    return _distance_dicts(G, distances, weights.integral)


def floyd_warshall_predecessor_and_distance(G: PolyfwGraph, weight="weight") -> tuple[dict, dict]:
    weights, (distances, predecessors) = _all_pairs(G, weight, predecessors=True)
    looped = set(G.sources[(G.sources == G.indices) & np.isfinite(weights.values)].tolist())
    nodes, found = G.nodes, {}
    for u, row in enumerate(predecessors):
        reached = np.flatnonzero(row >= 0)
        entries = dict(zip(map(nodes.__getitem__, reached.tolist()), map(nodes.__getitem__, row[reached].tolist())))
        if u in looped:  # networkx names u its own predecessor over a self-loop
            entries[nodes[u]] = nodes[u]
        if entries:
            found[nodes[u]] = entries
    return found, _distance_dicts(G, distances, weights.integral)


# ---------------------------------------------------------------- searches from every node


def _search_blocks(G: PolyfwGraph, weights: ArcWeights, potential: np.ndarray | None = None):
    """(sources, distances, parents) for every node as source, a block of rows at a time: Dijkstra
    in parallel over the sources (Johnson's reweighting by `potential`). With a potential and
    fractional weights the distances are summed again along the paths, in path order, as networkx
    sums them (the reweighting rounds otherwise)."""
    csr = G.csr(weights)
    rows = max(1, BLOCK_ENTRIES // max(G.n, 1))
    for start in range(0, G.n, rows):
        sources = np.arange(start, min(start + rows, G.n), dtype=np.int64)
        distances, parents = dijkstra_rows(csr, sources, potential)
        if potential is not None and not weights.integral:
            for source, row, parent in zip(sources, distances, parents):
                path_sums(csr.indptr, csr.indices, csr.weights, parent, source, row)
        yield sources, distances, parents


def _potentials(G: PolyfwGraph, weights: ArcWeights) -> np.ndarray | None:
    if weights.lightest >= 0:
        return None
    return potentials(G.csr(weights))


def _length_rows(G: PolyfwGraph, weights: ArcWeights, error: type[nx.NetworkXUnbounded]) -> Iterator:
    """(position, distances) of every node as source: polyfw.solve's all-pairs matrix (a proved
    schedule or Johnson's, the faster) where the weights are integers, whose sums are exact in any
    order, and the matrix fits in half the memory available; else blocks of parallel Dijkstra
    searches (after Johnson's reweighting where a weight is negative), which add along each path
    as networkx does."""
    available = available_memory()
    if weights.integral and (available is None or memory_needed(G.n, "float64") <= available / 2):
        with _unbounded(error):
            distances = solve(G.edges(weights))
        yield from enumerate(distances)
        return
    with _unbounded(error):
        potential = _potentials(G, weights)
    for sources, distances, _ in _search_blocks(G, weights, potential):
        yield from zip(sources.tolist(), distances)


def all_pairs_dijkstra_path_length(G: PolyfwGraph, cutoff=None, weight="weight") -> Iterator:
    """Negative weights: exact distances (networkx's Dijkstra may miss shorter paths)."""
    weights = G.arc_weights(weight)
    return ((G.nodes[source], _row_dict(G, row, weights.integral, cutoff))
            for source, row in _length_rows(G, weights, ContradictoryPaths))


def all_pairs_bellman_ford_path_length(G: PolyfwGraph, weight="weight") -> Iterator:
    weights = G.arc_weights(weight)
    return ((G.nodes[source], _row_dict(G, row, weights.integral))
            for source, row in _length_rows(G, weights, nx.NetworkXUnbounded))


def _paths(nodes: list, source: int, row: np.ndarray, parent: list) -> dict:
    """{node: [source, ..., node]} along the search tree, nearest first."""
    reached = np.flatnonzero(row < np.inf)
    reached = reached[np.argsort(row[reached], kind="stable")].tolist()
    built = {source: [nodes[source]]}
    for v in reached:
        chain = []
        while v not in built:
            chain.append(v)
            v = parent[v]
        path = built[v]
        for w in reversed(chain):
            path = path + [nodes[w]]
            built[w] = path
    return {nodes[v]: built[v] for v in reached}


def johnson(G: PolyfwGraph, weight="weight") -> dict:
    weights = G.arc_weights(weight)
    paths = {}
    with _unbounded():
        potential = _potentials(G, weights)
    for sources, distances, parents in _search_blocks(G, weights, potential):
        for source, row, parent in zip(sources.tolist(), distances, parents):
            paths[G.nodes[source]] = _paths(G.nodes, source, row, parent.tolist())
    return paths


def all_pairs_shortest_path_length(G: PolyfwGraph, cutoff=None) -> Iterator:
    rows = max(1, BLOCK_ENTRIES // max(G.n, 1))

    def lengths():
        for start in range(0, G.n, rows):
            sources = np.arange(start, min(start + rows, G.n), dtype=np.int64)
            levels = np.empty((len(sources), G.n), dtype=np.int64)
            breadth_first_from_sources(G.indptr, G.indices, sources, 1, -1, levels, np.empty((0, 0), dtype=np.int64),
                                       worker_count(len(sources)))
            for source, row in zip(sources.tolist(), levels):
                yield G.nodes[source], _row_dict(G, np.where(row < 0, np.inf, row), True, cutoff)

    return lengths()


# ---------------------------------------------------------------- searches from one node


def single_source_dijkstra_path_length(G: PolyfwGraph, source, cutoff=None, weight="weight") -> dict:
    """Negative weights: exact distances by Bellman-Ford (networkx's Dijkstra may miss)."""
    weights = G.arc_weights(weight)
    start = _position(G, source, f"Node {source} not found in graph")
    csr = G.csr(weights)
    with _unbounded(ContradictoryPaths):  # 'auto': Bellman-Ford, Dijkstra or delta-stepping (paths.sssp)
        distances, _ = sssp(csr, start)
    return _by_distance(G, distances, weights.integral, cutoff)


def _discovered(G: PolyfwGraph, starts: list[int], depth_limit=None):
    """(order, parents, levels) of networkx's breadth-first search from `starts`."""
    limit = np.inf if depth_limit is None else float(depth_limit)
    return discovery_order(G.indptr, G.indices, np.array(starts, dtype=np.int64), limit)


def single_source_shortest_path_length(G: PolyfwGraph, source, cutoff=None) -> dict:
    start = _position(G, source, f"Source {source} is not in G")
    order, _, levels = _discovered(G, [start], cutoff)
    return dict(zip(map(G.nodes.__getitem__, order.tolist()), levels[order].tolist()))


def bfs_layers(G: PolyfwGraph, sources) -> Iterator[list]:
    if sources in G:
        sources = [sources]
    first = list(set(sources))  # networkx's first layer, in networkx's order
    for source in first:
        if source not in G:
            raise nx.NetworkXError(f"The node {source} is not in the graph.")
    order, _, levels = _discovered(G, [G.index[source] for source in first])
    if not order.size:
        return
    cuts = np.flatnonzero(np.diff(levels[order])) + 1
    for layer in np.split(order, cuts):
        yield list(map(G.nodes.__getitem__, layer.tolist()))


def bfs_edges(G: PolyfwGraph, source, reverse=False, depth_limit=None, sort_neighbors=None) -> Iterator[tuple]:
    if source not in G:
        raise nx.NetworkXError(f"The node {source} is not in the graph.")
    indptr, indices = G.rows(reverse, sort_neighbors)
    order, parents, _ = discovery_order(indptr, indices, np.array([G.index[source]], dtype=np.int64),
                                        float(len(G) if depth_limit is None else depth_limit))
    nodes = G.nodes
    for v in order[1:].tolist():
        yield nodes[parents[v]], nodes[v]


def has_path(G: PolyfwGraph, source, target) -> bool:
    start = _position(G, source, f"Source {source} is not in G")
    end = _position(G, target, f"Target {target} is not in G")
    return bool(_discovered(G, [start])[2][end] >= 0)


# ---------------------------------------------------------------- reachability


def transitive_closure(G: PolyfwGraph, reflexive=False) -> nx.Graph:
    if reflexive not in {None, True, False}:
        raise nx.NetworkXError("Incorrect value for the parameter `reflexive`")
    closure = G.original.copy()
    n = G.n
    if n == 0:
        return closure
    tails, heads = G.sources, G.indices.astype(np.int64)
    reach = solve(G.edges(ArcWeights(np.ones(len(heads)), True)), semiring="or-and")  # the diagonal True
    adjacent = np.zeros((n, n), dtype=bool)
    adjacent[tails, heads] = True
    new = reach & ~adjacent
    if reflexive is True:
        loops = np.ones(n, dtype=bool)
    elif reflexive is False and G.directed:  # networkx adds u -> u where u lies on a cycle
        loops = np.zeros(n, dtype=bool)
        loops[tails[reach[heads, tails]]] = True
    else:
        loops = np.zeros(n, dtype=bool)
    np.fill_diagonal(new, loops & ~np.diagonal(adjacent))
    if not G.directed:
        new = np.triu(new)  # an undirected edge once
    tails, heads = np.nonzero(new)
    closure.add_edges_from(zip(map(G.nodes.__getitem__, tails.tolist()), map(G.nodes.__getitem__, heads.tolist())))
    return closure
