"""`generate`: any legal schedule to code for a target."""
from __future__ import annotations

from schedules.schedule import Schedule

from .cpu import CompiledSchedule, generate_cpu
from .kernels import KernelOptions

TARGETS = ("cpu",)


def generate(schedule: Schedule, target: str = "cpu", dtype: str = "float32",
             register_block: tuple[int, int] = (4, 32), predecessors: bool = False) -> CompiledSchedule:
    """Compile a schedule (built for a concrete n) into a callable that runs the FW nest in place.

    The callable applies the nest's relaxations in the schedule's order and
    nothing else (no zero diagonal, no INF handling); it returns the first
    pivot k found with a[k, k] < 0, or -1. Check the schedule first: code is
    generated for whatever order it is given.
    """
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; available: {', '.join(TARGETS)}")
    options = KernelOptions(dtype=str(dtype), register_block=tuple(register_block), predecessors=predecessors)
    return generate_cpu(schedule, options)
