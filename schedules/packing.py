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

The dataflow runtime has no stages: there a block is copied by the call that
brings it to the layer its readers need, and the products of that layer
read the copy; published_operand_problem proves those copies hold what
every read needs and exist before it.
"""
from __future__ import annotations

from dataclasses import dataclass
import islpy as isl

from functools import cache

from tiling import model
from tiling.dependences import relaxed_dependences
from tiling.isl_ast import expr_to_python
from tiling.isl_utils import image_of_point, sample_pair
from tiling.tile_dependences import TILE, TILE_ITERATORS, PredecessorRule, rules_waits, tile_map

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


#: the most bytes of micro-panels the dataflow runtime publishes operands to (twice the padded matrix); a
#: larger run's products read in place
PUBLISHED_BYTES = 2 << 30


def publishes_within(n: int, tile: int, itemsize: int) -> bool:
    """Whether the published panels of an n-vertex run in `tile` blocks fit under PUBLISHED_BYTES."""
    depth = -(-n // tile) * tile
    return 2 * depth * depth * itemsize <= PUBLISHED_BYTES


#: per operand read, the tile-layer whose end the dataflow runtime copies the operand block at: the one that
#: gives that block the reader's layer
PUBLISHERS = (("R_row", f"{TILE}[kb, ib, jb] -> {TILE}[kb, ib, kb]"), ("R_col", f"{TILE}[kb, ib, jb] -> {TILE}[kb, kb, jb]"))


def _same_block_later(text: str = "<=") -> isl.Map:
    return isl.Map(f"[n] -> {{ {TILE}[k, i, j] -> {TILE}[k2, i, j] : k {text} k2 }}")


@cache
def published_readers(tile: int, rules: tuple[PredecessorRule, ...]) -> isl.Set:
    """The tile-layers that read both operands from published copies, for every n: the products off their
    layer's row and column that `rules` make wait for both publishers (a last block one vertex wide moves
    nothing in its layer, so the rules need not wait for its publishers: those read in place)."""
    to_tiles = tile_map(None, tile)
    readers = isl.Set(f"[n] -> {{ {TILE}[kb, ib, jb] : ib != kb and jb != kb }}").intersect(to_tiles.range())
    waited = _same_block_later().apply_range(rules_waits(rules)).reverse()  # v -> u: v waits for u's layer
    for _, copy in PUBLISHERS:
        readers = readers.intersect(isl.Map(f"[n] -> {{ {copy} }}").intersect(waited).domain())
    return readers.coalesce()


def published_reader_condition(tile: int, rules: tuple[PredecessorRule, ...]) -> str:
    """published_readers as a Python condition on kb, ib, jb and n, for the runtime to render."""
    readers = published_readers(tile, rules)
    first = readers.dim(isl.dim_type.param)
    readers = readers.move_dims(isl.dim_type.param, first, isl.dim_type.set, 0, len(TILE_ITERATORS))
    for offset, name in enumerate(TILE_ITERATORS):
        readers = readers.set_dim_name(isl.dim_type.param, first + offset, name)
    build = isl.AstBuild.from_context(isl.Set.universe(readers.params().get_space()))
    return expr_to_python(build.expr_from_set(readers.params()))


@cache
def published_operand_problem(tile: int, rules: tuple[PredecessorRule, ...],
                              publishers: tuple[tuple[str, str], ...] = PUBLISHERS) -> str | None:
    """Why a product of published_readers may not read an operand block from the copy its publisher
    (`publishers`, by the relaxed relation of the read) takes, or None; proved for every n.

    The copy is right when every point that the relaxed model says must come before a read of the
    operand is in the publisher's block at a layer up to the publisher's own (a block takes its layers in
    order, so all of them are in the copy), and it exists when `rules` make the reader wait until the
    publisher's block is past the publisher's layer. Later layers of that block may land in place
    before the product runs; its reads of the copy then see older values, which are what this layer's
    exact order gives.
    """
    readers, to_tiles = published_readers(tile, rules), tile_map(None, tile)
    waited = _same_block_later().apply_range(rules_waits(rules))
    for name, relation in relaxed_dependences(None).ordered.items():
        publisher = isl.Map(f"[n] -> {{ {dict(publishers)[name]} }}").intersect_domain(readers)
        tiled = to_tiles.reverse().apply_range(relation).apply_range(to_tiles).intersect_range(readers)
        missed = tiled.apply_range(publisher).subtract(_same_block_later())  # a source the copy does not hold
        if not missed.is_empty():
            source, copy, params = sample_pair(missed)
            return (f"at n = {params.get('n')}, T[{','.join(map(str, source))}] must come before a read of the copy "
                    f"T[{','.join(map(str, copy))}] publishes ({name}), but that copy does not hold it")
        unready = publisher.reverse().subtract(waited)
        if not unready.is_empty():
            copy, reader, params = sample_pair(unready)
            return (f"at n = {params.get('n')}, T[{','.join(map(str, reader))}] reads the copy T[{','.join(map(str, copy))}] "
                    f"publishes ({name}) without waiting for it")
    return None
