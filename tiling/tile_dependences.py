"""The relaxed model seen at tile granularity: which tile-layers T[kb,ib,jb] wait for which.

A tile-layer is block (ib, jb) updated by block layer kb. Projecting the
point relations R_row, R_col and W (DESIGN.md §1) onto tile-layers gives
the tile relation; W, which only forbids overlap, is oriented by kb (each
block takes its layers in order: that is what seed 004's level matrix
counts). A runtime whose state is that level matrix, L[ib,jb] = layers
applied to block (ib,jb), needs for each tile-layer only the newest
tile-layer of every *other* block it reads: "L of that block is past its
layer" then covers all older ones, and "L[ib,jb] == kb" its own block. Those
are the direct predecessors; `covers` proves with isl that waiting for them
(and the own block) respects the whole tile relation. Nothing here is written
per family or per block type: on whole blocks the result is seed 004's rule
(central waits for itself, horizontal and vertical blocks for the central
one, peripheral ones for their row's and column's), and a last block one
wide shows what the rule misses (its layer moves nothing, so nothing waits
for it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import islpy as isl

from . import model
from .dependences import relaxed_dependences
from .isl_ast import expr_to_python
from .render import fill

TILE = "T"
#: the tile-layer's coordinates, as the generated readiness test names them
TILE_ITERATORS = ("kb", "ib", "jb")


def _prefix(n: int | None) -> str:
    return "[n] -> " if n is None else ""


def _tile_relation_text(n: int | None, text: str) -> isl.Map:
    return isl.Map(f"{_prefix(n)}{{ {text} }}")


def tile_map(n: int | None, tile: int) -> isl.Map:
    """S[k,i,j] -> T[floor(k/tile), floor(i/tile), floor(j/tile)] on the domain."""
    if not isinstance(tile, int) or tile < 1:
        raise ValueError(f"tile must be a positive int, got {tile!r}")
    r = tile
    text = f"S[k, i, j] -> {TILE}[floor(k/{r}), floor(i/{r}), floor(j/{r})]"
    return _tile_relation_text(n, text).intersect_domain(model.domain(n))


def tile_relation(n: int | None, tile: int) -> isl.Map:
    """Tile-layer u -> tile-layer v: some point of u must precede some point of v (u != v)."""
    points = relaxed_dependences(n)
    to_tiles = tile_map(n, tile)
    later_layer = _tile_relation_text(n, f"{TILE}[k, i, j] -> {TILE}[k2, i2, j2] : k < k2")
    found = None
    for name, relation in {**points.ordered, **points.exclusive}.items():
        tiled = to_tiles.reverse().apply_range(relation).apply_range(to_tiles)
        if name in points.exclusive:
            tiled = tiled.intersect(later_layer)
        found = tiled if found is None else found.union(tiled)
    return found.subtract(isl.Map.identity(found.get_space())).coalesce()


def _same_block(n: int | None, relation: str) -> isl.Map:
    return _tile_relation_text(n, f"{TILE}[k, i, j] -> {TILE}[k2, i, j] : k {relation} k2")


def direct_predecessors(n: int | None, tile: int) -> isl.Map:
    """u -> v: u is the newest tile-layer of another block that v needs (see the module docstring)."""
    other_blocks = tile_relation(n, tile).subtract(_same_block(n, "<="))
    nest = _tile_relation_text(n, f"{TILE}[k, i, j] -> [B[i, j] -> K[k]]")
    newest = other_blocks.reverse().apply_range(nest).uncurry().lexmax().curry()
    back = _tile_relation_text(n, f"[B[i, j] -> K[k]] -> {TILE}[k, i, j]")
    return newest.apply_range(back).reverse().coalesce()


def unordered_pairs(n: int | None, tile: int, waits: isl.Map) -> isl.Map:
    """The pairs u -> v of the tile relation that waiting for the own block's older layers and
    for `waits` (u -> v: v waits until u's block is past u's layer) leaves unordered."""
    waited = _same_block(n, "<=").apply_range(waits).union(_same_block(n, "<"))
    return tile_relation(n, tile).subtract(waited)


def covers(n: int | None, tile: int) -> bool:
    """Whether waiting for the own block's older layers and for the direct predecessors, each
    read as 'that block is past that layer', orders every pair of the tile relation."""
    return unordered_pairs(n, tile, direct_predecessors(n, tile)).is_empty()


@dataclass(frozen=True)
class PredecessorRule:
    """One piece of the direct-predecessor function: when `condition` holds at (kb, ib, jb), the
    tile-layer waits until block (ib_, jb_) is past layer kb_ (Python expressions)."""

    condition: str
    kb: str
    ib: str
    jb: str
    #: the piece of isl's relation the expressions were printed from (v -> u), kept so that what a
    #: runtime renders from the rules can be proved from the rules themselves
    piece: isl.Map | None = field(default=None, compare=False, repr=False)


def _as_parameters(relation: isl.Map) -> isl.Map:
    """v -> u with v's coordinates turned into parameters named kb, ib, jb."""
    first = relation.dim(isl.dim_type.param)
    relation = relation.move_dims(isl.dim_type.param, first, isl.dim_type.in_, 0, 3)
    for offset, name in enumerate(TILE_ITERATORS):
        relation = relation.set_dim_name(isl.dim_type.param, first + offset, name)
    return relation


@cache
def predecessor_rules(n: int, tile: int) -> tuple[PredecessorRule, ...]:
    """The direct predecessors of every tile-layer as a few affine rules, read off isl's pieces.

    isl's pieces of the relation may give one tile-layer several predecessors
    at once; the first of each (lexmin) is peeled off as a function until
    none is left.
    """
    rules = []
    remaining = direct_predecessors(n, tile).reverse()
    while not remaining.is_empty():
        first = remaining.lexmin_pw_multi_aff()
        pieces: list[isl.Map] = []
        first.foreach_piece(lambda where, function: pieces.append(
            isl.Map.from_multi_aff(function).intersect_domain(where)))
        for piece in pieces:
            relation = _as_parameters(piece)
            build = isl.AstBuild.from_context(isl.Set.universe(relation.params().get_space()))
            function = isl.PwMultiAff.from_map(relation)
            coordinates = [expr_to_python(build.expr_from_pw_aff(function.get_pw_aff(d).project_domain_on_params()))
                           for d in range(3)]
            rules.append(PredecessorRule(expr_to_python(build.expr_from_set(relation.params())), *coordinates, piece))
        remaining = remaining.subtract(isl.Map.from_pw_multi_aff(first))
    return tuple(rules)


def rules_waits(rules: tuple[PredecessorRule, ...]) -> isl.Map:
    """u -> v: what the rules make v wait for (v until u's block is past u's layer)."""
    pieces = [rule.piece.reverse() for rule in rules]
    if not pieces:
        raise ValueError("no rules: every tile-layer would wait for nothing")
    found = pieces[0]
    for piece in pieces[1:]:
        found = found.union(piece)
    return found


def readiness_source(rules: tuple[PredecessorRule, ...], load: str = "level[$i, $j]", own: bool = True) -> str:
    """The body of a test `ready(level, kb, ib, jb)`: block (ib, jb) has had exactly kb layers
    (unless not `own`) and every rule's block is past its layer (`rules`: predecessor_rules(n, tile)).
    `load` reads the level matrix at $i, $j (a runtime passes an atomic load)."""
    lines = [f"if {fill(load, i='ib', j='jb')} != kb:", "    return False"] if own else []
    for rule in rules:
        lines += [f"if {rule.condition}:",
                  f"    if {fill(load, i=rule.ib, j=rule.jb)} <= {rule.kb}:",
                  "        return False"]
    return "\n".join(lines + ["return True"])
