"""Numba CUDA kernels for BFS and Bellman–Ford on the extended CSR (seed 002).

Seed 002 gives every edge a thread ("edge-parallel", its source taken from
the extended CSR's source array) or every vertex a thread that walks its
out-edges ("vertex-parallel"); the host repeats a launch until a flag says
nothing changed. Distances are relaxed with atomic min, so concurrent
improvements of one vertex keep the smallest. SSSP parents are found after
the distances settle, as a BFS tree of the tight edges (dist[u] + w ==
dist[v]) from the source: no parent belongs to a distance that was later
beaten, and zero-weight cycles cannot close a loop of parents.
Tested exactly in Numba's CUDA simulator; on a GPU the same code runs, and machine_code reads
what it compiles to without one.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import config, cuda, types

from codegen.machine_code import KernelReport, kernel_report, outermost_loop

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


class _Device:
    """The device's arrays and the launches over them. With concurrent_blocks (Numba's simulator only)
    a launch's blocks run as a GPU runs them, at once (codegen.gpu_semantics): each array written
    says how its blocks' writes meet."""

    def __init__(self, concurrent_blocks: bool) -> None:
        if concurrent_blocks and not config.ENABLE_CUDASIM:
            raise ValueError("concurrent_blocks simulates a GPU: it needs Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1)")
        self.concurrent_blocks = concurrent_blocks
        self.written: list = []

    def array(self, host: np.ndarray, merge: str | None = None):
        """host on the device; merge: how a launch's writes meet (None: never written)."""
        if merge is None or not self.concurrent_blocks:
            return cuda.to_device(host)
        from codegen.gpu_semantics import ConcurrentBlocksMatrix

        self.written.append(ConcurrentBlocksMatrix(host, merge))
        return self.written[-1]

    def launch(self, kernel, work_items: int, *arguments) -> None:
        for array in self.written:
            array.begin_launch(kernel.__name__)
        kernel[max(1, (work_items + THREADS - 1) // THREADS), THREADS](*arguments)
        for array in self.written:
            array.end_launch()


def _device_graph(graph, directed: bool, source: int, device: _Device):
    csr = as_csr(graph, directed=directed)
    if not isinstance(source, (int, np.integer)) or not 0 <= source < csr.n:
        raise GraphInputError(f"source must be a vertex 0..{csr.n - 1}, got {source!r}")
    return (csr, device.array(csr.indptr), device.array(csr.sources),
            device.array(csr.indices.astype(np.int64)))


def bfs_cuda(graph, source: int, variant: str = "vertex", directed: bool = True, concurrent_blocks: bool = False
             ) -> tuple[np.ndarray, np.ndarray]:
    """(levels as int32, -1 unreached; parents, -1 unreached, the source its own) by level-synchronous
    launches, one thread per edge or per vertex. concurrent_blocks: see _Device."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    device = _Device(concurrent_blocks)
    csr, indptr, sources, targets = _device_graph(graph, directed, source, device)
    level = np.full(csr.n, UNREACHED, dtype=np.int32)
    parent = np.full(csr.n, -1, dtype=np.int64)
    level[source], parent[source] = 0, source
    # blocks write one level (depth + 1) to a vertex, but may each write a different parent: any is one
    level, parent = device.array(level, "exclusive"), device.array(parent, "any")
    changed = device.array(np.zeros(1, dtype=np.int32), "exclusive")
    for depth in range(csr.n):
        changed.copy_to_device(np.zeros(1, dtype=np.int32))
        if variant == "edge":
            device.launch(_bfs_edges, csr.m, sources, targets, level, parent, depth, changed)
        else:
            device.launch(_bfs_vertices, csr.n, indptr, targets, level, parent, depth, changed)
        if not changed.copy_to_host()[0]:
            break
    return level.copy_to_host(), parent.copy_to_host()


def sssp_cuda(graph, source: int, variant: str = "edge", directed: bool = True, concurrent_blocks: bool = False
              ) -> tuple[np.ndarray, np.ndarray]:
    """(distances, parents) by Bellman–Ford launches until nothing improves (at most n rounds; a
    negative cycle reachable from the source raises NegativeCycleError). concurrent_blocks: see _Device."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    device = _Device(concurrent_blocks)
    csr, indptr, sources, targets = _device_graph(graph, directed, source, device)
    dist = np.full(csr.n, np.inf)
    dist[source] = 0.0
    dist = device.array(dist, "min")  # written by atomic minima
    weights = device.array(csr.weights)
    changed = device.array(np.zeros(1, dtype=np.int32), "exclusive")
    for _ in range(csr.n):
        changed.copy_to_device(np.zeros(1, dtype=np.int32))
        if variant == "edge":
            device.launch(_relax_edges, csr.m, sources, targets, weights, dist, changed)
        else:
            device.launch(_relax_vertices, csr.n, indptr, targets, weights, dist, changed)
        if not changed.copy_to_host()[0]:
            break
    else:
        sssp(csr, source, method="bellman-ford")  # raises NegativeCycleError naming a vertex on the cycle
    found = dist.copy_to_host()
    return found, _tight_tree(csr, source, found)


def _kernels() -> dict:
    """Each kernel by name: the kernel, what a thread takes, its argument types (the graph as
    _device_graph puts it on the device)."""
    ids, level, values, flag = (types.Array(dtype, 1, "C") for dtype in (types.int64, types.int32, types.float64,
                                                                         types.int32))
    return {"bfs_edges": (_bfs_edges, "edge", (ids, ids, level, ids, types.int64, flag)),
            "bfs_vertices": (_bfs_vertices, "vertex", (ids, ids, level, ids, types.int64, flag)),
            "relax_edges": (_relax_edges, "edge", (ids, ids, values, values, flag)),
            "relax_vertices": (_relax_vertices, "vertex", (ids, ids, values, values, flag))}


def machine_code(arch: str = "sm_90") -> list[tuple[KernelReport, str, int, int | None]]:
    """Each kernel as an `arch` GPU runs it, read without a GPU (ptxas and cuobjdump): its report,
    what a thread takes ('edge' or 'vertex'), its SASS instructions without the alignment NOPs, and
    those of its widest loop (a vertex thread's loop over its edges, as unrolled; None without one)."""
    source = Path(__file__).read_text()
    found = []
    for name, (kernel, takes, signature) in _kernels().items():
        report = kernel_report(name, kernel.py_func, signature, THREADS, arch, (source, name))
        code = sum(instruction.opcode != "NOP" for instruction in report.listing)
        found.append((report, takes, code, outermost_loop(list(report.listing))))
    return found
