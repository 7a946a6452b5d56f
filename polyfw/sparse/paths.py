"""BFS, single-source shortest paths and Johnson's all-pairs shortest paths on a CSR graph."""
from __future__ import annotations

import math

import numba
import numpy as np

from codegen.profile import cycles_per_second
from tiling.pages import mapped_empty

from ..graphs.device_arrays import like_each
from ..graphs import NO_PREDECESSOR, GraphInputError
from .csr import CSRGraph, _from_arrays, as_csr
from .device_graph import DeviceGraph, csr_on_device
from .kernels import (NO_PARENT, UNREACHED_INT32, breadth_first, breadth_first_from_sources, dijkstra,
                      dijkstra_from_sources, float_distances, stepping, tight_parents, tight_parents_pulled)
from .searches import ALPHA, BETA, bellman_ford_from, check_source, levels_dtype, potentials, smallest_levels
from .team import team_deadline

SSSP_METHODS = ("auto", "dijkstra", "delta-stepping", "bellman-ford")
#: where a search runs: this CPU, or a CUDA GPU ('cudasim': the same kernels in Numba's simulator)
SEARCH_TARGETS = ("cpu", "cuda", "cudasim")
#: below this many arcs sssp's method 'auto' is Dijkstra: a team's parallel region costs more than the search
#: (R-MAT scale 6 / 12 / 14 on a CSRGraph, passive waiting, 2 threads of an Intel Xeon: delta-stepping 276 / 1,726
#: / 3,186 us, Dijkstra 8 / 854 / 3,918; 2-core Zen 3, weights 1-100: 16,000 arcs 1.5 against 0.8 ms, 160,000
#: arcs 5.7 against 9.8)
DIJKSTRA_BELOW_ARCS = 2**16
#: delta-stepping's bounds on bucket slots (see bucket_slots)
BUCKET_SLOTS, SLOT_ENTRIES = 255, 2**26


def _on_gpu(graph, target: str | None) -> bool:
    """Whether a search runs on the GPU: target 'cuda' (or 'cudasim': Numba's simulator runs the same
    kernels when NUMBA_ENABLE_CUDASIM=1), or, without a target, a graph already there."""
    if target is None:
        return isinstance(graph, DeviceGraph) or csr_on_device(graph)
    if target not in SEARCH_TARGETS:
        raise ValueError(f"target must be one of {', '.join(SEARCH_TARGETS)}, got {target!r}")
    if target == "cpu" and csr_on_device(graph):
        raise ValueError("the graph's CSR arrays are on the GPU and target 'cpu' runs on the host: pass target "
                         "'cuda' or 'cudasim', or copy them to the host first")
    return target != "cpu"


def _host_only(device_result: bool, like, gpu: bool) -> None:
    if (device_result or like is not None) and not gpu:
        raise ValueError("device_result=True keeps a GPU search's result on the GPU (like= too); pass target='cuda'")


def bfs(graph, source: int, direction: str = "optimizing", directed: bool = True,
        steps: list | None = None, target: str | None = None, device_result: bool = False,
        like: object | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(levels, parents) of a breadth-first search from `source`: levels in the smallest unsigned
    dtype, unreached = its maximum; parents -1 where unreached (the source is its own parent), in the
    graph's index dtype (int32 up to 2**31 vertices).

    target: 'cpu' or 'cuda' (polyfw.sparse.cuda: the graph moved to the GPU, or a DeviceGraph from
    polyfw.sparse.to_device left there, or CSR arrays already there as a tuple (indptr, indices,
    weights) of device arrays, never copied to the host; default: 'cuda' for those, else 'cpu').
    device_result: a GPU search's arrays stay on the device (see polyfw.sparse.cuda.bfs_cuda); like=x:
    they stay there as arrays of x's kind (a torch tensor, a cupy array: no copy).

    direction: 'top-down' (each frontier vertex claims its unvisited out-neighbours) or
    'optimizing' (bottom-up steps while the frontier is large, Beamer's heuristic).
    steps: a list to append one (direction 'td' or 'bu', the step kernel's seconds, the level's
    seconds in all, the next frontier's size) per level to: where a search's time goes; on the GPU,
    one dict of the search's 'levels' and 'bottom_up' steps."""
    if direction not in ("top-down", "optimizing"):
        raise ValueError(f"direction must be 'top-down' or 'optimizing', got {direction!r}")
    gpu = _on_gpu(graph, target)
    _host_only(device_result, like, gpu)
    if gpu:
        from .cuda import bfs_cuda, to_device

        found = {}
        result = bfs_cuda(to_device(graph, directed), source, direction, device_result or like is not None, found)
        if steps is not None:
            steps.append(found)
        return like_each(result, like)
    csr = as_csr(graph, directed=directed)
    source = check_source(source, csr.n)
    parent = np.empty(csr.n, dtype=csr.indices.dtype)  # 32-bit ids where the graph fits
    levels = np.empty(csr.n, dtype=np.uint8)  # the search's levels while they fit a byte
    level = np.empty(csr.n, dtype=np.int32)  # a deeper search's (never touched, so never mapped, otherwise)
    log = np.empty((csr.n + 1, 4), dtype=np.int64)  # a row a level, at most n of them
    optimizing = direction == "optimizing"
    in_rows = (csr.reverse.indptr, csr.reverse.hubs_first) if optimizing else (csr.indptr, csr.indices)
    depth = breadth_first(csr.indptr, csr.indices, *in_rows, source, parent, level, levels, ALPHA if optimizing else 0,
                          BETA, numba.get_num_threads(), team_deadline(), log)
    if steps is not None:
        rate = cycles_per_second()
        steps += [("bu" if kind else "td", step / rate, total / rate, int(frontier))
                  for kind, step, total, frontier in log[:depth]]
    if levels_dtype(depth) != levels.dtype:
        levels = smallest_levels(level, depth)
    return levels, parent


def sssp(graph, source: int, method: str = "auto", directed: bool = True, steps: list | None = None,
         target: str | None = None, device_result: bool = False, like: object | None = None
         ) -> tuple[np.ndarray, np.ndarray]:
    """(distances, parents) from `source`: inf and -1 where unreachable.

    target, device_result, like: as bfs's. On the GPU method 'auto' is near-far (delta-stepping's form for
    GPUs) unless a weight is negative, then Bellman-Ford; 'delta-stepping' and 'bellman-ford' ask for
    one of them.

    method: 'dijkstra' (non-negative weights, serial), 'delta-stepping' (non-negative weights,
    parallel over each bucket's frontier), 'bellman-ford' (any weights, rounds over the out-edges
    of the vertices the last round improved; NegativeCycleError naming a vertex on a cycle
    reachable from the source) or 'auto' (Bellman-Ford if a weight is negative, else Dijkstra on
    fewer than DIJKSTRA_BELOW_ARCS arcs, else delta-stepping). steps: delta-stepping's rounds, as
    delta_stepping's ('auto' then runs delta-stepping whatever the graph's size)."""
    if method not in SSSP_METHODS:
        raise ValueError(f"method must be one of {', '.join(SSSP_METHODS)}, got {method!r}")
    gpu = _on_gpu(graph, target)
    _host_only(device_result, like, gpu)
    if gpu:
        from .cuda import sssp_cuda, to_device

        if method == "dijkstra":
            raise ValueError("method='dijkstra' is serial: the GPU runs 'delta-stepping' (near-far) or 'bellman-ford'")
        graph = to_device(graph, directed)
        if method == "delta-stepping" and graph.csr.lightest < 0:
            raise GraphInputError("delta-stepping needs non-negative weights; use method='bellman-ford'")
        return like_each(sssp_cuda(graph, source, math.inf if method == "bellman-ford" else None,
                                   device_result or like is not None), like)
    csr = as_csr(graph, directed=directed)
    source = check_source(source, csr.n)
    negative = csr.lightest < 0
    if method in ("dijkstra", "delta-stepping") and negative:
        raise GraphInputError(f"{method} needs non-negative weights; use method='bellman-ford'")
    if method == "auto" and csr.m < DIJKSTRA_BELOW_ARCS and steps is None:
        method = "dijkstra"
    if method in ("delta-stepping", "auto") and not negative:
        found, _, log = _stepping(csr, source)
        _log_steps(log, steps)
        return _as_float(found), _tight_tree(csr, source, found)
    dist = np.full(csr.n, np.inf)
    parent = np.full(csr.n, NO_PARENT, dtype=np.int64)
    if method == "bellman-ford" or negative:
        # serial frontier rounds: on 2 threads the edge-parallel ones (_stepping with one bucket)
        # took 155-247 ms a root on R-MAT scale 18 against 117 ms
        dist[source] = 0.0
        active = np.zeros(csr.n, dtype=np.bool_)
        active[source] = True
        parent = bellman_ford_from(csr, dist, active)
    else:
        scratch = csr.m + 1
        dijkstra(csr.indptr, csr.indices, csr.weights, source, dist, parent, np.empty(scratch),
                 np.empty(scratch, dtype=np.int64))
    parent[source] = source
    return dist, parent


def delta_stepping(csr: CSRGraph, source: int, delta: float | None = None, steps: list | None = None) -> np.ndarray:
    """See _stepping; every weight must be non-negative. steps: a list to append one (bucket,
    'parallel' or 'serial', the round's seconds, the seconds since the round before, the frontier)
    per round to: where a search's time goes."""
    dist, _, log = _stepping(csr, source, delta)
    _log_steps(log, steps)
    return _as_float(dist)


def _log_steps(log: np.ndarray, steps: list | None) -> None:
    if steps is not None:
        rate = cycles_per_second()
        steps += [(int(bucket), "parallel" if parallel else "serial", round_cycles / rate, since / rate, int(frontier))
                  for bucket, parallel, round_cycles, since, frontier in log]


def _as_float(dist: np.ndarray) -> np.ndarray:
    """A search's distances as every search returns them: float64, inf where unreached."""
    return dist if dist.dtype == np.float64 else float_distances(dist, UNREACHED_INT32)


def _stepping(csr: CSRGraph, source: int, delta: float | None = None, rounds: int | None = None
              ) -> tuple[np.ndarray, bool, np.ndarray]:
    """Distances from `source` (non-negative weights) by buckets of width delta: the vertices of the
    lowest bucket relax their out-edges in parallel (atomic min) until the bucket empties, then the
    next bucket; vertices may be relaxed more than once, unlike Dijkstra, but a bucket is a whole
    frontier of parallel work. delta: default csr.bucket_width. With one
    bucket (delta = inf) this is seed 002's frontier Bellman-Ford, edge-parallel over the active
    vertices' edges, for any weights: (distances, False, log) if frontiers were still non-empty after
    `rounds` rounds (a negative cycle), else (distances, True, log); kernels.stepping's log. Without
    `rounds`, on weights that csr.integer_weights holds, the distances are int32 (UNREACHED_INT32 where
    unreached: _as_float turns them into what a search returns), as GAPBS keeps them: exact, and half the
    bytes a vertex of float64's. No parent is written while searching (_tight_tree finds them after)."""
    if delta is None:
        delta = csr.bucket_width
    integral = csr.integer_weights if rounds is None else None
    weights = csr.weights if integral is None else integral
    dist = np.full(csr.n, np.inf) if integral is None else np.full(csr.n, UNREACHED_INT32, dtype=np.int32)
    log = np.empty((2 * csr.n + 64, 5), dtype=np.int64)  # a row a round, while they last (untouched pages cost nothing)
    window, capacity = bucket_slots(csr, delta)
    finished, taken = stepping(csr.indptr, csr.indices, weights, source, dist, float(delta), window, capacity,
                               numba.get_num_threads(), -1 if rounds is None else rounds, team_deadline(), log)
    return dist, finished, log[:min(taken, log.shape[0])]


def bucket_slots(csr: CSRGraph, delta: float) -> tuple[int, int]:
    """(window, capacity): slots for the buckets ahead of delta-stepping's current one, enough for the
    heaviest weight (a relaxed vertex lands at most heaviest / delta + 1 buckets ahead) up to BUCKET_SLOTS,
    and the entries a slot holds: n, or fewer where window * n would pass SLOT_ENTRIES (a bucket
    rarely holds more than a fraction of the vertices). A vertex further ahead, or beyond a full
    slot, waits in the far set. The slots are allocated, not filled: only what a search puts in them is
    ever mapped."""
    ahead = math.ceil(min(csr.heaviest / delta, BUCKET_SLOTS)) + 2 if delta < np.inf else 2  # (the quotient may be inf)
    window = int(max(2, min(ahead, BUCKET_SLOTS)))
    return window, int(max(1, min(csr.n, SLOT_ENTRIES // window)))


def _tight_tree(csr: CSRGraph, source: int, found: np.ndarray) -> np.ndarray:
    """Parents along edges on shortest paths (dist[u] + w == dist[v]) from a search's distances (`found`:
    float64, or _stepping's int32): any such edge when every weight is positive, the first of a vertex's
    in-edges (CSRGraph.parent_rows: lightest first once pulls repeat) where the reverse exists; else a BFS
    tree of those edges from the source (zero-weight edges could close a loop of parents).
    Parents found after the search cost one pass that stops early, where recording them in the search
    cost every lowering's swap 8 bytes more (int64 entries: 20% of a Kronecker scale-20 search)."""
    unreached = UNREACHED_INT32 if found.dtype == np.int32 else np.inf
    if csr.lightest > 0:
        if csr.has_reverse:  # (a one-off transpose costs more than reading every edge once)
            parent = mapped_empty(csr.n, np.int64)  # (pages faulted in by the pull's threads: 44 of 96 ms, 2**22)
            into = csr.reverse
            tight_parents_pulled(into.indptr, *into.parent_rows(), found, unreached, parent)
        else:
            parent = np.full(csr.n, NO_PARENT, dtype=np.int64)
            tight_parents(csr.indices, csr.indptr, csr.search_weights, found, unreached, parent)
        parent[source] = source
        return parent
    dist = _as_float(found)
    tight = np.isfinite(dist[csr.sources]) & (dist[csr.sources] + csr.weights == dist[csr.indices])
    tree = _from_arrays(csr.n, csr.sources[tight], csr.indices[tight].astype(np.int64), csr.weights[tight])
    return bfs(tree, source, direction="top-down")[1].astype(np.int64)


def worker_count(searches: int) -> int:
    """Workers for `searches` independent searches: four per thread (their lengths vary), at most one each."""
    return max(1, min(4 * numba.get_num_threads(), searches))


def dijkstra_rows(csr: CSRGraph, sources: np.ndarray, potential: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Dijkstra from each of `sources` in parallel (a BFS where every weight is equal): non-negative
    weights, or Johnson's reweighting by `potential` (taken back out of the distances). Distances
    len(sources) x n (inf: unreachable) and parents (NO_PARENT where none)."""
    dist = mapped_empty((len(sources), csr.n), np.float64)
    parent = mapped_empty((len(sources), csr.n), np.int64)
    if potential is None and 0 <= csr.lightest == csr.heaviest:  # one weight (an unweighted graph): BFS
        breadth_first_from_sources(csr.indptr, csr.indices, sources, csr.lightest, np.inf, dist, parent,
                                   worker_count(len(sources)))
        return dist, parent
    h = np.zeros(csr.n) if potential is None else potential
    weights = csr.weights if potential is None else \
        np.maximum(csr.weights + h[csr.sources] - h[csr.indices], 0.0)  # >= 0 but for rounding
    dijkstra_from_sources(csr.indptr, csr.indices, weights, h, sources, dist, parent, worker_count(len(sources)))
    return dist, parent


def johnson(graph, directed: bool = True, predecessors: bool = False, target: str | None = None,
            device_result: bool = False, like: object | None = None):
    """All-pairs shortest paths of a sparse graph: Bellman–Ford potentials, then Dijkstra from every
    source in parallel. Distances n x n (inf: unreachable), and with predecessors=True also the
    predecessor matrix in scipy's convention (-9999 on the diagonal and where unreachable).
    target, device_result, like: as bfs's (on the GPU, polyfw.sparse.cuda.johnson_cuda)."""
    gpu = _on_gpu(graph, target)
    _host_only(device_result, like, gpu)
    if gpu:
        from .cuda import johnson_cuda, to_device

        return like_each(johnson_cuda(to_device(graph, directed), predecessors, device_result or like is not None),
                         like)
    csr = as_csr(graph, directed=directed)
    dist, parent = dijkstra_rows(csr, np.arange(csr.n, dtype=np.int64), potentials(csr) if csr.lightest < 0 else None)
    if not predecessors:
        return dist
    parent[parent == NO_PARENT] = NO_PREDECESSOR
    return dist, parent.astype(np.int32)
