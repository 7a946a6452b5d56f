"""Time on a network of processes: an alpha-beta model of the messages a distributed plan sends.

Two views of one model. `simulate_plan` replays a plan (schedules.distribute)
tile-layer by tile-layer: a process runs its tile-layers in order, each once
its remote operands have arrived; a block sent to r receivers leaves its
sender one message after another (what the MPI runtime's Isends do), each
taking alpha + bytes / bandwidth. `layer_model` is the closed form of the
same machine for classic 2D FW with any n and P (seed 003's setting), layer
by layer: the pivot block's closure and broadcast, the pivot row and column
updates and their broadcasts, and the trailing update - in sequence, or,
with lookahead, the next layer's chain overlapped with this layer's update.
The closed form is what runs past this machine (n = 300,000, P = 4,096);
the replay checks it where both run.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .distribute import DistributedPlan, Grid, Network


@dataclass(frozen=True)
class DistributedTimes:
    makespan: float
    #: per process: seconds computing, seconds waiting for operands
    busy: tuple[float, ...]
    waiting: tuple[float, ...]
    #: the same work on one process at the same rate
    serial: float

    @property
    def efficiency(self) -> float:
        return self.serial / (len(self.busy) * self.makespan) if self.makespan else 1.0

    def as_dict(self) -> dict:
        return {**asdict(self), "efficiency": self.efficiency}


def unit_seconds(plan: DistributedPlan, rate: float, overhead: float = 0.0) -> np.ndarray:
    """Each tile-layer's relaxations over `rate` (relaxations per second of one process), plus the
    runtime's `overhead` per tile-layer."""
    kb, ib, jb = plan.units.T
    return plan.block_size(kb) * plan.block_size(ib) * plan.block_size(jb) / rate + overhead


def simulate_plan(plan: DistributedPlan, network: Network, predecessors: bool = False) -> DistributedTimes:
    """Replay the plan on plan.grid.size processes over `network` (its rate and element size)."""
    seconds = unit_seconds(plan, network.rate, network.overhead)
    itemsize = network.itemsize
    size = plan.grid.size
    free = np.zeros(size)
    link = np.zeros(size)
    busy = np.zeros(size)
    waiting = np.zeros(size)
    finish = np.zeros(len(plan.units))
    arrival: dict[tuple[int, int], float] = {}
    per_element = itemsize + (4 if predecessors else 0)
    rows_of = np.split(np.arange(len(plan.sends)), np.searchsorted(plan.sends[:, 0], np.arange(1, len(plan.units))))
    for v in range(len(plan.units)):
        p = int(plan.owner[v])
        ready = free[p]
        for u in plan.operands[v].tolist():
            if u >= 0:
                ready = max(ready, arrival[(u, p)] if plan.owner[u] != p else finish[u])
        waiting[p] += ready - free[p]
        finish[v] = ready + seconds[v]
        busy[p] += seconds[v]
        free[p] = finish[v]
        for row in rows_of[v].tolist():
            receiver = int(plan.sends[row, 1])
            link[p] = max(link[p], finish[v]) + plan.elements[row] * per_element / network.bandwidth
            arrival[(v, receiver)] = link[p] + network.latency
    return DistributedTimes(float(free.max()), tuple(busy.tolist()), tuple(waiting.tolist()), float(seconds.sum()))


@dataclass(frozen=True)
class LayerModel:
    """Classic 2D FW on a grid, in closed form (seconds unless named otherwise)."""

    n: int
    tile: int
    grid: str
    processes: int
    lookahead: bool
    compute: float          # the trailing updates: n^3 / (P * rate)
    chain: float            # per layer: closure, pivot broadcast, row/column update and broadcasts
    time: float
    efficiency: float
    #: words each process receives (2D: n^2 / pr + n^2 / pc less its own; strips: n^2)
    words_received: float

    def as_dict(self) -> dict:
        return asdict(self)


def layer_model(n: int, tile: int, grid: Grid, network: Network, lookahead: bool) -> LayerModel:
    """Time and efficiency of classic FW at size n on `grid` (see the module docstring)."""
    rate, itemsize = network.rate, network.itemsize
    pr, pc, size = grid.rows, grid.cols, grid.size
    layers = -(-n // tile)
    block = tile * tile * itemsize
    rows_held, cols_held = -(-layers // pr), -(-layers // pc)  # block rows / columns of the busiest process
    closure = tile**3 / rate
    pivot_out = network.to_all(pc - 1, block) + network.to_all(pr - 1, block) if network.broadcast == "flat" \
        else max(network.to_all(pc - 1, block), network.to_all(pr - 1, block))
    row_update = cols_held * tile**3 / rate  # the pivot row's blocks on one process
    column_update = rows_held * tile**3 / rate
    # the panel blocks a process sends: its share of the pivot row down its column, of the column along its row
    panels_out = cols_held * network.to_all(pr - 1, block) + rows_held * network.to_all(pc - 1, block)
    chain = closure + pivot_out + max(row_update, column_update) + panels_out
    trailing = rows_held * cols_held * tile**3 / rate
    per_layer = max(trailing, chain) if lookahead else trailing + chain
    time = layers * per_layer
    serial = float(n) ** 3 / rate
    words = n * n / pr * (1 - 1 / pc) + n * n / pc * (1 - 1 / pr)
    return LayerModel(n, tile, str(grid), size, lookahead, serial / size, chain, time,
                      serial / (size * time), words)
