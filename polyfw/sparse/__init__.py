"""Sparse graphs get sparse algorithms: BFS, single-source shortest paths and Johnson's all-pairs
shortest paths on a CSR graph (seed 002), with Graph500's generator and validation rules."""
from .csr import CSRGraph, as_csr
from .device_graph import DeviceGraph, to_device
from .paths import bfs, johnson, sssp
from .rmat import rmat_edges
from .validate import ValidationError, validate_bfs, validate_sssp

__all__ = ["CSRGraph", "DeviceGraph", "ValidationError", "as_csr", "bfs", "johnson", "rmat_edges", "sssp",
           "to_device", "validate_bfs", "validate_sssp"]
