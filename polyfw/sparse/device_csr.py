"""A CSR graph over a caller's arrays already on the GPU: polyfw.sparse.to_device of a tuple (indptr,
indices, weights) of device arrays takes them as they are, and what the searches' host drivers ask of a
graph (its weights' range and mean, every edge's source) is computed there, so the arrays never pass
through the host."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import cuda

from ..graphs.device_arrays import device_view
from .csr import CSRGraph

#: threads a block of _edge_sources
THREADS = 256


@cuda.jit
def _edge_sources(indptr, sources):
    """sources[e] = the vertex whose out-edge e is (a thread a vertex)."""
    v = cuda.grid(1)
    if v < indptr.shape[0] - 1:
        for e in range(indptr[v], indptr[v + 1]):
            sources[e] = v


@cuda.jit
def _in_degrees(indices, counts):
    """counts[t + 1] = how many edges end at t (a thread an edge)."""
    e = cuda.grid(1)
    if e < indices.shape[0]:
        cuda.atomic.add(counts, indices[e] + 1, 1)


@cuda.jit
def _turned(indptr, indices, weights, rindptr, filled, rindices, rweights):
    """Each edge v -> t written into row t of the reversed graph at its next free place (a thread a vertex v).
    A row's order is the order its writers came in: bottom-up steps take any in-neighbour in the frontier."""
    v = cuda.grid(1)
    if v < indptr.shape[0] - 1:
        for e in range(indptr[v], indptr[v + 1]):
            t = indices[e]
            at = rindptr[t] + cuda.atomic.add(filled, t, 1)
            rindices[at], rweights[at] = v, weights[e]


@cuda.reduce
def _sum(a, b):
    return a + b


@cuda.reduce
def _least(a, b):
    return min(a, b)


@cuda.reduce
def _most(a, b):
    return max(a, b)


@dataclass(frozen=True, eq=False)
class DeviceCSR(CSRGraph):
    """A CSR graph whose arrays were on the GPU already (polyfw.sparse.to_device of a tuple of device
    arrays): what a search's host driver asks of it (its weights' range and mean, every edge's source) is
    computed there, one number back each. The reversed graph bottom-up BFS steps read is turned around there
    too (only its n in-degrees come back, for their prefix sums); a negative cycle is named from a copy on
    the host, the one time the arrays are read back."""

    @cached_property
    def lightest(self) -> float:
        return float(_least(self.weights, init=math.inf)) if self.m else math.inf

    @cached_property
    def heaviest(self) -> float:
        return float(_most(self.weights, init=-math.inf)) if self.m else 0.0

    @cached_property
    def mean_weight(self) -> float:
        return float(_sum(self.weights, init=0.0)) / self.m if self.m else 1.0

    @cached_property
    def sources(self):
        found = cuda.device_array(max(self.m, 1), dtype=np.int64)
        _edge_sources[max(1, -(-self.n // THREADS)), THREADS](self.indptr, found)
        return found[:self.m]

    @cached_property
    def reverse(self) -> DeviceCSR:
        """Every edge turned around, on the device (rows in no particular order, repeated edges kept)."""
        blocks = max(1, -(-max(self.m, self.n) // THREADS))
        counts = cuda.to_device(np.zeros(self.n + 1, dtype=np.int64))
        _in_degrees[blocks, THREADS](self.indices, counts)
        rindptr = cuda.to_device(np.cumsum(counts.copy_to_host()))
        rindices = cuda.device_array(max(self.m, 1), dtype=np.int32 if self.n < 2**31 else np.int64)
        rweights = cuda.device_array(max(self.m, 1), dtype=np.float64)
        filled = cuda.to_device(np.zeros(max(self.n, 1), dtype=np.int64))
        _turned[blocks, THREADS](self.indptr, self.indices, self.weights, rindptr, filled, rindices, rweights)
        return DeviceCSR(self.n, rindptr, rindices[:self.m], rweights[:self.m])

    def on_host(self) -> CSRGraph:
        return CSRGraph(self.n, self.indptr.copy_to_host(), self.indices.copy_to_host(), self.weights.copy_to_host())


def device_csr(indptr, indices, weights) -> DeviceCSR:
    """A CSR graph over a caller's device arrays (views, no copy): row offsets and targets of integer
    dtypes, float64 weights, as many targets as weights."""
    indptr, indices, weights = (device_view(array, name) for array, name in
                                ((indptr, "indptr"), (indices, "indices"), (weights, "weights")))
    if not (indptr.ndim == indices.ndim == weights.ndim == 1 and indptr.dtype.kind in "iu"
            and indices.dtype.kind in "iu" and weights.dtype == np.float64 and len(indices) == len(weights)
            and len(indptr) >= 1):
        raise ValueError(f"CSR arrays on the GPU are 1-D (indptr: n + 1 integers, indices: m integers, weights: m "
                         f"float64), got indptr {indptr.dtype}{indptr.shape}, indices {indices.dtype}{indices.shape}, "
                         f"weights {weights.dtype}{weights.shape}")
    return DeviceCSR(len(indptr) - 1, indptr, indices, weights)
