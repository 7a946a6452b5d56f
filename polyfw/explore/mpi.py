"""Exploring a collective target (the MPI runtime): rank 0 searches, every rank runs each candidate.

The search (strategy, budget, proofs, model, store) is rank 0's alone; the other ranks only
take part in runs. For each candidate rank 0 sends a recipe (a picklable call that builds the
schedule) and the run options; every rank builds the same schedule, generates the mpi target's
code for it (collective), and runs it on the matrix rank 0 scatters. Rank 0 compares the
gathered distances with the reference before any timing, and a run's time is the slowest
rank's (scatter and gather excluded, as benchmarks/mpi.py reports them). A failure on any
rank is reported as the candidate's, on every rank, so that no rank is left waiting.

From Python, under `mpiexec -n P python script.py`:

    team = Team()                      # every rank (collective)
    if team.rank == 0:
        found = explore(Space(4096, target=team.target, processes=team.processes), runner=team)
        team.close()
    else:
        serve(team.comm)
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from codegen import generate
from codegen.kernels import padded_stride
from codegen.mpi import threads_per_rank, world
from codegen.targets import find_target
from schedules.families import build
from schedules.schedule import Schedule

from .runners import Outcome, Problem, Recipe, first_difference
from .space import Candidate


class Team:
    """Rank 0's runner for polyfw.explore.explore on a collective target (the other ranks `serve`)."""

    def __init__(self, comm: Any = None, target: str = "mpi"):
        """Collective: every rank makes its Team, which times the runtime's overhead together."""
        self.comm = world() if comm is None else comm
        self.target = target
        self.rank, self.processes = self.comm.Get_rank(), self.comm.Get_size()
        self.threads = threads_per_rank(self.comm)
        self.tile_layer_overhead = tile_layer_overhead(self.comm, target)

    def __call__(self, schedule: Schedule, recipe: Recipe, candidate: Candidate, problem: Problem,
                 repeats: int) -> Outcome:
        options = candidate.option_dict()
        self.comm.Ibarrier().Wait()
        self.comm.bcast((recipe, self.target, options, problem.n, problem.dtype, repeats), root=0)
        return run_together(self.comm, schedule, options, problem.n, problem.dtype, repeats, problem, self.target)

    def close(self) -> None:
        """Let the serving ranks return (rank 0 calls this once its search is over)."""
        self.comm.Ibarrier().Wait()
        self.comm.bcast(None, root=0)


def serve(comm: Any = None) -> int:
    """What every rank but 0 runs while rank 0 explores: each candidate rank 0 sends, until it
    closes the team; returns how many were run."""
    comm = world() if comm is None else comm
    served = 0
    while (order := _next_order(comm)) is not None:
        recipe, target, options, n, dtype, repeats = order
        run_together(comm, recipe(), options, n, dtype, repeats, target=target)
        served += 1
    return served


#: where the runtime's own cost is timed: 4-wide tiles, whose 64 relaxations take nanoseconds, so
#: a tile-layer's time is the runtime's (dispatch, messages, bookkeeping)
OVERHEAD_N, OVERHEAD_TILE = 64, 4


def tile_layer_overhead(comm: Any, target: str = "mpi", repeats: int = 3) -> float:
    """Seconds the MPI runtime spends on each tile-layer besides its relaxations, on this world:
    the slowest rank's time on 4-wide tiles over its tile-layers (collective)."""
    problem = Problem.random(OVERHEAD_N, "float32") if comm.Get_rank() == 0 else None
    outcome = run_together(comm, build("classic", OVERHEAD_N, OVERHEAD_TILE), {}, OVERHEAD_N, "float32", repeats,
                           problem, target)
    if outcome.status != "measured":
        raise RuntimeError(f"timing the MPI runtime's overhead: {outcome.status}: {outcome.note}")
    tile_layers_per_process = (OVERHEAD_N // OVERHEAD_TILE) ** 3 / comm.Get_size()
    return float(np.median(outcome.times)) / tile_layers_per_process


def _next_order(comm: Any) -> tuple | None:
    """Rank 0's next order. Waited for asleep: a blocking MPI call spins on a core, which would
    slow rank 0's proofs and its ceiling measurement on a small machine."""
    arrived = comm.Ibarrier()
    while not arrived.Test():
        time.sleep(0.002)
    return comm.bcast(None, root=0)


def _agreed_failure(comm: Any, error: Exception | None) -> str:
    """'' when no rank failed, else the first failing rank's error (the same on every rank)."""
    found = comm.allgather(None if error is None else f"{type(error).__name__}: {error}")
    return next((f"rank {rank}: {text}" for rank, text in enumerate(found) if text), "")


def run_together(comm: Any, schedule: Schedule, options: dict[str, Any], n: int, dtype: str, repeats: int,
                 problem: Problem | None = None, target: str = "mpi") -> Outcome:
    """Generate `target`'s code for one schedule, verify and time it on every rank (collective);
    `problem` on rank 0."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    compiled, error = None, None
    try:
        compiled = generate(schedule, target=target, dtype=dtype, **find_target(target).read_options(options))
    except Exception as problem_found:  # a plan the runtime cannot run is the candidate's failure
        error = problem_found
    failure = _agreed_failure(comm, error)
    if failure:
        return Outcome("failed", failure)
    buffer = np.empty((n, padded_stride(n)), dtype=dtype) if rank == 0 else None

    def run() -> float:
        if rank == 0:
            buffer[:, :n] = problem.matrix
        comm.Barrier()
        compiled(buffer)
        return comm.allreduce(compiled.last_run["seconds"], op=MPI.MAX)

    run()
    wrong = comm.bcast(first_difference(buffer[:, :n], problem.expected) if rank == 0 else None, root=0)
    if wrong:
        return Outcome("wrong", wrong, compile_seconds=compiled.compile_seconds)
    return Outcome("measured", times=[run() for _ in range(repeats)], compile_seconds=compiled.compile_seconds)
