"""A vertex order under which blocked FW on a sparse graph skips most of its work.

Blocked FW's product kernel skips a tile-layer whose operand block holds no
path (codegen.kernels.holds_no_path). Block (I, J) holds a path at layer K only
if some vertex of I reaches some vertex of J through vertices before K's
block. Nested dissection orders each half of the graph before the separator
that joins them: while layers run inside one half, the other half's blocks
stay empty, and so on down the halves. On the Minnesota road network (2,642
vertices) that leaves about 15% of the DD tile-layers of 128-wide tiles to
run, against about 40% in the file's own order. Distances do not depend on
the order, so solve computes in it and gives the result back in the input's.

The separators are BFS levels: from a pseudo-peripheral vertex (the last one
reached by a BFS from the last one reached by a BFS), the level that splits the
part in halves by vertex count. Not METIS, but linear time and no dependency.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: parts this small are not split further (a few tiles' worth of blocks gain nothing more)
LEAF = 64
#: reorder only graphs of at least this many vertices with at most this many arcs per vertex
#: (small separators come with low degree: road networks, meshes; a dense random graph has none)
SMALLEST, MOST_ARCS_PER_VERTEX = 512, 32


def worth_reordering(n: int, arcs: int) -> bool:
    """Whether dissection is likely to pay for itself: a large graph with few arcs per vertex."""
    return n >= SMALLEST and arcs <= MOST_ARCS_PER_VERTEX * n


@njit(cache=True)
def _bfs(start, part, owner, indptr, indices, level, queue):
    """Levels from `start` over the vertices of part `owner` (level -1: unseen); returns how many
    were reached (they are queue[:reached], in BFS order)."""
    level[start] = 0
    queue[0] = start
    head, tail = 0, 1
    while head < tail:
        v = queue[head]
        head += 1
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            if part[w] == owner and level[w] < 0:
                level[w] = level[v] + 1
                queue[tail] = w
                tail += 1
    return tail


@njit(cache=True)
def _dissect(n, indptr, indices, leaf):
    order = np.empty(n, dtype=np.int64)
    part = np.zeros(n, dtype=np.int64)
    level = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    vertices = np.arange(n)
    scratch = np.empty(n, dtype=np.int64)
    # ranges of `vertices` still to order: (first, end, first output position, part)
    stack = np.empty((2 * n + 2, 4), dtype=np.int64)
    stack[0] = (0, n, 0, 0)
    depth, parts = 1, 1
    while depth > 0:
        depth -= 1
        first, end, out, owner = stack[depth]
        size = end - first
        if size <= leaf:
            order[out:out + size] = vertices[first:end]
            continue
        start = vertices[first]
        for _ in range(2):  # a pseudo-peripheral start: the far end of a BFS, twice
            reached = _bfs(start, part, owner, indptr, indices, level, queue)
            start = queue[reached - 1]
            for q in range(reached):
                level[queue[q]] = -1
        reached = _bfs(start, part, owner, indptr, indices, level, queue)
        if reached < size:  # not connected: every component its own part, one after another
            for q in range(reached):
                level[queue[q]] = -1
            depth, parts = _components(vertices, first, end, out, owner, parts, part, indptr, indices, level, queue,
                                       scratch, order, stack, depth, leaf)
            continue
        last = level[queue[reached - 1]]
        counts = np.zeros(last + 1, dtype=np.int64)
        for q in range(reached):
            counts[level[queue[q]]] += 1
        cut, seen = 0, counts[0]
        while seen < size // 2:  # the level holding the middle vertex by BFS order
            cut += 1
            seen += counts[cut]
        if cut == 0 or cut == last:  # nothing to cut (a star, a path of two levels)
            for q in range(reached):
                level[queue[q]] = -1
            order[out:out + size] = vertices[first:end]
            continue
        # group the range as [before the cut | after it | the cut], the cut (separator) ordered last
        groups = np.zeros(3, dtype=np.int64)
        for q in range(first, end):
            v = vertices[q]
            groups[_group(level[v], cut)] += 1
        offsets = np.array([first, first + groups[0], first + groups[0] + groups[1]])
        for q in range(first, end):
            v = vertices[q]
            g = _group(level[v], cut)
            scratch[offsets[g]] = v
            offsets[g] += 1
        vertices[first:end] = scratch[first:end]
        for q in range(first, end):
            part[vertices[q]] = parts + _group(level[vertices[q]], cut)
            level[vertices[q]] = -1
        below, above, separator = groups
        order[out + size - separator:out + size] = vertices[first + below + above:end]
        stack[depth] = (first + below, first + below + above, out + below, parts + 1)
        stack[depth + 1] = (first, first + below, out, parts)
        depth += 2
        parts += 3
    return order


@njit(cache=True)
def _components(vertices, first, end, out, owner, parts, part, indptr, indices, level, queue, scratch, order, stack,
                depth, leaf):
    """Split the range vertices[first:end] of part `owner` into its connected components, each a part of
    its own, placed one after another (one BFS each: linear in the range, where splitting off one
    component at a time was quadratic in their number); those above `leaf` go on the stack to be
    dissected. Returns the stack's depth and the next part number."""
    position = first
    for q in range(first, end):
        v = vertices[q]
        if part[v] != owner:  # in a component already
            continue
        found = _bfs(v, part, owner, indptr, indices, level, queue)
        for r in range(found):
            w = queue[r]
            level[w] = -1
            part[w] = parts
            scratch[position + r] = w
        if found <= leaf:
            order[out + position - first:out + position - first + found] = scratch[position:position + found]
        else:
            stack[depth] = (position, position + found, out + position - first, parts)
            depth += 1
        position += found
        parts += 1
    vertices[first:end] = scratch[first:end]
    return depth, parts


@njit(cache=True, inline="always")
def _group(level, cut):
    """0: before the cut, 1: after it, 2: on it."""
    return 0 if level < cut else (2 if level == cut else 1)


def dissection_order(n: int, source: np.ndarray, target: np.ndarray, leaf: int = LEAF) -> np.ndarray:
    """order[p] = the vertex placed at position p: nested dissection of the arcs' undirected pattern."""
    source, target = np.asarray(source, dtype=np.int64), np.asarray(target, dtype=np.int64)
    ends = np.concatenate([source, target])
    others = np.concatenate([target, source])
    by_vertex = np.argsort(ends, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(ends, minlength=n), out=indptr[1:])
    return _dissect(n, indptr, others[by_vertex], leaf)
