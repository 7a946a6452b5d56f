"""Semirings as data: the one operation every kernel, reference and solver is instantiated from.

FW computes a[i,j] = a[i,j] (+) a[i,k] (x) a[k,j]. The relaxed dependence model
(DESIGN.md section 1) holds when (+) is selective - the min or max of a total
order, so an update keeps one of its operands and only ever moves a value one
way - (x) is monotone, and no pivot improves on itself (a[k,k] (x) a[k,k] better
than a[k,k]: for min-plus, a negative cycle). Then every proved tiling is right
for the semiring too. plus-times is defined only to be refused by name.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: (x) written as Python, for the kernels' templates
_TIMES = {"add": "{x} + {y}", "min": "min({x}, {y})", "max": "max({x}, {y})", "mul": "{x} * {y}"}
_BETTER = {"min": "<", "max": ">"}


@dataclass(frozen=True)
class Semiring:
    name: str
    #: (+): 'min' or 'max' (selective), or 'add' (not selective: refused)
    plus: str
    #: (x): 'add', 'min', 'max' (or 'mul' for plus-times)
    times: str
    #: what a path is in words, for messages and docs
    meaning: str
    dtypes: tuple[str, ...]

    @property
    def selective(self) -> bool:
        return self.plus in _BETTER

    def better(self, x: str, y: str) -> str:
        """Python: x is strictly better than y, so (+) keeps x."""
        return f"{x} {_BETTER[self.plus]} {y}"

    def combine(self, x: str, y: str) -> str:
        """Python: x (x) y (int32 sums are cast by the caller)."""
        return _TIMES[self.times].format(x=x, y=y)

    @property
    def sums(self) -> bool:
        """(x) is an addition: int32 results need a cast back and an INF that cannot overflow."""
        return self.times == "add"

    def no_path(self, dtype) -> float | int:
        """The (+)-identity in `dtype`: what 'no path' is stored as."""
        dtype = np.dtype(dtype)
        sign = 1 if self.plus == "min" else -1
        if dtype == np.uint8:
            return 0 if sign < 0 else 1
        if dtype == np.int32:
            return sign * (2**30 - 1)  # INF + INF stays inside int32
        return sign * np.inf

    def identity(self, dtype) -> float | int:
        """The (x)-identity in `dtype`: a vertex's path to itself."""
        dtype = np.dtype(dtype)
        if self.times == "add":
            return 0
        if self.times == "mul":
            return 1
        # min's identity is the top of the order, max's the bottom
        top = self.times == "min"
        if dtype == np.uint8:
            return 1 if top else 0
        if dtype == np.int32:
            return (2**30 - 1) if top else -(2**30 - 1)
        return np.inf if top else -np.inf

    def check_relaxed(self) -> None:
        """Refuse, by name, a semiring the relaxed model (and so every blocked schedule) does not cover."""
        if not self.selective:
            raise UnsupportedSemiringError(
                f"semiring {self.name!r}: its (+) is {self.plus}, not selective (min or max), so the relaxed "
                f"dependence model does not hold and no blocked or parallel schedule is proved for it; "
                f"shipped semirings that are: {', '.join(name for name, s in SEMIRINGS.items() if s.selective)}")


class UnsupportedSemiringError(ValueError):
    """A semiring outside the relaxed model, asked for a schedule that needs it."""


SEMIRINGS = {s.name: s for s in (
    Semiring("min-plus", "min", "add", "shortest paths", ("float32", "float64", "int32")),
    Semiring("max-min", "max", "min", "widest (bottleneck) paths", ("float32", "float64", "int32")),
    Semiring("min-max", "min", "max", "minimax paths (the smallest largest edge)", ("float32", "float64", "int32")),
    Semiring("or-and", "max", "min", "reachability (transitive closure), on 0/1 bytes", ("uint8",)),
    Semiring("plus-times", "add", "mul", "sums of path products (not selective: refused)", ("float64",)),
)}
MIN_PLUS = SEMIRINGS["min-plus"]


def semiring(name: str | Semiring) -> Semiring:
    """A shipped semiring by name (or the Semiring itself)."""
    if isinstance(name, Semiring):
        return name
    if name not in SEMIRINGS:
        raise ValueError(f"unknown semiring {name!r}; shipped: {', '.join(SEMIRINGS)}")
    return SEMIRINGS[name]
