"""tiling.pages: fresh arrays on the pages that suit the machine's memory."""
from __future__ import annotations

import ctypes
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tiling.pages as pages


def balloon(root: Path, name: str, device: str, features: str) -> None:
    (root / name).mkdir()
    (root / name / "device").write_text(device + "\n")
    (root / name / "features").write_text(features + "\n")


@pytest.mark.parametrize("devices, expected", [
    ([("virtio0", "0x0005", "0110010100000000")], True),  # a balloon that reports free pages (bit 5)
    ([("virtio0", "0x0005", "0110000000000000")], False),  # a balloon that does not
    ([("virtio1", "0x0002", "0010011001")], False),  # a disk: bit 5 means nothing there
    ([("virtio1", "0x0002", "0000010000"), ("virtio3", "0x0005", "0000010")], True),
    ([], False),
])
def test_a_host_that_takes_free_pages_is_read_from_the_balloon_device(tmp_path, devices, expected):
    for name, device, features in devices:
        balloon(tmp_path, name, device, features)
    assert pages.host_takes_free_pages.__wrapped__(tmp_path) is expected
    assert pages.host_takes_free_pages.__wrapped__(tmp_path / "absent") is False


def mapping_field(address: int, field: str) -> str:
    """A field of the kernel's record of the mapping that holds `address` (/proc/self/smaps)."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        span = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
        if span:
            inside = int(span[1], 16) <= address < int(span[2], 16)
        elif inside and line.startswith(f"{field}:"):
            return line.split(":", 1)[1]
    raise AssertionError(f"no mapping holds {address:#x}")


def vm_flags(address: int) -> set[str]:
    return set(mapping_field(address, "VmFlags").split())


def resident_pages(array: np.ndarray) -> np.ndarray:
    """Whether each page that holds `array`'s data is in memory (mincore)."""
    first, length = pages._span(array)
    found = np.zeros(-(-length // pages.PAGE_BYTES), dtype=np.uint8)
    mincore = ctypes.CDLL(None, use_errno=True).mincore
    assert mincore(ctypes.c_void_p(first), ctypes.c_size_t(length), found.ctypes.data_as(ctypes.c_void_p)) == 0
    return found & 1 == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/smaps and madvise are Linux's")
@pytest.mark.parametrize("takes_free_pages", [True, False])
def test_large_arrays_stay_on_small_pages_only_where_the_host_takes_free_pages(monkeypatch, takes_free_pages):
    advised = []
    madvise = pages._madvise()
    monkeypatch.setattr(pages, "_madvise", lambda: lambda *call: advised.append(call) or madvise(*call))
    monkeypatch.setattr(pages, "host_takes_free_pages", lambda: takes_free_pages)
    large = pages.mapped_empty((1024, 2048), np.int32)  # 8 MiB: NumPy advises 2 MiB pages for it
    assert large.shape == (1024, 2048) and large.dtype == np.int32
    no_huge = [call for call in advised if call[2] == pages.NO_HUGE_PAGES]
    if takes_free_pages:
        [(first, length, _)] = no_huge
        assert first <= large.ctypes.data and large.ctypes.data + large.nbytes == first + length
        assert "nh" in vm_flags(large.ctypes.data + large.nbytes // 2)
    else:
        assert no_huge == []
    large[:] = 7  # the whole range is still the array's to write
    assert (large == 7).all()
    small = pages.fresh_empty(1000, np.float64)  # below NumPy's advice: left as it comes
    assert small.shape == (1000,) and len([call for call in advised if call[2] == pages.NO_HUGE_PAGES]) == takes_free_pages



@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/smaps and madvise are Linux's")
@pytest.mark.parametrize("kernel_populates", [True, False])
def test_a_mapped_array_has_every_page_before_it_is_written(monkeypatch, kernel_populates):
    """mapped_empty asks the kernel to map the whole range in one call; where it refuses (Linux before
    5.14), one thread touches each page. Either way the pages are there, and the data is untouched."""
    madvise, asked = pages._madvise(), []

    def advise(first, length, advice):
        asked.append(advice)
        return -1 if advice == pages.POPULATE_WRITE and not kernel_populates else madvise(first, length, advice)

    monkeypatch.setattr(pages, "_madvise", lambda: advise)
    found = pages.mapped_empty((5120, 1024), np.float64)  # 40 MiB: above glibc's largest mmap threshold, so fresh
    assert pages.POPULATE_WRITE in asked
    assert resident_pages(found).all()
    found[:] = 3.5
    assert (found == 3.5).all()
