"""One call reads its input once: what a reader derives from a graph (its edges, a dense matrix's facts)
is kept for the rest of the call, so that the next reader asking the same gets it for a lookup.

solve asks of one input its weight summary, its vertex order, its matrix and its lightest edge, each
through the readers of polyfw.graphs.inputs; before, a scipy matrix went through `tocoo` and a networkx
graph through its Python edge loop once for each of them.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

Value = TypeVar("Value")
#: what the current call derived, by (what, id of the graph): the graph is kept with it, so its id stays its own
_READ: ContextVar[dict | None] = ContextVar("polyfw_read_once", default=None)


@contextmanager
def one_reading() -> Iterator[None]:
    """Inside, each graph is read once for each thing derived from it: a call's input does not change
    while the call runs."""
    token = _READ.set({})
    try:
        yield
    finally:
        _READ.reset(token)


def once(graph: object, what: tuple, derive: Callable[[], Value]) -> Value:
    """derive() the first time this call asks `what` of `graph`, the same value after; outside
    one_reading(), derive() every time."""
    read = _READ.get()
    if read is None:
        return derive()
    key = (what, id(graph))
    if key not in read:
        read[key] = (graph, derive())
    return read[key][1]
