"""Files: graphs read from DIMACS shortest-path (.gr) and Matrix Market (.mtx) files into Edges,
every problem named by file and line; result matrices written as .npy or .csv."""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from tiling.semirings import INTEGER_INF, bottom, top

from .edges import Edges, GraphInputError


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


#: the files a result matrix is written to, by extension
MATRIX_FORMATS = (".npy", ".csv")


def write_matrix(path: str | os.PathLike, matrix: np.ndarray) -> None:
    """A result matrix by the file's extension: .npy as numpy saves it; .csv one row per line, every
    value exact, unreachable as inf (-inf where a semiring's unreachable is below every value)."""
    extension = Path(path).suffix.lower()
    if extension not in MATRIX_FORMATS:
        raise ValueError(f"{path}: a matrix is written to a {' or '.join(MATRIX_FORMATS)} file")
    if extension == ".npy":
        np.save(path, matrix)
        return
    if matrix.dtype.kind == "f":
        np.savetxt(path, matrix, fmt="%.9g" if matrix.dtype.itemsize <= 4 else "%.17g", delimiter=",")
        return
    text = matrix.astype(np.int64).astype(str)
    if matrix.dtype.name in INTEGER_INF:  # integer distances mark unreachable with their dtype's INF
        text[matrix >= top(matrix.dtype)] = "inf"
        text[matrix <= bottom(matrix.dtype)] = "-inf"
    np.savetxt(path, text, fmt="%s", delimiter=",")
