"""Simulators: run a schedule's order on a matrix, and time its stages on P processors.

`execute` is a model of one legal parallel execution, not a fast kernel:
each task reads the matrix as it was when its stage began, except for the
elements it has written itself, and its writes land when the stage ends,
task by task. Two tasks that update one element therefore lose an update,
as on a machine whose tasks keep their blocks in private fast memory. A
legal schedule gives the exact distances under it; the illegal variants
show their wrong ones.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .stages import StageView, stage_view


def point_view(schedule) -> StageView:
    """The stage view over points (small n: one unit per S[k,i,j])."""
    if schedule.n is None:
        raise ValueError(f"{schedule.name} is parametric in n; build it for a concrete n to run it")
    return stage_view(schedule.tree, schedule.n, 1)


def execute(schedule, matrix: np.ndarray) -> np.ndarray:
    """The matrix after running the schedule's order on it (a new array)."""
    view = point_view(schedule)
    if matrix.shape != (schedule.n, schedule.n):
        raise ValueError(f"{schedule.name} is for a {schedule.n} x {schedule.n} matrix, got shape {matrix.shape}")
    a = np.array(matrix, copy=True)
    for stage in range(view.n_stages):
        at_start = a.copy()
        written = []
        for task in view.tasks_of(stage):
            own: dict[tuple[int, int], object] = {}
            for k, i, j in task.units.tolist():
                through = own.get((i, k), at_start[i, k]) + own.get((k, j), at_start[k, j])
                current = own.get((i, j), at_start[i, j])
                own[(i, j)] = through if through < current else current
            written.append(own)
        for own in written:
            for (i, j), value in own.items():
                a[i, j] = value
    return a


@njit(cache=True)
def _stage_barrier_times(task_length: np.ndarray, task_stage: np.ndarray, procs: int) -> tuple[int, int]:
    """(time on `procs` processors, critical path), tasks list-scheduled stage by stage."""
    free = np.zeros(procs, dtype=np.int64)
    total = 0
    critical = 0
    t = 0
    count = task_length.shape[0]
    while t < count:
        stage = task_stage[t]
        free[:] = 0
        longest = 0
        while t < count and task_stage[t] == stage:
            p = np.argmin(free)
            free[p] += task_length[t]
            longest = max(longest, task_length[t])
            t += 1
        total += free.max()
        critical += longest
    return total, critical


def stage_barrier_times(view: StageView, procs: int) -> tuple[int, int]:
    """Time in unit steps on `procs` processors with a barrier after every stage, and the critical path.

    Tasks of a stage go, in order, to the processor that frees up first.
    """
    if procs < 1:
        raise ValueError(f"procs must be at least 1, got {procs}")
    total, critical = _stage_barrier_times(view.task_length, view.task_stage.astype(np.int64), procs)
    return int(total), int(critical)
