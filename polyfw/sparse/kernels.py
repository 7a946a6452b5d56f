"""Numba CPU kernels on CSR arrays: BFS (top-down and bottom-up steps), Bellman–Ford, Dijkstra,
and Dijkstra from every source (Johnson) or from given ones, in parallel. No GIL: parallel loops
are prange, and shared writes go through the atomics of codegen.intrinsics."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from codegen.intrinsics import bits_float, compare_and_swap, cycles, fetch_add, float_bits, load_acquire

NO_PARENT = -1


#: vertices a worker gathers before it claims their places in a shared queue with one atomic add
#: (one add a vertex kept the counter's cache line moving between cores)
QUEUE_BUFFER = 256


@njit(cache=True, inline="always")
def _flush(buffer, held, queue, count):
    """The buffer's first `held` vertices onto the shared queue (count[0]: its length)."""
    if held:
        at = fetch_add(count, 0, held)
        queue[at:at + held] = buffer[:held]


@njit(cache=True, inline="always")
def _queued(buffer, held, v, queue, count):
    """v into the worker's buffer, flushed when full; the vertices the buffer holds."""
    buffer[held] = v
    held += 1
    if held == buffer.shape[0]:
        _flush(buffer, held, queue, count)
        held = 0
    return held


@njit(parallel=True, cache=True)
def top_down_step(indptr, indices, queue, count, parent, level, depth, next_queue, next_count, workers):
    """Every unvisited out-neighbour of the queue joins the next one, with the first queue vertex
    that claims it (compare-and-swap on parent) as its parent. Returns the out-degrees of those
    that joined summed (Beamer's scout count: the next step's edges, top-down)."""
    scouts = np.zeros(workers, dtype=np.int64)  # a slot a worker: Numba 0.68.0 failed to compile a reduction here
    for w in prange(workers):
        buffer = np.empty(QUEUE_BUFFER, dtype=next_queue.dtype)
        held = 0
        found = 0
        for f in range(w, count, workers):
            u = np.uint64(queue[f])  # unsigned: no wrap-around checks (bottom_up_step)
            for e in range(np.uint64(indptr[u]), np.uint64(indptr[u + np.uint64(1)])):
                v = np.uint64(indices[e])
                if parent[v] == NO_PARENT and compare_and_swap(parent, v, NO_PARENT, u):
                    level[v] = depth + 1
                    held = _queued(buffer, held, v, next_queue, next_count)
                    found += indptr[v + np.uint64(1)] - indptr[v]
        _flush(buffer, held, next_queue, next_count)
        scouts[w] = found
    return scouts.sum()


@njit(parallel=True, cache=True)
def bottom_up_step(in_indptr, in_indices, front, next_front, parent, level, depth):
    """Every unvisited vertex looks for a parent among its in-neighbours on the frontier (a bit of
    `front`: 1 bit a vertex stays in cache where a level array does not), stopping at the first;
    on large frontiers this reads far fewer edges. An iteration owns the 64 vertices of one word
    of next_front, so nothing is shared. Indices are unsigned: Numba checks a signed index for
    wrapping around, a compare and a branch in the edge loop. Returns how many joined."""
    n = np.uint64(parent.shape[0])
    one, six, low_bits = np.uint64(1), np.uint64(6), np.uint64(63)
    awake = 0
    for word in prange(next_front.shape[0]):
        bits = np.uint64(0)
        first = np.uint64(word) << six
        for v in range(first, min(first + np.uint64(64), n)):
            if parent[v] == NO_PARENT:
                for e in range(np.uint64(in_indptr[v]), np.uint64(in_indptr[v + one])):
                    u = np.uint64(in_indices[e])
                    if (front[u >> six] >> (u & low_bits)) & one:
                        parent[v] = u
                        level[v] = depth + 1
                        bits |= one << (v & low_bits)
                        awake += 1
                        break
        next_front[word] = bits
    return awake


@njit(parallel=True, cache=True)
def _front_of_level(level, depth, front):
    """front's bit v set where level[v] == depth (the queue as a bitmap, without atomics)."""
    n = level.shape[0]
    for word in prange(front.shape[0]):
        bits = np.uint64(0)
        for v in range(word * 64, min(word * 64 + 64, n)):
            if level[v] == depth:
                bits |= np.uint64(1) << np.uint64(v & 63)
        front[word] = bits


@njit(cache=True)
def _queue_of_front(front, queue):
    """The vertices of a bitmap, in order; how many."""
    count = 0
    for word in range(front.shape[0]):
        bits = front[word]
        if bits:
            for b in range(64):
                if (bits >> np.uint64(b)) & np.uint64(1):
                    queue[count] = word * 64 + b
                    count += 1
    return count


@njit(cache=True)
def _logged(log, depth, kind, step, total, frontier):
    """log with row `depth` written (the log doubled when full: a search's depth is not known ahead)."""
    if depth == log.shape[0]:
        longer = np.zeros((2 * log.shape[0], log.shape[1]), dtype=log.dtype)
        longer[:depth] = log
        log = longer
    log[depth, 0], log[depth, 1], log[depth, 2], log[depth, 3] = kind, step, total, frontier
    return log


@njit(cache=True)
def breadth_first(indptr, indices, in_indptr, in_indices, source, parent, level, alpha, beta, workers):
    """Direction-optimizing BFS (Beamer; GAPBS's schedule of steps) from `source`, whole in one call:
    top-down while the queue's out-edges (scout) are few against the edges still unchecked / alpha,
    then bottom-up while the frontier grows or holds more than n / beta vertices (alpha <= 0: top-down
    only). parent and level (NO_PARENT and -1 but at the source) are filled. Returns a row a level:
    (1 if bottom-up, the step's cycles, the level's cycles with its conversions, the next frontier)."""
    n = parent.shape[0]
    queue = np.empty(max(n, 1), dtype=indices.dtype)
    next_queue = np.empty_like(queue)
    words = (n + 63) // 64
    front = np.zeros(words, dtype=np.uint64)
    next_front = np.zeros(words, dtype=np.uint64)
    next_count = np.zeros(1, dtype=np.int64)
    log = np.zeros((32, 4), dtype=np.int64)
    queue[0], count = source, 1
    unchecked = indices.shape[0]
    scout = indptr[source + 1] - indptr[source]
    depth = 0
    while count:
        started = cycles()
        if alpha > 0 and scout > unchecked / alpha:
            _front_of_level(level, depth, front)
            awake = count
            while True:  # bottom-up steps while the frontier grows or stays large
                before = awake
                stepped = cycles()
                awake = bottom_up_step(in_indptr, in_indices, front, next_front, parent, level, depth)
                front, next_front = next_front, front
                ended = cycles()
                if awake == 0 or not (awake >= before or awake > n / beta):
                    count = _queue_of_front(front, queue)
                    log = _logged(log, depth, 1, ended - stepped, cycles() - started, awake)
                    depth += 1
                    break
                log = _logged(log, depth, 1, ended - stepped, ended - started, awake)
                depth += 1
                started = ended
            scout = 1
            continue
        unchecked -= scout
        next_count[0] = 0
        stepped = cycles()
        scout = top_down_step(indptr, indices, queue, count, parent, level, depth, next_queue, next_count, workers)
        count = next_count[0]
        queue, next_queue = next_queue, queue
        ended = cycles()
        log = _logged(log, depth, 0, ended - stepped, ended - started, count)
        depth += 1
    return log[:depth]


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
        buffer = np.empty(QUEUE_BUFFER, dtype=next_frontier.dtype)
        held = 0
        for f in range(w, count, workers):
            u = np.uint64(frontier[f])  # unsigned: no wrap-around checks (bottom_up_step)
            du = dist[u]
            for e in range(np.uint64(indptr[u]), np.uint64(indptr[u + np.uint64(1)])):
                v = np.uint64(indices[e])
                through = du + weights[e]
                if _lower(bits, v, through):
                    if through < limit:
                        # 2: queued in this bucket; from 0 (settled) or 1 (waiting for a later bucket)
                        if compare_and_swap(pending, v, 0, 2) or compare_and_swap(pending, v, 1, 2):
                            held = _queued(buffer, held, v, next_frontier, next_count)
                    else:
                        pending[v] = 1
        _flush(buffer, held, next_frontier, next_count)


@njit(parallel=True, cache=True)
def _next_bucket(dist, pending, delta, frontier, chunks):
    """The lowest bucket of the pending vertices: its lower bound and upper limit, and its vertices
    (written to frontier, taken off pending); three parallel passes over the vertices (the lowest
    distance, each chunk's count, its vertices), a chunk a worker."""
    n = dist.shape[0]
    size = (n + chunks - 1) // chunks
    lowest = np.full(chunks, np.inf)
    for c in prange(chunks):
        found = np.inf
        for v in range(c * size, min(c * size + size, n)):
            if pending[v] != 0 and dist[v] < found:
                found = dist[v]
        lowest[c] = found
    low = lowest.min()
    if low == np.inf:
        return low, low, 0
    limit = np.inf if delta == np.inf else (np.floor(low / delta) + 1) * delta
    counts = np.zeros(chunks + 1, dtype=np.int64)
    for c in prange(chunks):
        found = 0
        for v in range(c * size, min(c * size + size, n)):
            if pending[v] != 0 and dist[v] < limit:
                found += 1
        counts[c + 1] = found
    starts = np.cumsum(counts)
    for c in prange(chunks):
        at = starts[c]
        for v in range(c * size, min(c * size + size, n)):
            if pending[v] != 0 and dist[v] < limit:
                pending[v] = 0
                frontier[at] = v
                at += 1
    return low, limit, starts[chunks]


@njit(cache=True)
def stepping(indptr, indices, weights, source, dist, delta, workers, rounds):
    """Delta-stepping from `source` in one call (dist all inf): the lowest bucket's vertices relax their
    out-edges in parallel until the bucket empties, then the next bucket. False if more than `rounds`
    frontiers were taken (rounds < 0: no bound; a negative cycle with one bucket), else True."""
    n = dist.shape[0]
    bits = dist.view(np.int64)
    pending = np.zeros(n, dtype=np.int8)  # a byte a vertex: less for the two cores to trade
    frontier = np.empty(max(n, 1), dtype=np.int64)
    next_frontier = np.empty_like(frontier)
    next_count = np.zeros(1, dtype=np.int64)
    dist[source] = 0.0
    pending[source] = 1
    taken = 0
    while True:
        low, limit, count = _next_bucket(dist, pending, delta, frontier, workers)
        if count == 0:
            return True
        while count:
            taken += 1
            if 0 <= rounds < taken:
                return False
            next_count[0] = 0
            _relax_frontier(indptr, indices, weights, dist, bits, frontier, count, pending, limit, next_frontier,
                            next_count, workers)
            count = next_count[0]
            for f in range(count):
                pending[next_frontier[f]] = 0
            frontier, next_frontier = next_frontier, frontier


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
