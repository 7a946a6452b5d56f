"""A graph as arrays of arcs, and the error every graph reader raises."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


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
        return sp.coo_array((self.weight, (self.source, self.target)), shape=(self.n, self.n))
