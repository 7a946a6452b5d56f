"""Where and how a proved candidate runs: the problem every candidate runs on, what a run gives
(Outcome), the Runner protocol, and RunHere, which runs candidates in this process (a collective
target's runner is polyfw.explore.mpi.Team)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numba
import numpy as np

from codegen import floyd_warshall_naive, floyd_warshall_nest, generate
from codegen.kernels import padded_stride
from codegen.register_blocks import cpu_description, cpu_key
from codegen.targets import find_target
from schedules import Schedule
from tiling.semirings import MIN_PLUS
from tiling.semirings import semiring as find_semiring

from ..comparison import run_times
from ..graphs import Edges, as_dense, as_semiring_matrix, exact_weights, random_graph
from .space import Candidate

#: how every rank of a run obtains the schedule: a picklable call with no arguments (a collective
#: target sends it to the other ranks, which build the same schedule themselves)
Recipe = Callable[[], Schedule]


@dataclass
class Problem:
    """The input every candidate of one exploration runs on, and its exact distances."""

    n: int
    dtype: str
    matrix: np.ndarray
    expected: np.ndarray
    semiring: str = "min-plus"

    @classmethod
    def random(cls, n: int, dtype: str = "float32", seed: int = 0, semiring: str = "min-plus") -> Problem:
        """A random digraph with 4n integer-weighted arcs (seed 001's density), exact in every dtype;
        another semiring reads it with its own 'no path' and answers by its own reference nest."""
        graph = random_graph(n, m=min(4 * n, n * (n - 1)), weights=exact_weights(n, dtype), seed=seed)
        ring = find_semiring(semiring)
        if ring.from_lengths is not None:
            graph = Edges(graph.n, graph.source, graph.target, ring.from_lengths(graph.weight))
        if ring is MIN_PLUS:
            matrix = as_dense(graph, dtype=dtype)
            expected = matrix.copy()
            floyd_warshall_naive(expected)
        else:
            matrix = as_semiring_matrix(graph, ring, dtype)
            expected = matrix.copy()
            floyd_warshall_nest(expected, ring.name)
        return cls(n, dtype, matrix, expected, ring.name)

    @property
    def stored_as(self) -> str:
        """The dtype column of its records: the element type, and the semiring when not min-plus."""
        return self.dtype if self.semiring == MIN_PLUS.name else f"{self.dtype}:{self.semiring}"


@dataclass
class Outcome:
    """What running a proved candidate gave: 'measured' with its times, else 'wrong' or 'failed'
    with a note."""

    status: str
    note: str = ""
    times: list[float] = field(default_factory=list)
    compile_seconds: float | None = None
    #: where it ran, when not in this process (polyfw.explore.dask_runner): (machine key, description)
    machine: tuple[str, dict[str, Any]] | None = None


def first_difference(found: np.ndarray, expected: np.ndarray) -> str:
    """'' when equal, else the first differing element explained."""
    if np.array_equal(found, expected):
        return ""
    i, j = np.argwhere(found != expected)[0]
    return f"proved legal but a[{i}, {j}] = {found[i, j]}, expected {expected[i, j]}"


class Runner(Protocol):
    """Runs a proved candidate on the problem and says what happened (RunHere, mpi.Team), and says
    where: the target, its processes, each one's threads, the runtime's own seconds per
    tile-layer where it has measured them (0 elsewhere)."""

    target: str
    processes: int
    threads: int
    tile_layer_overhead: float

    def __call__(self, schedule: Schedule, recipe: Recipe, candidate: Candidate, problem: Problem,
                 repeats: int) -> Outcome: ...


class RunHere:
    """Runs candidates in this process: every target that is not collective."""

    processes, tile_layer_overhead = 1, 0.0

    def __init__(self, target: str = "cpu"):
        self.target, self.threads = target, numba.get_num_threads()

    def __call__(self, schedule: Schedule, recipe: Recipe, candidate: Candidate, problem: Problem,
                 repeats: int) -> Outcome:
        n = problem.n
        target = find_target(self.target)
        try:
            compiled = generate(schedule, target=self.target, dtype=problem.dtype, semiring=problem.semiring,
                                **target.read_options(candidate.option_dict()))
        except Exception as error:  # a generator that cannot serve a proved schedule is reported, not hidden
            return Outcome("failed", f"{type(error).__name__}: {error}")
        buffer = np.empty((n, padded_stride(n)), dtype=problem.dtype)
        checking = dict(target.checking_run)  # what the hardware would do at once (the simulator's blocks)

        def run() -> None:
            buffer[:, :n] = problem.matrix
            compiled(buffer, **checking)

        run()
        compile_seconds = getattr(compiled, "compile_seconds", None)
        wrong = first_difference(buffer[:, :n], problem.expected)
        if wrong:
            return Outcome("wrong", wrong, compile_seconds=compile_seconds)
        return Outcome("measured", times=run_times(run, repeats), compile_seconds=compile_seconds)


def machine(dtype: str, runner: Runner, ceiling: float | None = None) -> tuple[str, dict[str, Any]]:
    """The key in the store of the machine the runner runs on, and what a reader of a record needs to
    know of it: the CPU (a remote runner's `remote_machine`, else this one's), the threads each process
    runs, the processes and the ceiling."""
    key, cpu = getattr(runner, "remote_machine", None) or (cpu_key(), cpu_description())
    description = {**cpu, "threads": runner.threads}
    if runner.processes > 1:
        description["processes"] = runner.processes
    if runner.tile_layer_overhead:
        description["tile_layer_overhead"] = runner.tile_layer_overhead
    if ceiling is not None:
        description[f"ceiling_{dtype}"] = ceiling
    return key, description
