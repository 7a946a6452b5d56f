"""Graph500's Kronecker (R-MAT) generator: the graphs BFS and SSSP are measured on.

Each edge picks one quadrant of the adjacency matrix per bit of the vertex
number, with probabilities A, B, C and D = 1 - A - B - C (0.57, 0.19,
0.19, 0.05); the vertex numbers are then permuted at random and the edge
list shuffled, so that neither position nor order gives the structure away.
Self-loops and repeated edges stay in the list, as Graph500 specifies (the
kernels ignore them); the graph is read as undirected.
"""
from __future__ import annotations

import numpy as np

from ..graphs import Edges

A, B, C = 0.57, 0.19, 0.19


def rmat_edges(scale: int, edge_factor: int = 16, seed: int = 0, weighted: bool = False) -> Edges:
    """2**scale vertices and edge_factor * 2**scale edges; weighted: integer weights 1..255 (exact
    in every dtype; Graph500's SSSP draws them from [0, 1))."""
    if not isinstance(scale, int) or not 1 <= scale <= 30:
        raise ValueError(f"scale must be an int in 1..30, got {scale!r}")
    rng = np.random.default_rng(seed)
    n, m = 2**scale, edge_factor * 2**scale
    source = np.zeros(m, dtype=np.int64)
    target = np.zeros(m, dtype=np.int64)
    for bit in range(scale):
        row = rng.random(m) > A + B  # the lower half: quadrant C or D
        column = rng.random(m) > np.where(row, C / (1 - A - B), A / (A + B))
        source |= row.astype(np.int64) << bit
        target |= column.astype(np.int64) << bit
    label = rng.permutation(n)
    order = rng.permutation(m)
    weight = rng.integers(1, 256, size=m).astype(np.float64) if weighted else np.ones(m)
    return Edges(n, label[source][order], label[target][order], weight)
