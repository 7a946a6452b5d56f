"""The cost model as an exploration asks it: this machine's rates, the target, and the threads each
process runs; its predicted seconds rank candidates before any is measured."""
from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from codegen.register_blocks import cached_choice
from codegen.targets import find_target
from schedules import Schedule, cost
from schedules.distribute import Grid, Network
from schedules.predict import MachineRates, predicted_seconds

from .space import Candidate, Space, build_candidate


def machine_rates(dtype: str) -> MachineRates:
    """The model's per-processor rate: the register block's measured one-thread rate where polyfw
    has measured it on this CPU, else the default."""
    choice = cached_choice(dtype)
    if choice is not None and choice.rates:
        return MachineRates(relaxations_per_second=max(choice.rates.values()))
    return MachineRates()


@dataclass(frozen=True)
class Model:
    """The cost model as an exploration asks it: this machine's rates, the target, and the threads
    each process runs (numba's on one process; each MPI process's on a collective target)."""

    rates: MachineRates = MachineRates()
    target: str = "cpu"
    threads: int = 1
    #: a collective target: the runtime's seconds per tile-layer besides the relaxations (measured
    #: by polyfw.explore.mpi)
    tile_layer_overhead: float = 0.0

    def figures(self, schedule: Schedule, candidate: Candidate, dtype: str) -> dict[str, Any]:
        """The cost report's numbers for the candidate as it runs, with its predicted seconds."""
        options = candidate.option_dict()
        itemsize = np.dtype(dtype).itemsize
        if find_target(self.target).collective:
            return self._on_a_grid(schedule, options, itemsize)
        runtime = "dataflow" if str(options.get("runtime", "barrier")).startswith("dataflow") else "barrier"
        report = cost(schedule, procs=self.threads, runtime=runtime)
        figures = _numbers(report.as_dict())
        figures["predicted_seconds"] = predicted_seconds(report, itemsize, self.rates)
        return figures

    def _on_a_grid(self, schedule: Schedule, options: dict[str, Any], itemsize: int) -> dict[str, Any]:
        """The alpha-beta replay of the distributed plan (schedules.network) on the candidate's grid."""
        read = find_target(self.target).read_options(options)
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
