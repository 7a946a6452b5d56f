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
from tiling.dependences import DependenceModel, dependence_model
from tiling.isl_utils import Coordinates, image_of_point, point_coordinates, sample_pair, smallest_parameter_instance

from .schedule_map import ScheduleMap


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
        element = self.sink[1:] if self.dependence == "anti" else self.source[1:]
        why = _WHY[self.dependence].format(src=src, snk=snk, e=",".join(map(str, element)))
        rule = "must not run concurrently" if self.exclusive else f"{src} must finish before {snk} starts"
        at = "".join(f" (n={v})" for v in self.params.values())
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

    def __init__(self, schedule_name: str, model_name: str, violations: list[Violation]):
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
    """Raise MalformedScheduleError unless every domain point gets exactly one time."""
    domain = model.domain(schedule.n)
    missing = domain.subtract(schedule.map.domain())
    if not missing.is_empty():
        point = point_coordinates(smallest_parameter_instance(isl.Map.from_domain(missing)).domain().sample_point())
        raise MalformedScheduleError(f"schedule {schedule.name!r} gives no time to S{list(point)}")
    if not schedule.map.is_single_valued():
        several = schedule.map.subtract(schedule.map.lexmin()).domain()
        point = point_coordinates(smallest_parameter_instance(isl.Map.from_domain(several)).domain().sample_point())
        raise MalformedScheduleError(f"schedule {schedule.name!r} gives S{list(point)} more than one time")


def _witness(model_name: str, dependence: str, exclusive: bool, broken: isl.Map, schedule: ScheduleMap) -> Violation:
    source, sink, params = sample_pair(broken)
    return Violation(
        model=model_name,
        dependence=dependence,
        exclusive=exclusive,
        source=source,
        sink=sink,
        source_time=image_of_point(schedule.map, source, params),
        sink_time=image_of_point(schedule.map, sink, params),
        parallel=schedule.parallel,
        params=params,
    )


def _violations(schedule: ScheduleMap, deps: DependenceModel) -> list[Violation]:
    validate_schedule(schedule)
    model_name = deps.name
    before = schedule.happens_before()
    ordered_either_way = before.union(before.reverse())
    found = []
    for name, relation in deps.ordered.items():
        broken = relation.subtract(before)
        if not broken.is_empty():
            found.append(_witness(model_name, name, False, broken, schedule))
    for name, relation in deps.exclusive.items():
        broken = relation.subtract(ordered_either_way)
        if not broken.is_empty():
            found.append(_witness(model_name, name, True, broken, schedule))
    return found


def find_violations(schedule: Schedulable | ScheduleMap, model: str = "relaxed") -> list[Violation]:
    """One witness per dependence relation the schedule breaks; empty when it is legal."""
    flat = _as_schedule_map(schedule)
    return _violations(flat, dependence_model(model, flat.n))


def check(schedule: Schedulable | ScheduleMap, model: str = "relaxed") -> Verdict:
    """Prove `schedule` legal under `model` ('relaxed' or 'exact'); raise IllegalScheduleError otherwise."""
    flat = _as_schedule_map(schedule)
    deps = dependence_model(model, flat.n)
    violations = _violations(flat, deps)
    if violations:
        raise IllegalScheduleError(flat.name, model, violations)
    return Verdict(flat.name, model, flat.n, tuple(deps.relations()))
