"""Errors every solver of the application layer raises."""
from __future__ import annotations

from scipy.sparse.csgraph import NegativeCycleError as _ScipyNegativeCycleError


class NegativeCycleError(_ScipyNegativeCycleError):
    """The graph has a cycle of negative weight, so shortest paths are undefined.

    A subclass of scipy's error, so code that catches scipy's catches it too.
    """

    def __init__(self, vertex: int, first: int = 0):
        """vertex: numbered from 0; `first`: the number the message gives the first vertex (1 for a
        .gr or .mtx file's numbering)."""
        self.vertex = vertex
        super().__init__(f"negative cycle through vertex {vertex + first}: shortest paths are undefined")
