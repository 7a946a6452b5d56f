"""Errors every solver of the application layer raises.

NegativeCycleError is a subclass of scipy's, so code that catches scipy's catches it too. It is
made on first use (this module's __getattr__): importing scipy.sparse.csgraph takes a fifth of a
second, which a call on a dense array never needs unless it finds a negative cycle.
"""
from __future__ import annotations


def _negative_cycle_error() -> type:
    from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError

    class NegativeCycleError(ScipyNegativeCycleError):
        """The graph has a cycle of negative weight, so shortest paths are undefined.

        A subclass of scipy's error, so code that catches scipy's catches it too.
        """

        def __init__(self, vertex: int, first: int = 0):
            """vertex: numbered from 0; `first`: the number the message gives the first vertex (1 for a
            .gr or .mtx file's numbering)."""
            self.vertex = vertex
            super().__init__(f"negative cycle through vertex {vertex + first}: shortest paths are undefined")

    NegativeCycleError.__module__, NegativeCycleError.__qualname__ = __name__, "NegativeCycleError"
    return NegativeCycleError


def __getattr__(name: str) -> type:
    if name != "NegativeCycleError":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = made = _negative_cycle_error()
    return made
