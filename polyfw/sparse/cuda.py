"""Numba CUDA kernels for BFS and Bellman–Ford on the extended CSR (seed 002).

Seed 002 gives every edge a thread ("edge-parallel", its source taken from
the extended CSR's source array) or every vertex a thread that walks its
out-edges ("vertex-parallel"); the host repeats a launch until a flag says
nothing changed. Distances are relaxed with atomic min, so concurrent
improvements of one vertex keep the smallest. SSSP parents are found after
the distances settle, as a BFS tree of the tight edges (dist[u] + w ==
dist[v]) from the source: no parent belongs to a distance that was later
beaten, and zero-weight cycles cannot close a loop of parents.
Tested exactly in Numba's CUDA simulator; on a GPU the same code runs.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from ..graphs import GraphInputError

from .csr import as_csr
from .paths import _tight_tree, sssp

VARIANTS = ("edge", "vertex")
THREADS = 128
UNREACHED = -1


@cuda.jit
def _bfs_edges(sources, targets, level, parent, depth, changed):
    e = cuda.grid(1)
    if e < targets.shape[0]:
        u, v = sources[e], targets[e]
        if level[u] == depth and level[v] == UNREACHED:
            level[v] = depth + 1  # every writer writes the same value
            parent[v] = u         # any frontier vertex is a valid parent
            changed[0] = 1


@cuda.jit
def _bfs_vertices(indptr, targets, level, parent, depth, changed):
    u = cuda.grid(1)
    if u < level.shape[0] and level[u] == depth:
        for e in range(indptr[u], indptr[u + 1]):
            v = targets[e]
            if level[v] == UNREACHED:
                level[v] = depth + 1
                parent[v] = u
                changed[0] = 1


@cuda.jit(device=True)
def _lower(dist, v, through, changed):
    if through < dist[v]:
        cuda.atomic.min(dist, v, through)
        changed[0] = 1


@cuda.jit
def _relax_edges(sources, targets, weights, dist, changed):
    e = cuda.grid(1)
    if e < targets.shape[0]:
        _lower(dist, targets[e], dist[sources[e]] + weights[e], changed)


@cuda.jit
def _relax_vertices(indptr, targets, weights, dist, changed):
    u = cuda.grid(1)
    if u < dist.shape[0]:
        du = dist[u]
        for e in range(indptr[u], indptr[u + 1]):
            _lower(dist, targets[e], du + weights[e], changed)


def _grid(count: int) -> int:
    return max(1, (count + THREADS - 1) // THREADS)


def _device_graph(graph, directed: bool, source: int):
    csr = as_csr(graph, directed=directed)
    if not isinstance(source, (int, np.integer)) or not 0 <= source < csr.n:
        raise GraphInputError(f"source must be a vertex 0..{csr.n - 1}, got {source!r}")
    return csr, cuda.to_device(csr.indptr), cuda.to_device(csr.sources), cuda.to_device(csr.indices.astype(np.int64))


def bfs_cuda(graph, source: int, variant: str = "vertex", directed: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(levels as int32, -1 unreached; parents, -1 unreached, the source its own) by level-synchronous
    launches, one thread per edge or per vertex."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    csr, indptr, sources, targets = _device_graph(graph, directed, source)
    level = np.full(csr.n, UNREACHED, dtype=np.int32)
    parent = np.full(csr.n, -1, dtype=np.int64)
    level[source], parent[source] = 0, source
    level, parent = cuda.to_device(level), cuda.to_device(parent)
    changed = cuda.to_device(np.zeros(1, dtype=np.int32))
    for depth in range(csr.n):
        changed.copy_to_device(np.zeros(1, dtype=np.int32))
        if variant == "edge":
            _bfs_edges[_grid(csr.m), THREADS](sources, targets, level, parent, depth, changed)
        else:
            _bfs_vertices[_grid(csr.n), THREADS](indptr, targets, level, parent, depth, changed)
        if not changed.copy_to_host()[0]:
            break
    return level.copy_to_host(), parent.copy_to_host()


def sssp_cuda(graph, source: int, variant: str = "edge", directed: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(distances, parents) by Bellman–Ford launches until nothing improves (at most n rounds; a
    negative cycle reachable from the source raises NegativeCycleError)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    csr, indptr, sources, targets = _device_graph(graph, directed, source)
    dist = np.full(csr.n, np.inf)
    dist[source] = 0.0
    dist = cuda.to_device(dist)
    weights = cuda.to_device(csr.weights)
    changed = cuda.to_device(np.zeros(1, dtype=np.int32))
    for _ in range(csr.n):
        changed.copy_to_device(np.zeros(1, dtype=np.int32))
        if variant == "edge":
            _relax_edges[_grid(csr.m), THREADS](sources, targets, weights, dist, changed)
        else:
            _relax_vertices[_grid(csr.n), THREADS](indptr, targets, weights, dist, changed)
        if not changed.copy_to_host()[0]:
            break
    else:
        sssp(csr, source, method="bellman-ford")  # raises NegativeCycleError naming a vertex on the cycle
    found = dist.copy_to_host()
    return found, _tight_tree(csr, source, found)
