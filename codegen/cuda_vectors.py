"""Vector loads and stores for the CUDA kernels: four elements in one 128-bit (float32, int32) access.

Numba has no vector types, and NVVM vectorises a run of scalar accesses only where it can prove
the run aligned, which it cannot for a thread's offset into a tile: the register tiles' shared
loads came out as one LDS per element. These intrinsics load or store four consecutive elements
of a row of a 2-D array through one aligned vector pointer (LDS.128 / LDG.E.128 / STS.128 /
STG.E.128 on sm_80 and sm_90). The caller guarantees the alignment: the first element's column
and the row length are multiples of four, and the array's data is aligned to four elements
(device allocations and shared arrays declared with STAGING_ALIGNMENT are).

The simulator runs kernels as Python, so there they are plain element accesses.
"""
from __future__ import annotations

from numba import config, cuda

#: elements a vector access moves
VECTOR = 4

if config.ENABLE_CUDASIM:

    @cuda.jit(device=True)
    def load4(array, i, j):
        """array[i, j:j + 4] as four values."""
        return array[i, j], array[i, j + 1], array[i, j + 2], array[i, j + 3]

    @cuda.jit(device=True)
    def store4(array, i, j, v0, v1, v2, v3):
        """array[i, j:j + 4] = v0, v1, v2, v3."""
        array[i, j] = v0
        array[i, j + 1] = v1
        array[i, j + 2] = v2
        array[i, j + 3] = v3

else:
    from llvmlite import ir
    from numba import types
    from numba.cuda import cgutils
    from numba.cuda.extending import intrinsic

    def _vector_pointer(context, builder, signature, arguments):
        """A pointer to the <4 x element> vector starting at array[i, j]."""
        array_type, i_type, j_type = signature.args[:3]
        array = context.make_array(array_type)(context, builder, arguments[0])
        indices = [context.cast(builder, value, kind, types.intp)
                   for value, kind in ((arguments[1], i_type), (arguments[2], j_type))]
        element = cgutils.get_item_pointer(context, builder, array_type, array, indices, wraparound=False)
        vector = ir.VectorType(context.get_data_type(array_type.dtype), VECTOR)
        return builder.bitcast(element, vector.as_pointer(element.type.addrspace)), vector

    def _alignment(array_type) -> int:
        return VECTOR * array_type.dtype.bitwidth // 8

    @intrinsic
    def load4(typingctx, array, i, j):
        result = types.UniTuple(array.dtype, VECTOR)

        def lower(context, builder, signature, arguments):
            pointer, _ = _vector_pointer(context, builder, signature, arguments)
            loaded = builder.load(pointer, align=_alignment(signature.args[0]))
            values = [builder.extract_element(loaded, ir.Constant(ir.IntType(32), lane)) for lane in range(VECTOR)]
            return context.make_tuple(builder, signature.return_type, values)

        return result(array, i, j), lower

    @intrinsic
    def store4(typingctx, array, i, j, v0, v1, v2, v3):
        def lower(context, builder, signature, arguments):
            pointer, vector = _vector_pointer(context, builder, signature, arguments)
            packed = ir.Constant(vector, ir.Undefined)
            for lane, (value, kind) in enumerate(zip(arguments[3:], signature.args[3:])):
                value = context.cast(builder, value, kind, signature.args[0].dtype)
                packed = builder.insert_element(packed, value, ir.Constant(ir.IntType(32), lane))
            builder.store(packed, pointer, align=_alignment(signature.args[0]))
            return context.get_dummy_value()

        return types.void(array, i, j, v0, v1, v2, v3), lower
