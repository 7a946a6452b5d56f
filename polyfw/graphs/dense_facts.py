"""A dense input matrix read in one compiled pass a call, and the copies in and out of the kernels'
padded rows made by all threads.

Before, a dense input went through seven numpy passes and a float64 copy before its kernel ran (the
off-diagonal zero check, the NaN/-inf check twice, the weight summary over a float64 copy, the
rounding check's gather, the minimum, the copy): 41 ms of a 173 ms `solve` at n = 2048 in float32
on a 2-core Xeon, whose run took 136. One parallel pass now gathers every fact those readers ask,
kept for the rest of the call (polyfw.graphs.reading), so a reader asking again costs a lookup.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from tiling.code_cache import parallel_above

from .reading import once


@dataclass(frozen=True)
class DenseFacts:
    """What the readers of a dense weight matrix ask of it."""

    #: finite entries, and those of them with a fractional part
    finite: int
    fractional: int
    #: the smallest and largest finite entry (inf and -inf when none is finite)
    lightest: float
    heaviest: float
    #: zeros off the diagonal (a scipy user's zeros mean "no arc": solve warns)
    off_diagonal_zeros: int
    #: NaN and -inf entries (refused as weights)
    not_allowed: int
    #: finite entries float32 cannot hold exactly
    float32_rounds: int


@njit(inline="always")
def _tally(value, finite, fractional, not_allowed, rounds, lightest, heaviest):
    """One weight added to the running facts (finite, fractional, NaN or -inf, float32 rounds, lightest,
    heaviest below inf); inlined into each pass. The bounds skip only +inf: NaN and -inf make the input
    refused, and `_finite_bounds` answers for them then. Testing finiteness in the bounds too kept
    the loop from vectorizing (16 ms against 6 at n = 2048 in float64)."""
    x = np.float64(value)
    ok = np.abs(x) < np.inf
    return (finite + ok, fractional + (ok & (x != np.floor(x))), not_allowed + ((x != x) | (x == -np.inf)),
            rounds + (ok & (np.float64(np.float32(x)) != x)), min(lightest, x),
            max(heaviest, x if x < np.inf else -np.inf))


def _finite_bounds(values: np.ndarray) -> tuple[float, float]:
    """The lightest and heaviest finite value (inf and -inf when none is): the passes' bounds where
    NaN or -inf entries made them meaningless (a refused input's message still quotes them)."""
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else (np.inf, -np.inf)


@parallel_above()
def _gather_rows(matrix, counts, bounds):
    """Per row i: counts[i] = (finite, fractional, zeros off the diagonal, NaN or -inf, float32 rounds),
    bounds[i] = (lightest, heaviest) finite entry. Each row sums into its own locals: reductions across
    prange's iterations made the pass twice as slow."""
    for i in prange(matrix.shape[0]):
        finite = fractional = zeros = not_allowed = rounds = 0
        lightest, heaviest = np.inf, -np.inf
        row = matrix[i]
        for j in range(row.shape[0]):
            finite, fractional, not_allowed, rounds, lightest, heaviest = _tally(
                row[j], finite, fractional, not_allowed, rounds, lightest, heaviest)
            zeros += row[j] == 0
        counts[i, 0], counts[i, 1], counts[i, 3], counts[i, 4] = finite, fractional, not_allowed, rounds
        counts[i, 2] = zeros - (i < matrix.shape[1] and matrix[i, i] == 0)
        bounds[i, 0], bounds[i, 1] = lightest, heaviest


def _gather(matrix: np.ndarray) -> DenseFacts:
    counts = np.zeros((matrix.shape[0], 5), dtype=np.int64)
    bounds = np.empty((matrix.shape[0], 2), dtype=np.float64)
    _gather_rows(matrix, counts, bounds)
    finite, fractional, zeros, not_allowed, rounds = (int(total) for total in counts.sum(axis=0))
    lightest, heaviest = (float(bounds[:, 0].min()), float(bounds[:, 1].max())) if len(bounds) else (np.inf, -np.inf)
    if not_allowed:
        lightest, heaviest = _finite_bounds(matrix)
    return DenseFacts(finite, fractional, lightest, heaviest, zeros, not_allowed, rounds)


def dense_facts(matrix: np.ndarray) -> DenseFacts:
    """The facts of a 2-D integer or float matrix (one parallel pass), or of a 1-D list of arc weights
    (one pass; no diagonal, so no zeros off it are counted); no pass when this call read it
    (polyfw.graphs.reading)."""
    if matrix.ndim == 1:
        return once(matrix, ("dense facts",), lambda: _list_facts(matrix))
    return once(matrix, ("dense facts",), lambda: _gather(matrix))


def _list_facts(values: np.ndarray) -> DenseFacts:
    facts = DenseFacts(*_gather_list(values))
    if facts.not_allowed:
        facts = dataclasses.replace(facts, **dict(zip(("lightest", "heaviest"), _finite_bounds(values))))
    return facts


@njit(cache=True)
def _gather_list(values):
    """A weight list's DenseFacts fields in one serial pass (a small call's arcs: numpy's sums over
    _gather_rows' per-row counts cost more than the pass)."""
    finite = fractional = not_allowed = rounds = 0
    lightest, heaviest = np.inf, -np.inf
    for value in values:
        finite, fractional, not_allowed, rounds, lightest, heaviest = _tally(
            value, finite, fractional, not_allowed, rounds, lightest, heaviest)
    return finite, fractional, lightest, heaviest, 0, not_allowed, rounds
