"""What a call of solve decides, made in one place as one value: a Plan, kept per process.

A call reads as input -> plan -> run -> convert. The plan names the element type the kernels
compute in, the method (Floyd-Warshall by a proved schedule, Johnson's algorithm, or reachability
on rows packed 64 vertices a word), whether a sparse input is renumbered in nested-dissection
order, the compiled schedule with its runtime, and what the call returns. Plans are kept by
everything they read: what the caller asked, the input's kind, size, arc count and weights, the
tuning tables' and register-block choices' stamps, the thread count and this machine's
calibration. So a data set of small graphs decides once per kind of graph, and each call only logs
its plan's reasons (one line per choice made for the caller, as 'auto' promises).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numba

from codegen import generate
from codegen.packed_kernels import WORD_BITS
from codegen.register_blocks import choices_stamp
from codegen.targets import Target, find_target
from schedules.families import build as build_schedule
from schedules.races import racing_reads
from schedules.schedule import Schedule
from schedules.stages import stage_view
from tiling.semirings import MIN_PLUS, Semiring
from tiling.semirings import semiring as find_semiring

from .configuration import auto_choice_line, chosen_runtime, resolve_schedule
from .graphs import WeightSummary, resolve_dtype
from .graphs.blocks import TileLayers
from .graphs.inputs import semiring_dtype
from .graphs.ordering import worth_reordering
from .method import (SOLVE_METHODS, WIDER_MARGIN, MethodChoice, calibration_stamp, choose_method, fastest_exact,
                     method_rates)
from .machine.tuning import table_stamp

log = logging.getLogger("polyfw")

#: the tile reachability on packed rows runs in where none is asked for: 8 words a row (of 256, 512 and
#: 1024, the fastest at n = 4096 and 8192 on a 2-core AVX-512 Xeon with the bit-walking product, and again
#: with the table lookups on a 2-core AMD EPYC, AVX2: 0.134 s against 0.189 s for 1024 at n = 8192)
PACKED_TILE = 512


@dataclass(frozen=True)
class Asked:
    """What the caller of solve asked, checked: every option a plan reads."""

    semiring: str
    target: str
    dtype: object  # 'auto', None or a dtype-like
    schedule: str | Schedule
    tile: int | None
    kappa: int | None
    predecessors: bool
    method: str

    def __post_init__(self) -> None:
        ring = self.ring
        ring.check_relaxed()
        find_target(self.target)
        if self.predecessors and ring is not MIN_PLUS:
            raise ValueError(f"predecessors are kept for semiring min-plus only, not {ring.name}")
        if self.method not in SOLVE_METHODS:
            raise ValueError(f"method must be {', '.join(map(repr, SOLVE_METHODS[:-1]))} or "
                             f"{SOLVE_METHODS[-1]!r}, got {self.method!r}")

    @cached_property
    def ring(self) -> Semiring:
        return find_semiring(self.semiring)

    def __hash__(self) -> int:  # (a plan's key hashes the options every call: once an Asked)
        return self._hash

    @cached_property
    def _hash(self) -> int:
        return hash((self.semiring, self.target, self.dtype, self.schedule, self.tile, self.kappa, self.predecessors,
                     self.method))

    @property
    def auto_dtype(self) -> bool:
        return self.dtype is None or (isinstance(self.dtype, str) and self.dtype == "auto")

    @property
    def chose_nothing(self) -> bool:
        """No schedule, tile or kappa asked for: the plan picks what runs."""
        return isinstance(self.schedule, str) and self.schedule == "auto" and self.tile is None and self.kappa is None

    def prices_skips(self, n: int, arcs: int | None, sparse_input: bool) -> bool:
        """Whether method='auto' prices a dense run by the tile-layers it would skip on this input: a
        sparse one that Floyd-Warshall on the CPU would run in nested-dissection order."""
        if not (self.method == "auto" and sparse_input and not self.predecessors and self.chose_nothing
                and arcs is not None and worth_reordering(n, arcs)):
            return False  # (every small call stops here)
        target = find_target(self.target)
        return self.ring is MIN_PLUS and target.on_cpu and not target.collective

    @property
    def as_scipy(self) -> bool:
        """Returned as a scipy user expects: float64 with np.inf where unreachable."""
        return self.ring is MIN_PLUS and self.auto_dtype

    @property
    def reads_weights(self) -> bool:
        """Whether the plan needs the weights' summary: to choose a dtype or a method."""
        return self.ring is MIN_PLUS and (self.auto_dtype or self.method == "auto")


#: the options calls asked, checked: a program asks the same few over and over
_ASKED: dict[tuple, Asked] = {}


def asked(semiring: str, target: str, dtype: object, schedule: str | Schedule, tile: int | None, kappa: int | None,
          predecessors: bool, method: str) -> Asked:
    """Asked(...), checked once per distinct options (a caller's own Schedule is checked every call)."""
    options = (semiring, target, dtype, schedule, tile, kappa, predecessors, method)
    if not isinstance(schedule, str):
        return Asked(*options)
    try:
        found = _ASKED.get(options)
    except TypeError:  # an unhashable dtype-like: checked every call
        return Asked(*options)
    if found is None:
        found = _ASKED[options] = Asked(*options)
    return found


@dataclass(frozen=True, eq=False)
class Plan:
    """Everything a call decided: made once per kind of call (plan_for), then run and converted."""

    #: what the kernels compute in
    dtype: str
    #: 'dense' (Floyd-Warshall by the schedule), 'sparse' (Johnson's) or 'packed' (reachability on packed rows)
    method: str
    #: a sparse input is renumbered in nested-dissection order, so that blocked FW skips empty blocks
    reorder: bool
    #: the result is float64 with np.inf (scipy's convention), whatever the kernels computed in
    as_scipy: bool
    #: the proved, compiled schedule a dense or packed run takes, with its runtime
    compiled: object = None
    #: method='auto''s predictions (the result carries them)
    choice: MethodChoice | None = None
    #: one line per choice made for the caller, logged by every call that runs the plan
    reasons: tuple[str, ...] = field(default=())
    #: reachability takes its closure over the graph's strongly connected parts where that costs less
    #: (polyfw.graphs.components): on the default path, not where a schedule or tile was asked for
    condense: bool = False

    def log(self) -> None:
        if log.isEnabledFor(logging.INFO):
            for line in self.reasons:
                log.info("%s", line)


#: plans by everything plan_for reads: per process and unbounded (a data set of many small graphs asks
#: once per kind of graph; each plan holds a compiled schedule the code cache keeps anyway)
_PLANS: dict[tuple, Plan] = {}


def plan_for(asked: Asked, n: int, summary: WeightSummary | None, arcs: int | None, sparse_input: bool,
             layers: TileLayers | None = None, logged: bool = True) -> Plan:
    """The plan of a call on an n-vertex input (`arcs` of a sparse input, None for a dense matrix;
    `layers`: the tile-layers a dense run of it would run, where Asked.prices_skips), made or found,
    and its reasons logged (unless not `logged`: by the caller, if it runs the plan)."""
    stamp = table_stamp()  # (read once a call: each reading is a few stats and environment lookups)
    if isinstance(asked.schedule, Schedule):  # a caller's own schedule: proved and compiled for this call
        plan = _make_plan(asked, n, summary, arcs, sparse_input, layers, stamp)
    else:
        threads = numba.get_num_threads()
        layers = layers and layers.rounded()  # (graphs whose shares differ by less choose alike)
        key = (asked, n, summary, arcs, sparse_input, layers, stamp, choices_stamp(), threads,
               calibration_stamp(threads))
        plan = _PLANS.get(key)
        if plan is None:
            plan = _PLANS[key] = _make_plan(asked, n, summary, arcs, sparse_input, layers, stamp)
    if logged:
        plan.log()
    return plan


def _make_plan(asked: Asked, n: int, summary: WeightSummary | None, arcs: int | None, sparse_input: bool,
               layers: TileLayers | None, stamp: tuple) -> Plan:
    ring, target = asked.ring, find_target(asked.target)
    reasons: list[str] = []
    dtype = (chosen_dtype(ring, asked.target, summary, stamp, reasons) if asked.auto_dtype
             else resolve_dtype(asked.dtype).name if ring is MIN_PLUS else semiring_dtype(ring, asked.dtype).name)
    method, choice = asked.method, None
    if method == "auto" and (ring is not MIN_PLUS or not sparse_stands_in(target) or asked.schedule != "auto"
                             or asked.tile is not None or asked.kappa is not None):
        method = "dense"  # another semiring or target, or a schedule asked for: Floyd-Warshall by it
    if method != "dense" and (ring is not MIN_PLUS or not sparse_stands_in(target)):
        raise ValueError(f"method={method!r} solves min-plus on the CPU or a GPU; use method='dense' for semiring "
                         f"{ring.name} on target {asked.target!r}")
    if method != "dense":
        one_weight = summary is not None and 0 <= summary.lightest == summary.heaviest
        choice = choose_method(n, summary.arcs if summary is not None else arcs, dtype,
                               method_rates(asked.target, stamp), one_weight=one_weight, layers=layers)
        reasons.append(f"method={method!r} chose {choice if method == 'auto' else f'sparse ({choice})'}")
        method = "sparse" if method == "sparse" else choice.method
    if method == "sparse":
        return Plan(dtype, "sparse", False, asked.as_scipy, None, choice, tuple(reasons))
    if ring.name == "or-and" and asked.auto_dtype and asked.target == "cpu":
        packed = _packed_schedule(asked, n)
        if packed is not None:
            compiled = generate(packed, target="cpu", dtype="uint8", semiring="or-and", packed=True)
            return Plan("uint8", "packed", False, False, compiled, choice, tuple(reasons), condense=asked.chose_nothing)
    reorder = sparse_input and ring is MIN_PLUS and not asked.predecessors and worth_reordering(n, arcs)
    if reorder:
        reasons.append(f"{n} vertices, {arcs} arcs: computing in nested-dissection order")
    compiled = compiled_for(asked.schedule, n, ring, asked.tile, asked.kappa, asked.target, dtype,
                            asked.predecessors, reasons)
    return Plan(dtype, "dense", reorder, asked.as_scipy, compiled, choice, tuple(reasons))


def sparse_stands_in(target: Target) -> bool:
    """Whether the sparse method (Johnson's, on this CPU in this process, or on the GPU) may stand in
    for a run on `target`: one whose kernels run on the CPU, not collectively, or on a GPU."""
    return target.on_gpu or (target.on_cpu and not target.collective)


def chosen_dtype(ring: Semiring, target: str, summary: WeightSummary | None, stamp: tuple | None = None,
                 reasons: list[str] | None = None) -> str:
    """dtype='auto': for min-plus the narrowest exact kernel type the target computes in (never an
    inexact one), for other semirings their first type; the reason is added to `reasons`."""
    if ring is not MIN_PLUS or summary is None:
        return ring.dtypes[0]
    exact = summary.exact_dtypes()
    offered = [name for name in exact if name in find_target(target).dtypes]
    if not offered:
        raise ValueError(f"dtype='auto': target {target!r} computes in none of the types exact for these weights "
                         f"({', '.join(exact)}); pass a dtype by name to accept rounding, or use target 'cpu'")
    chosen = fastest_exact(offered, method_rates(target, stamp))
    skipped = [name for name in list(exact)[:list(exact).index(chosen)] if name not in offered]
    note = f" (target {target} has no {', '.join(skipped)})" if skipped else ""
    if chosen != offered[0]:
        note += f" (calibrated {WIDER_MARGIN:g}x or more faster than {offered[0]} here)"
    if reasons is not None:
        reasons.append(f"dtype='auto' chose {chosen}: {exact[chosen]}{note}")
    return chosen


def compiled_for(schedule: str | Schedule, n: int, ring: Semiring, tile: int | None, kappa: int | None, target: str,
                 dtype_name: str, predecessors: bool, reasons: list[str] | None = None):
    """The proved, compiled schedule a dense run takes: the schedule text's (or the tuning table's
    for 'auto', whose choice is added to `reasons`), with its runtime."""
    chosen = resolve_schedule(schedule, n, dtype_name, target, tile, kappa, logged=reasons is None)
    if schedule == "auto" and reasons is not None:
        reasons.append(auto_choice_line(chosen, target, dtype_name))
    runtime = chosen_runtime(schedule, n, dtype_name, target)
    if schedule == "auto" and predecessors and target == "cpu" and not _parallel_with_predecessors(chosen, runtime, n):
        chosen, runtime = build_schedule("classic", n, min(chosen.tile, PREDECESSOR_TILE)), None
        if reasons is not None:
            reasons.append(f"predecessors: classic, tile {chosen.tile}, barrier runtime (the tuned schedule would "
                           f"keep them on one thread)")
    return generate(chosen, target=target, dtype=dtype_name, semiring=ring.name,
                    **({"predecessors": True} if predecessors else {}),
                    **({"runtime": runtime} if runtime is not None
                       and not find_target(target).is_default("runtime", runtime) else {}))


#: the largest tile of the schedule 'auto' gives way to with predecessors: a tile-layer then holds an int32
#: predecessor beside each entry (int16 at 256: C, A, B and their predecessors 1.1 MiB, past a 1 MiB L2; with
#: predecessors on Zen 4, classic 256 -> 128 took int16 from 83 to 42 ms at n = 1024 and 317 to 254 at 2048)
PREDECESSOR_TILE = 128


def _parallel_with_predecessors(chosen: Schedule, runtime: str | None, n: int) -> bool:
    """Whether a run that keeps predecessors goes on every thread: a tile-layer that reads a block while another
    task writes it could see a torn (distance, predecessor) pair, so the dataflow runtime and stages whose
    tasks read each other's blocks (schedules.races) run on one thread (codegen.cpu)."""
    return runtime in (None, "barrier") and chosen.tile_tree is not None and _race_free(chosen, n)


@lru_cache(maxsize=64)
def _race_free(chosen: Schedule, n: int) -> bool:
    """No task of a stage reads a block another one writes (50-120 ms a schedule: once per schedule, which
    'auto' builds once per configuration, polyfw.configuration)."""
    return racing_reads(stage_view(chosen.tile_tree, n, chosen.tile)) == 0


def _packed_schedule(asked: Asked, n: int) -> Schedule | None:
    """The schedule reachability runs on packed rows: one tile of whole words where n is smaller than
    PACKED_TILE, else the one asked for; None where it cannot run so (a tile that is not whole words, a
    tree over points): then the uint8 path runs."""
    if asked.chose_nothing:
        return build_schedule("classic", n, min(PACKED_TILE, -(-n // WORD_BITS) * WORD_BITS))
    chosen = resolve_schedule(asked.schedule, n, "uint8", "cpu", asked.tile, asked.kappa, logged=False)
    if chosen.tile_tree is None or chosen.tile % WORD_BITS or not chosen.original_point_order:
        return None
    return chosen
