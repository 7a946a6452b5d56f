"""Which schedule a run takes: a schedule's text ('generalized:kappa=2,tile=64,runtime=dataflow'),
or for 'auto' the tuning table's entry for the size, built and clipped to the problem.

A text names a family and its parameters (each parsed by its declared type: schedules.families)
and may carry run settings: the options a target declares as its `schedule_settings`
(codegen.targets), each read and checked by its declaration and kept as text. Nothing here names
a family, a target or an option. A measured winner goes into the tuning table (polyfw.machine.tuning
keeps the files) once it is proved for every size it will stand for.
"""
from __future__ import annotations

import json
import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import islpy as isl

from codegen.targets import TARGETS, Option, find_target
from schedules.families import FAMILIES, build, find_family
from schedules.legality import illegal_sizes
from schedules.parameters import parameter
from schedules.proofs import prove
from schedules.schedule import Schedule

from .machine.tuning import (EVERY_LARGER_N, applies, as_text_values, merge_winner, read_table, target_rows,
                             tuned_rows, tuning_path)

log = logging.getLogger("polyfw")

#: the family `solve` runs where no tuning-table entry stands for the size
UNTUNED_FAMILY = "classic"
#: solve's value of a parameter bounded by the blocks a side (kappa) when none is given or tuned
BLOCK_BOUNDED_DEFAULT = 4
#: the tuning table's entries with another runtime than the default apply from this many blocks a
#: side: below it a layer has too few tiles to overlap, and each new tile size (tile = n when
#: n < tile) compiles a runtime
DATAFLOW_FROM_BLOCKS = 4


def schedule_settings() -> dict[str, Option]:
    """Every setting a schedule's text may carry besides its family's parameters: how a target runs
    it, by name, with the option that reads and checks it (the first target that declares it)."""
    found: dict[str, Option] = {}
    for target in TARGETS.values():
        for name in target.schedule_settings:
            found.setdefault(name, target.option(name))
    return found


def is_schedule_setting(name: str) -> bool:
    return name in schedule_settings()


def _run_setting(option: Option, value: str, text: str) -> str:
    try:
        parsed = option.parse(value)
    except ValueError as error:
        raise ValueError(f"{option.name} in {text!r}: {error}") from None
    if option.choices and parsed not in option.choices:
        raise ValueError(f"{option.name} in {text!r} must be one of {', '.join(option.choices)}, got {value!r}")
    return value


def _size_name(family: str, key: str) -> str:
    """A parameter's declared name: 'tile' also names a family's block size called otherwise (base)."""
    size = FAMILIES[family].size
    return size if key == "tile" and size else key


def parse_schedule(text: str) -> tuple[str, dict[str, Any]]:
    """'generalized:kappa=2,tile=64' -> ('generalized', {'kappa': 2, 'tile': 64}): each value parsed
    by its declared type ('recursive:paired=false' is False), plus the run settings
    ('runtime=dataflow', 'grid=2x2', 'lookahead=false'), checked and kept as text. A ';' separates
    like ',' (an exploration's key: 'classic:tile=64,stages=I-SD-DD;runtime=dataflow')."""
    family, _, settings = text.partition(":")
    family = family.strip()
    params: dict[str, Any] = {}
    run_settings_ = schedule_settings()
    for item in filter(None, settings.replace(";", ",").split(",")):
        key, equals, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not equals:
            raise ValueError(f"schedule setting {item!r} in {text!r} is not key=value")
        if key in run_settings_:
            params[key] = _run_setting(run_settings_[key], value, text)
        elif family in FAMILIES:
            params[key] = parameter(family, _size_name(family, key)).parse(value, family)
        else:
            raise ValueError(f"unknown schedule family {family!r} in {text!r}; use one of {', '.join(FAMILIES)}")
    return family, params


def run_settings(schedule: str | Schedule, n: int, dtype: str, target: str) -> dict[str, Any]:
    """The settings of `target` (typed) that a schedule's text gives, or for 'auto' the tuning
    table's entry for this size; {} for a Schedule object."""
    if isinstance(schedule, Schedule):
        return {}
    params = auto_configuration(n, dtype, target)[1] if schedule == "auto" else parse_schedule(schedule)[1]
    spec = find_target(target)
    return spec.read_options({key: str(value) for key, value in params.items() if key in spec.schedule_settings})


def auto_configuration(n: int, dtype: str, target: str = "cpu") -> tuple[str, dict[str, Any]]:
    """The tuning tables' configuration for this size, dtype and target: the first row, the
    user's before the shipped ones, that stands for n and is proved legal there
    (polyfw.machine.tuning.applies); a target with no rows of its own reads those of the target
    it is tuned as; else UNTUNED_FAMILY with the target's default tile."""
    spec = find_target(target)
    rows = tuned_rows(target, dtype)
    if not rows and spec.tuned_as:
        return auto_configuration(n, dtype, spec.tuned_as)
    for row in rows:
        if applies(row, n):
            return row[1], _hashable(row[2])
    return UNTUNED_FAMILY, {"tile": spec.default_tile}


def _hashable(params: dict[str, Any]) -> dict[str, Any]:
    """A table entry's parameters with orders as tuples (a JSON table may hold them as lists)."""
    return {name: tuple(value) if isinstance(value, list) else value for name, value in params.items()}


def _block_size(family: str, params: dict[str, Any], default: int) -> int:
    """The configuration's block size, given as 'tile' or by its family's name for it (base); 1 for
    a family without one."""
    size = FAMILIES[family].size if family in FAMILIES else "tile"
    if size is None:
        return 1
    return int(params.get("tile", params.get(size, default)))


def chosen_runtime(schedule: str | Schedule, n: int, dtype: str, target: str = "cpu") -> str | None:
    """The runtime a target with a 'runtime' setting runs the schedule with (None for a target
    without one): the schedule's text's, or for 'auto' the tuning table's where n has
    DATAFLOW_FROM_BLOCKS tiles a side; else the option's default."""
    spec = find_target(target)
    if "runtime" not in spec.schedule_settings:
        return None
    default = spec.option("runtime").default
    if isinstance(schedule, Schedule):
        return default
    runtime = run_settings(schedule, n, dtype, target).get("runtime", default)
    if schedule != "auto":
        return runtime
    family, params = auto_configuration(n, dtype, target)
    return runtime if n >= DATAFLOW_FROM_BLOCKS * _block_size(family, params, spec.default_tile) else default


@lru_cache(maxsize=64)
def _build_once(family: str, n: int, tile: int | None, params: tuple) -> Schedule:
    """Families build their isl trees afresh (recursive at n = 2642: 1.4 s), and solve asks
    for the same few again and again; schedules are never changed in place."""
    return build(family, n, tile, **dict(params))


def build_configuration(family: str, params: dict[str, Any], n: int | None, target: str = "cpu") -> Schedule:
    """The schedule a configuration (a tuning-table entry, a parsed schedule text) names, for n
    vertices or (n=None) parametric in n: the block size clipped to n (the target's default tile
    where none is given), a parameter bounded by the blocks a side (kappa) to them."""
    declared = find_family(family)
    params = {key: value for key, value in params.items() if not is_schedule_setting(key)}  # how it runs, not which
    size = _block_size(family, params, find_target(target).default_tile)
    params = {key: value for key, value in params.items() if key not in ("tile", declared.size)}
    if n is not None:
        size = min(size, n)
    for bounded in (p.name for p in declared.parameters if p.up_to_blocks):
        value = int(params.get(bounded, BLOCK_BOUNDED_DEFAULT))
        params[bounded] = value if n is None else min(value, -(-n // size))
    return _build_once(family, n, size if declared.size else None, tuple(sorted(params.items())))


def resolve_schedule(schedule: str | Schedule, n: int, dtype: str, target: str = "cpu",
                     tile: int | None = None, kappa: int | None = None, logged: bool = True) -> Schedule:
    """A concrete schedule for an n-vertex problem from a family name, 'auto', or a Schedule; what
    'auto' chose is logged unless `logged` is False (a plan logs it with its other choices)."""
    if isinstance(schedule, Schedule):
        if schedule.n != n:
            raise ValueError(f"schedule {schedule.name} was built for n={schedule.n}, the graph has {n} vertices")
        return schedule
    family, params = auto_configuration(n, dtype, target) if schedule == "auto" else parse_schedule(schedule)
    if family not in FAMILIES:
        raise ValueError(f"unknown schedule {schedule!r}; use 'auto', one of {', '.join(FAMILIES)} "
                         f"(optionally 'family:key=value,...'), or a Schedule")
    if tile is not None:
        params["tile"] = tile
    if kappa is not None:
        params["kappa"] = kappa
    chosen = build_configuration(family, params, n, target)
    if schedule == "auto" and logged:
        log_auto_choice(chosen, target, dtype)
    return chosen


def log_auto_choice(chosen: Schedule, target: str, dtype: str) -> None:
    log.info("%s", auto_choice_line(chosen, target, dtype))


def auto_choice_line(chosen: Schedule, target: str, dtype: str) -> str:
    """What schedule='auto' chose, as solve and the other callers log it."""
    return f"schedule='auto' chose {chosen.name} ({target}, {dtype})"


def proved_sizes(family: str, params: dict[str, Any], n: int, target: str = "cpu") -> tuple[int, int]:
    """The widest range of sizes around n for which the configuration is proved legal: from its
    parametric tree where the family builds one (isl gives every n it breaks a dependence at),
    else n alone, proved at n."""
    try:
        parametric = build_configuration(family, dict(params), None, target)
    except ValueError:  # a family whose tree needs a concrete n (recursive)
        prove(build_configuration(family, dict(params), n, target))
        return n, n
    illegal = isl.Set.from_params(illegal_sizes(parametric)).move_dims(isl.dim_type.set, 0, isl.dim_type.param, 0, 1)
    if not illegal.intersect(isl.Set(f"{{ [m] : m = {n} }}")).is_empty():
        raise ValueError(f"{family} {params} is illegal at n = {n}: it cannot be tuned there")
    below = illegal.intersect(isl.Set(f"{{ [m] : m < {n} }}"))
    above = illegal.intersect(isl.Set(f"{{ [m] : m > {n} }}"))
    first = 1 if below.is_empty() else below.lexmax().sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python() + 1
    last = EVERY_LARGER_N if above.is_empty() else min(
        EVERY_LARGER_N, above.lexmin().sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python() - 1)
    return first, last


def write_winner(n: int, dtype: str, target: str, family: str, params: dict[str, Any], machine_key: str,
                 machine_model: str, path: Path | str | None = None) -> Path:
    """Prove the winner for every size it will stand for, put it into the user's table (or `path`:
    benchmarks/cpu.py regenerates the shipped one in a source tree so) for (n, dtype, target), and
    return the file written."""
    path = Path(path) if path is not None else tuning_path()
    proved = proved_sizes(family, params, n, target)
    table = read_table(path) if path.exists() else {}
    table = json.loads(json.dumps(table))  # a copy: the cached one stays as read
    rows = target_rows(table, target, machine_key, machine_model)
    rows[dtype] = merge_winner(rows.get(dtype, []), n, family, as_text_values(params), proved)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(table, indent=2) + "\n")
    temporary.replace(path)
    return path
