"""Arrays on the GPU in and out of solve, solve_batch and the sparse searches, under Numba's simulator: the
same values as the host path, the caller's device array neither changed nor copied to the host, results
left on the device when asked."""
import sys
import types
import warnings

import numpy as np
import pytest
from numba import cuda

import polyfw
from polyfw.graphs.device_arrays import device_view, is_device_array
from polyfw.errors import NegativeCycleError
from polyfw.sparse import as_csr, bfs, johnson, sssp, to_device, validate_bfs, validate_sssp

SCHEDULE = "classic:tile=16"


def read_from(copied: list, device) -> bool:
    return any(np.shares_memory(source, device._ary) for source in copied)


def weights(n: int, seed: int = 0, density: float = 0.4, lightest: int = 1) -> np.ndarray:
    """Integer weights lightest..9 on a random share of the pairs, inf elsewhere, 0 on the diagonal."""
    rng = np.random.default_rng(seed)
    matrix = np.where(rng.random((n, n)) < density, rng.integers(lightest, 10, (n, n)), np.inf)
    np.fill_diagonal(matrix, 0)
    return matrix


def disconnected(n: int) -> np.ndarray:
    matrix = weights(n, 1, density=0.6)
    matrix[: n // 2, n // 2:] = matrix[n // 2:, : n // 2] = np.inf
    return matrix


def negative_edges(n: int) -> np.ndarray:
    """Arcs i -> i+1 of weight -2 and the rest from 1 up: a negative edge but no negative cycle."""
    matrix = np.triu(weights(n, 2, density=0.5))
    matrix[matrix == 0] = np.inf
    matrix[np.arange(n - 1), np.arange(1, n)] = -2
    np.fill_diagonal(matrix, 0)
    return matrix


CASES = {
    "integer weights, n not whole tiles": (weights(21), {}),
    "n = 1": (np.zeros((1, 1)), {}),
    "disconnected": (disconnected(12), {}),
    "negative edges (int16, INF put back)": (negative_edges(13), {}),
    "int32, undirected": (weights(10, 3), {"dtype": "int32", "directed": False}),
    "float32 input, zeros as no arc": (np.where(np.isinf(weights(9, 4)), 0, weights(9, 4)).astype(np.float32),
                                       {"null_value": 0}),
    "or-and": (weights(11, 5) < np.inf, {"semiring": "or-and"}),
}


@pytest.mark.parametrize("case", CASES)
def test_a_device_matrix_solves_as_the_host_path_without_a_copy_to_the_host(case, device_reads):
    matrix, options = CASES[case]
    expected = polyfw.solve(matrix, schedule=SCHEDULE, target="cudasim", **options)
    device = cuda.to_device(matrix)
    device_reads.clear()
    found = polyfw.solve(device, schedule=SCHEDULE, target="cudasim", **options)
    assert not read_from(device_reads, device)
    assert found.dtype == expected.dtype and np.array_equal(found, expected)
    assert np.array_equal(device.copy_to_host(), matrix)  # the caller's array is only read
    assert read_from(device_reads, device)  # (as the spy sees a copy of it)


def test_a_negative_cycle_on_the_device_raises():
    matrix = negative_edges(9)
    matrix[3, 1] = 1  # 1 -> 2 -> 3 -> 1 weighs -2 - 2 + 1
    with pytest.raises(NegativeCycleError):
        polyfw.solve(cuda.to_device(matrix), schedule=SCHEDULE, target="cudasim")


def test_results_stay_on_the_device_when_asked():
    matrix = weights(10, 6)
    expected = polyfw.solve(matrix, schedule=SCHEDULE, target="cudasim")
    device = cuda.to_device(matrix)
    for found in (polyfw.solve(device, schedule=SCHEDULE, target="cudasim", device_result=True),
                  polyfw.solve(device, schedule=SCHEDULE, target="cudasim", like=device),
                  polyfw.solve(matrix, schedule=SCHEDULE, target="cudasim", device_result=True)):
        # a numba device array: on a GPU it has __cuda_array_interface__ (the simulator's has not)
        assert is_device_array(found) and getattr(found, "__cuda_ndarray__", False)
        assert np.array_equal(found.copy_to_host(), expected)


def test_the_host_targets_refuse_device_arrays_naming_the_gpu_targets():
    device = cuda.to_device(weights(4))
    with pytest.raises(ValueError, match="target 'cpu' runs on the host: pass target 'cuda' or 'cudasim'"):
        polyfw.solve(device)
    with pytest.raises(ValueError, match="device_result=True and like= return arrays on the GPU, for target"):
        polyfw.solve(weights(4), device_result=True)
    with pytest.raises(ValueError, match="target 'cpu' runs on the host"):
        polyfw.solve_batch(cuda.to_device(np.stack([weights(4)] * 2)))


class DLPackOnly:
    """An array known only through DLPack, on CUDA device 0 (what a DLPack producer without
    __cuda_array_interface__ shows)."""

    def __init__(self, matrix: np.ndarray):
        self.matrix = matrix

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)  # kDLCUDA

    def __dlpack__(self, stream=None):
        raise AssertionError("read through the installed library's from_dlpack, not here")


def test_a_dlpack_producer_is_read_through_cupy_or_torch(monkeypatch):
    matrix = weights(9, 7)
    asked = []
    fake_cupy = types.ModuleType("cupy")
    fake_cupy.from_dlpack = lambda producer: asked.append(producer) or cuda.to_device(producer.matrix)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    producer = DLPackOnly(matrix)
    assert is_device_array(producer) and not is_device_array(matrix)  # a host array's DLPack device is the CPU
    found = polyfw.solve(producer, schedule=SCHEDULE, target="cudasim")
    assert asked == [producer]
    assert np.array_equal(found, polyfw.solve(matrix, schedule=SCHEDULE, target="cudasim"))
    monkeypatch.setitem(sys.modules, "cupy", None)  # neither installed: refused by name
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(TypeError, match="graph: a DLPack array on the GPU .* through cupy or torch"):
        device_view(producer)


def test_a_stack_on_the_device_solves_as_the_batch_of_its_matrices(device_reads):
    rng = np.random.default_rng(8)
    stack = np.where(rng.random((3, 7, 7)) < 0.4, rng.integers(1, 6, (3, 7, 7)), 0).astype(np.float32)
    device = cuda.to_device(stack)
    for options in ({}, {"directed": False}):
        expected = polyfw.solve_batch(list(stack), target="cudasim", **options)
        device_reads.clear()
        found = polyfw.solve_batch(device, target="cudasim", **options)
        assert not read_from(device_reads, device)
        assert found.dtype == expected.dtype and np.array_equal(found, expected)
    kept = polyfw.solve_batch(device, target="cudasim", padded=False, device_result=True)
    assert all(getattr(part, "__cuda_ndarray__", False) and np.array_equal(part.copy_to_host(), whole)
               for part, whole in zip(kept, polyfw.solve_batch(list(stack), target="cudasim")))
    assert np.array_equal(device.copy_to_host(), stack)


def test_csr_arrays_on_the_device_are_searched_without_a_copy_to_the_host(device_reads):
    matrix = weights(14, 9, density=0.25)
    csr = as_csr(matrix)
    arrays = tuple(cuda.to_device(array) for array in (csr.indptr, csr.indices, csr.weights))
    device_reads.clear()
    levels, _ = bfs(arrays, 0, direction="top-down")  # a device tuple defaults to target 'cuda'
    distances, parents = sssp(arrays, 0, target="cudasim")
    everything = johnson(arrays, target="cudasim", like=arrays[0])
    assert not any(read_from(device_reads, device) for device in arrays)
    assert np.array_equal(levels, bfs(csr, 0, direction="top-down")[0])
    assert np.array_equal(distances, sssp(csr, 0)[0])
    validate_sssp(csr, 0, distances, parents)
    assert getattr(everything, "__cuda_ndarray__", False)
    assert np.array_equal(everything.copy_to_host(), johnson(csr))
    with pytest.raises(ValueError, match="CSR arrays are on the GPU and target 'cpu' runs on the host"):
        sssp(arrays, 0, target="cpu")


def test_a_stack_read_with_null_value_none_warns_of_zeros_off_the_diagonal_only():
    stack = np.full((2, 5, 5), np.inf)
    for matrix in stack:
        np.fill_diagonal(matrix, 0)
    stack[:, 0, 1], stack[1, 2, 3] = 4, 0  # the second matrix's (2, 3) is an arc of weight 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        polyfw.solve_batch(cuda.to_device(stack[:1]), target="cudasim", null_value=None)  # zeros on the diagonal
    with pytest.warns(UserWarning, match="zeros off the diagonal") as on_device:
        found = polyfw.solve_batch(cuda.to_device(stack), target="cudasim", null_value=None)
    with pytest.warns(UserWarning, match="zeros off the diagonal"):
        expected = polyfw.solve_batch(list(stack), target="cudasim", null_value=None)
    assert np.array_equal(found, expected) and found[1, 2, 3] == 0
    assert len(on_device) == 1 and on_device[0].filename == __file__


def test_csr_arrays_on_the_device_are_turned_around_there_for_bottom_up_steps(device_reads):
    csr = as_csr(weights(17, 4, density=0.3))
    arrays = tuple(cuda.to_device(array) for array in (csr.indptr, csr.indices, csr.weights))
    device_reads.clear()
    turned = to_device(arrays).csr.reverse
    assert not any(read_from(device_reads, device) for device in arrays)
    host = csr.reverse
    rindptr = turned.indptr.copy_to_host()
    assert np.array_equal(rindptr, host.indptr)
    rows = [sorted(zip(turned.indices.copy_to_host()[a:b], turned.weights.copy_to_host()[a:b]))
            for a, b in zip(rindptr[:-1], rindptr[1:])]
    assert rows == [sorted(zip(host.indices[a:b], host.weights[a:b]))
                    for a, b in zip(host.indptr[:-1], host.indptr[1:])]
    device_reads.clear()
    levels, parents = bfs(arrays, 0)  # direction='optimizing': bottom-up steps read the turned graph
    assert not any(read_from(device_reads, device) for device in arrays)
    assert np.array_equal(levels, bfs(csr, 0)[0])
    validate_bfs(csr, 0, levels, parents)  # (a parent is any in-neighbour one level up: rows come unordered)
