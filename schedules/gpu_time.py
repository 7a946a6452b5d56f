"""A schedule's time on a GPU, from its stages and what its kernels compile to.

A short hot loop is not speed: on an H200 method R's DD kernel counted 2.2 SASS instructions a
relaxation (room for about 15 T relaxations/s) and ran at 3-4 T/s with 8 warps an SM, because
too few warps could not hide the latency of a block's loads and barriers. So an SM's rate here
is its issue rate over the instructions per relaxation, times the share of issue slots that
its resident warps keep busy, W / (W + latency_warps): a calibrated latency-hiding curve. A
stage (one launch) runs its tasks (thread blocks) in waves over the SMs; a task's tile-layers
run in order inside its block; a pivot tile-layer also waits for one barrier round trip per k
(its rows and columns pass through shared memory layer by layer). Every launch costs
launch_seconds more (the host's driver and the GPU's start and drain).

The kernels' facts (instructions per relaxation, warps, blocks per SM) come from their machine
code (codegen.machine_code); the three calibrated numbers from measured whole calls
(polyfw.gpu_model fits them to every stored device measurement).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .stages import ROLES, StageView


@dataclass(frozen=True)
class GpuDevice:
    """What bounds an SM's issue rate (defaults: an H100 or H200)."""

    sms: int = 132
    clock_hz: float = 1.98e9
    #: warp instructions an SM issues a clock (one per scheduler)
    schedulers: int = 4
    lanes: int = 32


@dataclass(frozen=True)
class KernelFacts:
    """What a kernel compiles to, as codegen.machine_code reads it."""

    per_relaxation: float  # SASS instructions a relaxation in its hot loop
    warps_per_block: int
    blocks_per_sm: int

    @property
    def resident_warps(self) -> int:
        return self.warps_per_block * self.blocks_per_sm


@dataclass(frozen=True)
class GpuCalibration:
    #: resident warps at which an SM's issue slots are half busy
    latency_warps: float = 20.0
    #: seconds a launch adds (host driver, start, drain)
    launch_seconds: float = 10e-6
    #: seconds a pivot tile-layer waits per k (two barriers and a shared round trip)
    pivot_step_seconds: float = 0.2e-6

    def as_tuple(self) -> tuple[float, float, float]:
        return self.latency_warps, self.launch_seconds, self.pivot_step_seconds


def sm_rate(facts: KernelFacts, blocks: int, device: GpuDevice, calibration: GpuCalibration) -> float:
    """Relaxations a second one SM reaches holding `blocks` blocks of this kernel."""
    warps = facts.warps_per_block * blocks
    busy = warps / (warps + calibration.latency_warps)
    return device.schedulers * device.clock_hz * device.lanes / facts.per_relaxation * busy


def _stage_kernel(roles: np.ndarray) -> str:
    """Which kernel a stage's tile-layers run as: 'I' (a pivot among them), 'panel' or 'DD'."""
    present = {ROLES[r] for r in np.unique(roles) if r >= 0}
    if "I" in present:
        return "I"
    return "panel" if present & {"SD_row", "SD_col"} else "DD"


def _stage_seconds(view: StageView, lo: int, hi: int, facts: KernelFacts, device: GpuDevice,
                   calibration: GpuCalibration, pivot: np.ndarray) -> tuple[float, float]:
    """One stage (units lo:hi): its seconds (launch included) and the SM-seconds its blocks hold."""
    tile = view.tile
    task_layers = np.bincount(view.task[lo:hi] - view.task[lo])
    pivot_layers = np.bincount(view.task[lo:hi] - view.task[lo], weights=pivot[view.role[lo:hi] + 1])
    tasks = len(task_layers)
    blocks = max(1, min(facts.blocks_per_sm, math.ceil(tasks / device.sms)))
    per_block = sm_rate(facts, blocks, device, calibration) / blocks
    task_seconds = task_layers * float(tile) ** 3 / per_block + pivot_layers * tile * calibration.pivot_step_seconds
    waves = math.ceil(tasks / (device.sms * blocks))
    # the tasks in waves of sms x blocks; the longest task bounds its wave
    longest = np.sort(task_seconds)[::-1]
    seconds = calibration.launch_seconds + sum(longest[w * device.sms * blocks] for w in range(waves))
    return seconds, float(task_seconds.sum()) / blocks


def predict_seconds(view: StageView, kernels: dict[str, KernelFacts], device: GpuDevice = GpuDevice(),
                    calibration: GpuCalibration = GpuCalibration()) -> float:
    """Seconds a run of the schedule whose tile view is `view` takes, its stages run as `kernels`
    ('I', 'panel', 'DD': the facts of the kernel each kind of stage launches).

    The streams of a set run at once: the set takes its slowest stream's time, or, when the SMs
    are the bound, the SM-seconds of all its blocks spread over every SM (the side streams have
    the highest priority, so their blocks take the first free SMs)."""
    pivot = np.array([ROLES[r] == "I" if r >= 0 else False for r in range(-1, len(ROLES))])
    starts = view.stage_start
    total = 0.0
    streams: dict[int, dict[int, float]] = {}  # set of streams -> stream -> seconds
    held: dict[int, float] = {}  # set of streams -> SM-seconds
    for stage in range(view.n_stages):
        lo, hi = starts[stage], starts[stage + 1]
        seconds, sm_seconds = _stage_seconds(view, lo, hi, kernels[_stage_kernel(view.role[lo:hi])], device,
                                             calibration, pivot)
        group = int(view.group[lo])
        if group < 0:
            total += seconds
            continue
        times = streams.setdefault(group, {})
        times[int(view.stream[lo])] = times.get(int(view.stream[lo]), 0.0) + seconds
        held[group] = held.get(group, 0.0) + sm_seconds
    for group, times in streams.items():
        total += max(max(times.values()), held[group] / device.sms + calibration.launch_seconds)
    return total


def fit_calibration(rows: list[tuple[StageView, dict[str, KernelFacts], float]], device: GpuDevice = GpuDevice(),
                    start: GpuCalibration = GpuCalibration()) -> GpuCalibration:
    """The calibration under which predict_seconds comes closest to every measured (view, kernels,
    seconds) row, as a ratio (least squares of the log of predicted over measured)."""
    from scipy.optimize import least_squares

    def residuals(logs: np.ndarray) -> np.ndarray:
        calibration = GpuCalibration(*np.exp(logs))
        return np.array([math.log(predict_seconds(view, kernels, device, calibration) / seconds)
                         for view, kernels, seconds in rows])

    found = least_squares(residuals, np.log(start.as_tuple()), bounds=(np.log([0.5, 1e-7, 1e-9]),
                                                                       np.log([500.0, 1e-2, 1e-4])))
    return GpuCalibration(*np.exp(found.x))
