"""Dense or sparse, and in which exact element type: the choices solve makes for 'auto' by the cost model.

Floyd–Warshall costs n^3 relaxations at the dense rate, Johnson about m n log2 n
heap steps at its rate, or n (n + m) steps of a BFS from every source where every arc has one
weight (an unweighted graph: no heap). The dense rates are this machine's calibrated product
rates where `polyfw calibrate` measured them, else the tuning table's (benchmarks/cpu.py
and benchmarks/sparse.py --tune write them), else figures measured on a 2-core AVX-512 machine.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numba

from codegen.targets import find_target

from .machine import calibrations
from .machine.tuning import machine_tuning, table_stamp, tuning_table

#: what `solve(method=...)` takes: 'dense' Floyd-Warshall, 'sparse' Johnson, or the faster by the model
SOLVE_METHODS = ("dense", "sparse", "auto")
#: relaxations/s of the best dense schedule, m n log2 n per second of Johnson, and n (n + m) per second
#: of its BFS from every source (2-core Zen 3, the power grid: 0.30-0.39 s), when not tuned
DEFAULT_RATES = {"dense": {"float32": 45e9, "int32": 70e9, "int16": 140e9, "float64": 24e9}, "johnson": 3.0e8,
                 "breadth_first": 2.3e8}
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

    def __str__(self) -> str:
        return (f"{self.method} (predicted: dense Floyd-Warshall {self.dense_seconds:.3g} s, "
                f"sparse Johnson {self.sparse_seconds:.3g} s)")


def choose_method(n: int, m: int, dtype: str, rates: dict | None = None, one_weight: bool = False) -> MethodChoice:
    """The faster method by the cost model (`rates` as DEFAULT_RATES; missing entries default).
    one_weight: every arc weighs the same (>= 0), so Johnson is a BFS from every source."""
    rates = {**DEFAULT_RATES, **(rates or {})}
    dense_rate = rates["dense"].get(dtype, DEFAULT_RATES["dense"].get(dtype, DEFAULT_RATES["dense"]["float64"]))
    # a block layer's fixed cost (a GPU's launches, 302 us each by polyfw.gpu_model's fit): small graphs pay it
    layers = math.ceil(n / rates.get("dense_tile", 128))
    dense = n**3 / dense_rate + layers * rates.get("dense_block_layer_seconds", 0.0)
    sparse = n * (n + m) / rates["breadth_first"] if one_weight else \
        max(m, 1) * n * math.log2(max(n, 2)) / rates["johnson"]
    return MethodChoice("sparse" if sparse < dense else "dense", dense, sparse)


#: the tile whose calibrated product rate stands for a dense run's
RATE_TILE = 128
#: how much faster a wider exact type must be predicted before it is chosen over a narrower one
#: (a narrower type also halves the memory and the input's conversion)
WIDER_MARGIN = 1.10


@cache
def _calibrated_dense_rates(threads: int) -> dict[str, float]:
    """dtype -> relaxations/s of the product on `threads` threads, for the dtypes calibrated here
    (read once a process)."""
    found = {}
    for dtype in DEFAULT_RATES["dense"]:
        calibration = calibrations.load(dtype, threads)
        if calibration is not None:
            found[dtype] = threads * calibration.product_rate(RATE_TILE)
    return found


def calibration_stamp(threads: int) -> tuple:
    """The calibrated dense rates method_rates reads on `threads` threads, as a value a choice made
    from them may be kept by."""
    return tuple(sorted(_calibrated_dense_rates(threads).items()))


#: method_rates' answers by (target, threads, the tables' stamp): every solve with dtype or method 'auto' asks
_RATES: dict[tuple, tuple[dict, dict]] = {}


def method_rates(target: str, stamp: tuple | None = None) -> dict:
    """The rates choose_method reads for `target`: the tuning table's, with this machine's calibrated
    dense rates over them (kept while the tables are unchanged; `stamp`: their table_stamp(), when the
    caller has read it)."""
    threads = numba.get_num_threads()
    calibrated = _calibrated_dense_rates(threads)  # (read once a process: the same object until cleared)
    key = (target, threads, stamp or table_stamp())
    known = _RATES.get(key)
    if known is None or known[0] is not calibrated:
        tuned = machine_tuning(tuning_table(), target).get("rates") or {}
        if find_target(target).on_gpu:  # the CPU's calibration says nothing of a GPU
            known = _RATES[key] = calibrated, {**DEFAULT_GPU_RATES, **tuned,
                                               "dense": {**DEFAULT_GPU_RATES["dense"], **tuned.get("dense", {})}}
        else:
            known = _RATES[key] = calibrated, {**tuned, "dense": {**tuned.get("dense", {}), **calibrated}}
    return known[1]


def fastest_exact(exact: list[str], rates: dict) -> str:
    """Of the exact dtypes (narrowest first), the narrowest unless a wider one's dense rate is
    WIDER_MARGIN times faster (then the fastest such)."""
    dense = {**DEFAULT_RATES["dense"], **rates.get("dense", {})}
    chosen = exact[0]
    for wider in exact[1:]:
        if dense.get(wider, 0.0) > WIDER_MARGIN * dense.get(chosen, math.inf):
            chosen = wider
    return chosen
