"""Schedule exploration: search a declared space with a registered strategy, prove, verify and
time each candidate, keep the results, and say how well the cost model ranked them.

Every candidate is proved legal by schedules.check before it runs, run once and compared
exactly with the naive kernel's distances, and only then timed (median of repeats). A
candidate the checker accepts that gives wrong distances is recorded as 'wrong': that is a
checker bug, never a result. The strategies are polyfw.explore.strategies' registry.

Each run is a search in the store (polyfw.explore.store.StoredSearch) with the keys it visited
in order; a resumed run feeds those records back to the strategy in that order, so that it goes
on from where it stopped, and measures only what is new.
"""
from __future__ import annotations

import math
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np

from codegen.targets import as_text
from schedules import IllegalScheduleError, Schedule, check, prove
from schedules.proofs import UNSAFE
from tiling.semirings import MIN_PLUS

from ..configuration import is_schedule_setting, parse_schedule, write_winner
from ..machine.tuning import read_table, target_rows
from ..progress import bar as progress_bar
from .axes import check_axes
from .budget import Budget
from .model import Model, calibration_for
from .runners import Outcome, Problem, Recipe, Runner, RunHere, machine
from .space import Candidate, Space, build_candidate, is_default_option, label
from .store import Measured, Record, Store, StoredSearch
from .strategies import Search, find_strategy


def model_for(runner: Runner, dtype: str, store: Store | None = None) -> Model:
    """The model of the machine the runner runs on (an MPI team knows its runtime's overhead)."""
    return Model(calibration_for(dtype, runner.threads, None if store is None else store.path), runner.target,
                 runner.tile_layer_overhead)


def refusal_of(schedule: Schedule) -> str | None:
    """None when the checker proves `schedule` legal (a proof kept on disk, as the generators keep
    theirs: recursive at n = 4096, base 32 takes 80 s), else its first witness explained."""
    try:
        if prove(schedule).model == UNSAFE:  # let run unproved to judge a mutant: that is no proof
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
    record, schedule, recipe = prepare(candidate, problem, model, machine_key, description, origin, recipe)
    if schedule is None:
        return record
    return finish(record, runner(schedule, recipe, candidate, problem, repeats), model, description)


def prepare(candidate: Candidate, problem: Problem, model: Model, machine_key: str, description: dict[str, Any],
            origin: str = "family", recipe: Recipe | None = None) -> tuple[Record, Schedule | None, Recipe]:
    """A candidate proved and modelled: its record, and the schedule to run (None when it is refused:
    the record says why)."""
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
        return record, None, recipe
    try:
        record.model = model.figures(schedule, candidate, dtype)
    except ValueError as refusal:  # e.g. an order the MPI runtime cannot distribute: no code for it
        record.status, record.note = "failed", str(refusal)
        return record, None, recipe
    record.predicted_seconds = record.model["predicted_seconds"]
    return record, schedule, recipe


def finish(record: Record, outcome: Outcome, model: Model, description: dict[str, Any]) -> Record:
    """A prepared record completed by what running it gave."""
    record.status, record.note, record.compile_seconds = outcome.status, outcome.note, outcome.compile_seconds
    if outcome.machine is not None:  # a remote runner's worker: its own machine, as it described it
        record.machine, record.machine_description = outcome.machine[0], {**description, **outcome.machine[1]}
    if outcome.status == "measured":
        record.times = outcome.times
        record.seconds = float(np.median(outcome.times))
        # the prediction at the host's speed while it ran (record.model keeps it at calibration's)
        record.model["host slowdown"] = model.slowdown()
        record.predicted_seconds *= record.model["host slowdown"]
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
    #: the store's id of the search (None without a store)
    search: int | None = None
    #: how many of the records earlier runs of the search visited (fed back, not measured again)
    resumed: int = 0
    #: whether the strategy ran out of candidates (else a budget stopped it: --resume continues it)
    finished: bool = False
    budget: Budget = field(default_factory=Budget)
    #: seconds from the budget's start until the search began (the problem, the ceiling, calibration,
    #: the model), and until the strategy proposed its first candidate (its ranking)
    prepared_seconds: float = 0.0
    ranking_seconds: float = 0.0

    def overhead_note(self) -> str | None:
        """A line saying so when preparing and ranking took most of a time budget, else None."""
        spent = self.prepared_seconds + self.ranking_seconds
        if self.budget.seconds is None or spent <= self.budget.seconds / 2:
            return None
        return (f"preparing (the problem, the ceiling, calibration, the model) took {self.prepared_seconds:.1f} s and "
                f"ranking {self.ranking_seconds:.1f} s of the {self.budget.seconds:g} s budget: most of it went "
                "before measuring (a larger --budget, or --no-ceiling, leaves more to measure)")

    def quality(self) -> dict[str, float | None]:
        """Kendall's tau between predicted and measured seconds over the measured candidates, and the
        regret: how much slower the model's favourite measured candidate is than the best found."""
        pairs = [(r.predicted_seconds, r.seconds) for r in self.measured if r.predicted_seconds is not None]
        if len(pairs) < 2:
            return {"kendall_tau": None, "p_value": None, "regret": None, "pairs": len(pairs)}
        from scipy.stats import kendalltau  # here: scipy.stats costs every CLI call 0.9 s to import

        predicted, seconds = zip(*pairs)
        tau, p_value = (float(x) for x in kendalltau(predicted, seconds))
        # the candidate the model picks before measuring: by its prediction at calibration's speed
        favourite = min(self.measured, key=lambda r: r.model.get("predicted_seconds", r.predicted_seconds))
        ranked = not math.isnan(tau)  # nan: every prediction (or time) the same, no ranking to rate
        return {"kendall_tau": tau if ranked else None, "p_value": p_value if ranked else None,
                "regret": favourite.seconds / self.best.seconds - 1.0, "pairs": len(pairs)}


class Progress:
    """explore's bar (polyfw.progress): candidates visited, the rate, the time left, and the best time so far."""

    def __init__(self, total: int, show: bool | None = None):
        self.done, self.best, self.quiet = 0, None, show is False
        self.bar = progress_bar(total, "explore", unit="candidate", show=show)

    def update(self, record: Record) -> None:
        self.done += 1
        if record.status == "measured" and (self.best is None or record.seconds < self.best.seconds):
            self.best = record
        best = "" if self.best is None else \
            f"best {self.best.seconds:.4f} s {label(self.best.key, self.best.target)[:48]}"
        self.bar.set_postfix_str(f"{record.status}; {best}" if best else record.status, refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()

    def say(self, line: str) -> None:
        """A line of news about the run on stderr (above the bar where one is drawn), unless progress=False."""
        if self.quiet:
            return
        if self.bar.disable:
            print(line, file=sys.stderr, flush=True)
        else:
            self.bar.write(line, file=sys.stderr)


def narrowing(space: Space) -> dict[str, Any]:
    """What sets a space apart besides its problem (a search's identity in the store): the
    families, each narrowed axis's values as text in the order given, the run axes, the processes."""
    return {"families": list(space.families), "run_axes": list(space.run_axes or ()), "processes": space.processes,
            "values": {name: [as_text(value) for value in values] for name, values in sorted(space.values.items())}}


class Visits:
    """A run's place in its search: the records earlier runs visited, fed back to the strategy in
    their order (so that it goes on where it stopped), and each new visit added to the store."""

    def __init__(self, store: Store | None, wanted: StoredSearch, resume: bool | int, space: Space):
        self.store, self.space, self.resuming, self.resumed = store, space, resume is not False, 0
        self.search = None if store is None else _search_to_continue(store, wanted, resume)
        keys = [] if self.search is None or self.search.id is None else store.visited(self.search.id)
        self.visited_before = len(keys)
        found = {key: store.get(wanted.machine, wanted.target, wanted.dtype, wanted.n, key) for key in keys}
        #: key -> record of the earlier visits not fed back yet, in the order visited
        self.earlier = {key: record for key, record in found.items() if record is not None}
        self.new = self.search is not None and self.search.id is None
        if self.new:
            store.begin(self.search)

    def news(self) -> str | None:
        """The line that says what resuming found (None when not resuming)."""
        if not self.resuming:
            return None
        if self.new:
            return f"no earlier search of this problem in {self.store.path}: starting search {self.search.id}"
        where = "finished before: nothing left to visit" if self.search.finished else "continuing"
        return f"resuming search {self.search.id}: {self.visited_before} visited, {where}"

    def feed(self, candidate: Candidate, search: Search) -> bool:
        """Give the strategy `candidate`'s earlier record, if an earlier run visited it. Where it
        proposes one they did not, the earlier records it has not been given go in first, in
        their order: none is visited twice."""
        if not self.earlier:
            return False
        if candidate.key in self.earlier:
            self._give(candidate, self.earlier.pop(candidate.key), search)
            return True
        by_key = {c.key: c for c in self.space}
        for key, record in list(self.earlier.items()):
            if key in by_key:
                self._give(by_key[key], record, search)
        self.earlier.clear()
        return False

    def _give(self, candidate: Candidate, record: Record, search: Search) -> None:
        search.seen[candidate.key] = candidate
        search.records.append(record)
        self.resumed += 1

    def add(self, key: str) -> None:
        if self.search is not None:
            self.store.visit(self.search.id, key)

    def close(self, finished: bool) -> None:
        if self.search is not None:
            self.search.finished = finished
            self.store.update(self.search)


def _search_to_continue(store: Store, wanted: StoredSearch, resume: bool | int) -> StoredSearch:
    """The stored search a run continues (`resume`: True for the latest of the same identity, else
    its id), with this run's budgets; else `wanted`, new (no id yet)."""
    if resume is False:
        return wanted
    if resume is True:
        found = next((s for s in store.searches() if s.identity() == wanted.identity()), None)
        if found is None:
            return wanted
    else:
        found = store.search(resume)
        differences = found.differences(wanted)
        if differences:
            raise ValueError(f"search {resume} in {store.path} is another search: {'; '.join(differences)} "
                             "(that search's, then this run's)")
    found.repeats, found.budget_seconds, found.max_candidates = (wanted.repeats, wanted.budget_seconds,
                                                                 wanted.max_candidates)
    return found


def explore(space: Space, strategy: str = "model", budget_seconds: float | None = None,
            max_candidates: int | None = None, store: Store | None = None, repeats: int = 3,
            rerun: bool = False, seed: int = 0, ceiling: float | None = None, progress: bool | None = None,
            problem: Problem | None = None, runner: Runner | None = None, resume: bool | int = False,
            started: float | None = None, **settings: Any) -> Exploration:
    """Search `space` with a registered strategy (polyfw.explore.strategies; `settings` are its
    own, e.g. the model strategy's top=8) until it has nothing more to propose, or the time or
    candidate budget runs out; each measured candidate goes into `store` (skipped when stored for
    this machine, unless `rerun`), and the run is a search there with the keys it visited.
    runner: how candidates run (default: RunHere(space.target); a collective target's is
    polyfw.explore.mpi.Team). resume: True continues the latest search in `store` of the same
    problem, space, strategy, settings and seed (a new one where there is none), an int the
    search of that id; the budgets count this run's visits only. started: the perf_counter time
    the time budget counts from (default: now; the CLI's start, so that its ceiling counts).
    progress: the bar (polyfw.progress's `show`: None in a terminal or a notebook only)."""
    budget = Budget(budget_seconds, max_candidates, time.perf_counter() if started is None else started)
    began = time.perf_counter()
    check_axes(space)
    chosen = find_strategy(strategy)
    settings = chosen.settings(settings)
    if resume is not False and store is None:
        raise ValueError("resuming a search needs the store that holds it")
    problem = problem or Problem.random(space.n, space.dtype, seed, space.semiring)
    runner = runner or RunHere(space.target)
    model = model_for(runner, space.dtype, store)
    machine_key, description = machine(space.dtype, runner, ceiling)
    visits = Visits(store, StoredSearch(machine_key, space.target, problem.stored_as, space.n, narrowing(space),
                                        strategy, settings, seed, repeats, budget_seconds, max_candidates),
                    resume, space)
    search = Search(space, model, seed, settings, budget.ranking_deadline())
    skipped, finished, first_proposed = 0, False, None
    left = max(chosen.visits(space, settings) - visits.visited_before, 0)
    bar = Progress(left if max_candidates is None else min(max_candidates, left), progress)
    news = visits.news()
    if news:
        bar.say(news)
    searching = time.perf_counter()
    # visits in the order proposed; up to `slots` of them running at once where the runner has several
    # (a cluster's workers), each settled in turn: its record stored, shown and fed back to the strategy
    slots, running = getattr(runner, "slots", 1), deque()

    def settle() -> None:
        candidate, record, handle, clock = running.popleft()
        if handle is not None:
            record = finish(record, handle.result(), model, description)
            budget.spent.append(time.perf_counter() - clock)
            if store is not None:
                store.put(record)
        search.records.append(record)
        visits.add(candidate.key)
        bar.update(record)

    for candidate in chosen.propose(search):
        first_proposed = time.perf_counter() if first_proposed is None else first_proposed
        if candidate.key in search.seen or visits.feed(candidate, search):
            continue
        if not budget.allows_visit():
            break
        record = None if store is None or rerun else store.get(machine_key, space.target, problem.stored_as,
                                                               space.n, candidate.key)
        handle, clock = None, time.perf_counter()
        if record is not None:
            skipped += 1
        elif not budget.allows_measuring():
            break
        else:
            record, schedule, recipe = prepare(candidate, problem, model, machine_key, description)
            if schedule is not None:
                handle = _submit(runner, schedule, recipe, candidate, problem, repeats)
            else:  # refused by the checker or the model: its time was the proof's
                budget.spent.append(time.perf_counter() - clock)
                if store is not None:
                    store.put(record)
        search.seen[candidate.key] = candidate
        budget.visited += 1
        running.append((candidate, record, handle, clock))
        while running and (running[0][2] is None or sum(entry[2] is not None for entry in running) >= slots):
            settle()
    else:
        finished = True
    while running:
        settle()
    # a strategy that proposed nothing in a space that holds candidates has not searched it
    finished = finished and (bool(search.records) or next(iter(space), None) is None)
    bar.close()
    visits.close(finished)
    return Exploration(search.records, strategy, time.perf_counter() - began, skipped, search.seen,
                       None if visits.search is None else visits.search.id, visits.resumed, finished, budget,
                       searching - budget.started, (first_proposed or time.perf_counter()) - searching)


@dataclass(frozen=True)
class _Ran:
    """What a runner without submit gave at once, as a handle."""

    outcome: Outcome

    def result(self) -> Outcome:
        return self.outcome


def _submit(runner: Runner, schedule: Schedule, recipe: Recipe, candidate: Candidate, problem: Problem,
            repeats: int):
    """The candidate started on the runner: a handle whose result() is its Outcome (a runner with
    several slots returns before it has run)."""
    submit = getattr(runner, "submit", None)
    if submit is None:
        return _Ran(runner(schedule, recipe, candidate, problem, repeats))
    return submit(schedule, recipe, candidate, problem, repeats)


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
