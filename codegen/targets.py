"""Targets as plug-ins: each is one declaration that everything else reads.

A target is one module with a builder `build(schedule, target, dtype, semiring, **options)`
returning a `codegen.compiled.Compiled`, plus one `register(Target(...))` line. The
declaration says what the rest of polyfw needs to know without importing the builder (Numba's
CUDA loads only for a GPU target): its element types, its options with their defaults and
parsers (the CLI's flags, a schedule text's run settings), the tile `solve` starts from, and
the axes `explore` searches. No other module lists targets or their knobs.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from schedules.distribute import Grid
from schedules.schedule import Schedule
from tiling.registry import Registry
from tiling.semirings import semiring as find_semiring


def parse_pair(text: str) -> tuple[int, int]:
    """'16x64' -> (16, 64)."""
    rows, _, columns = text.lower().partition("x")
    return int(rows), int(columns)


def _flag(text: str) -> bool:
    if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
        raise ValueError(f"expected true or false, got {text!r}")
    return text.lower() in ("true", "1", "yes")


def as_text(value: Any) -> str:
    """An option's or parameter's value as a schedule text writes it: true/false, 16x64, 4-16."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "-".join(map(str, value))
    return str(value)


@dataclass(frozen=True)
class Option:
    """One knob of a target: its name, default, meaning, and how to read it from text.
    `search` gives the values `explore` tries when the knob is a search axis and they are neither
    `choices` nor a flag's two values (it is passed the number of processes)."""

    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str
    choices: tuple = ()
    search: Callable[[int], list] | None = None

    @property
    def flag(self) -> str:
        return f"--{self.name.replace('_', '-')}"

    def search_values(self, processes: int = 1) -> list[Any]:
        """The values an exploration tries for this option."""
        if self.choices:
            return list(self.choices)
        if isinstance(self.default, bool):
            return [True, False]
        if self.search is not None:
            return list(self.search(processes))
        raise ValueError(f"option {self.name!r} has no values to search")


def _always(options: dict[str, Any]) -> bool:
    return True


@dataclass(frozen=True)
class Target:
    """A code generator's declaration (see the module docstring)."""

    name: str
    help: str
    dtypes: tuple[str, ...]
    options: tuple[Option, ...]
    #: 'module:function' of the builder, imported on first use
    builder: str
    #: the tile `solve` builds with when neither the caller nor the tuning table names one
    default_tile: int = 128
    #: the tile (or recursion base) sizes an exploration starts from, before n bounds them
    search_tiles: tuple[int, ...] = (32, 64, 128, 256)
    #: options that are axes of an exploration besides the schedule's own parameters
    search_axes: tuple[str, ...] = ()
    #: options a schedule's text may carry ('classic:tile=64,runtime=dataflow'): how it runs, not which
    schedule_settings: tuple[str, ...] = ()
    #: the target whose tuning-table rows this one reads where it has none of its own
    tuned_as: str | None = None
    #: its speed is the CPU's: tuning rows are kept per CPU, and the CPU's ceiling is its mark
    on_cpu: bool = False
    #: its kernels run on a CUDA GPU (or in Numba's simulator of one): sparse searches run there too
    on_gpu: bool = False
    #: options a run that checks exactness passes (what the hardware would do at once)
    checking_run: tuple[tuple[str, Any], ...] = ()
    #: collective: every MPI process calls it (mpiexec)
    collective: bool = False
    #: whether a combination of this target's options makes a distinct runnable configuration
    runs: Callable[[dict[str, Any]], bool] = _always

    def option(self, name: str) -> Option:
        for option in self.options:
            if option.name == name:
                return option
        raise ValueError(f"target {self.name!r} has no option {name!r}; its options: "
                         f"{', '.join(o.name for o in self.options) or 'none'}")

    def read_options(self, given: dict[str, Any]) -> dict[str, Any]:
        """`given` with its text values read by each option's parser ('2x2' -> (2, 2), 'false' ->
        False), so that options written as text (a schedule key, a command line) reach the builder typed."""
        parsers = {option.name: option.parse for option in self.options}
        return {name: parsers[name](value) if isinstance(value, str) and name in parsers else value
                for name, value in given.items()}

    def is_default(self, name: str, value: Any) -> bool:
        """Whether `value` (typed or text) is the option's default: left out of labels and keys."""
        declared = {option.name: option for option in self.options}
        return name in declared and as_text(declared[name].default) == as_text(value)

    def build(self, schedule: Schedule, dtype: str, semiring: str, **options):
        module, function = self.builder.split(":")
        return getattr(importlib.import_module(module), function)(schedule, self.name, dtype, semiring, **options)


#: every target generate, solve, explore and the CLI know: `register(Target(...))` adds one
TARGETS: Registry[Target] = Registry("target")
register, find_target = TARGETS.register, TARGETS.find


def grid_shapes(processes: int) -> list[str]:
    """Every pr x pc grid of `processes` processes, as 'PRxPC' text (the form `--grid` takes)."""
    return [f"{rows}x{processes // rows}" for rows in range(1, processes + 1) if processes % rows == 0]


def _register_blocks(processes: int) -> list[tuple[int, int]]:
    from .register_blocks import fitting_shapes  # the CPU's ISA is read only when a search asks

    return [tuple(shape) for shape in fitting_shapes()]


def _distinct_grid(options: dict[str, Any]) -> bool:
    """Whether the grid and placement options make a distinct process grid: 'strips' needs P x 1
    (schedules.distribute.Grid says so), and on one process row it is block-cyclic under another name."""
    if "grid" not in options:
        return True
    read = TARGETS["mpi"].read_options(options)
    placement = read.get("placement", "block-cyclic")
    try:
        grid = Grid(*read["grid"], placement)
    except ValueError:
        return False
    return not (placement == "strips" and grid.rows == 1)


_REGISTER_BLOCK = Option("register_block", None, "ROWSxCOLUMNS of the DD register block (default: the ISA's)", parse_pair,
                         search=_register_blocks)
_PREDECESSORS = Option("predecessors", False, "also track predecessors (pass pred when calling)", _flag)
_CUDA_OPTIONS = (
    Option("method", "R", "R: register tiles for every role (each thread holds a block of its task's tile; "
           "products staged through shared memory); A, B: seed 001's DD kernels (A: a register-tiled product, B: "
           "two-level blocking), other roles on a block in shared memory", str, ("R", "A", "B")),
    Option("sub_tile", (16, 64), "method A: ROWSxCOLUMNS of a thread block's sub-tile (clipped to the tile)", parse_pair),
    Option("per_block", 1, "method A: sub-tiles per thread block, sharing the A slice", int),
    Option("t_prime", None, "method B: thread rows t' (default: the largest of 4, 2, 1 dividing the tile)", int),
)
register(Target("cpu", "Numba on the CPU: prange over each stage's tasks, register-blocked tile kernels",
                ("float32", "float64", "int16", "int32", "uint8"),
                (_REGISTER_BLOCK, _PREDECESSORS,
                 Option("runtime", "barrier", "barrier: a barrier after each stage; dataflow: each tile-layer "
                        "once its direct predecessors are done, in the schedule's order, each thread's own "
                        "block rows first; dataflow-shared: one list for all", str,
                        ("barrier", "dataflow", "dataflow-shared")),
                 Option("driver", "auto", "a tile-level driver's form: replayed (the recorded kernel calls, no "
                        "compile), compiled (Numba), or auto: replayed up to 100,000 tile-layers", str,
                        ("auto", "compiled", "replayed")),
                 Option("packed", False, "or-and on rows packed 64 vertices a uint64 word: the matrix is n x "
                        "ceil(n/64) words, the tile a multiple of 64", _flag)),
                "codegen.cpu:build", search_axes=("runtime",), schedule_settings=("runtime",), on_cpu=True))
register(Target("cuda", "Numba CUDA on a GPU: one kernel per parallel band, one thread block per task",
                ("float32", "int32", "uint8"), _CUDA_OPTIONS, "codegen.cuda:build",
                default_tile=64, search_tiles=(32, 64, 128), search_axes=("method",), on_gpu=True))
register(Target("cudasim", "the cuda target's kernels in Numba's simulator (NUMBA_ENABLE_CUDASIM=1)",
                ("float32", "int32", "uint8"), _CUDA_OPTIONS, "codegen.cuda:build",
                default_tile=32, search_tiles=(4, 8), search_axes=("method",),
                checking_run=(("concurrent_blocks", True),), on_gpu=True))
register(Target("mpi", "a pr x pc grid of MPI processes (mpi4py), each running its blocks' tile-layers with the "
                "cpu target's kernels on its threads; blocks of the pivot row and column travel along process "
                "columns and rows. Collective: run under mpiexec", ("float32", "float64", "int32"),
                (Option("grid", None, "PRxPC processes (default: the squarest for the world's size; P x 1 for "
                        "strips)", parse_pair, search=grid_shapes),
                 Option("placement", "block-cyclic", "block-cyclic: block (ib, jb) on process (ib mod pr, jb mod pc); "
                        "strips: contiguous block rows (seed 003's row partition)", str, ("block-cyclic", "strips")),
                 Option("lookahead", True, "run what other processes wait for (the next pivot row and column) up to "
                        "one layer early, so its messages travel while the rest is updated", _flag),
                 Option("skip_inf", True, "skip tile-layers whose a[i,k] or a[k,j] block has nothing reachable; such "
                        "a block travels as an empty message", _flag),
                 Option("threads", None, "threads per process (default: the node's cores over its processes)", int),
                 _PREDECESSORS,
                 Option("unreachable_from", None, "values at or above this are unreachable (default: the dtype's INF)",
                        float),
                 _REGISTER_BLOCK),
                "codegen.mpi:build", search_tiles=(64, 128, 256), search_axes=("grid", "placement", "lookahead"),
                schedule_settings=("grid", "placement", "lookahead"), tuned_as="cpu", on_cpu=True, collective=True,
                runs=_distinct_grid))
register(Target("python", "the schedule's driver as plain Python and numpy, no Numba: an independent oracle "
                "for small n", ("float32", "float64", "int32", "uint8"), (), "codegen.python_target:build",
                search_tiles=(4, 8)))


def generate(schedule: Schedule, target: str = "cpu", dtype: str = "float32", semiring: str = "min-plus",
             **options):
    """Compile a schedule (built for a concrete n) into a callable that runs the FW nest in place.

    The callable applies the nest's relaxations in the schedule's order and
    nothing else (no zero diagonal, no INF handling); it returns the first
    pivot k found that improves on itself (min-plus: a[k, k] < 0), or -1.
    semiring: a name of tiling.semirings.SEMIRINGS whose (+) is selective. What
    the code runs at once is proved before it is compiled (schedules.emitted);
    the order of the tree itself is the caller's to check (schedules.check).
    options: the target's own (TARGETS[target].options), typed or as text ('2x2', 'false').
    """
    ring = find_semiring(semiring)
    ring.check_relaxed()
    spec = find_target(target)
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
    given = spec.read_options({key: value for key, value in options.items() if value is not None})
    return spec.build(schedule, dtype, ring.name, **given)
