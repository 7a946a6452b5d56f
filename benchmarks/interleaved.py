"""Interleaved timing shared by the benchmarks: the shared host drifts by up to 2x within minutes,
so contenders run in rounds, one after another, on the same input."""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def random_distances(n: int, dtype: str) -> np.ndarray:
    """An n x n matrix of integer weights 1..999 (exact in every dtype), zero diagonal."""
    base = np.random.default_rng(n).integers(1, 1000, size=(n, n)).astype(dtype)
    np.fill_diagonal(base, 0)
    return base


def taking_turns(calls: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Each call's median seconds over `rounds` rounds, every call once a round."""
    seconds: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            started = time.perf_counter()
            call()
            seconds[name].append(time.perf_counter() - started)
    return {name: float(np.median(times)) for name, times in seconds.items()}


def median_seconds(runs: dict[str, tuple[Callable[[np.ndarray], object], np.ndarray]], base: np.ndarray,
                   rounds: int) -> dict[str, float]:
    """Median seconds of each run(buffer) over `rounds` rounds after a first one that warms up and
    checks every result against the first contender's (buffer[:, :n] is filled from base each time)."""
    n = base.shape[0]
    expected = None
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for round_ in range(rounds + 1):
        for name, (run, buffer) in runs.items():
            buffer[:, :n] = base
            started = time.perf_counter()
            run(buffer)
            elapsed = time.perf_counter() - started
            if round_ == 0:
                expected = buffer[:, :n].copy() if expected is None else expected
                if not np.array_equal(buffer[:, :n], expected):
                    raise SystemExit(f"{name} differs from {next(iter(runs))} at n = {n}")
            else:
                seconds[name].append(elapsed)
    return {name: float(np.median(times)) for name, times in seconds.items()}
