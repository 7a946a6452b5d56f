"""README's tables of the extension points, rendered from the registries.

Each table sits in README.md between `<!-- registry:NAME -->` and `<!-- end registry:NAME -->`;
`polyfw docs --write` renders them again and a test fails when README and the registries
disagree, so a registered target, family, strategy or semiring is documented by registering it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from codegen.targets import TARGETS
from schedules.families import FAMILIES
from tiling.semirings import SEMIRINGS

from ..explore.strategies import STRATEGIES


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def _names(items: Sequence) -> str:
    return ", ".join(f"`{item}`" for item in items) or "—"


def targets_table() -> str:
    return _table(("target", "what runs", "dtypes", "options", "explore searches"),
                  [(f"`{t.name}`", t.help, ", ".join(t.dtypes), _names(o.name for o in t.options),
                    _names(("tile", *t.search_axes))) for t in TARGETS.values()])


def families_table() -> str:
    return _table(("family", "what it is", "parameters"),
                  [(f"`{f.name}`", f.help, _names(p.name for p in f.parameters)) for f in FAMILIES.values()])


def _no_path(ring) -> str:
    values = {dtype: ring.no_path(dtype) for dtype in ring.dtypes}
    return ", ".join(f"{dtype}: {value if isinstance(value, int) else format(value, 'g')}"
                     for dtype, value in values.items())


def semirings_table() -> str:
    return _table(("semiring", "⊕, ⊗", "answers", "no path", "dtypes", "proved schedules"),
                  [(f"`{r.name}`", f"{r.plus.name}, {r.times.name}", r.meaning, _no_path(r), ", ".join(r.dtypes),
                    "yes" if r.selective else "refused (⊕ not selective)") for r in SEMIRINGS.values()])


def strategies_table() -> str:
    return _table(("strategy", "how it proposes candidates"), [(f"`{s.name}`", s.help) for s in STRATEGIES.values()])


def registered() -> str:
    """One line per registry: what this installation can run (`polyfw info` prints it)."""
    kinds = {"targets": TARGETS, "families": FAMILIES, "semirings": SEMIRINGS, "strategies": STRATEGIES}
    return "\n".join(f"{kind}: {', '.join(registry)}" for kind, registry in kinds.items())


TABLES: dict[str, Callable[[], str]] = {"targets": targets_table, "families": families_table,
                                        "semirings": semirings_table, "strategies": strategies_table}


def render(readme: str) -> str:
    """`readme` with every registry table rendered anew (text outside the markers kept)."""
    for name, table in TABLES.items():
        start, end = f"<!-- registry:{name} -->", f"<!-- end registry:{name} -->"
        if start not in readme or end not in readme:
            raise ValueError(f"README has no {start} ... {end} block for the {name} table")
        head, _, rest = readme.partition(start)
        _, _, tail = rest.partition(end)
        readme = f"{head}{start}\n{table()}\n{end}{tail}"
    return readme
