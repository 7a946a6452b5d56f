"""Seconds predicted from a schedule's stage view and one machine's calibration.

The model is made of the parts a run is made of (codegen.profile splits a
measured run the same way): each tile-layer costs its role's measured time
per relaxation at its tile size, each call of a tile kernel (a layer product's
layers are one) its measured cost, plus, when the matrix spills out of the
last-level cache, the elements its task loads at the measured cost of an
element from memory; a stage under packed operands (schedules.packing) first
copies the operand blocks its products read, and those products run at the
rate measured on micro-panels, loading only the block they write; a task costs a dispatch; a barrier runtime adds each
stage's start and barrier, the stragglers it waits for, and the driver's serial time per call; a dataflow
runtime adds its own time per call (a layer product's layers are one call,
StageView.call_start). The tasks of each stage
(or the tile-layers, as dataflow) are list-scheduled on the calibrated
threads. Nothing here is a formula per family: every schedule is read off its view.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
from numba import njit

from .packing import publishes_within
from .simulate import list_schedule, predecessor_table, priority_order, stage_barrier_times
from .stages import ROLES, StageView

#: the parts of a predicted run, as codegen.profile names a measured one's (and the dataflow
#: runtime's own time)
PREDICTED_PARTS = (*ROLES, "memory", "packing", "waiting in stages", "between stages", "runtime")


@dataclass(frozen=True)
class Calibration:
    """One machine's measured parts for one element type (polyfw.machine.calibrate measures them;
    `Calibration.assumed` stands in where nothing was measured)."""

    dtype: str
    threads: int
    #: tile -> role -> thread-seconds per relaxation with every thread busy, the matrix in cache
    relaxation: dict[int, dict[str, float]]
    #: matrix bytes -> tile -> thread-seconds per element a task loads, beyond the in-cache rates,
    #: measured at matrices of those sizes (they spill out of the caches more as they grow)
    element_load: dict[int, dict[int, float]] = field(default_factory=dict)
    #: the matrix bytes the in-cache rates were measured at (loads cost nothing extra up to there)
    in_cache_bytes: int = 0
    #: bytes of the cache a thread has to itself (a block a task touched is loaded again once more than
    #: this was touched since; 0: a task keeps every block it touched)
    private_cache_bytes: int = 0
    #: driver form -> a stage's start and barrier (barrier runtime), seconds
    stage: dict[str, float] = field(default_factory=dict)
    #: barrier runtime: the share of a stage's length added by waiting for its slowest thread beyond the
    #: uneven split of its tasks (a shared host's threads do not run at one speed; a dataflow runtime's
    #: idle thread takes other work instead)
    straggle: float = 0.0
    #: driver form -> the driver's serial seconds per call of a tile kernel (a compiled one writes each
    #: stage's task list; a replayed one has them recorded)
    driver: dict[str, float] = field(default_factory=dict)
    #: thread-seconds per task (taking it from the shared counter)
    task: float = 0.0
    #: runtime -> the dataflow runtime's own thread-seconds per call
    dataflow: dict[str, float] = field(default_factory=dict)
    #: tile -> thread-seconds a tile kernel's call costs beyond its relaxations (entering it, its block
    #: loaded and stored): a layer product pays it once for its layers (StageView.call_start); empty in
    #: a calibration that measured one family only, whose rates hold it
    call: dict[int, float] = field(default_factory=dict)
    #: tile -> thread-seconds per relaxation of a product reading its operands from micro-panels (calls
    #: apart, as `relaxation`'s); empty where not measured: such products cost what in-place ones do
    packed: dict[int, float] = field(default_factory=dict)
    #: thread-seconds per element a packed stage copies into its micro-panels (its loads from memory apart),
    #: and the seconds a packed stage's copying costs whatever it copies (a parallel region, the slot table)
    pack: float = 0.0
    pack_stage: float = 0.0
    #: register block 'RxC' -> its product rate relative to the block calibrated with
    register_blocks: dict[str, float] = field(default_factory=dict)
    #: memory bandwidth measured beside (bytes/s; reported, the element cost is what predicts)
    bandwidth: float = 0.0
    #: processes the threads belong to (1 but for a collective target)
    processes: int = 1
    #: seconds of the speed probe (polyfw.machine.calibrate.speed_probe) when calibrated: a shared
    #: host's speed moves, and the probe taken again says by how much
    probe: float = 0.0
    #: whether measured here, or assumed
    measured: bool = True

    @classmethod
    def assumed(cls, dtype: str, threads: int, relaxations_per_second: float,
                runtimes: tuple[str, ...] = ()) -> Calibration:
        """A stand-in from one product rate (every role and tile alike), no overheads (`runtimes`: the
        dataflow runtimes, at none of their own): ranks by work and its split only."""
        seconds = 1.0 / relaxations_per_second
        return cls(dtype, threads, {128: dict.fromkeys(ROLES, seconds)}, dataflow=dict.fromkeys(runtimes, 0.0),
                   measured=False)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, given: dict) -> Calibration:
        fields_ = dict(given)
        fields_["relaxation"] = {int(t): roles for t, roles in given["relaxation"].items()}
        fields_["element_load"] = {int(size): {int(t): s for t, s in by_tile.items()}
                                   for size, by_tile in given.get("element_load", {}).items()}
        fields_["call"] = {int(t): s for t, s in given.get("call", {}).items()}
        fields_["packed"] = {int(t): s for t, s in given.get("packed", {}).items()}
        return cls(**fields_)

    def per_relaxation(self, tile: int) -> np.ndarray:
        """Seconds per relaxation of each role (ROLES order) at `tile`: between calibrated tiles
        interpolated in log2(tile), beyond them the nearest one's."""
        return np.array([_interpolated({t: r[role] for t, r in self.relaxation.items()}, tile) for role in ROLES])

    def packed_relaxation(self, tile: int) -> float:
        """Seconds per relaxation of a product on micro-panels at `tile` (the in-place DD rate where
        not measured)."""
        return _interpolated(self.packed, tile) if self.packed else float(self.per_relaxation(tile)[ROLES.index("DD")])

    def call_seconds(self, tile: int) -> float:
        """Thread-seconds a tile kernel's call costs beyond its relaxations at `tile` (interpolated as
        the rates are; 0 where not measured apart)."""
        return _interpolated(self.call, tile) if self.call else 0.0

    def capacity(self) -> float:
        """The elements a thread's own cache holds (inf where not measured)."""
        return self.private_cache_bytes / np.dtype(self.dtype).itemsize if self.private_cache_bytes else math.inf

    def product_rate(self, tile: int) -> float:
        """Relaxations per second of one thread in the product (the DD role) at `tile`."""
        return 1.0 / float(self.per_relaxation(tile)[ROLES.index("DD")])

    def load_seconds(self, tile: int, matrix_bytes: int) -> float:
        """Seconds per element loaded at `tile` for a matrix of this many bytes: 0 up to the in-cache
        size, the measured costs at the sizes measured, log-linear between them, the largest's beyond."""
        if not self.element_load or matrix_bytes <= self.in_cache_bytes:
            return 0.0
        sizes = [self.in_cache_bytes, *sorted(self.element_load)]
        costs = [0.0, *(_interpolated(self.element_load[size], tile) for size in sizes[1:])]
        at = min(math.log(matrix_bytes), math.log(sizes[-1]))
        return float(np.interp(at, [math.log(max(size, 1)) for size in sizes], costs))


def _interpolated(by_tile: dict[int, float], tile: int) -> float:
    tiles = sorted(by_tile)
    at = min(max(math.log2(tile), math.log2(tiles[0])), math.log2(tiles[-1]))
    logs = [math.log2(t) for t in tiles]
    return float(np.interp(at, logs, [by_tile[t] for t in tiles]))


@dataclass(frozen=True)
class Prediction:
    """A schedule's predicted seconds, split into PREDICTED_PARTS (wall seconds: thread-seconds over threads)."""

    seconds: float
    parts: dict[str, float]
    threads: int
    runtime: str

    def explain(self) -> str:
        """The breakdown as lines, largest part first, with each part's share."""
        width = max(map(len, self.parts))
        lines = [f"  {part:<{width}}  {seconds * 1e3:10.3f} ms {seconds / self.seconds:6.1%}"
                 for part, seconds in sorted(self.parts.items(), key=lambda item: -item[1]) if seconds > 0]
        return "\n".join(lines + [f"  {'predicted':<{width}}  {self.seconds * 1e3:10.3f} ms on {self.threads} "
                                  f"threads, {self.runtime} runtime"])


def _sides(view: StageView) -> np.ndarray:
    """Each unit's (k, i, j) block sides (the last block of a side may be partial)."""
    return np.minimum(view.tile, view.n - view.tile * view.units.astype(np.int64)).astype(np.float64)


@njit(cache=True)
def _task_loads(units: np.ndarray, task: np.ndarray, sides: np.ndarray, blocks: int, tasks: int,
                capacity: float, on_panels: np.ndarray) -> np.ndarray:
    """Elements each task loads: each block it reads or writes, again when more than `capacity`
    elements were touched since the task last touched it (a least-recently-used cache, counted); a
    unit on micro-panels loads only the block it writes (its operands were copied as its stage began)."""
    loaded_by = np.full(blocks * blocks, -1, dtype=np.int64)
    touched_at = np.zeros(blocks * blocks)
    loads = np.zeros(tasks)
    touched = 0.0
    for u in range(units.shape[0]):
        t = task[u]
        kb, ib, jb = units[u, 0], units[u, 1], units[u, 2]
        sk, si, sj = sides[u, 0], sides[u, 1], sides[u, 2]
        for pair in range(1 if on_panels[u] else 3):  # C (ib, jb), A (ib, kb), B (kb, jb)
            a, b = (ib, jb) if pair == 0 else ((ib, kb) if pair == 1 else (kb, jb))
            size = si * sj if pair == 0 else (si * sk if pair == 1 else sk * sj)
            block = a * blocks + b
            if loaded_by[block] != t or touched - touched_at[block] > capacity:
                loaded_by[block] = t
                loads[t] += size
            touched += size
            touched_at[block] = touched
    return loads


def task_loads(view: StageView, sides: np.ndarray | None = None, capacity: float = math.inf,
               on_panels: np.ndarray | None = None) -> np.ndarray:
    """Elements each task of the view loads: every block it touches, once, unless more than `capacity`
    elements (a thread's own cache) were touched since (then once more); `on_panels` ((U,) bool): the
    units whose operands come from micro-panels (none by default)."""
    sides = _sides(view) if sides is None else sides
    on_panels = np.zeros(len(view.units), dtype=bool) if on_panels is None else on_panels
    return _task_loads(view.units.astype(np.int64), view.task.astype(np.int64), sides, -(-view.n // view.tile),
                       view.n_tasks, float(capacity), on_panels)


def on_panels(view: StageView, runtime: str, itemsize: int = 4) -> np.ndarray:
    """(U,) bool: the units that read their operands from micro-panels: on the barrier runtime the
    products of a packed stage; on a dataflow runtime, once the schedule packs and the panels of
    `itemsize`-byte elements fit (packing.publishes_within), every product off its layer's row and column."""
    products = view.role == ROLES.index("DD")
    if runtime == "barrier":
        return view.packed & products
    return products & (bool(view.packed.any()) and publishes_within(view.n, view.tile, itemsize))


def packed_stages(view: StageView, panels: np.ndarray, runtime: str = "barrier") -> int:
    """The stages that pack (those with a unit on micro-panels); a dataflow runtime has none (its calls
    publish their own blocks)."""
    return len(np.unique(view.stage[panels])) if runtime == "barrier" else 0


def packed_elements(view: StageView, panels: np.ndarray, sides: np.ndarray | None = None,
                    runtime: str = "barrier") -> float:
    """Elements copied into micro-panels: each operand block the products on them (`panels`, on_panels)
    read (A's blocks (ib, kb), B's (kb, jb)), once a stage on the barrier runtime, once a layer on a
    dataflow runtime."""
    if not panels.any():
        return 0.0
    sides = (_sides(view) if sides is None else sides)[panels]
    units, blocks = view.units[panels].astype(np.int64), -(-view.n // view.tile)
    stage = view.stage[panels].astype(np.int64) if runtime == "barrier" else units[:, 0]
    copied = 0.0
    for rows, columns, size in ((1, 0, sides[:, 1] * sides[:, 0]), (0, 2, sides[:, 0] * sides[:, 2])):
        key = (stage * blocks + units[:, rows]) * blocks + units[:, columns]
        _, first = np.unique(key, return_index=True)
        copied += float(size[first].sum())
    return copied


def predict(view: StageView, calibration: Calibration, runtime: str = "barrier", driver: str = "compiled",
            register_block: str | None = None, priority: str = "critical-path") -> Prediction:
    """The calibrated model's seconds for the schedule `view` describes, run by `runtime` ('barrier'
    or a dataflow runtime calibrated in `calibration.dataflow`) on calibration.threads threads, its
    stages driven by a `driver` of a form calibrated in `calibration.driver`."""
    threads = calibration.threads
    sides = _sides(view)
    relaxations = sides.prod(axis=1)
    rate = calibration.register_blocks.get(register_block, 1.0) if register_block else 1.0
    per_role = calibration.per_relaxation(view.tile) / rate
    roles = view.role.astype(np.int64)
    panels = on_panels(view, runtime, np.dtype(calibration.dtype).itemsize)
    per_unit = np.where(panels, calibration.packed_relaxation(view.tile) / rate, per_role[roles])
    work = relaxations * per_unit + view.call_start * calibration.call_seconds(view.tile)
    loads = task_loads(view, sides, calibration.capacity(), panels)
    matrix_bytes = view.n * view.n * np.dtype(calibration.dtype).itemsize
    load_seconds = calibration.load_seconds(view.tile, matrix_bytes)
    memory = loads * load_seconds
    parts = {role: float(work[roles == r].sum()) / threads for r, role in enumerate(ROLES)}
    parts["memory"] = float(memory.sum()) / threads
    # every thread copies a share of a stage's panels as it starts (codegen.kernels.pack_operands), or of
    # the blocks its calls publish (codegen.dataflow)
    parts["packing"] = (packed_stages(view, panels, runtime) * calibration.pack_stage
                        + packed_elements(view, panels, sides, runtime) * (calibration.pack + load_seconds) / threads)
    lengths = work.copy()
    lengths[view.task_start[:-1]] += memory  # a task's loads where it starts
    calls = int(view.call_start.sum())
    if runtime == "barrier":
        lengths[view.task_start[:-1]] += calibration.task
        in_stages, _ = stage_barrier_times(view, threads, lengths)
        parts["waiting in stages"] = in_stages * (1 + calibration.straggle) - float(work.sum() + memory.sum()) / threads
        parts["between stages"] = (view.n_stages * calibration.stage.get(driver, 0.0)
                                   + calls * calibration.driver.get(driver, 0.0))
        parts["runtime"] = 0.0
    else:
        if runtime not in calibration.dataflow:
            raise ValueError(f"runtime {runtime!r} is not calibrated; calibrated: barrier, "
                             f"{', '.join(calibration.dataflow)}")
        lengths[view.call_start] += calibration.dataflow[runtime]
        _, end = list_schedule(predecessor_table(view.units, view.n, view.tile), priority_order(view, priority),
                               lengths, threads)
        parts["runtime"] = calibration.dataflow[runtime] * calls / threads
        parts["waiting in stages"] = (float(end.max()) if len(end) else 0.0) - float(lengths.sum()) / threads
        parts["between stages"] = 0.0
    return Prediction(sum(parts.values()), parts, threads, runtime)
