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

import heapq
from dataclasses import dataclass

import numpy as np
from numba import njit

from tiling.tile_dependences import predecessor_rules

from .stages import ROLES, StageView, stage_view


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
def _stage_barrier_times(task_length: np.ndarray, task_stage: np.ndarray, procs: int) -> tuple[float, float]:
    """(time on `procs` processors, critical path), tasks list-scheduled stage by stage."""
    free = np.zeros(procs)
    total = 0.0
    critical = 0.0
    t = 0
    count = task_length.shape[0]
    while t < count:
        stage = task_stage[t]
        free[:] = 0.0
        longest = 0.0
        while t < count and task_stage[t] == stage:
            p = np.argmin(free)
            free[p] += task_length[t]
            longest = max(longest, task_length[t])
            t += 1
        total += free.max()
        critical += longest
    return total, critical


def stage_barrier_times(view: StageView, procs: int, durations: np.ndarray | None = None) -> tuple[float, float]:
    """Time on `procs` processors with a barrier after every stage, and the critical path, in unit
    steps (ints) or, given each unit's duration, in its units.

    Tasks of a stage go, in order, to the processor that frees up first.
    """
    if procs < 1:
        raise ValueError(f"procs must be at least 1, got {procs}")
    if durations is None:
        lengths = view.task_length.astype(np.float64)
    else:
        lengths = np.add.reduceat(np.asarray(durations, dtype=np.float64), view.task_start[:-1])
    total, critical = _stage_barrier_times(lengths, view.task_stage.astype(np.int64), procs)
    return (int(total), int(critical)) if durations is None else (float(total), float(critical))


def role_durations(view: StageView, seconds: dict[str, float]) -> np.ndarray:
    """Each unit's duration from its role's ('I', 'SD_row', 'SD_col', 'DD'; others as 'I')."""
    by_role = np.array([seconds.get(role, seconds["I"]) for role in ROLES] + [seconds["I"]])
    return by_role[view.role.astype(np.int64)]  # role -1 (none) takes the last entry


@dataclass(frozen=True)
class DataflowTimes:
    """A list schedule of the tile-layer graph on P processors, no barriers (seed 004)."""

    makespan: float
    #: processor time spent waiting: P * makespan - work
    idle: float
    work: float
    critical_path: float
    #: a bound no schedule of this graph on P processors beats (unit times: the ramp-up bound)
    lower_bound: float
    #: seed 004's T_ij: mean time from a block's first tile-layer starting to its last ending
    locality: float


def predecessor_table(units: np.ndarray, n: int, tile: int) -> np.ndarray:
    """For each unit (kb, ib, jb), the indices of the units it waits for, -1 padded: its block's
    previous layer first, then the direct predecessors isl derives (tiling.tile_dependences)."""
    blocks = -(-n // tile)
    index = np.full(blocks**3, -1, dtype=np.int64)
    number = (units[:, 0].astype(np.int64) * blocks + units[:, 1]) * blocks + units[:, 2]
    index[number] = np.arange(len(units))
    kb, ib, jb = (units[:, d].astype(np.int64) for d in range(3))
    rules = predecessor_rules(n, tile)
    table = np.full((len(units), 1 + len(rules)), -1, dtype=np.int64)
    own = kb > 0
    table[own, 0] = index[number[own] - blocks * blocks]
    filled = own.astype(np.int64)
    names = {"kb": kb, "ib": ib, "jb": jb, "n": n, "min": np.minimum, "max": np.maximum}
    for rule in rules:
        applies = np.nonzero(np.broadcast_to(eval(rule.condition, {}, names), kb.shape))[0]
        source = [np.broadcast_to(eval(text, {}, names), kb.shape)[applies] for text in (rule.kb, rule.ib, rule.jb)]
        table[applies, filled[applies]] = index[(source[0] * blocks + source[1]) * blocks + source[2]]
        filled[applies] += 1
    return table[:, :max(int(filled.max(initial=0)), 1)]


def tile_predecessors(units: np.ndarray, n: int, tile: int) -> list[list[int]]:
    """predecessor_table as lists (no padding)."""
    return [[int(u) for u in row if u >= 0] for row in predecessor_table(units, n, tile)]


#: the orders a dataflow runtime can prefer ready tile-layers in: the schedule's own, or the
#: schedule's with the critical path moved up (priority_order); the runtime and dataflow_times read it
PRIORITIES = ("schedule", "critical-path")
#: the roles whose tile-layers lead the next layer: the pivot block and the panels
LEADING_ROLES = ("I", "SD_row", "SD_col")
#: a tile-layer's cost by role for the critical path, in products: the pivot block's closure (blocked
#: inside its tile) took 1.1-1.8 products' time (benchmarks/dataflow.py times both); the costs only
#: order leading tile-layers placed together
ROLE_COSTS = {"I": 1.5, "SD_row": 1.0, "SD_col": 1.0, "DD": 1.0}


@njit(cache=True)
def _upward_ranks(predecessors: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Each unit's longest path to the end, its own length included (units ranked sinks first)."""
    count = length.shape[0]
    unranked = np.zeros(count, dtype=np.int64)  # successors not ranked yet
    for u in range(count):
        for p in predecessors[u]:
            if p >= 0:
                unranked[p] += 1
    stack = np.empty(count, dtype=np.int64)  # units whose successors are all ranked
    top = 0
    for u in range(count):
        if unranked[u] == 0:
            stack[top] = u
            top += 1
    longest = np.zeros(count)  # longest rank among the ranked successors
    rank = np.zeros(count)
    while top > 0:
        top -= 1
        u = stack[top]
        rank[u] = length[u] + longest[u]
        for p in predecessors[u]:
            if p >= 0:
                longest[p] = max(longest[p], rank[u])
                unranked[p] -= 1
                if unranked[p] == 0:
                    stack[top] = p
                    top += 1
    return rank


@njit(cache=True)
def _anchors(predecessors: np.ndarray, leads: np.ndarray, topological: np.ndarray) -> np.ndarray:
    """Where each unit goes in the schedule's order: its own place, or for a leading one the
    latest anchor among its predecessors (-1: none), i.e. just after the last of them."""
    anchor = np.empty(leads.shape[0], dtype=np.int64)
    for u in topological:
        anchor[u] = u
        if leads[u]:
            anchor[u] = -1
            for p in predecessors[u]:
                if p >= 0:
                    anchor[u] = max(anchor[u], anchor[p])
    return anchor


def priority_order(view: StageView, priority: str) -> np.ndarray:
    """The view's unit indices, the one a dataflow runtime takes first when ready first.

    'critical-path' keeps the schedule's order, and so its locality, but moves
    the tile-layers that lead the next layer (LEADING_ROLES: its pivot and
    panels, and the products of this layer they wait for) up to just after
    their last predecessor: the next layer's pivot and panels overtake the
    products of this layer that nothing waits for, so a core a barrier would
    idle finds work. Leading tile-layers placed together go longest path to
    the end first (the list scheduler's upward rank under ROLE_COSTS), then
    pivot, panels, the schedule's order. Along a path the anchor rises and,
    where it stays, the rank falls, so from a legal schedule this is a
    topological order: one worker never waits.
    """
    if priority not in PRIORITIES:
        raise ValueError(f"priority must be one of {', '.join(PRIORITIES)}, got {priority!r}")
    position = np.arange(len(view.units))
    if priority == "schedule":
        return position
    predecessors = predecessor_table(view.units, view.n, view.tile)
    rank = _upward_ranks(predecessors, role_durations(view, ROLE_COSTS))
    leads = np.isin(view.role, [ROLES.index(role) for role in LEADING_ROLES])
    leads[predecessors[(predecessors >= 0) & leads[:, None]]] = True
    anchor = _anchors(predecessors, leads, np.argsort(-rank, kind="stable"))
    return np.lexsort((position, np.where(leads, view.role, 0), np.where(leads, -rank, 0), leads, anchor))



@njit(cache=True)
def _list_schedule(predecessors: np.ndarray, place: np.ndarray, length: np.ndarray,
                   procs: int) -> tuple[np.ndarray, np.ndarray]:
    count = length.shape[0]
    waiting = np.zeros(count, dtype=np.int64)
    first = np.zeros(count + 1, dtype=np.int64)  # successors as CSR
    for u in range(count):
        for p in predecessors[u]:
            if p >= 0:
                waiting[u] += 1
                first[p + 1] += 1
    first = np.cumsum(first)
    successors = np.empty(first[-1], dtype=np.int64)
    filled = first[:-1].copy()
    for u in range(count):
        for p in predecessors[u]:
            if p >= 0:
                successors[filled[p]] = u
                filled[p] += 1
    ready = [(place[u], u) for u in range(count) if waiting[u] == 0]
    heapq.heapify(ready)
    running = [(0.0, np.int64(0))]
    running.pop()
    start, end = np.zeros(count), np.zeros(count)
    now, free = 0.0, procs
    while len(ready) or len(running):
        while len(ready) and free:
            u = heapq.heappop(ready)[1]
            start[u], end[u] = now, now + length[u]
            heapq.heappush(running, (end[u], u))
            free -= 1
        now = running[0][0]
        while len(running) and running[0][0] == now:
            u = heapq.heappop(running)[1]
            free += 1
            for s in successors[first[u]:first[u + 1]]:
                waiting[s] -= 1
                if waiting[s] == 0:
                    heapq.heappush(ready, (place[s], s))
    return start, end


def list_schedule(predecessors: np.ndarray, order: np.ndarray, length: np.ndarray,
                  procs: int) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of each unit when each starts once its predecessors (predecessor_table) are done
    and one of `procs` processors is free; among ready units the one first in `order` goes first."""
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order))
    return _list_schedule(predecessors, place, np.asarray(length, dtype=np.float64), procs)


@njit(cache=True)
def _earliest_starts(predecessors: np.ndarray, by_start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Each unit's earliest start with unlimited processors (units visited in a topological order)."""
    top = np.zeros(length.shape[0])
    for u in by_start:
        for p in predecessors[u]:
            if p >= 0:
                top[u] = max(top[u], top[p] + length[p])
    return top


def dataflow_times(view: StageView, procs: int, durations: np.ndarray | None = None,
                   priority: str = "schedule") -> DataflowTimes:
    """Each unit starts once its predecessors are done and a processor is free; among ready units
    the one first in priority_order(view, priority) goes first. durations: per unit (default 1)."""
    if procs < 1:
        raise ValueError(f"procs must be at least 1, got {procs}")
    count = len(view.units)
    length = np.ones(count) if durations is None else np.asarray(durations, dtype=float)
    predecessors = predecessor_table(view.units, view.n, view.tile)
    start, end = list_schedule(predecessors, priority_order(view, priority), length, procs)
    top = _earliest_starts(predecessors, np.argsort(start, kind="stable"), length)
    critical = float(np.max(top + length)) if count else 0.0
    work = float(length.sum())
    bound = max(critical, work / procs)
    if durations is None and count:
        # at most A_t units can have started by step t (those whose longest chain from a source
        # is t or less), and at most P more per step: the steps needed to finish them all
        started_by = np.cumsum(np.bincount(top.astype(np.int64)))
        done, steps = 0, 0
        while done < count:
            done = min(done + procs, int(started_by[min(steps, len(started_by) - 1)]))
            steps += 1
        bound = max(bound, steps)
    makespan = float(end.max()) if count else 0.0
    blocks = view.units[:, 1].astype(np.int64) * (view.n + 1) + view.units[:, 2]
    first = {b: s for b, s in sorted(zip(blocks.tolist(), start.tolist()), key=lambda x: -x[1])}
    last = {b: e for b, e in sorted(zip(blocks.tolist(), end.tolist()), key=lambda x: x[1])}
    locality = float(np.mean([last[b] - first[b] for b in first])) if count else 0.0
    return DataflowTimes(makespan, procs * makespan - work, work, critical, float(bound), locality)
