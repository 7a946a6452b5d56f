"""`generate`: any legal schedule to code for a target."""
from __future__ import annotations

from typing import TYPE_CHECKING

from schedules.schedule import Schedule

from .cpu import CompiledSchedule, generate_cpu
from .kernels import KernelOptions

if TYPE_CHECKING:
    from .cuda import CudaCompiledSchedule

TARGETS = ("cpu", "cuda", "cudasim")
CUDA_PARAMETERS = ("method", "sub_tile", "per_block", "t_prime")


def generate(schedule: Schedule, target: str = "cpu", dtype: str = "float32",
             register_block: tuple[int, int] | None = None, predecessors: bool = False,
             **cuda_parameters) -> CompiledSchedule | CudaCompiledSchedule:
    """Compile a schedule (built for a concrete n) into a callable that runs the FW nest in place.

    The callable applies the nest's relaxations in the schedule's order and
    nothing else (no zero diagonal, no INF handling); it returns the first
    pivot k found with a[k, k] < 0, or -1. Check the schedule first: code is
    generated for whatever order it is given. Targets 'cuda' and 'cudasim'
    take the DD kernel's parameters: method ('A' or 'B'), sub_tile and
    per_block (method A), t_prime (method B).
    """
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; available: {', '.join(TARGETS)}")
    unknown = set(cuda_parameters) - set(CUDA_PARAMETERS)
    if unknown:
        raise TypeError(f"unknown kernel parameter(s) {', '.join(sorted(unknown))}; "
                        f"CUDA takes {', '.join(CUDA_PARAMETERS)}")
    if target == "cpu":
        if cuda_parameters:
            raise ValueError(f"{', '.join(sorted(cuda_parameters))} apply to targets cuda and cudasim, not cpu")
        block = None if register_block is None else tuple(register_block)
        options = KernelOptions(dtype=str(dtype), register_block=block,
                                predecessors=predecessors)
        return generate_cpu(schedule, options)
    if predecessors:
        raise ValueError(f"predecessors are generated for target 'cpu' only, not {target!r}")
    from .cuda import generate_cuda  # numba.cuda loads only when asked for

    return generate_cuda(schedule, target, str(dtype), **cuda_parameters)
