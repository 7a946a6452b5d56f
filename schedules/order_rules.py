"""Which stage orders of a family are legal: proved once on a probe, applied as a rule at every size.

A family's 'order' parameters permute its stages (classic's I-SD-DD, the
generalized family's steps and parts). An order's verdict is a property of
the order once every stage it permutes holds tile-layers, so each order is
proved once, on a probe where they all do (PROBE_N = 14 in tiles of 4: four
blocks a side, the last one partial; κ = 3: a full group and a partial one),
and an exploration's space leaves the refuted ones out by that rule, counted
and never timed. The rule only prunes: a candidate that runs is still proved
at its own size. Verdicts are kept on disk under a digest of the probe trees,
so a changed family is proved again.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
from functools import cache

from tiling.code_cache import cache_dir

from .families import build, find_family
from .legality import IllegalScheduleError, check

PROBE_N, PROBE_TILE, PROBE_GROUP = 14, 4, 3

#: one assignment of a family's order parameters: ((name, order), ...)
OrderSetting = tuple[tuple[str, tuple[str, ...]], ...]


def order_settings(family: str) -> list[OrderSetting]:
    """Every assignment of the family's order parameters (one empty one for a family without any)."""
    orders = [p for p in find_family(family).parameters if p.kind == "order"]
    return [tuple(zip((p.name for p in orders), chosen))
            for chosen in itertools.product(*(itertools.permutations(p.choices) for p in orders))]


def _probe(family: str, setting: OrderSetting):
    declared = find_family(family)
    sized = {p.name: PROBE_GROUP for p in declared.parameters if p.kind == "int" and p.up_to_blocks}
    return build(family, PROBE_N, PROBE_TILE, **sized, **dict(setting))


def _legal(schedule) -> bool:
    try:
        check(schedule)
    except IllegalScheduleError:
        return False
    return True


@cache
def refuted_orders(family: str) -> frozenset[OrderSetting]:
    """The family's order settings the prover refutes on the probe (read from disk when proved before)."""
    settings = order_settings(family)
    if settings == [()]:
        return frozenset()
    probes = {setting: _probe(family, setting) for setting in settings}
    digest = hashlib.sha256("\n".join(p.tree_text() for p in probes.values()).encode()).hexdigest()[:16]
    path = cache_dir() / "order_rules.json"
    try:
        known = json.loads(path.read_text())
    except (OSError, ValueError):
        known = {}
    key = f"{family}/{digest}"
    if key not in known:
        known[key] = [[[name, list(order)] for name, order in setting]
                      for setting, probe in probes.items() if not _legal(probe)]
        written = path.with_suffix(f".{os.getpid()}.tmp")  # whole or not at all: other processes read it
        written.write_text(json.dumps(known, indent=1))
        written.replace(path)
    return frozenset(tuple((name, tuple(order)) for name, order in entry) for entry in known[key])
