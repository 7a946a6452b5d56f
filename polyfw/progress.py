"""Progress bars for the calls that take a while (explore, compare and the demo, calibrate,
solve_batch): tqdm's, a widget in Jupyter and a bar with the rate and the time left in a terminal.

`show`: True draws the bar wherever stderr goes, False never, None only in a terminal or a notebook
(not into a log file or a pipe). tqdm is imported when a bar is made, and its notebook flavour only
inside a Jupyter kernel (IPython takes a third of a second to import).
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (where a bar is a widget)."""
    if "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and "IPKernelApp" in shell.config


def bar(total: int | None, what: str, unit: str = "it", show: bool | None = None, **options: Any):
    """A tqdm bar over `total` steps (None: unknown) named `what`, counting `unit`s."""
    notebook = in_notebook()
    if show is None:
        show = notebook or sys.stderr.isatty()
    if notebook:
        from tqdm.auto import tqdm
    else:
        from tqdm import tqdm
    return tqdm(total=total, desc=what, unit=unit, disable=not show, dynamic_ncols=True, **options)


def say_above(shown, say: Callable[[str], None] = print) -> Callable[[str], None]:
    """A `say` for a task that reports its parts as lines: each line is written above the bar (not
    through it), and counts one step of it."""
    def said(line: str) -> None:
        with shown.external_write_mode():
            say(line)
        shown.update(1)

    return said
