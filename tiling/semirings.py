"""Semirings as data: the one declaration every kernel, reference and solver is instantiated from.

FW computes a[i,j] = a[i,j] (+) a[i,k] (x) a[k,j]. The relaxed dependence model
(DESIGN.md section 1) holds when (+) is selective - the min or max of a total
order, so an update keeps one of its operands and only ever moves a value one
way - (x) is monotone, and no pivot improves on itself (a[k,k] (x) a[k,k] better
than a[k,k]: for min-plus, a negative cycle). Then every proved tiling is right
for the semiring too. plus-times is defined only to be refused by name.

An `Operation` says once how each kernel writes it: as Python (the Numba CPU and
CUDA kernels, the reference nest), as a numpy ufunc (the python target, graph
inputs) and as LLVM IR (the register-block intrinsic, and the CPU kernels' (+)
through codegen.intrinsics.semiring_keep). A `Semiring` is two
operations, its element types and, where its carrier is not the whole type
(probabilities in [0, 1]), its own 'no path' and 'self' values. Adding one is a
`register(Semiring(...))` line; nothing else lists semirings.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from llvmlite import ir

from .registry import Registry
from .render import fill

#: The int32 infinity, written once: INF + INF = 2**31 - 2 still fits, so a kernel may add two
#: INF entries without overflow, and with the weights bounded every real path stays far below it.
INT32_INF = 2**30 - 1
#: The int16 infinity, the type's largest value: twice int32's lanes per vector, but no room above
#: INF, so int16 sums saturate (SATURATING): INF + w stays INF for w >= 0 and no sum wraps.
INT16_INF = 2**15 - 1
#: each integer element type's infinity (solve's 'unreachable' in that type)
INTEGER_INF = {"int16": INT16_INF, "int32": INT32_INF}
#: element types whose sums are clamped to the type's range (x86: vpaddsw) instead of cast back
SATURATING = ("int16",)


@cache
def top(dtype) -> float | int:
    """The largest value an element type's kernels use: its infinity (uint8: true). Kept per dtype:
    every call asks it several times."""
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return 1
    return INTEGER_INF.get(dtype.name, np.inf)


def bottom(dtype) -> float | int:
    """The smallest value an element type's kernels use: minus its infinity (uint8: false)."""
    dtype = np.dtype(dtype)
    return 0 if dtype == np.uint8 else -top(dtype)


@dataclass(frozen=True)
class Operation:
    """A binary operation of a semiring, as each kind of kernel writes it."""

    name: str
    #: Python, with fields $x and $y: what Numba compiles for the CPU and the GPU
    python: str
    ufunc: np.ufunc
    #: a selective operation keeps the operand that compares so ('<' for min), else None
    keeps: str | None
    #: the identity of the operation in a dtype
    identity: Callable[[Any], float | int]
    #: integer results come back wider than the operands (Numba types int32 + int32 as int64)
    widens: bool = False

    @property
    def selective(self) -> bool:
        return self.keeps is not None

    def __call__(self, x: str, y: str) -> str:
        """The Python expression of x (op) y."""
        return fill(self.python, x=x, y=y)

    def llvm(self, builder, x, y, floating: bool, signed: bool):
        """The LLVM IR of x (op) y on vectors or scalars of one element type (a SATURATING type's
        sum: llvm.sadd.sat, the clamp the Python kernels write as `Semiring.narrow`)."""
        if self.keeps is None:
            return self._arithmetic(builder, x, y, floating, signed)
        if floating:
            # minnum/maxnum: one vminps/vmaxps (no NaN reaches a kernel). A select of a compare
            # would do in registers, but x86 turns a select whose other operand was loaded from
            # the address it is stored to into a masked store (vmaskmovps: 5x slower nest-order
            # float32 kernels on Zen 1)
            element, shape = _element_and_shape(x)
            bits = 32 if isinstance(element, ir.FloatType) else 64
            chosen = builder.module.declare_intrinsic(
                f"llvm.{'minnum' if self.keeps == '<' else 'maxnum'}.{shape}f{bits}", (),
                ir.FunctionType(x.type, [x.type, x.type]))
            return builder.call(chosen, [x, y], fastmath=("nnan", "nsz"))
        return builder.select(self.improves(builder, x, y, floating, signed), x, y)

    def improves(self, builder, x, y, floating: bool, signed: bool):
        """The LLVM IR of 'x is strictly better than y' (a selective operation's compare; i1 or i1 vector):
        where a kernel that keeps predecessors takes x's."""
        if floating:
            return builder.fcmp_ordered(self.keeps, x, y)
        return (builder.icmp_signed if signed else builder.icmp_unsigned)(self.keeps, x, y)

    def _arithmetic(self, builder, x, y, floating: bool, signed: bool):
        element, shape = _element_and_shape(x)
        if self.name == "add":
            if not floating and signed and f"int{element.width}" in SATURATING:
                adds = builder.module.declare_intrinsic(f"llvm.sadd.sat.{shape}i{element.width}", (),
                                                        ir.FunctionType(x.type, [x.type, x.type]))
                return builder.call(adds, [x, y])
            return builder.fadd(x, y) if floating else builder.add(x, y)
        return builder.fmul(x, y) if floating else builder.mul(x, y)


def _element_and_shape(x) -> tuple:
    """The element type of an IR vector or scalar, and the shape part of an intrinsic's name ('v8', or '')."""
    if isinstance(x.type, ir.VectorType):
        return x.type.element, f"v{x.type.count}"
    return x.type, ""


MIN = Operation("min", "min($x, $y)", np.minimum, "<", top)
MAX = Operation("max", "max($x, $y)", np.maximum, ">", bottom)
ADD = Operation("add", "$x + $y", np.add, None, lambda dtype: 0, widens=True)
MUL = Operation("mul", "$x * $y", np.multiply, None, lambda dtype: 1, widens=True)
#: every operation a semiring may name, by name (generated code names them)
OPERATIONS = {operation.name: operation for operation in (MIN, MAX, ADD, MUL)}


@dataclass(frozen=True)
class Semiring:
    name: str
    #: (+): selective (MIN or MAX), or not (ADD: refused)
    plus: Operation
    #: (x): monotone on the carrier
    times: Operation
    #: what a path is in words, for messages and docs
    meaning: str
    #: the element types it computes in
    dtypes: tuple[str, ...]
    #: 'no path' by dtype where it is not (+)'s identity in the whole type (probabilities: 0)
    zero: Mapping[str, float] = field(default_factory=dict, hash=False)
    #: a vertex to itself by dtype where it is not (x)'s identity in the whole type
    one: Mapping[str, float] = field(default_factory=dict, hash=False)
    #: how integer arc lengths (explore's random graphs: 1..1000) read as weights of the carrier
    #: (probabilities: powers of 1/2, whose products stay exact); None: as they are
    from_lengths: Callable[[np.ndarray], np.ndarray] | None = None

    @property
    def selective(self) -> bool:
        return self.plus.selective

    def better(self, x: str, y: str) -> str:
        """Python: x is strictly better than y, so (+) keeps x."""
        return f"{x} {self.plus.keeps} {y}"

    def combine(self, x: str, y: str) -> str:
        """Python: x (x) y (an integer result is brought back by the caller where `widens`: `narrow`)."""
        return self.times(x, y)

    def keep(self, current: str, offered: str) -> str:
        """Python: current (+) offered."""
        return self.plus(current, offered)

    def widens(self, dtype: str) -> bool:
        """Whether x (x) y comes back wider than `dtype` in Numba and must be cast back."""
        return self.times.widens and np.dtype(dtype).kind in "iu"

    def narrow(self, dtype: str, expression: str) -> str:
        """Python bringing x (x) y (`expression`) back into `dtype` in a Numba kernel: cast where it
        `widens`, clamped to the type's range first where the type is SATURATING (the vector kernels'
        llvm.sadd.sat), so every kernel computes the same values."""
        if not self.widens(dtype):
            return expression
        if np.dtype(dtype).name in SATURATING:
            limits = np.iinfo(dtype)
            expression = f"min(max({expression}, {limits.min}), {limits.max})"
        return f"np.{np.dtype(dtype).name}({expression})"

    def no_path(self, dtype) -> float | int:
        """What 'no path' is stored as in `dtype`: the (+)-identity of the carrier."""
        dtype = np.dtype(dtype)
        return self.zero[dtype.name] if dtype.name in self.zero else self.plus.identity(dtype)

    def identity(self, dtype) -> float | int:
        """A vertex's path to itself in `dtype`: the (x)-identity of the carrier."""
        dtype = np.dtype(dtype)
        return self.one[dtype.name] if dtype.name in self.one else self.times.identity(dtype)

    def check_relaxed(self) -> None:
        """Refuse, by name, a semiring the relaxed model (and so every blocked schedule) does not cover."""
        if not self.selective:
            raise UnsupportedSemiringError(
                f"semiring {self.name!r}: its (+) is {self.plus.name}, not selective (min or max), so the relaxed "
                f"dependence model does not hold and no blocked or parallel schedule is proved for it; "
                f"registered semirings that are: {', '.join(name for name, s in SEMIRINGS.items() if s.selective)}")


class UnsupportedSemiringError(ValueError):
    """A semiring outside the relaxed model, asked for a schedule that needs it."""


#: every semiring the targets, solve and the CLI know: `register(Semiring(...))` adds one
SEMIRINGS: Registry[Semiring] = Registry("semiring")
register = SEMIRINGS.register


register(Semiring("min-plus", MIN, ADD, "shortest paths", ("float32", "float64", "int16", "int32")))
register(Semiring("max-min", MAX, MIN, "widest (bottleneck) paths", ("float32", "float64", "int32")))
register(Semiring("min-max", MIN, MAX, "minimax paths (the smallest largest edge)", ("float32", "float64", "int32")))
register(Semiring("or-and", MAX, MIN, "reachability (transitive closure), on 0/1 bytes", ("uint8",)))
register(Semiring("plus-times", ADD, MUL, "sums of path products (not selective: refused)", ("float64",)))
MIN_PLUS = SEMIRINGS["min-plus"]


def semiring(name: str | Semiring) -> Semiring:
    """A registered semiring by name (or the Semiring itself)."""
    return name if isinstance(name, Semiring) else SEMIRINGS.find(name)
