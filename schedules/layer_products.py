"""Layer products: the block layers a task holds on one block, run as one min-plus product.

A task of DD tile-layers T[kb, ib, jb] over several layers of one block (seed
000's reverse and Rest steps, the recursive order's products) may keep the
block's register tiles in registers across all of them: one product whose k
runs over every layer, C loaded and stored once instead of once a layer. A
family marks such a band tree.PRODUCT_MARK and a generator may then run the
points under one instance of the band (one value of everything above it) in
any order. That is legal when no ordering dependence joins two of those
points: only exclusive pairs (two updates of one element) may, and one task
runs them one after the other whatever their order. This module proves that,
or names a pair that breaks it, for the whole tree at once.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from tiling.dependences import DependenceModel
from tiling.isl_utils import image_of_point, sample_pair

from .tree import PRODUCT_MARK, mark_instances, points_to_tiles


def product_instances(tree: isl.Schedule) -> isl.UnionMap | None:
    """{ T -> T' : both under one instance of a PRODUCT_MARK band }, or None when the tree has no such mark."""
    return mark_instances(tree, PRODUCT_MARK)


@dataclass(frozen=True)
class ProductViolation:
    """A dependence between two points one layer product would run in any order."""

    model: str
    dependence: str
    source: tuple[int, ...]
    sink: tuple[int, ...]
    tiles: tuple[tuple[int, ...], tuple[int, ...]]
    params: dict[str, int]

    def explain(self) -> str:
        src, snk = (f"S[{','.join(map(str, p))}]" for p in (self.source, self.sink))
        first, second = (f"T[{','.join(map(str, t))}]" for t in self.tiles)
        at = "".join(f" ({name}={v})" for name, v in self.params.items())
        return (f"{self.model} dependence {self.dependence}{at}: {src} must finish before {snk} starts, but "
                f"their tile-layers {first} and {second} are in one instance of a {PRODUCT_MARK} band, whose "
                "points run as one product in any order")


def product_violations(tree: isl.Schedule, n: int | None, tile: int, deps: DependenceModel) -> list[ProductViolation]:
    """One witness per ordering relation of `deps` that joins two points of one layer product (a pair
    inside one tile-layer counts too: the product runs its layers' points in any order)."""
    together = product_instances(tree)
    if together is None or together.is_empty():
        return []
    to_tiles = points_to_tiles(n, tile)
    together_map = isl.Map.from_union_map(together)
    found = []
    for name, relation in deps.relations().items():
        if name in deps.exclusive:
            continue
        tiles = relation.apply_domain(to_tiles).apply_range(to_tiles).intersect(together_map)
        if tiles.is_empty():
            continue
        points = relation.intersect(to_tiles.apply_range(tiles).apply_range(to_tiles.reverse()))
        source, sink, params = sample_pair(points)
        found.append(ProductViolation(deps.name, name, tuple(source), tuple(sink),
                                      (image_of_point(to_tiles, source, params), image_of_point(to_tiles, sink, params)),
                                      params))
    return found
