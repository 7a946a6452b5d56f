"""Errors every solver of the application layer raises."""
from __future__ import annotations

from scipy.sparse.csgraph import NegativeCycleError as _ScipyNegativeCycleError


class NegativeCycleError(_ScipyNegativeCycleError):
    """The graph has a cycle of negative weight, so shortest paths are undefined.

    A subclass of scipy's error, so code that catches scipy's catches it too.
    """

    def __init__(self, vertex: int):
        self.vertex = vertex
        super().__init__(f"negative cycle through vertex {vertex}: shortest paths are undefined")
