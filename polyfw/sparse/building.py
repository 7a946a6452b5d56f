"""Compressed rows from arcs in any order, compiled: each arc counted and placed in its source's row,
each row sorted by target, and a repeated target cut to its lightest weight.

numpy's lexsort of (source, target, weight) did the same in 30 s for a Kronecker scale-20 graph read
as undirected (33.5M arcs, 2 threads), minutes at scale 22; GAPBS's builder takes seconds. A row is
short on average, so sorting rows one by one (in parallel) costs little next to one sort of every arc.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from codegen.intrinsics import fetch_add
from tiling.code_cache import parallel_above

#: rows up to this long are sorted by insertion; longer ones (a Kronecker graph's hubs) by argsort
INSERTION_ROW = 32


def rows_of_arcs(n: int, source: np.ndarray, target: np.ndarray, weight: np.ndarray,
                 index_dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr, indices, weights) of the arcs: rows by source, sorted by target, each (source, target)
    pair once with its lightest weight; indices of `index_dtype`."""
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(source, minlength=n), out=indptr[1:])
    targets, weights = np.empty(len(target), dtype=index_dtype), np.empty(len(target), dtype=np.float64)
    _placed(source, target, weight, indptr[:-1].copy(), targets, weights)
    kept = np.empty(n, dtype=np.int64)
    _sorted_rows(targets, weights, indptr, kept)
    if kept.sum() == len(target):  # no repeats: the rows are the answer
        return indptr, targets, weights
    packed = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(kept, out=packed[1:])
    indices, lightest = np.empty(int(packed[-1]), dtype=index_dtype), np.empty(int(packed[-1]), dtype=np.float64)
    _packed_rows(targets, weights, indptr, packed, indices, lightest)
    return packed, indices, lightest


@parallel_above()
def _placed(source, target, weight, cursor, targets, weights):
    """Each arc into the next free place of its source's row (cursor: each row's next place; the
    order within a row is any, as the rows are sorted next)."""
    for a in prange(source.shape[0]):
        at = fetch_add(cursor, source[a], 1)
        targets[at] = target[a]
        weights[at] = weight[a]


@parallel_above()
def _sorted_rows(targets, weights, indptr, kept):
    """Each row sorted by target in place, its repeated targets cut to the lightest at the row's front;
    kept[v]: how many row v keeps."""
    for v in prange(indptr.shape[0] - 1):
        first, last = indptr[v], indptr[v + 1]
        if last - first <= INSERTION_ROW:
            _insertion_sorted(targets, weights, first, last)
        else:
            order = np.argsort(targets[first:last]) + first
            targets[first:last], weights[first:last] = targets[order], weights[order]
        end = first
        for e in range(first, last):
            if end > first and targets[end - 1] == targets[e]:
                weights[end - 1] = min(weights[end - 1], weights[e])
            else:
                targets[end], weights[end] = targets[e], weights[e]
                end += 1
        kept[v] = end - first


@njit(cache=True, inline="always")
def _insertion_sorted(targets, weights, first, last):
    """targets[first:last] sorted, weights moved with them."""
    for e in range(first + 1, last):
        t, w = targets[e], weights[e]
        at = e
        while at > first and targets[at - 1] > t:
            targets[at], weights[at] = targets[at - 1], weights[at - 1]
            at -= 1
        targets[at], weights[at] = t, w


@parallel_above()
def _packed_rows(targets, weights, indptr, packed, indices, lightest):
    """The rows' kept fronts, one after another (packed: their new offsets)."""
    for v in prange(indptr.shape[0] - 1):
        at = indptr[v]
        for e in range(packed[v], packed[v + 1]):
            indices[e], lightest[e] = targets[at], weights[at]
            at += 1
