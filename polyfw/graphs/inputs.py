"""Graph inputs: everything `polyfw.solve` accepts, turned into one dense matrix, and the
conventions of the matrices the kernels give back.

Semantics (the same for every input): a[i, j] is the weight of edge i -> j,
INF where there is none, and the diagonal is min(0, self-loop). Parallel
edges keep the lightest. Negative edges are fine; negative cycles are found
by the solver. Bad input raises GraphInputError naming what is wrong. INF is
the dtype's top (tiling.semirings.top): inf, or INT32_INF in int32 and INT16_INF
in int16, which an integer dtype is used only where a proved bound on every
path (path_bound) stays below.
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, prange

from tiling.code_cache import parallel_above
from tiling.pages import fresh_empty, mapped_empty
from tiling.semirings import INTEGER_INF, MIN_PLUS, Semiring, bottom, top

from .dense_facts import DenseFacts, dense_facts
from .edges import Edges, GraphInputError, is_scipy_sparse
from .formats import read_graph
from .reading import once

if TYPE_CHECKING:
    import scipy.sparse as sp

#: The dtypes a graph's shortest paths are computed in (min-plus's: tiling.semirings)
SHORTEST_PATH_DTYPES = tuple(np.dtype(name) for name in MIN_PLUS.dtypes)
#: scipy's mark for "no predecessor"
NO_PREDECESSOR = -9999
#: the kernel dtypes exact for integer weights, in dtype='auto''s order (INTEGER_INF lists the
#: narrowest first), each with the bound every path must stay below: an integer type's INF (a path
#: reaching it would read as unreachable), float32's 2**24 (above it not every integer is a
#: float32); float64 is the fallback
EXACT_BELOW = {**INTEGER_INF, "float32": 2**24}


def resolve_dtype(dtype) -> np.dtype:
    """The kernel dtype for a user's choice (None means float64, scipy's choice)."""
    chosen = np.dtype(np.float64 if dtype is None else dtype)
    if chosen not in SHORTEST_PATH_DTYPES:
        names = [dtype.name for dtype in SHORTEST_PATH_DTYPES]
        raise GraphInputError(f"dtype {chosen} is not supported; use {', '.join(names[:-1])} or {names[-1]}")
    return chosen


def inf_of(dtype) -> float | int:
    """The 'no edge / unreachable' value of a kernel dtype."""
    dtype = resolve_dtype(dtype)
    return dtype.type(top(dtype))


def check_weights(values: np.ndarray, where: str, minus_inf: bool = False) -> None:
    """Real weights; no NaN, and no -inf unless it means 'no edge' (minus_inf)."""
    if values.dtype.kind not in "iuf":
        hint = " (a bool adjacency matrix is the input of semiring 'or-and': reachability)" \
            if values.dtype.kind == "b" else ""
        raise GraphInputError(f"{where}: weights must be real numbers (an integer or float dtype), "
                              f"got dtype {values.dtype}{hint}")
    # a matrix's or a weight list's facts are read once a call (dense_facts): NaN and -inf both fail
    if values.dtype.kind == "f" and dense_facts(values).not_allowed:
        bad = np.flatnonzero(np.isnan(values) | ((values == -np.inf) & (not minus_inf)))
        if bad.size:
            raise GraphInputError(f"{where}: weight {values.flat[bad[0]]} at flat position {bad[0]} is not allowed (NaN or -inf)")


def _edges_from_dense(matrix: np.ndarray, minus_inf: bool = False) -> np.ndarray:
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise GraphInputError(f"a dense graph must be a square 2-D array, got shape {matrix.shape}")
    check_weights(matrix, "dense matrix", minus_inf)
    return matrix


def sparse_edges(graph) -> Edges:
    """A scipy matrix's explicit entries as arcs, read from its own arrays (CSR and CSC rows or columns
    from their pointers, COO as it is): tocoo's checks and copies were a sixth of a small call."""
    n = graph.shape[0]
    if graph.format == "coo":
        return Edges(n, graph.row.astype(np.int64), graph.col.astype(np.int64), np.asarray(graph.data))
    if graph.format not in ("csr", "csc"):
        graph = graph.tocsr()
    lines, minor = _compressed_arcs(graph.indptr, graph.indices)
    source, target = (lines, minor) if graph.format == "csr" else (minor, lines)
    return Edges(n, source, target, np.asarray(graph.data))


@njit(cache=True)
def _compressed_arcs(indptr, indices):
    """(line, minor index) of each entry of a CSR or CSC matrix, as int64: one pass where numpy's
    repeat, diff and cast took three."""
    lines = np.empty(len(indices), dtype=np.int64)
    minor = np.empty(len(indices), dtype=np.int64)
    for line in range(len(indptr) - 1):
        for entry in range(indptr[line], indptr[line + 1]):
            lines[entry] = line
            minor[entry] = indices[entry]
    return lines, minor


def edges_from_networkx(graph, weight: str) -> tuple[Edges, bool]:
    nodes = list(graph.nodes)
    index = {node: position for position, node in enumerate(nodes)}
    source, target, values = [], [], []
    for u, v, data in graph.edges(data=True):
        w = data.get(weight, 1)
        if not isinstance(w, (int, float, np.integer, np.floating)):
            raise GraphInputError(f"networkx edge ({u!r}, {v!r}): attribute {weight!r} = {w!r} is not a number")
        source.append(index[u])
        target.append(index[v])
        values.append(w)
    edges = Edges(len(nodes), np.array(source, dtype=np.int64), np.array(target, dtype=np.int64), np.array(values, dtype=np.float64))
    return edges, graph.is_directed()


def edges_or_dense(graph, weight: str, minus_inf: bool = False) -> tuple[Edges | np.ndarray, bool]:
    """Split inputs into sparse-like (edge lists) and dense; also say if the input is directed. Read
    once a call (polyfw.graphs.reading): solve's readers all start here."""
    if type(graph) is Edges:  # (read already: solve's later readers get the arcs its first one read)
        return graph, True
    return once(graph, ("edges", weight, minus_inf), lambda: _edges_or_dense(graph, weight, minus_inf))


def _edges_or_dense(graph, weight: str, minus_inf: bool) -> tuple[Edges | np.ndarray, bool]:
    if is_scipy_sparse(graph):
        if graph.ndim != 2 or graph.shape[0] != graph.shape[1]:
            raise GraphInputError(f"a sparse graph must be square, got shape {graph.shape}")
        return sparse_edges(graph), True
    if isinstance(graph, Edges):
        return graph, True
    if isinstance(graph, (str, os.PathLike)):
        return read_graph(graph), True
    if type(graph).__module__.startswith("networkx"):
        return edges_from_networkx(graph, weight)
    if isinstance(graph, np.ma.MaskedArray):
        filled = np.where(np.ma.getmaskarray(graph), np.inf, np.ma.getdata(graph).astype(np.float64))
        return _edges_from_dense(filled, minus_inf), True
    if isinstance(graph, (np.ndarray, list, tuple)):
        return _edges_from_dense(np.asarray(graph), minus_inf), True
    raise GraphInputError(
        f"cannot read a graph from {type(graph).__name__}; give a numpy array, a scipy.sparse matrix, "
        "a networkx graph, or the path of a DIMACS .gr or Matrix Market .mtx file"
    )


def vertex_count(graph) -> int:
    """How many vertices an input has, without building its matrix (to check memory first)."""
    if isinstance(graph, Edges):
        return graph.n
    if is_scipy_sparse(graph) or isinstance(graph, np.ndarray):
        return int(graph.shape[0])
    if type(graph).__module__.startswith("networkx"):
        return graph.number_of_nodes()
    if isinstance(graph, (list, tuple)):
        return len(graph)
    edges, _ = edges_or_dense(graph, "weight")  # paths are read; what it cannot read is refused by name
    return edges.n if isinstance(edges, Edges) else int(edges.shape[0])


@dataclass(frozen=True)
class WeightSummary:
    """What choosing a dtype and a method needs to know of a graph's arcs, read in one pass."""

    n: int
    arcs: int
    integer: bool
    lightest: float
    heaviest: float

    @classmethod
    def of(cls, n: int, facts: DenseFacts) -> WeightSummary:
        """The summary of n vertices' arcs from their weights' facts (finite ones only: an arc of weight
        inf is none)."""
        if not facts.finite:
            return cls(n, 0, True, 0.0, 0.0)
        return cls(n, facts.finite, facts.fractional == 0, facts.lightest, facts.heaviest)

    def exact_dtypes(self) -> dict[str, str]:
        """Every kernel dtype whose distances are exact here, narrowest first (float64 last), by
        name, each with why."""
        bound = path_bound(self.n, self.lightest, self.heaviest)
        exact = {name: f"integer weights whose path lengths stay below {_limit_name(name)} "
                       f"((n-1)*(max-min) = {bound:g})"
                 for name, limit in EXACT_BELOW.items() if self.integer and bound < limit}
        widest = max(INTEGER_INF, key=INTEGER_INF.get)
        why = f"integer weights whose path lengths may pass {_limit_name(widest)}" if self.integer \
            else "fractional weights"
        return exact | {"float64": why}


@parallel_above()
def closed_copy(matrix, out, inf, both_ways):
    """out = the dense input `matrix` in out's dtype: INF where an entry is not finite (no arc), the lighter
    of (i, j) and (j, i) if both_ways, and a diagonal of min(0, self-loop). One pass where a copy, a cast
    and numpy's transpose and diagonal took up to four (the entries checked already: no NaN or -inf, and
    integers where out's dtype is)."""
    n = matrix.shape[0]
    for i in prange(n):
        if both_ways:
            for j in range(n):
                x = min(matrix[i, j], matrix[j, i])
                out[i, j] = x if x < np.inf else inf
        else:
            for j in range(n):
                x = matrix[i, j]
                out[i, j] = x if x < np.inf else inf
        out[i, i] = min(out[i, i], 0)


@njit(cache=True)
def scatter_arcs(source, target, weight, out, inf, both_ways):
    """out = INF, then each pair's lightest finite arc in out's dtype (an arc of weight inf is none), both
    ways if asked, and a diagonal of min(0, self-loop): one compiled pass where numpy's fill, gathers,
    minimum.at and diagonal took a dozen calls (a small call's input reading)."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = inf
    for e in range(len(source)):
        value = weight[e]  # (rounding to out's dtype is monotone: the lighter arc stays the lighter)
        if np.isfinite(value):
            s, t = source[e], target[e]
            out[s, t] = min(out[s, t], value)
            if both_ways:
                out[t, s] = min(out[t, s], value)
    for i in range(out.shape[0]):
        out[i, i] = min(out[i, i], 0)


def summarize_weights(graph, weight: str = "weight", null_value: float | None = None) -> WeightSummary:
    """The vertex and arc counts and the weights' range and kind of any input of as_dense."""
    edges, _ = edges_or_dense(graph, weight)
    if isinstance(edges, np.ndarray) and edges.dtype.kind in "iuf" and edges.ndim == 2 and \
            (null_value is None or np.isinf(null_value)):
        return WeightSummary.of(edges.shape[0], dense_facts(edges))
    if isinstance(edges, Edges) and np.asarray(edges.weight).dtype.kind in "iuf":
        return WeightSummary.of(edges.n, dense_facts(np.asarray(edges.weight)))  # (one compiled pass)
    if isinstance(edges, Edges):
        n, values = edges.n, np.asarray(edges.weight)
    else:
        n = edges.shape[0]
        values = edges if null_value is None or np.isinf(null_value) else edges[edges != null_value]
        if values.dtype.kind == "f":
            values = values[np.isfinite(values)]
        values = values.ravel()
    if values.dtype.kind == "b":
        values = values.astype(np.int8)
    if not values.size:
        return WeightSummary(n, 0, True, 0.0, 0.0)
    integer = values.dtype.kind in "iu" or bool(np.all(values == np.round(values)))
    return WeightSummary(n, int(values.size), integer, float(values.min()), float(values.max()))


def path_bound(n: int, lightest: float, heaviest: float) -> float:
    """A proved bound on how far any path's length (and any path through one missing edge, from
    INF) may move: (n-1)*(max(max, 0) - min(min, 0)); for hop counts (every weight 1), n - 1."""
    return max(n - 1, 0) * (max(heaviest, 0.0) - min(lightest, 0.0))


def _limit_name(dtype_name: str) -> str:
    return f"{dtype_name.upper()}_INF = {EXACT_BELOW[dtype_name]}" if dtype_name in INTEGER_INF \
        else f"2**24 = {EXACT_BELOW[dtype_name]} (float32's exact integers)"


def check_integer_weights(weights: np.ndarray, n: int, dtype) -> None:
    """Refuse weights an integer kernel dtype would not compute with exactly: fractional ones, and
    any whose path_bound reaches its INF (naming the narrowest type that holds them)."""
    dtype = np.dtype(dtype)
    if not weights.size:
        return
    facts = dense_facts(weights)  # (of its finite weights: an arc of weight inf is none)
    if facts.finite:
        check_integer_range(facts.fractional == 0, facts.lightest, facts.heaviest, n, dtype)


def check_integer_range(integer: bool, lightest: float, heaviest: float, n: int, dtype: np.dtype) -> None:
    if not integer:
        raise GraphInputError(f"{dtype.name} needs integer weights; use float32 or float64 for fractional ones")
    bound = path_bound(n, lightest, heaviest)
    if bound >= top(dtype):
        fits = [name for name, inf in INTEGER_INF.items() if bound < inf]
        raise GraphInputError(
            f"weights from {lightest:g} to {heaviest:g} over {n} vertices: (n-1)*(max-min) = {bound:g} must stay "
            f"below {_limit_name(dtype.name)} for exact {dtype.name} distances; use {fits[0] if fits else 'float64'} "
            "(dtype='auto' picks the narrowest exact type)")


def as_dense(graph, dtype=None, directed: bool = True, weight: str = "weight",
             out: np.ndarray | None = None, null_value: float | None = None) -> np.ndarray:
    """The dense distance-problem matrix of any supported input, in the kernel dtype.

    Dense arrays: INF (np.inf, or a masked entry) means no edge, and so do
    entries equal to `null_value` (0: scipy's csgraph convention); with
    null_value=None every other entry is an edge, 0 included, and a zero off
    the diagonal draws one warning (a scipy user's zeros mean "no arc"). A
    float dtype whose path sums could overflow is refused; one that rounds a
    weight warns. scipy.sparse: explicit entries are edges.
    networkx: edges with their `weight` attribute (1 if missing); an
    undirected networkx graph is undirected whatever `directed` says.
    directed=False makes every edge usable both ways. out: an n x n array of
    the dtype to write the matrix into (e.g. the columns of a padded buffer),
    which saves the caller a copy.
    """
    dtype = resolve_dtype(dtype)
    edges, input_directed = edges_or_dense(graph, weight)
    if isinstance(edges, Edges):
        weights = np.asarray(edges.weight)  # (an arc of weight inf is none: the checks read finite weights)
        check_weights(weights, "edge list")
        _check_exact_sums(weights, edges.n, dtype)
        if dtype.kind == "i":
            check_integer_weights(weights, edges.n, dtype)
        # straight into the kernel dtype: an n x n float64 detour cost as much as int16's whole
        # pivot and panel work at n = 4096
        matrix = fresh_empty((edges.n, edges.n), dtype) if out is None else out
        scatter_arcs(np.asarray(edges.source, dtype=np.int64), np.asarray(edges.target, dtype=np.int64),
                      np.asarray(edges.weight, dtype=np.float64), matrix, dtype.type(top(dtype)),
                      not (directed and input_directed))
        return matrix
    edges = null_as_inf(edges, null_value)
    _check_exact_sums(edges, edges.shape[0], dtype)
    if dtype.kind == "i":  # every finite weight an integer whose paths stay below the dtype's INF
        check_integer_weights(edges, edges.shape[0], dtype)
    # straight into the kernel dtype in one pass (a float64 detour cost 0.6 s at n = 4096 in int32)
    matrix = mapped_empty(edges.shape, dtype) if out is None else out
    closed_copy(edges, matrix, dtype.type(top(dtype)), not (directed and input_directed))
    return matrix


def null_as_inf(matrix: np.ndarray, null_value: float | None, stacklevel: int = 3) -> np.ndarray:
    """A dense input with its `null_value` entries as INF (a copy where any changes); with
    null_value=None, one warning when zeros off the diagonal are read as arcs (`stacklevel`: at
    the caller's caller, by default)."""
    if null_value is None:
        if (dense_facts(matrix).off_diagonal_zeros if matrix.ndim == 2 and matrix.dtype.kind in "iuf"
                else (matrix == 0).sum() > (np.diagonal(matrix) == 0).sum()):
            warn_zeros_as_arcs(stacklevel)
        return matrix
    if np.isinf(null_value):
        return matrix
    null = matrix == null_value
    if not null.any():
        return matrix
    return np.where(null, np.inf, matrix.astype(np.float64))


def warn_zeros_as_arcs(stacklevel: int) -> None:
    """The one warning a dense input with zeros off the diagonal draws when null_value=None."""
    warnings.warn("a dense matrix with zeros off the diagonal: read as arcs of weight 0; pass null_value=0 to "
                  "read them as missing arcs (scipy's csgraph convention), or null_value=np.inf to keep them "
                  "as arcs without this warning", UserWarning, stacklevel=stacklevel + 1)


def check_float_sums(lightest: float, heaviest: float, n: int, dtype: np.dtype) -> None:
    """Refuse finite float weights from `lightest` to `heaviest` whose path sums could overflow `dtype`
    (they would read as unreachable)."""
    largest = max(abs(lightest), abs(heaviest))
    if largest * max(n - 1, 1) > float(np.finfo(dtype).max):
        raise GraphInputError(f"weights up to {largest:g} over {n} vertices: a path sum can overflow {dtype.name} "
                              f"(largest {float(np.finfo(dtype).max):g}) and would read as unreachable; scale the "
                              "weights" + (" or use float64" if dtype != np.float64 else ""))


def _check_exact_sums(weights: np.ndarray, n: int, dtype: np.dtype) -> None:
    """Refuse float weights whose path sums could overflow `dtype` (check_float_sums), and warn once
    when `dtype` rounds a weight."""
    if dtype.kind != "f" or not weights.size:
        return
    facts = dense_facts(weights)  # (read once a call), and the rounded weights gathered only if any
    if not facts.finite:
        return
    rounds = dtype == np.float32 and weights.dtype != np.float32 and facts.float32_rounds
    finite = weights[np.isfinite(weights)] if rounds else weights.ravel()[:0]
    check_float_sums(facts.lightest, facts.heaviest, n, dtype)
    if finite.dtype != dtype:
        rounded = finite.astype(dtype).astype(np.float64) != finite.astype(np.float64)
        if rounded.any():
            example = float(finite[np.argmax(rounded)])
            warnings.warn(f"dtype {dtype.name} rounds {int(rounded.sum())} weight(s), e.g. {example!r} to "
                          f"{float(dtype.type(example))!r}: distances are not exact; use float64 or int32",
                          UserWarning, stacklevel=4)


def _semiring_input(graph, ring: Semiring, dtype: np.dtype):
    """The input with its element type checked for the semiring: or-and (computing in uint8) reads
    bool adjacency matrices, dense or sparse, as 0/1 (a copy: the caller's is only read), and
    integers or floats; the others integers or floats. Anything else is refused in one line."""
    if isinstance(graph, (list, tuple)):
        graph = np.asarray(graph)
    if not (isinstance(graph, np.ndarray) or is_scipy_sparse(graph)):
        return graph  # networkx graphs, edge lists and files: their weights are checked as they are read
    adjacency = dtype == np.uint8
    if graph.dtype.kind not in ("biuf" if adjacency else "iuf"):
        reads = ("a bool adjacency matrix, 0/1 integers or real weights (nonzero: an edge)" if adjacency else
                 "integer or float weights" + (" (a bool adjacency matrix is the input of semiring 'or-and')"
                                               if graph.dtype.kind == "b" else ""))
        raise GraphInputError(f"semiring {ring.name} reads {reads}, not dtype {graph.dtype}")
    if graph.dtype.kind != "b":
        return graph
    if is_scipy_sparse(graph):  # an explicit False is no edge (an explicit 0 of a weighted matrix is one)
        import scipy.sparse as sp  # (imported: graph is one of its matrices)

        coo = graph.tocoo()
        edge = coo.data.astype(bool)
        return sp.coo_array((np.ones(int(edge.sum()), dtype=np.uint8), (coo.row[edge], coo.col[edge])),
                            shape=coo.shape)
    return graph.astype(np.uint8)


def semiring_dtype(ring: Semiring, dtype) -> np.dtype:
    """`dtype` as numpy's, refused by name unless `ring` (not min-plus) computes in it."""
    dtype = np.dtype(dtype)
    if dtype.name not in ring.dtypes:
        raise GraphInputError(f"semiring {ring.name} computes in {', '.join(ring.dtypes)}, not {dtype.name}")
    return dtype


def as_semiring_matrix(graph, ring: Semiring, dtype, directed: bool = True, weight: str = "weight") -> np.ndarray:
    """The dense matrix of any supported input for a semiring other than min-plus (see as_dense).

    No edge is the semiring's 'no path' ((+)-identity); parallel edges and the two
    directions of an undirected graph are combined with (+); a vertex reaches itself
    with the (x)-identity. Dense inputs: a non-finite entry (+inf or -inf) is no
    edge, and for or-and a zero too. or-and reads a bool adjacency matrix (dense or
    sparse), 0/1 integers, or weights (every nonzero finite entry an edge), and keeps
    only whether an edge exists (1) or not (0), in uint8. An input of another dtype
    (complex, strings, objects; bool for the weighted semirings) is refused by name.
    """
    dtype = semiring_dtype(ring, dtype)
    graph = _semiring_input(graph, ring, dtype)
    plus = ring.plus.ufunc
    edges, input_directed = edges_or_dense(graph, weight, minus_inf=True)
    no_path = float(ring.no_path(np.float64))
    if isinstance(edges, Edges) and dtype == np.uint8:
        # reachability straight into bytes: a float64 n x n detour and ufunc.at took 40% of a
        # sparse or-and solve at n = 2048 (no path 0, an arc 1, a vertex to itself 1)
        check_weights(edges.weight, "edge list")
        reach = fresh_empty((edges.n, edges.n), np.uint8)
        reach.fill(0)
        reach[edges.source, edges.target] = 1
        if not (directed and input_directed):
            np.maximum(reach, reach.T, out=reach)
        np.fill_diagonal(reach, 1)
        return reach
    if isinstance(edges, Edges):
        check_weights(edges.weight, "edge list")
        matrix = fresh_empty((edges.n, edges.n), np.float64)
        matrix.fill(no_path)
        weights = np.ones(len(edges.weight)) if dtype == np.uint8 else edges.weight.astype(np.float64)
        plus.at(matrix, (edges.source, edges.target), weights)
    else:
        edge = np.isfinite(edges) & ((edges != 0) if dtype == np.uint8 else True)
        matrix = np.where(edge, 1.0 if dtype == np.uint8 else edges.astype(np.float64), no_path)
    if not (directed and input_directed):
        plus(matrix, matrix.T, out=matrix)
    np.fill_diagonal(matrix, plus(np.diagonal(matrix), float(ring.identity(np.float64))))
    if dtype.kind == "f":
        return matrix.astype(dtype)
    if dtype == np.uint8:  # edges are 1, no path -inf, a vertex to itself +inf
        return (matrix > 0).astype(np.uint8)
    highest, lowest = top(dtype), bottom(dtype)
    values = matrix[np.isfinite(matrix)]
    if values.size:
        check_semiring_integers(bool(np.all(values == np.round(values))), values.min(), values.max(), dtype)
    return np.where(matrix == np.inf, highest, np.where(matrix == -np.inf, lowest, matrix)).astype(dtype)


def check_semiring_integers(integer: bool, lightest: float, heaviest: float, dtype: np.dtype) -> None:
    """Refuse weights (the finite ones, from `lightest` to `heaviest`) that an integer dtype of a
    semiring other than min-plus cannot hold between its -INF and INF."""
    highest, lowest = top(dtype), bottom(dtype)
    if not integer or heaviest >= highest or lightest <= lowest:
        raise GraphInputError(f"{dtype.name} needs integer weights strictly between {lowest} and {highest}; "
                              "use float32 or float64")


def missing_edges(matrix: np.ndarray) -> np.ndarray:
    """Where a dense kernel matrix holds its dtype's INF."""
    return matrix == top(matrix.dtype) if matrix.dtype.name in INTEGER_INF else ~np.isfinite(matrix)


def as_float_distances(matrix: np.ndarray) -> np.ndarray:
    """float64 copy with np.inf for every INF, whatever the kernel dtype (scipy's convention)."""
    return np.where(missing_edges(matrix), np.inf, matrix.astype(np.float64))


def dense_to_sparse(matrix: np.ndarray) -> sp.csr_array:
    """Every non-INF entry as an explicit CSR entry, zeros included (how scipy.csgraph reads edges)."""
    import scipy.sparse as sp  # (here: a dense call never pays for its import)

    rows, columns = np.nonzero(~missing_edges(matrix))
    return sp.csr_array((matrix[rows, columns].astype(np.float64), (rows, columns)), shape=matrix.shape)
