"""The exploration's search space, read from the families' and the target's declarations.

Nothing here lists a family, a parameter, a target or an option: each family contributes the axes
it declares (schedules.families, with their ranges for this n and tile), and the target its tile
sizes and the options it searches (codegen.targets). A caller can narrow any axis
(`values={'kappa': [1, 2, 4]}`), which is how a large space is made small enough to sweep.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from codegen.targets import TARGETS, Option, as_text, find_target
from schedules.families import FAMILIES, build, find_family
from schedules.order_rules import refuted_orders
from schedules.parameters import Parameter
from schedules.schedule import Schedule
from tiling.semirings import semiring as find_semiring

from ..configuration import is_schedule_setting


def default_families() -> tuple[str, ...]:
    """The families an exploration takes by default: every family with a block size (one that
    runs element by element takes n^3 interpreted steps)."""
    return tuple(name for name, family in FAMILIES.items() if family.size is not None)


def is_default_option(name: str, value: Any, target: str | None = None) -> bool:
    """Whether a run option holds its default (left out of labels and schedule texts): the
    target's, or with no (registered) target named, that of every registered target that declares it."""
    if target in TARGETS:
        return TARGETS[target].is_default(name, value)
    declaring = [t for t in TARGETS.values() if any(option.name == name for option in t.options)]
    return bool(declaring) and all(t.is_default(name, value) for t in declaring)


@dataclass(frozen=True)
class Candidate:
    """One point of the space: a family with its parameters, and how the target runs it."""

    family: str
    params: tuple[tuple[str, Any], ...]
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def key(self) -> str:
        """'family:name=value,...' in the schedule-text form solve and the tuning table read, then
        the run options after ';'."""
        text = f"{self.family}:" + ",".join(f"{name}={as_text(value)}" for name, value in self.params)
        return text + "".join(f";{name}={as_text(value)}" for name, value in self.options)

    @property
    def schedule_text(self) -> str:
        """The key with the run options that a schedule's text carries (a target's declared
        schedule_settings), where not their defaults: what `solve`, `solve_distributed` and the
        tuning table read."""
        settings = [f"{name}={as_text(value)}" for name, value in self.options
                    if is_schedule_setting(name) and not is_default_option(name, value)]
        return ",".join([self.key.split(";")[0], *settings])

    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def option_dict(self) -> dict[str, Any]:
        return dict(self.options)

    @property
    def size(self) -> int:
        """The block size (the tile, or the recursion's base: whatever its family calls it); 1 for
        a family without one."""
        sizes = {family.size for family in FAMILIES.values() if family.size}
        return next((int(value) for name, value in self.params if name in sizes), 1)


@lru_cache(maxsize=4096)
def build_candidate(candidate: Candidate, n: int) -> Schedule:
    """The candidate's schedule (run options do not change it)."""
    given = candidate.param_dict()
    size = find_family(candidate.family).size
    return build(candidate.family, n, given.pop(size) if size else None, **given)


def label(key: str, target: str | None = None) -> str:
    """A candidate's key without the values that are defaults: its family's parameters' and the
    run options' (the target's, or every target's that declares them): what a table shows."""
    head, *options = key.split(";")
    family, _, settings = head.partition(":")
    declared = FAMILIES[family].parameters if family in FAMILIES else ()
    defaults = {p.name: as_text(p.default) for p in declared}
    shown = [item for item in settings.split(",")
             if item and defaults.get(item.partition("=")[0]) != item.partition("=")[2]]
    shown += [item for item in options if not is_default_option(*item.split("=", 1), target)]
    return f"{family}:{','.join(shown)}"


def _as_listed(option: Option, value: Any, listed: set[str]) -> str:
    """A narrowed value's text as its axis lists values: as given, or as the option reads it
    ('4x16' -> '4-16')."""
    text = as_text(value)
    if text in listed or not isinstance(value, str):
        return text
    try:
        return as_text(option.parse(value))
    except ValueError:
        return text


@dataclass
class Space:
    """Every candidate for one problem (n, dtype, target): the product of each family's axes."""

    n: int
    dtype: str = "float32"
    target: str = "cpu"
    families: Sequence[str] = field(default_factory=default_families)
    #: narrowed axes: name -> the values to take (a family's parameter, 'tile', or a run option)
    values: dict[str, Sequence[Any]] = field(default_factory=dict)
    #: run options that are axes here (default: the target's search_axes)
    run_axes: Sequence[str] | None = None
    #: processes a collective target runs on (its grid axis factors this)
    processes: int = 1
    #: what the candidates compute (tiling.semirings); its records name it beside the dtype
    semiring: str = "min-plus"

    def __post_init__(self) -> None:
        unknown = [f for f in self.families if f not in FAMILIES]
        if unknown:
            raise ValueError(f"unknown families {unknown}; available: {', '.join(FAMILIES)}")
        target = find_target(self.target)
        ring = find_semiring(self.semiring)
        if self.dtype not in ring.dtypes or self.dtype not in target.dtypes:
            raise ValueError(f"dtype {self.dtype!r}: semiring {ring.name} computes in {', '.join(ring.dtypes)} and "
                             f"target {target.name!r} in {', '.join(target.dtypes)}")
        if self.run_axes is None:
            self.run_axes = target.search_axes
        known = {p.name for f in self.families for p in FAMILIES[f].parameters} | {"tile", *self.run_axes}
        stray = sorted(set(self.values) - known)
        if stray:
            raise ValueError(f"no axis named {', '.join(stray)} in this space; its axes: {', '.join(sorted(known))}")

    def tiles(self) -> list[int]:
        given = self.values.get("tile", find_target(self.target).search_tiles)
        return sorted({min(int(t), self.n) for t in given})

    def _axis(self, family: str, parameter: Parameter, blocks: int) -> list[Any]:
        if parameter.name in self.values:
            return [parameter.check(value, family, blocks) for value in self.values[parameter.name]
                    if not (parameter.up_to_blocks and int(value) > blocks)] or [parameter.default]
        return parameter.values(blocks)

    def family_axes(self, family: str, tile: int) -> dict[str, list[Any]]:
        """The family's own axes for this tile (its size excluded: that is the tile axis)."""
        blocks = -(-self.n // tile)
        declared = FAMILIES[family]
        return {p.name: self._axis(family, p, blocks) for p in declared.parameters
                if p.name != declared.size and self._searched(p)}

    def _searched(self, parameter: Parameter) -> bool:
        """Whether a parameter is an axis here: searched on this target, or its values given (elsewhere
        it keeps its default, and candidates leave it out)."""
        return parameter.searched_on is None or self.target in parameter.searched_on or parameter.name in self.values

    def option_axes(self) -> dict[str, list[Any]]:
        """Each run axis's values as the target declares them (Option.search_values); narrowed ones
        matched by their text ('false', '2x2', '4-16'; text the option reads otherwise, '4x16', is
        read first), so that the command line's strings select the typed values."""
        target = find_target(self.target)
        axes = {}
        for name in self.run_axes:
            option = target.option(name)
            every = option.search_values(self.processes)
            if name not in self.values:
                axes[name] = every
                continue
            listed = set(map(as_text, every))
            wanted = {as_text(value): _as_listed(option, value, listed) for value in self.values[name]}
            unknown = [given for given, text in wanted.items() if text not in listed]
            if unknown:
                raise ValueError(f"{name} cannot be {', '.join(unknown)} here; its values: "
                                 f"{', '.join(map(as_text, every))}")
            axes[name] = [value for value in every if as_text(value) in wanted.values()]
        return axes

    def option_choices(self) -> list[tuple[tuple[str, Any], ...]]:
        """Every combination of the run axes that the target can run (Target.runs)."""
        options = self.option_axes()
        runs = find_target(self.target).runs
        combined = (tuple(zip(options, chosen)) for chosen in itertools.product(*options.values()))
        return [chosen for chosen in combined if runs(dict(chosen))]

    def _params(self, family: str, tile: int, values: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
        """A candidate's parameters: its size, then its family's axes in declared order."""
        size = FAMILIES[family].size
        return (((size, tile),) if size else ()) + tuple((k, values[k]) for k in self.family_axes(family, tile)
                                                         if k in values)

    def refuted(self, family: str) -> frozenset:
        """The family's stage orders this space leaves out: those the prover refutes by rule
        (schedules.order_rules), unless every order axis was narrowed (the orders asked for stay)."""
        orders = [p.name for p in FAMILIES[family].parameters if p.kind == "order"]
        return frozenset() if all(name in self.values for name in orders) else refuted_orders(family)

    def _points(self, prune: bool) -> Iterator[Candidate]:
        choices = self.option_choices()
        for family in self.families:
            refuted = self.refuted(family) if prune else frozenset()
            orders = [p.name for p in FAMILIES[family].parameters if p.kind == "order"]
            for tile in self.tiles() if FAMILIES[family].size else [1]:
                axes = self.family_axes(family, tile)
                for values in itertools.product(*axes.values()):
                    chosen = dict(zip(axes, values))
                    if refuted and tuple((name, tuple(chosen[name])) for name in orders) in refuted:
                        continue
                    if not FAMILIES[family].builds(chosen):
                        continue
                    params = self._params(family, tile, chosen)
                    for options in choices:
                        yield Candidate(family, params, options)

    def __iter__(self) -> Iterator[Candidate]:
        return self._points(prune=True)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def pruned(self) -> int:
        """How many points the refuted stage orders took out of the space (counted, never timed)."""
        return sum(1 for _ in self._points(prune=False)) - len(self)

    def neighbours(self, candidate: Candidate) -> list[Candidate]:
        """Candidates that differ from `candidate` in one axis by one step (the next value up or
        down in that axis's list): where a guided search refines around its best."""
        found = []
        options = self.option_axes()
        size = FAMILIES[candidate.family].size
        axes = {**({"tile": self.tiles()} if size else {}), **self.family_axes(candidate.family, candidate.size),
                **options}
        current = {"tile": candidate.size, **{k: v for k, v in candidate.params if k != size},
                   **candidate.option_dict()}
        runs = find_target(self.target).runs
        for name, values in axes.items():
            if current.get(name) not in values:
                continue
            at = values.index(current[name])
            for step in (-1, 1):
                if 0 <= at + step < len(values):
                    changed = {**current, name: values[at + step]}
                    tile = changed.pop("tile")
                    params = self._params(candidate.family, tile, changed)
                    chosen = tuple((k, changed[k]) for k in options)
                    if not self._fits(candidate.family, params, tile) or not runs(dict(chosen)):
                        continue
                    found.append(Candidate(candidate.family, params, chosen))
        return found

    def _fits(self, family: str, params: tuple[tuple[str, Any], ...], tile: int) -> bool:
        """Whether every parameter bounded by the blocks a side (kappa) is within them at this tile,
        the stage orders are not refuted (Space.refuted) and the family builds the combination."""
        blocks = -(-self.n // tile)
        declared = FAMILIES[family].parameters
        bounded = {p.name for p in declared if p.up_to_blocks}
        orders = tuple((p.name, tuple(dict(params)[p.name])) for p in declared if p.kind == "order")
        return (all(int(value) <= blocks for name, value in params if name in bounded)
                and orders not in self.refuted(family) and FAMILIES[family].builds(dict(params)))
