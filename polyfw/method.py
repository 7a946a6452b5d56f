"""Dense or sparse, and in which exact element type: the choices solve makes for 'auto' by the cost model.

Floyd–Warshall costs n^3 relaxations at the dense rate (on a sparse graph only its tile-layers that
are not skipped: polyfw.graphs.blocks) and its matrix written in and out, Johnson about m n log2 n
heap steps at its rate, or n (n + m) steps of a BFS from every source where every arc has one
weight (an unweighted graph: no heap). The dense rates are this machine's calibrated product
rates where `polyfw calibrate` measured them, else the tuning table's (benchmarks/cpu.py
and benchmarks/sparse.py --tune write them), else figures measured on a 2-core AVX-512 machine
(scaled by this CPU's vector width).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numba
import numpy as np

from codegen.intrinsics import vector_width
from codegen.targets import find_target

from .graphs.blocks import TileLayers
from .machine import calibrations
from .machine.tuning import machine_tuning, table_stamp, tuning_table

if TYPE_CHECKING:
    from schedules.predict import Calibration

#: what `solve(method=...)` takes: 'dense' Floyd-Warshall, 'sparse' Johnson, or the faster by the model
SOLVE_METHODS = ("dense", "sparse", "auto")
#: seconds a dense run spends per matrix entry outside its kernels: the input written into the kernels'
#: rows and the result back out as float64 (3-6 ns on a 2-core Zen 3 for the power grid and the road network)
DENSE_CONVERSION_SECONDS = 4e-9
#: what a tile-layer the product kernel skips costs, as a share of one it runs: one or two operand
#: blocks read (0.9-2 us for 128 x 128 on one Zen 3 core, against 95-115 us for the product)
SKIPPED_LAYER_COST = 0.03
#: relaxations/s of the best dense schedule, m n log2 n per second of Johnson, and n (n + m) per second
#: of its BFS from every source (2-core Zen 3, the power grid: 0.30-0.39 s), when not tuned
DEFAULT_RATES = {"dense": {"float32": 45e9, "int32": 70e9, "int16": 140e9, "float64": 24e9}, "johnson": 3.0e8,
                 "breadth_first": 2.3e8, "dense_conversion_seconds": DENSE_CONVERSION_SECONDS}
#: the same on a GPU target: the dense rates measured on an H200 (classic tile 128, n = 8192, whole
#: calls, issue 49's table); the sparse ones are estimates until a GPU measures them
#: (benchmarks/sparse_gpu.py): fifty times the 2-core CPU's
DEFAULT_GPU_RATES = {"dense": {"float32": 3.1e12, "int32": 3.5e12, "uint8": 3.5e12}, "johnson": 1.5e10,
                     "breadth_first": 1.2e10, "dense_block_layer_seconds": 3 * 302e-6, "dense_tile": 64}


@dataclass(frozen=True)
class MethodChoice:
    method: str
    dense_seconds: float
    sparse_seconds: float
    #: the tile-layers the dense prediction counted, where the graph's blocks were read
    layers: TileLayers | None = None

    def __str__(self) -> str:
        skips = "" if self.layers is None else \
            f", running {self.layers.dd:.1%} of its {self.layers.tile}-wide DD tile-layers"
        return (f"{self.method} (predicted: dense Floyd-Warshall {self.dense_seconds:.3g} s{skips}, "
                f"sparse Johnson {self.sparse_seconds:.3g} s)")


def choose_method(n: int, m: int, dtype: str, rates: dict | None = None, one_weight: bool = False,
                  layers: TileLayers | None = None) -> MethodChoice:
    """The faster method by the cost model (`rates` as DEFAULT_RATES; missing entries default).
    one_weight: every arc weighs the same (>= 0), so Johnson is a BFS from every source. layers: the
    tile-layers a dense run of this graph runs (polyfw.graphs.blocks), else all of them."""
    rates = {**DEFAULT_RATES, **(rates or {})}
    dense_rate = rates["dense"].get(dtype, DEFAULT_RATES["dense"].get(dtype, DEFAULT_RATES["dense"]["float64"]))
    calibration = rates.get("dense_calibrations", {}).get(dtype)
    if calibration is not None:  # the product's rate slowed by its operands' loads from beyond the caches
        matrix_bytes = n * n * np.dtype(dtype).itemsize
        dense_rate = calibration.threads / (1.0 / calibration.product_rate(RATE_TILE)
                                            + 3.0 / RATE_TILE * calibration.load_seconds(RATE_TILE, matrix_bytes))
    # a block layer's fixed cost (a GPU's launches, 302 us each by polyfw.gpu_model's fit): small graphs pay it
    block_layers = math.ceil(n / rates.get("dense_tile", 128))
    run = 1.0 if layers is None else layers.work + SKIPPED_LAYER_COST * (1.0 - layers.work)
    dense = (n**3 * run / dense_rate + block_layers * rates.get("dense_block_layer_seconds", 0.0)
             + n * n * rates["dense_conversion_seconds"])
    sparse = n * (n + m) / rates["breadth_first"] if one_weight else \
        max(m, 1) * n * math.log2(max(n, 2)) / rates["johnson"]
    return MethodChoice("sparse" if sparse < dense else "dense", dense, sparse, layers)


#: the tile whose calibrated product rate stands for a dense run's
RATE_TILE = 128
#: how much faster a wider exact type must be predicted before it is chosen over a narrower one
#: (a narrower type also halves the memory and the input's conversion)
WIDER_MARGIN = 1.10


@dataclass(frozen=True)
class _Calibrated:
    """This machine's calibrations on some thread count, by dtype, with the product rates they give."""

    by_dtype: dict[str, Calibration]
    #: dtype -> relaxations/s of the product on every thread
    products: dict[str, float]
    #: what a choice made from them may be kept by
    stamp: tuple


@cache
def _calibrated(threads: int) -> _Calibrated:
    """The dtypes calibrated here on `threads` threads (read once a process)."""
    found = {}
    for dtype in DEFAULT_RATES["dense"]:
        calibration = calibrations.load(dtype, threads)
        if calibration is not None:
            found[dtype] = calibration
    products = {dtype: threads * calibration.product_rate(RATE_TILE) for dtype, calibration in found.items()}
    return _Calibrated(found, products, tuple(sorted((dtype, products[dtype], calibration.probe)
                                                     for dtype, calibration in found.items())))


def calibration_stamp(threads: int) -> tuple:
    """The calibrations method_rates reads on `threads` threads, as a value a choice made from them may
    be kept by."""
    return _calibrated(threads).stamp


#: method_rates' answers by (target, threads, the tables' stamp): every solve with dtype or method 'auto' asks
_RATES: dict[tuple, tuple[dict, dict]] = {}


def method_rates(target: str, stamp: tuple | None = None) -> dict:
    """The rates choose_method reads for `target`: the tuning table's, with this machine's calibrated
    dense rates over them (kept while the tables are unchanged; `stamp`: their table_stamp(), when the
    caller has read it)."""
    threads = numba.get_num_threads()
    calibrated = _calibrated(threads)  # (read once a process: the same object until cleared)
    key = (target, threads, stamp or table_stamp())
    known = _RATES.get(key)
    if known is None or known[0] is not calibrated:
        tuned = machine_tuning(tuning_table(), target).get("rates") or {}
        if find_target(target).on_gpu:  # the CPU's calibration says nothing of a GPU
            known = _RATES[key] = calibrated, {**DEFAULT_GPU_RATES, **tuned,
                                               "dense": {**DEFAULT_GPU_RATES["dense"], **tuned.get("dense", {})}}
        else:
            known = _RATES[key] = calibrated, {**tuned, "dense": {**_default_dense_rates(), **tuned.get("dense", {}),
                                                                   **calibrated.products},
                                               "dense_calibrations": calibrated.by_dtype}
    return known[1]


@cache
def _default_dense_rates() -> dict[str, float]:
    """DEFAULT_RATES' dense rates for this CPU: measured with 64-byte vectors, scaled by the width the
    kernels use here (on a 2-core AVX2 Zen 3, half the AVX-512 figures came within 1.0-1.6x of the
    measured product rates, the figures themselves 2-3x above them)."""
    scale = vector_width(1) / 64
    return {dtype: rate * scale for dtype, rate in DEFAULT_RATES["dense"].items()}


def fastest_exact(exact: list[str], rates: dict) -> str:
    """Of the exact dtypes (narrowest first), the narrowest unless a wider one's dense rate is
    WIDER_MARGIN times faster (then the fastest such)."""
    dense = {**DEFAULT_RATES["dense"], **rates.get("dense", {})}
    chosen = exact[0]
    for wider in exact[1:]:
        if dense.get(wider, 0.0) > WIDER_MARGIN * dense.get(chosen, math.inf):
            chosen = wider
    return chosen
