"""The isl model of the Floyd–Warshall nest: domain, accesses, dependences, semirings;
and what every layer above shares: isl helpers, the isl-AST-to-Python front end, the code cache."""
from .code_cache import heal_numba_caches, prefer_wide_vectors

prefer_wide_vectors()  # before Numba compiles anything, in any layer
heal_numba_caches()  # before any cache=True function loads, in any layer: a damaged cache file compiles again

from .dependences import DependenceModel, dependence_model, exact_dependences, relaxed_dependences
from .distances import Distance, distance_vectors
from .model import domain, read_access, read_accesses, write_access

__all__ = [
    "DependenceModel",
    "Distance",
    "dependence_model",
    "distance_vectors",
    "domain",
    "exact_dependences",
    "read_access",
    "read_accesses",
    "relaxed_dependences",
    "write_access",
]
