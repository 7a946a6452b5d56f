"""A drop-in for scipy.sparse.csgraph.floyd_warshall: change the import, keep the code."""
from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph._validation import validate_graph

from tiling.graphs import as_float_distances

from .solve import NO_PREDECESSOR, solve


def floyd_warshall(csgraph, directed: bool = True, return_predecessors: bool = False,
                   unweighted: bool = False, overwrite: bool = False, **schedule_options):
    """scipy's floyd_warshall, computed by a polyfw schedule (schedule_options go to solve).

    Inputs are read exactly as scipy reads them (dense zeros, inf and NaN are
    missing edges; sparse explicit entries are edges); results are float64,
    predecessors int32 with -9999, and negative cycles raise scipy's
    NegativeCycleError (polyfw's subclass of it). overwrite=True writes the
    result into a dense float64 C-contiguous input, as scipy may.
    """
    dense = np.array(validate_graph(csgraph, directed, np.float64, csr_output=False, dense_output=True))
    np.fill_diagonal(dense, np.inf)  # scipy starts every vertex at distance 0 and ignores self-loops
    if unweighted:
        dense = np.where(np.isfinite(dense), 1.0, np.inf)
    schedule_options.setdefault("dtype", np.float64)
    result = solve(dense, directed=directed, predecessors=return_predecessors, **schedule_options)
    distances, predecessors = result if return_predecessors else (result, None)
    distances = as_float_distances(distances)  # int32's INF sentinel becomes np.inf
    if overwrite and isinstance(csgraph, np.ndarray) and csgraph.dtype == np.float64 \
            and csgraph.flags.c_contiguous and csgraph.shape == distances.shape:
        csgraph[...] = distances
        distances = csgraph
    if return_predecessors:
        return distances, predecessors.astype(np.int32, copy=False)
    return distances


__all__ = ["floyd_warshall", "NO_PREDECESSOR"]
