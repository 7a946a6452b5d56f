"""The register block each dtype's kernels use on this CPU, chosen by measurement once per CPU.

The fastest rows x vectors shape depends on the core (load ports, vector
pipes, how its register file is renamed), not only on the ISA: on one
AVX-512 part 5 x 4 vectors won for float32 and 6 x 3 for int32, on an AVX2
part 3 x 4 and 2 x 6. So the first time a dtype's kernels are compiled on a
CPU, polyfw times its own register block (codegen.intrinsics.semiring_block)
over the shapes that fit the register file, each passing over C by block rows and
by column strips, on a C as large as a DD layer's at n = 2048, updated by
products as the product kernel runs them on micro-panels (edges included), with k
unrolled 1 and 2 times for the best few, then the winner's prefetch distances and
the depth of its passes, and keeps the fastest. The choice is
cached under tiling.code_cache.cache_dir(), keyed by the CPU, next to the compiled code.

POLYFW_REGISTER_BLOCK overrides the search: 'default' (the ISA's fixed
default_register_block), a shape 'RxV' (rows x vectors) for every dtype, or
per dtype, 'float32:5x4,int32:6x3' (dtypes not named are searched).
"""
from __future__ import annotations

import copy
import hashlib
import json
import logging
import math
import os
import platform
import re
import time
from dataclasses import asdict, dataclass, field, replace
from functools import cache, lru_cache
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
from numba import njit

from tiling.code_cache import NARROWING_FEATURE, cache_dir, environment, file_stamp
from tiling.semirings import semiring

from .intrinsics import (host_isa, prefetch_ahead, prefetch_ahead_l2, semiring_block, target_isa, vector_registers,
                         vector_width)

#: rows and vectors of a register block are at most these
MAX_ROWS, MAX_VECTORS = 16, 4
#: (into L1, into L2): register blocks ahead whose C lines the product kernel prefetches, when
#: nothing is measured, and the pairs the search tries
PREFETCH = (1, 0)
PREFETCH_CANDIDATES = ((0, 0), (1, 0), (1, 2), (1, 4), (1, 8), (2, 8))
#: how a product on micro-panels passes over C, when nothing is measured, and the passes the search tries:
#: (block rows outer, layers a pass in multiples of strip_depth). Column strips outer keep B's strip in L1
#: but read a few lines of each row of C at a time, which no hardware prefetcher follows; block rows outer
#: read each row of C as one stream, and B's micro-panels come from L2. Which wins depends on the block
#: (AVX-512 Zen 4, a DD layer at n = 2048: int32 8 x 2 gained 10% with rows outer and passes twice as
#: deep, int16 4 x 4 lost 1% with rows outer and gained 3% with deeper passes alone)
PASS = (False, 1)
PASS_CANDIDATES = ((False, 1), (False, 2), (True, 1), (True, 2))
#: bytes of B's strip (the layers of one block_product times the register block's columns) kept under
#: half of a 32 KiB L1, so the strip stays there while the register blocks go down it, as BLIS bounds its
#: k panel: 256 layers of 16 int32 columns; float32's 32 columns at 256 layers lost 10% (Zen 3)
PRODUCT_STRIP_BYTES = 16384
#: the rows and columns of a measured tile of C (the tile the tuning table picks most at large n)
_EDGE = 256
#: what the search measures (its knobs); cached choices of another version are searched again
SEARCH_VERSION = 6
#: bytes of the C the blocks are measured on: a DD layer's C at n = 2048 in int32, beyond L2 and, on a
#: shared L3, coming from memory as a DD layer's does (where the passes differ: on 2 MB of C they tie)
_MEASURED_C_BYTES = 2**24
log = logging.getLogger("polyfw")
#: damaged cache files already reported (path, mtime and size, what was wrong)
_REPORTED: set[tuple[str, tuple[int, int] | None, str]] = set()


@dataclass(frozen=True)
class BlockChoice:
    """A register block for one dtype and semiring, and where it came from."""

    rows: int
    vectors: int
    unroll: int = 1
    #: register blocks ahead whose C lines are prefetched (into L1, into L2)
    prefetch: tuple[int, int] = PREFETCH
    #: how a product on micro-panels passes over C (PASS_CANDIDATES)
    panel_pass: tuple[bool, int] = PASS
    #: 'measured' (this run), 'cached' (an earlier run on this CPU), 'override' or 'default'
    source: str = "default"
    #: relaxations/s on one thread by label (measured choices only; label_shape reads a label's shape)
    rates: dict[str, float] = field(default_factory=dict, hash=False)

    @property
    def label(self) -> str:
        rows_outer, deeper = self.panel_pass
        return (f"{self.rows}x{self.vectors}" + (f"u{self.unroll}" if self.unroll > 1 else "")
                + (f"p{self.prefetch[0]}.{self.prefetch[1]}" if tuple(self.prefetch) != PREFETCH else "")
                + ("r" if rows_outer else "") + (f"d{deeper}" if deeper > 1 else ""))


def label_shape(label: str) -> tuple[int, int]:
    """(rows, vectors) of a BlockChoice.label (a measured choice's rates are keyed by labels)."""
    found = re.match(r"(\d+)x(\d+)", label)
    if found is None:
        raise ValueError(f"{label!r} is not a register block's label, such as 6x3 or 8x2u2p1.4rd2")
    return int(found.group(1)), int(found.group(2))


def pass_words(panel_pass: tuple[bool, int]) -> str:
    """A pass over C in words (the kernel module's docstring, `polyfw info`)."""
    rows_outer, deeper = panel_pass
    return f"{'block rows' if rows_outer else 'column strips'}, {deeper} strip{'s' if deeper > 1 else ''} deep"


#: ISAs with no broadcast from memory, whose a[i, k] is loaded into a register of its own and shuffled into
#: another (SSE2: movd, then pshufd): one register more a block (6 x 2 int32 at 16 of 16 spilled 8 in its k
#: loop under POLYFW_ISA=sse2 on AMD Zen 5, where LLVM interleaves two k steps)
BROADCAST_SCRATCH = {"sse2": 1}


def registers_needed(rows: int, vectors: int, isa: str | None = None) -> int:
    """The block's accumulators, one row of B, the broadcast of a[i, k] and the sum a[i, k] + b before its min,
    on `isa` (default: the target's); at 16 of 16, 4 x 3 vectors spilled 4 of them in its k loop under
    POLYFW_ISA=avx2 and ran int32 at n = 2048 38% slower than 6 x 2."""
    return rows * vectors + vectors + 2 + BROADCAST_SCRATCH.get(isa or target_isa(), 0)


def fitting_shapes(isa: str | None = None) -> list[tuple[int, int]]:
    """(rows, vectors) of every register block that fits `isa`'s register file."""
    return [(rows, vectors) for vectors in range(1, MAX_VECTORS + 1) for rows in range(1, MAX_ROWS + 1)
            if registers_needed(rows, vectors, isa) <= vector_registers(isa)]


def search_shapes(isa: str | None = None) -> list[tuple[int, int]]:
    """The fitting shapes worth timing: accumulators fill at least half of what the register file
    leaves them (smaller blocks reload B and broadcast a[i, k] for too few operations)."""
    return [(rows, vectors) for rows, vectors in fitting_shapes(isa)
            if 2 * rows * vectors >= vector_registers(isa) - vectors - 1]


def default_register_block(dtype: str) -> tuple[int, int]:
    """rows x vectors when nothing is measured: 2 vectors a row, 8 rows where 32 registers hold
    them, 4 where 16 do (8 x 2 would spill there)."""
    return (8 if vector_registers() >= 32 else 4), 2


#: rows of a block that keeps predecessors, at most (8 x 1 led 4 x 1, 12 x 1 and every 2-vector shape up to
#: 6 x 2 in float32, int32 and float64 by 8-20%, and tied 4 x 2 in int16: classic tile 128, n = 2048, Zen 4)
PREDECESSOR_ROWS = 8


def predecessor_register_block(dtype: str) -> tuple[int, int]:
    """rows x vectors of a block that keeps predecessors beside C (codegen.intrinsics.semiring_block's
    `predecessors`): one vector a row, each accumulator and the vector of B with an int32 vector of
    predecessors beside it (two registers for int16's lanes), as many rows as the register file holds up to
    PREDECESSOR_ROWS. Not searched per CPU, as the blocks without predecessors are."""
    per_vector = 1 + max(1, 4 // np.dtype(dtype).itemsize)
    return max(1, min(PREDECESSOR_ROWS, (vector_registers() - 1 - per_vector) // per_vector)), 1


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
    """The CPU as LLVM compiles for it (name and features) and the ISA the kernels are shaped for; under a
    narrower ISA, the features taken off too (code measured before they were is other code)."""
    description = cpu_description()
    features = llvm.get_host_cpu_features().flatten()
    if description["isa"] != host_isa():
        features += f",{NARROWING_FEATURE[description['isa']]}"
    digest = hashlib.sha256(f"{description['model']}|{features}".encode()).hexdigest()[:12]
    return f"{description['llvm_cpu']}-{description['isa']}-{digest}"


def _choices_path(create: bool = True) -> Path:
    return cache_dir(create) / "register_blocks.json"


#: the choices file as last read, by path: (its (mtime, size) stamp, its table)
_READ_CHOICES: dict[Path, tuple[tuple[int, int], dict]] = {}


def _every_choice() -> dict[str, dict]:
    """The cache file's choices by CPU (read again only when the file changes: every solve asks); a
    file written by a search that tried other knobs counts as none, and so does a damaged one
    (garbage, truncated: logged, then searched again and rewritten)."""
    path = _choices_path()
    stamp = file_stamp(path)
    if stamp is None:
        return {"search": SEARCH_VERSION}
    known = _READ_CHOICES.get(path)
    if known is None or known[0] != stamp:
        known = (stamp, _read_choices(path))
        _READ_CHOICES[path] = known
    return known[1]  # read only: _store writes a copy


def choices_stamp() -> tuple:
    """What the register block of a new kernel depends on besides its dtype and semiring: the cache
    directory holding the choices, POLYFW_REGISTER_BLOCK and the ISA the kernels are shaped for. A
    kernel chosen before may be kept while this is unchanged. The choices file itself is not stamped:
    a process writes a CPU and dtype's choice once, before the first kernel that reads it, so a kernel
    made after has it; an edit from outside is read by the next process (a stat of it was a tenth of a
    small call)."""
    return _choices_text(cache_dir(create=False)), environment("POLYFW_REGISTER_BLOCK"), target_isa()


@lru_cache(maxsize=8)
def _choices_text(cache: Path) -> str:
    """(every call plans by choices_stamp: the path joined and made text once a cache directory)"""
    return str(cache / "register_blocks.json")


def _read_choices(path: Path) -> dict[str, dict]:
    try:
        every = json.loads(path.read_text())
    except FileNotFoundError:
        every = {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        _report_damage(path, f"{type(error).__name__}: {error}")
        every = {}
    if not isinstance(every, dict) or not all(isinstance(value, dict) for key, value in every.items()
                                              if key != "search"):
        _report_damage(path, "not a table of choices by CPU")
        every = {}
    return every if every.get("search") == SEARCH_VERSION else {"search": SEARCH_VERSION}


def _report_damage(path: Path, what: str) -> None:
    stamp = file_stamp(path)
    if (str(path), stamp, what) not in _REPORTED:  # once a process for each damaged version of the file
        _REPORTED.add((str(path), stamp, what))
        log.warning("register block cache %s is damaged (%s): ignoring it; blocks are measured again and "
                    "the file rewritten", path, what)


def cached_choices() -> dict[str, dict]:
    """This CPU's measured choices by 'dtype/semiring' (empty if none yet)."""
    return _every_choice().get(cpu_key(), {})


def cached_choice(dtype: str, ring: str = "min-plus") -> BlockChoice | None:
    """This CPU's earlier measured choice for `dtype` and `ring`, or None."""
    cached = cached_choices().get(f"{dtype}/{semiring(ring).name}")
    if cached is None:
        return None
    try:
        choice = BlockChoice(**{**cached, "source": "cached", "prefetch": tuple(cached["prefetch"]),
                                "panel_pass": tuple(cached["panel_pass"])})
    except (TypeError, KeyError, ValueError) as error:  # an entry of another shape
        _report_damage(_choices_path(), f"entry {dtype}/{semiring(ring).name}: {type(error).__name__}: {error}")
        return None
    # a shape chosen when the fit rule counted a register fewer is searched again, not refused
    return choice if registers_needed(choice.rows, choice.vectors) <= vector_registers() else None


def _store(key: str, choice: BlockChoice) -> None:
    path = _choices_path()
    every = copy.deepcopy(_every_choice())
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


@lru_cache(maxsize=1)
def _measured_arrays(dtype: str, tiles: int) -> tuple[np.ndarray, np.ndarray]:
    """The C (tiles x tiles tiles) and the micro-panels every candidate of a search is timed on: one
    pair, so that no candidate gains or loses by where its memory lies (separate arrays, some on huge
    pages and some not, ranked int32 shapes 15% apart from one run to the next on Zen 4)."""
    itemsize = np.dtype(dtype).itemsize
    width = vector_width(itemsize)
    start, span = _deepest_pass(itemsize), tiles * _EDGE
    a = np.ones((start + span, start + span + MAX_VECTORS * width + 16), dtype=dtype)
    return a, np.ones(2 * tiles * _EDGE * start, dtype=dtype)


def _deepest_pass(itemsize: int) -> int:
    """The most layers a timed pass takes: the narrowest block's strip, at the deepest pass."""
    return strip_depth(vector_width(itemsize), itemsize) * max(deeper for _, deeper in PASS_CANDIDATES)


def _measured_tiles(itemsize: int) -> int:
    """Tiles a side of a C of at least _MEASURED_C_BYTES."""
    return math.ceil(math.sqrt(_MEASURED_C_BYTES / (_EDGE * _EDGE * itemsize)))


def strip_depth(columns: int, itemsize: int) -> int:
    """Layers of one product pass over C: B's strip within PRODUCT_STRIP_BYTES, at least 64."""
    return max(64, PRODUCT_STRIP_BYTES // (columns * itemsize))


def measure_block(dtype: str, ring: str, rows: int, vectors: int, unroll: int = 1,
                  prefetch: tuple[int, int] = PREFETCH, panel_pass: tuple[bool, int] = PASS):
    """A function timing register blocks as the product kernel runs them on packed operands (the
    fastest configurations' products: schedules.packing), returning relaxations/s.

    C is tiles of 256 x 256, _MEASURED_C_BYTES of them as a DD layer's C is at
    n = 2048 (on an L2-resident tile most shapes tie, and some that tie there
    lose a quarter beyond it), each tile updated by one product as deep as the
    kernel's passes (strip_depth, times the pass's depth): full
    blocks down column strips reading A's rows and B's columns from
    micro-panels, C prefetched as `prefetch` says (or, as `panel_pass` may
    say, along block rows, unprefetched), then the rows left below
    them as one block and the vectors right of them in place. (Timed in place
    instead, int32 shapes whose rows divide no tile ranked first on AVX-512
    Zen 4 and ran its tile-layers of 256 a tenth slower than 16 x 1.)
    """
    ring_ = semiring(ring)
    width = vector_width(np.dtype(dtype).itemsize)
    columns = vectors * width
    tiles = _measured_tiles(np.dtype(dtype).itemsize)
    full_rows, full_columns = _EDGE // rows * rows, _EDGE // columns * columns
    below, left = _EDGE - full_rows, (_EDGE - full_columns) // width  # rows under, vectors right of full blocks
    block = semiring_block(rows, vectors, ring_.plus.name, ring_.times.name, unroll, panels=True)
    # (dummy 1 x 1 blocks where no edge is needed)
    below_block = semiring_block(max(below, 1), vectors, ring_.plus.name, ring_.times.name)
    edge_block = semiring_block(rows, max(left, 1), ring_.plus.name, ring_.times.name)
    corner_block = semiring_block(max(below, 1), max(left, 1), ring_.plus.name, ring_.times.name)
    rows_outer, deeper = panel_pass
    layers = deeper * strip_depth(columns, np.dtype(dtype).itemsize)
    start, line = layers, 64 // np.dtype(dtype).itemsize
    near, far = prefetch
    panel = _EDGE * layers  # one tile row's A (or one tile column's B) over the product's depth

    @njit
    def sweep(a, panels):
        depth, zero, r, c = np.uint64(layers), np.uint64(0), np.uint64(rows), np.uint64(columns)
        for tile_i in range(tiles):
            for tile_j in range(tiles):
                i0, j0 = np.uint64(start + tile_i * _EDGE), np.uint64(start + tile_j * _EDGE)
                i_full, j_full = i0 + np.uint64(full_rows), j0 + np.uint64(full_columns)
                a_at, b_at = np.uint64(tile_i * panel), np.uint64((tiles + tile_j) * panel)
                if rows_outer:
                    for i in range(i0, i_full, r):
                        for j in range(j0, j_full, c):
                            block(a, i, j, panels, a_at + (i - i0) * depth, b_at + (j - j0) * depth, depth)
                else:
                    for j in range(j0, j_full, c):
                        for i in range(i0, i_full, r):
                            prefetch_ahead(a, i, j, i0, i_full, j_full, r, c, np.uint64(near), np.uint64(line))
                            prefetch_ahead_l2(a, i, j, i0, i_full, j_full, r, c, np.uint64(far), np.uint64(line))
                            block(a, i, j, panels, a_at + (i - i0) * depth, b_at + (j - j0) * depth, depth)
                if below:
                    for j in range(j0, j_full, c):
                        below_block(a, i_full, j, zero, depth)
                if left:
                    for i in range(i0, i_full, r):
                        edge_block(a, i, j_full, zero, depth)
                    if below:
                        corner_block(a, i_full, j_full, zero, depth)

    span = tiles * _EDGE
    a, panels = _measured_arrays(dtype, tiles)
    sweep(a, panels)

    def sample(passes: int = 1) -> float:
        started = time.perf_counter()
        for _ in range(passes):
            sweep(a, panels)
        return passes * span * span * layers / (time.perf_counter() - started)

    return sample


def search(dtype: str, ring: str = "min-plus", shapes: list[tuple[int, int]] | None = None,
           unrolls: tuple[int, ...] = (1, 2), rounds: int = 5, finalists: int = 3,
           prefetches: tuple[tuple[int, int], ...] = PREFETCH_CANDIDATES,
           panel_passes: tuple[tuple[bool, int], ...] = PASS_CANDIDATES) -> BlockChoice:
    """Time every shape (k not unrolled) with each order of the deepest passes in `rounds` interleaved
    rounds, then the best `finalists` unrolled too, then the winner with every pair of prefetch
    distances (where it passes by column strips, which prefetch C), then with every pass; the fastest
    sample of each candidate judges it (the host is shared: slow samples are other tenants). The shape
    and the pass go together: on Zen 4, block rows outer gained int32's 8 x 2 block 10% and cost its
    4 x 4 block 7%."""
    deepest = max(deeper for _, deeper in panel_passes)
    orders = [way for way in panel_passes if way[1] == deepest]
    samplers = {BlockChoice(r, v, panel_pass=way): _sampler(dtype, ring, BlockChoice(r, v, panel_pass=way))
                for r, v in (shapes or search_shapes()) for way in orders}
    rates = _best_of_rounds(samplers, rounds)
    leaders = sorted(rates, key=rates.get, reverse=True)[:finalists]
    more = [replace(choice, unroll=u) for choice in leaders for u in unrolls if u > 1]
    samplers |= {choice: _sampler(dtype, ring, choice) for choice in more}
    rates |= _best_of_rounds({choice: samplers[choice] for choice in [*leaders, *more]}, rounds)
    best = max(rates, key=rates.get)
    for knob, values in (("prefetch", prefetches), ("panel_pass", panel_passes)):
        if knob == "prefetch" and best.panel_pass[0]:
            continue  # passes by block rows prefetch nothing: their distances would be chosen by noise
        tried = list(dict.fromkeys([best, *(replace(best, **{knob: value}) for value in values)]))
        samplers |= {choice: _sampler(dtype, ring, choice) for choice in tried if choice not in samplers}
        last = _best_of_rounds({choice: samplers[choice] for choice in tried}, rounds)
        rates |= last
        best = max(last, key=last.get)
    return replace(best, source="measured", rates={choice.label: rate for choice, rate in rates.items()})


def _sampler(dtype: str, ring: str, choice: BlockChoice):
    return measure_block(dtype, ring, choice.rows, choice.vectors, choice.unroll, choice.prefetch, choice.panel_pass)


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
