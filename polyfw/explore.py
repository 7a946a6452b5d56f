"""Schedule exploration: search a declared space, prove, verify and time each candidate, keep the
results, and say how well the cost model ranked them.

Every candidate is proved legal by schedules.check before it runs, run once and compared
exactly with the naive kernel's distances, and only then timed (median of repeats). A
candidate the checker accepts that gives wrong distances is recorded as 'wrong': that is a
checker bug, never a result. Strategies: 'exhaustive' (the space in order), 'random' (a
seeded shuffle) and 'model' (rank by the cost model, measure the top k, then refine around
the best measured one through its neighbours, again in the model's order).
"""
from __future__ import annotations

import math
import random
import sys
import time
from functools import lru_cache, partial
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numba
import numpy as np
from scipy.stats import kendalltau

from codegen import floyd_warshall_naive, generate
from codegen.targets import TARGETS
from codegen.register_blocks import cached_choice, cpu_description, cpu_key
from schedules import IllegalScheduleError, Schedule, build, check, cost
from schedules.distribute import Grid, Network
from schedules.predict import MachineRates, predicted_seconds
from tiling.graphs import as_dense, random_graph

from .compare import run_times
from .solve import padded_stride
from .space import Candidate, Space, label
from .store import Record, Store

STRATEGIES = ("exhaustive", "random", "model")


@dataclass
class Problem:
    """The input every candidate of one exploration runs on, and its exact distances."""

    n: int
    dtype: str
    matrix: np.ndarray
    expected: np.ndarray

    @classmethod
    def random(cls, n: int, dtype: str = "float32", seed: int = 0) -> Problem:
        """A random digraph with 4n integer-weighted arcs (seed 001's density), exact in every dtype."""
        matrix = as_dense(random_graph(n, m=min(4 * n, n * (n - 1)), seed=seed), dtype=dtype)
        expected = matrix.copy()
        floyd_warshall_naive(expected)
        return cls(n, dtype, matrix, expected)


def model_for(runner: Runner, dtype: str) -> Model:
    """The model of the machine the runner runs on (an MPI team knows its runtime's overhead)."""
    return Model(machine_rates(dtype), runner.target, runner.threads, runner.tile_layer_overhead)


def machine(dtype: str, runner: Runner, ceiling: float | None = None) -> tuple[str, dict[str, Any]]:
    """This machine's key in the store and what a reader of a record needs to know of it: the CPU,
    the threads each process runs, the processes (mpi) and the ceiling."""
    description = {**cpu_description(), "threads": runner.threads}
    if runner.processes > 1:
        description["processes"] = runner.processes
    if runner.tile_layer_overhead:
        description["tile_layer_overhead"] = runner.tile_layer_overhead
    if ceiling is not None:
        description[f"ceiling_{dtype}"] = ceiling
    return cpu_key(), description


def machine_rates(dtype: str) -> MachineRates:
    """The model's per-processor rate: the register block's measured one-thread rate where polyfw
    has measured it on this CPU, else the default."""
    choice = cached_choice(dtype)
    if choice is not None and choice.rates:
        return MachineRates(relaxations_per_second=max(choice.rates.values()))
    return MachineRates()


@lru_cache(maxsize=4096)
def build_candidate(candidate: Candidate, n: int) -> Schedule:
    """The candidate's schedule (run options do not change it)."""
    given = candidate.param_dict()
    tile = None if candidate.family == "recursive" else given.pop("tile")
    return build(candidate.family, n, tile, **given)


#: how every rank of a run obtains the schedule: a picklable call with no arguments (the MPI
#: target sends it to the other ranks, which build the same schedule themselves)
Recipe = Callable[[], Schedule]


@lru_cache(maxsize=4096)
def proved(family: str, params: tuple[tuple[str, Any], ...], n: int) -> tuple[Schedule, str | None]:
    """The schedule of a family's parameters and the checker's verdict: None when proved legal,
    else the first witness. Run options do not change either, so candidates share them."""
    schedule = build_candidate(Candidate(family, params), n)
    return schedule, refusal_of(schedule)


@dataclass(frozen=True)
class Model:
    """The cost model as an exploration asks it: this machine's rates, the target, and the threads
    each process runs (numba's on the cpu; each MPI process's on the mpi target)."""

    rates: MachineRates = MachineRates()
    target: str = "cpu"
    threads: int = 1
    #: mpi: the runtime's seconds per tile-layer besides the relaxations (explore_mpi measures it)
    tile_layer_overhead: float = 0.0

    def figures(self, schedule: Schedule, candidate: Candidate, dtype: str) -> dict[str, Any]:
        """The cost report's numbers for the candidate as it runs, with its predicted seconds."""
        options = candidate.option_dict()
        itemsize = np.dtype(dtype).itemsize
        if self.target == "mpi":
            return self._on_a_grid(schedule, options, itemsize)
        runtime = "dataflow" if str(options.get("runtime", "barrier")).startswith("dataflow") else "barrier"
        report = cost(schedule, procs=self.threads, runtime=runtime)
        figures = _numbers(report.as_dict())
        figures["predicted_seconds"] = predicted_seconds(report, itemsize, self.rates)
        return figures

    def _on_a_grid(self, schedule: Schedule, options: dict[str, Any], itemsize: int) -> dict[str, Any]:
        """The alpha-beta replay of the distributed plan (schedules.network) on the candidate's grid."""
        read = TARGETS["mpi"].read_options(options)
        grid = Grid(*read["grid"], read.get("placement", "block-cyclic"))
        network = Network(rate=self.rates.relaxations_per_second * self.threads, itemsize=itemsize,
                          overhead=self.tile_layer_overhead)
        report = cost(schedule, procs=grid.size * self.threads, grid=grid, network=network)
        spread = report.distributed
        replay = spread["lookahead" if read.get("lookahead", True) else "in order"]
        figures = _numbers(report.as_dict())
        figures.update(messages_sent=max(spread["messages_sent"]), bytes_sent=max(spread["bytes_sent"]),
                       efficiency=replay["efficiency"], predicted_seconds=replay["makespan"])
        return figures


def _numbers(report: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in report.items() if isinstance(value, (int, float))}


@dataclass
class Outcome:
    """What running a proved candidate gave: 'measured' with its times, else 'wrong' or 'failed'
    with a note."""

    status: str
    note: str = ""
    times: list[float] = field(default_factory=list)
    compile_seconds: float | None = None


def first_difference(found: np.ndarray, expected: np.ndarray) -> str:
    """'' when equal, else the first differing element explained."""
    if np.array_equal(found, expected):
        return ""
    i, j = np.argwhere(found != expected)[0]
    return f"proved legal but a[{i}, {j}] = {found[i, j]}, expected {expected[i, j]}"


class Runner(Protocol):
    """Runs a proved candidate on the problem and says what happened (RunHere, explore_mpi.Team),
    and says where: the target, its processes, each one's threads, the runtime's own seconds per
    tile-layer where it has measured them (0 elsewhere)."""

    target: str
    processes: int
    threads: int
    tile_layer_overhead: float

    def __call__(self, schedule: Schedule, recipe: Recipe, candidate: Candidate, problem: Problem,
                 repeats: int) -> Outcome: ...


class RunHere:
    """Runs candidates in this process: every target but mpi (polyfw.explore_mpi's Team)."""

    processes, tile_layer_overhead = 1, 0.0

    def __init__(self, target: str = "cpu"):
        self.target, self.threads = target, numba.get_num_threads()

    def __call__(self, schedule: Schedule, recipe: Recipe, candidate: Candidate, problem: Problem,
                 repeats: int) -> Outcome:
        n = problem.n
        try:
            compiled = generate(schedule, target=self.target, dtype=problem.dtype,
                                **TARGETS[self.target].read_options(candidate.option_dict()))
        except Exception as error:  # a generator that cannot serve a proved schedule is reported, not hidden
            return Outcome("failed", f"{type(error).__name__}: {error}")
        buffer = np.empty((n, padded_stride(n)), dtype=problem.dtype)

        # on the CUDA simulator the thread blocks of a launch run at once, as on a GPU
        concurrently = {"concurrent_blocks": True} if self.target == "cudasim" else {}

        def run() -> None:
            buffer[:, :n] = problem.matrix
            compiled(buffer, **concurrently)

        run()
        compile_seconds = getattr(compiled, "compile_seconds", None)
        wrong = first_difference(buffer[:, :n], problem.expected)
        if wrong:
            return Outcome("wrong", wrong, compile_seconds=compile_seconds)
        return Outcome("measured", times=run_times(run, repeats), compile_seconds=compile_seconds)


def measure(candidate: Candidate, problem: Problem, runner: Runner, repeats: int, model: Model,
            machine_key: str, description: dict[str, Any], origin: str = "family",
            recipe: Recipe | None = None) -> Record:
    """Prove, model, verify exactly and time one candidate (or the schedule `recipe` builds)."""
    n, dtype = problem.n, problem.dtype
    if recipe is None:
        recipe = partial(build_candidate, candidate, n)
        schedule, refusal = proved(candidate.family, candidate.params, n)
    else:
        schedule = recipe()
        refusal = refusal_of(schedule)
    record = Record(machine_key, model.target, dtype, n, candidate.key, candidate.family, candidate.param_dict(),
                    "illegal", schedule.tree_file_text(),
                    origin, machine_description=description)
    if refusal is not None:
        record.note = refusal
        return record
    try:
        record.model = model.figures(schedule, candidate, dtype)
    except ValueError as refusal:  # e.g. an order the MPI runtime cannot distribute: no code for it
        record.status, record.note = "failed", str(refusal)
        return record
    record.predicted_seconds = record.model["predicted_seconds"]
    outcome = runner(schedule, recipe, candidate, problem, repeats)
    record.status, record.note, record.compile_seconds = outcome.status, outcome.note, outcome.compile_seconds
    if outcome.status == "measured":
        record.times = outcome.times
        record.seconds = float(np.median(outcome.times))
    return record


# ---------------------------------------------------------------- strategies


def predict(space: Space, candidates: Iterable[Candidate], model: Model,
            deadline: float | None = None) -> dict[Candidate, float]:
    """The model's seconds for each candidate (until `deadline`, a perf_counter time). Not proved:
    a proof can cost more than the model (recursive at n = 2048, base 32: ~30 s), so candidates
    are proved when they are about to be measured."""
    found = {}
    for candidate in candidates:
        if deadline is not None and time.perf_counter() > deadline:
            break
        try:
            found[candidate] = model.figures(build_candidate(candidate, space.n), candidate,
                                             space.dtype)["predicted_seconds"]
        except ValueError:  # the target cannot run it (measure records why): ranked last
            found[candidate] = math.inf
    return found


def refusal_of(schedule: Schedule) -> str | None:
    """None when the checker proves `schedule` legal, else its first witness explained."""
    try:
        check(schedule)
    except IllegalScheduleError as refusal:
        return refusal.violations[0].explain() if refusal.violations else str(refusal)
    return None


def order_candidates(space: Space, strategy: str, seed: int = 0, model: Model | None = None,
                     model_sample: int = 400, deadline: float | None = None) -> list[Candidate]:
    """The candidates in the order a strategy visits them; 'model': a random sample of the space
    ranked by predicted seconds (the refinement around the best comes later)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    candidates = list(space)
    if strategy == "exhaustive":
        return candidates
    random.Random(seed).shuffle(candidates)
    if strategy == "random":
        return candidates
    predicted = predict(space, candidates[:model_sample], model or Model(target=space.target), deadline)
    return sorted(predicted, key=predicted.get)


# ---------------------------------------------------------------- the run


@dataclass
class Exploration:
    """What a run found: the records of this machine and problem, and the model's quality."""

    records: list[Record]
    strategy: str
    elapsed: float
    skipped: int = 0
    #: key -> the candidate, for every record
    candidates: dict[str, Candidate] = field(default_factory=dict)

    @property
    def measured(self) -> list[Record]:
        return [r for r in self.records if r.status == "measured"]

    @property
    def best(self) -> Record | None:
        return min(self.measured, key=lambda r: r.seconds, default=None)

    def quality(self) -> dict[str, float | None]:
        """Kendall's tau between predicted and measured seconds over the measured candidates, and the
        regret: how much slower the model's favourite measured candidate is than the best found."""
        pairs = [(r.predicted_seconds, r.seconds) for r in self.measured if r.predicted_seconds is not None]
        if len(pairs) < 2:
            return {"kendall_tau": None, "p_value": None, "regret": None, "pairs": len(pairs)}
        predicted, seconds = zip(*pairs)
        tau, p_value = (float(x) for x in kendalltau(predicted, seconds))
        favourite = min(self.measured, key=lambda r: r.predicted_seconds)
        ranked = not math.isnan(tau)  # nan: every prediction (or time) the same, no ranking to rate
        return {"kendall_tau": tau if ranked else None, "p_value": p_value if ranked else None,
                "regret": favourite.seconds / self.best.seconds - 1.0, "pairs": len(pairs)}


class Progress:
    """A one-line progress bar on stderr with the best time so far."""

    def __init__(self, total: int, enabled: bool = True):
        self.total, self.enabled, self.done, self.best = total, enabled, 0, None

    def update(self, record: Record) -> None:
        self.done += 1
        if record.status == "measured" and (self.best is None or record.seconds < self.best.seconds):
            self.best = record
        if not self.enabled:
            return
        width = 24
        filled = width * self.done // max(self.total, 1)
        best = "" if self.best is None else f" best {self.best.seconds:.4f} s {label(self.best.key)[:48]}"
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {record.status:<8}{best}",
              end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr)


def explore(space: Space, strategy: str = "model", budget_seconds: float | None = None,
            max_candidates: int | None = None, store: Store | None = None, repeats: int = 3,
            rerun: bool = False, seed: int = 0, top: int = 8, ceiling: float | None = None,
            progress: bool = True, problem: Problem | None = None, runner: Runner | None = None) -> Exploration:
    """Search `space` with `strategy` until the candidates, the time budget or the candidate budget
    run out; each measured candidate goes into `store` (skipped when stored for this machine,
    unless `rerun`). runner: how candidates run (default: RunHere(space.target); the mpi
    target's is polyfw.explore_mpi.Team)."""
    started = time.perf_counter()
    problem = problem or Problem.random(space.n, space.dtype, seed)
    runner = runner or RunHere(space.target)
    model = model_for(runner, space.dtype)
    machine_key, description = machine(space.dtype, runner, ceiling)
    ranking_deadline = None if budget_seconds is None else started + budget_seconds / 4
    queue = order_candidates(space, strategy, seed, model, deadline=ranking_deadline)
    records: list[Record] = []
    seen: dict[str, Candidate] = {}
    skipped = 0
    limit = max_candidates if max_candidates is not None else len(queue) + (4 * top if strategy == "model" else 0)
    bar = Progress(min(limit, len(queue) if strategy != "model" else 5 * top), progress)

    def out_of_budget() -> bool:
        over_time = budget_seconds is not None and time.perf_counter() - started > budget_seconds
        return over_time or len(records) >= limit

    def visit(candidate: Candidate) -> None:
        nonlocal skipped
        if candidate.key in seen:
            return
        seen[candidate.key] = candidate
        stored = None if store is None or rerun else store.get(machine_key, space.target, space.dtype, space.n,
                                                               candidate.key)
        if stored is not None:
            skipped += 1
            record = stored
        else:
            record = measure(candidate, problem, runner, repeats, model, machine_key, description)
            if store is not None:
                store.put(record)
        records.append(record)
        bar.update(record)

    for candidate in queue:
        if out_of_budget() or (strategy == "model" and sum(r.status == "measured" for r in records) >= top):
            break
        visit(candidate)
    if strategy == "model":
        refine(space, visit, seen, records, model, out_of_budget)
    bar.close()
    return Exploration(records, strategy, time.perf_counter() - started, skipped, seen)


def refine(space: Space, visit: Callable[[Candidate], None], seen: dict[str, Candidate], records: list[Record],
           model: Model, out_of_budget: Callable[[], bool]) -> None:
    """Measure the neighbours of the best measured candidate, in the model's order, until one
    improves on it (then move there) or none is left."""
    tried: set[str] = set()
    while not out_of_budget():
        measured = [r for r in records if r.status == "measured"]
        if not measured:
            return
        best = min(measured, key=lambda r: r.seconds)
        if best.key in tried:
            return
        tried.add(best.key)
        fresh = [c for c in space.neighbours(seen[best.key]) if c.key not in seen]
        predicted = predict(space, fresh, model)
        for neighbour in sorted(predicted, key=predicted.get):
            if out_of_budget():
                return
            visit(neighbour)


# ---------------------------------------------------------------- reading the results


def table(records: Sequence[Record], limit: int = 20) -> str:
    """The measured candidates, fastest first, with the model beside them."""
    measured = sorted((r for r in records if r.status == "measured"), key=lambda r: r.seconds)
    header = f"{'candidate':<80} {'seconds':>8} {'G relax/s':>9} {'predicted':>9} {'stages':>6} {'traffic':>12}"
    lines = [header, "-" * len(header)]
    for r in measured[:limit]:
        lines.append(f"{label(r.key)[:80]:<80} {r.seconds:>8.4f} {r.rate / 1e9:>9.2f} {r.predicted_seconds:>9.4f} "
                     f"{r.model.get('stages', 0):>6} {r.model.get('traffic', 0):>12,}")
    others = [r for r in records if r.status != "measured"]
    for status in ("illegal", "wrong", "failed"):
        count = sum(r.status == status for r in others)
        if count:
            lines.append(f"{count} {status}" + (" (CHECKER BUG: proved legal, wrong distances)" if status == "wrong"
                                                else ""))
    return "\n".join(lines)
