"""Where a compiled run's time went: each tile role's share, the barriers, and the serial driver.

Every tile-level CPU run stamps its tile-layers with the cycle counter
(codegen.kernels.run_tasks, always on: two counter reads a tile-layer). With
P threads a run of W seconds has P * W thread-seconds: the tile-layers of
each role, a packed stage's copies into micro-panels (every thread copies),
the time threads spent in a stage without a tile-layer to run
(the barrier at its end, an uneven split), and the time outside every stage
(the driver between stages, when only one thread works). Divided by P, these
parts add up to W exactly, which is what lets a profile say which part to make faster.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit

from .intrinsics import cycles
from .kernels import PROFILE_SLOTS

#: the parts of a run, in the order a profile prints them
PARTS = (*PROFILE_SLOTS[:-1], "waiting in stages", "between stages")


@njit(cache=True)
def _cycles() -> int:
    return cycles()


@cache
def cycles_per_second() -> float:
    """The cycle counter's rate, timed against perf_counter over 20 ms (once a process)."""
    _cycles()
    first_clock, first = time.perf_counter(), _cycles()
    while time.perf_counter() - first_clock < 0.02:
        pass
    last, last_clock = _cycles(), time.perf_counter()
    return (last - first) / (last_clock - first_clock)


@dataclass(frozen=True)
class RunProfile:
    """A run's wall seconds split into PARTS (wall-clock shares: thread-seconds over threads)."""

    seconds: float
    threads: int
    parts: dict[str, float]

    def table(self, title: str = "") -> str:
        lines = [title] if title else []
        for part, seconds in self.parts.items():
            lines.append(f"  {part:18s} {seconds * 1e3:9.2f} ms {seconds / self.seconds:6.1%}")
        lines.append(f"  {'run':18s} {self.seconds * 1e3:9.2f} ms ({self.threads} threads)")
        return "\n".join(lines)


def run_profile(last_run: dict) -> RunProfile:
    """The profile of a CompiledSchedule's last call (its `last_run`); tile-level drivers only."""
    stamped = last_run.get("profile")
    if stamped is None:
        raise ValueError("only tile-level CPU runs with the barrier runtime are profiled: this run has no "
                         "profile (a point-level schedule, another runtime or target)")
    seconds, threads = last_run["seconds"], last_run["threads"]
    busy = stamped.sum(axis=0) / cycles_per_second() / threads  # wall-clock share of each slot
    stages, packing = (float(stamped[0, PROFILE_SLOTS.index(slot)]) / cycles_per_second()
                       for slot in ("stages", "packing"))
    roles = {role: float(busy[slot]) for slot, role in enumerate(PROFILE_SLOTS[:-2])}
    waiting = stages - sum(roles.values()) - packing
    return RunProfile(seconds, threads, {**roles, "packing": packing, "waiting in stages": waiting,
                                         "between stages": seconds - stages})


def relaxations_by_role(n: int, tile: int) -> dict[str, int]:
    """How many relaxations each role does in blocked FW over n (every schedule's tile-layers are the
    same): what turns a profile's seconds into rates."""
    blocks = -(-n // tile)
    sides = np.minimum(tile, n - tile * np.arange(blocks)).astype(np.int64)
    total = int(sides.sum())
    pivots = int((sides**3).sum())
    # SD_row: (kb, kb, jb != kb): side_k^2 * side_j summed; SD_col the same by symmetry
    panels = int(sum(int(s)**2 * (total - int(s)) for s in sides))
    return {"I": pivots, "SD_row": panels, "SD_col": panels, "DD": n**3 - pivots - 2 * panels}
