"""Schedules of the Floyd–Warshall nest: what a schedule is and what is known without running it."""
from .cost import CostReport, cost
from .families import FAMILIES, build, from_spec
from .legality import IllegalScheduleError, MalformedScheduleError, Verdict, Violation, check, find_violations
from .proofs import RefusedScheduleError, prove, unsafe_run_unproved
from .schedule import Schedule, from_tree
from .schedule_map import ScheduleMap
from .simulate import execute
from .stages import StageView, stage_view

__all__ = [
    "CostReport",
    "FAMILIES",
    "Schedule",
    "StageView",
    "build",
    "cost",
    "execute",
    "from_spec",
    "from_tree",
    "stage_view",
    "IllegalScheduleError",
    "MalformedScheduleError",
    "ScheduleMap",
    "Verdict",
    "Violation",
    "check",
    "find_violations",
    "prove",
    "RefusedScheduleError",
    "unsafe_run_unproved",
]
