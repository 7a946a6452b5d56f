"""Graph inputs: everything `polyfw.solve` accepts, turned into one dense matrix.

Semantics (the same for every input): a[i, j] is the weight of edge i -> j,
INF where there is none, and the diagonal is min(0, self-loop). Parallel
edges keep the lightest. Negative edges are fine; negative cycles are found
by the solver. Bad input raises GraphInputError naming what is wrong.
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .semirings import Semiring

#: The dtypes the kernels are compiled for.
DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32))

#: "No edge" in int32. INF + INF = 2**31 - 2 still fits, so a kernel may add two
#: INF entries without overflow; and with |weights| bounded (see as_dense),
#: every real path stays far below it.
INT32_INF = np.int32(2**30 - 1)


class GraphInputError(ValueError):
    """The input is not a graph polyfw can solve; the message says why and what would do."""


def resolve_dtype(dtype) -> np.dtype:
    """The kernel dtype for a user's choice (None means float64, scipy's choice)."""
    chosen = np.dtype(np.float64 if dtype is None else dtype)
    if chosen not in DTYPES:
        raise GraphInputError(f"dtype {chosen} is not supported; use float32, float64 or int32")
    return chosen


def inf_of(dtype) -> float | int:
    """The 'no edge / unreachable' value of a kernel dtype."""
    dtype = resolve_dtype(dtype)
    return INT32_INF if dtype == np.int32 else dtype.type(np.inf)


@dataclass(frozen=True)
class Edges:
    """A graph as a vertex count and arrays of (source, target, weight), possibly with repeats."""

    n: int
    source: np.ndarray
    target: np.ndarray
    weight: np.ndarray

    def to_sparse(self) -> sp.coo_array:
        return sp.coo_array((self.weight, (self.source, self.target)), shape=(self.n, self.n))


# ---------------------------------------------------------------- conversion


def _check_weights(values: np.ndarray, where: str, minus_inf: bool = False) -> None:
    """Real weights; no NaN, and no -inf unless it means 'no edge' (minus_inf)."""
    if values.dtype.kind not in "iuf":
        hint = " (a bool adjacency matrix is the input of semiring 'or-and': reachability)" \
            if values.dtype.kind == "b" else ""
        raise GraphInputError(f"{where}: weights must be real numbers (an integer or float dtype), "
                              f"got dtype {values.dtype}{hint}")
    if values.dtype.kind == "f" and not (values > -np.inf).all():  # one pass: NaN and -inf both fail
        bad = np.flatnonzero(np.isnan(values) | ((values == -np.inf) & (not minus_inf)))
        if bad.size:
            raise GraphInputError(f"{where}: weight {values.flat[bad[0]]} at flat position {bad[0]} is not allowed (NaN or -inf)")


def _edges_from_dense(matrix: np.ndarray, minus_inf: bool = False) -> np.ndarray:
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise GraphInputError(f"a dense graph must be a square 2-D array, got shape {matrix.shape}")
    _check_weights(matrix, "dense matrix", minus_inf)
    return matrix


def _edges_from_networkx(graph, weight: str) -> tuple[Edges, bool]:
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


def _as_edges_or_dense(graph, weight: str, minus_inf: bool = False) -> tuple[Edges | np.ndarray, bool]:
    """Split inputs into sparse-like (edge lists) and dense; also say if the input is directed."""
    if sp.issparse(graph):
        if graph.ndim != 2 or graph.shape[0] != graph.shape[1]:
            raise GraphInputError(f"a sparse graph must be square, got shape {graph.shape}")
        coo = graph.tocoo()
        return Edges(coo.shape[0], coo.row.astype(np.int64), coo.col.astype(np.int64), np.asarray(coo.data)), True
    if isinstance(graph, Edges):
        return graph, True
    if isinstance(graph, (str, os.PathLike)):
        return read_graph(graph), True
    if type(graph).__module__.startswith("networkx"):
        return _edges_from_networkx(graph, weight)
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
    if sp.issparse(graph) or isinstance(graph, np.ndarray):
        return int(graph.shape[0])
    if type(graph).__module__.startswith("networkx"):
        return graph.number_of_nodes()
    if isinstance(graph, (list, tuple)):
        return len(graph)
    edges, _ = _as_edges_or_dense(graph, "weight")  # paths are read; what it cannot read is refused by name
    return edges.n if isinstance(edges, Edges) else int(edges.shape[0])


@dataclass(frozen=True)
class WeightSummary:
    """What choosing a dtype and a method needs to know of a graph's arcs, read in one pass."""

    n: int
    arcs: int
    integer: bool
    lightest: float
    heaviest: float

    def exact_dtype(self) -> tuple[np.dtype, str]:
        """The narrowest kernel dtype whose distances are exact here, and why."""
        spread = self.heaviest - min(self.lightest, 0.0)
        if self.integer and (self.n - 1) * spread < int(INT32_INF):
            return np.dtype(np.int32), "integer weights whose path lengths stay below 2**30 - 1"
        why = "integer weights whose path lengths may pass 2**30 - 1" if self.integer else "fractional weights"
        return np.dtype(np.float64), why


def summarize_weights(graph, weight: str = "weight", null_value: float | None = None) -> WeightSummary:
    """The vertex and arc counts and the weights' range and kind of any input of as_dense."""
    edges, _ = _as_edges_or_dense(graph, weight)
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


def _check_int32_range(matrix: np.ndarray, finite: np.ndarray) -> None:
    if not finite.any():
        return
    values = matrix[finite]
    if (values.astype(np.int64) != values).any():
        raise GraphInputError("int32 needs integer weights; use float32 or float64 for fractional ones")
    _check_int32_spread(float(values.max()) - min(float(values.min()), 0.0), matrix.shape[0])


def _check_int32_spread(spread: float, n: int) -> None:
    if (n - 1) * spread >= int(INT32_INF):
        raise GraphInputError(
            f"weights span {spread:g} over {n} vertices: (n-1)*(max-min) must stay below 2**30-1 "
            "for exact int32 distances; use float64"
        )


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
    edges, input_directed = _as_edges_or_dense(graph, weight)
    if isinstance(edges, Edges):
        _check_weights(edges.weight, "edge list")
        _check_exact_sums(edges.weight, edges.n, dtype)
        matrix = np.full((edges.n, edges.n), np.inf)
        np.minimum.at(matrix, (edges.source, edges.target), edges.weight.astype(np.float64))
    else:
        edges = null_as_inf(edges, null_value)
        _check_exact_sums(edges, edges.shape[0], dtype)
        if dtype.kind == "f" or edges.dtype.kind in "iu":
            # dense floats, or dense integers to int32 (every entry an edge): one copy, no float64
            # detour (solve's overhead; the detour cost 0.6 s at n = 4096 in int32)
            if dtype == np.int32 and edges.size:
                _check_int32_spread(float(edges.max()) - min(float(edges.min()), 0.0), edges.shape[0])
            matrix = np.empty(edges.shape, dtype) if out is None else out
            np.copyto(matrix, edges, casting="unsafe")
            return _closed_diagonal(matrix, directed and input_directed)
        matrix = edges.astype(np.float64, copy=True)
    matrix = _closed_diagonal(matrix, directed and input_directed)
    if dtype == np.int32:
        finite = np.isfinite(matrix)
        _check_int32_range(matrix, finite)
        result = np.full(matrix.shape, INT32_INF, dtype=np.int32) if out is None else out
        result[...] = INT32_INF
        result[finite] = matrix[finite].astype(np.int32)
        return result
    if out is None:
        return matrix.astype(dtype)
    np.copyto(out, matrix, casting="unsafe")
    return out


def null_as_inf(matrix: np.ndarray, null_value: float | None) -> np.ndarray:
    """A dense input with its `null_value` entries as INF (a copy where any changes); with
    null_value=None, one warning when zeros off the diagonal are read as arcs."""
    if null_value is None:
        off_diagonal_zero = (matrix == 0).sum() > (np.diagonal(matrix) == 0).sum()
        if off_diagonal_zero:
            warnings.warn("a dense matrix with zeros off the diagonal: read as arcs of weight 0; pass null_value=0 to "
                          "read them as missing arcs (scipy's csgraph convention), or null_value=np.inf to keep them "
                          "as arcs without this warning", UserWarning, stacklevel=3)
        return matrix
    if np.isinf(null_value):
        return matrix
    null = matrix == null_value
    if not null.any():
        return matrix
    return np.where(null, np.inf, matrix.astype(np.float64))


def _check_exact_sums(weights: np.ndarray, n: int, dtype: np.dtype) -> None:
    """Refuse float weights whose path sums could overflow `dtype` (they would read as
    unreachable), and warn once when `dtype` rounds a weight."""
    if dtype.kind != "f" or not weights.size:
        return
    finite = weights[np.isfinite(weights)] if weights.dtype.kind == "f" else weights
    if not finite.size:
        return
    largest = float(np.abs(finite).max())
    if largest * max(n - 1, 1) > float(np.finfo(dtype).max):
        raise GraphInputError(f"weights up to {largest:g} over {n} vertices: a path sum can overflow {dtype.name} "
                              f"(largest {float(np.finfo(dtype).max):g}) and would read as unreachable; scale the "
                              "weights" + (" or use float64" if dtype != np.float64 else ""))
    if finite.dtype != dtype:
        rounded = finite.astype(dtype).astype(np.float64) != finite.astype(np.float64)
        if rounded.any():
            example = float(finite[np.argmax(rounded)])
            warnings.warn(f"dtype {dtype.name} rounds {int(rounded.sum())} weight(s), e.g. {example!r} to "
                          f"{float(dtype.type(example))!r}: distances are not exact; use float64 or int32",
                          UserWarning, stacklevel=4)


def _closed_diagonal(matrix: np.ndarray, directed: bool) -> np.ndarray:
    """Both directions of every edge unless directed, and no positive self-loop (a vertex is 0
    from itself), in place."""
    if not directed:
        np.minimum(matrix, matrix.T, out=matrix)
    np.fill_diagonal(matrix, np.minimum(np.diagonal(matrix), 0))
    return matrix


def _semiring_input(graph, ring: Semiring, dtype: np.dtype):
    """The input with its element type checked for the semiring: or-and (computing in uint8) reads
    bool adjacency matrices, dense or sparse, as 0/1 (a copy: the caller's is only read), and
    integers or floats; the others integers or floats. Anything else is refused in one line."""
    if isinstance(graph, (list, tuple)):
        graph = np.asarray(graph)
    if not (isinstance(graph, np.ndarray) or sp.issparse(graph)):
        return graph  # networkx graphs, edge lists and files: their weights are checked as they are read
    adjacency = dtype == np.uint8
    if graph.dtype.kind not in ("biuf" if adjacency else "iuf"):
        reads = ("a bool adjacency matrix, 0/1 integers or real weights (nonzero: an edge)" if adjacency else
                 "integer or float weights" + (" (a bool adjacency matrix is the input of semiring 'or-and')"
                                               if graph.dtype.kind == "b" else ""))
        raise GraphInputError(f"semiring {ring.name} reads {reads}, not dtype {graph.dtype}")
    if graph.dtype.kind != "b":
        return graph
    if sp.issparse(graph):  # an explicit False is no edge (an explicit 0 of a weighted matrix is one)
        coo = graph.tocoo()
        edge = coo.data.astype(bool)
        return sp.coo_array((np.ones(int(edge.sum()), dtype=np.uint8), (coo.row[edge], coo.col[edge])),
                            shape=coo.shape)
    return graph.astype(np.uint8)


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
    dtype = np.dtype(dtype)
    if dtype.name not in ring.dtypes:
        raise GraphInputError(f"semiring {ring.name} computes in {', '.join(ring.dtypes)}, not {dtype.name}")
    graph = _semiring_input(graph, ring, dtype)
    plus = {"min": np.minimum, "max": np.maximum}[ring.plus]
    edges, input_directed = _as_edges_or_dense(graph, weight, minus_inf=True)
    no_path = float(ring.no_path(np.float64))
    if isinstance(edges, Edges):
        _check_weights(edges.weight, "edge list")
        matrix = np.full((edges.n, edges.n), no_path)
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
    top, bottom = int(INT32_INF), -int(INT32_INF)
    values = matrix[np.isfinite(matrix)]
    if values.size and (values.max() >= top or values.min() <= bottom or np.any(values != np.round(values))):
        raise GraphInputError(f"{dtype.name} needs integer weights strictly between {bottom} and {top}; "
                              "use float32 or float64")
    return np.where(matrix == np.inf, top, np.where(matrix == -np.inf, bottom, matrix)).astype(dtype)


def missing_edges(matrix: np.ndarray) -> np.ndarray:
    """Where a dense kernel matrix holds its dtype's INF."""
    return matrix == INT32_INF if matrix.dtype == np.int32 else ~np.isfinite(matrix)


def as_float_distances(matrix: np.ndarray) -> np.ndarray:
    """float64 copy with np.inf for every INF, whatever the kernel dtype (scipy's convention)."""
    return np.where(missing_edges(matrix), np.inf, matrix.astype(np.float64))


def dense_to_sparse(matrix: np.ndarray) -> sp.csr_array:
    """Every non-INF entry as an explicit CSR entry, zeros included (how scipy.csgraph reads edges)."""
    rows, columns = np.nonzero(~missing_edges(matrix))
    return sp.csr_array((matrix[rows, columns].astype(np.float64), (rows, columns)), shape=matrix.shape)


# ---------------------------------------------------------------- files


def _fail(path: Path, line_number: int, message: str):
    raise GraphInputError(f"{path}:{line_number}: {message}")


def _number(text: str, path: Path, line_number: int) -> float:
    try:
        value = float(text)
    except ValueError:
        _fail(path, line_number, f"weight {text!r} is not a number")
    if math.isnan(value) or math.isinf(value):
        _fail(path, line_number, f"weight {text!r} must be finite")
    return value


def _vertex(text: str, n: int, path: Path, line_number: int) -> int:
    try:
        vertex = int(text)
    except ValueError:
        _fail(path, line_number, f"vertex {text!r} is not an integer")
    if not 1 <= vertex <= n:
        _fail(path, line_number, f"vertex {vertex} is outside 1..{n}")
    return vertex - 1


def read_dimacs(path: str | os.PathLike) -> Edges:
    """A DIMACS shortest-path file: 'c' comments, one 'p sp n m', then m lines 'a u v w' (1-based)."""
    path = Path(path)
    n = m = None
    source, target, weight = [], [], []
    with open(path) as handle:
        for line_number, line in enumerate(handle, 1):
            fields = line.split()
            if not fields or fields[0] == "c":
                continue
            if fields[0] == "p":
                if n is not None:
                    _fail(path, line_number, "a second problem line 'p'")
                if len(fields) != 4 or fields[1] != "sp" or not (fields[2].isdigit() and fields[3].isdigit()):
                    _fail(path, line_number, f"expected 'p sp <vertices> <arcs>', got {line.strip()!r}")
                n, m = int(fields[2]), int(fields[3])
            elif fields[0] == "a":
                if n is None:
                    _fail(path, line_number, "arc before the problem line 'p sp n m'")
                if len(fields) != 4:
                    _fail(path, line_number, f"expected 'a <from> <to> <weight>', got {line.strip()!r}")
                source.append(_vertex(fields[1], n, path, line_number))
                target.append(_vertex(fields[2], n, path, line_number))
                weight.append(_number(fields[3], path, line_number))
            else:
                _fail(path, line_number, f"unknown line type {fields[0]!r} (expected 'c', 'p' or 'a')")
    if n is None:
        raise GraphInputError(f"{path}: no problem line 'p sp <vertices> <arcs>'")
    if len(source) != m:
        raise GraphInputError(f"{path}: the problem line announces {m} arcs but the file has {len(source)}")
    return Edges(n, np.array(source, dtype=np.int64), np.array(target, dtype=np.int64), np.array(weight))


def read_matrix_market(path: str | os.PathLike) -> Edges:
    """A Matrix Market coordinate file (real, integer or pattern; general or symmetric)."""
    path = Path(path)
    with open(path) as handle:
        lines = enumerate(handle, 1)
        _, header = next(lines, (1, ""))
        words = header.lower().split()
        if len(words) != 5 or words[0] != "%%matrixmarket" or words[1] != "matrix":
            _fail(path, 1, "expected the header '%%MatrixMarket matrix coordinate <field> <symmetry>'")
        layout, field, symmetry = words[2:]
        if layout != "coordinate":
            _fail(path, 1, f"only the 'coordinate' layout is a graph, got {layout!r}")
        if field not in ("real", "integer", "pattern"):
            _fail(path, 1, f"field {field!r} is not supported; use real, integer or pattern")
        if symmetry not in ("general", "symmetric"):
            _fail(path, 1, f"symmetry {symmetry!r} is not supported; use general or symmetric")
        size = None
        listed = 0
        source, target, weight = [], [], []
        for line_number, line in lines:
            fields = line.split()
            if not fields or fields[0].startswith("%"):
                continue
            if size is None:
                if len(fields) != 3 or not all(f.isdigit() for f in fields):
                    _fail(path, line_number, f"expected '<rows> <columns> <entries>', got {line.strip()!r}")
                rows, columns, entries = map(int, fields)
                if rows != columns:
                    _fail(path, line_number, f"an adjacency matrix must be square, got {rows} x {columns}")
                size = rows
                continue
            expected = 2 if field == "pattern" else 3
            if len(fields) != expected:
                _fail(path, line_number, f"expected {expected} fields per entry, got {line.strip()!r}")
            u, v = (_vertex(f, size, path, line_number) for f in fields[:2])
            listed += 1
            w = 1.0 if field == "pattern" else _number(fields[2], path, line_number)
            source.append(u)
            target.append(v)
            weight.append(w)
            if symmetry == "symmetric" and u != v:
                source.append(v)
                target.append(u)
                weight.append(w)
    if size is None:
        raise GraphInputError(f"{path}: no size line '<rows> <columns> <entries>'")
    if listed != entries:
        raise GraphInputError(f"{path}: the size line announces {entries} entries but the file has {listed}")
    return Edges(size, np.array(source, dtype=np.int64), np.array(target, dtype=np.int64), np.array(weight))


READERS = {".gr": read_dimacs, ".mtx": read_matrix_market}


def read_graph(path: str | os.PathLike) -> Edges:
    """Read a graph file, choosing the reader by suffix (.gr DIMACS, .mtx Matrix Market)."""
    suffix = Path(path).suffix.lower()
    if suffix not in READERS:
        raise GraphInputError(f"{path}: unknown graph file type {suffix!r}; use one of {', '.join(READERS)}")
    try:
        return READERS[suffix](path)
    except UnicodeDecodeError:
        expected = "a DIMACS shortest-path text file ('p sp n m', then 'a u v w' lines)" if suffix == ".gr" else \
            "a Matrix Market text file ('%%MatrixMarket matrix coordinate ...')"
        raise GraphInputError(f"{path}: not text; a {suffix} file must be {expected}") from None
    except OSError as error:
        raise GraphInputError(f"{path}: cannot be read ({error.strerror or error})") from None


# ---------------------------------------------------------------- generators


def random_graph(n: int, m: int | None = None, weights: tuple[int, int] = (1, 1000), seed: int = 0,
                 potential: int = 0) -> Edges:
    """A random directed graph with m distinct arcs (default 4n, as the DIMACS generator seed 001 used).

    Integer weights are uniform in `weights`. potential > 0 adds p(u) − p(v)
    with p uniform in [0, potential]: negative edges, yet every cycle keeps
    its weight, so no negative cycle appears.
    """
    if n < 1:
        raise GraphInputError(f"n must be at least 1, got {n}")
    m = 4 * n if m is None else m
    pairs = n * (n - 1)
    if not 0 <= m <= pairs:
        raise GraphInputError(f"m must be in 0..n(n-1) = {pairs} for n = {n}, got {m}")
    rng = np.random.default_rng(seed)
    chosen = rng.choice(pairs, size=m, replace=False) if m else np.zeros(0, dtype=np.int64)
    source = chosen // (n - 1) if n > 1 else chosen
    target = chosen % (n - 1) if n > 1 else chosen
    target = target + (target >= source)
    weight = rng.integers(weights[0], weights[1], size=m, endpoint=True)
    if potential:
        p = rng.integers(0, potential, size=n, endpoint=True)
        weight = weight + p[source] - p[target]
    return Edges(n, source.astype(np.int64), target.astype(np.int64), weight.astype(np.float64))


def polybench_matrix(n: int, dtype=np.int32) -> np.ndarray:
    """PolyBench/C 4.2's floyd-warshall input: the raw matrix the loop nest runs on (999 = far)."""
    i, j = np.indices((n, n))
    path = (i * j) % 7 + 1
    path[((i + j) % 13 == 0) | ((i + j) % 7 == 0) | ((i + j) % 11 == 0)] = 999
    return path.astype(dtype)


EARTH_RADIUS_M = 6_371_008.8


def minnesota_road_graph() -> Edges:
    """The Minnesota road network shipped with pygsp: 2,642 vertices, undirected.

    Each road segment weighs its great-circle length in whole metres, from
    the vertices' longitude/latitude; both directions are listed.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pygsp import graphs

        road = graphs.Minnesota()
    upper = sp.triu(road.W, k=1).tocoo()
    lon, lat = np.radians(road.coords[:, 0]), np.radians(road.coords[:, 1])
    u, v = upper.row, upper.col
    haversine = np.sin((lat[v] - lat[u]) / 2) ** 2 + np.cos(lat[u]) * np.cos(lat[v]) * np.sin((lon[v] - lon[u]) / 2) ** 2
    metres = np.round(2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(haversine)))
    source = np.concatenate([u, v]).astype(np.int64)
    target = np.concatenate([v, u]).astype(np.int64)
    return Edges(road.N, source, target, np.concatenate([metres, metres]))
