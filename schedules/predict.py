"""Seconds predicted from a cost report: the model an exploration ranks candidates by.

Three terms, each read off the schedule (never a formula per family): the time on the
processors in tile-layer steps (critical path and load balance, `cost(...).time_on_procs`)
at a per-processor rate, the slow-memory traffic at a bandwidth, and a cost per stage (a
barrier on the CPU, a kernel launch on a GPU). How well it ranks real runs is measured,
not assumed: polyfw.explore reports Kendall's tau and the regret.
"""
from __future__ import annotations

from dataclasses import dataclass

from .cost import CostReport


@dataclass(frozen=True)
class MachineRates:
    """What the model needs to know of a machine; the defaults are a 2-core AVX-512 host's."""

    #: min-plus relaxations per second of one processor on an L1/L2-resident tile-layer
    relaxations_per_second: float = 8e9
    #: bytes per second between the matrix's home and the processors
    bandwidth: float = 20e9
    #: seconds a stage costs besides its work (barrier or launch)
    stage_seconds: float = 20e-6


def predicted_seconds(report: CostReport, itemsize: int, rates: MachineRates = MachineRates()) -> float:
    """The model's time for the schedule the report describes (report from cost(s, procs=threads))."""
    compute = report.time_on_procs * report.tile**3 / rates.relaxations_per_second
    memory = report.traffic * itemsize / rates.bandwidth
    return compute + memory + report.stages * rates.stage_seconds
