"""numpy 2.5 removed `np.row_stack` (an alias of `np.vstack`, deprecated since numpy 2.0), but
numba-cuda 0.30.4 still registers an overload for it when its array module loads
(numba/cuda/np/arrayobj.py: `overload(np.row_stack)`). With numpy >= 2.5 the first CUDA compile
then fails with "AttributeError: module 'numpy' has no attribute 'row_stack'". Until numba-cuda
drops that line, give numpy the alias back; numpy versions that still have it are left alone.
"""
import numpy as np

if "row_stack" not in np.__dict__:
    np.row_stack = np.vstack
