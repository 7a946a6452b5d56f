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
import numba
from numba import njit, prange

from tiling.code_cache import PARALLEL_FROM_ENTRIES, parallel_above

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
def _count(x, finite, fractional, not_allowed, rounds):
    """One weight (as float64) added to the running counts: finite, fractional, NaN or -inf, float32 rounds."""
    ok = np.abs(x) < np.inf
    return (finite + ok, fractional + (ok & (x != np.floor(x))), not_allowed + ((x != x) | (x == -np.inf)),
            rounds + (ok & (np.float64(np.float32(x)) != x)))


@njit(inline="always")
def _below_inf(x):
    """x, or -inf for +inf: the heaviest bound skips only +inf (NaN and -inf make the input refused,
    and `_finite_bounds` answers for them then)."""
    return x if x < np.inf else -np.inf


def _finite_bounds(values: np.ndarray) -> tuple[float, float]:
    """The lightest and heaviest finite value (inf and -inf when none is): the passes' bounds where
    NaN or -inf entries made them meaningless (a refused input's message still quotes them)."""
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else (np.inf, -np.inf)


@parallel_above()
def _gather_rows(matrix, counts, bounds):
    """Per row i: counts[i] = (finite, fractional, zeros off the diagonal, NaN or -inf, float32 rounds);
    per block of rows b: bounds[b] = the (lightest, heaviest) entry of each column over its rows. The
    bounds are kept per column because a running minimum over a row is a chain of dependent compares
    that LLVM does not vectorize without fast-math flags Numba does not give a select (24.6 ms for a
    2048 x 2048 float64 pass on one Xeon thread, against 6.4 per column); the counts are integer
    reductions, which vectorize. Each row sums into its own locals: reductions across prange's
    iterations made the pass twice as slow."""
    rows, width = matrix.shape
    blocks = bounds.shape[0]
    for block in prange(blocks):
        lightest, heaviest = bounds[block, 0], bounds[block, 1]
        lightest[:], heaviest[:] = np.inf, -np.inf
        for i in range(block * rows // blocks, (block + 1) * rows // blocks):
            finite = fractional = zeros = not_allowed = rounds = 0
            row = matrix[i]
            for j in range(width):
                x = np.float64(row[j])
                finite, fractional, not_allowed, rounds = _count(x, finite, fractional, not_allowed, rounds)
                zeros += x == 0
                lightest[j] = min(lightest[j], x)
                heaviest[j] = max(heaviest[j], _below_inf(x))
            counts[i, 0], counts[i, 1], counts[i, 3], counts[i, 4] = finite, fractional, not_allowed, rounds
            counts[i, 2] = zeros - (i < width and matrix[i, i] == 0)


#: blocks of rows a thread's share of the pass is cut into (each keeps a bound per column)
BLOCKS_PER_THREAD = 2


def _gather(matrix: np.ndarray) -> DenseFacts:
    rows, width = matrix.shape
    parallel = matrix.size >= PARALLEL_FROM_ENTRIES
    blocks = min(rows, BLOCKS_PER_THREAD * numba.get_num_threads()) if parallel else min(rows, 1)
    counts = np.zeros((rows, 5), dtype=np.int64)
    bounds = np.empty((blocks, 2, width), dtype=np.float64)
    _gather_rows(matrix, counts, bounds)
    finite, fractional, zeros, not_allowed, rounds = (int(total) for total in counts.sum(axis=0))
    lightest, heaviest = ((float(bounds[:, 0].min()), float(bounds[:, 1].max())) if bounds.size
                          else (np.inf, -np.inf))
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
        x = np.float64(value)
        finite, fractional, not_allowed, rounds = _count(x, finite, fractional, not_allowed, rounds)
        lightest, heaviest = min(lightest, x), max(heaviest, _below_inf(x))
    return finite, fractional, lightest, heaviest, 0, not_allowed, rounds
