"""What every target's builder returns: one base, so that solve, explore and the tests treat targets alike."""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from schedules.legality import Verdict


class Compiled(ABC):
    """A proved schedule as code for one target. Subclasses hold, besides what they need to run:

    name, n, target -- the schedule and where it runs;
    source -- the generated code it runs, rendered once (what a reader or a test inspects);
    proof -- the checker's verdict it was generated under (schedules.prove; 'unsafe: not
    proved' only through schedules.unsafe_run_unproved);
    last_run -- the last call's statistics; workers -- what it runs at once, as proved.
    """

    name: str
    n: int
    target: str
    source: str
    proof: Verdict
    last_run: dict

    @abstractmethod
    def __call__(self, a: np.ndarray, pred: np.ndarray | None = None, **run_options) -> int:
        """Run the nest in place on `a`; the first pivot that improves on itself (min-plus: a
        negative cycle), else -1."""

    def run(self, a: np.ndarray, pred: np.ndarray | None = None, **run_options) -> int:
        """The same as calling it: what a reader of `Compiled` looks for."""
        return self(a, pred, **run_options)
