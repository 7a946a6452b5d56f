"""Code generation: the CPU and CUDA generators and their kernels, reference kernels."""
import warnings

from numba import config
from numba.core.errors import NumbaPerformanceWarning

from . import numpy_compat  # noqa: F401  (before numba.cuda can load)

if config.ENABLE_CUDASIM:  # the process simulates CUDA: its threads interleave as a GPU's do
    from .gpu_semantics import interleave_threads

    interleave_threads()

# generated drivers ask for parallel=True whatever the stage; where one has no prange, Numba's
# warning about it (naming a file in polyfw's code cache) tells a user nothing
warnings.filterwarnings("ignore", message="(?s).*polyfw", category=NumbaPerformanceWarning)
from .reference import floyd_warshall_naive, floyd_warshall_nest
from .targets import generate

__all__ = ["floyd_warshall_naive", "floyd_warshall_nest", "generate"]
