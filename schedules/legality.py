"""Proving a schedule legal with isl, or refuting it with a witness pair.

A schedule is legal under a dependence model when every ordered dependence
s -> t has s finishing before t starts, and no exclusive pair runs
concurrently (DESIGN.md §1-2). Both are checked as emptiness of isl
relations, so the proof covers every instance — for parametric n, every n.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import islpy as isl

from tiling import model
from tiling.dependences import RELATION_NAMES, DependenceModel, dependence_model
from tiling.isl_utils import Coordinates, count_points, image_of_point, lex_before_at, point_coordinates, sample_pair, smallest_parameter_instance
from tiling.semirings import semiring as find_semiring

from .layer_products import ProductViolation, product_violations
from .packing import PackingViolation, packing_violations
from .schedule_map import ScheduleMap
from .tree import points_to_tiles


class Schedulable(Protocol):
    def as_schedule_map(self) -> ScheduleMap: ...


class MalformedScheduleError(ValueError):
    """The object is not a schedule of the FW domain (a point missing or timed twice)."""


_WHY = {
    "flow": "{src} writes a[{e}] and {snk} reads that value",
    "anti": "{src} reads a[{e}] before {snk} overwrites it",
    "output": "{src} and {snk} write a[{e}] in this order",
    "R_row": "{snk} reads a[{e}] as its a[i,k] and needs the update {src} makes in an earlier layer",
    "R_col": "{snk} reads a[{e}] as its a[k,j] and needs the update {src} makes in an earlier layer",
    "W": "{src} and {snk} both update a[{e}]",
}


@dataclass(frozen=True)
class Violation:
    """One dependence the schedule breaks, with a concrete pair of instances."""

    model: str
    dependence: str
    exclusive: bool
    source: Coordinates
    sink: Coordinates
    source_time: Coordinates
    sink_time: Coordinates
    parallel: tuple[bool, ...]
    params: dict[str, int]

    def explain(self) -> str:
        src, snk = (f"S[{','.join(map(str, p))}]" for p in (self.source, self.sink))
        writer = self.sink if self.dependence == "anti" else self.source
        element = writer[:-3] + writer[-2:]  # the instance's indices but k: a[i,j] (a batch's a[b,i,j])
        why = _WHY[self.dependence].format(src=src, snk=snk, e=",".join(map(str, element)))
        rule = "must not run concurrently" if self.exclusive else f"{src} must finish before {snk} starts"
        at = "".join(f" ({name}={v})" for name, v in self.params.items())
        return (
            f"{self.model} dependence {self.dependence}{at}: {why}, so {rule}; "
            f"but the schedule runs {src} at {list(self.source_time)} and {snk} at {list(self.sink_time)}: "
            f"{self._how_timed()}"
        )

    def _how_timed(self) -> str:
        for depth, (a, b) in enumerate(zip(self.source_time, self.sink_time)):
            if a != b:
                if self.parallel[depth]:
                    return f"they run concurrently (times first differ at parallel dimension {depth})"
                first = "the sink" if b < a else "the source"
                return f"{first} runs first (times first differ at sequential dimension {depth})"
        return "both get the same time, so their order is undefined"


class IllegalScheduleError(ValueError):
    """The schedule breaks dependences of the model it was checked against."""

    def __init__(self, schedule_name: str, model_name: str,
                 violations: list[Violation | ProductViolation | PackingViolation]):
        self.schedule_name = schedule_name
        self.model = model_name
        self.violations = violations
        lines = [f"schedule {schedule_name!r} is illegal under the {model_name} dependence model:"]
        lines += [f"  - {v.explain()}" for v in violations]
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class Verdict:
    """A successful proof: which schedule, which model, which relations were shown respected."""

    schedule_name: str
    model: str
    n: int | None
    relations: tuple[str, ...]

    def __str__(self) -> str:
        size = "every n" if self.n is None else f"n = {self.n}"
        return f"schedule {self.schedule_name!r} is legal under the {self.model} model for {size} ({', '.join(self.relations)} respected)"


def _as_schedule_map(schedule: Schedulable | ScheduleMap) -> ScheduleMap:
    if not hasattr(schedule, "as_schedule_map"):
        raise TypeError(f"expected a schedule (ScheduleMap or an object with as_schedule_map()), got {type(schedule).__name__}")
    return schedule.as_schedule_map()


def validate_schedule(schedule: ScheduleMap) -> None:
    """Raise MalformedScheduleError unless every instance of the domain gets exactly one time.

    For a concrete n this counts (instances timed, pairs in the map) rather
    than comparing sets: far cheaper on maps with many pieces, and exact.
    """
    domain = schedule.domain()
    statement = domain.get_tuple_name()
    timed = schedule.map.domain()

    def first(instances: isl.Set) -> list[int]:
        return list(point_coordinates(smallest_parameter_instance(isl.Map.from_domain(instances)).domain().sample_point()))

    extra = timed.subtract(domain)
    if not extra.is_empty():
        raise MalformedScheduleError(f"schedule {schedule.name!r} times {statement}{first(extra)}, which is outside the FW domain")
    if schedule.n is not None:
        covered = count_points(timed) == count_points(domain)
        single_valued = covered and count_points(schedule.map.wrap()) == count_points(timed)
    else:
        covered = domain.is_subset(timed)
        single_valued = covered and schedule.map.is_single_valued()
    if not covered:
        raise MalformedScheduleError(f"schedule {schedule.name!r} gives no time to {statement}{first(domain.subtract(timed))}")
    if not single_valued:
        several = schedule.map.subtract(schedule.map.lexmin()).domain()
        raise MalformedScheduleError(f"schedule {schedule.name!r} gives {statement}{first(several)} more than one time")


def _time_order(schedule: ScheduleMap) -> isl.Map:
    """{ u -> v : time u runs before time v } — lexicographic, parallel dimensions excepted."""
    ndim = len(schedule.parallel)
    order = isl.Map.empty(isl.Space.map_from_set(isl.Space.set_alloc(schedule.map.get_ctx(), 0, ndim)))
    for depth, parallel in enumerate(schedule.parallel):
        if not parallel:
            order = order.union(lex_before_at(ndim, depth))
    return order


def _broken_pairs(timing: ScheduleMap, relations: dict[str, tuple[isl.Map, bool]]) -> dict[str, isl.Map]:
    """The instance pairs of each relation whose times are in the wrong order.

    Each relation is mapped to pairs of times and compared with the time
    order there: working in time space keeps isl's sets small; the
    instances of a bad pair of times are recovered only when there is one.
    """
    validate_schedule(timing)
    theta = timing.map
    before = _time_order(timing)
    either_way = before.union(before.reverse())
    broken = {}
    for name, (relation, exclusive) in relations.items():
        times = relation.apply_domain(theta).apply_range(theta)
        bad_times = times.subtract(either_way if exclusive else before)
        if not bad_times.is_empty():
            broken[name] = relation.intersect(theta.apply_range(bad_times).apply_range(theta.reverse()))
    return broken


def _named_relations(deps: DependenceModel) -> dict[str, tuple[isl.Map, bool]]:
    return {name: (relation, name in deps.exclusive) for name, relation in deps.relations().items()}


def _respects_generators(timing: ScheduleMap, deps: DependenceModel, lift=lambda relation: relation) -> bool:
    """The quick, sufficient test: every generator of the model ordered (no witness needed)."""
    if not deps.generators:
        return False
    return not _broken_pairs(timing, {name: (lift(rel), False) for name, rel in deps.generators.items()})


def _violations(schedule: ScheduleMap, deps: DependenceModel) -> list[Violation]:
    if _respects_generators(schedule, deps):
        return []
    found = []
    for name, broken in _broken_pairs(schedule, _named_relations(deps)).items():
        source, sink, params = sample_pair(broken)
        found.append(Violation(
            model=deps.name, dependence=name, exclusive=name in deps.exclusive, source=source, sink=sink,
            source_time=image_of_point(schedule.map, source, params), sink_time=image_of_point(schedule.map, sink, params),
            parallel=schedule.parallel, params=params,
        ))
    return found


def tile_lift(relation: isl.Map, n: int | None, tile: int) -> isl.Map:
    """A relation between points as one between tile-layers, without the pairs inside one
    tile-layer (its kernel runs them in the original order)."""
    to_tiles = points_to_tiles(n, tile)
    same_tile = isl.Map.identity(isl.Space.map_from_set(to_tiles.range().get_space()))
    return relation.apply_domain(to_tiles).apply_range(to_tiles).subtract(same_tile)


def _tiled_violations(tiles: ScheduleMap, deps: DependenceModel) -> list[Violation]:
    """Legality of a tile-level order whose tile-layers each run their points in (k, i, j) order.

    Points of one tile-layer run consecutively, in the original order, so
    every dependence inside a tile-layer holds, and two points of different
    tile-layers are ordered exactly as their tile-layers. Checking the
    dependences lifted to tile-layers is therefore the same proof, on far
    smaller sets; the witness is a pair of points.
    """
    to_tiles = points_to_tiles(tiles.n, tiles.tile)

    def lift(relation: isl.Map) -> isl.Map:
        return tile_lift(relation, tiles.n, tiles.tile)

    if _respects_generators(tiles, deps, lift):
        return []
    lifted = {name: (lift(relation), exclusive) for name, (relation, exclusive) in _named_relations(deps).items()}
    found = []
    for name, broken_tiles in _broken_pairs(tiles, lifted).items():
        relation = deps.relations()[name]
        points = relation.intersect(to_tiles.apply_range(broken_tiles).apply_range(to_tiles.reverse()))
        source, sink, params = sample_pair(points)
        time_of = lambda p: image_of_point(to_tiles.apply_range(tiles.map), p, params) + tuple(p)  # noqa: E731
        found.append(Violation(
            model=deps.name, dependence=name, exclusive=name in deps.exclusive, source=source, sink=sink,
            source_time=time_of(source), sink_time=time_of(sink),
            parallel=tiles.parallel + (False, False, False), params=params,
        ))
    return found


def find_violations(schedule: Schedulable | ScheduleMap, model: str = "relaxed",
                    semiring: str = "min-plus") -> list[Violation | ProductViolation | PackingViolation]:
    """One witness per dependence relation the schedule breaks; empty when it is legal.

    Schedules that carry a tile-level order (the families) are proved on
    tile-layers (see _tiled_violations), and so are the layers their tasks
    run as one product (schedules.layer_products), and the stages whose operands are packed
    (schedules.packing); any other on points. The relaxed
    model holds only for a semiring whose (+) is selective (tiling.semirings):
    others are refused with UnsupportedSemiringError; the exact model holds
    for every semiring.
    """
    if model == "relaxed":
        find_semiring(semiring).check_relaxed()
    tiles = schedule.tile_schedule_map() if hasattr(schedule, "tile_schedule_map") else None
    if tiles is not None:
        deps = dependence_model(model, tiles.n)
        return [*_tiled_violations(tiles, deps), *product_violations(schedule.tile_tree, tiles.n, tiles.tile, deps),
                *packing_violations(schedule.tile_tree, tiles.n, tiles.tile)]
    flat = _as_schedule_map(schedule)
    return _violations(flat, dependence_model(model, flat.n))


def illegal_sizes(schedule: Schedulable | ScheduleMap) -> isl.Set:
    """The values of n for which a schedule written parametric in n breaks a relaxed dependence
    (empty: legal for every n). What a tuning table needs to know before it stores a winner for
    a range of sizes: classic stages SD-DD-I with tile 64 are illegal exactly from n = 65 on."""
    tiles = schedule.tile_schedule_map() if hasattr(schedule, "tile_schedule_map") else None
    timing = tiles if tiles is not None else _as_schedule_map(schedule)
    if timing.n is not None:
        raise ValueError(f"{schedule.name} is built for n = {timing.n}; build it parametric in n (n=None)")
    relations = _named_relations(dependence_model("relaxed", None))
    if tiles is not None:
        relations = {name: (tile_lift(relation, None, tiles.tile), exclusive)
                     for name, (relation, exclusive) in relations.items()}
    sizes = model.domain(None).params().subtract(model.domain(None).params())
    for broken in _broken_pairs(timing, relations).values():
        sizes = sizes.union(broken.params())
    if tiles is not None and packing_violations(schedule.tile_tree, None, tiles.tile):
        raise ValueError(f"{schedule.name} writes a packed stage's operands inside the stage for some n: "
                         "schedules.check on a concrete n names them")
    if tiles is not None and product_violations(schedule.tile_tree, None, tiles.tile, dependence_model("relaxed", None)):
        raise ValueError(f"{schedule.name} runs dependent points in one layer product for some n: "
                         "schedules.check on a concrete n names them")
    return sizes.coalesce()


def check(schedule: Schedulable | ScheduleMap, model: str = "relaxed", semiring: str = "min-plus") -> Verdict:
    """Prove `schedule` legal under `model` ('relaxed' or 'exact') for `semiring`; raise
    IllegalScheduleError otherwise (UnsupportedSemiringError for a semiring the model excludes)."""
    violations = find_violations(schedule, model, semiring)
    if violations:
        raise IllegalScheduleError(schedule.name, model, violations)
    return Verdict(schedule.name, model, schedule.n, RELATION_NAMES[model])
