"""Schedules of the batched nest (tiling.batch): which graphs run together, and how.

A batch schedule is an isl map S[b,k,i,j] -> time with a parallel flag per
time dimension, parametric in the batch size B and the graph size N, so one
proof covers every batch. Each layout is one declaration in LAYOUTS; the
generators (codegen.batch) read a layout's map to know what they may run at
once, and refuse a layout whose proof fails.

- graphs: a graph per worker, the nest's own order inside (CPU threads).
- lanes: graphs in groups of `lanes` (graphs of one size side by side in the
  vector lanes), a group per worker, the lanes innermost (CPU SIMD).
- blocks: a graph per thread block, the elements of one layer across its
  threads, a barrier between layers (CUDA).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import islpy as isl

from tiling import batch

from .legality import IllegalScheduleError, Violation, _violations


@dataclass(frozen=True)
class BatchSchedule:
    """One batch layout: the map the prover reads and the generators obey."""

    name: str
    map: isl.Map
    parallel: tuple[bool, ...]
    #: graphs each worker's task holds side by side (1: one graph a task)
    lanes: int = 1
    #: the LAYOUTS entry it was built from ('custom' for a map given as text)
    layout: str = "custom"
    #: the legality checker's view: parametric (in B and N)
    n: None = None

    def domain(self) -> isl.Set:
        return batch.domain()

    def as_schedule_map(self) -> BatchSchedule:
        return self


@dataclass(frozen=True)
class Layout:
    """How a layout writes its time vector (b, k, i, j named; W the lane count) and which of its
    dimensions run at once."""

    time: str
    parallel: tuple[bool, ...]
    help: str


LAYOUTS = {
    "graphs": Layout("[b, k, i, j]", (True, False, False, False),
                     "a graph per worker, the nest's own order inside it"),
    "lanes": Layout("[floor(b / W), k, i, j, b - W * floor(b / W)]", (True, False, False, False, True),
                    "W graphs of one size side by side in vector lanes, a group per worker"),
    "blocks": Layout("[b, k, i, j]", (True, False, True, True),
                     "a graph per thread block, one layer's elements across its threads"),
}


def batch_schedule(layout: str, lanes: int = 1) -> BatchSchedule:
    """The schedule of `layout` (LAYOUTS) with `lanes` graphs a task (lanes layout only)."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown batch layout {layout!r}; valid layouts are {', '.join(LAYOUTS)}")
    if not isinstance(lanes, int) or lanes < 1 or (layout != "lanes" and lanes != 1):
        raise ValueError(f"lanes must be a positive int, and 1 unless the layout is 'lanes'; got {lanes!r}")
    chosen = LAYOUTS[layout]
    time = chosen.time.replace("W", str(lanes))
    relation = isl.Map(f"{batch.PARAMETERS}{{ S[b, k, i, j] -> {time} }}").intersect_domain(batch.domain())
    return BatchSchedule(layout if lanes == 1 else f"{layout} x{lanes}", relation, chosen.parallel, lanes, layout)


def from_map(text: str, parallel: tuple[bool, ...], name: str = "custom batch") -> BatchSchedule:
    """A batch schedule written as isl text over S[b,k,i,j] (parameters [B, N])."""
    relation = isl.Map(text).intersect_domain(batch.domain())
    return BatchSchedule(name, relation, tuple(bool(flag) for flag in parallel))


@dataclass(frozen=True)
class BatchVerdict:
    """A proof: the layout's order respects the batch's relaxed dependences for every B and N, and
    no dependence joins two graphs."""

    schedule_name: str
    relations: tuple[str, ...]

    def __str__(self) -> str:
        return (f"batch schedule {self.schedule_name!r} is legal under the relaxed model for every batch size B and "
                f"graph size N ({', '.join(self.relations)} respected; no dependence crosses graphs)")


@cache
def _dependences():
    deps = batch.relaxed_dependences()
    crossing = {name: pairs for name, pairs in batch.crossing_dependences(deps).items() if not pairs.is_empty()}
    if crossing:  # the model itself would be wrong: say so rather than prove anything with it
        raise AssertionError(f"the batch model joins graphs through {', '.join(crossing)}")
    return deps


def find_violations(schedule: BatchSchedule) -> list[Violation]:
    """One witness pair per relaxed dependence `schedule` breaks; empty when it is legal."""
    return _violations(schedule, _dependences())


_PROVED: dict[tuple[str, tuple[bool, ...]], BatchVerdict] = {}


def prove(schedule: BatchSchedule) -> BatchVerdict:
    """The schedule's proof (remembered by its map and flags), or IllegalScheduleError with a witness."""
    key = (schedule.map.to_str(), schedule.parallel)
    if key not in _PROVED:
        violations = find_violations(schedule)
        if violations:
            raise IllegalScheduleError(schedule.name, "relaxed", violations)
        _PROVED[key] = BatchVerdict(schedule.name, tuple(_dependences().relations()))
    return _PROVED[key]
