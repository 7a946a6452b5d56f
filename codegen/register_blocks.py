"""The register block each dtype's kernels use on this CPU, chosen by measurement once per CPU.

The fastest rows x vectors shape depends on the core (load ports, vector
pipes, how its register file is renamed), not only on the ISA: on one
AVX-512 part 5 x 4 vectors won for float32 and 6 x 3 for int32, on an AVX2
part 3 x 4 and 2 x 6. So the first time a dtype's kernels are compiled on a
CPU, polyfw times its own register block (codegen.intrinsics.semiring_block)
over the shapes that fit the register file, on a 128^3 tile-layer run as
the product kernel runs it (edges included), with k unrolled 1 and 2 times for the best few, and
keeps the fastest. The choice is cached under tiling.code_cache.cache_dir(),
keyed by the CPU, next to the compiled code.

POLYFW_REGISTER_BLOCK overrides the search: 'default' (the ISA's fixed
default_register_block), a shape 'RxV' (rows x vectors) for every dtype, or
per dtype, 'float32:5x4,int32:6x3' (dtypes not named are searched).
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
from numba import njit

from tiling.code_cache import cache_dir
from tiling.semirings import semiring

from .intrinsics import semiring_block, target_isa, vector_registers, vector_width

#: rows and vectors of a register block are at most these
MAX_ROWS, MAX_VECTORS = 16, 4
#: depth of the measured tile-layer (k), and the rows and columns of C it updates (the tile size
#: the tuning table picks most)
_DEPTH, _EDGE = 128, 128


@dataclass(frozen=True)
class BlockChoice:
    """A register block for one dtype and semiring, and where it came from."""

    rows: int
    vectors: int
    unroll: int = 1
    #: 'measured' (this run), 'cached' (an earlier run on this CPU), 'override' or 'default'
    source: str = "default"
    #: relaxations/s on one thread by 'RxV' or 'RxVuU' (measured choices only)
    rates: dict[str, float] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.rows}x{self.vectors}" + (f"u{self.unroll}" if self.unroll > 1 else "")


def registers_needed(rows: int, vectors: int) -> int:
    """The block's accumulators, one row of B and the broadcast of a[i, k]."""
    return rows * vectors + vectors + 1


def fitting_shapes(isa: str | None = None) -> list[tuple[int, int]]:
    """(rows, vectors) of every register block that fits `isa`'s register file."""
    return [(rows, vectors) for vectors in range(1, MAX_VECTORS + 1) for rows in range(1, MAX_ROWS + 1)
            if registers_needed(rows, vectors) <= vector_registers(isa)]


def search_shapes(isa: str | None = None) -> list[tuple[int, int]]:
    """The fitting shapes worth timing: accumulators fill at least half of what the register file
    leaves them (smaller blocks reload B and broadcast a[i, k] for too few operations)."""
    return [(rows, vectors) for rows, vectors in fitting_shapes(isa)
            if 2 * rows * vectors >= vector_registers(isa) - vectors - 1]


def default_register_block(dtype: str) -> tuple[int, int]:
    """rows x vectors when nothing is measured: 2 vectors a row, 8 rows where 32 registers hold
    them, 4 where 16 do (8 x 2 would spill there)."""
    return (8 if vector_registers() >= 32 else 4), 2


def cpu_description() -> dict[str, object]:
    """What the choice is keyed by and `polyfw info` shows."""
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "Model")):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"model": model, "llvm_cpu": llvm.get_host_cpu_name(), "isa": target_isa(),
            "vector_bytes": vector_width(1), "vector_registers": vector_registers(), "cores": os.cpu_count()}


@cache
def cpu_key() -> str:
    """The CPU as LLVM compiles for it (name and features) and the ISA the kernels are shaped for."""
    description = cpu_description()
    features = llvm.get_host_cpu_features().flatten()
    digest = hashlib.sha256(f"{description['model']}|{features}".encode()).hexdigest()[:12]
    return f"{description['llvm_cpu']}-{description['isa']}-{digest}"


def _choices_path() -> Path:
    return cache_dir() / "register_blocks.json"


def cached_choices() -> dict[str, dict]:
    """This CPU's measured choices by 'dtype/semiring' (empty if none yet)."""
    path = _choices_path()
    if not path.exists():
        return {}
    return json.loads(path.read_text()).get(cpu_key(), {})


def cached_choice(dtype: str, ring: str = "min-plus") -> BlockChoice | None:
    """This CPU's earlier measured choice for `dtype` and `ring`, or None."""
    cached = cached_choices().get(f"{dtype}/{semiring(ring).name}")
    return None if cached is None else BlockChoice(**{**cached, "source": "cached"})


def _store(key: str, choice: BlockChoice) -> None:
    path = _choices_path()
    every = json.loads(path.read_text()) if path.exists() else {}
    every.setdefault(cpu_key(), {})[key] = asdict(choice)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(every, indent=1, sort_keys=True))
    temporary.replace(path)


def _parse_shape(text: str, where: str) -> tuple[int, int]:
    try:
        rows, vectors = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not a shape ROWSxVECTORS such as 6x3") from None
    return rows, vectors


def override(dtype: str) -> BlockChoice | None:
    """POLYFW_REGISTER_BLOCK's choice for `dtype`, or None if it leaves the dtype to the search."""
    text = os.environ.get("POLYFW_REGISTER_BLOCK", "").strip()
    if not text:
        return None
    if text == "default":
        return BlockChoice(*default_register_block(dtype), source="default")
    for part in text.split(","):
        named, _, shape = part.rpartition(":")
        if named in ("", dtype):
            return BlockChoice(*_parse_shape(shape, "POLYFW_REGISTER_BLOCK"), source="override")
    return None


def measure_block(dtype: str, ring: str, rows: int, vectors: int, unroll: int = 1):
    """A function timing one 128^3 tile-layer as relax_product runs it with this block (full
    blocks, then one-row and narrower blocks on the edges; B's strip in L1, A and C in L2);
    it returns relaxations/s."""
    ring_ = semiring(ring)
    width = vector_width(np.dtype(dtype).itemsize)
    columns = vectors * width
    full_rows, full_columns = _EDGE // rows * rows, _EDGE // columns * columns
    left = (_EDGE - full_columns) // width  # vectors right of the last full strip
    block = semiring_block(rows, vectors, ring_.plus, ring_.times, unroll)
    row_block = semiring_block(1, vectors, ring_.plus, ring_.times)
    # blocks of `left` vectors (a dummy 1 x 1 where none is needed)
    edge_block = semiring_block(rows, max(left, 1), ring_.plus, ring_.times)
    corner_block = semiring_block(1, max(left, 1), ring_.plus, ring_.times)
    start = _DEPTH

    @njit
    def sweep(a, passes):
        depth, zero = np.uint64(_DEPTH), np.uint64(0)
        for _ in range(passes):
            for j in range(start, start + full_columns, columns):
                for i in range(start, start + full_rows, rows):
                    block(a, np.uint64(i), np.uint64(j), zero, depth)
                for i in range(start + full_rows, start + _EDGE):
                    row_block(a, np.uint64(i), np.uint64(j), zero, depth)
            if left:
                j = start + full_columns
                for i in range(start, start + full_rows, rows):
                    edge_block(a, np.uint64(i), np.uint64(j), zero, depth)
                for i in range(start + full_rows, start + _EDGE):
                    corner_block(a, np.uint64(i), np.uint64(j), zero, depth)

    a = np.ones((start + _EDGE, start + max(_EDGE, columns) + 16), dtype=dtype)
    sweep(a, 1)
    work = _EDGE * _EDGE * _DEPTH

    def sample(seconds: float = 0.01) -> float:
        passes = max(1, int(seconds * 2e10 / work))
        started = time.perf_counter()
        sweep(a, passes)
        return passes * work / (time.perf_counter() - started)

    return sample


def search(dtype: str, ring: str = "min-plus", shapes: list[tuple[int, int]] | None = None,
           unrolls: tuple[int, ...] = (1, 2), rounds: int = 3, finalists: int = 3) -> BlockChoice:
    """Time every shape (k not unrolled) in `rounds` interleaved rounds, then the best `finalists`
    unrolled too; the fastest sample of each candidate judges it (the host is shared: slow samples
    are other tenants)."""
    samplers = {(r, v, 1): measure_block(dtype, ring, r, v) for r, v in (shapes or search_shapes())}
    rates = _best_of_rounds(samplers, rounds)
    leaders = sorted(rates, key=rates.get, reverse=True)[:finalists]
    more = {(r, v, u): measure_block(dtype, ring, r, v, u) for r, v, _ in leaders for u in unrolls if u > 1}
    rates |= _best_of_rounds(more | {key: samplers[key] for key in leaders}, rounds)
    rows, vectors, unroll = max(rates, key=rates.get)
    labels = {BlockChoice(r, v, u).label: rate for (r, v, u), rate in rates.items()}
    return BlockChoice(rows, vectors, unroll, "measured", labels)


def _best_of_rounds(samplers: dict, rounds: int) -> dict:
    best = {key: 0.0 for key in samplers}
    for _ in range(rounds):
        for key, sample in samplers.items():
            best[key] = max(best[key], sample())
    return best


def choose_register_block(dtype: str, ring: str = "min-plus") -> BlockChoice:
    """The override, this CPU's cached choice, or a search (whose result is cached)."""
    chosen = override(dtype)
    if chosen is not None:
        return chosen
    cached = cached_choice(dtype, ring)
    if cached is not None:
        return cached
    chosen = search(dtype, ring)
    _store(f"{dtype}/{semiring(ring).name}", chosen)
    return chosen
