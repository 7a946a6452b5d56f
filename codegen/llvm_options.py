"""LLVM settings the generated kernels need, applied before Numba builds its first function.

Two of PERFORMANCE-NOTES' traps live here. On Intel CPUs LLVM prefers
256-bit vectors even where AVX-512 exists, which halves the vectorised
kernels; dropping that preference from the CPU features (read by Numba once,
when it creates its code generator) lets them use zmm registers. And
micro_rows, one pivot row's strip unrolled into locals, needs the SLP
vectorizer on and the loop vectorizer off while it, and only it, is compiled.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

WIDE_VECTORS = "-prefer-256-bit"


def prefer_wide_vectors() -> None:
    """Add '-prefer-256-bit' to Numba's CPU features unless the user chose features already."""
    if "NUMBA_CPU_FEATURES" in os.environ:
        return
    import llvmlite.binding as llvm

    features = f"{llvm.get_host_cpu_features().flatten()},{WIDE_VECTORS}"
    os.environ["NUMBA_CPU_FEATURES"] = features
    if "numba" in sys.modules:  # imported already: effective only if nothing was compiled yet
        sys.modules["numba"].config.CPU_FEATURES = features


@contextmanager
def vectorizers(slp: bool, loop: bool) -> Iterator[None]:
    """Compile inside this block with the SLP and loop vectorizers switched as given."""
    from numba.core import config

    saved = config.SLP_VECTORIZE, config.LOOP_VECTORIZE
    config.SLP_VECTORIZE, config.LOOP_VECTORIZE = int(slp), int(loop)
    try:
        yield
    finally:
        config.SLP_VECTORIZE, config.LOOP_VECTORIZE = saved
