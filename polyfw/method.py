"""Dense or sparse: which of Floyd–Warshall (n^3 relaxations at the tuned schedule's rate) and
Johnson (about m n log2 n heap steps at its rate) a graph should get.

The rates are this CPU's when the tuning table has them (benchmarks/cpu.py and
benchmarks/sparse.py --tune write them), else figures measured on a 2-core AVX-512 machine.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: what `solve(method=...)` takes: 'dense' Floyd-Warshall, 'sparse' Johnson, or the faster by the model
SOLVE_METHODS = ("dense", "sparse", "auto")
#: relaxations/s of the best dense schedule, and m n log2 n per second of Johnson, when not tuned
DEFAULT_RATES = {"dense": {"float32": 45e9, "int32": 70e9, "int16": 140e9, "float64": 24e9}, "johnson": 3.0e8}


@dataclass(frozen=True)
class MethodChoice:
    method: str
    dense_seconds: float
    sparse_seconds: float

    def __str__(self) -> str:
        return (f"{self.method} (predicted: dense Floyd-Warshall {self.dense_seconds:.3g} s, "
                f"sparse Johnson {self.sparse_seconds:.3g} s)")


def choose_method(n: int, m: int, dtype: str, rates: dict | None = None) -> MethodChoice:
    """The faster method by the cost model (`rates` as DEFAULT_RATES; missing entries default)."""
    rates = {**DEFAULT_RATES, **(rates or {})}
    dense_rate = rates["dense"].get(dtype, DEFAULT_RATES["dense"].get(dtype, DEFAULT_RATES["dense"]["float64"]))
    dense = n**3 / dense_rate
    sparse = max(m, 1) * n * math.log2(max(n, 2)) / rates["johnson"]
    return MethodChoice("sparse" if sparse < dense else "dense", dense, sparse)
