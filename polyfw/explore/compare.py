"""Two sets of measurements side by side: two stores, two machines in one, or two searches.

Whether a ranking found on one machine (or in one run) holds on another is what decides if a
tuning result travels: for every candidate measured on both sides, the seconds of each and their
ratio; per problem, the median ratio, Kendall's tau between the two rankings, and where each
side's best ranks on the other.
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .space import label
from .store import Record, Store

#: a problem: target, dtype (as records store it) and n
ProblemKey = tuple[str, str, int]


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a store, and the machine or the search in it to take."""

    text: str
    path: Path
    machine: str | None = None
    search: int | None = None

    @classmethod
    def parse(cls, text: str) -> Side:
        """'PATH', 'PATH#MACHINE' or 'PATH@SEARCH_ID' (a path that exists as written is taken whole)."""
        if Path(text).exists():
            return cls(text, Path(text))
        rest, at, search = text.rpartition("@")
        if not (at and search.isdigit()):
            rest, search = text, ""
        path, hash_, machine = rest.rpartition("#")
        if not hash_:
            path, machine = rest, ""
        return cls(text, Path(path), machine or None, int(search) if search else None)

    def measured(self) -> dict[tuple[ProblemKey, str], Record]:
        """(problem, key) -> record, for every measured candidate of this side."""
        with Store(self.path, read_only=True) as store:
            records = self._search_records(store) if self.search is not None else self._machine_records(store)
        return {((r.target, r.dtype, r.n), r.key): r for r in records if r.status == "measured"}

    def _search_records(self, store: Store) -> list[Record]:
        search = store.search(self.search)
        if self.machine not in (None, search.machine):
            raise ValueError(f"{self.text}: search {search.id} ran on machine {search.machine}, not {self.machine}")
        found = (store.get(search.machine, search.target, search.dtype, search.n, key)
                 for key in store.visited(search.id))
        return [record for record in found if record is not None]

    def _machine_records(self, store: Store) -> list[Record]:
        machines = store.machines()
        if self.machine is not None and self.machine not in machines:
            raise ValueError(f"{self.path} has no records of machine {self.machine}; its machines: "
                             f"{', '.join(machines) or 'none'}")
        if self.machine is None and len(machines) > 1:
            raise ValueError(f"{self.path} holds the records of {len(machines)} machines ({', '.join(machines)}): "
                             f"pick one as {self.path}#MACHINE")
        return store.records(machine=self.machine)


def compare_stores(first: str, second: str) -> str:
    """The comparison of side A (`first`) and side B (`second`), each 'PATH', 'PATH#MACHINE' or
    'PATH@SEARCH_ID', as text: per problem, every candidate measured on both, then the summary."""
    a, b = Side.parse(first), Side.parse(second)
    on_a, on_b = a.measured(), b.measured()
    common: dict[ProblemKey, list[str]] = defaultdict(list)
    for problem, key in sorted(on_a.keys() & on_b.keys()):
        common[problem].append(key)
    if not common:
        raise ValueError(f"{a.text} and {b.text} have no candidate measured on both ({len(on_a)} measured in A, "
                         f"{len(on_b)} in B)")
    lines = [f"A = {a.text}, B = {b.text}"]
    for problem, keys in common.items():
        lines += _problem_lines(problem, keys, _of(on_a, problem), _of(on_b, problem))
    return "\n".join(lines)


def _of(measured: dict[tuple[ProblemKey, str], Record], problem: ProblemKey) -> dict[str, float]:
    """key -> seconds of the measured candidates of one problem."""
    return {key: record.seconds for (where, key), record in measured.items() if where == problem}


def _problem_lines(problem: ProblemKey, keys: list[str], a: dict[str, float], b: dict[str, float]) -> list[str]:
    target, dtype, n = problem
    keys = sorted(keys, key=lambda key: a[key])
    header = f"  {'candidate':<72} {'A seconds':>10} {'B seconds':>10} {'B/A':>6}"
    rows = [f"  {label(key, target)[:72]:<72} {a[key]:>10.4f} {b[key]:>10.4f} {b[key] / a[key]:>6.2f}" for key in keys]
    ratio = statistics.median(b[key] / a[key] for key in keys)
    return [f"{target} {dtype} n={n}: {len(keys)} measured on both", header, *rows,
            f"  median B/A {ratio:.2f}; Kendall tau between the rankings {_tau(keys, a, b)}",
            f"  A's best: {_best(a, b, 'B', target)}", f"  B's best: {_best(b, a, 'A', target)}"]


def _tau(keys: list[str], a: dict[str, float], b: dict[str, float]) -> str:
    """Kendall's tau of the two sides' seconds over the common candidates, or why there is none."""
    if len(keys) < 2:
        return "n/a (one candidate in common)"
    from scipy.stats import kendalltau  # here: scipy.stats costs every CLI call 0.9 s to import

    tau, p_value = kendalltau([a[key] for key in keys], [b[key] for key in keys])
    return "n/a (every time the same on a side)" if math.isnan(tau) else f"{tau:.3f} (p = {p_value:.2g})"


def _best(mine: dict[str, float], other: dict[str, float], other_name: str, target: str) -> str:
    """A side's fastest candidate of the problem and where it ranks among the other side's."""
    best = min(mine, key=mine.get)
    if best not in other:
        where = f"not measured in {other_name}"
    else:
        rank = 1 + sum(seconds < other[best] for seconds in other.values())
        where = f"rank {rank} of {len(other)} in {other_name} ({other[best]:.4f} s)"
    return f"{label(best, target)} ({mine[best]:.4f} s): {where}"
