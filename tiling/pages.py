"""Fresh arrays whose pages cost little to take, on whatever memory the machine has.

Two traps measured on this project's machines:

- Threads that take a fresh array's first page faults together wait on each other in the kernel (a
  KVM guest on Emerald Rapids: 35 ms to copy 32 MiB into fresh memory on 2 threads, 7 ms on one,
  4 ms reused). So a large array's pages are mapped by one thread before a parallel pass fills it.
- A virtual machine whose balloon device reports free pages to its host (virtio-balloon free page
  reporting) gives back memory held free for about 2 s, in 2 MiB blocks. NumPy advises the kernel
  to back every array of 4 MiB or more with 2 MiB pages, and on such a guest (AMD Zen 4 under KVM)
  faulting those back in cost 4-6 ms a MiB: 1.1-1.3 s for 256 MiB freed 3 s before, against
  0.03 s freed just before. The same array on 4 KiB pages took 0.11-0.13 s either way. So on such a
  guest a large array is kept on 4 KiB pages (MADV_NOHUGEPAGE before its first touch).
- Taking those 4 KiB pages one fault at a time costs about 0.5 ms a MiB on such a guest (a KVM guest on
  an Intel Xeon: 14 ms for a 32 MiB matrix). Asking the kernel to map the whole range for writing
  in one call (MADV_POPULATE_WRITE, Linux 5.14) took 9.8 ms; older kernels refuse it, and then the
  pages are touched one by one as before.
"""
from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import numpy as np

from .code_cache import PARALLEL_FROM_ENTRIES

#: the bytes between two touches that map every page of a fresh array (the smallest page size)
PAGE_BYTES = 4096
#: NumPy advises 2 MiB pages from this size on (numpy/_core/src/multiarray/alloc.c)
HUGE_ADVICE_BYTES = 1 << 22
#: madvise's MADV_NOHUGEPAGE and MADV_POPULATE_WRITE (Linux)
NO_HUGE_PAGES, POPULATE_WRITE = 15, 23
#: virtio's device id of a memory balloon, and its feature bit 'free page reporting'
BALLOON_DEVICE, FREE_PAGE_REPORTING = "0x0005", 5


@functools.cache
def host_takes_free_pages(devices: Path = Path("/sys/bus/virtio/devices")) -> bool:
    """Whether this machine is a virtual machine whose balloon reports its free pages to the host."""
    for device in devices.glob("*"):
        try:
            if (device / "device").read_text().strip() != BALLOON_DEVICE:
                continue
            features = (device / "features").read_text().strip()  # one '0'/'1' per bit, bit 0 first
        except OSError:
            continue
        if len(features) > FREE_PAGE_REPORTING and features[FREE_PAGE_REPORTING] == "1":
            return True
    return False


@functools.cache
def _madvise():
    """libc's madvise, or None where there is none to call."""
    try:
        call = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    call.argtypes, call.restype = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int], ctypes.c_int
    return call


def _span(out: np.ndarray) -> tuple[int, int]:
    """The start and length of the page-aligned range that holds `out`'s data (its allocation's own
    mapping starts at the page below it)."""
    first = out.ctypes.data - out.ctypes.data % PAGE_BYTES
    return first, out.ctypes.data + out.nbytes - first


def fresh_empty(shape: int | tuple[int, ...], dtype) -> np.ndarray:
    """np.empty, on 4 KiB pages where the host takes free pages back (see the module's docstring)."""
    out = np.empty(shape, dtype)
    if out.nbytes >= HUGE_ADVICE_BYTES and host_takes_free_pages() and _madvise() is not None:
        _madvise()(*_span(out), NO_HUGE_PAGES)  # advice: a refusal costs speed only
    return out


def mapped_empty(shape: int | tuple[int, ...], dtype) -> np.ndarray:
    """fresh_empty whose pages are mapped already (by the kernel in one call, else by one thread's
    touches), for a parallel pass to fill (a smaller array is filled by a serial pass: its pages are
    taken as they are written)."""
    out = fresh_empty(shape, dtype)
    if out.size >= PARALLEL_FROM_ENTRIES and not _populated(out):
        touched = out.reshape(-1).view(np.uint8)
        touched[::PAGE_BYTES] = 0
        touched[-1] = 0  # the last page, where the data does not start on a page
    return out


def _populated(out: np.ndarray) -> bool:
    """Whether the kernel mapped every page of `out` for writing (False where it refuses: before Linux
    5.14, or no madvise)."""
    madvise = _madvise()
    return madvise is not None and madvise(*_span(out), POPULATE_WRITE) == 0
