"""Strongly connected parts of a graph on packed rows, and reachability through them.

Every vertex of a strongly connected part reaches what every other one reaches, so a closure need only
be taken over the condensation: one vertex a part, an arc where some arc joins two parts (Purdom's
observation). A random digraph with four arcs a vertex puts about 96% of its vertices in one part:
Warshall on the condensation is then a closure of a few hundred vertices instead of thousands, and the
n x n answer is copied out of it row by row.

The parts are Tarjan's, found by one depth-first search over the rows packed 64 vertices a word
(codegen.packed_kernels' layout): a vertex's unvisited successors are one AND-NOT a word, and only the arcs
inside a part are walked bit by bit, so the search costs n * ceil(n / 64) word reads plus the arcs the
condensation drops. The parts are numbered in topological order: every arc goes from a part to itself or
to a later one, and the condensation's matrix is upper triangular.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from codegen.intrinsics import trailing_zeros
from tiling.code_cache import parallel_above

#: a bit of the condensation's making or unpacking costs about as much as this many pair-updates of
#: Warshall on packed rows (a bit: a scalar load and OR; a pair-update: 1/64 of a vector lane's OR)
_PAIR_UPDATES_A_BIT = 4096

#: answers of at least this many vertices are copied out by every thread (at n = 4096 0.29 ms against 0.77 for
#: one, numpy's take, on 2 Zen 4 cores; a tie at 2048, and below it waking the threads costs more than they copy)
COPIED_IN_PARALLEL_FROM = 2048

_ONE = np.uint64(1)


@njit(cache=True)
def _parts_found(words, n):
    """Tarjan's search over the packed rows: each vertex's part, numbered as the search closes them (an
    arc never goes to a later part), and how many parts there are.

    A vertex's unvisited successors are its row AND-NOT the visited bits, a word at a time; once a word
    holds none, its successors still on the stack lower the vertex's link (an arc to a vertex on the
    stack stays inside one part, so these bits are the arcs the condensation drops)."""
    width = words.shape[1]
    visited = np.zeros(width, dtype=np.uint64)
    on_stack = np.zeros(width, dtype=np.uint64)
    index = np.empty(n, dtype=np.int64)
    link = np.empty(n, dtype=np.int64)
    part = np.empty(n, dtype=np.int64)
    path = np.empty(n, dtype=np.int64)  # the search's own stack, and the word each vertex has reached
    at_word = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)  # Tarjan's: the vertices of parts not yet closed
    found = held = parts = 0
    for root in range(n):
        if (visited[root >> 6] >> np.uint64(root & 63)) & _ONE:
            continue
        top = -1
        u = root
        while True:
            if u >= 0:  # enter u
                index[u] = link[u] = found
                found += 1
                visited[u >> 6] |= _ONE << np.uint64(u & 63)
                on_stack[u >> 6] |= _ONE << np.uint64(u & 63)
                stack[held] = u
                held += 1
                top += 1
                path[top], at_word[top] = u, 0
            v, w = path[top], at_word[top]
            u = -1
            while w < width:
                fresh = words[v, w] & ~visited[w]
                if fresh:
                    u = w * 64 + trailing_zeros(fresh)
                    break
                inside = words[v, w] & on_stack[w]
                while inside:
                    link[v] = min(link[v], index[w * 64 + trailing_zeros(inside)])
                    inside &= inside - _ONE
                w += 1
            at_word[top] = w
            if u >= 0:
                continue
            top -= 1  # v is finished
            if link[v] == index[v]:
                while True:
                    held -= 1
                    x = stack[held]
                    on_stack[x >> 6] &= ~(_ONE << np.uint64(x & 63))
                    part[x] = parts
                    if x == v:
                        break
                parts += 1
            if top < 0:
                break
            link[path[top]] = min(link[path[top]], link[v])
    return part, parts


def strong_components(words: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """(part of each vertex, number of parts) of the graph whose rows `words` holds packed, the parts
    numbered in topological order (an arc never goes to an earlier part)."""
    part, parts = _parts_found(words, n)
    return parts - 1 - part, parts


@njit(cache=True)
def _joined_rows(words, part, parts):
    """Per part, the OR of its vertices' rows: what its vertices reach in one arc."""
    joined = np.zeros((parts, words.shape[1]), dtype=np.uint64)
    for v in range(len(part)):
        for w in range(words.shape[1]):
            joined[part[v], w] |= words[v, w]
    return joined


@njit(cache=True)
def _condensed(joined, part, size):
    """The condensation's packed rows, `size` vertices wide (a part's row: the parts its vertices' arcs
    reach, itself included)."""
    out = np.zeros((size, -(-size // 64)), dtype=np.uint64)
    for p in range(joined.shape[0]):
        for w in range(joined.shape[1]):
            bits = joined[p, w]
            while bits:
                q = part[w * 64 + trailing_zeros(bits)]
                out[p, q >> 6] |= _ONE << np.uint64(q & 63)
                bits &= bits - _ONE
    return out


def condensation(words: np.ndarray, n: int, size_for) -> tuple[np.ndarray, np.ndarray] | None:
    """(the condensation's packed rows, each vertex's part) where taking the closure through it costs less
    than over the n rows, else None. `size_for(parts)`: the number of vertices the closure is run on (its
    rows padded with parts of no arcs, so that few sizes are compiled)."""
    part, parts = strong_components(words, n)
    size = size_for(parts)
    # a part's row is made from at most n bits and unpacked into n bools
    if 2 * parts * n * _PAIR_UPDATES_A_BIT >= n ** 3 - size ** 3:
        return None
    return _condensed(_joined_rows(words, part, parts), part, size), part


@njit(cache=True)
def _part_rows(closure, part, n):
    """Each part's row of the answer as n bools: what a vertex of the part reaches (its closure row
    unpacked once, then read at each vertex's part)."""
    parts = part.max() + 1
    rows = np.empty((parts, n), dtype=np.bool_)
    reached = np.empty(parts, dtype=np.bool_)
    for p in range(parts):
        for q in range(parts):
            reached[q] = (closure[p, q >> 6] >> np.uint64(q & 63)) & _ONE
        for j in range(n):
            rows[p, j] = reached[part[j]]
    return rows


@parallel_above(COPIED_IN_PARALLEL_FROM ** 2)
def _copy_rows(out, rows, part):
    for i in prange(len(part)):
        out[i, :] = rows[part[i]]


def expanded(closure: np.ndarray, part: np.ndarray, n: int) -> np.ndarray:
    """The n x n bool reachability matrix from the condensation's closure: vertex i reaches vertex j
    where i's part reaches j's."""
    out = np.empty((n, n), dtype=bool)
    _copy_rows(out, _part_rows(closure, part, n), part)
    return out
