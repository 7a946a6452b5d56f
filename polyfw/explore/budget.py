"""An exploration run's budgets: seconds counted from the command's start (so that preparing the
problem, the ceiling and the model's ranking count), and candidates visited in this run.

A run ends by its time budget plus at most one candidate's time: no candidate starts once the
time is up, nor when the time left is less than the recent candidates took.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

#: how many of the latest measured candidates judge what the next will take: enough to forget the
#: first one's compilation of what every candidate shares, few enough to follow a space whose
#: candidates range from fast to slow
RECENT = 3


@dataclass
class Budget:
    """What one run may still do (None: no limit) and what it has spent."""

    seconds: float | None = None
    candidates: int | None = None
    #: the perf_counter time the seconds count from
    started: float = field(default_factory=time.perf_counter)
    #: the wall seconds of each candidate measured in this run (proof, model, compilation, runs)
    spent: list[float] = field(default_factory=list)
    #: the candidates visited in this run, measured or read from the store
    visited: int = 0

    def __post_init__(self) -> None:
        if self.seconds is not None and not 0 < self.seconds < float("inf"):
            raise ValueError(f"a time budget is a positive number of seconds, got {self.seconds!r}")
        if self.candidates is not None and self.candidates < 1:
            raise ValueError(f"a candidate budget is at least 1 candidate, got {self.candidates!r}")

    @property
    def given(self) -> bool:
        return self.seconds is not None or self.candidates is not None

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def left(self) -> float:
        """Seconds left (inf without a time budget)."""
        return float("inf") if self.seconds is None else self.seconds - self.elapsed()

    def ranking_deadline(self) -> float | None:
        """When a strategy's ranking stops: a quarter of the time budget, leaving the rest to measuring."""
        return None if self.seconds is None else self.started + self.seconds / 4

    def next_candidate(self) -> float:
        """What the next candidate to measure will take, judged by the longest of the recent ones (0 before any)."""
        return max(self.spent[-RECENT:], default=0.0)

    def allows_visit(self) -> bool:
        """Whether another candidate may be visited at all: fewer than the candidate budget so far, time left."""
        return (self.candidates is None or self.visited < self.candidates) and self.left() > 0

    def allows_measuring(self) -> bool:
        """Whether the time left holds another measured candidate, as long as the recent ones took."""
        return self.left() > self.next_candidate()

    def report(self) -> str:
        """'budget used: 27.1 s of 30 s (90%), 10 of 10 candidates' (the parts given)."""
        parts = []
        if self.seconds is not None:
            elapsed = self.elapsed()
            parts.append(f"{elapsed:.1f} s of {self.seconds:g} s ({elapsed / self.seconds:.0%})")
        if self.candidates is not None:
            parts.append(f"{self.visited} of {self.candidates} candidates")
        return "budget used: " + ", ".join(parts)
