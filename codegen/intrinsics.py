"""LLVM intrinsics the CPU tile kernels call (Numba exposes no prefetch of its own)."""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

_I8_POINTER = ir.IntType(8).as_pointer()
_I32 = ir.IntType(32)


@intrinsic
def prefetch(typingctx, array, i, j):
    """Ask for the cache line of array[i, j] (for writing, kept in every cache level).

    The DD kernel issues it for the next register block's rows, whose lines
    come from L3 and which no hardware prefetcher guesses (rows are a stride apart).
    """
    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        array_value = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, array_value, [args[1], args[2]])
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [_I8_POINTER, _I32, _I32, _I32]), "llvm.prefetch.p0")
        # (address, write, locality 3 = keep in all levels, data cache)
        builder.call(function, [builder.bitcast(pointer, _I8_POINTER), _I32(1), _I32(3), _I32(1)])
        return context.get_dummy_value()

    return types.void(array, i, j), codegen
