"""Schedules of the Floyd–Warshall nest: representation, legality, solving."""
from .legality import IllegalScheduleError, MalformedScheduleError, Verdict, Violation, check, find_violations
from .schedule_map import ScheduleMap
from .solve import NegativeCycleError, solve

__all__ = [
    "IllegalScheduleError",
    "MalformedScheduleError",
    "NegativeCycleError",
    "ScheduleMap",
    "Verdict",
    "Violation",
    "check",
    "find_violations",
    "solve",
]
