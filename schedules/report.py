"""A schedule as `polyfw show` prints it: its tree in isl's text form, exactly as `--tree` reads it
back, under '#' lines (comments to isl's reader) that say what it is and, for the generalized
family, what the checker finds of seed 000's orderings at this size."""
from __future__ import annotations

from .families import build
from .legality import find_violations
from .schedule import Schedule

#: seed 000's orderings of the generalized family the checker is asked about, and the options that make each
GENERALIZED_QUESTIONS = (
    ("the reverse loop run ascending (l = 0 up)", {"reverse": "ascending"}),
    ("the reverse loop and Rest(K) in one parallel stage (variant 'fused')", {"variant": "fused"}),
    ("LeadRowCol(K,l) before LeadBlock(K,l)", {"step_order": ("LeadRowCol", "LeadBlock")}),
    ("Rest(K) before the forward loop", {"part_order": ("rest", "forward", "reverse")}),
)


def generalized_findings(schedule: Schedule) -> list[str]:
    """What the checker says about seed 000's orderings, for this size."""
    n, tile, kappa = schedule.n, schedule.tile, schedule.params["kappa"]
    lines = []
    for question, options in GENERALIZED_QUESTIONS:
        broken = find_violations(build("generalized", n, tile, kappa=kappa, **options))
        lines.append(f"  {question}: " + ("legal" if not broken else f"illegal ({broken[0].dependence})"))
    return lines


def tree_listing(schedule: Schedule, level: str) -> str:
    """The tree at `level` ('tile' or 'point') on one line under its '#' header lines."""
    size = "N" if schedule.n is None else schedule.n
    header = [schedule.name,
              f"schedule tree, {level} level, in isl's text form; polyfw check, cost, emit and show read it back "
              f"with --tree FILE --n {size}"]
    if schedule.family == "generalized":
        header += ["checker findings on seed 000's orderings:", *generalized_findings(schedule)]
    return "\n".join([*(f"# {line}" for line in header), schedule.tree_file_text(level)])
