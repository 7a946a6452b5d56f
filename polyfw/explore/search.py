"""Schedule exploration: search a declared space with a registered strategy, prove, verify and
time each candidate, keep the results, and say how well the cost model ranked them.

Every candidate is proved legal by schedules.check before it runs, run once and compared
exactly with the naive kernel's distances, and only then timed (median of repeats). A
candidate the checker accepts that gives wrong distances is recorded as 'wrong': that is a
checker bug, never a result. The strategies are polyfw.explore.strategies' registry.
"""
from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np

from schedules import IllegalScheduleError, Schedule, check
from tiling.semirings import MIN_PLUS

from ..configuration import is_schedule_setting, parse_schedule
from ..machine.tuning import read_table, target_rows, write_winner
from .model import Model, machine_rates
from .runners import Problem, Recipe, Runner, RunHere, machine
from .space import Candidate, Space, build_candidate, is_default_option, label
from .store import Measured, Record, Store
from .strategies import Search, find_strategy


def model_for(runner: Runner, dtype: str) -> Model:
    """The model of the machine the runner runs on (an MPI team knows its runtime's overhead)."""
    return Model(machine_rates(dtype), runner.target, runner.threads, runner.tile_layer_overhead)


def refusal_of(schedule: Schedule) -> str | None:
    """None when the checker proves `schedule` legal, else its first witness explained."""
    try:
        check(schedule)
    except IllegalScheduleError as refusal:
        return refusal.violations[0].explain() if refusal.violations else str(refusal)
    return None


@lru_cache(maxsize=4096)
def proved(family: str, params: tuple[tuple[str, Any], ...], n: int) -> tuple[Schedule, str | None]:
    """The schedule of a family's parameters and the checker's verdict: None when proved legal,
    else the first witness. Run options do not change either, so candidates share them."""
    schedule = build_candidate(Candidate(family, params), n)
    return schedule, refusal_of(schedule)


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
    record = Record(machine_key, model.target, problem.stored_as, n, candidate.key, candidate.family, candidate.param_dict(),
                    "illegal", schedule.tree_file_text(), origin, machine_description=description)
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


@dataclass
class Exploration(Measured):
    """What a run found: the records of this machine and problem, and the model's quality."""

    records: list[Record]
    strategy: str
    elapsed: float
    skipped: int = 0
    #: key -> the candidate, for every record
    candidates: dict[str, Candidate] = field(default_factory=dict)

    def quality(self) -> dict[str, float | None]:
        """Kendall's tau between predicted and measured seconds over the measured candidates, and the
        regret: how much slower the model's favourite measured candidate is than the best found."""
        pairs = [(r.predicted_seconds, r.seconds) for r in self.measured if r.predicted_seconds is not None]
        if len(pairs) < 2:
            return {"kendall_tau": None, "p_value": None, "regret": None, "pairs": len(pairs)}
        from scipy.stats import kendalltau  # here: scipy.stats costs every CLI call 0.9 s to import

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
        filled = width * min(self.done, self.total) // max(self.total, 1)
        best = "" if self.best is None else \
            f" best {self.best.seconds:.4f} s {label(self.best.key, self.best.target)[:48]}"
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {record.status:<8}{best}",
              end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr)


def explore(space: Space, strategy: str = "model", budget_seconds: float | None = None,
            max_candidates: int | None = None, store: Store | None = None, repeats: int = 3,
            rerun: bool = False, seed: int = 0, ceiling: float | None = None, progress: bool = True,
            problem: Problem | None = None, runner: Runner | None = None, **settings: Any) -> Exploration:
    """Search `space` with a registered strategy (polyfw.explore.strategies; `settings` are its
    own, e.g. the model strategy's top=8) until it has nothing more to propose, or the time or
    candidate budget runs out; each measured candidate goes into `store` (skipped when stored for
    this machine, unless `rerun`). runner: how candidates run (default: RunHere(space.target); a
    collective target's is polyfw.explore.mpi.Team)."""
    started = time.perf_counter()
    chosen = find_strategy(strategy)
    settings = chosen.settings(settings)
    problem = problem or Problem.random(space.n, space.dtype, seed, space.semiring)
    runner = runner or RunHere(space.target)
    model = model_for(runner, space.dtype)
    machine_key, description = machine(space.dtype, runner, ceiling)
    ranking_deadline = None if budget_seconds is None else started + budget_seconds / 4
    search = Search(space, model, seed, settings, ranking_deadline)
    skipped = 0
    visits = chosen.visits(space, settings)
    bar = Progress(visits if max_candidates is None else min(max_candidates, visits), progress)

    def out_of_budget() -> bool:
        over_time = budget_seconds is not None and time.perf_counter() - started > budget_seconds
        return over_time or (max_candidates is not None and len(search.records) >= max_candidates)

    for candidate in chosen.propose(search):
        if out_of_budget():
            break
        if candidate.key in search.seen:
            continue
        search.seen[candidate.key] = candidate
        stored = None if store is None or rerun else store.get(machine_key, space.target, problem.stored_as, space.n,
                                                               candidate.key)
        if stored is not None:
            skipped += 1
            record = stored
        else:
            record = measure(candidate, problem, runner, repeats, model, machine_key, description)
            if store is not None:
                store.put(record)
        search.records.append(record)
        bar.update(record)
    bar.close()
    return Exploration(search.records, strategy, time.perf_counter() - started, skipped, search.seen)


# ---------------------------------------------------------------- reading the results


def table(records: Sequence[Record], limit: int = 20) -> str:
    """The measured candidates, fastest first, with the model beside them."""
    measured = sorted((r for r in records if r.status == "measured"), key=lambda r: r.seconds)
    header = f"{'candidate':<80} {'seconds':>8} {'G relax/s':>9} {'predicted':>9} {'stages':>6} {'traffic':>12}"
    lines = [header, "-" * len(header)]
    for r in measured[:limit]:
        lines.append(f"{label(r.key, r.target)[:80]:<80} {r.seconds:>8.4f} {r.rate / 1e9:>9.2f} "
                     f"{r.predicted_seconds:>9.4f} {r.model.get('stages', 0):>6} {r.model.get('traffic', 0):>12,}")
    others = [r for r in records if r.status != "measured"]
    for status in ("illegal", "wrong", "failed"):
        count = sum(r.status == status for r in others)
        if count:
            lines.append(f"{count} {status}" + (" (CHECKER BUG: proved legal, wrong distances)" if status == "wrong"
                                                else ""))
    return "\n".join(lines)


def quality_line(found: Exploration) -> str | None:
    """The model's quality in one line, or None where fewer than two measured candidates rank."""
    quality = found.quality()
    if quality["kendall_tau"] is None:
        return None
    return (f"cost model: Kendall tau {quality['kendall_tau']:.3f} (p = {quality['p_value']:.2g}) over "
            f"{quality['pairs']} candidates; regret {100 * quality['regret']:.1f}% (the model's favourite "
            f"against the best found)")


def best_line(best: Record, candidate: Candidate | None, ceiling: float | None) -> str:
    """'best: TEXT (rate...)', TEXT as `polyfw solve --schedule` takes it (its run settings
    included), and the run options it cannot carry named."""
    text = candidate.schedule_text if candidate is not None else best.key
    left_out = [item for item in best.key.split(";")[1:]
                if not is_schedule_setting(item.partition("=")[0]) and not is_default_option(*item.split("=", 1))]
    rate = f"{best.rate / 1e9:.2f} G relaxations/s" + (
        f" = {best.rate / ceiling:.0%} of the ceiling" if ceiling else "")
    solve = "polyfw solve --schedule takes it as is" + (
        f", without the run options {', '.join(left_out)}" if left_out else "")
    return f"best: {text} ({rate}; {solve})"


@dataclass(frozen=True)
class Tuned:
    """A winner written into a tuning table: the file, the configuration, and the sizes it was proved for."""

    path: Path
    n: int
    family: str
    params: dict[str, Any]
    proved: tuple[int, int]

    def __str__(self) -> str:
        return (f"wrote {self.path}: {self.family} {self.params} for n <= {self.n}, proved legal for n in "
                f"{self.proved[0]}..{self.proved[1]}")


def tune(found: Exploration, path: str | Path | None = None) -> Tuned | None:
    """Write the best measured candidate into the user's tuning table (or `path`) for its size,
    dtype and target, proved for every size it will stand for; None when nothing was measured."""
    best = found.best
    if best is not None and best.dtype not in MIN_PLUS.dtypes:
        raise ValueError(f"the tuning table holds shortest-path (min-plus) configurations; this exploration "
                         f"measured {best.dtype}")
    if best is None:
        return None
    family, params = parse_schedule(found.candidates[best.key].schedule_text)
    written = write_winner(best.n, best.dtype, best.target, family, params, best.machine,
                           best.machine_description.get("model", ""), path)
    row = next(r for r in target_rows(read_table(written), best.target, best.machine)[best.dtype] if r[0] == best.n)
    return Tuned(written, best.n, family, params, tuple(row[3]))
