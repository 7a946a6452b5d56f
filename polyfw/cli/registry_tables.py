"""The documentation's tables of the extension points, rendered from the registries.

Each table sits in one page of docs/ between `<!-- registry:NAME -->` and `<!-- end registry:NAME -->`;
`polyfw docs --write` renders them again and a test fails when the pages and the registries
disagree, so a registered target, family, strategy or semiring is documented by registering it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from codegen.targets import TARGETS
from schedules.families import FAMILIES
from tiling.semirings import SEMIRINGS

from ..explore.strategies import STRATEGIES


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table of text cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def _names(items: Sequence) -> str:
    return ", ".join(f"`{item}`" for item in items) or "—"


def targets_table() -> str:
    return markdown_table(("target", "what runs", "dtypes", "options", "explore searches"),
                          [(f"`{t.name}`", t.help, ", ".join(t.dtypes), _names(o.name for o in t.options),
                            _names(("tile", *t.search_axes))) for t in TARGETS.values()])


def families_table() -> str:
    return markdown_table(("family", "what it is", "parameters"),
                          [(f"`{f.name}`", f.help, _names(p.name for p in f.parameters)) for f in FAMILIES.values()])


def _no_path(ring) -> str:
    values = {dtype: ring.no_path(dtype) for dtype in ring.dtypes}
    return ", ".join(f"{dtype}: {value if isinstance(value, int) else format(value, 'g')}"
                     for dtype, value in values.items())


def semirings_table() -> str:
    return markdown_table(("semiring", "⊕, ⊗", "answers", "no path", "dtypes", "proved schedules"),
                          [(f"`{r.name}`", f"{r.plus.name}, {r.times.name}", r.meaning, _no_path(r),
                            ", ".join(r.dtypes), "yes" if r.selective else "refused (⊕ not selective)")
                           for r in SEMIRINGS.values()])


def strategies_table() -> str:
    return markdown_table(("strategy", "how it proposes candidates"),
                          [(f"`{s.name}`", s.help) for s in STRATEGIES.values()])


def registered() -> str:
    """One line per registry: what this installation can run (`polyfw info` prints it)."""
    kinds = {"targets": TARGETS, "families": FAMILIES, "semirings": SEMIRINGS, "strategies": STRATEGIES}
    return "\n".join(f"{kind}: {', '.join(registry)}" for kind, registry in kinds.items())


TABLES: dict[str, Callable[[], str]] = {"targets": targets_table, "families": families_table,
                                        "semirings": semirings_table, "strategies": strategies_table}


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- registry:{name} -->", f"<!-- end registry:{name} -->"


def render(page: str) -> str:
    """`page` with each registry table it holds rendered anew (text outside the markers kept)."""
    for name, table in TABLES.items():
        start, end = _markers(name)
        if start not in page:
            continue
        head, _, rest = page.partition(start)
        if end not in rest:
            raise ValueError(f"the page opens {start} but never closes it with {end}")
        _, _, tail = rest.partition(end)
        page = f"{head}{start}\n{table()}\n{end}{tail}"
    return page


def unplaced_tables(pages: Sequence[str]) -> list[str]:
    """The registries whose table none of `pages` holds (each must be documented somewhere)."""
    return [name for name in TABLES if not any(_markers(name)[0] in page for page in pages)]
