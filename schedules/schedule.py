"""A schedule: an isl schedule tree over the FW points, plus what made it."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import islpy as isl

from tiling import model

from .flatten import flatten
from .schedule_map import ScheduleMap


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
            return self.tile_tree.to_str()
        return self.tree.to_str()


def _bind_n(tree: isl.Schedule, n: int | None) -> isl.Schedule:
    """Restrict a tree written parametric in n to one concrete n."""
    has_n = tree.get_domain().get_space().find_dim_by_name(isl.dim_type.param, "n") >= 0
    if n is None or not has_n:
        return tree
    return tree.intersect_domain(isl.UnionSet(f"[n] -> {{ {model.STATEMENT}[k, i, j] : n = {n} }}"))


def from_tree(text: str, n: int | None = None, name: str = "custom") -> Schedule:
    """A user's schedule tree in isl's text form over S[k, i, j] (parametric in n, or for this n).

    Parallel band members are the band's `coincident` flags; marks are
    optional. Check it with schedules.check like any other schedule.
    """
    try:
        tree = isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, text)
    except isl.Error as error:
        raise ValueError(f"not an isl schedule tree: {error}") from None
    schedule = Schedule("tree:" + name, n, 1, _bind_n(tree, n))
    try:
        schedule.as_schedule_map()
    except isl.Error:
        raise ValueError(f"a schedule tree must be over the single statement {model.STATEMENT}[k, i, j]") from None
    return schedule
