"""Schedules written directly as piecewise isl maps (the flat form).

Useful as baselines and as a second, independent spelling of the blocked
order for tests; the schedule families proper are built as schedule trees.
"""
from __future__ import annotations

from collections.abc import Sequence

from .schedule_map import ScheduleMap

_PREFIX = {True: "[n] -> ", False: ""}


def loop_order(n: int | None = None, order: str = "kij") -> ScheduleMap:
    """The plain nest with its loops permuted, all sequential ('kij' is the original order)."""
    if sorted(order) != ["i", "j", "k"]:
        raise ValueError(f"order must be a permutation of 'kij', got {order!r}")
    time = ", ".join(order)
    text = f"{_PREFIX[n is None]}{{ S[k, i, j] -> [{time}] }}"
    return ScheduleMap.from_text(text, n=n, name=f"loop-order-{order}")


#: the block kinds of one block layer kg, as conditions on block indices (ig, jg)
_STAGE_CONDITIONS = {
    "I": ["ig = kg and jg = kg"],
    "SD": ["ig = kg and jg < kg", "ig = kg and jg > kg", "jg = kg and ig < kg", "jg = kg and ig > kg"],
    "DD": ["ig < kg and jg < kg", "ig < kg and jg > kg", "ig > kg and jg < kg", "ig > kg and jg > kg"],
}


def classic_blocked(n: int, tile: int, stages: Sequence[str] = ("I", "SD", "DD")) -> ScheduleMap:
    """Classic blocked FW (κ = 1) for a concrete n and tile size r, r ∤ n allowed.

    Time: [kg, stage, ig, jg, k, i, j] — block layer, stage within it, the
    tile (parallel), then the points of the tile with k outermost. `stages`
    reorders the three stages (e.g. DD before SD, which is wrong).
    """
    if sorted(stages) != ["DD", "I", "SD"]:
        raise ValueError(f"stages must order 'I', 'SD' and 'DD', got {list(stages)}")
    if not isinstance(tile, int) or tile < 1:
        raise ValueError(f"tile must be a positive int, got {tile!r}")
    blocks = f"kg = floor(k/{tile}) and ig = floor(i/{tile}) and jg = floor(j/{tile})"
    pieces = [
        f"S[k, i, j] -> [kg, {position}, ig, jg, k, i, j] : {blocks} and {condition}"
        for position, stage in enumerate(stages)
        for condition in _STAGE_CONDITIONS[stage]
    ]
    text = "{ " + "; ".join(pieces) + " }"
    parallel = (False, False, True, True, False, False, False)
    name = "classic-map" if tuple(stages) == ("I", "SD", "DD") else "classic-map-" + "-".join(stages)
    return ScheduleMap.from_text(text, parallel, n=n, name=name)
