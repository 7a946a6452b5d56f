"""The isl model of the Floyd–Warshall nest: domain, accesses, dependences, semirings;
and what every layer above shares: isl helpers, the isl-AST-to-Python front end, the code cache."""
from .code_cache import choose_cpu_features, heal_numba_caches
from .exports import names_on_first_use

choose_cpu_features()  # before Numba compiles anything, in any layer
heal_numba_caches()  # before any cache=True function loads, in any layer: a damaged cache file compiles again

#: what `from tiling import X` offers, by the module that defines it: imported on first use, so that a
#: run whose proof is cached does not pay for sympy (tiling.distances) or for analyses it never asks
_EXPORTS = {
    "DependenceModel": "dependences",
    "dependence_model": "dependences",
    "exact_dependences": "dependences",
    "relaxed_dependences": "dependences",
    "Distance": "distances",
    "distance_vectors": "distances",
    "domain": "model",
    "read_access": "model",
    "read_accesses": "model",
    "write_access": "model",
}
__all__ = sorted(_EXPORTS)
__getattr__ = names_on_first_use(__name__, _EXPORTS)
