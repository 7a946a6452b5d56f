"""Code generation and run-time kernels (Numba CPU; CUDA in later stages)."""
from .reference import floyd_warshall_naive, floyd_warshall_nest

__all__ = ["floyd_warshall_naive", "floyd_warshall_nest"]
