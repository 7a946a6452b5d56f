"""Graphs to run on: seeded random digraphs, PolyBench's floyd-warshall input, the Minnesota
road network and the Western US power grid."""
from __future__ import annotations

import gzip
import warnings
from importlib import resources

import numpy as np
import scipy.sparse as sp

from tiling.semirings import top

from .edges import Edges, GraphInputError


#: the weights random graphs draw from where every dtype they are solved in is exact
WEIGHTS = (1, 1000)


def exact_weights(n: int, dtype: str) -> tuple[int, int]:
    """WEIGHTS, the heaviest lowered where `dtype` would not hold every distance of an n-vertex graph
    exactly (int16: (n - 1) heaviest must stay below its INF; hop counts where nothing heavier fits)."""
    if np.dtype(dtype) != np.int16:
        return WEIGHTS
    return WEIGHTS[0], max(WEIGHTS[0], min(WEIGHTS[1], (int(top(dtype)) - 1) // max(n - 1, 1)))


def random_graph(n: int, m: int | None = None, weights: tuple[int, int] = WEIGHTS, seed: int = 0,
                 potential: int = 0) -> Edges:
    """A random directed graph with m distinct arcs (default 4n, as the DIMACS generator seed 001 used).

    Integer weights are uniform in `weights`. potential > 0 adds p(u) − p(v)
    with p uniform in [0, potential]: negative edges, yet every cycle keeps
    its weight, so no negative cycle appears.
    """
    if n < 1:
        raise GraphInputError(f"n must be at least 1, got {n}")
    m = 4 * n if m is None else m
    pairs = n * (n - 1)
    if not 0 <= m <= pairs:
        raise GraphInputError(f"m must be in 0..n(n-1) = {pairs} for n = {n}, got {m}")
    rng = np.random.default_rng(seed)
    chosen = rng.choice(pairs, size=m, replace=False) if m else np.zeros(0, dtype=np.int64)
    source = chosen // (n - 1) if n > 1 else chosen
    target = chosen % (n - 1) if n > 1 else chosen
    target = target + (target >= source)
    weight = rng.integers(weights[0], weights[1], size=m, endpoint=True)
    if potential:
        p = rng.integers(0, potential, size=n, endpoint=True)
        weight = weight + p[source] - p[target]
    return Edges(n, source.astype(np.int64), target.astype(np.int64), weight.astype(np.float64))


def polybench_matrix(n: int, dtype=np.int32) -> np.ndarray:
    """PolyBench/C 4.2's floyd-warshall input: the raw matrix the loop nest runs on (999 = far)."""
    i, j = np.indices((n, n))
    path = (i * j) % 7 + 1
    path[((i + j) % 13 == 0) | ((i + j) % 7 == 0) | ((i + j) % 11 == 0)] = 999
    return path.astype(dtype)


EARTH_RADIUS_M = 6_371_008.8


def minnesota_road_graph() -> Edges:
    """The Minnesota road network shipped with pygsp: 2,642 vertices, undirected.

    Each road segment weighs its great-circle length in whole metres, from
    the vertices' longitude/latitude; both directions are listed.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pygsp import graphs

        road = graphs.Minnesota()
    upper = sp.triu(road.W, k=1).tocoo()
    lon, lat = np.radians(road.coords[:, 0]), np.radians(road.coords[:, 1])
    u, v = upper.row, upper.col
    haversine = np.sin((lat[v] - lat[u]) / 2) ** 2 + np.cos(lat[u]) * np.cos(lat[v]) * np.sin((lon[v] - lon[u]) / 2) ** 2
    metres = np.round(2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(haversine)))
    source = np.concatenate([u, v]).astype(np.int64)
    target = np.concatenate([v, u]).astype(np.int64)
    return Edges(road.N, source, target, np.concatenate([metres, metres]))


def power_grid() -> Edges:
    """The Western US power grid of Watts and Strogatz (Nature 393, 1998; Newman's network data):
    4,941 vertices, 6,594 lines, connected, unweighted (each line weighs 1), both directions listed.
    Its all-pairs shortest paths are the small-world paper's path lengths."""
    with gzip.open(resources.files(__package__) / "power_grid.edges.gz", "rt") as lines:
        pairs = np.loadtxt(lines, dtype=np.int64, comments="#")
    source = np.concatenate([pairs[:, 0], pairs[:, 1]])
    target = np.concatenate([pairs[:, 1], pairs[:, 0]])
    return Edges(4941, source, target, np.ones(len(source)))


def molecule_like(count: int, sizes: tuple[int, int] = (10, 50), mean: float = 30, seed: int = 0
                  ) -> tuple[list[np.ndarray], np.ndarray]:
    """`count` molecule-shaped graphs as PyG-style (2, E) edge_index arrays (each bond both ways) and
    their atom counts: a random tree of atoms of valence at most 4, plus one ring-closing bond per
    ten atoms (mean degree about 2.2, as in PCQM4Mv2 or ogbg-molhiv). Sizes are normal around `mean`
    (spread a fifth of the range), clipped to `sizes`."""
    low, high = sizes
    if not (1 <= low <= high) or count < 0:
        raise GraphInputError(f"need count >= 0 and 1 <= sizes[0] <= sizes[1], got count={count}, sizes={sizes}")
    rng = np.random.default_rng(seed)
    atoms = np.clip(np.rint(rng.normal(mean, (high - low) / 5, count)), low, high).astype(np.int64)
    graphs = []
    for n in atoms:
        degree = np.zeros(n, dtype=np.int64)
        bonds = []
        for atom in range(1, n):
            candidates = np.flatnonzero(degree[:atom] < 4)
            other = int(candidates[rng.integers(candidates.size)])
            bonds.append((other, atom))
            degree[other] += 1
            degree[atom] += 1
        for _ in range(n // 10):
            open_atoms = np.flatnonzero(degree < 4)
            if open_atoms.size < 2:
                break
            u, v = rng.choice(open_atoms, 2, replace=False)
            if (u, v) not in bonds and (v, u) not in bonds:
                bonds.append((int(u), int(v)))
                degree[[u, v]] += 1
        pairs = np.array(bonds, dtype=np.int64).reshape(-1, 2).T
        graphs.append(np.concatenate([pairs, pairs[::-1]], axis=1))
    return graphs, atoms
