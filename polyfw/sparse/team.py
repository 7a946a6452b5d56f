"""A team of workers that runs a whole search inside one parallel region, its steps separated by a
spinning barrier.

Why: under OMP_WAIT_POLICY=passive the pool's threads sleep between parallel regions, and waking
them cost 43 µs a region on a 2-vCPU Zen 4 (32 µs for a C OpenMP loop); a BFS or delta-stepping
search of many short steps paid that once a step, as much as its work at scale 16. Inside one
region a step ends at a barrier the team spins on (pause, then yield to whoever needs the core).

A prange over `workers` iterations normally runs each on a thread of its own, but nothing promises
it (a pool smaller than asked, OMP_DYNAMIC, a chunk size the caller set): a barrier over workers that
never run at once would wait forever. So the team is whoever has joined when the last expected worker
arrives, or when a deadline passes; a worker arriving after that leaves at once. Every step's work is
claimed from a shared counter, so a team of any size does all of it.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from codegen.intrinsics import compare_and_swap, cycles, fetch_add, load_acquire, pause, store_release, yield_thread
from codegen.profile import cycles_per_second

#: added to the joined count once the team is closed
SEALED = np.int64(1) << np.int64(32)
#: the team's shared words: joined (| SEALED), arrivals at the barrier, the barrier's generation
TEAM_WORDS = 3
#: pauses before a waiting worker starts yielding its core between looks
SPINS = 4096


@njit(cache=True, inline="always")
def _waited(looks):
    """One wait between looks at a shared word: pause while few, then yield the core."""
    if looks < SPINS:
        pause()
    else:
        yield_thread()
    return looks + 1


@njit(cache=True, inline="always")
def join(team, expected, deadline):
    """(rank, size) of this worker in the team, or (-1, 0) if the team closed without it. The team
    closes when the expected-th worker joins, or `deadline` cycles after a worker joined."""
    while True:
        seen = load_acquire(team, 0)
        if seen >= SEALED:
            return -1, 0
        closing = SEALED if seen + 1 == expected else 0
        if compare_and_swap(team, 0, seen, seen + 1 + closing):
            break
    rank, started, looks = seen, cycles(), 0
    while True:
        seen = load_acquire(team, 0)
        if seen >= SEALED:
            return rank, seen - SEALED
        if cycles() - started > deadline:
            compare_and_swap(team, 0, seen, seen + SEALED)  # fails only if one more joined: look again
        else:
            looks = _waited(looks)


@njit(cache=True, inline="always")
def barrier(team, size):
    """Wait until all `size` members arrive (a central barrier: the last to arrive starts the next
    generation; its release store publishes every write made before the barrier)."""
    if size == 1:
        return
    generation = load_acquire(team, 2)
    if fetch_add(team, 1, 1) == size - 1:
        team[1] = 0
        store_release(team, 2, generation + 1)
        return
    looks = 0
    while load_acquire(team, 2) == generation:
        looks = _waited(looks)


#: a step's shared words (a row of 8: one cache line): its claim counter, a sum its workers add to, how
#: many entries they appended to a list (a queue's next frontier), and a minimum they lower
CLAIMED, SUMMED, APPENDED, LOWEST = 0, 1, 2, 3
#: LOWEST before any worker lowered it
NOTHING_LOWER = np.iinfo(np.int64).max
#: rows of step words in turn: a step's sum is read after its barrier, until the next barrier, so the
#: row of the step after next is cleared while no one reads or writes it
STEP_ROWS = 3


@njit(cache=True)
def next_step(team, size, rank, rows, step):
    """End step `step` (the barrier) and start the next: its number, whose row rows[number % STEP_ROWS]
    is the one zeroed a step ago; rank 0 now zeroes the row of the step after it. A call, not inlined:
    a member reaches it from many places, and a call costs nothing beside a barrier's wait."""
    barrier(team, size)
    step += 1
    if rank == 0:
        _cleared(rows[(step + 1) % STEP_ROWS])
    return step


@njit(cache=True, inline="always")
def _cleared(row):
    row[:LOWEST] = 0
    row[LOWEST] = NOTHING_LOWER


@njit(cache=True)
def step_rows():
    """The STEP_ROWS rows of a team's steps, each as next_step leaves it."""
    rows = np.empty((STEP_ROWS, 8), dtype=np.int64)
    for row in range(STEP_ROWS):
        _cleared(rows[row])
    return rows


@njit(cache=True, inline="always")
def lower(row, column, value):
    """row[column] = min(row[column], value), atomically."""
    while True:
        seen = load_acquire(row, column)
        if value >= seen or compare_and_swap(row, column, seen, value):
            return


#: how long the first workers wait for the rest before the team closes without them: a sleeping pool
#: thread wakes in tens of microseconds; one that never comes (workers run one after another) costs this once
JOIN_SECONDS = 2e-3


def team_deadline() -> int:
    """JOIN_SECONDS in cycles of the counter `join` reads."""
    return int(JOIN_SECONDS * cycles_per_second())
