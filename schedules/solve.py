"""All-pairs shortest paths on any supported input: graph semantics around a kernel."""
from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import NegativeCycleError as _ScipyNegativeCycleError

from codegen.reference import floyd_warshall_naive
from tiling.graphs import INT32_INF, as_dense, missing_edges

SCHEDULES = ("naive",)


class NegativeCycleError(_ScipyNegativeCycleError):
    """The graph has a cycle of negative weight, so shortest paths are undefined.

    A subclass of scipy's error, so code that catches scipy's catches it too.
    """

    def __init__(self, vertex: int):
        self.vertex = vertex
        super().__init__(f"negative cycle through vertex {vertex}: shortest paths are undefined")


def _restore_unreachable(distances: np.ndarray, lightest_edge: float) -> None:
    """With negative edges, INF_int32 + w < INF_int32 can leak into results; put INF back.

    as_dense bounds (n-1)*(max-min) below INF, so every real path is below
    INF + (n-1)*min and everything at or above it went through a missing edge.
    """
    n = distances.shape[0]
    threshold = int(INT32_INF) + (n - 1) * lightest_edge
    distances[distances >= threshold] = INT32_INF


def solve(graph, *, schedule: str = "naive", dtype=None, directed: bool = True) -> np.ndarray:
    """Shortest-path distances between all pairs of vertices of `graph`.

    Accepts every input of tiling.graphs.as_dense. Unreachable pairs are
    np.inf in float dtypes and tiling.graphs.INT32_INF in int32. Raises
    NegativeCycleError when a negative cycle exists.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; available: {', '.join(SCHEDULES)}")
    distances = as_dense(graph, dtype=dtype, directed=directed)
    finite = distances[~missing_edges(distances)]
    lightest_edge = float(finite.min()) if finite.size else 0.0
    negative_cycle_at = floyd_warshall_naive(distances)
    if negative_cycle_at >= 0:
        raise NegativeCycleError(int(negative_cycle_at))
    if distances.dtype == np.int32 and lightest_edge < 0:
        _restore_unreachable(distances, lightest_edge)
    return distances
