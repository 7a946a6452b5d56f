"""How much of blocked FW's product work a sparse graph leaves to run.

The product kernel skips a DD tile-layer (K, I, J) when block (I, K) or block (K, J) holds no path
(codegen.kernels.holds_no_path), and a block's emptiness at pivot block K is reachability through
the vertices before K's. So the share of tile-layers that run is counted exactly by Warshall's
algorithm on bit-packed rows (64 vertices a word), reading the blocks' emptiness before each pivot
block: n^3 / 64 word operations at most, fewer where few rows reach a pivot (nested-dissection
order). On a 2-core Xeon: 20-60 ms for the Minnesota road network (2,642 vertices; 14.5% of the
128-wide DD tile-layers run), 0.12-0.2 s for the power grid (4,941; 12.7%). Blocks alone would bound
it loosely: their Warshall said 46% for the road network, since paths into K and out of K that meet
at no vertex of K join nothing.

The cost model does not read it yet: benchmarks/method_choice.py shows dense runs taking 3-7x what
this share of the product time predicts (the skipped tile-layers' checks and the panels cost what
the model does not price), which would send method='auto' the wrong way on the power grid.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange


def product_share(n: int, source: np.ndarray, target: np.ndarray, tile: int) -> float:
    """The share of DD tile-layers blocked FW runs in tiles of `tile` on the graph of these arcs, in
    the order its vertices are numbered (1.0 with fewer than 3 blocks a side)."""
    blocks = -(-n // tile)
    if blocks < 3:
        return 1.0
    return _run_share(n, np.asarray(source, dtype=np.int64), np.asarray(target, dtype=np.int64), tile)


@njit(cache=True)
def _has(rows, i, v):
    return (rows[i, v >> 6] >> np.uint64(v & 63)) & np.uint64(1)


@njit(parallel=True, cache=True)
def _run_share(n, source, target, tile):
    words, blocks = (n + 63) // 64, -(-n // tile)
    rows = np.zeros((n, words), dtype=np.uint64)
    for v in range(n):
        rows[v, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
    for e in range(len(source)):
        rows[source[e], target[e] >> 6] |= np.uint64(1) << np.uint64(target[e] & 63)
    run = 0
    into = np.zeros(blocks, dtype=np.bool_)  # block I reaches a vertex of K
    out_of = np.zeros(blocks, dtype=np.bool_)  # K reaches a vertex of block J
    for kb in range(blocks):
        k0, k1 = kb * tile, min(kb * tile + tile, n)
        into[:] = False
        out_of[:] = False
        for i in range(n):
            for k in range(k0, k1):
                if _has(rows, i, k):
                    into[i // tile] = True
                    break
        for k in range(k0, k1):
            for j in range(n):
                if not out_of[j // tile] and _has(rows, k, j):
                    out_of[j // tile] = True
        run += (into.sum() - into[kb]) * (out_of.sum() - out_of[kb])
        # pivot block K: its own rows first (in order), then every other row at once
        for k in range(k0, k1):
            for i in range(k0, k1):
                if _has(rows, i, k):
                    _or_row(rows, i, k, words)
        for i in prange(n):
            if i < k0 or i >= k1:
                for k in range(k0, k1):
                    if _has(rows, i, k):
                        _or_row(rows, i, k, words)
    return run / (blocks * (blocks - 1) ** 2)


@njit(cache=True)
def _or_row(rows, i, k, words):
    for w in range(words):
        rows[i, w] |= rows[k, w]
