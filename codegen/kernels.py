"""Tile kernel templates: what one tile-layer (block layer kb on block (ib, jb)) compiles to.

A schedule's marks pick the kernel; every kernel takes the tile-layer's
bounds, already clipped to n, so partial blocks need no padding:

- `relax_layers`: the nest's own order inside the tile-layer (k, then i,
  then j). Right for every role; used for any tile-layer without a role.
- `relax_closure`: I (the pivot block's closure) as blocked FW over
  sub-blocks, nearly all of it in the product kernel.
- `relax_product`: DD and SD tile-layers as min-plus products, k innermost
  over an MR x NR register block (`micro_product`, vector IR from
  codegen.intrinsics.semiring_block). DD reads two blocks
  it does not write. SD reads its own block, but the pivot block P it
  multiplies by is closed when SD runs (the I tile-layer precedes it in
  every legal schedule), so X' = min(X, P (x) X) equals the nest's order:
  P's triangle inequality makes every chain through two pivots no shorter
  than one through the last, and any value of X read early or late in
  place is a valid walk length between those bounds. (A negative cycle in
  P breaks the triangle inequality, but the I tile-layer has then already
  reported it.) SD thus runs at DD's speed instead of one load and store
  per relaxation.
- `relax_layers_pred` / `relax_product_pred`: with predecessors, a strict
  improvement through k takes pred[k, j]: the nest's order for I tile-layers and
  edges, and DD and SD tile-layers as products whose register blocks keep
  predecessors beside C (any order of strict improvements read from
  consistent (distance, predecessor) pairs leaves valid paths).
- `relax_point` / `relax_point_pred`: one point S[k, i, j], for schedules
  given over points (tile size 1, or a custom point order).

Every kernel reports the first pivot k it finds with a[k, k] < 0 (a
negative cycle) in status[0]. Indices are uint64 inside (signed ones block
vectorisation) and integer sums, which Numba widens, are brought back into the
type by the semiring's `narrow` (int32: cast; int16: saturated at its INF first).
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np

from tiling.render import fill
from tiling.semirings import semiring

from .intrinsics import target_isa, vector_registers, vector_width
from .packed_kernels import WORD_BITS, packed_kernel_source
from .register_blocks import (BROADCAST_SCRATCH, MAX_ROWS, MAX_VECTORS, PASS, PASS_CANDIDATES, PREFETCH, BlockChoice,
                              choose_register_block, default_register_block, pass_words, predecessor_register_block,
                              registers_needed, strip_depth)

DTYPES = ("float32", "float64", "int16", "int32", "uint8")
#: role mark -> kernel (roles missing here, and unmarked statements, get relax_layers)
ROLE_KERNELS = {"I": "relax_closure", "SD_row": "relax_product", "SD_col": "relax_product", "DD": "relax_product"}
#: tile kernel -> its number in a task list's (kernel, ...) rows (with predecessors each number runs its
#: PREDECESSOR_KERNELS twin); the CPU driver, the dataflow runtime and the MPI batches all read it from here
TILE_KERNEL_NUMBERS = {"relax_layers": 0, "relax_product": 1, "relax_closure": 2, "relax_layers_pred": 0,
                       "relax_product_pred": 1}
#: what each tile kernel is when predecessors are kept
PREDECESSOR_KERNELS = {"relax_layers": "relax_layers_pred", "relax_product": "relax_product_pred",
                       "relax_closure": "relax_layers_pred"}
#: a product call's number once run_tasks has packed its operands (schedules.packing); only run_tasks sees it
#: (the dataflow runtime tells its readers of published operands by codegen.dataflow's rendered test)
PANELS = 3
#: columns of a driver's task tables: a call's (kernel, kb, ib, jb, layers), a task's first call and zeros
TABLE_COLUMNS = 5
#: side of the sub-blocks relax_closure closes a pivot block by: its nest-order part is 1/(tile/side)^2
#: of the block's work, and a side of a few register blocks keeps the products' edges small
CLOSURE_BLOCK = 32
#: layers relax_product tests for an operand block with no path at a time (a sparse graph's skipped work):
#: finer than most tiles, so a product over several layers (schedules.layer_products) skips as much
SKIP_SPAN = 64
#: what a run's profile array counts, in cycles: each role's tile-layers (summed per thread, in
#: schedules.tree.ROLE_CONDITIONS' order), then the wall time of the packed stages' copies into
#: micro-panels and of the parallel stages (both in row 0)
PROFILE_SLOTS = ("I", "SD_row", "SD_col", "DD", "packing", "stages")
FASTMATH = ", fastmath={'nnan', 'nsz'}"


def padded_stride(n: int) -> int:
    """Row length of the matrix the kernels run on for n vertices: a multiple of 16 elements (64-byte
    rows for float32), plus 16 so power-of-two n does not map every row to the same cache sets."""
    return -(-n // 16) * 16 + 16


@dataclass(frozen=True)
class KernelOptions:
    """What the kernel module is specialised for (part of every cache key)."""

    dtype: str = "float32"
    #: rows x columns of the DD register block, columns a multiple of the vector width (None:
    #: codegen.register_blocks' choice for this CPU)
    register_block: tuple[int, int] | None = None
    predecessors: bool = False
    semiring: str = "min-plus"
    #: k steps per trip of the register block's loop (None: with the chosen block, its own; else 1)
    unroll: int | None = None
    #: register blocks ahead whose C lines the product prefetches into L1 and into L2, 0 for none
    #: (None: with the chosen block, its own; else codegen.register_blocks.PREFETCH)
    prefetch: tuple[int, int] | None = None
    #: how a product on micro-panels passes over C: (block rows outer, layers a pass in multiples of
    #: strip_depth), one of codegen.register_blocks.PASS_CANDIDATES (None: with the chosen block, its
    #: own; else PASS)
    panel_pass: tuple[bool, int] | None = None
    #: 0, or or-and on rows packed 64 vertices a uint64 word (codegen.packed_kernels) in tiles of this
    #: many words
    packed_words: int = 0

    def __post_init__(self) -> None:
        ring = semiring(self.semiring)
        ring.check_relaxed()
        if self.dtype not in ring.dtypes:
            raise ValueError(f"semiring {ring.name} computes in {', '.join(ring.dtypes)}, not {self.dtype!r}")
        if self.packed_words and (ring.name != "or-and" or self.predecessors or not isinstance(self.packed_words, int)
                                  or self.packed_words < 1):
            raise ValueError(f"packed rows (64 vertices a word) hold reachability: semiring or-and without "
                             f"predecessors, in tiles of a whole number of words; got semiring {ring.name}, "
                             f"predecessors={self.predecessors}, {self.packed_words!r} words")
        width = vector_width(np.dtype(self.dtype).itemsize)
        if self.register_block is None:
            # a block that keeps predecessors and packed rows are not measured: a fixed shape each
            choice = (BlockChoice(*predecessor_register_block(self.dtype)) if self.predecessors
                      else BlockChoice(*default_register_block(self.dtype)) if self.packed_words
                      else choose_register_block(self.dtype, ring.name))
            object.__setattr__(self, "register_block", (choice.rows, choice.vectors * width))
            for knob in ("unroll", "prefetch", "panel_pass"):
                if getattr(self, knob) is None:
                    object.__setattr__(self, knob, getattr(choice, knob))
        for knob, fixed in (("unroll", 1), ("prefetch", PREFETCH), ("panel_pass", PASS)):
            if getattr(self, knob) is None:
                object.__setattr__(self, knob, fixed)
        if self.unroll not in (1, 2, 4):
            raise ValueError(f"unroll must be 1, 2 or 4, got {self.unroll!r}")
        ahead = self.prefetch
        if not (isinstance(ahead, (tuple, list)) and len(ahead) == 2 and all(isinstance(x, int) for x in ahead)
                and 0 <= ahead[0] <= 4 and 0 <= ahead[1] <= 16):
            raise ValueError(f"prefetch must be (register blocks ahead into L1: 0..4, into L2: 0..16), got {ahead!r}")
        object.__setattr__(self, "prefetch", tuple(ahead))
        if tuple(self.panel_pass) not in PASS_CANDIDATES:
            raise ValueError(f"panel_pass must be one of {', '.join(map(str, PASS_CANDIDATES))} (block rows outer, "
                             f"layers a pass in strips), got {self.panel_pass!r}")
        object.__setattr__(self, "panel_pass", tuple(self.panel_pass))
        rows, columns = self.register_block
        if not (isinstance(rows, int) and isinstance(columns, int) and 1 <= rows <= MAX_ROWS
                and 1 <= columns <= MAX_VECTORS * width and columns % width == 0):
            raise ValueError(f"register_block must be (rows 1..{MAX_ROWS}, columns a multiple of {width} up to "
                             f"{MAX_VECTORS * width}) for {self.dtype} on {target_isa()}, got {self.register_block!r}")
        if registers_needed(rows, columns // width) > vector_registers():
            raise ValueError(f"register_block {self.register_block!r} needs {registers_needed(rows, columns // width)} "
                             f"vector registers ({rows} x {columns // width} accumulators, a row of B, a broadcast, a sum"
                             f"{', the broadcast loaded apart' if BROADCAST_SCRATCH.get(target_isa()) else ''}); "
                             f"{target_isa()} has {vector_registers()}")

    @property
    def has_panels(self) -> bool:
        """Whether the module packs a PACK_MARK stage's operands (register-block products: not with
        predecessors, which run the nest's order, nor on bit-packed rows)."""
        return not (self.predecessors or self.packed_words)

    @property
    def vectors(self) -> int:
        """Vector registers per register-block row."""
        return self.register_block[1] // vector_width(np.dtype(self.dtype).itemsize)

    def cast(self, expression: str) -> str:
        return semiring(self.semiring).narrow(self.dtype, expression)

    def relax(self, current: str, x: str, y: str) -> str:
        """current (+) (x (x) y) as Python: (+) through the kernel module's `keep` (intrinsics.semiring_keep)."""
        return f"keep({current}, {self.through(x, y)})"

    def through(self, x: str, y: str) -> str:
        return self.cast(semiring(self.semiring).combine(x, y))

    def better(self, x: str, y: str) -> str:
        return semiring(self.semiring).better(x, y)

    @property
    def matrix_dtype(self) -> str:
        """The element type of the matrix the kernels take (packed rows: uint64 words)."""
        return "uint64" if self.packed_words else self.dtype

    def columns(self, n: int) -> int:
        """The fewest columns the kernels' matrix has for n vertices (packed: words)."""
        return -(-n // WORD_BITS) if self.packed_words else n

    @property
    def matrices(self) -> str:
        """The matrix parameters of every kernel, driver and runtime: the distances, and the predecessors."""
        return "a, pred" if self.predecessors else "a"


_HEAD = '''"""Generated by polyfw: tile kernels for $semiring in $dtype, register block $rows x $columns, k unrolled
$unroll times, C prefetched $near blocks ahead into L1 and $far into L2, products on micro-panels by
$panel_pass ($isa)."""
import numpy as np
from numba import get_thread_id, njit, prange

from codegen.intrinsics import (cycles, fetch_add, prange_only, prefetch, prefetch_ahead, prefetch_ahead_l2,
                                semiring_block, semiring_keep)

micro_product = semiring_block($rows, $vectors, "$plus", "$times", $unroll)
panel_product = semiring_block($rows, $vectors, "$plus", "$times", $unroll, panels=True)
keep = semiring_keep("$plus")


@njit(cache=$cache, inline="always")
def note_negative_pivot(a, k, i0, i1, j0, j1, status):
    """A pivot that improves on itself (min-plus: a negative cycle) breaks the relaxed model."""
    if i0 <= k and k < i1 and j0 <= k and k < j1 and $improves:
        if status[0] < 0 or k < status[0]:
            status[0] = k
'''

_POINT = '''

@njit(cache=$cache, inline="always")
def relax_point(a, k, i, j, status):
    note_negative_pivot(a, k, i, i + 1, j, j + 1, status)
    a[i, j] = $relax


@njit(cache=$cache, inline="always")
def relax_point_pred(a, pred, k, i, j, status):
    note_negative_pivot(a, k, i, i + 1, j, j + 1, status)
    through_k = $through
    if $better:
        a[i, j] = through_k
        pred[i, j] = pred[k, j]
'''

_LAYERS = '''

@njit(cache=$cache)
def relax_rows(a, k, i0, i1, j0, j1, status):
    """Layer k on rows i0..i1-1, columns j0..j1-1: register-wide column strips, then the edge.

    Both read row k before the layer writes (the strips from registers, the edge from a copy), as the
    relaxed model allows: a copy the writes cannot alias lets the edge's loop be vectorized (int16 at
    20 x 20: 4.9 us a closure against 12.7 reading row k in place).
    """
    note_negative_pivot(a, k, i0, i1, j0, j1, status)
    columns = np.uint64($columns)
    j_full = j0 + (j1 - j0) // columns * columns
    for j in range(j0, j_full, columns):
        micro_rows(a, k, i0, i1, j)
    if j_full < j1:
        row_k = np.empty($columns, a.dtype)
        for j in range(j_full, j1):
            row_k[j - j_full] = a[k, j]
        for i in range(i0, i1):
            a_ik = a[i, k]
            for j in range(j_full, j1):
                a[i, j] = $relax


@njit(cache=$cache)
def relax_layers(a, k0_, k1_, i0_, i1_, j0_, j1_, status):
    """The nest's own order (k outermost): right for any tile-layer; used for I."""
    i0, i1, j0, j1 = np.uint64(i0_), np.uint64(i1_), np.uint64(j0_), np.uint64(j1_)
    for k in range(np.uint64(k0_), np.uint64(k1_)):
        relax_rows(a, k, i0, i1, j0, j1, status)
'''

_PRODUCT = '''

@njit(cache=$cache)
def holds_no_path(a, i0, i1, j0, j1):
    """Whether every entry of a[i0:i1, j0:j1] is 'no path' ($no_path).

    (x) with no path gives no path, so a product with such a block changes
    nothing; on a sparse graph whole blocks stay so for many layers (more with a
    banded vertex order), and skipping them is the sparse graph's speed-up. In
    int32 and int16 with negative edges, no path plus an edge can sink just below
    INF (solve puts such values back to INF), which a skip only leaves at INF.
    A block with a path is found in its first row with one (at once when dense). A row is
    read whole as one or-reduction over unsigned indices, which LLVM vectorizes: 3-10x the
    early-exit scan's speed on an empty 128 x 128 block (AVX2 Zen 3), where a sparse graph's
    skipped tile-layers spend their time.
    """
    for i in range(i0, i1):
        found = False
        for j in range(np.uint64(j0), np.uint64(j1)):
            found |= $found
        if found:
            return False
    return True


@njit(cache=$cache)
def relax_product(a, k0_, k1_, i0_, i1_, j0_, j1_, status):
    """A DD or SD tile-layer, or the layers a task runs as one product (schedules.layer_products),
    reading its operands in place."""
    relax_panels(a, a[0, :0], 0, 0, 0, k0_, k1_, i0_, i1_, j0_, j1_, status)


@njit(cache=$cache)
def relax_panels(a, panels, a_at, b_at, stride, k0_, k1_, i0_, i1_, j0_, j1_, status):
    """The product, its full register blocks reading A and B from the micro-panels pack_operands wrote at
    a_at and b_at (stride > 0: the panels' depth), or in place (stride 0).

    The k range is looked at $span layers at a time: a span one of whose operand blocks
    holds no path at all is skipped, since its product would only offer no path (see
    holds_no_path); the spans between skipped ones run as block_products of up to $depth
    layers in place, $panel_depth on micro-panels, the register tiles of C kept across all of them.
    """
    depth = $panel_depth if stride > 0 else $depth
    first = k0_
    for s0 in range(k0_, k1_, $span):
        s1 = min(s0 + $span, k1_)
        if holds_no_path(a, i0_, i1_, s0, s1) or holds_no_path(a, s0, s1, j0_, j1_):
            for d0 in range(first, s0, depth):
                block_product(a, panels, a_at, b_at, stride, k0_, d0, min(d0 + depth, s0), i0_, i1_, j0_, j1_,
                              status)
            first = s1
    for d0 in range(first, k1_, depth):
        block_product(a, panels, a_at, b_at, stride, k0_, d0, min(d0 + depth, k1_), i0_, i1_, j0_, j1_, status)


@njit(cache=$cache)
def block_product(a, panels, a_at_, b_at_, stride_, origin, k0_, k1_, i0_, i1_, j0_, j1_, status):
    """The product itself: full register blocks, narrower blocks on the edges.

    Rows left below the last full block run as a few blocks of fewer rows (rows_below), whole vectors left
    right of the last full strip as a block of fewer vectors, and the last
    columns short of a vector through the nest's order. With panels (stride > 0) the full
    blocks read them from layer k0 - origin on; the edges read in place.
    """
    k0, i0, i1, j0, j1 = np.uint64(k0_), np.uint64(i0_), np.uint64(i1_), np.uint64(j0_), np.uint64(j1_)
    depth = np.uint64(k1_) - k0
    rows, columns, width = np.uint64($rows), np.uint64($columns), np.uint64($width)
    stride, below = np.uint64(stride_), np.uint64(k0_ - origin)
    a_at, b_at = np.uint64(a_at_) + below * rows, np.uint64(b_at_) + below * columns
    i_full = i0 + (i1 - i0) // rows * rows
    j_full = j0 + (j1 - j0) // columns * columns
    # block rows outer (on panels, where the pass says so): each row of C is read as one stream, B's
    # micro-panels come from L2; else column strips outer: B's strip (depth x columns) stays in L1 while
    # the register blocks go down it, C's lines are prefetched (codegen.intrinsics.prefetch_ahead), and,
    # in place, the next strip's B rows a share per block
    line, near, far = np.uint64($line), np.uint64($near), np.uint64($far)
    blocks = max((i_full - i0) // rows, np.uint64(1))
    b_ahead = (depth + blocks - np.uint64(1)) // blocks  # next strip's B rows per block
    if stride > 0 and $rows_outer:
        for i in range(i0, i_full, rows):
            for j in range(j0, j_full, columns):
                panel_product(a, i, j, panels, a_at + (i - i0) * stride, b_at + (j - j0) * stride, depth)
        for j in range(j0, j_full, columns):
            rows_below(a, i_full, i1, j, k0, depth, np.uint64($vectors))
    else:
        for j in range(j0, j_full, columns):
            b_row = k0
            for i in range(i0, i_full, rows):
                prefetch_ahead(a, i, j, i0, i_full, j_full, rows, columns, near, line)
                prefetch_ahead_l2(a, i, j, i0, i_full, j_full, rows, columns, far, line)
                if stride > 0:
                    panel_product(a, i, j, panels, a_at + (i - i0) * stride, b_at + (j - j0) * stride, depth)
                    continue
                if j + columns < j_full:
                    for k in range(b_row, min(b_row + b_ahead, k0 + depth)):
                        for q in range(np.uint64(0), columns, line):
                            prefetch(a, k, j + columns + q)
                    b_row += b_ahead
                micro_product(a, i, j, k0, depth)
            rows_below(a, i_full, i1, j, k0, depth, np.uint64($vectors))
    j_vectors = j_full + (j1 - j_full) // width * width
    if j_vectors > j_full:
        for i in range(i0, i_full, rows):
            edge_block(a, i, j_full, k0, depth, rows, (j_vectors - j_full) // width)
        rows_below(a, i_full, i1, j_full, k0, depth, (j_vectors - j_full) // width)
    if j_vectors < j1:
        relax_layers(a, k0_, k1_, i0_, i1_, j_vectors, j1_, status)


@njit(cache=$cache)
def pack_rows(a, panels, at, stride, k0, k1, i0, i1):
    """A's rows i0.. in micro-panels of $rows (the full register blocks' rows), k-major: row i0 + r at layer k
    goes to panels[at + (i - i0) * stride + (k - k0) * $rows + r]. (Every argument is uint64.)"""
    rows = np.uint64($rows)
    for i in range(i0, i0 + (i1 - i0) // rows * rows, rows):
        base = at + (i - i0) * stride - k0 * rows
        for k in range(k0, k1):
            $pack_rows

@njit(cache=$cache)
def pack_columns(a, panels, at, stride, k0, k1, j0, j1):
    """B's columns j0.. in micro-panels of $columns (the full register blocks' columns): column j0 + c at
    layer k goes to panels[at + (j - j0) * stride + (k - k0) * $columns + c]. (Every argument is uint64.)"""
    columns = np.uint64($columns)
    for j in range(j0, j0 + (j1 - j0) // columns * columns, columns):
        base = at + (j - j0) * stride - k0 * columns
        for k in range(k0, k1):
            for c in range(columns):
                panels[base + k * columns + c] = a[k, j + c]


@njit(cache=$cache)
def publish_operands(a, panels, kb, ib, jb, layers, tile, n):
    """The dataflow runtime's packing (schedules.packing.published_operand_problem): once a call has run
    layers kb..kb+layers-1 of block (ib, jb) off the diagonal, the block is A of every product of layer jb
    when jb is among them, and B of every product of layer ib when ib is; it is copied then into the slot
    of micro-panels those products read (published_slot), laid out as pack_operands lays a stage's out."""
    if ib == jb:
        return
    i0, i1 = np.uint64(tile * ib), np.uint64(min(tile * ib + tile, n))
    j0, j1 = np.uint64(tile * jb), np.uint64(min(tile * jb + tile, n))
    side = np.uint64(tile)
    if kb <= jb and jb < kb + layers:
        pack_rows(a, panels, np.uint64(published_slot(jb, ib, tile, n, False)), side, j0, j1, i0, i1)
    if kb <= ib and ib < kb + layers:
        pack_columns(a, panels, np.uint64(published_slot(ib, jb, tile, n, True)), side, i0, i1, j0, j1)


@njit(cache=$cache, inline="always")
def published_slot(layer, block, tile, n, columns):
    """Where layer `layer`'s operand from block row (A) or column (B, `columns`) `block` is published: one
    tile x tile slot each, A's of every layer first, so that a product's passes read consecutive memory."""
    q = (n + tile - 1) // tile
    return ((q * q if columns else 0) + layer * q + block) * tile * tile


@njit(cache=$cache)
def relax_published(a, panels, tile, n, k0, k1, i0, i1, j0, j1, status):
    """A product whose operand blocks' publishers copied them (publish_operands), a layer at a time."""
    for k in range(k0, k1, tile):
        layer = k // tile
        relax_panels(a, panels, published_slot(layer, i0 // tile, tile, n, False),
                     published_slot(layer, j0 // tile, tile, n, True), tile, k, min(k + tile, k1), i0, i1, j0, j1,
                     status)


@njit(parallel=prange_only(), cache=$cache)
def pack_operands(a, calls, n_calls, tile, n, panels):
    """Copy the operand blocks of a packed stage's products (schedules.packing) into micro-panels, in
    parallel; mark each product call that reads them PANELS. Returns the panels (grown when too small)
    and their depth.

    Block row ib's A operand has slot ib, block column jb's B operand slot q + jb; a slot takes the
    first product's layers. A product whose operands another layer range took reads in place (the proof
    makes both exact).
    """
    q = (n + tile - 1) // tile
    stride = 0
    for c in range(n_calls):
        if calls[c, 0] == PANELS:  # a replayed stage's table, marked by its first run
            calls[c, 0] = PRODUCT
        if calls[c, 0] == PRODUCT:
            stride = max(stride, min(tile * calls[c, 4], n - tile * calls[c, 1]))
    first_layer = np.full(2 * q, -1, dtype=np.int64)
    layers = np.zeros(2 * q, dtype=np.int64)
    readers = np.zeros(2 * q, dtype=np.int64)
    for c in range(n_calls):
        if calls[c, 0] != PRODUCT:
            continue
        kb, ib, jb, count = calls[c, 1], calls[c, 2], calls[c, 3], calls[c, 4]
        for slot in (ib, q + jb):
            if first_layer[slot] < 0:
                first_layer[slot], layers[slot] = kb, count
        if (first_layer[ib] == kb) & (layers[ib] == count) & (first_layer[q + jb] == kb) & (layers[q + jb] == count):
            calls[c, 0] = PANELS
            readers[ib] += 1
            readers[q + jb] += 1
    if panels.shape[0] < 2 * q * tile * stride:
        panels = np.empty(2 * q * tile * stride, dtype=a.dtype)
        # pages mapped by this thread first: threads faulting fresh pages in together wait on each
        # other (tiling.pages.mapped_empty); 512 elements stay within a 4 KiB page's reach
        for first in range(0, panels.shape[0], 512):
            panels[first] = 0
    for slot in prange(2 * q):
        if readers[slot] > 0:
            block = slot if slot < q else slot - q
            k0, b0 = tile * first_layer[slot], tile * block
            k1, b1 = min(k0 + tile * layers[slot], n), min(b0 + tile, n)
            bounds = (np.uint64(slot * tile * stride), np.uint64(stride), np.uint64(k0), np.uint64(k1),
                      np.uint64(b0), np.uint64(b1))
            # a block with no path is skipped by every product that reads it (holds_no_path): left unpacked
            if slot < q:
                if not holds_no_path(a, b0, b1, k0, k1):
                    pack_rows(a, panels, *bounds)
            elif not holds_no_path(a, k0, k1, b0, b1):
                pack_columns(a, panels, *bounds)
    return panels, stride
'''
_CLOSURE = '''

@njit(cache=$cache)
def relax_closure(a, k0_, k1_, i0_, i1_, j0_, j1_, status):
    """A pivot tile-layer (I: k, i and j over one block) as blocked FW over sub-blocks of $side.

    Each sub-pivot is closed in the nest's order, its rows and columns are
    products with it, the rest products of those: the classic schedule, which
    the relaxed model proves for every tile size, inside the block. All but
    1/(block/$side)^2 of the work runs in the product kernel instead of the
    nest order's load and store per relaxation. A negative cycle is still seen:
    every k is a sub-pivot's layer, applied to a range holding (k, k). Bounds
    that are not one block's (no I tile-layer has them) run in the nest's order.
    """
    if i0_ != k0_ or j0_ != k0_ or i1_ != k1_ or j1_ != k1_:
        relax_layers(a, k0_, k1_, i0_, i1_, j0_, j1_, status)
        return
    for s0 in range(k0_, k1_, $side):
        s1 = min(s0 + $side, k1_)
        relax_layers(a, s0, s1, s0, s1, s0, s1, status)
        for o0, o1 in ((k0_, s0), (s1, k1_)):
            if o0 < o1:
                relax_product(a, s0, s1, s0, s1, o0, o1, status)
                relax_product(a, s0, s1, o0, o1, s0, s1, status)
        for r0, r1 in ((k0_, s0), (s1, k1_)):
            for c0, c1 in ((k0_, s0), (s1, k1_)):
                if r0 < r1 and c0 < c1:
                    relax_product(a, s0, s1, r0, r1, c0, c1, status)
'''
_PREDECESSORS = '''

@njit(cache=$cache)
def relax_layers_pred(a, pred, k0_, k1_, i0_, i1_, j0_, j1_, status):
    """The nest's order with predecessors: a strict improvement through k takes pred[k, j]."""
    k0, k1, i0, i1 = np.uint64(k0_), np.uint64(k1_), np.uint64(i0_), np.uint64(i1_)
    j0, j1 = np.uint64(j0_), np.uint64(j1_)
    for k in range(k0, k1):
        note_negative_pivot(a, k, i0, i1, j0, j1, status)
        for i in range(i0, i1):
            a_ik = a[i, k]
            for j in range(j0, j1):
                through_k = $relax_direct
                if $better:
                    a[i, j] = through_k
                    pred[i, j] = pred[k, j]


block_pred = semiring_block($rows, $vectors, "$plus", "$times", predecessors=True)


@njit(cache=$cache)
def relax_product_pred(a, pred, k0_, k1_, i0_, i1_, j0_, j1_, status):
    """A DD or SD tile-layer (or a task's layer product) with predecessors: register blocks keep C and its
    predecessors over every k of the call, column strips outer; the rows below and the columns right of the
    last full block then take the nest's order."""
    k0, i0, i1, j0, j1 = np.uint64(k0_), np.uint64(i0_), np.uint64(i1_), np.uint64(j0_), np.uint64(j1_)
    depth = np.uint64(k1_) - k0
    rows, columns = np.uint64($rows), np.uint64($columns)
    i_full = i0 + (i1 - i0) // rows * rows
    j_full = j0 + (j1 - j0) // columns * columns
    for j in range(j0, j_full, columns):
        for i in range(i0, i_full, rows):
            block_pred(a, pred, i, j, k0, depth)
    if i_full < i1 and j0 < j_full:
        relax_layers_pred(a, pred, k0_, k1_, i_full, i1_, j0_, j_full, status)
    if j_full < j1:
        relax_layers_pred(a, pred, k0_, k1_, i0_, i1_, j_full, j1_, status)
'''


_TASKS = '''

# relax_product's and relax_closure's numbers in a task list (TILE_KERNEL_NUMBERS in polyfw's
# codegen.kernels); others run relax_layers; PANELS: a product reading its packed operands
PRODUCT, CLOSURE, PANELS = $product, $closure, $panels


@njit(cache=$cache)
def put(rows, count, first, second, third, fourth, fifth):
    """Write row `count` of an int64 table (TABLE_COLUMNS wide); return the table, doubled first when full.

    The copy is a loop: a slice assignment here took 6 s to compile.
    """
    if count == rows.shape[0]:
        grown = np.empty((2 * count, $columns), dtype=np.int64)
        for row in range(count):
            for column in range($columns):
                grown[row, column] = rows[row, column]
        rows = grown
    rows[count, 0] = first
    rows[count, 1] = second
    rows[count, 2] = third
    rows[count, 3] = fourth
    rows[count, 4] = fifth
    return rows


@njit(cache=$cache)
def extend(rows, count, start, kernel, kb, ib, jb):
    """Add layer kb of block (ib, jb) to the layer product whose calls begin at row `start`
    (schedules.layer_products): the last row takes one more layer when it is that product's, of the
    same kernel and block, and ends at kb; else a new row. Returns the table and its row count."""
    if count > start:
        last = count - 1
        if (rows[last, 0] == kernel) & (rows[last, 2] == ib) & (rows[last, 3] == jb) & \
                (rows[last, 1] + rows[last, 4] == kb):
            rows[last, 4] += 1
            return rows, count
    return put(rows, count, kernel, kb, ib, jb, 1), count + 1


@njit(cache=$cache, inline="always")
def tile_role(kb, ib, jb):
    """The tile-layer's role as an index into PROFILE_SLOTS (schedules.tree.ROLE_CONDITIONS)."""
    if ib == kb:
        return 0 if jb == kb else 1
    return 2 if jb == kb else 3


@njit(cache=$cache)
def take_tasks($matrices, status, calls, starts, busy, next_task, tile, n, q, stride, panels, profile, thread):
    """A thread's share of a stage: the next task from the shared counter until none is left, its calls in
    order."""
    t = fetch_add(next_task, 0, 1)
    while t < busy:
        for c in range(starts[t], starts[t + 1]):
            k0, i0, j0 = tile * calls[c, 1], tile * calls[c, 2], tile * calls[c, 3]
            k1, i1, j1 = min(k0 + tile * calls[c, 4], n), min(i0 + tile, n), min(j0 + tile, n)
            started = cycles()
            $dispatch
            profile[thread, tile_role(calls[c, 1], calls[c, 2], calls[c, 3])] += cycles() - started
        t = fetch_add(next_task, 0, 1)


@njit(parallel=prange_only(), cache=$cache)
def run_tasks($matrices, status, calls, n_calls, tasks, n_tasks, tile, n, profile, panels, packed):
    """One stage: its tasks in parallel, the tile-layers of each in order; returns `panels`, grown when the
    stage packed more than they held.

    calls[c] = (kernel, kb, ib, jb, layers): layers kb .. kb + layers - 1 of block (ib, jb), as one
    call (more than one: a layer product, schedules.layer_products); tasks[t, 0] = index of task t's first call.
    Empty tasks are dropped first: isl puts the task mark above the guards, so
    e.g. classic's SD band records Q^2 tasks of which 2Q - 2 hold a tile-layer,
    and prange's even split of all of them gave one thread most of the work.
    Each thread then takes the next task from a shared counter: tasks differ in
    cost (a tile-layer of a sparse graph's empty block is skipped at once), and
    a fixed split left one thread waiting for the other up to a fifth of a run.
    A stage of one task (or any stage on one thread) runs on the calling thread: a prange of one
    iteration still woke the others, ~55 us (passive waiting, Zen 4).
    profile[thread, role] gains the cycles of each tile-layer, profile[0, $stage_slot]
    the stage's (a few cycles a tile-layer: it is always on). packed: the stage is under a
    PACK_MARK (schedules.packing), and its products may read their operands from micro-panels.
    """
    stage_started = cycles()
    q, stride = (n + tile - 1) // tile, 0
$pack    starts = np.empty(n_tasks + 1, dtype=np.int64)
    busy = 0
    for t in range(n_tasks):
        if (tasks[t + 1, 0] if t + 1 < n_tasks else n_calls) > tasks[t, 0]:
            starts[busy] = tasks[t, 0]
            busy += 1
    starts[busy] = n_calls
    next_task = np.zeros(1, dtype=np.int64)
    if min(profile.shape[0], busy) <= 1:
        take_tasks($matrices, status, calls, starts, busy, next_task, tile, n, q, stride, panels, profile, 0)
    else:
        # one iteration per thread Numba may start (profile has a row for each): every thread's first
        # one takes tasks until none is left, the others find none (get_num_threads blocks caching)
        for _ in prange(min(profile.shape[0], busy)):
            take_tasks($matrices, status, calls, starts, busy, next_task, tile, n, q, stride, panels, profile,
                       get_thread_id())
    profile[0, $stage_slot] += cycles() - stage_started
    return panels
'''
#: run_tasks' packing, in a kernel module with micro-panels (the products reading them: _PANEL_CALL)
_PACK = """    if packed:
        pack_started = cycles()
        panels, stride = pack_operands(a, calls, n_calls, tile, n, panels)
        profile[0, $pack_slot] += cycles() - pack_started
"""
_PANEL_CALL = """if calls[c, 0] == PANELS:
    relax_panels(a, panels, calls[c, 2] * tile * stride, (q + calls[c, 3]) * tile * stride, stride, $bounds, status)
else:
"""

#: a task list's call of its tile kernel, numbered $kernel, on bounds $bounds (k0, k1, i0, i1, j0, j1),
#: by predecessor mode: one declaration, rendered into run_tasks, the dataflow runtime and the MPI batches
_DISPATCH = {
    False: """if $kernel == PRODUCT:
    relax_product(a, $bounds, status)
elif $kernel == CLOSURE:
    relax_closure(a, $bounds, status)
else:
    relax_layers(a, $bounds, status)""",
    True: """if $kernel == PRODUCT:
    relax_product_pred(a, pred, $bounds, status)
else:
    relax_layers_pred(a, pred, $bounds, status)""",
}
#: what _DISPATCH calls, by predecessor mode: the names a runtime imports from the kernel module
DISPATCHED = {False: ("PRODUCT", "CLOSURE", "relax_layers", "relax_product", "relax_closure"),
              True: ("PRODUCT", "relax_layers_pred", "relax_product_pred")}


def dispatch_source(predecessors: bool, kernel: str, bounds: str) -> str:
    """The call of the tile kernel numbered `kernel` (an expression) on `bounds` (six expressions, or
    one naming them), as lines (DISPATCHED[predecessors] names what they call)."""
    return fill(_DISPATCH[predecessors], bounds=bounds, kernel=kernel)


def tile_kernel(role: str | None, predecessors: bool) -> str:
    """The tile kernel a tile-layer with this role mark (None: none) runs."""
    kernel = ROLE_KERNELS.get(role, "relax_layers")
    return PREDECESSOR_KERNELS[kernel] if predecessors else kernel


def _strip_columns(options: KernelOptions) -> int:
    """Columns of the nest-order kernel's strips (I tile-layers): two vectors, whatever the block."""
    return 2 * vector_width(np.dtype(options.dtype).itemsize)


def _edge_source(options: KernelOptions, cache: bool) -> str:
    """edge_block(a, i, j, k0, depth, rows, vectors): the register blocks the product's edges need, full-row
    blocks of fewer than V vectors and blocks of 1, 2, 4 .. rows (powers of two below R) of 1..V vectors;
    and rows_below, which runs the rows left below the last full block as such blocks, one per set bit of
    their count, so that B is read a few times for them, not once a row (one-row blocks cost int32
    tile-layers of 256 a tenth of their time where 256 is no multiple of R: AVX-512 Zen 4)."""
    ring = semiring(options.semiring)
    rows, vectors = options.register_block[0], options.vectors
    parts = [1 << p for p in range(rows.bit_length()) if 1 << p < rows]
    shapes = [(r, v) for r in parts for v in range(1, vectors + 1)] + [(rows, v) for v in range(1, vectors)]
    lines = [""]
    lines += [f'edge_{r}x{v} = semiring_block({r}, {v}, "{ring.plus.name}", "{ring.times.name}")' for r, v in shapes]
    lines += ["", "", f"@njit(cache={cache}, inline=\"always\")", "def edge_block(a, i, j, k0, depth, rows, vectors):"]
    for number, (r, v) in enumerate(shapes):
        lines.append(f"    {'if' if number == 0 else 'elif'} rows == {r} and vectors == {v}:")
        lines.append(f"        edge_{r}x{v}(a, i, j, k0, depth)")
    if not shapes:  # a 1 x 1 block leaves no edge
        lines.append("    pass")
    lines += ["", "", f"@njit(cache={cache}, inline=\"always\")", "def rows_below(a, i, i1, j, k0, depth, vectors):",
              "    part = np.uint64(" + str(parts[-1] if parts else 0) + ")",
              "    while part > 0:",
              "        if (i1 - i) & part:",
              "            edge_block(a, i, j, k0, depth, part, vectors)",
              "            i += part",
              "        part >>= np.uint64(1)"]
    return "\n".join(lines) + "\n"


def _micro_rows_source(options: KernelOptions, cache: bool) -> str:
    """One layer k on a run of rows and a strip of columns: row k's strip held in registers."""
    columns = _strip_columns(options)
    lines = ["", "", f"@njit(cache={cache}{FASTMATH})", "def micro_rows(a, k, i0, i1, j0):"]
    lines += [f"    j{q} = j0 + np.uint64({q})" for q in range(columns)]
    lines += [f"    b{q} = a[k, j{q}]" for q in range(columns)]
    lines += ["    for i in range(i0, i1):", "        x = a[i, k]"]
    lines += [f"        a[i, j{q}] = {options.relax(f'a[i, j{q}]', 'x', f'b{q}')}" for q in range(columns)]
    return "\n".join(lines) + "\n"


def literal(value: float | int) -> str:
    """A kernel constant as Python source (infinities as numpy's)."""
    return repr(value) if np.isfinite(value) else ("-np.inf" if value < 0 else "np.inf")


def kernel_source(options: KernelOptions, cache: bool = True) -> str:
    """The kernel module for one dtype, register block and predecessor mode; `cache`: whether Numba
    keeps its machine code on disk (codegen.assembly compiles afresh, to read the assembly)."""
    rows, columns = options.register_block
    ring = semiring(options.semiring)
    bounds = "k0, k1, i0, i1, j0, j1"
    dispatch = dispatch_source(options.predecessors, "calls[c, 0]", bounds)
    panels = options.has_panels
    if panels:
        dispatch = fill(_PANEL_CALL, bounds=bounds) + textwrap.indent(dispatch, "    ")
    tasks = fill(_TASKS, matrices=options.matrices, dispatch=dispatch, cache=cache, columns=TABLE_COLUMNS,
                 product=TILE_KERNEL_NUMBERS["relax_product"], closure=TILE_KERNEL_NUMBERS["relax_closure"],
                 panels=PANELS, stage_slot=PROFILE_SLOTS.index("stages"),
                 pack=fill(_PACK, pack_slot=PROFILE_SLOTS.index("packing")) if panels else "")
    if options.packed_words:
        return packed_kernel_source(options.packed_words, tasks, cache)
    source = fill(_HEAD, dtype=options.dtype, rows=rows, columns=columns, vectors=options.vectors, isa=target_isa(),
                  unroll=options.unroll, near=options.prefetch[0], far=options.prefetch[1],
                  panel_pass=pass_words(options.panel_pass),
                  semiring=ring.name, plus=ring.plus.name, times=ring.times.name, cache=cache,
                  improves=ring.better(ring.combine("a[k, k]", "a[k, k]"), "a[k, k]"))
    source += fill(_POINT, relax=options.relax("a[i, j]", "a[i, k]", "a[k, j]"), cache=cache,
                   through=options.through("a[i, k]", "a[k, j]"), better=options.better("through_k", "a[i, j]"))
    source += fill(_LAYERS, relax=options.relax("a[i, j]", "a_ik", "row_k[j - j_full]"), columns=_strip_columns(options),
                   cache=cache)
    source += tasks
    if options.predecessors:
        return source + fill(_PREDECESSORS, relax_direct=options.through("a_ik", "a[k, j]"), cache=cache,
                             better=options.better("through_k", "a[i, j]"), rows=rows, columns=columns,
                             vectors=options.vectors, plus=ring.plus.name, times=ring.times.name)
    source += _micro_rows_source(options, cache) + _edge_source(options, cache)
    itemsize = np.dtype(options.dtype).itemsize
    line = 64 // itemsize  # elements per cache line
    near, far = options.prefetch
    return source + fill(_PRODUCT, rows=rows, columns=columns, line=line, vectors=options.vectors, near=near, far=far,
                         span=SKIP_SPAN, depth=max(SKIP_SPAN, strip_depth(columns, itemsize)),
                         panel_depth=max(SKIP_SPAN, options.panel_pass[1] * strip_depth(columns, itemsize)),
                         rows_outer=options.panel_pass[0],
                         width=columns // options.vectors, cache=cache, no_path=ring.no_path(options.dtype),
                         found=ring.better("a[i, j]", literal(ring.no_path(options.dtype))),
                         pack_rows="\n".join(f"panels[base + k * rows + np.uint64({r})] = a[i + np.uint64({r}), k]"
                                              for r in range(rows))) \
        + fill(_CLOSURE, side=CLOSURE_BLOCK, cache=cache)


#: Numba's type of a run's profile array (threads x PROFILE_SLOTS cycles)
PROFILE = "int64[:, ::1]"


def kernel_signatures(options: KernelOptions) -> dict[str, str]:
    """Explicit signatures, so no call can silently compile another specialisation.

    Callees come before their callers: a caller compiled first would compile
    them implicitly, with the wrong vectorizer settings.
    """
    matrix = f"{options.matrix_dtype}[:, ::1]"
    bounds = ", ".join(["int64"] * 6)
    layers = f"void({matrix}, {bounds}, int64[::1])"
    table = "int64[:, ::1], int64"
    record = {"put": f"int64[:, ::1](int64[:, ::1], {', '.join(['int64'] * (1 + TABLE_COLUMNS))})",
              "extend": f"Tuple((int64[:, ::1], int64))(int64[:, ::1], {', '.join(['int64'] * 6)})"}
    panels = f"{options.matrix_dtype}[::1]"
    tasks = f"{panels}({matrix}, int64[::1], {table}, {table}, int64, int64, {PROFILE}, {panels}, boolean)"
    take = (f"void({matrix}{', int32[:, ::1]' if options.predecessors else ''}, int64[::1], int64[:, ::1], int64[::1], "
            f"int64, int64[::1], int64, int64, int64, int64, {panels}, {PROFILE}, int64)")
    if options.packed_words:
        words = ", ".join(["uint64"] * 5)
        tables = "uint64[:, :, ::1]"
        return {**record, "micro_or_bits": f"void({matrix}, {', '.join(['uint64'] * 4)})",
                "micro_tables": f"void({matrix}, {tables}, uint64, uint64, uint64)",
                "micro_or_lookups": f"void({matrix}, {tables}, uint64, uint64, uint64)",
                "or_word": f"void({matrix}, {tables}, {', '.join(['uint64'] * 8)})",
                "or_rows": f"void({matrix}, {words}, uint64, uint64)", "relax_layers": layers,
                "relax_closure": layers, "relax_product": layers, "take_tasks": take, "run_tasks": tasks}
    if options.predecessors:
        pred = f"void({matrix}, int32[:, ::1], {bounds}, int64[::1])"
        return {**record, "relax_layers_pred": pred, "relax_product_pred": pred, "take_tasks": take,
                "run_tasks": f"{panels}({matrix}, int32[:, ::1], int64[::1], {table}, {table}, int64, int64, {PROFILE}, "
                             f"{panels}, boolean)"}
    u = ", ".join(["uint64"] * 4)
    at = ", ".join(["int64"] * 3)  # a panel call's a_at, b_at and stride
    return {**record, "micro_rows": f"void({matrix}, {u})",
            "relax_rows": f"void({matrix}, {u}, uint64, int64[::1])",
            "relax_layers": layers, "holds_no_path": f"boolean({matrix}, {', '.join(['int64'] * 4)})",
            "block_product": f"void({matrix}, {panels}, {at}, int64, {bounds}, int64[::1])",
            "relax_panels": f"void({matrix}, {panels}, {at}, {bounds}, int64[::1])",
            "relax_product": layers, "relax_closure": layers,
            "pack_rows": f"void({matrix}, {panels}, {', '.join(['uint64'] * 6)})",
            "pack_columns": f"void({matrix}, {panels}, {', '.join(['uint64'] * 6)})",
            "pack_operands": f"Tuple(({panels}, int64))({matrix}, {table}, int64, int64, {panels})",
            "publish_operands": f"void({matrix}, {panels}, {', '.join(['int64'] * 6)})",
            "relax_published": f"void({matrix}, {panels}, int64, int64, {bounds}, int64[::1])",
            "take_tasks": take, "run_tasks": tasks}
