"""What the CPU's and the GPU's searches share: Beamer's direction switches, the check of a source
vertex, levels in the smallest dtype, and the CPU's Bellman-Ford that names a vertex on a negative
cycle (the GPU's searches only see that one exists) and gives Johnson's potentials."""
from __future__ import annotations

import numpy as np

from .. import errors
from ..graphs import GraphInputError
from .csr import CSRGraph
from .kernels import NO_PARENT, bellman_ford

#: Beamer's switches: bottom-up once the frontier's out-edges exceed the unvisited vertices' edges / ALPHA,
#: top-down again once the frontier is below n / BETA vertices
ALPHA, BETA = 14, 24


def check_source(source, n: int) -> int:
    if not isinstance(source, (int, np.integer)) or isinstance(source, bool) or not 0 <= source < n:
        raise GraphInputError(f"source must be a vertex 0..{n - 1}, got {source!r}")
    return int(source)


#: the level dtypes, narrowest first, with their largest value (unreached); np.iinfo costs microseconds a call
_LEVEL_DTYPES = tuple((np.dtype(t), np.iinfo(t).max) for t in (np.uint8, np.uint16, np.uint32))


def levels_dtype(deepest: int) -> np.dtype:
    """The smallest unsigned dtype whose largest value, which stands for unreached, is above `deepest`
    (seed 002 keeps levels in one byte)."""
    return next(dtype for dtype, largest in _LEVEL_DTYPES if deepest < largest)


def smallest_levels(level: np.ndarray, deepest: int) -> np.ndarray:
    """Levels (int32, -1 unreached) in levels_dtype(deepest), unreached as its largest value: one cast,
    since -1 wraps to that value."""
    return level.astype(levels_dtype(deepest))


def _negative_cycle_vertex(parent: np.ndarray, still_improving: int) -> int:
    """A vertex on the cycle: n steps back along the parents from one still improving."""
    v = still_improving
    for _ in range(parent.shape[0]):
        v = int(parent[v])
    return v


def bellman_ford_from(csr: CSRGraph, dist: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Bellman-Ford from the `active` vertices at their `dist` (updated in place): the parents, or
    NegativeCycleError naming a vertex on a negative cycle they reach."""
    parent = np.full(csr.n, NO_PARENT, dtype=np.int64)
    stuck = bellman_ford(csr.indptr, csr.indices, csr.weights, dist, parent, active)
    if stuck >= 0:
        raise errors.NegativeCycleError(_negative_cycle_vertex(parent, stuck))
    return parent


def potentials(csr: CSRGraph) -> np.ndarray:
    """Johnson's vertex potentials: distances from a virtual source joined to every vertex by a
    zero edge (Bellman–Ford); w + h[u] - h[v] is then non-negative on every edge."""
    h = np.zeros(csr.n)
    bellman_ford_from(csr, h, np.ones(csr.n, dtype=np.bool_))
    return h
