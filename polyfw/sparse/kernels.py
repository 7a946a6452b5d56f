"""Numba CPU kernels on CSR arrays: BFS (top-down and bottom-up steps), Bellman–Ford, Dijkstra,
and Dijkstra from every source (Johnson) or from given ones, in parallel. No GIL: parallel loops
are prange, and shared writes go through the atomics of codegen.intrinsics."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from codegen.intrinsics import bits_float, compare_and_swap, fetch_add, float_bits, load_acquire

NO_PARENT = -1


@njit(parallel=True, cache=True)
def top_down_step(indptr, indices, frontier, count, parent, level, depth, next_frontier, next_count):
    """Every unvisited out-neighbour of the frontier joins the next one, with the first frontier
    vertex that claims it (compare-and-swap on parent) as its parent."""
    for f in prange(count):
        u = frontier[f]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if parent[v] == NO_PARENT and compare_and_swap(parent, v, NO_PARENT, u):
                level[v] = depth + 1
                next_frontier[fetch_add(next_count, 0, 1)] = v


@njit(parallel=True, cache=True)
def bottom_up_step(in_indptr, in_indices, parent, level, depth):
    """Every unvisited vertex looks for a parent among its in-neighbours on the frontier (level
    == depth), stopping at the first: on large frontiers this reads far fewer edges. Each vertex
    is written by its own iteration only. Returns how many joined."""
    joined = 0
    for v in prange(parent.shape[0]):
        if parent[v] == NO_PARENT:
            for e in range(in_indptr[v], in_indptr[v + 1]):
                u = in_indices[e]
                if level[u] == depth:
                    parent[v] = u
                    level[v] = depth + 1
                    joined += 1
                    break
    return joined


@njit(cache=True)
def bellman_ford(indptr, indices, weights, dist, parent, active):
    """Rounds over the out-edges of the vertices improved in the round before (seed 002's frontier);
    returns a vertex still improving after n rounds (on or behind a negative cycle) or -1."""
    n = dist.shape[0]
    improved = np.zeros(n, dtype=np.bool_)
    for _ in range(n):
        any_active = False
        for u in range(n):
            if active[u]:
                active[u] = False
                du = dist[u]
                for e in range(indptr[u], indptr[u + 1]):
                    v = indices[e]
                    through = du + weights[e]
                    if through < dist[v]:
                        dist[v] = through
                        parent[v] = u
                        improved[v] = True
                        any_active = True
        if not any_active:
            return -1
        for v in range(n):
            if improved[v]:
                active[v] = True
                improved[v] = False
    for u in range(n):
        if active[u]:
            return u
    return -1


@njit(cache=True, inline="always")
def _push(keys, values, size, key, value):
    at = size
    keys[at], values[at] = key, value
    while at > 0:
        up = (at - 1) // 2
        if keys[up] <= keys[at]:
            break
        keys[up], keys[at] = keys[at], keys[up]
        values[up], values[at] = values[at], values[up]
        at = up
    return size + 1


@njit(cache=True, inline="always")
def _pop(keys, values, size):
    size -= 1
    keys[0], values[0] = keys[size], values[size]
    at = 0
    while True:
        left, smallest = 2 * at + 1, at
        if left < size and keys[left] < keys[smallest]:
            smallest = left
        if left + 1 < size and keys[left + 1] < keys[smallest]:
            smallest = left + 1
        if smallest == at:
            return size
        keys[smallest], keys[at] = keys[at], keys[smallest]
        values[smallest], values[at] = values[at], values[smallest]
        at = smallest


@njit(cache=True)
def dijkstra(indptr, indices, weights, source, dist, parent, keys, values):
    """Dijkstra from `source` (non-negative weights) with a binary heap and lazy deletion; keys and
    values are scratch of at least m + 1 entries."""
    dist[source] = 0.0
    size = _push(keys, values, 0, 0.0, source)
    while size > 0:
        d, u = keys[0], values[0]
        size = _pop(keys, values, size)
        if d > dist[u]:
            continue
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            through = d + weights[e]
            if through < dist[v]:
                dist[v] = through
                parent[v] = u
                size = _push(keys, values, size, through, v)


@njit(parallel=True, cache=True)
def dijkstra_from_sources(indptr, indices, weights, potential, sources, dist, parent, workers):
    """Johnson's second half: Dijkstra on the reweighted graph from each of `sources`, in parallel,
    then the potentials taken back out. Row r of dist and parent (len(sources) x n, filled here)
    is the search from sources[r] (every vertex for all pairs; scipy's `indices`; a source may
    repeat). Each worker takes every workers-th source with heap scratch of its own (allocating
    it per source inside the parallel loop cost a quarter of the run)."""
    count = sources.shape[0]
    n = dist.shape[1]
    for w in prange(workers):
        keys = np.empty(indices.shape[0] + 1)
        values = np.empty(indices.shape[0] + 1, dtype=np.int64)
        for r in range(w, count, workers):
            s = sources[r]
            row, row_parent = dist[r], parent[r]
            row[:] = np.inf
            row_parent[:] = NO_PARENT
            dijkstra(indptr, indices, weights, s, row, row_parent, keys, values)
            for v in range(n):
                if row[v] < np.inf:
                    row[v] = row[v] - potential[s] + potential[v]


@njit(cache=True, inline="always")
def _lower(bits, v, value):
    """dist[v] = min(dist[v], value) atomically, on the float's bits; True if this call lowered it.
    The comparison reads the value the compare-and-swap expects, not dist[v] again: two plain loads
    may be reordered, and a second read older than the first let a larger distance replace a
    smaller one (a lost update, 1 search in about 500 on R-MAT scale 16 under load)."""
    wanted = float_bits(value)
    while True:
        seen = load_acquire(bits, v)
        if value >= bits_float(seen):
            return False
        if compare_and_swap(bits, v, seen, wanted):
            return True


@njit(parallel=True, cache=True)
def _relax_frontier(indptr, indices, weights, dist, bits, frontier, count, pending, limit, next_frontier, next_count,
                    workers):
    """Relax every out-edge of the frontier in parallel; a lowered vertex still below `limit`
    (this bucket) joins the next frontier once, one beyond it waits (pending) for its bucket."""
    for w in prange(workers):
        for f in range(w, count, workers):
            u = frontier[f]
            du = dist[u]
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                through = du + weights[e]
                if _lower(bits, v, through):
                    if through < limit:
                        # 2: queued in this bucket; from 0 (settled) or 1 (waiting for a later bucket)
                        if compare_and_swap(pending, v, 0, 2) or compare_and_swap(pending, v, 1, 2):
                            next_frontier[fetch_add(next_count, 0, 1)] = v
                    else:
                        pending[v] = 1


@njit(cache=True)
def _bucket(dist, pending, low, limit, frontier):
    """The pending vertices whose distance falls in [low, limit): the next bucket's frontier."""
    count = 0
    for v in range(dist.shape[0]):
        if pending[v] != 0 and low <= dist[v] < limit:
            pending[v] = 0
            frontier[count] = v
            count += 1
    return count


@njit(cache=True)
def _next_low(dist, pending):
    """The smallest distance among pending vertices (inf if none)."""
    found = np.inf
    for v in range(dist.shape[0]):
        if pending[v] != 0 and dist[v] < found:
            found = dist[v]
    return found


@njit(parallel=True, cache=True)
def tight_parents(indptr, indices, weights, dist, parent):
    """parent[v] = some u with dist[u] + w(u, v) == dist[v] (an edge on a shortest path). With
    positive weights every such choice is a tree; concurrent writers of one v each write a valid one."""
    for u in prange(dist.shape[0]):
        du = dist[u]
        if du < np.inf:
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if du + weights[e] == dist[v]:
                    parent[v] = u


@njit(cache=True)
def discovery_order(indptr, indices, starts, depth_limit):
    """A first-in first-out search from `starts` (in that order): the vertices in the order it
    discovers them, the vertex that discovered each (NO_PARENT for a start and where unreached)
    and each one's level (-1: unreached). Vertices at depth_limit are not expanded. Neighbours are
    taken in row order, so rows in networkx's neighbour order give networkx's own order."""
    n = indptr.shape[0] - 1
    level = np.full(n, -1, dtype=np.int64)
    parent = np.full(n, NO_PARENT, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    tail = 0
    for s in starts:
        if level[s] < 0:
            level[s] = 0
            order[tail] = s
            tail += 1
    head = 0
    while head < tail:
        u = order[head]
        head += 1
        if level[u] >= depth_limit:
            continue
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if level[v] < 0:
                level[v] = level[u] + 1
                parent[v] = u
                order[tail] = v
                tail += 1
    return order[:tail], parent, level


@njit(parallel=True, cache=True)
def levels_from_sources(indptr, indices, sources, levels, workers):
    """Breadth-first levels (-1: unreached) from each of `sources` in parallel: row r of levels
    (len(sources) x n, filled here) is the search from sources[r]; each worker takes every
    workers-th source with a queue of its own."""
    count = sources.shape[0]
    n = levels.shape[1]
    for w in prange(workers):
        queue = np.empty(n, dtype=np.int64)
        for r in range(w, count, workers):
            row = levels[r]
            row[:] = -1
            row[sources[r]] = 0
            queue[0] = sources[r]
            head, tail = 0, 1
            while head < tail:
                u = queue[head]
                head += 1
                deeper = row[u] + 1
                for e in range(indptr[u], indptr[u + 1]):
                    v = indices[e]
                    if row[v] < 0:
                        row[v] = deeper
                        queue[tail] = v
                        tail += 1


@njit(cache=True)
def path_sums(indptr, indices, weights, parent, source, dist):
    """dist[v] = the weights along the parents' path from `source` to v, added in path order (a
    search on reweighted arcs rounds otherwise); unreached vertices (parent NO_PARENT) are left."""
    n = parent.shape[0]
    done = np.zeros(n, dtype=np.bool_)
    done[source] = True
    dist[source] = 0.0
    stack = np.empty(n, dtype=np.int64)
    for v in range(n):
        top, w = 0, v
        while not done[w] and parent[w] != NO_PARENT:
            stack[top] = w
            top += 1
            w = parent[w]
        while top > 0:
            top -= 1
            w = stack[top]
            u = parent[w]
            lightest = np.inf
            for e in range(indptr[u], indptr[u + 1]):
                if indices[e] == w and weights[e] < lightest:
                    lightest = weights[e]
            dist[w] = dist[u] + lightest
            done[w] = True
