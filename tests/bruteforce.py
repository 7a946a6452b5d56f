"""Independent, enumerate-everything versions of the dependence models and the legality rule.

Nothing here uses isl's dependence analysis: the exact dependences come
from simulating the sequential order, the relaxed ones from their
definition, and legality from comparing time vectors pair by pair.
"""
from __future__ import annotations

from itertools import product

from tiling.isl_utils import enumerate_points

Pair = tuple[tuple[int, int, int], tuple[int, int, int]]


def points(n: int) -> list[tuple[int, int, int]]:
    return list(product(range(n), repeat=3))


def exact_pairs(n: int) -> dict[str, set[Pair]]:
    """Value-based flow/anti/output dependences by running the nest and tracking every element."""
    flow, anti, output = set(), set(), set()
    last_writer: dict[tuple[int, int], tuple[int, int, int]] = {}
    readers: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for p in points(n):
        k, i, j = p
        for element in {(i, j), (i, k), (k, j)}:
            if element in last_writer:
                flow.add((last_writer[element], p))
            readers.setdefault(element, []).append(p)
        written = (i, j)
        if written in last_writer:
            output.add((last_writer[written], p))
        anti.update((r, p) for r in readers[written] if r != p)
        readers[written] = [p]
        last_writer[written] = p
    return {"flow": flow, "anti": anti, "output": output}


def relaxed_pairs(n: int) -> dict[str, set[Pair]]:
    r = range(n)
    return {
        "R_row": {((k0, i, k), (k, i, j)) for k, i, j in points(n) for k0 in r if k0 < k},
        "R_col": {((k0, k, j), (k, i, j)) for k, i, j in points(n) for k0 in r if k0 < k},
        "W": {((k0, i, j), (k, i, j)) for k, i, j in points(n) for k0 in r if k0 != k},
    }


EXCLUSIVE = {"W"}


def times(schedule) -> dict[tuple[int, int, int], tuple[int, ...]]:
    """Every instance's time vector, enumerated from the schedule map."""
    wrapped = enumerate_points(schedule.map.wrap())
    return {tuple(p[:3]): tuple(p[3:]) for p in wrapped}


def runs_before(ts: tuple[int, ...], tt: tuple[int, ...], parallel: tuple[bool, ...]) -> bool:
    for depth, (a, b) in enumerate(zip(ts, tt)):
        if a != b:
            return a < b and not parallel[depth]
    return False


def violated(schedule, model: str) -> set[str]:
    """Names of the relations the schedule breaks, decided pair by pair."""
    when = times(schedule)
    relations = exact_pairs(schedule.n) if model == "exact" else relaxed_pairs(schedule.n)
    broken = set()
    for name, pairs in relations.items():
        for s, t in pairs:
            ordered = runs_before(when[s], when[t], schedule.parallel)
            if name in EXCLUSIVE:
                ordered = ordered or runs_before(when[t], when[s], schedule.parallel)
            if not ordered:
                broken.add(name)
                break
    return broken


def chain_length(pred, weight, i: int, j: int) -> float:
    """The length of the path a predecessor matrix gives from i to j, walking back from j;
    weight[u, v] is the arc's weight (an array, or a dict keyed by (u, v))."""
    length, v = 0.0, j
    while v != i:
        length += weight[pred[i, v], v]
        v = pred[i, v]
    return length
