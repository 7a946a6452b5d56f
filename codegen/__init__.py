"""Code generation: the isl AST front end, the generated-code cache, and the reference kernels."""
from .reference import floyd_warshall_naive, floyd_warshall_nest

__all__ = ["floyd_warshall_naive", "floyd_warshall_nest"]
