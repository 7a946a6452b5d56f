"""Graphs: what `polyfw.solve` reads (arrays, scipy.sparse, networkx, files) and the graphs it is
run on.

edges: a graph as arrays of arcs (Edges) and GraphInputError; formats: the DIMACS .gr and Matrix
Market .mtx readers, and the writer of result matrices; inputs: any input as the kernels' dense
matrix, and the conventions of the matrices they give back; datasets: random graphs, PolyBench's
input, the Minnesota road network.
"""
from .datasets import minnesota_road_graph, polybench_matrix, power_grid, random_graph
from .edges import Edges, GraphInputError
from .formats import MATRIX_FORMATS, READERS, read_dimacs, read_graph, read_matrix_market, write_matrix
from .inputs import (EXACT_BELOW, NO_PREDECESSOR, SHORTEST_PATH_DTYPES, WeightSummary, as_dense, as_float_distances,
                     as_semiring_matrix, check_integer_weights, dense_to_sparse, inf_of, missing_edges, null_as_inf,
                     path_bound, resolve_dtype, summarize_weights, vertex_count)

__all__ = ["EXACT_BELOW", "Edges", "GraphInputError", "MATRIX_FORMATS", "NO_PREDECESSOR", "READERS",
           "SHORTEST_PATH_DTYPES", "WeightSummary", "as_dense", "as_float_distances", "as_semiring_matrix",
           "check_integer_weights", "dense_to_sparse", "inf_of", "minnesota_road_graph", "missing_edges",
           "null_as_inf", "path_bound", "polybench_matrix", "power_grid", "random_graph", "read_dimacs", "read_graph",
           "read_matrix_market", "resolve_dtype", "summarize_weights", "vertex_count", "write_matrix"]
