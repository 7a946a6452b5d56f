"""Code generation: the isl AST front end, the CPU and CUDA generators and their kernels, reference kernels."""
from . import numpy_compat  # noqa: F401  (before numba.cuda can load)
from .llvm_options import prefer_wide_vectors

prefer_wide_vectors()  # before Numba builds anything

from .reference import floyd_warshall_naive, floyd_warshall_nest  # noqa: E402

__all__ = ["floyd_warshall_naive", "floyd_warshall_nest", "generate"]


def __getattr__(name: str):
    # generate needs the schedules package, which itself imports codegen's helpers: load it late
    if name == "generate":
        from .targets import generate

        return generate
    raise AttributeError(f"module 'codegen' has no attribute {name!r}")
