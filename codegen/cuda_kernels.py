"""CUDA tile kernels: what one tile-layer, or one task of a product stage, compiles to.

codegen.cuda writes one kernel per parallel band of a schedule, whose
thread blocks are the band's tasks; a task's statements become calls of
what this module provides (a module per dtype, tile and DD method):

- `tile_layer`: any tile-layer, by the whole thread block, on a (tile x
  tile) block held in shared memory; consecutive tile-layers on the same
  block keep it there (the generalized schedule's multitiles: loaded once,
  written back once). The role picks the update: I (the pivot block, all
  operands in shared memory), SD row / column (the closed pivot block in
  shared memory too), DD (both operand blocks in shared memory), and the
  nest's order with operands read where they live for a tile-layer without
  a role (custom trees; points are 1 x 1 tiles). `release` writes the held
  block back; `run_call` is one tile-layer as a kernel of its own.
- product steps (source lines, `product_lines`): tasks made only of DD
  tile-layers of one block (classic's DD, the generalized Rest and reverse
  stages, recursive products) accumulate a min-plus product over all their
  layers with the output in registers, by seed 001's method A (a sub-tile
  of SR rows x SC columns per thread block, one column of SR values per
  thread, the A slice in shared memory, B read by each thread for its own
  column, `per_block` sub-tiles side by side sharing the A slice) or
  method B (t x t' threads, the k loop cut into chunks of t' staged in
  shared memory, each thread holding t / t' values of its column).

Shared and local shapes are constants of the generated source (Numba needs
them so), register blocks are unrolled into named locals (an indexed local
array would spill), and int32 sums are cast back to int32 so the GPU adds
in 32 bits. Shared-memory tile-layers and methods A and B take tiles of
at most 64 (three 64 x 64 shared blocks fill the 48 KiB a block may use
statically).

Method R, the default, runs every role-marked band as register tiles
(`register_lines`): a thread block holds its task's whole tile in
registers, each thread a TM x TM block of it, so that a DD or panel
tile-layer is a min-plus product (operands staged through shared memory
in k-slices, two buffers, one barrier a slice) and a pivot tile-layer is
closed in place (row and column k published through shared memory, layer
by layer). A panel is a product with the closed pivot: P (x) B reads B as
it was, which equals the nest's in-order update because P is closed.
The device matrix is padded to a multiple of the tile, so no load or store
is guarded; a layer's k stops at its depth (the staging may hold padding
beyond it, which no relaxation reads), so padded rows and columns never
reach a real element. A thread's rows and columns are runs of four
(128-bit loads, codegen.cuda_vectors), and the launch bounds, the staging
and the carveout keep RESIDENT_WARPS warps on an SM.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from tiling.render import fill
from tiling.semirings import semiring

from .cuda_vectors import VECTOR

CUDA_DTYPES = ("float32", "int32", "uint8")
METHODS = ("R", "A", "B")
#: register tiles take tiles up to 128 (256 threads, each holding 8 x 8); shared blocks up to 64
MAX_TILE = 128
MAX_SHARED_TILE = 64
#: warps a register-tile kernel keeps resident on an SM: sm_90 needs about 16 to hide the latency of a
#: block's global loads, barriers and shared loads (8, one 256-thread block, left the issue slots 44% busy)
RESIDENT_WARPS = 16
#: shared memory an SM shares among its blocks on the smallest architecture the kernels are built for
#: (sm_80: 164 KiB; sm_90: 228 KiB), less the 1 KiB the system keeps per block and the pivot's row and
#: column; a block may hold at most 48 KiB statically
_SM_SHARED_BYTES = 164 * 1024
_BLOCK_SHARED_BYTES = 48 * 1024
_RESERVED_SHARED_BYTES = 2 * 1024
_SM_BLOCKS = 32
#: role mark -> the number of tile_layer's update for it, as launches and band kernels pass it (None: a
#: tile-layer without a role); the kernel module names them as _ROLE_CONSTANTS says
CUDA_ROLE_NUMBERS = {None: 0, "I": 1, "SD_row": 2, "SD_col": 3, "DD": 4}
_ROLE_CONSTANTS = {None: "GENERIC", "I": "PIVOT", "SD_row": "SD_ROW", "SD_col": "SD_COL", "DD": "DD"}
#: status value meaning "no negative pivot seen" (atomic min needs a large start)
NO_PIVOT = 2**62
THREADS_PER_BLOCK = 256


@dataclass(frozen=True)
class CudaOptions:
    """What a CUDA kernel module is specialised for (part of every cache key)."""

    dtype: str = "float32"
    tile: int = 64
    method: str = "R"
    #: method A: rows x columns of a thread block's sub-tile (one thread per column)
    sub_tile: tuple[int, int] = (16, 64)
    #: method A: sub-tiles per thread block, side by side, sharing the A slice
    per_block: int = 1
    #: method B: thread rows t' (t x t' threads; each holds tile / t' values)
    t_prime: int = 4
    semiring: str = "min-plus"

    def __post_init__(self) -> None:
        if self.dtype not in CUDA_DTYPES:
            raise ValueError(f"dtype for CUDA must be one of {', '.join(CUDA_DTYPES)}, got {self.dtype!r}")
        ring = semiring(self.semiring)
        ring.check_relaxed()
        if self.dtype not in ring.dtypes:
            raise ValueError(f"semiring {ring.name} computes in {', '.join(ring.dtypes)}, not {self.dtype!r}")
        if self.method not in METHODS:
            raise ValueError(f"method must be 'R' (register tiles for every role) or 'A' or 'B' (seed 001's DD "
                             f"kernels), got {self.method!r}")
        largest = MAX_TILE if self.method == "R" else MAX_SHARED_TILE
        if not 1 <= self.tile <= largest:
            raise ValueError(f"CUDA tiles must be 1..{largest} with method {self.method} (register tiles: up to "
                             f"{MAX_TILE}; blocks in shared memory: up to {MAX_SHARED_TILE}), got {self.tile}")
        rows, columns = self.sub_tile
        if not (1 <= rows <= 32 and 1 <= columns <= 1024 and rows * self.per_block <= 64):
            raise ValueError(f"sub_tile must be (rows 1..32, columns 1..1024) with rows x per_block <= 64, "
                             f"got {self.sub_tile} x {self.per_block}")
        if not 1 <= self.t_prime <= self.tile or self.tile % self.t_prime:
            raise ValueError(f"t_prime must divide the tile {self.tile}, got {self.t_prime}")

    @property
    def thread_rows(self) -> int:
        """blockDim.y of a band running tile-layers (blockDim.x is the tile: one thread per column)."""
        return max(1, min(self.tile, THREADS_PER_BLOCK // self.tile))

    @property
    def effective_sub_tile(self) -> tuple[int, int]:
        """Method A's sub-tile, clipped to the tile."""
        return min(self.sub_tile[0], self.tile), min(self.sub_tile[1], self.tile)

    @property
    def groups_across(self) -> int:
        """Method A: thread blocks side by side across one tile."""
        rows, columns = self.effective_sub_tile
        return -(-self.tile // (columns * self.per_block))

    def product_launch(self, tasks_x: int, tasks_y: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(grid, block) of a product stage over tasks_x x tasks_y tasks."""
        if self.method == "B":
            return (tasks_x, tasks_y), (self.tile, self.t_prime)
        rows, columns = self.effective_sub_tile
        return (tasks_x, tasks_y, -(-self.tile // rows) * self.groups_across), (columns,)

    @property
    def registers(self) -> RegisterTiles:
        """Method R's shapes for this tile and dtype."""
        return register_tiles(self.tile, self.dtype)

    def launch(self, kind: str, tasks_x: int, tasks_y: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(grid, block) of a stage over tasks_x x tasks_y tasks whose band runs as `kind`
        (codegen.cuda: 'registers', 'product' or 'tile-layers')."""
        if kind == "registers":
            return (tasks_x, tasks_y), (self.registers.threads,)
        if kind == "product":
            return self.product_launch(tasks_x, tasks_y)
        return self.stage_launch(tasks_x, tasks_y)

    def stage_launch(self, tasks_x: int, tasks_y: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(grid, block) of any other stage: one thread per column, thread_rows rows of threads."""
        return (tasks_x, tasks_y), (self.tile, self.thread_rows)

    def cast(self, expression: str) -> str:
        return f"{self.dtype}({expression})" if semiring(self.semiring).widens(self.dtype) else expression

    def through(self, x: str, y: str) -> str:
        """x (x) y, cast back to int32 where it is a sum."""
        return self.cast(semiring(self.semiring).combine(x, y))

    def relax(self, current: str, x: str, y: str) -> str:
        """current (+) (x (x) y)."""
        return semiring(self.semiring).keep(current, self.through(x, y))


_HEAD = '''"""Generated by polyfw: CUDA tile kernels for $semiring in $dtype, tile $tile, DD method $method."""
from numba import config, cuda, float32, int32, int64, uint8, uint64  # noqa: F401 (DT is one of them)

from codegen.cuda_vectors import load4, store4  # noqa: F401 (method R's runs of four)

DT = $dtype
R = $tile
TY = $thread_rows
$role_numbers


def on_gpu(**options):
    """Compile options only a GPU build takes (the simulator's jit has no forceinline or launch bounds)."""
    return {} if config.ENABLE_CUDASIM else options


#: staging buffers 16-byte aligned, so a thread reads its run of a k-slice in vector loads (the simulator has no
#: alignment)
STAGING_ALIGNMENT = None if config.ENABLE_CUDASIM else 16


@cuda.jit(device=True, inline=True, cache=True)
def load_block(a, s, i0, j0, h, w):
    """Block rows i0..i0+h-1, columns j0..j0+w-1 of a into s (all threads)."""
    x = cuda.threadIdx.x
    for r in range(cuda.threadIdx.y, h, TY):
        if x < w:
            s[r, x] = a[i0 + r, j0 + x]


@cuda.jit(device=True, inline=True, cache=True)
def store_block(a, s, i0, j0, h, w):
    x = cuda.threadIdx.x
    for r in range(cuda.threadIdx.y, h, TY):
        if x < w:
            a[i0 + r, j0 + x] = s[r, x]


@cuda.jit(device=True, inline=True, cache=True)
def note_negative_pivot(diagonal, k, status):
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and $improves:
        cuda.atomic.min(status, 0, k)


@cuda.jit(device=True, inline=True, cache=True)
def generic_operand(a, c_s, i, j, i0, j0, h, w):
    """a[i, j], from the held block when it lies there (it may be newer than global memory)."""
    if i0 <= i and i < i0 + h and j0 <= j and j < j0 + w:
        return c_s[i - i0, j - j0]
    return a[i, j]


@cuda.jit(device=True, inline=True, cache=True)
def release(a, c_s, held_i, held_j, n):
    """Write the held block back (the end of a task)."""
    if held_i >= 0:
        store_block(a, c_s, held_i, held_j, min(R, n - held_i), min(R, n - held_j))
    $barrier


@cuda.jit(device=True, cache=True)
def tile_layer(a, c_s, p_s, q_s, kernel, kb, ib, jb, held_i, held_j, n, status):
    """Tile-layer (kb, ib, jb) by the whole thread block; returns the block now held in c_s."""
    x = cuda.threadIdx.x
    y0 = cuda.threadIdx.y
    k0 = kb * R
    i0 = ib * R
    j0 = jb * R
    depth = min(R, n - k0)
    h = min(R, n - i0)
    w = min(R, n - j0)
    if i0 != held_i or j0 != held_j:  # a new block: write the held one back, load this one
        release(a, c_s, held_i, held_j, n)
        load_block(a, c_s, i0, j0, h, w)
    if kernel == DD:
        load_block(a, p_s, i0, k0, h, depth)
        load_block(a, q_s, k0, j0, depth, w)
    elif kernel == SD_ROW or kernel == SD_COL:
        load_block(a, p_s, k0, k0, depth, depth)
    $barrier
    if kernel == DD:  # no operand is written: k innermost, the sum in a register
        if x < w:
            for r in range(y0, h, TY):
                best = c_s[r, x]
                for k in range(depth):
                    best = $plus(best, $dd_sum)
                c_s[r, x] = best
    else:  # the nest's order: layer by layer, the block synchronised between layers
        for k in range(depth):
            if kernel == PIVOT:
                note_negative_pivot(c_s[k, k], k0 + k, status)
            elif kernel == GENERIC and i0 <= k0 + k and k0 + k < i0 + h and j0 <= k0 + k and k0 + k < j0 + w:
                note_negative_pivot(c_s[k0 + k - i0, k0 + k - j0], k0 + k, status)
            if x < w:
                for r in range(y0, h, TY):
                    if kernel == PIVOT:
                        through = $pivot_sum
                    elif kernel == SD_ROW:
                        through = $row_sum
                    elif kernel == SD_COL:
                        through = $column_sum
                    else:
                        through = $generic_sum
                    c_s[r, x] = $plus(c_s[r, x], through)
            $barrier
    $barrier
    return i0, j0


@cuda.jit(cache=True)
def run_call(a, kernel, kb, ib, jb, n, status):
    """One tile-layer as a kernel (a statement outside every parallel band)."""
    c_s = cuda.shared.array((R, R), DT)
    p_s = cuda.shared.array((R, R), DT)
    q_s = cuda.shared.array((R, R), DT)
    held_i, held_j = tile_layer(a, c_s, p_s, q_s, kernel, kb, ib, jb, -1, -1, n, status)
    release(a, c_s, held_i, held_j, n)
'''

#: the two operands a[i, k] and a[k, j] of each update, where each kernel finds them
_OPERANDS = {
    "dd_sum": ("p_s[r, k]", "q_s[k, x]"),
    "pivot_sum": ("c_s[r, k]", "c_s[k, x]"),
    "row_sum": ("p_s[r, k]", "c_s[k, x]"),
    "column_sum": ("c_s[r, k]", "p_s[k, x]"),
    "generic_sum": ("generic_operand(a, c_s, i0 + r, k0 + k, i0, j0, h, w)",
                    "generic_operand(a, c_s, k0 + k, j0 + x, i0, j0, h, w)"),
}

#: the shared blocks a band kernel's tile-layers use
STAGE_PROLOGUE = ["c_s = cuda.shared.array((R, R), DT)  # the block being updated",
                  "p_s = cuda.shared.array((R, R), DT)  # pivot block (I, SD) or A block (DD)",
                  "q_s = cuda.shared.array((R, R), DT)  # B block (DD)",
                  "held_i = -1", "held_j = -1"]
STAGE_EPILOGUE = ["release(a, c_s, held_i, held_j, n)"]


def stage_call(number: int, kb: str, ib: str, jb: str) -> list[str]:
    """A tile-layer in a band kernel: the thread block runs it on its held block."""
    return [f"held_i, held_j = tile_layer(a, c_s, p_s, q_s, {number}, {kb}, {ib}, {jb}, held_i, held_j, n, status)"]


@dataclass(frozen=True)
class ProductLines:
    """A product stage's kernel body around the AST: registers declared, a step per DD statement
    (the first step of a task loads its registers), the stores at the end."""

    prologue: list[str]
    epilogue: list[str]
    options: CudaOptions

    def step(self, kb: str, ib: str, jb: str) -> list[str]:
        return (_method_a_step if self.options.method == "A" else _method_b_step)(self.options, kb, ib, jb)


def product_lines(options: CudaOptions) -> ProductLines:
    if options.method == "A":
        rows, columns = options.effective_sub_tile
        registers = _a_registers(options)
        prologue = [f"a_s = cuda.shared.array(({rows}, R), DT)", "x = cuda.threadIdx.x",
                    f"sub_i = (cuda.blockIdx.z // {options.groups_across}) * {rows}",
                    f"sub_j = (cuda.blockIdx.z % {options.groups_across}) * {columns * options.per_block}",
                    "loaded = False", "i0 = 0", "j0 = 0", "i_end = 0", "j_end = 0"]
        prologue += [f"q{s} = 0" for s in range(options.per_block)]
        prologue += [f"v{m}_{s} = DT(0)" for m, s in registers]
        epilogue = ["if loaded:"]  # rows are recomputed here: fewer registers live through the k loop
        for m, s in registers:
            epilogue += [f"    if i0 + {m} < i_end and j0 + {s * columns} + x < j_end:",
                         f"        a[i0 + {m}, q{s}] = v{m}_{s}"]
        return ProductLines(prologue, epilogue, options)
    per_thread = options.tile // options.t_prime
    prologue = [f"a_s = cuda.shared.array((R, {options.t_prime}), DT)",
                f"b_s = cuda.shared.array(({options.t_prime}, R), DT)",
                "x = cuda.threadIdx.x", "y = cuda.threadIdx.y", "loaded = False", "i0 = 0", "h = 0", "w = 0", "j = 0"]
    prologue += [f"v{m} = DT(0)" for m in range(per_thread)]
    epilogue = ["if loaded:"]
    for m in range(per_thread):
        epilogue += [f"    if y + {m * options.t_prime} < h and x < w:",
                     f"        a[i0 + y + {m * options.t_prime}, j] = v{m}"]
    return ProductLines(prologue, epilogue, options)


def _a_registers(options: CudaOptions) -> list[tuple[int, int]]:
    rows, _ = options.effective_sub_tile
    return [(m, s) for s in range(options.per_block) for m in range(rows)]


def _method_a_step(options: CudaOptions, kb: str, ib: str, jb: str) -> list[str]:
    """Method A: this thread's column of each of per_block sub-tiles, SR values each, in registers."""
    rows, columns = options.effective_sub_tile
    registers = _a_registers(options)
    lines = ["if not loaded:  # the task's first layer: its sub-tile into registers",
             f"    i0 = {ib} * R + sub_i", f"    j0 = {jb} * R + sub_j",
             f"    i_end = min({ib} * R + R, n)", f"    j_end = min({jb} * R + R, n)"]
    lines += [f"    q{s} = min(j0 + {s * columns} + x, n - 1)" for s in range(options.per_block)]
    lines += [f"    v{m}_{s} = a[min(i0 + {m}, n - 1), q{s}]" for m, s in registers]
    lines += ["    loaded = True",
              f"k0 = {kb} * R", "depth = min(R, n - k0)", "cuda.syncthreads()",
              f"for e in range(x, {rows} * depth, {columns}):  # the A slice, shared by all columns",
              "    a_s[e // depth, e % depth] = a[min(i0 + e // depth, n - 1), k0 + e % depth]",
              "cuda.syncthreads()", "for k in range(depth):"]
    lines += [f"    b{s} = a[k0 + k, q{s}]" for s in range(options.per_block)]
    lines += [f"    v{m}_{s} = {options.relax(f'v{m}_{s}', f'a_s[{m}, k]', f'b{s}')}" for m, s in registers]
    return lines


def _method_b_step(options: CudaOptions, kb: str, ib: str, jb: str) -> list[str]:
    """Method B: k in chunks of t' staged in shared memory; rows y, y + t', ... of column x."""
    chunk, per_thread = options.t_prime, options.tile // options.t_prime
    lines = ["if not loaded:  # the task's first layer: its column into registers",
             f"    i0 = {ib} * R", "    h = min(R, n - i0)", f"    w = min(R, n - {jb} * R)",
             f"    j = {jb} * R + min(x, w - 1)"]
    lines += [f"    v{m} = a[i0 + min(y + {m * chunk}, h - 1), j]" for m in range(per_thread)]
    lines += ["    loaded = True",
              f"k0 = {kb} * R", "depth = min(R, n - k0)",
              f"for kc in range(0, depth, {chunk}):",
              f"    width = min({chunk}, depth - kc)",
              "    cuda.syncthreads()",
              f"    for e in range(y, R, {chunk}):",
              "        if x < width:",
              "            a_s[e, x] = a[i0 + min(e, h - 1), k0 + kc + x]",
              "    if y < width:",
              "        b_s[y, x] = a[k0 + kc + y, j]",
              "    cuda.syncthreads()",
              "    for k in range(width):",
              "        b = b_s[k, x]"]
    lines += [f"        v{m} = {options.relax(f'v{m}', f'a_s[y + {m * chunk}, k]', 'b')}" for m in range(per_thread)]
    return lines


@dataclass(frozen=True)
class RegisterTiles:
    """Method R's shapes: a thread holds a block x block part of the tile; a layer's operands
    pass through shared memory `chunk` values of k at a time, `per_thread` loaded by each thread;
    `min_blocks` thread blocks stay resident on an SM (the kernels' launch bounds).

    A thread's rows (and columns) come in runs of `vector` consecutive ones, `span` apart, so that
    a warp reads a k-slice's row in 128-bit loads without bank conflicts (codegen.cuda_vectors):
    thread (ty, tx) holds rows g * span + ty * vector + v and columns g * span + tx * vector + v."""

    tile: int
    block: int
    chunk: int
    element_bytes: int = 4

    @property
    def threads(self) -> int:
        return (self.tile // self.block) ** 2

    @property
    def per_thread(self) -> int:
        return self.tile * self.chunk // self.threads

    @property
    def vector(self) -> int:
        """Elements a thread moves in one access: 4 where its runs allow it, else 1."""
        return VECTOR if self.block % VECTOR == 0 and self.per_thread % VECTOR == 0 else 1

    @property
    def span(self) -> int:
        return self.tile * self.vector // self.block

    @property
    def min_blocks(self) -> int:
        """Blocks an SM must hold at once for RESIDENT_WARPS warps (ptxas then keeps each thread
        within 65536 / (threads x min_blocks) registers)."""
        return _resident_blocks(self.threads)

    def global_bytes_per_relaxation(self, layers: float = 1.0) -> float:
        """Bytes a block moves to or from global memory per relaxation: an A and a B block each
        tile-layer, and its own block loaded and stored once over a task of `layers` tile-layers."""
        return (2 + 2 / layers) * self.element_bytes / self.tile

    @property
    def shared_bytes_per_relaxation(self) -> float:
        """Shared memory read (a thread's rows of A and columns of B each k) and written (the staging)."""
        return 2 * self.element_bytes / self.block + 2 * self.element_bytes / self.tile

    @property
    def barriers_per_relaxation(self) -> float:
        """A block's barriers per relaxation it makes: one a k-slice, one more a tile-layer."""
        return (self.tile / self.chunk + 1) / self.tile ** 3


def _resident_blocks(threads: int) -> int:
    """Blocks of `threads` threads that make RESIDENT_WARPS warps, within the 32 an SM holds."""
    return min(_SM_BLOCKS, -(-RESIDENT_WARPS * 32 // threads))


def _staging_budget(threads: int) -> int:
    """Shared bytes a block may stage in while RESIDENT_WARPS warps of `threads`-thread blocks fit an SM."""
    return min(_BLOCK_SHARED_BYTES, _SM_SHARED_BYTES // _resident_blocks(threads) - _RESERVED_SHARED_BYTES)


#: the most elements of each operand a thread fetches a slice ahead (held in registers while the
#: current slice is computed: more would push the kernel past the registers its launch bounds allow)
_PREFETCH = 8


@functools.lru_cache(maxsize=None)
def register_tiles(tile: int, dtype: str) -> RegisterTiles:
    """The largest thread block (8 x 8 down to 1 x 1) dividing the tile that still leaves 64
    threads (or the most there can be), and the longest k-slice that fits the staging memory
    left to a block when RESIDENT_WARPS warps share an SM, splits evenly into equal runs of
    loads per thread, and keeps a thread's prefetch within _PREFETCH elements an operand."""
    size = np.dtype(dtype).itemsize
    for block in (8, 4, 2, 1):
        if tile % block or ((tile // block) ** 2 < 64 and block > 1):
            continue
        threads = (tile // block) ** 2
        for chunk in range(tile, 0, -1):
            elements, spare = divmod(tile * chunk, threads)
            if (not spare and tile % chunk == 0 and chunk % elements == 0 and tile % elements == 0
                    and elements <= _PREFETCH and 4 * tile * chunk * size <= _staging_budget(threads)):
                return RegisterTiles(tile, block, chunk, size)
    raise ValueError(f"no register tiling of a {tile}-wide tile in {dtype} (method R takes tiles 1..{MAX_TILE})")


_REGISTER_TILES = '''

# ---- method R: register tiles (a thread holds a TM x TM block of the task's tile)
TM = $block
CHUNK = $chunk
PER_THREAD = $per_thread
ACROSS = R // TM
#: a thread's rows and columns: runs of VEC consecutive ones, SPAN apart (RegisterTiles)
VEC = $vector
SPAN = $span
#: matrix indices as unsigned: Numba then emits no wraparound for negative ones
index = uint64
#: a kernel's step counters count in int32 (an int64 takes two registers)
ONE = int32(1)


@cuda.jit(device=True, cache=True, **on_gpu(forceinline=True))
def place(t, m):
    """Row (or column) of the tile where thread coordinate t keeps its m-th held row (or column)."""
    return (m // VEC) * SPAN + t * VEC + m % VEC


@cuda.jit(device=True, cache=True, **on_gpu(forceinline=True))
def load_registers(a, acc, i0, j0, t):
    """Block (i0, j0)'s elements that thread t holds, from the matrix."""
    ty = t // ACROSS
    tx = t % ACROSS
$load_block


@cuda.jit(device=True, cache=True, **on_gpu(forceinline=True))
def release_registers(a, acc, held_i, held_j, t):
    """Write the held block back (values the block's next loads must see: a barrier follows)."""
    if held_i >= 0:
        ty = t // ACROSS
        tx = t % ACROSS
$store_block
    cuda.syncthreads()


@cuda.jit(device=True, cache=True, **on_gpu(forceinline=True))
def hold(a, acc, i0, j0, held_i, held_j, t):
    """Make block (i0, j0) the held one, writing the one held before back."""
    if i0 != held_i or j0 != held_j:
        release_registers(a, acc, held_i, held_j, t)
        load_registers(a, acc, i0, j0, t)
    return int32(i0), int32(j0)  # 32 bits: one register each, held through every step


@cuda.jit(device=True, cache=True, **on_gpu(forceinline=True))
def fetch_slice(a, i0, j0, k0, kc, t):
    """This thread's share of k-slice kc..kc+CHUNK-1 of the layer: PER_THREAD consecutive values of
    k in one row of A (the task's rows x the layer's columns), then PER_THREAD of one row of B
    (the layer's rows x the task's columns) in runs of VEC a warp reads whole. In a layer less
    deep than R (the last, when R does not divide n) it reads the matrix's padding beyond the
    layer's depth, which the product never uses."""
    r = t % R
    c = (t // R) * PER_THREAD
$fetch_a
    row = t // (R // PER_THREAD)
    k = index(k0 + kc + row)
$fetch_b
    return $fetched


@cuda.jit(device=True, cache=True, **on_gpu(forceinline=True))
def stage_slice(a_s, b_s, buffer, t, fetched):
    """A fetched slice into `buffer` of the staging arrays (A transposed: k-major like B)."""
    r = t % R
    c = (t // R) * PER_THREAD + buffer * CHUNK
    row = t // (R // PER_THREAD) + buffer * CHUNK
$stage


@cuda.jit(device=True, cache=True, **on_gpu(forceinline=True))
def relax_k(acc, a_s, b_s, k, ty, tx):
    """One k of the product on this thread's block: its rows' A values and columns' B values in
    runs of VEC, then every held element relaxed."""
$relax_product


@cuda.jit(device=True, cache=True, **on_gpu(forceinline=True))
def product_layer(a, acc, a_s, b_s, i0, j0, k0, n, t):
    """acc (+)= a[i0.., k0..] (x) a[k0.., j0..] over the layer's depth. The k-slices are double
    buffered: slice c + 1 is fetched into registers before slice c is computed and staged after
    it, so its global loads are in flight during the computation; one barrier a slice."""
    ty = t // ACROSS
    tx = t % ACROSS
    depth = min(R, n - k0)
    slices = (depth + CHUNK - 1) // CHUNK
    fetched = fetch_slice(a, i0, j0, k0, 0, t)
    cuda.syncthreads()  # the staging buffers' last readers are done
    stage_slice(a_s, b_s, 0, t, fetched)
    cuda.syncthreads()
    for c in range(slices):
        buffer = c % 2
        if c + 1 < slices:
            fetched = fetch_slice(a, i0, j0, k0, (c + 1) * CHUNK, t)
        for k in range(buffer * CHUNK, buffer * CHUNK + min(CHUNK, depth - c * CHUNK)):
            relax_k(acc, a_s, b_s, k, ty, tx)
        if c + 1 < slices:
            stage_slice(a_s, b_s, 1 - buffer, t, fetched)
        cuda.syncthreads()


@cuda.jit(device=True, cache=True, **on_gpu(forceinline=True))
def pivot_k(acc, row_s, column_s, k0, k, q, m, depth, t, status):
    """Layer k of the pivot block's closure: the threads whose held row m (column m) is row k
    (column k) publish it through shared memory, then every thread relaxes its block (m is a
    constant where it is inlined)."""
    if k < depth:
        ty = t // ACROSS
        tx = t % ACROSS
        cuda.syncthreads()
        if ty == q:
            for s in range(TM):
                row_s[place(tx, s)] = acc[m * TM + s]
        if tx == q:
            for s in range(TM):
                column_s[place(ty, s)] = acc[s * TM + m]
        cuda.syncthreads()
        note_negative_pivot(row_s[k], k0 + k, status)
        for r in range(TM):
            x = column_s[place(ty, r)]
            for s in range(TM):
                acc[r * TM + s] = $relax_pivot


@cuda.jit(device=True, cache=True, **on_gpu(forceinline=True))
def close_pivot(acc, k0, n, t, status):
    """The held pivot block closed layer by layer, k in order; row and column k pass through shared
    memory."""
    row_s = cuda.shared.array(R, DT)
    column_s = cuda.shared.array(R, DT)
    depth = min(R, n - k0)
$unrolled_pivot
'''


def _run(options: CudaOptions, target: str, names: list[str], row: str, column: str, *, load: bool) -> list[str]:
    """Lines moving len(names) consecutive elements of `target`'s row `row` from column `column` on
    (whole vectors where the shapes allow, else one by one), into the names or from them."""
    vector = options.registers.vector
    lines = []
    for first in range(0, len(names), vector):
        group = names[first:first + vector]
        where = f"index({row}), index({column} + {first})"
        if vector == 1:
            lines.append(f"{group[0]} = {target}[{where}]" if load else f"{target}[{where}] = {group[0]}")
        elif load:
            lines.append(f"{', '.join(group)} = load4({target}, {where})")
        else:
            lines.append(f"store4({target}, {where}, {', '.join(group)})")
    return lines


def _indent(lines: list[str], depth: int) -> str:
    return "\n".join("    " * depth + line for line in lines)


def _held_block(options: CudaOptions, load: bool) -> list[str]:
    """A thread's held elements from (or to) block (i0, j0) of the matrix: a row run per held row."""
    shapes = options.registers
    i0, j0 = ("i0", "j0") if load else ("held_i", "held_j")
    lines = []
    for m in range(shapes.block):
        for g in range(shapes.block // shapes.vector):
            names = [f"acc[{m * shapes.block + g * shapes.vector + v}]" for v in range(shapes.vector)]
            lines += _run(options, "a", names, f"{i0} + place(ty, {m})", f"{j0} + {g * shapes.span} + tx * VEC",
                          load=load)
    return lines


def _fetched(shapes: RegisterTiles) -> tuple[list[str], list[str]]:
    return [f"p{e}" for e in range(shapes.per_thread)], [f"q{e}" for e in range(shapes.per_thread)]


def _fetch_lines(options: CudaOptions) -> dict[str, str]:
    shapes = options.registers
    a_names, b_names = _fetched(shapes)
    whole = _run(options, "a", a_names, "i0 + r", "k0 + kc + c", load=True)
    # B: a thread's runs are R // PER_THREAD * VEC apart, so that consecutive threads read (and
    # stage) consecutive runs
    threads_per_row = shapes.tile // shapes.per_thread
    b = []
    for run in range(shapes.per_thread // shapes.vector):
        names = b_names[run * shapes.vector:(run + 1) * shapes.vector]
        b += _run(options, "a", names, "k",
                  f"j0 + ({run * threads_per_row} + t % {threads_per_row}) * VEC", load=True)
    stage = [f"{a_s} = {name}" for a_s, name in
             ((f"a_s[index(c + {e}), index(r)]", name) for e, name in enumerate(a_names))]
    for run in range(shapes.per_thread // shapes.vector):
        names = b_names[run * shapes.vector:(run + 1) * shapes.vector]
        stage += _run(options, "b_s", names, "row", f"({run * threads_per_row} + t % {threads_per_row}) * VEC",
                      load=False)
    unpack = f"{', '.join(a_names + b_names)} = fetched"
    return {"fetch_a": _indent(whole, 1), "fetch_b": _indent(b, 1),
            "fetched": ", ".join(a_names + b_names), "stage": _indent([unpack, *stage], 1)}


def _relax_product_lines(options: CudaOptions) -> str:
    shapes = options.registers
    groups = shapes.block // shapes.vector
    lines = []
    for operand, staging, t in (("x", "a_s", "ty"), ("y", "b_s", "tx")):
        for g in range(groups):
            names = [f"{operand}{g * shapes.vector + v}" for v in range(shapes.vector)]
            lines += _run(options, staging, names, "k", f"{g * shapes.span} + {t} * VEC", load=True)
    lines += [f"acc[{m * shapes.block + s}] = {options.relax(f'acc[{m * shapes.block + s}]', f'x{m}', f'y{s}')}"
              for m in range(shapes.block) for s in range(shapes.block)]
    return _indent(lines, 1)


def register_source(options: CudaOptions) -> str:
    """Method R's device functions (appended to the kernel module)."""
    shapes = options.registers
    # the pivot's k = g * SPAN + q * VEC + v is row (column) g * VEC + v of the threads whose ty (tx) is q;
    # m as a plain integer: one typing of pivot_k, not one a literal (inlining makes it constant)
    pivot = []
    for g in range(shapes.block // shapes.vector):  # k in order: g, then q, then v
        pivot.append("for q in range(ACROSS):")
        pivot += [f"    pivot_k(acc, row_s, column_s, k0, {g * shapes.span} + q * VEC + {v}, q, "
                  f"int64({g * shapes.vector + v}), depth, t, status)" for v in range(shapes.vector)]
    return fill(_REGISTER_TILES, block=str(shapes.block), chunk=str(shapes.chunk), per_thread=str(shapes.per_thread),
                vector=str(shapes.vector), span=str(shapes.span),
                load_block=_indent(_held_block(options, load=True), 1),
                store_block=_indent(_held_block(options, load=False), 2),
                relax_product=_relax_product_lines(options),
                relax_pivot=options.relax("acc[r * TM + s]", "x", "row_s[place(tx, s)]"),
                unrolled_pivot=_indent(pivot, 1), **_fetch_lines(options))


#: the roles a register-tile band runs: the pivot closed in place, panels and DD as products
REGISTER_ROLES = frozenset({"I", "SD_row", "SD_col", "DD"})


@dataclass(frozen=True)
class RegisterLines:
    """A register-tile band's kernel body around the AST: the held block's registers and
    staging buffers, the task's tile-layers run one after another in the AST's order, the held
    block written back at the end.

    A step's code (a product is hundreds of unrolled instructions) is written once per kernel,
    not once per statement of the AST: inlined at every statement, the copies of a band with
    several (a generalized LeadRowCol has three) pushed ptxas past the 128 registers the launch
    bounds allow, and it spilled. So the kernel replays the task's loops (a few scalar
    instructions a statement) to find its next tile-layer, runs it, and replays again until no
    statement is left: the same tile-layers in the same order as the AST, so the same proof."""

    options: CudaOptions

    @property
    def prologue(self) -> list[str]:
        shapes = self.options.registers
        staging = f"cuda.shared.array(({2 * shapes.chunk}, R), DT, alignment=STAGING_ALIGNMENT)"
        return [f"acc = cuda.local.array({shapes.block * shapes.block}, DT)  # this thread's part of the held block",
                f"a_s = {staging}  # k-slices of A, transposed", f"b_s = {staging}  # k-slices of B",
                "t = cuda.threadIdx.x", "held_i = int32(-1)", "held_j = int32(-1)"]

    @property
    def epilogue(self) -> list[str]:
        return ["release_registers(a, acc, held_i, held_j, t)"]

    def record(self, role: str, kb: str, ib: str, jb: str) -> list[str]:
        """A statement of the replayed AST: the tile-layer itself when it is the one looked for."""
        return ["if seen == wanted:",
                f"    role, step_kb, step_ib, step_jb = int32({_ROLE_CONSTANTS.get(role, 'GENERIC')}), int32({kb}), "
                f"int32({ib}), int32({jb})",
                "seen += ONE"]

    def replay(self, ast_lines: list[str], roles: frozenset, integers: list[str]) -> list[str]:
        """The kernel's body: the AST (written with record's statements, two levels in) replayed
        for step 0, 1, ... of the task; each found step made the held block's and run by its role.

        The held block's registers stay live through the replay, so the AST must need few more:
        it reads its integers (the kernel's arguments and block indices) from shared memory, in
        32 bits, where it uses them. As arguments, the compiler loaded them all (int64: two
        registers each) and kept them beside the held block, and a generalized band spilled."""
        pad = "    "
        integers = [*integers, "cuda.blockIdx.x", "cuda.blockIdx.y"]
        where = {name: f"integers[{number}]" for number, name in enumerate(integers)}
        pattern = re.compile("|".join(rf"(?<![\w.]){re.escape(name)}\b" for name in integers))
        ast_lines = [pattern.sub(lambda match: where[match.group(0)], line) for line in ast_lines]
        kept = [f"integers = cuda.shared.array({len(integers)}, int32)  # the AST's integers (see replay)",
                "if t == 0:", *(f"{pad}integers[{number}] = {name}" for number, name in enumerate(integers)),
                "cuda.syncthreads()"]
        run = ["held_i, held_j = hold(a, acc, step_ib * R, step_jb * R, held_i, held_j, t)"]
        products = sorted(roles - {"I"}, key=str)
        product = [*([] if set(products) <= {"DD"} else  # a panel reads its own block: the held values go back
                     ["if role != DD:", f"{pad}release_registers(a, acc, held_i, held_j, t)"]),
                   "product_layer(a, acc, a_s, b_s, held_i, held_j, step_kb * R, n, t)"]
        pivot = ["close_pivot(acc, step_kb * R, n, t, status)"]
        if "I" in roles and products:
            run += ["if role == PIVOT:", *(pad + line for line in pivot), "else:", *(pad + line for line in product)]
        else:
            run += pivot if "I" in roles else product
        return [*(pad + line for line in kept), f"{pad}wanted = int32(0)", f"{pad}while True:",
                f"{pad * 2}seen = int32(0)", f"{pad * 2}role = int32(-1)",
                f"{pad * 2}step_kb = step_ib = step_jb = int32(0)",
                *ast_lines,
                f"{pad * 2}if role < 0:", f"{pad * 3}break",
                *(pad * 2 + line for line in run),
                f"{pad * 2}wanted += ONE"]


def cuda_kernel_source(options: CudaOptions) -> str:
    """The CUDA kernel module for one dtype, tile and DD method."""
    ring = semiring(options.semiring)
    fields = {"dtype": options.dtype, "tile": str(options.tile), "method": options.method, "semiring": ring.name,
              "thread_rows": str(options.thread_rows), "plus": ring.plus.name,
              "improves": ring.better(ring.combine("diagonal", "diagonal"), "diagonal"),
              **{name: options.through(*pair) for name, pair in _OPERANDS.items()}}
    role_numbers = (f"{', '.join(_ROLE_CONSTANTS[role] for role in CUDA_ROLE_NUMBERS)} = "
                    f"{', '.join(str(number) for number in CUDA_ROLE_NUMBERS.values())}")
    # trees over points run one-thread blocks, which need no barriers
    barrier = "pass  # one thread: no barrier" if options.tile == 1 else "cuda.syncthreads()"
    source = fill(_HEAD, role_numbers=role_numbers, barrier=barrier, **fields)
    return source + register_source(options) if options.method == "R" else source


def role_number(role: str | None) -> int:
    """The number of tile_layer's update for a tile-layer with this role mark (None, or a role
    without an update of its own: the nest's order)."""
    return CUDA_ROLE_NUMBERS.get(role, CUDA_ROLE_NUMBERS[None])
