"""Targets as plug-ins: each declares its dtypes and options and how to build; `generate` looks it up.

A target is one module with a builder `build(schedule, target, dtype, **options)` returning a
compiled object (call it on a matrix; `source`, `isl_c`, `last_run`, `workers`), plus one
`register(Target(...))` line here. The builder's module is imported when the target is first
used (numba.cuda loads only for a GPU target); its options are declared here, where the CLI
reads them, so no list of knobs is written twice.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from schedules.schedule import Schedule
from tiling.semirings import semiring as find_semiring


def _pair(text: str) -> tuple[int, int]:
    """'16x64' -> (16, 64)."""
    rows, _, columns = text.lower().partition("x")
    return int(rows), int(columns)


def _flag(text: str) -> bool:
    if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
        raise ValueError(f"expected true or false, got {text!r}")
    return text.lower() in ("true", "1", "yes")


@dataclass(frozen=True)
class Option:
    """One knob of a target: its name, default, meaning, and how to read it from text."""

    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str
    choices: tuple = ()


@dataclass(frozen=True)
class Target:
    name: str
    help: str
    dtypes: tuple[str, ...]
    options: tuple[Option, ...]
    #: 'module:function' of the builder, imported on first use
    builder: str

    def read_options(self, given: dict[str, Any]) -> dict[str, Any]:
        """`given` with its text values read by each option's parser ('2x2' -> (2, 2), 'false' ->
        False), so that options written as text (a schedule key, a command line) reach the builder typed."""
        parsers = {option.name: option.parse for option in self.options}
        return {name: parsers[name](value) if isinstance(value, str) and name in parsers else value
                for name, value in given.items()}

    def build(self, schedule: Schedule, dtype: str, semiring: str, **options):
        module, function = self.builder.split(":")
        return getattr(importlib.import_module(module), function)(schedule, self.name, dtype, semiring, **options)


TARGETS: dict[str, Target] = {}


def register(target: Target) -> Target:
    TARGETS[target.name] = target
    return target


_CUDA_OPTIONS = (
    Option("method", "A", "DD kernel (seed 001): A, a register-tiled product; B, two-level blocking", str, ("A", "B")),
    Option("sub_tile", (16, 64), "method A: ROWSxCOLUMNS of a thread block's sub-tile (clipped to the tile)", _pair),
    Option("per_block", 1, "method A: sub-tiles per thread block, sharing the A slice", int),
    Option("t_prime", None, "method B: thread rows t' (default: the largest of 4, 2, 1 dividing the tile)", int),
)
register(Target("cpu", "Numba on the CPU: prange over each stage's tasks, register-blocked tile kernels",
                ("float32", "float64", "int32", "uint8"),
                (Option("register_block", None, "ROWSxCOLUMNS of the DD register block (default: the ISA's)", _pair),
                 Option("predecessors", False, "also track predecessors (pass pred when calling)", _flag),
                 Option("runtime", "barrier", "barrier: a barrier after each stage; dataflow: each tile-layer "
                        "once its direct predecessors are done, in the schedule's order, each thread's own "
                        "block rows first; dataflow-shared: one list for all", str,
                        ("barrier", "dataflow", "dataflow-shared")),
                 Option("driver", "auto", "a tile-level driver's form: replayed (the recorded kernel calls, no "
                        "compile), compiled (Numba), or auto: replayed up to 100,000 tile-layers", str,
                        ("auto", "compiled", "replayed"))),
                "codegen.cpu:build"))
register(Target("cuda", "Numba CUDA on a GPU: one kernel per parallel band, one thread block per task",
                ("float32", "int32", "uint8"), _CUDA_OPTIONS, "codegen.cuda:build"))
register(Target("cudasim", "the cuda target's kernels in Numba's simulator (NUMBA_ENABLE_CUDASIM=1)",
                ("float32", "int32", "uint8"), _CUDA_OPTIONS, "codegen.cuda:build"))
register(Target("mpi", "a pr x pc grid of MPI processes (mpi4py), each running its blocks' tile-layers with the "
                "cpu target's kernels on its threads; blocks of the pivot row and column travel along process "
                "columns and rows. Collective: run under mpiexec", ("float32", "float64", "int32"),
                (Option("grid", None, "PRxPC processes (default: the squarest for the world's size; P x 1 for "
                        "strips)", _pair),
                 Option("placement", "block-cyclic", "block-cyclic: block (ib, jb) on process (ib mod pr, jb mod pc); "
                        "strips: contiguous block rows (seed 003's row partition)", str, ("block-cyclic", "strips")),
                 Option("lookahead", True, "run what other processes wait for (the next pivot row and column) up to "
                        "one layer early, so its messages travel while the rest is updated", _flag),
                 Option("skip_inf", True, "skip tile-layers whose a[i,k] or a[k,j] block has nothing reachable; such "
                        "a block travels as an empty message", _flag),
                 Option("threads", None, "threads per process (default: the node's cores over its processes)", int),
                 Option("predecessors", False, "also track predecessors (pass pred when calling)", _flag),
                 Option("unreachable_from", None, "values at or above this are unreachable (default: the dtype's INF)",
                        float),
                 Option("register_block", None, "ROWSxCOLUMNS of the DD register block (default: the ISA's)", _pair)),
                "codegen.mpi:build"))
register(Target("python", "the schedule's driver as plain Python and numpy, no Numba: an independent oracle "
                "for small n", ("float32", "float64", "int32", "uint8"), (), "codegen.python_target:build"))


def generate(schedule: Schedule, target: str = "cpu", dtype: str = "float32", semiring: str = "min-plus",
             **options):
    """Compile a schedule (built for a concrete n) into a callable that runs the FW nest in place.

    The callable applies the nest's relaxations in the schedule's order and
    nothing else (no zero diagonal, no INF handling); it returns the first
    pivot k found that improves on itself (min-plus: a[k, k] < 0), or -1.
    semiring: a name of tiling.semirings.SEMIRINGS whose (+) is selective. What
    the code runs at once is proved before it is compiled (schedules.emitted);
    the order of the tree itself is the caller's to check (schedules.check).
    options: the target's own (TARGETS[target].options).
    """
    ring = find_semiring(semiring)
    ring.check_relaxed()
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; available: {', '.join(TARGETS)}")
    spec = TARGETS[target]
    dtype = str(dtype)
    if dtype not in spec.dtypes:
        raise ValueError(f"target {target!r} computes in {', '.join(spec.dtypes)}, not {dtype!r}")
    if dtype not in ring.dtypes:
        raise ValueError(f"semiring {ring.name} computes in {', '.join(ring.dtypes)}, not {dtype!r}")
    declared = [option.name for option in spec.options]
    unknown = sorted(set(options) - set(declared))
    if unknown:
        raise ValueError(f"target {target!r} has no option {', '.join(unknown)}; "
                         f"its options: {', '.join(declared) or 'none'}")
    return spec.build(schedule, dtype, ring.name, **{key: value for key, value in options.items() if value is not None})
