"""A graph as arrays of arcs, and the error every graph reader raises."""
from __future__ import annotations

from dataclasses import dataclass

import sys
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp


def is_scipy_sparse(graph) -> bool:
    """Whether `graph` is a scipy.sparse matrix or array, without importing scipy.sparse (a fifth of
    a second) for a caller who never did: no such object exists until it is imported."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and module.issparse(graph)


class GraphInputError(ValueError):
    """The input is not a graph polyfw can solve; the message says why and what would do."""


@dataclass(frozen=True)
class Edges:
    """A graph as a vertex count and arrays of (source, target, weight), possibly with repeats."""

    n: int
    source: np.ndarray
    target: np.ndarray
    weight: np.ndarray

    def to_sparse(self) -> sp.coo_array:
        import scipy.sparse as sp

        return sp.coo_array((self.weight, (self.source, self.target)), shape=(self.n, self.n))
