"""One call reads its input once: what a reader derives from a graph (its edges, a dense matrix's facts)
is kept for the rest of the call, so that the next reader asking the same gets it for a lookup.

solve asks of one input its weight summary, its vertex order, its matrix and its lightest edge, each
through the readers of polyfw.graphs.inputs; before, a scipy matrix went through `tocoo` and a networkx
graph through its Python edge loop once for each of them.
"""
from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

Value = TypeVar("Value")
#: what the current call derived, by (what, id of the graph): the graph is kept with it, so its id stays its own
_READ: ContextVar[dict | None] = ContextVar("polyfw_read_once", default=None)


class one_reading:  # noqa: N801 (a context manager read as a phrase: `with one_reading():`)
    """Inside, each graph is read once for each thing derived from it: a call's input does not change
    while the call runs. (A class: a generator-based context cost 3 us of every small call.)"""

    def __enter__(self) -> None:
        self._token = _READ.set({})

    def __exit__(self, *exception) -> None:
        _READ.reset(self._token)


def once(graph: object, what: tuple, derive: Callable[[], Value]) -> Value:
    """derive() the first time this call asks `what` of `graph`, the same value after; outside
    one_reading(), derive() every time."""
    read = _READ.get()
    if read is None:
        return derive()
    key = (what, id(graph))
    found = read.get(key)
    if found is None:
        found = read[key] = (graph, derive())
    return found[1]
