"""A schedule as one isl map S[k,i,j] -> [t0, ..., t(d-1)] with a kind per time dimension.

Time vectors run in lexicographic order, except that instances whose times
first differ at a *parallel* dimension run concurrently (tasks of one
stage). This flat form is what the legality checker reads; richer schedule
representations reduce to it through `as_schedule_map()`.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import islpy as isl

from tiling import model


@dataclass(frozen=True)
class ScheduleMap:
    map: isl.Map
    parallel: tuple[bool, ...]
    #: problem size the map is for; None when the map is parametric in n
    n: int | None
    name: str = "custom"
    #: None: the map is over points S[k,i,j]; else over tile-layers T[kb,ib,jb] of this tile size
    tile: int | None = None

    def __post_init__(self) -> None:
        space = self.map.get_space()
        statement = model.STATEMENT if self.tile is None else "T"
        if space.get_tuple_name(isl.dim_type.in_) != statement or space.dim(isl.dim_type.in_) != 3:
            raise ValueError(f"a schedule map must start from {statement}[...] with 3 indices; got {space}")
        n_time = space.dim(isl.dim_type.out)
        if len(self.parallel) != n_time:
            raise ValueError(
                f"schedule {self.name!r} has {n_time} time dimensions but {len(self.parallel)} parallel flags"
            )
        has_n = space.find_dim_by_name(isl.dim_type.param, "n") >= 0
        if has_n != (self.n is None):
            raise ValueError(
                f"schedule {self.name!r}: give n=None for a map parametric in n, and a concrete n otherwise"
            )

    @classmethod
    def from_text(cls, text: str, parallel: Sequence[bool] = (), n: int | None = None, name: str = "custom"):
        """Parse isl text; every time dimension is sequential unless `parallel` says otherwise."""
        schedule_map = isl.Map(text)
        flags = tuple(parallel) or (False,) * schedule_map.dim(isl.dim_type.out)
        return cls(schedule_map.intersect_domain(model.domain(n)), tuple(bool(f) for f in flags), n, name)

    def as_schedule_map(self) -> ScheduleMap:
        return self

    def domain(self) -> isl.Set:
        """The instances this map must time: the FW points, or the tile-layers."""
        if self.tile is None:
            return model.domain(self.n)
        from .tree import tile_domain

        return tile_domain(self.n, self.tile)
