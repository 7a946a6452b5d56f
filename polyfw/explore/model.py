"""The cost model as an exploration asks it: this machine's calibration (polyfw.machine.calibrate), the
target, and the threads each process runs; its predicted seconds rank candidates before any is measured."""
from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from codegen.cpu import driver_form
from codegen.register_blocks import cached_choice
from codegen.targets import find_target
from schedules import Schedule, cost
from schedules.cost import tile_view
from schedules.distribute import Grid, Network
from schedules.predict import Calibration, Prediction
from schedules.predict import predict as predict_seconds

from ..machine import calibrations
from ..machine.calibrate import DATAFLOW_RUNTIMES, speed_probe
from .space import Candidate, Space, build_candidate

#: a product rate per thread to assume where this CPU has no measurement at all
ASSUMED_RATE = 8e9


def calibration_for(dtype: str, threads: int, store: str | Path | None = None) -> Calibration:
    """This machine's latest calibration for `dtype` on `threads` threads (a process's): from `store`,
    else from the user's store (`polyfw calibrate` writes there); else one assumed from the
    register-block search's rate."""
    found = calibrations.stored(dtype, threads, store)
    if found is not None:
        return found
    choice = cached_choice(dtype)
    rate = max(choice.rates.values()) if choice is not None and choice.rates else ASSUMED_RATE
    return Calibration.assumed(dtype, threads, rate, DATAFLOW_RUNTIMES)


@lru_cache(maxsize=8)
def _view(schedule: Schedule):
    """The schedule's tile view, kept for the candidates that run it another way (its runtimes):
    at n = 4096 in tiles of 32 one takes seconds to build."""
    return tile_view(schedule)


@dataclass(frozen=True)
class Model:
    """The cost model as an exploration asks it: this machine's calibration, the target, and the
    threads each process runs (numba's on one process; each MPI process's on a collective target)."""

    calibration: Calibration = field(default_factory=lambda: Calibration.assumed("float32", 1, ASSUMED_RATE,
                                                                                DATAFLOW_RUNTIMES))
    target: str = "cpu"
    #: a collective target: the runtime's seconds per tile-layer besides the relaxations (measured
    #: by polyfw.explore.mpi)
    tile_layer_overhead: float = 0.0

    @property
    def threads(self) -> int:
        return self.calibration.threads

    def prediction(self, schedule: Schedule, candidate: Candidate) -> Prediction:
        """The calibrated model's seconds for the candidate as it runs here, split by part."""
        options = candidate.option_dict()
        block = options.get("register_block")
        return predict_seconds(_view(schedule), self.calibration, str(options.get("runtime", "barrier")),
                               driver_form(schedule.n, schedule.tile, str(options.get("driver", "auto"))),
                               None if block is None else "x".join(map(str, block)))

    def slowdown(self) -> float:
        """How much slower this host runs now than when calibrated (the speed probe taken again; 1
        without a measured calibration, or on a collective target)."""
        if not self.calibration.probe or find_target(self.target).collective:
            return 1.0
        return speed_probe(self.calibration.dtype) / self.calibration.probe

    def figures(self, schedule: Schedule, candidate: Candidate, dtype: str) -> dict[str, Any]:
        """The cost report's numbers for the candidate as it runs, with its predicted seconds and parts."""
        if find_target(self.target).collective:
            return self._on_a_grid(schedule, candidate.option_dict(), np.dtype(dtype).itemsize)
        figures = _numbers(cost(schedule, procs=self.threads).as_dict())
        predicted = self.prediction(schedule, candidate)
        figures.update({f"predicted {part}": seconds for part, seconds in predicted.parts.items()})
        figures["predicted_seconds"] = predicted.seconds
        return figures

    def _on_a_grid(self, schedule: Schedule, options: dict[str, Any], itemsize: int) -> dict[str, Any]:
        """The alpha-beta replay of the distributed plan (schedules.network) on the candidate's grid."""
        read = find_target(self.target).read_options(options)
        grid = Grid(*read["grid"], read.get("placement", "block-cyclic"))
        network = Network(rate=self.threads * self.calibration.product_rate(schedule.tile), itemsize=itemsize, overhead=self.tile_layer_overhead)
        report = cost(schedule, procs=grid.size * self.threads, grid=grid, network=network)
        spread = report.distributed
        replay = spread["lookahead" if read.get("lookahead", True) else "in order"]
        figures = _numbers(report.as_dict())
        figures.update(messages_sent=max(spread["messages_sent"]), bytes_sent=max(spread["bytes_sent"]),
                       efficiency=replay["efficiency"], predicted_seconds=replay["makespan"])
        return figures


def _numbers(report: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in report.items() if isinstance(value, (int, float))}


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


def ranked(space: Space, candidates: Iterable[Candidate], model: Model,
           deadline: float | None = None) -> list[Candidate]:
    """`candidates` in the order of the model's seconds, fastest first (those predicted by `deadline`)."""
    predicted = predict(space, candidates, model, deadline)
    return sorted(predicted, key=predicted.get)
