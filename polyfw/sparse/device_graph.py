"""A graph kept on the GPU: what every search on target 'cuda' reads (polyfw.sparse.cuda)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..graphs.device_arrays import is_device_array
from .csr import CSRGraph, as_csr


@dataclass(frozen=True, eq=False)
class DeviceGraph:
    """A CSR graph on the GPU, made once by `to_device` and read by every later search."""

    csr: CSRGraph
    indptr: object
    indices: object
    weights: object
    #: the host arrays' transfers to the device so far (each search adds its own to `transfers`)
    transfers: dict = field(default_factory=lambda: {"to_device": 0, "to_host": 0})

    @property
    def n(self) -> int:
        return self.csr.n

    @property
    def m(self) -> int:
        return self.csr.m

    @cached_property
    def sources(self):
        """Every edge's source on the device (Johnson's reweighting reads it), made once."""
        return self._placed(self.csr.sources)

    @cached_property
    def reverse(self) -> tuple[object, object]:
        """The in-edges' row offsets and sources on the device (bottom-up steps scan them), made once."""
        reverse = self.csr.reverse
        return self._placed(reverse.indptr), self._placed(reverse.indices)

    def _placed(self, array):
        """An array of the graph's on the device: uploaded from the host, or as it is where it is there already
        (polyfw.sparse.device_csr.DeviceCSR)."""
        return self.upload(array) if isinstance(array, np.ndarray) else array

    def upload(self, host: np.ndarray):
        from numba import cuda

        self.transfers["to_device"] += 1
        return cuda.to_device(np.ascontiguousarray(host))

    def download(self, device) -> np.ndarray:
        self.transfers["to_host"] += 1
        return device.copy_to_host()


def csr_on_device(graph) -> bool:
    """Whether `graph` is CSR arrays already on the GPU: a tuple (indptr, indices, weights) of device arrays,
    or a DeviceGraph made from one."""
    if isinstance(graph, DeviceGraph):
        return not isinstance(graph.csr.indptr, np.ndarray)
    return isinstance(graph, tuple) and len(graph) == 3 and all(map(is_device_array, graph))


def to_device(graph, directed: bool = True) -> DeviceGraph:
    """Move a graph (scipy or networkx graph, CSRGraph, edge arrays, a dense matrix: whatever
    polyfw.sparse.as_csr reads) to the GPU once; BFS, SSSP and Johnson on target 'cuda' then
    reuse it without copying it again. A DeviceGraph passed in is returned as it is.

    A tuple (indptr, indices, weights) of arrays already on the GPU (torch, cupy, numba: anything
    polyfw.graphs.device_arrays reads; a CSR graph's row offsets, targets and float64 weights, the
    graph's arcs as they are: `directed` does not apply) is taken as it is, never copied to the host
    (polyfw.sparse.device_csr.DeviceCSR)."""
    if isinstance(graph, DeviceGraph):
        return graph
    if csr_on_device(graph):
        from .device_csr import device_csr

        csr = device_csr(*graph)
        return DeviceGraph(csr, csr.indptr, csr.indices, csr.weights)
    from numba import config, cuda

    if not config.ENABLE_CUDASIM and not cuda.is_available():
        raise RuntimeError("the GPU searches run on a CUDA GPU and none is available (NUMBA_ENABLE_CUDASIM=1 runs the "
                           "same kernels in Numba's simulator); use target 'cpu'")
    csr = as_csr(graph, directed=directed)
    empty = DeviceGraph(csr, None, None, None)
    return DeviceGraph(csr, empty.upload(csr.indptr), empty.upload(csr.indices), empty.upload(csr.weights),
                       empty.transfers)
