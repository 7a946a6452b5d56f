"""Predicted GPU rates, calibrated on every stored device measurement.

polyfw/machine/gpu_measurements.json keeps each whole call measured on a GPU (the schedule, n,
dtype, seconds, the device, the commit) with the facts of the kernels that ran it (instructions
per relaxation, warps a block, blocks an SM, read from their machine code at that commit). The
model of schedules.gpu_time is fitted to all of them and predicts any schedule from the facts
of its kernels now: what `polyfw gpu-report` prints without a GPU. Add a row after every
device measurement (benchmarks/gpu.py --json writes them in this form).
"""
from __future__ import annotations

import hashlib
import json
from importlib.resources import files

from schedules import build
from schedules.cost import tile_view
from schedules.gpu_time import GpuCalibration, GpuDevice, KernelFacts, fit_calibration, predict_seconds
from tiling.code_cache import cache_dir

#: the largest blocks per side a stored row may have to be fitted (its view lists Q^3 tile-layers)
FIT_BLOCKS = 128


def _stored() -> dict:
    return json.loads(files("polyfw.machine").joinpath("gpu_measurements.json").read_text())


def measurements() -> list[dict]:
    return _stored()["rows"]


def measured_device() -> str:
    """The GPU the stored calls ran on."""
    return _stored()["device"].split(" (")[0]


def stored_facts(row_kernels: dict) -> dict[str, KernelFacts]:
    """A stored row's kernels ({kind: {per_relaxation, threads, blocks_per_sm, ...}}) as the model reads them."""
    return {kind: KernelFacts(k["per_relaxation"], -(-k["threads"] // 32), k["blocks_per_sm"])
            for kind, k in row_kernels.items()}


def _fitted_rows(rows: list[dict]) -> list[tuple]:
    fitted = []
    for row in rows:
        schedule = build(row["family"], row["n"], **row["parameters"])
        if -(-row["n"] // schedule.tile) <= FIT_BLOCKS:
            fitted.append((tile_view(schedule), stored_facts(row["kernels"]), row["seconds"]))
    return fitted


def calibration() -> tuple[GpuCalibration, int]:
    """The model's calibration fitted to the stored rows (kept under the cache while they are
    unchanged), and how many rows it was fitted to."""
    rows = measurements()
    key = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]
    kept = cache_dir() / f"gpu_calibration_{key}.json"
    if kept.exists():
        stored = json.loads(kept.read_text())
        return GpuCalibration(*stored["calibration"]), stored["rows"]
    fitted = _fitted_rows(rows)
    found = fit_calibration(fitted, GpuDevice())
    kept.write_text(json.dumps({"calibration": list(found.as_tuple()), "rows": len(fitted)}))
    return found, len(fitted)


def kernel_kinds(band_roles: tuple[frozenset, ...]) -> list[str]:
    """The model's kind of each band's kernel: 'I' where it closes a pivot, 'panel' where it
    multiplies panels, else 'DD' (schedules.gpu_time's stage kinds)."""
    return ["I" if "I" in roles else "panel" if roles & {"SD_row", "SD_col"} else "DD" for roles in band_roles]


def kernel_reports(band_roles: tuple[frozenset, ...], reports: list) -> dict:
    """The machine-code report (codegen.machine_code.KernelReport) of the kernel each kind of stage
    runs: the first band of that kind with a hot loop; a kind the schedule lacks takes the next
    one's ('I' a panel's, a panel a DD product's)."""
    found = {}
    for report, kind in zip(reports, kernel_kinds(band_roles)):
        if report.loop is not None:
            found.setdefault(kind, report)
    if "DD" in found:
        found.setdefault("panel", found["DD"])
        found.setdefault("I", found["panel"])
    return found


def facts(report) -> KernelFacts:
    """What the model reads of a kernel's machine-code report."""
    return KernelFacts(report.loop.per_relaxation, -(-report.threads // 32), report.blocks_per_sm)


def predict(schedule, kernels: dict[str, KernelFacts]) -> tuple[float, GpuCalibration, int]:
    """Seconds a run of `schedule` would take on the calibrated device with these kernels, the
    calibration, and the rows it was fitted to."""
    found, rows = calibration()
    return predict_seconds(tile_view(schedule), kernels, GpuDevice(), found), found, rows
