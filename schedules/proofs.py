"""The gate every generator passes: a schedule runs only once the checker has proved it.

`prove` proves a schedule's order legal under the relaxed model for the n
and tile it was built for (schedules.check), remembers the verdict on the
object and on disk (keyed by the tree's canonical text, n, tile and the
checker's own source), so a repeated call costs a dictionary lookup, and a
new process finds the proof where the generated code is cached. A refuted
schedule raises RefusedScheduleError: one line naming the broken dependence
and a witness pair of iterations.

`unsafe_run_unproved` is the only way around the gate: it is for the tests
that show what an illegal schedule computes (and for mutation testing), and
says so in its name.
"""
from __future__ import annotations

import hashlib
import os
import weakref
from functools import cache
from pathlib import Path

import islpy as isl

from tiling import dependences, isl_utils, model
from tiling.code_cache import cache_dir

from . import emitted, layer_products, legality, packing, tree, tree_to_map
from .legality import IllegalScheduleError, Verdict, check
from .schedule import Schedule

#: verdicts by schedule object (schedules are immutable; families hand out the same object again)
_VERDICTS: weakref.WeakKeyDictionary[Schedule, Verdict] = weakref.WeakKeyDictionary()
#: verdicts by proof key, for another object with the same tree
_BY_KEY: dict[str, Verdict] = {}
#: the verdict `unsafe_run_unproved` gives
UNSAFE = "unsafe: not proved"


class RefusedScheduleError(IllegalScheduleError):
    """A generator was asked to run a schedule the checker refutes; the first line names the broken
    dependence and a witness pair of iterations."""

    def __init__(self, refuted: IllegalScheduleError):
        first, more = refuted.violations[0], len(refuted.violations) - 1
        rest = f" ({more} more dependence{'s' if more > 1 else ''} broken: schedules.check lists them)" if more else ""
        ValueError.__init__(self, f"refusing to run {refuted.schedule_name}: {first.explain()}{rest}")
        self.schedule_name, self.model, self.violations = refuted.schedule_name, refuted.model, refuted.violations


@cache
def checker_source() -> str:
    """The code a proof depends on: a changed checker or dependence model proves again."""
    modules = (emitted, tree_to_map, legality, layer_products, packing, tree, dependences, model, isl_utils)
    versions = f"islpy {isl.__version__} {isl.isl_version()}\n"
    return versions + "".join(Path(module.__file__).read_text() for module in modules)


def proof_path(key: str) -> Path:
    """Where a proof with this key is kept (beside the generated code)."""
    return cache_dir() / "proofs" / hashlib.sha256(f"{checker_source()}\n{key}".encode()).hexdigest()[:32]


def _key(schedule: Schedule) -> str:
    level = "tile" if schedule.tile_tree is not None and schedule.original_point_order else "point"
    return f"order {level}\n{schedule.tree_text(level)}\nn={schedule.n} tile={schedule.tile}"


def prove(schedule: Schedule) -> Verdict:
    """The schedule's proof under the relaxed model (remembered), or RefusedScheduleError."""
    known = _VERDICTS.get(schedule)
    if known is not None:
        return known
    if schedule.n is None:
        raise ValueError(f"{schedule.name} is parametric in n; build it for the n it runs at")
    key = _key(schedule)
    verdict = _BY_KEY.get(key)
    if verdict is None:
        path = proof_path(key)
        if path.exists() and os.environ.get("POLYFW_PROVE_ALWAYS") != "1":
            verdict = Verdict(schedule.name, "relaxed", schedule.n, dependences.RELATION_NAMES["relaxed"])
        else:
            try:
                verdict = check(schedule)
            except IllegalScheduleError as refuted:
                raise RefusedScheduleError(refuted) from None
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(f"{verdict}\n")
            temporary.replace(path)
        _BY_KEY[key] = verdict
    _VERDICTS[schedule] = verdict
    return verdict


def unsafe_run_unproved(schedule: Schedule) -> Schedule:
    """Let generators run `schedule` without a proof. Only for showing what an illegal order
    computes (tests, mutation testing): nothing else in polyfw calls it."""
    _VERDICTS[schedule] = Verdict(schedule.name, UNSAFE, schedule.n, ())
    return schedule
