"""Schedules of the Floyd–Warshall nest: representation, legality, solving."""
import codegen  # noqa: F401  (first: it sets Numba's CPU features before Numba compiles anything)

from .cost import CostReport, cost
from .families import FAMILIES, build, from_spec
from .legality import IllegalScheduleError, MalformedScheduleError, Verdict, Violation, check, find_violations
from .schedule import Schedule, from_tree
from .schedule_map import ScheduleMap
from .simulate import execute
from .stages import StageView, stage_view
from .scipy_api import floyd_warshall
from .solve import NegativeCycleError, solve

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
    "NegativeCycleError",
    "ScheduleMap",
    "Verdict",
    "Violation",
    "check",
    "find_violations",
    "floyd_warshall",
    "solve",
]
