"""Graphs: what `polyfw.solve` reads (arrays, scipy.sparse, networkx, files) and the graphs it is
run on.

edges: a graph as arrays of arcs (Edges) and GraphInputError; formats: the DIMACS .gr and Matrix
Market .mtx readers, and the writer of result matrices; inputs: any input as the kernels' dense
matrix, and the conventions of the matrices they give back; datasets: random graphs, PolyBench's
input, the Minnesota road network.

Names are imported from their module on first use: the datasets need scipy.sparse, which a call
on a dense array never does.
"""
from tiling.exports import names_on_first_use

#: each public name's module
_EXPORTS = {
    "minnesota_road_graph": "datasets",
    "polybench_matrix": "datasets",
    "power_grid": "datasets",
    "random_graph": "datasets",
    "exact_weights": "datasets",
    "Edges": "edges",
    "GraphInputError": "edges",
    "MATRIX_FORMATS": "formats",
    "READERS": "formats",
    "read_dimacs": "formats",
    "read_graph": "formats",
    "read_matrix_market": "formats",
    "write_matrix": "formats",
    "EXACT_BELOW": "inputs",
    "NO_PREDECESSOR": "inputs",
    "SHORTEST_PATH_DTYPES": "inputs",
    "WeightSummary": "inputs",
    "as_dense": "inputs",
    "as_float_distances": "inputs",
    "as_semiring_matrix": "inputs",
    "check_integer_weights": "inputs",
    "dense_to_sparse": "inputs",
    "inf_of": "inputs",
    "missing_edges": "inputs",
    "null_as_inf": "inputs",
    "path_bound": "inputs",
    "resolve_dtype": "inputs",
    "summarize_weights": "inputs",
    "vertex_count": "inputs",
}
__all__ = sorted(_EXPORTS)
__getattr__ = names_on_first_use(__name__, _EXPORTS)
