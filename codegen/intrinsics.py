"""LLVM code the CPU tile kernels call, written as Numba intrinsics.

Numba exposes neither prefetch nor vector types. The min-plus register
block is emitted as vector IR directly: left to Numba, an unrolled block of
scalars needs the SLP vectorizer (off by default, PERFORMANCE-NOTES trap 2),
which took 5-15 s per dtype to compile and packed some shapes into gathers
and scalar code.
"""
from __future__ import annotations

from functools import cache

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

from tiling.code_cache import environment
from tiling.semirings import OPERATIONS

_I8_POINTER = ir.IntType(8).as_pointer()
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
#: (bytes per vector register, vector registers) of the ISAs the kernels are shaped for
ISAS = {"avx512": (64, 32), "avx2": (32, 16), "sse2": (16, 16), "neon": (16, 32)}


#: x86 ISAs from the widest down: a machine runs the code of every ISA after its own
X86_ISAS = ("avx512", "avx2", "sse2")


@cache
def host_isa() -> str:
    """The widest ISA of ISAS this machine executes, from LLVM's view of the host."""
    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        return "avx512"
    if features.get("avx2"):
        return "avx2"
    return "neon" if features.get("neon") else "sse2"


@cache
def target_isa() -> str:
    """The ISA the kernels are shaped for: the host's, or POLYFW_ISA's (narrower code runs on a
    wider machine: how AVX2 and SSE2 shapes are tested on an AVX-512 one)."""
    forced = environment("POLYFW_ISA")
    if not forced:
        return host_isa()
    if forced not in ISAS:
        raise ValueError(f"POLYFW_ISA={forced!r} is not one of {', '.join(ISAS)}")
    if forced not in runnable_isas():
        raise ValueError(f"POLYFW_ISA={forced!r}: this machine ({host_isa()}) runs only "
                         f"{', '.join(runnable_isas())}")
    return forced


def runnable_isas() -> tuple[str, ...]:
    """The host's ISA and every narrower one whose code it executes."""
    host = host_isa()
    return X86_ISAS[X86_ISAS.index(host):] if host in X86_ISAS else (host,)


def narrower_isas() -> tuple[str, ...]:
    """The ISAs this machine executes below its own: `make test` runs the ISA-dependent tests under
    each, so a failure on a narrower machine shows on a wider one."""
    return runnable_isas()[1:]


def vector_registers(isa: str | None = None) -> int:
    """Vector registers of `isa` (default: the target ISA)."""
    return ISAS[isa or target_isa()][1]


def _prefetch_call(context, builder, signature, args, write: int, locality: int) -> None:
    """llvm.prefetch of the line that holds args[0][args[1:]] (an array and one index per dimension)."""
    array_type = signature.args[0]
    array_value = context.make_array(array_type)(context, builder, args[0])
    pointer = cgutils.get_item_pointer(context, builder, array_type, array_value, list(args[1:]))
    function = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [_I8_POINTER, _I32, _I32, _I32]), "llvm.prefetch.p0")
    # (address, write, locality, data cache)
    builder.call(function, [builder.bitcast(pointer, _I8_POINTER), _I32(write), _I32(locality), _I32(1)])


def _prefetch(locality: int):
    """An intrinsic prefetch(array, i, j) asking for array[i, j]'s line for writing, `locality`
    3 = into L1 (kept in every level), 2 = into L2."""
    @intrinsic
    def prefetch(typingctx, array, i, j):
        def codegen(context, builder, signature, args):
            _prefetch_call(context, builder, signature, args, 1, locality)
            return context.get_dummy_value()

        return types.void(array, i, j), codegen

    return prefetch


#: array[i, j]'s line into L1 (the next register block's C; B rows of the next strip)
prefetch = _prefetch(3)
#: array[i, j]'s line into L2 (C further ahead: into L1 it would push B's strip out)
prefetch_l2 = _prefetch(2)


@intrinsic
def prefetch_read(typingctx, array, i):
    """Ask for the line of a one-dimensional array[i] into L1, to be read: a graph search's next rows,
    which no hardware prefetcher can guess (each starts where the row offsets say)."""
    def codegen(context, builder, signature, args):
        _prefetch_call(context, builder, signature, args, 0, 3)
        return context.get_dummy_value()

    return types.void(array, i), codegen


def _ahead(fetch):
    @njit(inline="always")
    def ahead_of(a, i, j, i0, i_full, j_full, rows, columns, ahead, line):
        """Fetch the C lines of the register block `ahead` blocks after (i, j) in the product's
        order (down a column strip of rows i0..i_full-1, then the next strips; 0: none).
        Every argument is uint64."""
        i_next, j_next = i + ahead * rows, j
        while i_next >= i_full and j_next < j_full:
            i_next, j_next = i0 + (i_next - i_full), j_next + columns
        if ahead > 0 and j_next < j_full:
            for m in range(rows):
                for q in range(np.uint64(0), columns, line):
                    fetch(a, i_next + m, j_next + q)

    return ahead_of


#: C lines come from L3 or memory, and no hardware prefetcher guesses rows a stride apart: the
#: product asks for them a few blocks early into L2 and one block early into L1 (earlier into L1
#: they would push out B's strip)
prefetch_ahead, prefetch_ahead_l2 = _ahead(prefetch), _ahead(prefetch_l2)


@cache
def semiring_keep(plus: str):
    """An intrinsic keep(x, y): x (+) y on two scalars of one type, in the IR the register block writes
    (tiling.semirings.Operation.llvm), so that a vectorized nest-order update of a[i, j] stores its
    minimum whole (Python's min on floats let x86 turn it into a masked store)."""
    operation = OPERATIONS[plus]

    @intrinsic
    def keep(typingctx, x, y):
        if x != y or not isinstance(x, (types.Float, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            kind = signature.args[0]
            floating = isinstance(kind, types.Float)
            return operation.llvm(builder, *args, floating, floating or kind.signed)

        return x(x, y), codegen

    return keep


def vector_width(itemsize: int, isa: str | None = None) -> int:
    """Elements per vector register of `isa` (default: the target ISA)."""
    return ISAS[isa or target_isa()][0] // itemsize


def semiring_block(rows: int, vectors: int, plus: str = "min", times: str = "add", unroll: int = 1,
                   isa: str | None = None, lanes: bool = False, panels: bool = False, predecessors: bool = False):
    """An intrinsic block(a, i0, j0, k0, depth) for one rows x (vectors x width) register block.

    C = a[i0:i0+rows, j0:j0+columns] stays in registers while k runs over
    k0..k0+depth-1: C = C (+) (a[i, k] (x) a[k, j]), one broadcast of a[i, k]
    per row and one vector load of row k per vector; (+) and (x) are names of
    tiling.semirings.OPERATIONS, which write their own IR. Indices are uint64.
    int32 sums wrap at 32 bits like the cast-back sums of the other kernels
    (the INF sentinel keeps 2 INF below 2^31); int16 sums saturate (vpaddsw),
    as the other kernels clamp them (Semiring.narrow). Float comparisons are
    ordered, the selects vminps/vmaxps implement; uint8 compares unsigned.
    `unroll` k steps share one loop iteration (the rest run one a trip).
    `isa` (default: the target's) sets the vector width: narrower ISAs' blocks
    run on a wider machine, which is how their shapes are tested here.
    `lanes`: the matrix holds one graph per vector lane (codegen.batch: element
    (i, j) of lane l at column j * width + l), so a[i, k] is the vector at
    column k * width rather than a broadcast scalar; j0 is in elements.
    `panels`: block(a, i0, j0, panels, a_at, b_at, depth) reads the operands from
    micro-panels (schedules.packing) instead: the k-th step's A values are
    panels[a_at + k*rows : ... + rows], its B row panels[b_at + k*columns : ... + columns].
    `predecessors`: block(a, pred, i0, j0, k0, depth) keeps pred (int32, the matrix's shape) beside C in
    registers: where a[i, k] (x) a[k, j] is strictly better than C (the compare (+) keeps by), C takes it
    and P takes pred[k, j] (a select of each; in place, without lanes or panels).
    """
    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        element = context.get_value_type(array_type.dtype)
        floating = isinstance(array_type.dtype, types.Float)
        signed = floating or array_type.dtype.signed

        keep, combine = OPERATIONS[plus], OPERATIONS[times]

        width = vector_width(context.get_abi_sizeof(element), isa)
        vector = ir.VectorType(element, width)
        array = context.make_array(array_type)(context, builder, args[0])
        if panels:
            i0, j0, _, a_at, b_at, depth = args[1:]
            k0 = _I64(0)
            panel_base = builder.bitcast(context.make_array(signature.args[3])(context, builder, args[3]).data,
                                         _I8_POINTER)
        elif predecessors:
            i0, j0, k0, depth = args[2:]
            pred = context.make_array(signature.args[1])(context, builder, args[1])
            pred_row_bytes = cgutils.unpack_tuple(builder, pred.strides, 2)[0]
            pred_base = builder.bitcast(pred.data, _I8_POINTER)
            pred_vector = ir.VectorType(_I32, width)
        else:
            i0, j0, k0, depth = args[1:]
        row_bytes = cgutils.unpack_tuple(builder, array.strides, 2)[0]
        item_bytes = _I64(context.get_abi_sizeof(element))
        base = builder.bitcast(array.data, _I8_POINTER)

        def pointer(row, column, pointee):
            offset = builder.add(builder.mul(row, row_bytes), builder.mul(column, item_bytes))
            return builder.bitcast(builder.gep(base, [offset]), pointee.as_pointer())

        def pred_pointer(row, column):
            offset = builder.add(builder.mul(row, pred_row_bytes), builder.mul(column, _I64(4)))
            return builder.bitcast(builder.gep(pred_base, [offset]), pred_vector.as_pointer())

        def panel_pointer(index, pointee):
            return builder.bitcast(builder.gep(panel_base, [builder.mul(index, item_bytes)]), pointee.as_pointer())

        def load(where):
            return builder.load(where, align=item_bytes.constant)

        def b_vector(k, v):
            if panels:
                return load(panel_pointer(builder.add(b_at, builder.add(builder.mul(k, _I64(vectors * width)),
                                                                         _I64(v * width))), vector))
            return load(pointer(k, builder.add(j0, _I64(v * width)), vector))

        def a_value(k, m):
            if panels:
                return load(panel_pointer(builder.add(a_at, builder.add(builder.mul(k, _I64(rows)), _I64(m))), element))
            if lanes:
                return load(pointer(builder.add(i0, _I64(m)), builder.mul(k, _I64(width)), vector))
            return load(pointer(builder.add(i0, _I64(m)), k, element))

        block_pointers = [[pointer(builder.add(i0, _I64(m)), builder.add(j0, _I64(v * width)), vector)
                           for v in range(vectors)] for m in range(rows)]
        accumulators = [[cgutils.alloca_once(builder, vector) for _ in range(vectors)] for _ in range(rows)]
        for m in range(rows):
            for v in range(vectors):
                builder.store(load(block_pointers[m][v]), accumulators[m][v])
        if predecessors:
            pred_pointers = [[pred_pointer(builder.add(i0, _I64(m)), builder.add(j0, _I64(v * width)))
                              for v in range(vectors)] for m in range(rows)]
            pred_accumulators = [[cgutils.alloca_once(builder, pred_vector) for _ in range(vectors)]
                                 for _ in range(rows)]
            for m in range(rows):
                for v in range(vectors):
                    builder.store(builder.load(pred_pointers[m][v], align=4), pred_accumulators[m][v])
        undefined = ir.Constant(vector, ir.Undefined)
        lanes_from_first = ir.Constant(ir.VectorType(_I32, width), [0] * width)

        def step(k):
            row_k = [b_vector(k, v) for v in range(vectors)]
            if predecessors:
                pred_k = [builder.load(pred_pointer(k, builder.add(j0, _I64(v * width))), align=4)
                          for v in range(vectors)]
            for m in range(rows):
                broadcast = a_value(k, m)
                if not lanes:
                    broadcast = builder.shuffle_vector(builder.insert_element(undefined, broadcast, _I32(0)),
                                                       undefined, lanes_from_first)
                for v in range(vectors):
                    current = builder.load(accumulators[m][v])
                    through_k = combine.llvm(builder, broadcast, row_k[v], floating, signed)
                    if predecessors:
                        better = keep.improves(builder, through_k, current, floating, signed)
                        builder.store(builder.select(better, through_k, current), accumulators[m][v])
                        kept = builder.load(pred_accumulators[m][v])
                        builder.store(builder.select(better, pred_k[v], kept), pred_accumulators[m][v])
                        continue
                    builder.store(keep.llvm(builder, through_k, current, floating, signed), accumulators[m][v])

        unrolled = builder.udiv(depth, _I64(unroll))
        with cgutils.for_range(builder, unrolled) as loop:
            first = builder.add(k0, builder.mul(loop.index, _I64(unroll)))
            for u in range(unroll):
                step(builder.add(first, _I64(u)))
        with cgutils.for_range(builder, builder.sub(depth, builder.mul(unrolled, _I64(unroll)))) as loop:
            step(builder.add(k0, builder.add(builder.mul(unrolled, _I64(unroll)), loop.index)))
        for m in range(rows):
            for v in range(vectors):
                builder.store(builder.load(accumulators[m][v]), block_pointers[m][v], align=item_bytes.constant)
                if predecessors:
                    builder.store(builder.load(pred_accumulators[m][v]), pred_pointers[m][v], align=4)
        return context.get_dummy_value()

    if panels:
        @intrinsic
        def panel_block(typingctx, a, i0, j0, panels_, a_at, b_at, depth):
            return types.void(a, i0, j0, panels_, a_at, b_at, depth), codegen

        return panel_block

    if predecessors:
        @intrinsic
        def block_with_predecessors(typingctx, a, pred, i0, j0, k0, depth):
            return types.void(a, pred, i0, j0, k0, depth), codegen

        return block_with_predecessors

    @intrinsic
    def block(typingctx, a, i0, j0, k0, depth):
        return types.void(a, i0, j0, k0, depth), codegen

    return block


def _element_pointer(context, builder, signature, args):
    array_type = signature.args[0]
    array_value = context.make_array(array_type)(context, builder, args[0])
    return cgutils.get_item_pointer(context, builder, array_type, array_value, [args[1]])


@intrinsic
def load_acquire(typingctx, array, index):
    """array[index] read so that what its writer did before its release store is visible after."""
    def codegen(context, builder, signature, args):
        pointer = _element_pointer(context, builder, signature, args)
        return builder.load_atomic(pointer, "acquire", context.get_abi_sizeof(pointer.type.pointee))

    return array.dtype(array, index), codegen


@intrinsic
def store_release(typingctx, array, index, value):
    """array[index] = value, after everything this thread wrote before it (the level matrix's
    'this tile-layer is done')."""
    def codegen(context, builder, signature, args):
        pointer = _element_pointer(context, builder, signature, args)
        stored = context.cast(builder, args[2], signature.args[2], signature.args[0].dtype)
        builder.store_atomic(stored, pointer, "release", context.get_abi_sizeof(pointer.type.pointee))
        return context.get_dummy_value()

    return types.void(array, index, value), codegen


@intrinsic
def fetch_add(typingctx, array, index, value):
    """array[index] += value atomically; returns the value before (a ticket)."""
    def codegen(context, builder, signature, args):
        pointer = _element_pointer(context, builder, signature, args)
        added = context.cast(builder, args[2], signature.args[2], signature.args[0].dtype)
        return builder.atomic_rmw("add", pointer, added, "acq_rel")

    return array.dtype(array, index, value), codegen


def prange_only() -> dict:
    """Numba's parallel options with prange alone (a new dict each time: Numba empties the one it gets).
    Under parallel=True Numba also turns np.zeros, np.full, array expressions and reductions such as
    .sum() into parallel loops, each a parallel region of its own; under OMP_WAIT_POLICY=passive a
    region costs about 45 µs to start (2-vCPU Zen 4), more than a short search step's work."""
    return {"prange": True, "comprehension": False, "reduction": False, "inplace_binop": False, "setitem": False,
            "numpy": False, "stencil": False, "fusion": False}


@intrinsic
def pause(typingctx):
    """A spinning thread's hint to the core (x86 `pause`; nothing elsewhere)."""
    def codegen(context, builder, signature, args):
        if llvm.get_process_triple().startswith(("x86_64", "i686")):
            function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                      "llvm.x86.sse2.pause")
            builder.call(function, [])
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def yield_thread(typingctx):
    """sched_yield(): a waiting thread gives its core to whoever can use it (the other worker,
    or another process on a shared host) instead of spinning."""
    def codegen(context, builder, signature, args):
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I32, []), "sched_yield")
        builder.call(function, [])
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def compare_and_swap(typingctx, array, index, expected, new):
    """array[index] = new if it holds `expected`, atomically; True for the thread that swapped."""
    def codegen(context, builder, signature, args):
        pointer = _element_pointer(context, builder, signature, args)
        element_type = signature.args[0].dtype
        old = context.cast(builder, args[2], signature.args[2], element_type)
        value = context.cast(builder, args[3], signature.args[3], element_type)
        swapped = builder.cmpxchg(pointer, old, value, "acq_rel", "acquire")
        return builder.extract_value(swapped, 1)

    return types.boolean(array, index, expected, new), codegen


@intrinsic
def fence(typingctx):
    """A full memory barrier: this thread's earlier stores are visible to all before its later loads
    (x86 lets a load pass a store; a flag cleared and then a value read needs this between them)."""
    def codegen(context, builder, signature, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def float_bits(typingctx, value):
    """The 64 bits of a float64, as an int64 (what a compare-and-swap on a float array compares)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], _I64)

    return types.int64(types.float64), codegen


@intrinsic
def bits_float(typingctx, bits):
    """The float64 whose 64 bits these are (float_bits' inverse): a value read once as bits is
    compared as the float it is, so a compare-and-swap decides on the very value it replaces."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def cycles(typingctx):
    """The core's cycle counter (x86: rdtsc, a constant rate on these machines): cheap enough to
    stamp every tile-layer of every run, which is how a run's profile is always there to read."""
    def codegen(context, builder, signature, args):
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I64, []), "llvm.readcyclecounter")
        return builder.call(function, [])

    return types.int64(), codegen


@intrinsic
def trailing_zeros(typingctx, word):
    """The index of a uint64's lowest set bit (x86: tzcnt), for a word known not to be 0: how a packed
    row's set bits are walked without testing every bit."""
    def codegen(context, builder, signature, args):
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I64, [_I64, ir.IntType(1)]),
                                                  "llvm.cttz.i64")
        return builder.call(function, [args[0], ir.Constant(ir.IntType(1), 1)])

    return types.uint64(types.uint64), codegen


@intrinsic
def set_bits(typingctx, word):
    """How many bits of a uint64 are set (x86: popcnt): how a packed row's word chooses between walking its
    bits and looking them up four at a time."""
    def codegen(context, builder, signature, args):
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I64, [_I64]), "llvm.ctpop.i64")
        return builder.call(function, [args[0]])

    return types.uint64(types.uint64), codegen

