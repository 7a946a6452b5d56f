"""Search strategies as plug-ins: each is one declaration that `explore`, the CLI and the documentation read.

A strategy proposes candidates: `propose(search)` yields them in the order to visit them, and as a
generator it resumes after each visit, so it sees every record (search.records) before it proposes
the next. It names the settings it takes (explore's keywords, the CLI's flags) and about how many
candidates it visits (the progress bar's length). Adding one is a module with its `propose` and a
`register(Strategy(...))` line; nothing else lists strategies.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numba

from codegen.targets import Option
from tiling.registry import Registry

from .model import Model, calibration_for, ranked
from .space import Candidate, Space
from .store import Measured, Record


@dataclass
class Search(Measured):
    """What a strategy sees while it proposes: the space, the model, the seed and its settings, and
    what has been visited so far."""

    space: Space
    model: Model
    seed: int = 0
    #: the strategy's settings, each given or at its declared default
    settings: dict[str, Any] = field(default_factory=dict)
    #: a perf_counter time by which ranking stops (part of the time budget), or None
    deadline: float | None = None
    #: every visited candidate's record, in the order visited (measured, refused or from the store)
    records: list[Record] = field(default_factory=list)
    #: key -> candidate, for every visited one
    seen: dict[str, Candidate] = field(default_factory=dict)


@dataclass(frozen=True)
class Strategy:
    """A search strategy's declaration (see the module docstring)."""

    name: str
    help: str
    #: the candidates in the order to visit them, seeing each one's record before the next
    propose: Callable[[Search], Iterator[Candidate]]
    #: the settings it takes besides the space, the model and the seed
    options: tuple[Option, ...] = ()
    #: about how many candidates it visits in a space with these settings (the progress bar's length)
    visits: Callable[[Space, dict[str, Any]], int] = lambda space, settings: len(space)

    def settings(self, given: dict[str, Any]) -> dict[str, Any]:
        """Its settings: `given` over the declared defaults; a setting it does not take is refused by name."""
        declared = {option.name: option.default for option in self.options}
        unknown = sorted(set(given) - set(declared))
        if unknown:
            raise ValueError(f"strategy {self.name!r} takes no setting {', '.join(unknown)}; its settings: "
                             f"{', '.join(declared) or 'none'}")
        return {**declared, **given}


#: every strategy explore and the CLI know: `register(Strategy(...))` adds one
STRATEGIES: Registry[Strategy] = Registry("strategy")
register, find_strategy = STRATEGIES.register, STRATEGIES.find


def order_candidates(space: Space, strategy: str, seed: int = 0, model: Model | None = None,
                     **settings: Any) -> list[Candidate]:
    """The order a strategy visits the candidates in while none is measured yet ('model': its
    ranked sample; the refinement comes once it has measured)."""
    chosen = find_strategy(strategy)
    model = model or Model(calibration_for(space.dtype, numba.get_num_threads()), space.target)
    search = Search(space, model, seed, chosen.settings(settings))
    return list(chosen.propose(search))


# ---------------------------------------------------------------- the strategies


def exhaustive(search: Search) -> Iterator[Candidate]:
    """Every candidate, in the space's order."""
    yield from search.space


def _stratified(candidates: list[Candidate], levels: list[Callable[[Candidate], Any]],
                rng: random.Random) -> Iterator[Candidate]:
    """The candidates grouped by the first level's value (groups in a random order), the groups
    taken in turn, each in this order over the remaining levels; the last level's groups shuffled."""
    if not levels:
        rng.shuffle(candidates)
        yield from candidates
        return
    groups: dict[Any, list[Candidate]] = {}
    for candidate in candidates:
        groups.setdefault(levels[0](candidate), []).append(candidate)
    order = list(groups.values())
    rng.shuffle(order)
    turns = [_stratified(group, levels[1:], rng) for group in order]
    while turns:
        going = []
        for turn in turns:
            taken = next(turn, None)
            if taken is not None:
                yield taken
                going.append(turn)
        turns = going


def stratified(space: Space, seed: int) -> list[Candidate]:
    """Every candidate in a seeded random order drawn family first, then each run option (the
    runtime), then the tile, then the other parameters: any prefix spreads over every family,
    runtime and tile the space holds, however many parameter settings one family has."""
    levels = [lambda c: c.family, *(lambda c, name=name: c.option_dict().get(name) for name in space.run_axes),
              lambda c: c.size]
    return list(_stratified(list(space), levels, random.Random(seed)))


def random_order(search: Search) -> Iterator[Candidate]:
    """Every candidate, in a seeded stratified random order (family, runtime, tile, then the rest)."""
    yield from stratified(search.space, search.seed)


def model_guided(search: Search) -> Iterator[Candidate]:
    """A seeded random sample of the space ranked by the model's seconds, measured in that order
    until `top` are measured; then the refinement around the best measured one. Under a time budget
    the ranking stops at its deadline: what it had no time to rank comes after what it ranked, in the
    stratified order, and once the refinement is done the rest of the space follows in that order,
    so that the search measures until the budget is spent."""
    everything = stratified(search.space, search.seed)
    sample = everything[:search.settings["sample"]]
    order = ranked(search.space, sample, search.model, search.deadline)
    ranked_keys = {candidate.key for candidate in order}
    order += [candidate for candidate in sample if candidate.key not in ranked_keys]
    for candidate in order:
        if len(search.measured) >= search.settings["top"]:
            break
        yield candidate
    yield from refine(search)
    if search.deadline is not None:  # a time budget: measure on until it is spent
        for candidate in everything:
            if candidate.key not in search.seen:
                yield candidate
            yield from refine(search)


def refine(search: Search) -> Iterator[Candidate]:
    """The neighbours of the best measured candidate not visited yet, in the model's order; then,
    where one of them improved on it, those of the new best, until a best has none left."""
    tried: set[str] = set()
    while (best := search.best) is not None and best.key not in tried:
        tried.add(best.key)
        fresh = [c for c in search.space.neighbours(search.seen[best.key]) if c.key not in search.seen]
        yield from ranked(search.space, fresh, search.model)


register(Strategy("exhaustive", "every candidate, in the space's order", exhaustive))
register(Strategy("random", "every candidate, in a seeded random order stratified by family, runtime and tile",
                  random_order))
register(Strategy("model", "rank a seeded sample by the cost model, measure its top, then refine around the best "
                  "measured: its neighbours in the model's order, moving to any that improves on it",
                  model_guided,
                  (Option("top", 8, "how many of the model's best to measure before refining", int),
                   Option("sample", 400, "how many candidates (a seeded random sample of the space) the model "
                          "ranks", int)),
                  visits=lambda space, settings: min(len(space), 5 * settings["top"])))
