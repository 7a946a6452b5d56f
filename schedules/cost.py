"""Cost models read off a schedule's stage/task view (never a formula per family).

Units are tile-layers: one block updated for one block layer. Traffic is
counted in matrix elements under a model where each task loads the blocks
it touches into fast memory once and writes its output blocks back once;
partial blocks (r not dividing n) count with their true size.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numba import njit

from .simulate import dataflow_times, role_durations, stage_barrier_times
from .stages import StageView, stage_view


@njit(cache=True)
def _task_traffic(units: np.ndarray, task: np.ndarray, blocks: int, n: int, tile: int) -> tuple[int, int]:
    """(elements loaded, elements written back), each block once per task that touches it."""
    loaded_by = np.full(blocks * blocks, -1, dtype=np.int64)
    written_by = np.full(blocks * blocks, -1, dtype=np.int64)
    loads = 0
    writes = 0
    for u in range(units.shape[0]):
        t = task[u]
        kb, ib, jb = units[u, 0], units[u, 1], units[u, 2]
        for pair in range(3):
            a = ib if pair < 2 else kb
            b = jb if pair == 0 else (kb if pair == 1 else jb)
            block = a * blocks + b
            if loaded_by[block] != t:
                loaded_by[block] = t
                loads += min(tile, n - a * tile) * min(tile, n - b * tile)
        block = ib * blocks + jb
        if written_by[block] != t:
            written_by[block] = t
            writes += min(tile, n - ib * tile) * min(tile, n - jb * tile)
    return loads, writes


@dataclass(frozen=True)
class CostReport:
    schedule: str
    n: int
    tile: int
    blocks: int
    stages: int
    tasks: int
    units: int
    critical_path: float
    procs: int
    time_on_procs: float
    load: float
    loads: int
    writebacks: int
    traffic: int
    #: classic's write-backs (every block written back after every block layer: Q * n^2) minus this schedule's
    writebacks_saved: int
    #: Okuyama et al.'s N_b / d = 4 n^3 / t - 2 n^2, for the classic family
    okuyama_nb: int | None = None
    launches_paired: int | None = None
    launches_separate: int | None = None
    #: 'barrier' (a barrier after each stage) or 'dataflow' (schedules.simulate.dataflow_times)
    runtime: str = "barrier"
    #: dataflow: the bound no order beats on procs processors, and seed 004's locality interval
    lower_bound: float | None = None
    locality: float | None = None
    #: on a process grid (cost(..., grid=...)): per process messages, bytes, and the alpha-beta
    #: times with and without lookahead (schedules.network)
    distributed: dict | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def table(self) -> str:
        rows = [
            ("schedule", self.schedule),
            ("blocks per side Q", self.blocks),
            ("stages (kernel launches)", self.stages),
        ]
        if self.launches_paired is not None:
            rows += [("launches, paired SD products", self.launches_paired),
                     ("launches, separate SD products", self.launches_separate)]
        rows += [
            ("tasks", self.tasks),
            ("tile-layer updates", self.units),
            ("critical path (tile-layer steps)", self.critical_path),
            (f"time on {self.procs} processors (steps)", self.time_on_procs),
            (f"load on {self.procs} processors", f"{100 * self.load:.1f}%"),
            ("runtime", self.runtime),
            ("elements loaded", self.loads),
            ("elements written back", self.writebacks),
            ("slow-memory traffic (elements)", self.traffic),
            ("write-backs saved vs classic", self.writebacks_saved),
        ]
        if self.lower_bound is not None:
            rows += [(f"lower bound on {self.procs} processors (steps)", self.lower_bound),
                     ("locality interval T_ij (steps)", f"{self.locality:.1f}")]
        if self.okuyama_nb is not None:
            rows.append(("Okuyama N_b/d = 4n^3/t - 2n^2", self.okuyama_nb))
        if self.distributed is not None:
            d = self.distributed
            rows += [("process grid", d["grid"]),
                     ("network", f"alpha {d['latency'] * 1e6:g} us, {d['bandwidth'] / 1e9:g} GB/s, "
                                 f"{d['rate']:.3g} relaxations/s per process"),
                     ("messages sent per process", d["messages_sent"]),
                     ("bytes sent per process", d["bytes_sent"]),
                     ("bytes received per process", d["bytes_received"]),
                     ("2D FW's n^2/pr + n^2/pc (words received)", f"{d['words_formula']:.0f}")]
            for mode in ("lookahead", "in order"):
                times = d[mode]
                rows.append((f"time, {mode} (s)", f"{times['makespan']:.6g} (efficiency "
                                                 f"{100 * times['efficiency']:.1f}%)"))
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def tile_view(schedule) -> StageView:
    if schedule.n is None:
        raise ValueError(f"{schedule.name} is parametric in n; costs need a concrete n")
    tree = schedule.tile_tree if schedule.tile_tree is not None else schedule.tree
    return stage_view(tree, schedule.n, schedule.tile)


def distributed_cost(schedule, grid, network, predecessors: bool = False) -> dict:
    """Messages, bytes and alpha-beta times of the schedule on a process grid (schedules.network)."""
    from .distribute import Grid, plan_distribution
    from .network import simulate_plan

    grid = grid if isinstance(grid, Grid) else Grid(*grid)
    found: dict = {"grid": str(grid), "latency": network.latency, "bandwidth": network.bandwidth,
                   "rate": network.rate}
    for mode, lookahead in (("lookahead", True), ("in order", False)):
        plan = plan_distribution(schedule, grid, lookahead, network)
        found[mode] = simulate_plan(plan, network, predecessors).as_dict()
    traffic = plan.traffic(network.itemsize, predecessors)
    found.update({key: value.tolist() for key, value in traffic.items()})
    n = schedule.n
    found["words_formula"] = n * n / grid.rows * (1 - 1 / grid.cols) + n * n / grid.cols * (1 - 1 / grid.rows)
    return found


def cost(schedule, procs: int = 1, runtime: str = "barrier", role_seconds: dict[str, float] | None = None,
         grid=None, network=None) -> CostReport:
    """Stages, tasks, critical path, time and load on `procs` processors (with a barrier after
    each stage, or as dataflow), and slow-memory traffic. Times are in tile-layers, or, given
    role_seconds ({'I': ..., 'SD_row': ..., 'SD_col': ..., 'DD': ...}, e.g. measured from the
    kernels), in seconds; load is then busy time over procs x makespan. grid: (pr, pc) or a
    schedules.distribute.Grid, to add the messages and times on that process grid over
    `network` (a schedules.distribute.Network; default alpha = 2 us, 10 GB/s)."""
    if runtime not in ("barrier", "dataflow"):
        raise ValueError(f"runtime must be 'barrier' or 'dataflow', got {runtime!r}")
    view = tile_view(schedule)
    n, tile = schedule.n, schedule.tile
    blocks = -(-n // tile)
    durations = None if role_seconds is None else role_durations(view, role_seconds)
    time_on_procs, critical = stage_barrier_times(view, procs, durations)
    extra: dict = {"runtime": runtime}
    if runtime == "dataflow":
        flow = dataflow_times(view, procs, durations)
        time_on_procs, critical = flow.makespan, flow.critical_path
        extra.update(lower_bound=flow.lower_bound, locality=flow.locality)
    loads, writes = _task_traffic(view.units.astype(np.int64), view.task.astype(np.int64), blocks, n, tile)
    units = len(view.units)
    if schedule.family == "classic":
        extra["okuyama_nb"] = 4 * n**3 // tile - 2 * n**2 if n % tile == 0 else None
    if grid is not None:
        from .distribute import Network

        extra["distributed"] = distributed_cost(schedule, grid, Network() if network is None else network)
    if schedule.family == "recursive":
        from .families import build

        other = build("recursive", n, base=tile, paired=not schedule.params["paired"])
        counts = {schedule.params["paired"]: view.n_stages, not schedule.params["paired"]: tile_view(other).n_stages}
        extra.update(launches_paired=counts[True], launches_separate=counts[False])
    return CostReport(
        schedule=schedule.name, n=n, tile=tile, blocks=blocks, stages=view.n_stages, tasks=view.n_tasks,
        units=units, critical_path=critical, procs=procs, time_on_procs=time_on_procs,
        load=(units if durations is None else float(durations.sum())) / (procs * time_on_procs)
        if time_on_procs else 1.0,
        loads=int(loads), writebacks=int(writes), traffic=int(loads + writes),
        writebacks_saved=blocks * n * n - int(writes), **extra,
    )
