"""solve on a dense matrix already on the GPU: read, run and converted there, never through the host.

The host path reads a matrix's facts in one pass (polyfw.graphs.dense_facts), writes it into the
kernels' padded rows in their dtype (as_dense), runs, and converts the result (an integer INF to inf,
INF put back where a negative edge lowered it, or-and's bytes to bool). Here each of those is a small
elementwise kernel over the caller's device matrix, with the same values: only a few numbers a column
(the facts the plan and the checks read) and the negative-cycle flag come back to the host. The
caller's array is only read.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np
from numba import cuda, float64

from tiling.semirings import INTEGER_INF, MIN_PLUS, top

from . import errors
from .graphs.device_arrays import returned
from .graphs import GraphInputError, WeightSummary
from .graphs.inputs import check_float_sums, check_integer_range, check_semiring_integers, warn_zeros_as_arcs
from .plan import Asked, plan_for
from .profiling import note_run, phase

#: threads of a block of the elementwise kernels (a 2-D block: BLOCK x BLOCK)
BLOCK = 16
#: columns of _column_facts' counts: finite, fractional, zeros off the diagonal, NaN, -inf, float32 rounds
FINITE, FRACTIONAL, ZEROS, NAN, MINUS_INF, ROUNDS = range(6)


@cuda.jit
def _column_facts(matrix, null, side, counts, bounds):
    """Per column j (a thread each: neighbouring threads read neighbouring entries): its counts (above) and
    its lightest and heaviest finite entry, an entry equal to `null` read as inf (no arc). The rows are
    matrices of `side` rows one under another (a stack's): row i is row i % side of its matrix."""
    j = cuda.grid(1)
    if j >= matrix.shape[1]:
        return
    finite = fractional = zeros = nans = minus_inf = rounds = 0
    lightest, heaviest = math.inf, -math.inf
    for i in range(matrix.shape[0]):
        x = float64(matrix[i, j])
        if x == null:
            x = math.inf
        if abs(x) < math.inf:
            finite += 1
            fractional += x % 1.0 != 0.0
            rounds += float64(np.float32(x)) != x
            lightest, heaviest = min(lightest, x), max(heaviest, x)
        nans += x != x
        minus_inf += x == -math.inf
        zeros += x == 0 and i % side != j
    counts[j, FINITE], counts[j, FRACTIONAL], counts[j, ZEROS] = finite, fractional, zeros
    counts[j, NAN], counts[j, MINUS_INF], counts[j, ROUNDS] = nans, minus_inf, rounds
    bounds[j, 0], bounds[j, 1] = lightest, heaviest


@cuda.jit(device=True)
def _arc(value, null, zero_is_none, adjacency, no_path):
    """An entry of the input as the kernels read it: no_path where it is no arc (not finite, `null`, or a
    zero of an adjacency matrix), 1 for an arc of an adjacency matrix, else its weight."""
    x = float64(value)
    if x == null or not abs(x) < math.inf or (zero_is_none and x == 0):
        return no_path
    return 1.0 if adjacency else x


@cuda.jit(device=True)
def _plus(x, y, keeps_max):
    return max(x, y) if keeps_max else min(x, y)


@cuda.jit
def _filled(matrix, null, zero_is_none, adjacency, no_path, identity, keeps_max, directed, out):
    """out (the kernels' padded matrix) = the input as as_dense or as_semiring_matrix writes it: no_path for
    no arc and in the padding, both directions combined by (+) unless directed, the diagonal (+) identity."""
    i, j = cuda.grid(2)
    n = matrix.shape[0]
    if i >= out.shape[0] or j >= out.shape[1]:
        return
    value = no_path
    if i < n and j < n:
        value = _arc(matrix[i, j], null, zero_is_none, adjacency, no_path)
        if not directed:
            value = _plus(value, _arc(matrix[j, i], null, zero_is_none, adjacency, no_path), keeps_max)
        if i == j:
            value = _plus(value, identity, keeps_max)
    out[i, j] = value


@cuda.jit
def _converted(padded, leaked_from, inf, unreachable, out):
    """out = the result's n x n corner: INF where a value is at or above `leaked_from` (an INF that negative
    edges lowered, polyfw.solver._restore_unreachable), and each INF as `unreachable` (inf in float64 for a
    scipy user; INF itself otherwise), cast to out's dtype (bool for or-and)."""
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        x = padded[i, j]
        if x >= leaked_from:
            x = inf
        out[i, j] = unreachable if x >= inf else x


def _grid(rows: int, columns: int) -> tuple[tuple[int, int], tuple[int, int]]:
    return (-(-rows // BLOCK), -(-columns // BLOCK)), (BLOCK, BLOCK)


def _facts(matrix, null: float) -> tuple[np.ndarray, float, float]:
    """The counts (FINITE, ...) and the lightest and heaviest finite entry of a device matrix, or of the n x n
    matrices of a rows-stacked (B * n, n) one: one pass on the device, a column's few numbers back."""
    columns = matrix.shape[1]
    counts = cuda.device_array((columns, 6), dtype=np.int64)
    bounds = cuda.device_array((columns, 2), dtype=np.float64)
    _column_facts[max(1, -(-columns // (BLOCK * BLOCK))), BLOCK * BLOCK](matrix, null, columns, counts, bounds)
    host_bounds = bounds.copy_to_host()
    return counts.copy_to_host().sum(axis=0), float(host_bounds[:, 0].min()), float(host_bounds[:, 1].max())


def _checked(matrix, asked: Asked, null: float, null_value) -> tuple[np.ndarray, float, float]:
    """The facts of a device matrix, its entries refused (naming why) where the host path refuses them."""
    ring = asked.ring
    kinds = "biuf" if ring.name == "or-and" else "iuf"
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.dtype.kind not in kinds:
        raise GraphInputError(f"a graph on the GPU must be a square 2-D array of {'bool, ' * (kinds == 'biuf')}"
                              f"integer or float entries, got shape {matrix.shape} of dtype {matrix.dtype}")
    counts, lightest, heaviest = _facts(matrix, null)
    if counts[NAN] or (ring is MIN_PLUS and counts[MINUS_INF]):
        other = " (-inf is no arc for the other semirings only)" if ring is MIN_PLUS else ""
        raise GraphInputError(f"the dense matrix on the GPU holds {counts[NAN]} NaN and {counts[MINUS_INF]} -inf "
                              f"weight(s): not allowed{other}")
    if ring is MIN_PLUS and null_value is None and counts[ZEROS]:
        warn_zeros_as_arcs(5)  # at solve's caller
    return counts, lightest, heaviest


def _check_dtype(counts: np.ndarray, lightest: float, heaviest: float, n: int, asked: Asked, dtype: np.dtype,
                 source: np.dtype) -> None:
    """What as_dense and as_semiring_matrix check once the kernels' dtype is known."""
    if not counts[FINITE] or dtype == np.uint8:
        return
    integer = not counts[FRACTIONAL]
    if asked.ring is not MIN_PLUS:
        if dtype.kind == "i":
            check_semiring_integers(integer, lightest, heaviest, dtype)
    elif dtype.kind == "i":
        check_integer_range(integer, lightest, heaviest, n, dtype)
    else:
        check_float_sums(lightest, heaviest, n, dtype)
        if dtype == np.float32 and source != np.float32 and counts[ROUNDS]:
            warnings.warn(f"dtype float32 rounds {counts[ROUNDS]} weight(s) of the matrix on the GPU: distances are "
                          "not exact; use float64 or int32", UserWarning, stacklevel=5)


def solve_on_device(matrix, asked: Asked, directed: bool, null_value: float | None, device_result: bool, like):
    """polyfw.solve for a dense matrix on the GPU (a numba device array, polyfw.graphs.device_arrays.device_view,
    of at least one vertex) on target 'cuda' or 'cudasim': the same plan and the same values as the host
    path, copied to the host only if neither device_result nor like asks the result to stay."""
    if asked.method == "sparse":
        raise ValueError("method='sparse' reads the graph on the host; a matrix on the GPU runs method 'dense' "
                         "(or 'auto')")
    asked, ring = replace(asked, method="dense"), asked.ring
    with phase("input"):
        null = math.inf if null_value is None or ring is not MIN_PLUS else float(null_value)
        counts, lightest, heaviest = _checked(matrix, asked, null, null_value)
    n = matrix.shape[0]
    summary = None
    if asked.reads_weights:
        summary = WeightSummary(n, int(counts[FINITE]), not counts[FRACTIONAL], lightest, heaviest) \
            if counts[FINITE] else WeightSummary(n, 0, True, 0.0, 0.0)
    with phase("plan"):
        plan = plan_for(asked, n, summary, None, False)
    dtype = np.dtype(plan.dtype)
    _check_dtype(counts, lightest, heaviest, n, asked, dtype, matrix.dtype)
    compiled = plan.compiled
    with phase("input"):
        padded = cuda.device_array((compiled.padded_size, compiled.padded_size), dtype=dtype)
        _filled[_grid(*padded.shape)](matrix, null, ring.name == "or-and", ring.name == "or-and",
                                      float(ring.no_path(dtype)), float(ring.identity(dtype)),
                                      ring.plus.name == "max", directed, padded)
    with phase("run"):
        negative_at = compiled.run_on_device(padded)
    note_run(compiled.last_run)
    if negative_at >= 0:
        raise errors.NegativeCycleError(negative_at)
    with phase("output"):
        inf = top(dtype)
        lightest_edge = min(lightest, 0.0) if counts[FINITE] else 0.0
        leaked_from = inf + (n - 1) * lightest_edge if ring is MIN_PLUS and dtype.name in INTEGER_INF else inf
        out = cuda.device_array((n, n), dtype=bool if ring.name == "or-and" else np.float64 if plan.as_scipy else dtype)
        _converted[_grid(n, n)](padded, leaked_from, inf, np.inf if plan.as_scipy else inf, out)
        return returned(out, device_result, like)


def cast(array, dtype):
    """A 1-D device array in another dtype, on the device (_converted with nothing at INF to convert)."""
    out = cuda.device_array(array.shape, dtype=dtype)
    _converted[_grid(1, array.shape[0])](array.reshape((1, array.shape[0])), math.inf, math.inf, math.inf,
                                         out.reshape((1, array.shape[0])))
    return out


@cuda.jit
def _stack_arcs(stack, null, indptr, both_ways, sources, targets, weights):
    """Graph g's arcs (finite entries other than `null`, row by row, as the host's dense list gathers them)
    written from indptr[g] by thread g; both_ways: each again reversed after them (directed=False). With
    sources None they are only counted, into indptr[g + 1]."""
    g = cuda.grid(1)
    if g >= stack.shape[0]:
        return
    n, e = stack.shape[1], 0
    for i in range(n):
        for j in range(n):
            x = float64(stack[g, i, j])
            if abs(x) < math.inf and x != null:
                if weights.shape[0]:
                    first = indptr[g]
                    sources[first + e], targets[first + e], weights[first + e] = i, j, x
                    if both_ways:
                        last = (indptr[g + 1] + first) // 2
                        sources[last + e], targets[last + e], weights[last + e] = j, i, x
                e += 1
    if not weights.shape[0]:
        indptr[g + 1] = e


def stack_arcs(stack, null_value: float | None, directed: bool):
    """A (B, n, n) stack of dense matrices on the device as solve_batch's flat arrays: (indptr on the host,
    sources, targets, weights on the device in float64), and the weights' facts (counts, lightest,
    heaviest; NaN and -inf refused as the host's reading refuses them). Only B + 1 counts come back."""
    if stack.ndim != 3 or stack.shape[1] != stack.shape[2] or stack.dtype.kind not in "iuf":
        raise GraphInputError(f"a batch on the GPU is a (B, n, n) array of integer or float matrices, got shape "
                              f"{stack.shape} of dtype {stack.dtype}")
    null = math.inf if null_value is None else float(null_value)
    count, n = stack.shape[0], stack.shape[1]
    counts, lightest, heaviest = _facts(stack.reshape((count * n, n)), null)
    if counts[NAN] or counts[MINUS_INF]:
        raise GraphInputError(f"the batch's dense matrices on the GPU hold {counts[NAN]} NaN and {counts[MINUS_INF]} "
                              "-inf weight(s): not allowed")
    if null_value is None and counts[ZEROS]:
        warn_zeros_as_arcs(4)  # at solve_batch's caller, as a list of dense matrices warns
    arcs = cuda.to_device(np.zeros(count + 1, dtype=np.int64))
    nothing = cuda.device_array(0, dtype=np.float64)
    blocks = max(1, -(-count // (BLOCK * BLOCK))), BLOCK * BLOCK
    _stack_arcs[blocks](stack, null, arcs, False, nothing, nothing, nothing)
    indptr = np.cumsum(arcs.copy_to_host() * (1 if directed else 2))
    total = int(indptr[-1])
    sources, targets = cuda.device_array(total, dtype=np.int32), cuda.device_array(total, dtype=np.int32)
    weights = cuda.device_array(max(total, 1), dtype=np.float64)
    _stack_arcs[blocks](stack, null, cuda.to_device(indptr), not directed, sources, targets, weights)
    return indptr, sources, targets, weights[:total], counts, lightest, heaviest
