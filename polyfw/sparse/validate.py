"""Graph500's five validation rules for a BFS tree and (with distances for levels) an SSSP tree.

(1) the parent links form a tree: no cycle, every reached vertex leads to
the source; (2) a tree edge joins levels that differ by exactly one
(SSSP: distances that differ by exactly the edge's weight); (3) every edge
out of a reached vertex leads to a reached one at most one level deeper
(SSSP: no edge would shorten a distance); (4) the tree reaches exactly
the vertices reachable from the source; (5) every vertex and its parent are
joined by an edge of the input.
"""
from __future__ import annotations

import numpy as np

from .csr import CSRGraph


class ValidationError(AssertionError):
    """A search result breaks one of Graph500's rules; the message names the rule and a vertex."""


def _edge_positions(csr: CSRGraph, source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Index of edge source -> target in the CSR arrays, or -1."""
    keys = csr.sources * csr.n + csr.indices  # sorted: rows in order, targets sorted within
    wanted = source.astype(np.int64) * csr.n + target
    at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    found = (len(keys) > 0) & (keys[at] == wanted) if len(keys) else np.zeros(len(wanted), dtype=bool)
    return np.where(found, at, -1)


def _check_tree(csr: CSRGraph, parent: np.ndarray, root: int, reached: np.ndarray) -> np.ndarray:
    """Rules 1 and 5; returns the edge index of each reached non-root vertex's tree edge."""
    if parent[root] != root:
        raise ValidationError(f"rule 1: the source {root} is not its own parent")
    if np.any(parent[reached] < 0) or np.any(parent[~reached] >= 0):
        bad = int(np.flatnonzero((parent < 0) == reached)[0])
        raise ValidationError(f"rule 4: vertex {bad} has a parent but is unreached, or the reverse")
    ancestor = np.where(reached, parent, root)
    for _ in range(int(np.ceil(np.log2(max(csr.n, 2)))) + 1):  # pointer jumping
        ancestor = ancestor[ancestor]
    if np.any(ancestor[reached] != root):
        raise ValidationError(f"rule 1: vertex {int(np.flatnonzero(reached & (ancestor != root))[0])} does not "
                              f"lead to the source (a cycle in the parents)")
    children = np.flatnonzero(reached & (np.arange(csr.n) != root))
    edges = _edge_positions(csr, parent[children], children)
    if np.any(edges < 0):
        v = int(children[edges < 0][0])
        raise ValidationError(f"rule 5: vertex {v} and its parent {int(parent[v])} are not joined by an edge")
    return edges


def _check_closed(csr: CSRGraph, reached: np.ndarray) -> None:
    """Rule 4 (with rule 1): an edge out of a reached vertex never leads to an unreached one."""
    leaving = reached[csr.sources] & ~reached[csr.indices]
    if leaving.any():
        e = int(np.flatnonzero(leaving)[0])
        raise ValidationError(f"rule 4: edge {int(csr.sources[e])} -> {int(csr.indices[e])} leaves the tree")


def validate_bfs(csr: CSRGraph, root: int, levels: np.ndarray, parent: np.ndarray) -> None:
    unreached = np.iinfo(levels.dtype).max
    reached = levels != unreached
    level = levels.astype(np.int64)
    edges = _check_tree(csr, parent, root, reached)
    children = np.flatnonzero(reached & (np.arange(csr.n) != root))
    if level[root] != 0 or np.any(level[children] != level[parent[children]] + 1):
        raise ValidationError("rule 2: a tree edge joins levels that do not differ by one")
    del edges
    _check_closed(csr, reached)
    both = reached[csr.sources]
    if np.any(level[csr.indices[both]] > level[csr.sources[both]] + 1):
        raise ValidationError("rule 3: an edge joins levels more than one apart")


def validate_sssp(csr: CSRGraph, root: int, dist: np.ndarray, parent: np.ndarray) -> None:
    reached = np.isfinite(dist)
    edges = _check_tree(csr, parent, root, reached)
    children = np.flatnonzero(reached & (np.arange(csr.n) != root))
    if dist[root] != 0 or np.any(dist[children] != dist[parent[children]] + csr.weights[edges]):
        raise ValidationError("rule 2: a tree edge's distances do not differ by its weight")
    _check_closed(csr, reached)
    both = reached[csr.sources]
    if np.any(dist[csr.indices[both]] > dist[csr.sources[both]] + csr.weights[both]):
        raise ValidationError("rule 3: an edge would shorten a distance")
