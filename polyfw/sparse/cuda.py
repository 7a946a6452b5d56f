"""Searches on the GPU over a graph that stays there: BFS, SSSP and their parents, one launch each.

Seed 002 launched a kernel per level and read a flag back after each: a host round trip per level
(88-138 MTEPS on an H200). Here a search is one persistent kernel: its blocks stay resident (a
cooperative launch, as many blocks as fit at once) and meet at grid-wide barriers between levels,
with the frontier's size kept in device memory, so a search reads back a fixed handful of numbers
whatever its depth. `DeviceGraph` holds the CSR arrays (and the reversed ones, for bottom-up
steps) on the device; every search takes one and leaves it there.

- BFS is direction-optimizing (Beamer): top-down steps expand a queue of frontier vertices, each by
  a group of lanes sized to the frontier's mean degree (up to a warp), claiming a vertex with a
  compare-and-swap on its level; bottom-up steps give each unvisited vertex a thread that scans its
  in-edges for a parent in the frontier, read from a bitmap of it (a bit a vertex); the device
  switches between them with Beamer's rules.
- SSSP is near-far (Davidson et al.'s delta-stepping for GPUs): a near queue below a threshold is
  relaxed round by round with atomic minima, what lands further goes to a far queue, and when the
  near queue empties the threshold moves past the nearest far vertex and the far queue is split.
  Stamps keep a vertex at most once in a round's near queue and a phase's far queue. With an
  infinite threshold it is frontier Bellman-Ford, for negative arcs, stopped after n rounds (a
  negative cycle).
- Parents of SSSP: a BFS over the tight edges (dist[u] + w == dist[v]) from the source, the same
  kernel: zero-weight cycles cannot close a loop of parents.

Numba's simulator runs cooperative grids of one block only: there the kernels run with one block
of threads that race as a GPU's do (atomics, barriers), and codegen.machine_code reads what they
compile to without a GPU.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numba
from numba import config, cuda, int32, int64, types, uint32

from codegen.machine_code import KernelReport, kernel_report, outermost_loop

from .csr import CSRGraph
from .device_graph import DeviceGraph, to_device
from ..graphs import NO_PREDECESSOR
from .searches import ALPHA, BETA, bellman_ford_from, check_source, potentials, smallest_levels

THREADS = 256
#: blocks of THREADS a kernel's registers leave room for on an SM (launch bounds)
RESIDENT_BLOCKS = 4
#: threads a block under Numba's simulator, which runs each as a Python thread: two warps
SIMULATED_THREADS = 64
WARP = 32
UNREACHED = -1
#: slots of a search's counters (int64, on the device): the two frontier queues' sizes, the next
#: frontier's out-edges, the edges not yet reached, the current frontier's out-edges, whether the
#: step is bottom-up, the depth reached / the rounds run, a near-far search's far queues' sizes,
#: its phase, whether it gave up (a negative cycle), the bottom-up steps a BFS took, and the heavy
#: vertices of the step (expanded by every thread)
SIZE, NEXT_EDGES, UNEXPLORED, FRONTIER_EDGES, BOTTOM_UP, DEPTH, FAR, PHASE, STUCK, BOTTOM_UP_STEPS, HEAVY = (
    0, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12)
COUNTERS = 13
#: slots of a near-far search's float counters: the threshold, the nearest far distance
THRESHOLD, FAR_MIN = 0, 1


def _simulated() -> bool:
    return bool(config.ENABLE_CUDASIM)


# ---------------------------------------------------------------- device code
#
# Every array of a search has a leading search axis (levels[s, v], queues[s, 2, v], counters[s, c]):
# a kernel over the whole grid runs one search (s = 0) with grid-wide barriers; a kernel over
# blocks runs one search a block (s = the block), with block barriers: Johnson's many searches.


@cuda.jit(device=True)
def _whole_grid():
    """(search, thread, threads) of a search the whole grid runs."""
    return 0, cuda.grid(1), cuda.gridsize(1)


@cuda.jit(device=True)
def _grid_barrier():
    cuda.cg.this_grid().sync()


@cuda.jit(device=True)
def _one_block():
    """(search, thread, threads) of a search one block runs: the block's."""
    return cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x


@cuda.jit(device=True)
def _block_barrier():
    cuda.syncthreads()


@cuda.jit(device=True)
def _group_size(edges, vertices):
    """Lanes a frontier vertex gets in a top-down step: its mean degree rounded up to a power of two, at most a warp."""
    group = 1
    while group < WARP and group * vertices < edges:
        group *= 2
    return group


@cuda.jit(device=True)
def _append(queue, counters, row, v, indptr):
    """Put v in frontier queue `row` (of one search's) and count its out-edges for the next step's choice."""
    slot = cuda.atomic.add(counters, SIZE + row, 1)
    queue[row, slot] = v
    cuda.atomic.add(counters, NEXT_EDGES, indptr[v + 1] - indptr[v])


@cuda.jit(device=True)
def _next_step(counters, current, n, alpha, beta):
    """Between two barriers, one thread: retire the frontier just expanded and choose the next
    step's direction by Beamer's rules (bottom-up once the frontier's edges exceed the unreached
    edges / alpha; top-down again once the frontier is below n / beta vertices)."""
    following = counters[NEXT_EDGES]
    counters[UNEXPLORED] -= following
    counters[FRONTIER_EDGES] = following
    counters[NEXT_EDGES] = 0
    counters[SIZE + current] = 0
    counters[HEAVY] = 0
    if alpha > 0:
        if counters[BOTTOM_UP] == 0 and following * alpha > counters[UNEXPLORED]:
            counters[BOTTOM_UP] = 1
        elif counters[BOTTOM_UP] == 1 and counters[SIZE + 1 - current] * beta < n:
            counters[BOTTOM_UP] = 0
    counters[BOTTOM_UP_STEPS] += counters[BOTTOM_UP]


@cuda.jit(device=True)
def _frontier_bits(thread, threads, bitmap, current, queue, following, counters):
    """Between a BFS level's barriers: the frontier just expanded leaves its bitmap (clear again for
    the level after next) and the next one enters the other, a bit a vertex: what bottom-up steps read."""
    for word in range(thread, bitmap.shape[1], threads):
        bitmap[current, word] = 0
    for slot in range(thread, counters[SIZE + following], threads):
        v = queue[following, slot]
        cuda.atomic.or_(bitmap, (following, v >> 5), uint32(1) << uint32(v & 31))


@cuda.jit(device=True)
def _claim(stamps, v, mark):
    """Whether this thread is the first to stamp v with `mark` (v then goes in a queue once)."""
    return cuda.atomic.exch(stamps, v, mark) != mark


#: what a frontier vertex's edges do: claim unreached vertices (BFS) or relax distances (near-far)
DISCOVER, RELAX = 0, 1


@cuda.jit(device=True)
def _edge(mode, u, e, indptr, indices, weights, dist, level, parent, queue, counters, following, depth, tight,
          threshold, near_marks, far_marks, mark, phase, far, spread):
    """One edge u -> indices[e] of a frontier vertex: BFS claims its head with a compare-and-swap on the
    level (tight: only along a shortest path, dist[u] + w == dist[v]); near-far lowers its distance with
    an atomic minimum and queues it once in the near queue (below the threshold) or the far one."""
    v = indices[e]
    if mode == DISCOVER:
        if level[v] == UNREACHED and (tight == 0 or dist[u] + weights[e] == dist[v]):
            if cuda.atomic.cas(level, v, int32(UNREACHED), depth + 1) == UNREACHED:
                parent[v] = u
                _append(queue, counters, following, v, indptr)
    else:
        through = dist[u] + weights[e]
        if through < dist[v] and through < cuda.atomic.min(dist, v, through):
            if through < threshold:
                if _claim(near_marks, v, mark):
                    _append(queue, counters, following, v, indptr)
            elif _claim(far_marks, v, phase):
                far[spread, cuda.atomic.add(counters, FAR + spread, 1)] = v


@cuda.jit(device=True)
def _expand_light(mode, thread, threads, current, heavy, heavy_list, indptr, indices, weights, dist, level, parent,
                  queue, counters, following, depth, tight, threshold, near_marks, far_marks, mark, phase, far,
                  spread):
    """A top-down step's vertices of at most `heavy` edges, each by a group of lanes sized to the
    frontier's mean degree (at most a warp); heavier ones go to heavy_list for _expand_heavy."""
    size = counters[SIZE + current]
    group = _group_size(counters[FRONTIER_EDGES], size)
    lane = thread % group
    for slot in range(thread // group, size, threads // group):
        u = queue[current, slot]
        if indptr[u + 1] - indptr[u] > heavy:
            if lane == 0:
                heavy_list[cuda.atomic.add(counters, HEAVY, 1)] = u
            continue
        for e in range(indptr[u] + lane, indptr[u + 1], group):
            _edge(mode, u, e, indptr, indices, weights, dist, level, parent, queue, counters, following, depth,
                  tight, threshold, near_marks, far_marks, mark, phase, far, spread)


@cuda.jit(device=True)
def _expand_heavy(mode, thread, threads, heavy_list, indptr, indices, weights, dist, level, parent, queue, counters,
                  following, depth, tight, threshold, near_marks, far_marks, mark, phase, far, spread):
    """After a barrier: the step's heavy vertices one after another, each by every thread of the search
    (a hub's edges spread over the whole grid, not one warp)."""
    for h in range(counters[HEAVY]):
        u = heavy_list[h]
        for e in range(indptr[u] + thread, indptr[u + 1], threads):
            _edge(mode, u, e, indptr, indices, weights, dist, level, parent, queue, counters, following, depth,
                  tight, threshold, near_marks, far_marks, mark, phase, far, spread)


def _search_kernels(worker, barrier):
    """The BFS and near-far kernels for one way of running a search (a worker's (search, thread,
    threads) and its barrier): the whole grid's, or each block's."""

    def bfs_search(indptr, indices, rindptr, rindices, weights, all_dist, all_level, all_parent, all_queue,
                   all_heavy, all_bitmap, all_counters, alpha, beta, tight, heavy):
        """A whole direction-optimizing BFS (see the module's text); tight: follow only the edges on
        shortest paths (dist[u] + w == dist[v]), top-down only (alpha = 0); heavy: the most edges a
        frontier vertex has to be expanded by a group of lanes rather than by every thread."""
        search, thread, threads = worker()
        dist, level, parent = all_dist[search], all_level[search], all_parent[search]
        queue, heavy_list, counters = all_queue[search], all_heavy[search], all_counters[search]
        bitmap = all_bitmap[search]
        n = level.shape[0]
        depth = int32(0)
        current = 0
        while counters[SIZE + current] > 0:
            following = 1 - current
            if counters[BOTTOM_UP] == 0:
                _expand_light(DISCOVER, thread, threads, current, heavy, heavy_list, indptr, indices, weights, dist,
                              level, parent, queue, counters, following, depth, tight, 0.0, level, level, 0, 0,
                              queue, 0)
                barrier()
                _expand_heavy(DISCOVER, thread, threads, heavy_list, indptr, indices, weights, dist, level, parent,
                              queue, counters, following, depth, tight, 0.0, level, level, 0, 0, queue, 0)
            else:
                for v in range(thread, n, threads):
                    if level[v] == UNREACHED:
                        for e in range(rindptr[v], rindptr[v + 1]):
                            u = rindices[e]
                            if (bitmap[current, u >> 5] >> (u & 31)) & 1:  # u in the frontier
                                level[v] = depth + 1  # v's own thread: no other writer
                                parent[v] = u
                                _append(queue, counters, following, v, indptr)
                                break
            barrier()
            if alpha > 0:
                _frontier_bits(thread, threads, bitmap, current, queue, following, counters)
            if thread == 0:
                _next_step(counters, current, n, alpha, beta)
            barrier()
            current = following
            depth += 1
        if thread == 0:
            counters[DEPTH] = depth

    def near_far_search(indptr, indices, weights, all_dist, all_near, all_far, all_heavy, all_near_marks,
                        all_far_marks, all_counters, all_bounds, delta, rounds, heavy):
        """A whole near-far SSSP (see the module's text) from the vertices in near[0]; gives up
        (counters[STUCK] = 1) after `rounds` rounds of relaxations still improving, where rounds > 0;
        heavy: as bfs_search's."""
        search, thread, threads = worker()
        dist, near, far, heavy_list = all_dist[search], all_near[search], all_far[search], all_heavy[search]
        near_marks, far_marks = all_near_marks[search], all_far_marks[search]
        counters, bounds = all_counters[search], all_bounds[search]
        current = 0
        spread = 0  # which far queue holds the far vertices
        done = int64(0)
        while True:
            while counters[SIZE + current] > 0:
                following = 1 - current
                threshold = bounds[THRESHOLD]
                mark = int32(done + 1)
                phase = int32(2 * counters[PHASE])
                _expand_light(RELAX, thread, threads, current, heavy, heavy_list, indptr, indices, weights, dist,
                              near_marks, near_marks, near, counters, following, 0, 0, threshold, near_marks,
                              far_marks, mark, phase, far, spread)
                barrier()
                _expand_heavy(RELAX, thread, threads, heavy_list, indptr, indices, weights, dist, near_marks,
                              near_marks, near, counters, following, 0, 0, threshold, near_marks, far_marks, mark,
                              phase, far, spread)
                barrier()
                done += 1
                if thread == 0:
                    _next_step(counters, current, 0, 0, 0)
                    if rounds > 0 and done >= rounds and counters[SIZE + following] > 0:
                        counters[STUCK] = 1
                        counters[SIZE + following] = 0
                barrier()
                current = following
            if counters[STUCK] == 1 or counters[FAR + spread] == 0:
                break
            # the near queue is empty: every vertex below the threshold is settled. Move the threshold
            # one delta past the nearest far vertex still above it, and split the far queue
            below = bounds[THRESHOLD]
            size = counters[FAR + spread]
            for slot in range(thread, size, threads):
                if dist[far[spread, slot]] >= below:
                    cuda.atomic.min(bounds, FAR_MIN, dist[far[spread, slot]])
            barrier()
            threshold = max(below, bounds[FAR_MIN]) + delta
            kept = int32(2 * counters[PHASE] + 1)
            for slot in range(thread, size, threads):
                v = far[spread, slot]
                if dist[v] >= below and _claim(far_marks, v, kept):
                    if dist[v] < threshold:
                        _append(near, counters, current, v, indptr)
                    else:
                        far[1 - spread, cuda.atomic.add(counters, FAR + 1 - spread, 1)] = v
            barrier()
            if thread == 0:
                bounds[THRESHOLD] = threshold
                bounds[FAR_MIN] = math.inf
                counters[FAR + spread] = 0
                counters[PHASE] += 1
                counters[FRONTIER_EDGES] = counters[NEXT_EDGES]
                counters[NEXT_EDGES] = 0
            barrier()
            spread = 1 - spread
        if thread == 0:
            counters[DEPTH] = done

    # at most 64 registers a thread, so that 4 blocks (32 warps) share an SM to hide the loads' latency
    bounds = {} if _simulated() else {"launch_bounds": (THREADS, RESIDENT_BLOCKS)}
    return cuda.jit(bfs_search, **bounds), cuda.jit(near_far_search, **bounds)


#: one search over the whole grid (a cooperative launch), and one search a block
GRID_KERNELS = _search_kernels(_whole_grid, _grid_barrier)
BLOCK_KERNELS = _search_kernels(_one_block, _block_barrier)


# ---------------------------------------------------------------- launching

#: device bytes a batch of searches (one a block) may take: its queues, stamps and counters
BATCH_BYTES = 2**30
#: a frontier vertex with more edges is expanded by every thread of its search, not by a warp
HEAVY_EDGES = 1024


def _launch(kernel, searches: int, *arguments) -> None:
    """One search over the whole grid (searches = 0: a cooperative launch with as many blocks as the
    GPU holds at once, one under the simulator), or one search a block."""
    blocks, threads = searches, SIMULATED_THREADS if _simulated() else THREADS
    if not searches:
        blocks = 1
        if not _simulated():
            signature = tuple(numba.typeof(argument) for argument in arguments)
            blocks = max(1, kernel.compile(signature).max_cooperative_grid_blocks(threads))
    kernel[blocks, threads](*arguments)


@cuda.jit
def _first_frontiers(indptr, sources, counters):
    """Search s's counters of its first frontier (its source): the source's out-edges, and so fewer unexplored."""
    s = cuda.grid(1)
    if s < sources.shape[0]:
        degree = indptr[sources[s] + 1] - indptr[sources[s]]
        counters[s, FRONTIER_EDGES] += degree
        counters[s, UNEXPLORED] -= degree


@dataclass
class _Searches:
    """Host arrays of len(sources) searches, each from one source, then moved to the device."""

    graph: DeviceGraph
    sources: np.ndarray

    def counters(self, unexplored: int = 0):
        counters = np.zeros((len(self.sources), COUNTERS), dtype=np.int64)
        counters[:, SIZE] = 1
        counters[:, UNEXPLORED] = unexplored
        counters = self.graph.upload(counters)
        _first_frontiers[max(1, -(-len(self.sources) // THREADS)), THREADS](
            self.graph.indptr, self.graph.upload(self.sources), counters)  # (the row offsets stay on the device)
        return counters

    def queues(self, length: int, first: bool = True):
        """Two queues of `length` vertices a search, the first holding its source."""
        queue = np.zeros((len(self.sources), 2, max(length, 1)), dtype=self.graph.csr.indices.dtype)
        if first:
            queue[:, 0, 0] = self.sources
        return self.graph.upload(queue)

    def frontier_bits(self):
        """Two frontier bitmaps a search (32 vertices a word), the first holding its source."""
        bits = np.zeros((len(self.sources), 2, -(-max(self.graph.n, 1) // 32)), dtype=np.uint32)
        bits[np.arange(len(self.sources)), 0, self.sources >> 5] = np.left_shift(1, self.sources & 31).astype(np.uint32)
        return self.graph.upload(bits)

    def scratch(self):
        """A vertex list a search on the device (a step's heavy vertices), never read back."""
        return cuda.device_array((len(self.sources), max(self.graph.n, 1)), dtype=self.graph.csr.indices.dtype)

    def rows(self, fill, dtype, at_source):
        """One row a search over the vertices, `fill` but `at_source` at its source."""
        rows = np.full((len(self.sources), self.graph.n), fill, dtype=dtype)
        rows[np.arange(len(self.sources)), self.sources] = at_source
        return rows


def _trees(graph: DeviceGraph, searches: _Searches, alpha: int, dist=None, weights=None):
    """(levels, parents, counters) on the device of a BFS from each source: the whole grid's for
    one source, a block each for more; with `dist` (and `weights`, default the graph's), over the
    edges on shortest paths only."""
    n = graph.n
    level = graph.upload(searches.rows(UNREACHED, np.int32, 0))
    parent = graph.upload(searches.rows(-1, graph.csr.indices.dtype, searches.sources))
    counters = searches.counters(graph.m)
    rindptr, rindices = graph.reverse if alpha > 0 else (graph.indptr, graph.indices)
    tight = dist is not None
    weights = graph.weights if weights is None else weights
    many = len(searches.sources) if len(searches.sources) > 1 else 0
    kernel = (BLOCK_KERNELS if many else GRID_KERNELS)[0]
    unused = None if tight else graph.upload(np.zeros((len(searches.sources), 1)))  # distances a BFS never reads
    _launch(kernel, many, graph.indptr, graph.indices, rindptr, rindices, weights, dist if tight else unused, level,
            parent, searches.queues(n), searches.scratch(), searches.frontier_bits(), counters, alpha, BETA, int(tight),
            HEAVY_EDGES)
    return level, parent, counters


def bfs_cuda(graph, source: int, direction: str = "optimizing", device_result: bool = False, steps: dict | None = None):
    """(levels, parents) of a BFS from `source` on the GPU, as polyfw.sparse.bfs gives them (levels in
    the smallest unsigned dtype, unreached its maximum; parents -1 where unreached, the source its
    own). graph: a DeviceGraph (to_device), or any graph, moved there first. device_result: the two
    arrays stay on the device (numba device arrays: cupy and torch read them through
    __cuda_array_interface__ without a copy), levels then int32 with -1 where unreached.
    steps: a dict to fill with the search's 'levels' and 'bottom_up' steps (read back with the result)."""
    if direction not in ("top-down", "optimizing"):
        raise ValueError(f"direction must be 'top-down' or 'optimizing', got {direction!r}")
    graph = to_device(graph)
    source = check_source(source, graph.n)
    level, parent, counters = _trees(graph, _Searches(graph, np.array([source])),
                                     ALPHA if direction == "optimizing" else 0)
    if device_result:
        return _only_row(level), _only_row(parent)
    counted = graph.download(counters)[0]
    if steps is not None:
        steps.update(levels=int(counted[DEPTH]), bottom_up=int(counted[BOTTOM_UP_STEPS]))
    return smallest_levels(graph.download(level)[0], int(counted[DEPTH])), graph.download(parent)[0]


def _only_row(rows):
    """The one search's row of a (1, n) device array, still on the device."""
    return rows.reshape(rows.shape[1:])


def near_far_delta(csr: CSRGraph) -> float:
    """Davidson et al.'s threshold step: a warp's worth of the mean weight over the mean degree."""
    return WARP * csr.bucket_width


def _distances(graph: DeviceGraph, searches: _Searches, dist, delta: float, rounds: int, weights=None,
               first_all: bool = False):
    """Near-far (or, delta = inf, Bellman-Ford) from each source into the rows of `dist` (on the
    device: 0 at the sources, inf elsewhere); first_all: one search from every vertex at once, whose
    distances `dist` holds (Johnson's potentials). Returns the counters on the device."""
    n = max(graph.n, 1)
    count = len(searches.sources)
    if first_all:
        counters = np.zeros((1, COUNTERS), dtype=np.int64)
        counters[0, SIZE], counters[0, FRONTIER_EDGES] = graph.n, graph.m
        counters = graph.upload(counters)
        near = np.zeros((1, 2, n), dtype=graph.csr.indices.dtype)
        near[0, 0, :graph.n] = np.arange(graph.n)
        near = graph.upload(near)
    else:
        counters, near = searches.counters(), searches.queues(n)
    bounds = np.zeros((count, 2))
    bounds[:, THRESHOLD], bounds[:, FAR_MIN] = delta, np.inf
    marks = np.zeros((count, n), dtype=np.int32)
    many = count if count > 1 else 0
    # a phase's far queue holds the vertices kept from the last one and those it adds: up to 2n
    _launch((BLOCK_KERNELS if many else GRID_KERNELS)[1], many, graph.indptr, graph.indices,
            graph.weights if weights is None else weights, dist, near, searches.queues(2 * n, first=False),
            searches.scratch(), graph.upload(marks), graph.upload(marks - 1), counters, graph.upload(bounds),
            float(delta), rounds, HEAVY_EDGES)
    return counters


def sssp_cuda(graph, source: int, delta: float | None = None, device_result: bool = False):
    """(distances, parents) from `source` on the GPU, as polyfw.sparse.sssp gives them (inf and -1
    where unreachable, the source its own parent). Near-far with threshold steps `delta` (default:
    near_far_delta) where every weight is non-negative, else Bellman-Ford rounds, raising
    NegativeCycleError for a negative cycle reachable from the source. graph, device_result: as
    bfs_cuda's (distances float64)."""
    graph = to_device(graph)
    source = check_source(source, graph.n)
    csr = graph.csr
    negative = csr.lightest < 0
    if delta is not None and not delta > 0:
        raise ValueError(f"delta must be a positive number, got {delta!r}")
    searches = _Searches(graph, np.array([source]))
    dist = graph.upload(searches.rows(np.inf, np.float64, 0.0))
    step = math.inf if negative else (near_far_delta(csr) if delta is None else float(delta))
    counters = _distances(graph, searches, dist, step, graph.n + 1 if negative else 0)
    if negative and graph.download(counters)[0, STUCK]:
        on_cpu, active = np.full(csr.n, np.inf), np.zeros(csr.n, dtype=np.bool_)
        on_cpu[source], active[source] = 0.0, True
        bellman_ford_from(csr.on_host(), on_cpu, active)  # raises NegativeCycleError naming a vertex on the cycle
        raise RuntimeError(f"Bellman-Ford on the GPU was still improving after {graph.n + 1} rounds, on the CPU "
                           "it settled: please report this graph")
    _, parent, _ = _trees(graph, searches, 0, dist)
    if device_result:
        return _only_row(dist), _only_row(parent)
    return graph.download(dist)[0], graph.download(parent)[0].astype(np.int64)


@cuda.jit
def _levels_as_distances(levels, weight, rows):
    """rows[s, v] = levels[s, v] * weight, inf where unreached (a BFS's distances where every arc weighs `weight`)."""
    search, v = cuda.grid(2)
    if search < rows.shape[0] and v < rows.shape[1]:
        rows[search, v] = levels[search, v] * weight if levels[search, v] >= 0 else math.inf


@cuda.jit
def _reweighted(sources, targets, weights, potential, out):
    """Johnson's weights w + h[u] - h[v], non-negative but for rounding (kept at 0)."""
    e = cuda.grid(1)
    if e < out.shape[0]:
        out[e] = max(weights[e] + potential[sources[e]] - potential[targets[e]], 0.0)


@cuda.jit
def _unweighted(rows, sources, potential, parents, predecessors):
    """Reweighted distances back to the graph's (d - h[s] + h[v]), and the parents as predecessors in
    scipy's convention (NO_PREDECESSOR at the source and where unreached)."""
    search, v = cuda.grid(2)
    if search < rows.shape[0] and v < rows.shape[1]:
        rows[search, v] += potential[v] - potential[sources[search]]
        found = parents[search, v]
        predecessors[search, v] = NO_PREDECESSOR if found < 0 or v == sources[search] else found


def _grid2(rows: int, columns: int) -> tuple[tuple[int, int], tuple[int, int]]:
    return ((-(-rows // 8), -(-columns // 32)), (8, 32))


def johnson_cuda(graph, predecessors: bool = False, device_result: bool = False):
    """All-pairs shortest paths of a sparse graph on the GPU, as polyfw.sparse.johnson gives them:
    distances n x n (inf: unreachable), with predecessors=True also the predecessors (int32, -9999 at
    the source and where unreachable). Every search runs in a block of its own, as many at once as
    BATCH_BYTES of queues allow, each writing its row of the result on the device: a BFS where every
    arc has one weight, else near-far, after Bellman-Ford potentials (one search from every vertex at
    once, over the whole grid) where a weight is negative. device_result: the matrices stay on the device."""
    graph = to_device(graph)
    csr, n = graph.csr, graph.n
    dist = cuda.device_array((n, n), dtype=np.float64)
    parents = cuda.device_array((n, n), dtype=np.int32)
    potential, weights = graph.upload(np.zeros((1, n))), None
    unit = 0 <= csr.lightest == csr.heaviest
    if csr.lightest < 0:
        counters = _distances(graph, _Searches(graph, np.zeros(1, dtype=np.int64)), potential, math.inf, n + 1,
                              first_all=True)
        if graph.download(counters)[0, STUCK]:
            potentials(csr.on_host())  # raises NegativeCycleError naming a vertex on the cycle
            raise RuntimeError("Bellman-Ford on the GPU was still improving after n + 1 rounds, on the CPU it settled")
        weights = cuda.device_array(max(csr.m, 1), dtype=np.float64)
        _reweighted[max(1, -(-csr.m // THREADS)), THREADS](graph.sources, graph.indices, graph.weights, potential[0],
                                                             weights[:csr.m])
    batch = max(1, min(n, BATCH_BYTES // (48 * max(n, 1))))
    for first in range(0, n, batch):
        searches = _Searches(graph, np.arange(first, min(n, first + batch)))
        rows = dist[first:first + len(searches.sources)]
        if unit:
            level, parent, _ = _trees(graph, searches, 0)
            _levels_as_distances[_grid2(*rows.shape)](level, csr.lightest, rows)
        else:
            rows.copy_to_device(searches.rows(np.inf, np.float64, 0.0))
            _distances(graph, searches, rows, near_far_delta(csr), 0, weights)
            _, parent, _ = _trees(graph, searches, 0, rows, weights)
        _unweighted[_grid2(*rows.shape)](rows, graph.upload(searches.sources), potential[0], parent,
                                         parents[first:first + len(searches.sources)])
    if device_result:
        return (dist, parents) if predecessors else dist
    found = graph.download(dist)
    return (found, graph.download(parents)) if predecessors else found


# ---------------------------------------------------------------- machine code


def _kernels() -> dict:
    """Each persistent kernel by name with its argument types (the graph as to_device puts it there)."""
    ids, small, values = (types.Array(dtype, 1, "C") for dtype in (types.int64, types.int32, types.float64))
    rows = {dtype: types.Array(dtype, 2, "C") for dtype in (types.int32, types.float64, types.int64)}
    queues = types.Array(types.int32, 3, "C")
    bfs = (ids, small, ids, small, values, rows[types.float64], rows[types.int32], rows[types.int32], queues,
           rows[types.int32], types.Array(types.uint32, 3, "C"), rows[types.int64], types.int64, types.int64,
           types.int64, types.int64)
    near_far = (ids, small, values, rows[types.float64], queues, queues, rows[types.int32], rows[types.int32],
                rows[types.int32], rows[types.int64], rows[types.float64], types.float64, types.int64, types.int64)
    return {f"{name}_{scope}": (kernels[number], (bfs, near_far)[number])
            for scope, kernels in (("grid", GRID_KERNELS), ("block", BLOCK_KERNELS))
            for number, name in enumerate(("bfs_search", "near_far_search"))}


def machine_code(arch: str = "sm_90") -> list[tuple[KernelReport, str, int, int | None]]:
    """Each kernel as an `arch` GPU runs it, read without a GPU (ptxas and cuobjdump): its report,
    what a thread takes, its SASS instructions without the alignment NOPs, and those of its widest
    loop (a search's loop over its levels or rounds)."""
    source = Path(__file__).read_text()
    found = []
    for name, (kernel, signature) in _kernels().items():
        report = kernel_report(name, kernel, signature, THREADS, arch, (source, name))
        code = sum(instruction.opcode != "NOP" for instruction in report.listing)
        found.append((report, "part of a vertex", code, outermost_loop(list(report.listing))))
    return found
