"""Packed operands: a stage's product operands copied once into micro-panels, proved equal to reading in place.

A min-plus product streams A's rows and B's columns; BLIS-style micro-panels
(A's rows MR at a time, k-major; B's columns NR at a time) turn those strided
streams into one contiguous stream each. A family marks a stage tree.PACK_MARK
and the barrier runtime then copies every operand block the stage's products
read, once, as the stage starts: a block read by many tile-layers is copied
once for all of them. The copy is exact when no point under one instance of
the mark writes an element that a point of the same instance reads as its
a[i, k] or a[k, j]: every value a product reads from a panel is then the value
it would have read in place, whatever the order inside the stage. Points of
other instances run before the stage starts or after it ends (stages are
separated by barriers), so only pairs inside one instance matter. This module
proves that, or names a write and a read that break it.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from tiling import model
from tiling.isl_utils import image_of_point, sample_pair

from .tree import PACK_MARK, mark_instances, points_to_tiles

#: the reads a product takes from its operand blocks (a[i, j] is its own block, C)
OPERAND_READS = ("a[i,k]", "a[k,j]")


def packed_instances(tree: isl.Schedule) -> isl.UnionMap | None:
    """{ T -> T' : both under one instance of a PACK_MARK }, or None when the tree has no such mark."""
    return mark_instances(tree, PACK_MARK)


@dataclass(frozen=True)
class PackingViolation:
    """A point that writes what another point of the same packed stage reads as an operand."""

    read: str
    writer: tuple[int, ...]
    reader: tuple[int, ...]
    tiles: tuple[tuple[int, ...], tuple[int, ...]]
    params: dict[str, int]

    @property
    def dependence(self) -> str:
        """What a report names as broken (as a Violation's dependence)."""
        return f"packed {self.read}"

    def explain(self) -> str:
        writer, reader = (f"S[{','.join(map(str, p))}]" for p in (self.writer, self.reader))
        first, second = (f"T[{','.join(map(str, t))}]" for t in self.tiles)
        at = "".join(f" ({name}={v})" for name, v in self.params.items())
        element = ",".join(map(str, self.writer[1:]))  # S[k,i,j] writes a[i,j]
        return (f"packed operands{at}: {writer} (tile-layer {first}) writes a[{element}], which {reader} (tile-layer "
                f"{second}) reads as {self.read}, and both are in one instance of a {PACK_MARK} stage, whose products read "
                "their operands from a copy taken as the stage starts")


def packing_violations(tree: isl.Schedule, n: int | None, tile: int) -> list[PackingViolation]:
    """One witness per operand read that a point of the same packed stage instance writes."""
    together = packed_instances(tree)
    if together is None or together.is_empty():
        return []
    to_tiles = points_to_tiles(n, tile)
    same_instance = to_tiles.apply_range(isl.Map.from_union_map(together)).apply_range(to_tiles.reverse())
    found = []
    for read in OPERAND_READS:
        # writer -> reader: the reader's operand element is what the writer writes
        clashes = model.write_access(n).apply_range(model.read_access(read, n).reverse()).intersect(same_instance)
        if clashes.is_empty():
            continue
        writer, reader, params = sample_pair(clashes)
        found.append(PackingViolation(read, tuple(writer), tuple(reader),
                                      (image_of_point(to_tiles, writer, params), image_of_point(to_tiles, reader, params)),
                                      params))
    return found
