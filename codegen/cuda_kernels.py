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
in 32 bits. Tiles are at most 64 (three 64 x 64 shared blocks fill the
48 KiB a block may use statically).
"""
from __future__ import annotations

from dataclasses import dataclass

from tiling.render import fill
from tiling.semirings import semiring

CUDA_DTYPES = ("float32", "int32", "uint8")
METHODS = ("A", "B")
MAX_TILE = 64
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
    tile: int = 32
    method: str = "A"
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
        if not 1 <= self.tile <= MAX_TILE:
            raise ValueError(f"CUDA tiles must be 1..{MAX_TILE} (three tiles share 48 KiB), got {self.tile}")
        if self.method not in METHODS:
            raise ValueError(f"method must be 'A' or 'B' (seed 001's DD kernels), got {self.method!r}")
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
from numba import cuda, float32, int32, uint8  # noqa: F401 (DT is one of them)

DT = $dtype
R = $tile
TY = $thread_rows
$role_numbers


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
    return fill(_HEAD, role_numbers=role_numbers, barrier=barrier, **fields)


def role_number(role: str | None) -> int:
    """The number of tile_layer's update for a tile-layer with this role mark (None, or a role
    without an update of its own: the nest's order)."""
    return CUDA_ROLE_NUMBERS.get(role, CUDA_ROLE_NUMBERS[None])
