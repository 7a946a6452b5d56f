"""A schedule: an isl schedule tree over the FW points, plus what made it."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import islpy as isl

from tiling import model

from .tree_to_map import flatten
from .schedule_map import ScheduleMap
from .tree import TILE, TILE_ITERATORS, tile_domain, to_point_tree


@dataclass(frozen=True, eq=False)
class Schedule:
    """One order of the FW nest, as data.

    `tree` is over the points S[k,i,j]; families also keep `tile_tree`, the
    same order over tile-layers T[kb,ib,jb], which the stage view and the
    cost models read so they scale with blocks, not points.
    """

    family: str
    n: int | None
    tile: int
    tree: isl.Schedule
    tile_tree: isl.Schedule | None = None
    params: dict[str, Any] = field(default_factory=dict)
    #: True when every tile-layer runs its points in the original (k, i, j) order, which is
    #: what lets the checker prove the tile-level order instead of the point-level one
    original_point_order: bool = True

    @property
    def name(self) -> str:
        settings = [f"n={'n' if self.n is None else self.n}", f"tile={self.tile}"]
        settings += [f"{key}={value}" for key, value in self.params.items()]
        return f"{self.family}({', '.join(settings)})"

    def as_schedule_map(self) -> ScheduleMap:
        return self._flat

    @cached_property
    def _flat(self) -> ScheduleMap:
        return flatten(self.tree, self.n, self.name)

    def tile_schedule_map(self) -> ScheduleMap | None:
        """The flat order of the tile-layers (None for a tree given only over points)."""
        return self._tile_flat if self.original_point_order else None

    @cached_property
    def _tile_flat(self) -> ScheduleMap | None:
        return None if self.tile_tree is None else flatten(self.tile_tree, self.n, self.name, self.tile)

    def __str__(self) -> str:
        return self.name

    def tree_text(self, level: str = "point") -> str:
        """isl's text form of the tree ('point' level, or 'tile' level for families)."""
        if level == "tile":
            if self.tile_tree is None:
                raise ValueError(f"{self.name} has no tile-level tree; use level='point'")
            return self._tile_text
        return self._point_text

    @cached_property
    def _point_text(self) -> str:
        """(once: the code cache keys every compiled schedule by it, and isl prints it anew each time)"""
        return self.tree.to_str()

    @cached_property
    def _tile_text(self) -> str:
        return self.tile_tree.to_str()

    def tree_file_text(self, level: str | None = None) -> str:
        """The tree as `from_tree` (every `--tree FILE`) reads it back: by default the tile level
        where there is one, its tile size in a context node ("[tile] -> { : tile = 4 }"), else the
        point level. Unlike isl's own text, a mark over a leaf is written with its leaf child,
        which isl's reader requires."""
        level = level or ("tile" if self.tile_tree is not None else "point")
        if level == "tile":
            if self.tile_tree is None:
                raise ValueError(f"{self.name} has no tile-level tree; use level='point'")
            tree = self.tile_tree.get_root().child(0).insert_context(
                isl.Set(f"[{TILE_SIZE}] -> {{ : {TILE_SIZE} = {self.tile} }}")).get_schedule()
        else:
            tree = self.tree
        return _LEAF_MARK.sub(r'{ mark: \1, child: { leaf } }', tree.to_str())


#: the parameter a tile-level tree's context node fixes to its tile size
TILE_SIZE = "tile"
#: a mark node over a leaf as isl writes it (without the child its reader expects)
_LEAF_MARK = re.compile(r'\{ mark: ("[^"]*") \}')


def _bind_n(tree: isl.Schedule, n: int | None, statement: str = model.STATEMENT) -> isl.Schedule:
    """Restrict a tree written parametric in n to one concrete n."""
    has_n = tree.get_domain().get_space().find_dim_by_name(isl.dim_type.param, "n") >= 0
    if n is None or not has_n:
        return tree
    names = ", ".join(model.ITERATORS if statement == model.STATEMENT else TILE_ITERATORS)
    return tree.intersect_domain(isl.UnionSet(f"[n] -> {{ {statement}[{names}] : n = {n} }}"))


def _statements(tree: isl.Schedule) -> set[str]:
    found: set[str] = set()
    tree.get_domain().foreach_set(lambda part: found.add(part.get_tuple_name()))
    return found


def _tile_size_of(tree: isl.Schedule, tile: int | None) -> tuple[isl.Schedule, int]:
    """A tile-level tree's tile size (its context node '[tile] -> { : tile = T }', or `tile`) and
    the tree without that node."""
    node = tree.get_root().child(0)
    written = None
    if node.get_type() == isl.schedule_node_type.context:
        context = node.context_get_context()
        position = context.get_space().find_dim_by_name(isl.dim_type.param, TILE_SIZE)
        if position >= 0:
            value = context.plain_get_val_if_fixed(isl.dim_type.param, position)
            if not value.is_int() or value.to_python() < 1:
                raise ValueError(f"the context node of a tile-level tree must fix its tile size, e.g. "
                                 f"\"[tile] -> {{ : tile = 4 }}\"; got \"{context}\"")
            written = value.to_python()
            tree = node.delete().get_schedule()
    if written is not None and tile is not None and written != tile:
        raise ValueError(f"the tree's tiles are {written} wide, not {tile}")
    if written is None and tile is None:
        raise ValueError(f"a tree over the tile-layers {TILE}[{', '.join(TILE_ITERATORS)}] needs its tile size: a "
                         f"context node \"[tile] -> {{ : tile = 4 }}\" under its domain, as polyfw show writes it")
    return tree, written if written is not None else tile


def from_tree(text: str, n: int | None = None, name: str = "custom", tile: int | None = None) -> Schedule:
    """A user's schedule tree in isl's text form over S[k, i, j] (parametric in n, or for this n),
    or over the tile-layers T[kb, ib, jb] of a tile size (what `Schedule.tree_file_text` writes:
    the tile size in a context node, or given as `tile`). Lines starting with '#' are comments;
    isl's own text of a tree is read too (a mark over a leaf written without its child).

    Parallel band members are the band's `coincident` flags; marks are
    optional. Check it with schedules.check like any other schedule.
    """
    try:
        tree = isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, _LEAF_MARK.sub(r'{ mark: \1, child: { leaf } }', text))
    except isl.Error as error:
        raise ValueError(f"not an isl schedule tree: {error}") from None
    if _statements(tree) == {TILE}:
        return _from_tile_tree(tree, n, name, tile)
    schedule = Schedule("tree:" + name, n, 1, _bind_n(tree, n))
    try:
        schedule.as_schedule_map()
    except isl.Error:
        raise ValueError(f"a schedule tree must be over the single statement {model.STATEMENT}[k, i, j] "
                         f"(or the tile-layers {TILE}[{', '.join(TILE_ITERATORS)}])") from None
    return schedule


def _from_tile_tree(tree: isl.Schedule, n: int | None, name: str, tile: int | None) -> Schedule:
    """A tile-level tree read back: its tile-layers must be those of n in tiles of its tile size;
    the points run in (k, i, j) order inside each tile-layer."""
    tree, tile = _tile_size_of(tree, tile)
    parametric = tree.get_domain().get_space().find_dim_by_name(isl.dim_type.param, "n") >= 0
    if n is None and not parametric:
        raise ValueError("a tile-level tree written for one problem size needs that size (--n)")
    tree = _bind_n(tree, n, TILE)
    expected = isl.UnionSet.from_set(tile_domain(n, tile))
    if n is not None and parametric:
        expected = expected.intersect(isl.UnionSet(f"[n] -> {{ {TILE}[{', '.join(TILE_ITERATORS)}] : n = {n} }}"))
    if not tree.get_domain().is_equal(expected):
        size = "n" if n is None else f"n = {n}"
        raise ValueError(f"the tree's tile-layers are not those of {size} in tiles of {tile}: its domain is "
                         f"{tree.get_domain()}")
    schedule = Schedule("tree:" + name, n, tile, to_point_tree(tree, n, tile), tree)
    try:
        schedule.tile_schedule_map()  # the point-level map follows from it (and takes longer)
    except isl.Error:
        raise ValueError(f"a tile-level tree must be over the single statement {TILE}[{', '.join(TILE_ITERATORS)}]") \
            from None
    return schedule
