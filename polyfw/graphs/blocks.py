"""How much of blocked FW's work a sparse graph leaves to run.

The product kernel skips a tile-layer (K, I, J) when block (I, K) or block (K, J) holds no path
(codegen.kernels.holds_no_path). Block (I, K) holds a path at pivot block K when a vertex of I reaches
one of K through the vertices before K's alone, and on an undirected graph that is a question of
connected components: a vertex reaches K when it has an arc into K, or it is in (or next to) a
component of the vertices before K that K is next to. A union-find over the vertices in their order
answers it for every block in O(Q (n + m)) steps (Q blocks a side): 2-8 ms for the Minnesota road
network (2,642 vertices: 14.5% of the 128-wide DD tile-layers run) and the power grid (4,941: 12.7%)
on a 2-core Zen 3, where Warshall's algorithm on packed rows took 60-230 ms. A directed graph is read
as undirected: its count is then an upper bound. Blocks alone would bound it loosely (46% for the road
network), since paths into K and out of K that meet at no vertex of K join nothing.

method='auto' prices a dense run by what runs (polyfw.method.choose_method).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit


@dataclass(frozen=True)
class TileLayers:
    """Which of blocked FW's tile-layers run on a graph, in tiles of `tile`: a product kernel skips one
    whose operand block holds no path. The pivot tile-layers always run."""

    tile: int
    #: blocks a side
    blocks: int
    #: the share of the 2 Q (Q - 1) panel tile-layers (row and column panels) that run
    panels: float
    #: the share of the Q (Q - 1)^2 DD tile-layers that run
    dd: float

    def rounded(self) -> TileLayers:
        """The shares to three places: what a choice made from them may be kept by."""
        return TileLayers(self.tile, self.blocks, round(self.panels, 3), round(self.dd, 3))

    @property
    def work(self) -> float:
        """The share of all Q^3 tile-layers' relaxations that run (every tile taken as full)."""
        q = self.blocks
        return (q + 2 * q * (q - 1) * self.panels + q * (q - 1) ** 2 * self.dd) / q**3


def tile_layers_run(n: int, source: np.ndarray, target: np.ndarray, tile: int) -> TileLayers:
    """Which tile-layers blocked FW runs in tiles of `tile` on the graph of these arcs, in the order its
    vertices are numbered (all of them with fewer than 3 blocks a side): exact when every arc's reverse
    is an arc too, else at most that many (the graph is read as undirected)."""
    blocks = -(-n // tile)
    if blocks < 3:
        return TileLayers(tile, blocks, 1.0, 1.0)
    source, target = np.asarray(source, dtype=np.int64), np.asarray(target, dtype=np.int64)
    reaching = _blocks_reaching(n, *_neighbours(n, np.concatenate([source, target]),
                                                np.concatenate([target, source])), tile)
    return TileLayers(tile, blocks, int(reaching.sum()) / (blocks * (blocks - 1)),
                      int((reaching * reaching).sum()) / (blocks * (blocks - 1) ** 2))


@njit(cache=True)
def _neighbours(n, source, target):
    """The arcs as adjacency lists (offsets, vertices)."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    for e in range(len(source)):
        offsets[source[e] + 1] += 1
    for v in range(n):
        offsets[v + 1] += offsets[v]
    filled = offsets[:-1].copy()
    vertices = np.empty(len(source), dtype=np.int64)
    for e in range(len(source)):
        vertices[filled[source[e]]] = target[e]
        filled[source[e]] += 1
    return offsets, vertices


@njit(cache=True)
def _root(parent, v):
    while parent[v] != v:
        parent[v] = parent[parent[v]]
        v = parent[v]
    return v


@njit(cache=True)
def _blocks_reaching(n, offsets, vertices, tile):
    """For each pivot block K, how many other blocks have a vertex with a path into K through the
    vertices before K's (on an undirected graph, as many as K reaches: its panels that run)."""
    blocks = -(-n // tile)
    reaching = np.zeros(blocks, dtype=np.int64)
    parent = np.arange(n)  # components of the graph on the vertices before the pivot block
    touched = np.full(n, -1)  # a component's root -> the last pivot block one of its vertices neighbours
    near = np.full(n, -1)  # a vertex -> the last pivot block it neighbours
    for kb in range(blocks):
        k0, k1 = kb * tile, min(kb * tile + tile, n)
        for k in range(k0, k1):
            for e in range(offsets[k], offsets[k + 1]):
                u = vertices[e]
                near[u] = kb
                if u < k0:
                    touched[_root(parent, u)] = kb
        for ib in range(blocks):
            if ib == kb:
                continue
            for i in range(ib * tile, min(ib * tile + tile, n)):
                if _reaches(i, kb, k0, parent, touched, near, offsets, vertices):
                    reaching[kb] += 1
                    break
        for v in range(k0, k1):  # K's vertices join the components before the next pivot block
            for e in range(offsets[v], offsets[v + 1]):
                if vertices[e] < k1:
                    parent[_root(parent, vertices[e])] = _root(parent, v)
    return reaching


@njit(cache=True)
def _reaches(i, kb, k0, parent, touched, near, offsets, vertices):
    """Whether vertex i has a path to pivot block kb through vertices before k0 alone: an arc into the
    block, or a component of those vertices that i is in or neighbours and that the block neighbours."""
    if near[i] == kb:
        return True
    if i < k0:
        return touched[_root(parent, i)] == kb
    for e in range(offsets[i], offsets[i + 1]):
        u = vertices[e]
        if u < k0 and touched[_root(parent, u)] == kb:
            return True
    return False
