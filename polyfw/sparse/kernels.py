"""Numba CPU kernels on CSR arrays: BFS (top-down and bottom-up steps), Bellman–Ford, Dijkstra,
delta-stepping, and Dijkstra (or BFS, where every weight is equal) from every source (Johnson)
or from given ones, in parallel. No GIL: parallel loops are prange (with prange_only: no parallel
loop Numba would add on its own), shared writes go through the atomics of codegen.intrinsics, and
a BFS or delta-stepping search runs whole in one parallel region, as a team (polyfw.sparse.team)
whose member is inlined into the region's body (compiled there, the same loops ran 1.3-1.6x faster
than as a function the body calls). What a member runs rarely (the far set's passes, the team's
barrier) stays a call, and the hot relaxation is inlined at one place: Numba copies an inlined body
at every call site and its parallel passes grow with the region, so two copies more of each had
doubled a search's compile time (25-28 s a signature against 14-16 on Zen 4) at the same speed."""
from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from codegen.intrinsics import (bits_float, compare_and_swap, cycles, fence, fetch_add, float_bits, load_acquire,
                                prange_only, prefetch_read, trailing_zeros)
from tiling.code_cache import parallel_above

from .team import APPENDED, LOWEST, NOTHING_LOWER, STEP_ROWS, SUMMED, TEAM_WORDS, join, lower, next_step, step_rows

NO_PARENT = -1
#: an int32 distance's 'unreached' (delta-stepping on integer weights: GAPBS's int32 distances, half
#: the bytes of a float64 a vertex)
UNREACHED_INT32 = np.iinfo(np.int32).max
#: a row's lightest entries that lightest_first puts ahead of the rest, sorted: a vertex's parent on a
#: shortest path is nearly always among them (Kronecker scale 20, weights 1-255: a parent pull read 4.8
#: in-edges a reached vertex, against 22 in target order and 1.2 with whole rows sorted, which took 5x
#: as long to copy; 16 ahead saved a Kronecker pull 1.6 ms more and cost its copy 30 ms more)
LIGHTEST_AHEAD = 8


#: vertices a worker gathers before it claims their places in a shared queue with one atomic add
#: (one add a vertex kept the counter's cache line moving between cores)
QUEUE_BUFFER = 256
#: frontier vertices a worker claims at a time, at most (GAPBS's dynamic schedule, chunks of 64): a
#: Kronecker graph's hubs make equal shares of vertices unequal shares of edges
CLAIM = 64


@njit(cache=True, inline="always")
def _next_claim(claimed, claim, count):
    """The next `claim` work items [first, last) off the shared counter; first >= count: none are left."""
    first = fetch_add(claimed, 0, claim)
    return first, min(first + claim, count)


@njit(cache=True, inline="always")
def _claim_size(count, workers):
    """Vertices a claim: CLAIM, but fewer on a small frontier, which would otherwise go to one worker whole."""
    return max(1, min(CLAIM, count // (2 * workers)))
#: a step or round on at most this many edges runs on the calling thread: waking the pool for a
#: parallel region costs tens of microseconds under passive waiting, as much as a few thousand edges
SERIAL_EDGES = 4096
#: frontier-bitmap words a bottom-up worker claims at a time (GAPBS: 1,024 vertices)
WORD_CLAIM = 64


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


@njit(cache=True, inline="always")
def _top_down_share(indptr, indices, queue, head, count, parent, level, levels, wide, depth, row, claim):
    """A worker's part of a top-down step: claims of the frontier queue[head:head + count] until none are
    left. Every unvisited out-neighbour is appended to the queue after it (row[APPENDED]: how many are),
    with the first frontier vertex that claims it (compare-and-swap on parent) as its parent, and its
    level (_put_level). Returns
    the out-degrees of those that joined summed (Beamer's scout count: the next step's edges,
    top-down), read from the parent each unvisited vertex holds (minus its out-degree, minus 1:
    _unvisited_share), not from two more rows of indptr."""
    buffer = np.empty(QUEUE_BUFFER, dtype=queue.dtype)
    next_queue = queue[head + count:]
    appended = row[APPENDED:]
    held = 0
    found = 0
    while True:
        first, last = _next_claim(row, claim, count)
        if first >= count:
            break
        for f in range(head + first, head + last):
            u = np.uint64(queue[f])  # unsigned: no wrap-around checks (_bottom_up_share)
            for e in range(np.uint64(indptr[u]), np.uint64(indptr[u + np.uint64(1)])):
                v = np.uint64(indices[e])
                unvisited = parent[v]
                if unvisited < 0 and compare_and_swap(parent, v, unvisited, u):
                    _put_level(level, levels, wide, v, depth + 1)
                    held = _queued(buffer, held, v, next_queue, appended)
                    found += -1 - unvisited
    _flush(buffer, held, next_queue, appended)
    return found


@njit(cache=True, inline="always")
def _bottom_up_share(in_indptr, in_indices, front, next_front, parent, level, levels, wide, depth, claimed):
    """A worker's part of a bottom-up step: every unvisited vertex of the words it claims (WORD_CLAIM at
    a time; it owns their vertices, so nothing is shared) looks for a parent among its in-neighbours on
    the frontier (a bit of `front`: 1 bit a vertex stays in cache where a level array does not),
    stopping at the first; on large frontiers this reads far fewer edges. Indices are unsigned: Numba
    checks a signed index for wrapping around, a compare and a branch in the edge loop. Returns how
    many joined."""
    n = np.uint64(parent.shape[0])
    words = next_front.shape[0]
    one, six, low_bits = np.uint64(1), np.uint64(6), np.uint64(63)
    awake = 0
    while True:
        first_word, last_word = _next_claim(claimed, WORD_CLAIM, words)
        if first_word >= words:
            return awake
        for word in range(first_word, last_word):
            bits = np.uint64(0)
            first = np.uint64(word) << six
            for v in range(first, min(first + np.uint64(64), n)):
                if parent[v] < 0:
                    for e in range(np.uint64(in_indptr[v]), np.uint64(in_indptr[v + one])):
                        u = np.uint64(in_indices[e])
                        if (front[u >> six] >> (u & low_bits)) & one:
                            parent[v] = u
                            _put_level(level, levels, wide, v, depth + 1)
                            bits |= one << (v & low_bits)
                            awake += 1
                            break
            next_front[word] = bits


@njit(cache=True, inline="always")
def _claimed_vertices(claimed, n):
    """The next WORD_CLAIM words' vertices [first, last) off the shared counter; first >= n: none are left."""
    first, last = _next_claim(claimed, WORD_CLAIM, (n + 63) // 64)
    return first * 64, min(last * 64, n)


@njit(cache=True, inline="always")
def _unvisited_share(indptr, parent, levels, source, claimed):
    """parent[v] = -1 - out-degree(v) (GAPBS's trick): negative marks v unvisited, and the
    compare-and-swap that claims v reads its degree with it; levels[v] its dtype's largest value
    (unreached); the source its own parent, at level 0."""
    n = parent.shape[0]
    unreached = np.iinfo(levels.dtype).max
    while True:
        first, last = _claimed_vertices(claimed, n)
        if first >= n:
            return
        for v in range(np.uint64(first), np.uint64(last)):  # unsigned (_bottom_up_share): 4.7x as fast
            parent[v] = -1 - (indptr[v + np.uint64(1)] - indptr[v])
        for v in range(np.uint64(first), np.uint64(last)):  # apart: each loop is vectorized
            levels[v] = unreached
        if first <= source < last:
            parent[source], levels[source] = source, 0


@njit(cache=True, inline="always")
def _put_level(level, levels, wide, v, depth):
    """v's level: in `levels`, one byte a vertex (the search's random writes stay in cache), until the
    search is `wide` (deeper than levels' dtype holds: _widened_share), then in `level`."""
    if wide:
        level[v] = depth
    else:
        levels[v] = depth


@njit(cache=True, inline="always")
def _widened_share(levels, level, claimed):
    """level = levels, unreached (levels' largest value) as -1: the search goes on in `level`."""
    n = levels.shape[0]
    unreached = np.iinfo(levels.dtype).max
    while True:
        first, last = _claimed_vertices(claimed, n)
        if first >= n:
            return
        for v in range(np.uint64(first), np.uint64(last)):
            level[v] = -1 if levels[v] == unreached else np.int32(levels[v])


@njit(cache=True, inline="always")
def _front_of_level_share(level, levels, wide, depth, front, claimed):
    """front's bit v set where v's level is depth (the queue as a bitmap, without atomics)."""
    n, six = np.uint64(levels.shape[0]), np.uint64(6)
    while True:
        first, last = _claimed_vertices(claimed, levels.shape[0])
        if first >= levels.shape[0]:
            return
        for word in range(np.uint64(first) >> six, (np.uint64(last) + np.uint64(63)) >> six):
            start, bits = word << six, np.uint64(0)
            if wide:
                for i in range(np.uint64(0), min(np.uint64(64), n - start)):
                    bits |= np.uint64(level[start + i] == depth) << i
            else:  # unsigned, compared in levels' dtype, no branch: 3.2x as fast (Kronecker 16, one thread)
                for i in range(np.uint64(0), min(np.uint64(64), n - start)):
                    bits |= np.uint64(levels[start + i] == levels.dtype.type(depth)) << i
            front[word] = bits


@njit(cache=True, inline="always")
def _queue_of_front_share(front, queue, at, indptr, row):
    """The vertices of the bitmap's words a worker claims, appended to the queue from `at` on
    (row[APPENDED]: how many are); returns their out-edges (whether the next top-down step is worth a team)."""
    n = front.shape[0] * 64
    next_queue = queue[at:]
    appended = row[APPENDED:]
    buffer = np.empty(QUEUE_BUFFER, dtype=queue.dtype)
    held = edges = 0
    while True:
        first, last = _claimed_vertices(row, n)
        if first >= n:
            break
        for word in range(first // 64, (last + 63) // 64):
            bits = front[word]
            while bits:
                v = word * 64 + trailing_zeros(bits)
                bits &= bits - np.uint64(1)
                edges += indptr[v + 1] - indptr[v]
                held = _queued(buffer, held, v, next_queue, appended)
    _flush(buffer, held, next_queue, appended)
    return edges


@njit(cache=True, inline="always")
def _settled_share(parent, claimed):
    """The search's last step: every vertex it left unvisited back to NO_PARENT."""
    n = parent.shape[0]
    while True:
        first, last = _claimed_vertices(claimed, n)
        if first >= n:
            return
        for v in range(np.uint64(first), np.uint64(last)):  # unsigned: vectorized, 7x as fast
            parent[v] = max(parent[v], NO_PARENT)  # no branch: unvisited is random to the predictor


@njit(cache=True, inline="always")
def _summed(rows, step, part):
    """A worker's part of step `step`'s sum added in."""
    fetch_add(rows[step % STEP_ROWS], SUMMED, part)


@njit(cache=True, inline="always")
def _widened(levels, level, wide, depth, team, size, rank, rows, step):
    """(wide, step): before a step writes a level levels' dtype cannot hold (its largest value is
    unreached), the team copies levels into level (_widened_share) and the search goes on there."""
    if wide or depth + 1 < np.iinfo(levels.dtype).max:
        return wide, step
    _widened_share(levels, level, rows[step % STEP_ROWS])
    return True, next_step(team, size, rank, rows, step)


@njit(cache=True, inline="always")
def _search_levels(rank, size, indptr, indices, in_indptr, in_indices, source, parent, level, levels, alpha, beta,
                   queue, fronts, team, rows, log):
    """A team member's part of breadth_first. Every member takes the same decisions, from sums read
    after each step's barrier; rank 0 alone writes the log. The queue is GAPBS's sliding queue: a level's
    frontier is queue[head:head + count], and the next one is appended right after it, counted in its
    step's row (each vertex joins once, so n entries hold the whole search). Returns the number of levels."""
    n = parent.shape[0]
    step = 0
    _unvisited_share(indptr, parent, levels, source, rows[step])
    if rank == 0:
        queue[0] = source
    step = next_step(team, size, rank, rows, step)
    head, count, depth = 0, 1, 0
    unchecked = indices.shape[0]
    scout = indptr[source + 1] - indptr[source]
    edges = scout  # the frontier's out-edges: a step on few of them runs on rank 0 alone
    front, next_front = fronts[0], fronts[1]
    wide = False
    while count:
        wide, step = _widened(levels, level, wide, depth, team, size, rank, rows, step)
        started = cycles()
        if alpha > 0 and scout > unchecked / alpha:
            _front_of_level_share(level, levels, wide, depth, front, rows[step % STEP_ROWS])
            step = next_step(team, size, rank, rows, step)
            awake = count
            while True:  # bottom-up steps while the frontier grows or stays large
                wide, step = _widened(levels, level, wide, depth, team, size, rank, rows, step)
                before = awake
                stepped = cycles()
                _summed(rows, step, _bottom_up_share(in_indptr, in_indices, front, next_front, parent, level, levels,
                                                     wide, depth, rows[step % STEP_ROWS]))
                step = next_step(team, size, rank, rows, step)
                awake = rows[(step - 1) % STEP_ROWS, SUMMED]  # the step just ended
                front, next_front = next_front, front
                ended = cycles()
                depth += 1
                if awake == 0 or not (awake >= before or awake > n / beta):
                    row = rows[step % STEP_ROWS]
                    _summed(rows, step, _queue_of_front_share(front, queue, head + count, indptr, row))
                    step = next_step(team, size, rank, rows, step)
                    edges = row[SUMMED]
                    head, count = head + count, row[APPENDED]
                    if rank == 0:
                        log[depth - 1] = (1, ended - stepped, cycles() - started, awake)
                    break
                if rank == 0:
                    log[depth - 1] = (1, ended - stepped, ended - started, awake)
                started = ended
            scout = 1  # (GAPBS's: top-down next, whatever the queue's edges)
            continue
        unchecked -= scout
        stepped = cycles()
        row = rows[step % STEP_ROWS]
        if edges > SERIAL_EDGES or rank == 0:
            claim = _claim_size(count, size) if edges > SERIAL_EDGES else count
            _summed(rows, step, _top_down_share(indptr, indices, queue, head, count, parent, level, levels, wide, depth,
                                                row, claim))
        step = next_step(team, size, rank, rows, step)
        scout = edges = row[SUMMED]
        head, count = head + count, row[APPENDED]
        ended = cycles()
        depth += 1
        if rank == 0:
            log[depth - 1] = (0, ended - stepped, ended - started, count)
    _settled_share(parent, rows[step % STEP_ROWS])
    return depth


@njit(cache=True, inline="always")
def _longest_row_entry(indptr, indices, first, last, skipped):
    """The position in [first, last) of the entry whose own row is longest (the first such), other than `skipped`."""
    best, at = np.int64(-1), skipped
    for e in range(first, last):
        u = indices[e]
        length = indptr[u + 1] - indptr[u]
        if length > best and e != skipped:
            best, at = length, e
    return at


@parallel_above()
def hubs_first(indices, indptr, hubs):
    """Each row of (indptr, indices) into `hubs` with its two entries whose own rows are longest first,
    the rest behind them in their order. A bottom-up step stops at a vertex's first in-neighbour on the
    frontier, and hubs are reached early: on Kronecker graphs its large steps check fewer edges (Yasui
    et al.'s degree-ordered adjacency, in part: two entries took the whole gain of a full sort, and the
    rows keep their target order behind them). Serial below PARALLEL_FROM_ENTRIES arcs: a small graph's
    first search does not wake the pool for it."""
    for v in prange(indptr.shape[0] - 1):
        first, last = indptr[v], indptr[v + 1]
        one = two = -1
        if last - first >= 2:
            one = _longest_row_entry(indptr, indices, first, last, -1)
            two = _longest_row_entry(indptr, indices, first, last, one)
            hubs[first], hubs[first + 1] = indices[one], indices[two]
        put = first if one < 0 else first + 2
        for e in range(first, last):
            if e != one and e != two:
                hubs[put] = indices[e]
                put += 1


#: rows lightest_first handles as one parallel item: one scratch allocation for all of them
LIGHTEST_ROWS = 1024


@parallel_above()
def lightest_first(indices, weights, indptr, ahead, lightest_indices, lightest_weights):
    """Each row of (indptr, indices, weights) into (lightest_indices, lightest_weights) with its `ahead`
    lightest entries first, lightest first (of equal weights, the first in row order), then the rest in
    their order; ahead >= 1. A parent pull stops at a vertex's first tight in-edge, and the tight one is nearly
    always among the lightest (LIGHTEST_AHEAD); selecting them costs a pass over the row where a
    sort of every row took 5x as long. Serial below PARALLEL_FROM_ENTRIES arcs."""
    rows = indptr.shape[0] - 1
    for block in prange((rows + LIGHTEST_ROWS - 1) // LIGHTEST_ROWS):
        kept_weights = np.empty(ahead, dtype=weights.dtype)
        kept_at = np.empty(ahead, dtype=np.int64)
        for v in range(block * LIGHTEST_ROWS, min(rows, (block + 1) * LIGHTEST_ROWS)):
            first, last = indptr[v], indptr[v + 1]
            keep, held = min(ahead, last - first), 0
            for e in range(first, last):  # insertion into the kept entries, sorted by (weight, position)
                w = weights[e]
                if held < keep:
                    at = held
                    held += 1
                elif w < kept_weights[keep - 1]:
                    at = keep - 1
                else:
                    continue
                while at > 0 and kept_weights[at - 1] > w:
                    kept_weights[at], kept_at[at] = kept_weights[at - 1], kept_at[at - 1]
                    at -= 1
                kept_weights[at], kept_at[at] = w, e
            for j in range(keep):
                lightest_indices[first + j], lightest_weights[first + j] = indices[kept_at[j]], kept_weights[j]
            if keep < last - first:
                bound_weight, bound_at = kept_weights[keep - 1], kept_at[keep - 1]
                put = first + keep
                for e in range(first, last):
                    w = weights[e]
                    if w > bound_weight or (w == bound_weight and e > bound_at):
                        lightest_indices[put], lightest_weights[put] = indices[e], w
                        put += 1


@njit(parallel=prange_only(), cache=True)
def breadth_first(indptr, indices, in_indptr, in_indices, source, parent, level, levels, alpha, beta, workers,
                  deadline, log):
    """Direction-optimizing BFS (Beamer; GAPBS's schedule of steps) from `source`, whole in one parallel
    region (a team: polyfw.sparse.team): top-down while the queue's out-edges (scout) are few against
    the edges still unchecked / alpha, then bottom-up while the frontier grows or holds more than
    n / beta vertices (alpha <= 0: top-down only). Fills parent (NO_PARENT where unreached) and levels
    (unreached: its dtype's largest value) while the levels fit that dtype; a deeper search goes on in
    level (int32, -1 where unreached; levels then holds its first levels only). Writes a row of log a level:
    (1 if bottom-up, the step's cycles, the level's cycles with its conversions, the next frontier).
    Returns the number of levels."""
    n = parent.shape[0]
    queue = np.empty(n, dtype=indices.dtype)
    fronts = np.empty((2, (n + 63) // 64), dtype=np.uint64)
    team = np.zeros(TEAM_WORDS, dtype=np.int64)
    rows = step_rows()
    depths = np.zeros(workers, dtype=np.int64)  # a worker the team closed without reports 0
    for w in prange(workers):
        rank, size = join(team, workers, deadline)
        if rank >= 0:
            depths[w] = _search_levels(rank, size, indptr, indices, in_indptr, in_indices, source, parent, level,
                                       levels, alpha, beta, queue, fronts, team, rows, log)
    return depths.max()


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


@njit(parallel=prange_only(), cache=True)
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


@njit(parallel=prange_only(), cache=True)
def breadth_first_from_sources(indptr, indices, sources, step, unreached, dist, parent, workers):
    """A breadth-first search from each of `sources`, in parallel. Row r of dist (len(sources) x n,
    filled here) is the search from sources[r]: `step` added once a hop (1: levels; the weight of
    every edge, when all have one: Dijkstra's own sums, so the same floats, without a heap), and
    `unreached` where it does not reach. Row r of parent, when parent has rows, is the vertex that
    reached each one (NO_PARENT: none). Each worker takes every workers-th source, with a queue of its own."""
    count = sources.shape[0]
    n = dist.shape[1]
    parents = parent.shape[0] > 0
    for w in prange(workers):
        queue = np.empty(max(n, 1), dtype=indices.dtype)
        for r in range(w, count, workers):
            row = dist[r]
            row[:] = unreached
            if parents:
                parent[r, :] = NO_PARENT
            row[sources[r]] = 0
            queue[0], head, tail = sources[r], 0, 1
            while head < tail:
                u = np.uint64(queue[head])  # unsigned: no wrap-around checks (_bottom_up_share)
                head += 1
                through = row[u] + step
                for e in range(np.uint64(indptr[u]), np.uint64(indptr[u + np.uint64(1)])):
                    v = np.uint64(indices[e])
                    if row[v] == unreached:
                        row[v] = through
                        if parents:
                            parent[r, v] = u
                        queue[tail] = v
                        tail += 1


# Delta-stepping's distances come in two forms, told apart by their dtype: float64, and int32 (integer
# weights). The atomic min works on an integer view of either.


def compared_bits(dist):
    """The array a compare-and-swap on `dist` works on: a float64's bits as int64, an integer array itself."""


def entry_of(value):
    """What compared_bits holds for a distance `value`."""


def distance_in(entry, like):
    """The distance that compared_bits' `entry` holds, of the type of `like`."""


def unreached(distance):
    """Whether `distance` is the mark of a vertex no search reached yet: inf, or UNREACHED_INT32."""


@overload(compared_bits, inline="always")
def _compared_bits(dist):
    if isinstance(dist.dtype, types.Float):
        return lambda dist: dist.view(np.int64)
    return lambda dist: dist


@overload(entry_of, inline="always")
def _entry_of(value):
    if isinstance(value, types.Float):
        return lambda value: float_bits(value)
    return lambda value: value


@overload(distance_in, inline="always")
def _distance_in(entry, like):
    if isinstance(like, types.Float):
        return lambda entry, like: bits_float(entry)
    return lambda entry, like: entry


@overload(unreached, inline="always")
def _unreached(distance):
    if isinstance(distance, types.Float):
        return lambda distance: distance == np.inf
    return lambda distance: distance == UNREACHED_INT32


@njit(cache=True, inline="always")
def _lower(bits, v, value):
    """dist[v] = min(dist[v], value) atomically, on compared_bits(dist): (True if this call lowered it,
    the distance it replaced or kept). The comparison reads the value the compare-and-swap expects,
    not dist[v] again: two plain loads may be reordered, and a second read older than the first let a
    larger distance replace a smaller one (a lost update, 1 search in about 500 on R-MAT scale 16
    under load)."""
    wanted = entry_of(value)
    while True:
        seen = load_acquire(bits, v)
        before = distance_in(seen, value)
        if value >= before:
            return False, before
        if compare_and_swap(bits, v, seen, wanted):
            return True, before


@njit(cache=True)  # a call: inlined into the search's region, its loop counter lived on the stack
def _first_lowering(indices, weights, dist, du, e, end):
    """The first edge of e..end-1 whose relaxation from distance du would lower its target, or end:
    most edges lower nothing, and this scan of plain reads (a distance only falls, so a stale one only
    sends an edge on to _lower's check) runs in registers, where the relaxation's loop spilled its
    counter to memory, a store and a load on every edge's dependency chain."""
    for f in range(e, end):
        if du + weights[f] < dist[np.uint64(indices[f])]:
            return f
    return end


#: frontier vertices ahead of the one a worker relaxes whose distance and row offsets, and whose first
#: edges, it asks the caches for: a row starts wherever the offsets say, so no hardware prefetcher
#: finds it, and each vertex began with a miss to memory (Kronecker and uniform searches of scales 16
#: and 18 took 1.1-1.3x less time with these, 2 threads of an Intel Xeon)
OFFSETS_AHEAD, EDGES_AHEAD = 4, 2


@njit(cache=True, inline="always")
def _fetch_ahead(items, f, last, indptr, indices, weights, dist):
    """Prefetches for a worker at items[f] of its claim items[..last]: the distance and row offsets
    of the vertex OFFSETS_AHEAD on, the first edges of the one EDGES_AHEAD on (its offsets already
    asked for). (BFS's top-down steps took the same time with these: most of its edges are read
    bottom-up, in vertex order.)"""
    if f + OFFSETS_AHEAD < last:
        ahead = np.uint64(items[f + OFFSETS_AHEAD])
        prefetch_read(indptr, ahead)
        prefetch_read(dist, ahead)
    if f + EDGES_AHEAD < last:
        start = np.uint64(indptr[np.uint64(items[f + EDGES_AHEAD])])
        prefetch_read(indices, start)
        prefetch_read(weights, start)


#: later buckets' vertices a worker gathers before claiming their places in the bucket's slot
LATER_BUFFER = 32


@njit(cache=True, inline="always")
def _bucket_of(d, delta):
    """The bucket of distance d: floor(d / delta) (0 for every distance when delta is inf), capped below 2**62."""
    return np.int64(min(d / delta, 4.0e18))


@njit(cache=True)  # a call: inlined into both callers (with tuple arguments, in a trial), Numba misplaced its writes
def _flush_later(later, held, s, bucket, slots, slot_counts, far, far_lowest):
    """A worker's gathered vertices of slot s (bucket `bucket`) into the slot; those that do not fit
    (a slot shorter than n: paths.bucket_slots) join the far set instead."""
    count = held[s]
    if count:
        at = fetch_add(slot_counts, s, count)
        fits = max(0, min(count, slots.shape[1] - at))
        slots[s, at:at + fits] = later[s, :fits]
        for i in range(fits, count):
            far[later[s, i]] = 1
            far_lowest[0] = min(far_lowest[0], bucket)
        held[s] = 0


@njit(cache=True, inline="always")
def _relax_vertex(u, bucket, delta, indptr, indices, weights, dist, bits, queued, mine, held, queue, queue_count,
                  later, later_held, slots, slot_counts, far, far_lowest):
    """u's out-edges relaxed (unless u has since dropped to an earlier bucket). A lowered vertex joins
    this bucket's queue (once a round: queued), a later bucket's slot or, beyond the slots, the far
    set. It joins a later bucket only when the distance it had was in another one (or was none: a
    delta past half of UNREACHED_INT32 puts it in the bucket of a reached one): the lowering that
    first brought it into a bucket put it there (each such step is one compare-and-swap's), so no
    vertex is put in a bucket twice, and no byte a vertex is written to know it (the slot marks this
    replaced were written by both cores while they lowered a hub's neighbours).
    Returns how many vertices `mine` holds."""
    du = dist[u]
    if _bucket_of(du, delta) < bucket:
        return held
    window = slots.shape[0]
    e, end = np.uint64(indptr[u]), np.uint64(indptr[u + np.uint64(1)])
    while True:
        e = _first_lowering(indices, weights, dist, du, e, end)
        if e >= end:
            break
        v = np.uint64(indices[e])  # unsigned: no wrap-around checks (_bottom_up_share)
        through = du + weights[e]
        e += np.uint64(1)
        lowered, before = _lower(bits, v, through)
        if lowered:
            b = _bucket_of(through, delta)
            if b <= bucket:
                if queued[v] == 0 and compare_and_swap(queued, v, 0, 1):
                    held = _queued(mine, held, v, queue, queue_count)
            elif b - bucket < window:
                if unreached(before) or _bucket_of(before, delta) != b:
                    s = b % window
                    later[s, later_held[s]] = v
                    later_held[s] += 1
                    if later_held[s] == later.shape[1]:
                        _flush_later(later, later_held, s, b, slots, slot_counts, far, far_lowest)
            else:
                far[v] = 1
                far_lowest[0] = min(far_lowest[0], b)
    return held


@njit(cache=True, inline="always")
def _relax_share(indptr, indices, weights, dist, bits, frontier, count, bucket, delta, queued, queue, queue_count,
                 slots, slot_counts, far, far_lowest, fuse, claimed, claim):
    """A worker's part of a bucket's round: claims of the frontier until none are left. It first
    clears a claim's queued flags (then a fence: a vertex lowered after it is read queues again;
    a flag already clear is not written: its line may be the other core's).
    With `fuse`, it then relaxes the bucket's vertices it lowered itself, while they fit its buffer
    (GAPBS's bucket fusion: no round, so no parallel-region start, for them)."""
    window = slots.shape[0]
    mine = np.empty(QUEUE_BUFFER, dtype=queue.dtype)
    taken = np.empty(QUEUE_BUFFER, dtype=queue.dtype)
    later = np.empty((window, LATER_BUFFER), dtype=slots.dtype)
    later_held = np.zeros(window, dtype=np.int64)
    held = 0
    items, first, last, claiming = frontier, 0, 0, True
    while True:
        if claiming:
            first, last = _next_claim(claimed, claim, count)
            claiming = first < count
        if not claiming:  # fusion: the vertices this worker lowered into the bucket, a buffer at a time
            if not (fuse and held):
                break
            taken[:held] = mine[:held]
            items, first, last, held = taken, 0, held, 0
        for f in range(first, last):
            if queued[items[f]]:
                queued[items[f]] = 0
        fence()
        for f in range(first, last):
            _fetch_ahead(items, f, last, indptr, indices, weights, dist)
            held = _relax_vertex(np.uint64(items[f]), bucket, delta, indptr, indices, weights, dist, bits, queued,
                                 mine, held, queue, queue_count, later, later_held, slots, slot_counts,
                                 far, far_lowest)
    _flush(mine, held, queue, queue_count)
    for s in range(window):
        _flush_later(later, later_held, s, bucket + (s - bucket) % window, slots, slot_counts, far, far_lowest)


@njit(cache=True)
def _edges_at_most(indptr, frontier, count, bound):
    """Whether the frontier's out-edges number at most `bound` (stops counting past it)."""
    edges = 0
    for f in range(count):
        edges += indptr[frontier[f] + 1] - indptr[frontier[f]]
        if edges > bound:
            return False
    return True


@njit(cache=True)
def _far_share(dist, far, delta, after, wanted, queued, queue, row):
    """A worker's part of a pass over the far set (claims of vertices): those of buckets up to `after`
    (done) leave it; with `wanted` >= 0, those of bucket `wanted` leave it for the queue (appended,
    row[APPENDED] counting them). row[LOWEST] is lowered to the lowest bucket of those left."""
    n = dist.shape[0]
    buffer = np.empty(QUEUE_BUFFER, dtype=queue.dtype)
    appended = row[APPENDED:]
    held, lowest = 0, NOTHING_LOWER
    while True:
        first, last = _claimed_vertices(row, n)
        if first >= n:
            break
        for v in range(np.uint64(first), np.uint64(last)):  # unsigned: no wrap-around check on each flag
            if far[v]:
                b = _bucket_of(dist[v], delta)
                if b <= after:
                    far[v] = 0
                elif b == wanted:
                    far[v] = 0
                    if queued[v] == 0:
                        queued[v] = 1
                        held = _queued(buffer, held, v, queue, appended)
                else:
                    lowest = min(lowest, b)
    _flush(buffer, held, queue, appended)
    lower(row, LOWEST, lowest)


@njit(cache=True, inline="always")
def _stepping_member(rank, size, indptr, indices, weights, dist, delta, rounds, queued, far, slots,
                     slot_counts, queues, team, rows, log):
    """A team member's part of stepping: every member takes the same decisions, from what it reads after
    each step's barrier; rank 0 alone writes the log (while it has rows) and clears a bucket's slot once
    every member has read its count. Returns (finished, rounds taken)."""
    bits = compared_bits(dist)
    window = slots.shape[0]
    fuse = rounds < 0
    mine_lowest = np.full(1, NOTHING_LOWER)  # the far set's lowest bucket this member added to it since the last pass
    far_lowest = NOTHING_LOWER  # the whole team's, read after each round
    queue, next_queue = queues[0], queues[1]
    gathered = 0  # vertices a far pass put on `queue` for the bucket about to start
    bucket, taken, step = 0, 0, 0
    started = cycles()
    while True:
        s = bucket % window
        frontier, count = slots[s], min(slot_counts[s], slots.shape[1])
        if count == 0:  # the bucket's vertices all came from the far set
            count, gathered = gathered, 0
            frontier, queue, next_queue = queue, next_queue, queue
        step = next_step(team, size, rank, rows, step)  # every member has read the slot's count
        if rank == 0:
            slot_counts[s] = 0  # nothing joins this slot before the bucket `window` ahead
        while count:
            if 0 <= rounds <= taken:
                return False, taken
            stepped = cycles()
            row = rows[step % STEP_ROWS]
            parallel = not _edges_at_most(indptr, frontier, count, SERIAL_EDGES)
            if parallel or rank == 0:
                _relax_share(indptr, indices, weights, dist, bits, frontier, count, bucket, delta, queued,
                             queue[gathered:], row[APPENDED:], slots, slot_counts, far, mine_lowest, fuse,
                             row, _claim_size(count, size) if parallel else count)
            lower(row, LOWEST, mine_lowest[0])
            step = next_step(team, size, rank, rows, step)
            far_lowest = min(far_lowest, row[LOWEST])
            ended = cycles()
            if rank == 0 and taken < log.shape[0]:
                log[taken] = (bucket, np.int64(parallel), ended - stepped, ended - started, count)
            taken += 1
            started = ended
            count, gathered = gathered + row[APPENDED], 0
            frontier, queue, next_queue = queue, next_queue, queue
        after = bucket
        bucket = NOTHING_LOWER
        for b in range(after + 1, after + window):
            if slot_counts[b % window]:
                bucket = b
                break
        if far_lowest < NOTHING_LOWER and far_lowest <= bucket:  # two passes: its lowest bucket, then its vertices
            row = rows[step % STEP_ROWS]
            _far_share(dist, far, delta, after, -1, queued, queue, row)
            step = next_step(team, size, rank, rows, step)
            bucket = min(bucket, row[LOWEST])
            row = rows[step % STEP_ROWS]
            _far_share(dist, far, delta, after, bucket, queued, queue, row)
            mine_lowest[0] = NOTHING_LOWER
            step = next_step(team, size, rank, rows, step)
            far_lowest, gathered = row[LOWEST], row[APPENDED]
        if bucket == NOTHING_LOWER:
            return True, taken


@njit(parallel=prange_only(), cache=True)
def stepping(indptr, indices, weights, source, dist, delta, window, capacity, workers, rounds, deadline, log):
    """Delta-stepping from `source` in one parallel region (a team: polyfw.sparse.team), dist all
    unreached: inf, or UNREACHED_INT32 over int32 weights no path reaches it with.
    Buckets are taken in order; a bucket's vertices relax their out-edges in rounds until it empties
    (a round on few edges by one member). A later bucket's vertices wait in its slot, one of `window`
    slots used in turn (GAPBS's bins, shared): with weights below (window - 1) * delta every bucket fits
    them, and no pass over all vertices finds the next one.
    Beyond them, or beyond a slot's `capacity` (n holds every vertex: none joins a bucket twice),
    vertices wait in a far set that a pass over all vertices collects from.
    Returns whether it finished within `rounds` rounds (rounds < 0: no bound, else no bucket fusion;
    a negative cycle with delta inf: one bucket) and how many rounds it took; log gets a row a round
    while it has rows: its bucket, 1 if it ran in parallel (0: one member), its cycles, the cycles since
    the round before (the bucket's search with them), and its frontier."""
    n = dist.shape[0]
    queued = np.zeros(n, dtype=np.int8)  # a byte a vertex: less for the two cores to trade
    far = np.zeros(n, dtype=np.int8)
    slots = np.empty((window, capacity), dtype=indices.dtype)
    slot_counts = np.zeros(window, dtype=np.int64)
    queues = np.empty((2, max(n, 1)), dtype=indices.dtype)
    dist[source] = 0
    slots[0, 0], slot_counts[0] = source, 1
    team = np.zeros(TEAM_WORDS, dtype=np.int64)
    rows = step_rows()
    results = np.zeros((workers, 2), dtype=np.int64)  # (finished, rounds) a member; zeros: not in the team
    for w in prange(workers):
        rank, size = join(team, workers, deadline)
        if rank >= 0:
            finished, taken = _stepping_member(rank, size, indptr, indices, weights, dist, delta, rounds, queued,
                                               far, slots, slot_counts, queues, team, rows, log)
            results[w, 0], results[w, 1] = finished, taken
    return results[:, 0].max() == 1, results[:, 1].max()


@parallel_above()
def float_distances(dist, unreached):
    """int32 distances as float64, unreached as inf (what every search returns). Serial below
    PARALLEL_FROM_ENTRIES vertices, as the parent passes: waking the pool cost a small search more than the pass."""
    found = np.empty(dist.shape[0])
    for v in prange(dist.shape[0]):
        d = dist[v]
        found[v] = np.inf if d == unreached else d
    return found


@parallel_above()
def tight_parents(indices, indptr, weights, dist, unreached, parent):
    """parent[v] = some u with dist[u] + w(u, v) == dist[v] (an edge on a shortest path), pushed along
    every out-edge; dist float64 or int32 (`unreached`: inf or UNREACHED_INT32). With positive weights
    every such choice is a tree; concurrent writers of one v each write a valid one."""
    for u in prange(dist.shape[0]):
        du = dist[u]
        if du != unreached:
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if du + weights[e] == dist[v]:
                    parent[v] = u


@parallel_above()
def tight_parents_pulled(in_indptr, in_indices, in_weights, dist, unreached, parent):
    """parent[v] = its first in-neighbour u with dist[u] + w(u, v) == dist[v], NO_PARENT where none is
    (v unreached, or the source): each v reads its in-edges up to the first tight one and writes its
    own parent once, where tight_parents reads every edge and writes at random. On rows from
    lightest_first the first tight one comes early. dist and unreached as tight_parents'."""
    for v in prange(dist.shape[0]):
        dv = dist[v]
        found = NO_PARENT
        if dv != unreached:
            for e in range(np.uint64(in_indptr[v]), np.uint64(in_indptr[v + 1])):
                u = np.uint64(in_indices[e])  # unsigned: no wrap-around checks (_bottom_up_share)
                if dist[u] + in_weights[e] == dv:
                    found = u
                    break
        parent[v] = found


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
