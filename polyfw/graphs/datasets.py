"""Graphs to run on: seeded random digraphs, PolyBench's floyd-warshall input and the Minnesota
road network."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from .edges import Edges, GraphInputError


def random_graph(n: int, m: int | None = None, weights: tuple[int, int] = (1, 1000), seed: int = 0,
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
