"""Arrays already on a GPU, in and out of the GPU targets without a pass through the host.

A caller whose graphs live on the GPU (torch, cupy, numba, anything exposing the CUDA Array Interface or
DLPack) hands them over as they are; a result can stay there. Copying an n x n matrix to the host and back
costs more than a small solve: the readers here only make views (numba device arrays over the caller's
memory), and the results go back as views too. Nothing here imports numba.cuda until a device array comes:
`is_device_array` is a few attribute lookups, so host calls pay nothing.
"""
from __future__ import annotations

import importlib

#: DLPack's device types whose memory a CUDA kernel reads: kDLCUDA, kDLCUDAManaged
CUDA_DLPACK_DEVICES = (2, 13)
GPU_TARGETS = ("cuda", "cudasim")


def is_device_array(x) -> bool:
    """Whether x lives on a GPU: numba's device arrays (the simulator's too), anything with
    __cuda_array_interface__, or a DLPack producer on a CUDA device (a host array's DLPack device is the CPU)."""
    if getattr(x, "__cuda_ndarray__", False) or hasattr(x, "__cuda_array_interface__"):
        return True
    dlpack_device = getattr(x, "__dlpack_device__", None)
    return dlpack_device is not None and dlpack_device()[0] in CUDA_DLPACK_DEVICES


def device_view(x, where: str = "graph"):
    """x as a numba device array over the same memory (no copy): numba's own as they are, the CUDA Array
    Interface through numba.cuda.as_cuda_array, a DLPack-only producer through cupy or torch (whichever is
    installed: numba reads no DLPack itself), which give the interface."""
    from numba import cuda

    if not getattr(x, "__cuda_ndarray__", False) and not hasattr(x, "__cuda_array_interface__"):
        x = _from_dlpack(x, where)
    return x if getattr(x, "__cuda_ndarray__", False) else cuda.as_cuda_array(x)


def _from_dlpack(x, where: str):
    for name in ("cupy", "torch"):
        try:
            library = importlib.import_module(name)
        except ImportError:
            continue
        return library.from_dlpack(x)
    raise TypeError(f"{where}: a DLPack array on the GPU ({type(x).__name__}) is read through cupy or torch, and "
                    "neither is installed; install one, or pass an array with __cuda_array_interface__")


def check_device_request(target: str, device_input: bool, device_result: bool, like) -> None:
    """Device arrays in and out are for the GPU targets: refuse them elsewhere, naming the valid targets."""
    if target in GPU_TARGETS:
        return
    if device_input:
        raise ValueError(f"the input is an array on the GPU and target {target!r} runs on the host: pass target "
                         f"{' or '.join(map(repr, GPU_TARGETS))}, or copy it to the host first")
    if device_result or like is not None:
        raise ValueError(f"device_result=True and like= return arrays on the GPU, for target "
                         f"{' or '.join(map(repr, GPU_TARGETS))}, not {target!r}")


def returned(result, device_result: bool, like=None):
    """A result on the device as the caller asked: like=x the same kind as x (a torch tensor on x's device,
    a cupy array, else a numba device array), device_result=True a numba device array, else on the host.
    Torch and cupy wrap the device memory (__cuda_array_interface__): no copy."""
    if like is not None:
        kind = type(like).__module__.split(".")[0]
        if kind == "torch":
            import torch

            return torch.as_tensor(result, device=like.device)
        if kind == "cupy":
            import cupy

            return cupy.asarray(result)
        return result
    return result if device_result else result.copy_to_host()


def like_each(result, like):
    """A device result, or a tuple of them ((distances, predecessors), (levels, parents)), as arrays of like's
    kind (returned); as it is without like."""
    if like is None:
        return result
    if isinstance(result, tuple):
        return tuple(returned(part, True, like) for part in result)
    return returned(result, True, like)


def to_device_result(result, device_result: bool, like=None):
    """A result computed on the host, moved to the device where device_result or like asks (a host input's
    call: the kernels' own result went through the host already); as it is otherwise."""
    if not device_result and like is None:
        return result
    from numba import cuda

    uploaded = tuple(map(cuda.to_device, result)) if isinstance(result, tuple) else cuda.to_device(result)
    return like_each(uploaded, like)
