"""LLVM settings the generated kernels need while they are compiled.

One of PERFORMANCE-NOTES' traps lives here: micro_rows, one pivot row's strip
unrolled into locals, needs the SLP vectorizer on and the loop vectorizer off
while it, and only it, is compiled. (The other, LLVM's preference for 256-bit
vectors, is dropped in tiling.code_cache before Numba compiles anything.)
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def vectorizers(slp: bool, loop: bool) -> Iterator[None]:
    """Compile inside this block with the SLP and loop vectorizers switched as given."""
    from numba.core import config

    # Numba reloads its settings at each compile when the environment changed since the last
    # (tiling.code_cache sets NUMBA_CPU_FEATURES): reload now, or the compile inside would undo these
    config.reload_config()
    saved = config.SLP_VECTORIZE, config.LOOP_VECTORIZE
    config.SLP_VECTORIZE, config.LOOP_VECTORIZE = int(slp), int(loop)
    try:
        yield
    finally:
        config.SLP_VECTORIZE, config.LOOP_VECTORIZE = saved
