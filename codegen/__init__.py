"""Code generation: the CPU and CUDA generators and their kernels, reference kernels."""
from . import numpy_compat  # noqa: F401  (before numba.cuda can load)
from .reference import floyd_warshall_naive, floyd_warshall_nest
from .targets import generate

__all__ = ["floyd_warshall_naive", "floyd_warshall_nest", "generate"]
