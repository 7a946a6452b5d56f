"""The exploration's search space, read from the families' declared parameters and the target's options.

Nothing here lists parameter names a second time: each family contributes the axes that
schedules.parameters declares for it (with their ranges for this n and tile), and the target
contributes its runtime and register-block options. A caller can narrow any axis
(`values={'kappa': [1, 2, 4]}`), which is how a large space is made small enough to sweep.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from codegen.register_blocks import fitting_shapes
from codegen.targets import TARGETS
from schedules.distribute import Grid
from schedules.parameters import FAMILY_PARAMETERS, Parameter

from .solve import RUN_SETTINGS

#: the families an exploration takes by default (naive runs point by point: n^3 interpreted steps)
DEFAULT_FAMILIES = ("classic", "generalized", "recursive")
#: the tile (or recursion base) sizes a target's space starts from, before n bounds them
DEFAULT_TILES = {"cpu": (32, 64, 128, 256), "cuda": (16, 32), "cudasim": (4, 8), "mpi": (64, 128, 256)}
#: options of the run that are axes besides the schedule's own parameters, per target
RUN_AXES = {"cpu": ("runtime",), "cuda": ("method",), "cudasim": ("method",),
            "mpi": ("grid", "placement", "lookahead")}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "-".join(map(str, value))
    return str(value)


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
        text = f"{self.family}:" + ",".join(f"{name}={_text(value)}" for name, value in self.params)
        return text + "".join(f";{name}={_text(value)}" for name, value in self.options)

    @property
    def schedule_text(self) -> str:
        """The key with the run options that a schedule's text carries (polyfw.solve.RUN_SETTINGS),
        where not their defaults: what `solve`, `solve_distributed` and the tuning table read."""
        settings = [f"{name}={_text(value)}" for name, value in self.options
                    if name in RUN_SETTINGS and DEFAULT_OPTIONS.get(name) != _text(value)]
        return ",".join([self.key.split(";")[0], *settings])

    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def option_dict(self) -> dict[str, Any]:
        return dict(self.options)

    @property
    def size(self) -> int:
        """The tile (or the recursion base)."""
        params = dict(self.params)
        return int(params.get("tile", params.get("base", 1)))


#: run options left out of a label when they hold these values
DEFAULT_OPTIONS = {"runtime": "barrier", "method": "A", "placement": "block-cyclic", "lookahead": "true"}


def label(key: str) -> str:
    """A candidate's key without the values that are its family's defaults (what a table shows)."""
    head, *options = key.split(";")
    family, _, settings = head.partition(":")
    defaults = {p.name: _text(p.default) for p in FAMILY_PARAMETERS.get(family, ())}
    shown = [item for item in settings.split(",") if item and defaults.get(item.partition("=")[0]) != item.partition("=")[2]]
    shown += [item for item in options if DEFAULT_OPTIONS.get(item.partition("=")[0]) != item.partition("=")[2]]
    return f"{family}:{','.join(shown)}"


def grid_shapes(processes: int) -> list[str]:
    """Every pr x pc grid of `processes` processes, as 'PRxPC' text (the form `--grid` takes)."""
    return [f"{rows}x{processes // rows}" for rows in range(1, processes + 1) if processes % rows == 0]


def _run_axis_values(target: str, name: str, processes: int) -> list[Any]:
    """An option's values as the target declares them (codegen.targets): its choices, both values of
    a flag, the grids of this many processes, or the register blocks that fit this CPU."""
    declared = {option.name: option for option in TARGETS[target].options}
    if name not in declared:
        raise ValueError(f"target {target!r} has no option {name!r} to search; its options: {', '.join(declared)}")
    option = declared[name]
    if option.choices:
        return list(option.choices)
    if isinstance(option.default, bool):
        return [True, False]
    if name == "grid":
        return grid_shapes(processes)
    if name == "register_block":
        return [tuple(shape) for shape in fitting_shapes()]
    raise ValueError(f"option {name!r} of target {target!r} has no values to search")


def runs_on_a_grid(options: dict[str, Any]) -> bool:
    """Whether the grid and placement options (where present) make a distinct process grid: 'strips'
    needs P x 1 (schedules.distribute.Grid is the one place that says so), and on one process row
    it is block-cyclic under another name."""
    if "grid" not in options:
        return True
    read = TARGETS["mpi"].read_options(options)
    placement = read.get("placement", "block-cyclic")
    try:
        grid = Grid(*read["grid"], placement)
    except ValueError:
        return False
    return not (placement == "strips" and grid.rows == 1)


@dataclass
class Space:
    """Every candidate for one problem (n, dtype, target): the product of each family's axes."""

    n: int
    dtype: str = "float32"
    target: str = "cpu"
    families: Sequence[str] = DEFAULT_FAMILIES
    #: narrowed axes: name -> the values to take (a family's parameter, 'tile', or a run option)
    values: dict[str, Sequence[Any]] = field(default_factory=dict)
    #: run options that are axes here, e.g. ('runtime', 'register_block') on the cpu
    run_axes: Sequence[str] | None = None
    #: MPI processes the 'mpi' target runs on (its grid axis factors this)
    processes: int = 1

    def __post_init__(self) -> None:
        unknown = [f for f in self.families if f not in FAMILY_PARAMETERS]
        if unknown:
            raise ValueError(f"unknown families {unknown}; available: {', '.join(FAMILY_PARAMETERS)}")
        if self.run_axes is None:
            self.run_axes = RUN_AXES.get(self.target, ())
        known = {p.name for f in self.families for p in FAMILY_PARAMETERS[f]} | {"tile", *self.run_axes}
        stray = sorted(set(self.values) - known)
        if stray:
            raise ValueError(f"no axis named {', '.join(stray)} in this space; its axes: {', '.join(sorted(known))}")

    def tiles(self) -> list[int]:
        given = self.values.get("tile")
        if given is not None:
            return sorted({min(int(t), self.n) for t in given})
        default = DEFAULT_TILES.get(self.target, DEFAULT_TILES["cpu"])
        return sorted({min(t, self.n) for t in default})

    def _axis(self, family: str, parameter: Parameter, blocks: int) -> list[Any]:
        if parameter.name in self.values:
            return [parameter.check(value, family, blocks) for value in self.values[parameter.name]
                    if not (parameter.up_to_blocks and int(value) > blocks)] or [parameter.default]
        return parameter.values(blocks)

    def family_axes(self, family: str, tile: int) -> dict[str, list[Any]]:
        """The family's own axes for this tile (sizes excluded: they are the tile axis)."""
        blocks = -(-self.n // tile)
        return {p.name: self._axis(family, p, blocks) for p in FAMILY_PARAMETERS[family]
                if p.name not in ("tile", "base")}

    def option_axes(self) -> dict[str, list[Any]]:
        """Each run axis's values; narrowed ones matched by their text ('false', '2x2', '4-16'), so
        that the command line's strings select the typed values."""
        axes = {}
        for name in self.run_axes:
            every = _run_axis_values(self.target, name, self.processes)
            if name not in self.values:
                axes[name] = every
                continue
            wanted = [_text(value) for value in self.values[name]]
            unknown = [text for text in wanted if text not in map(_text, every)]
            if unknown:
                raise ValueError(f"{name} cannot be {', '.join(unknown)} here; its values: "
                                 f"{', '.join(map(_text, every))}")
            axes[name] = [value for value in every if _text(value) in wanted]
        return axes

    def option_choices(self) -> list[tuple[tuple[str, Any], ...]]:
        """Every combination of the run axes that the target can run."""
        options = self.option_axes()
        combined = (tuple(zip(options, chosen)) for chosen in itertools.product(*options.values()))
        return [chosen for chosen in combined if runs_on_a_grid(dict(chosen))]

    def __iter__(self) -> Iterator[Candidate]:
        choices = self.option_choices()
        for family in self.families:
            size_name = "base" if family == "recursive" else "tile"
            for tile in self.tiles():
                axes = self.family_axes(family, tile)
                for values in itertools.product(*axes.values()):
                    params = ((size_name, tile), *zip(axes, values))
                    for chosen in choices:
                        yield Candidate(family, params, chosen)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def neighbours(self, candidate: Candidate) -> list[Candidate]:
        """Candidates that differ from `candidate` in one axis by one step (the next value up or
        down in that axis's list): where a guided search refines around its best."""
        found = []
        options = self.option_axes()
        axes = {"tile": self.tiles(), **self.family_axes(candidate.family, candidate.size), **options}
        current = {"tile": candidate.size, **{k: v for k, v in candidate.params if k not in ("tile", "base")},
                   **candidate.option_dict()}
        size_name = "base" if candidate.family == "recursive" else "tile"
        for name, values in axes.items():
            if current.get(name) not in values:
                continue
            at = values.index(current[name])
            for step in (-1, 1):
                if 0 <= at + step < len(values):
                    changed = {**current, name: values[at + step]}
                    tile = changed.pop("tile")
                    params = ((size_name, tile), *((k, changed[k]) for k in self.family_axes(candidate.family, tile)
                                                   if k in changed))
                    blocks = -(-self.n // tile)
                    chosen = tuple((k, changed[k]) for k in options)
                    if dict(params).get("kappa", 1) > blocks or not runs_on_a_grid(dict(chosen)):
                        continue
                    found.append(Candidate(candidate.family, params, chosen))
        return found
