"""The product kernel's machine code, and whether its register block spills.

A block with more live vectors than the register file keeps some
accumulators on the stack: each k step then loads and stores them, and the
kernel runs at a fraction of its speed while giving exact results, so no
test of values sees it. The check reads the assembly LLVM emits for the
kernel's k loop (the innermost loop whose min/max instructions write the most registers) and
counts its stack accesses.
"""
from __future__ import annotations

import re
from types import ModuleType

from .kernels import KernelOptions, kernel_signatures, kernel_source
from .llvm_options import vectorizers

_LABEL = re.compile(r"^(\.?L\w+):")
_JUMP = re.compile(r"^\s+j\w+\s+(\.?L\w+)\s*$")
#: vector min/max of any element type (vpminsd, vminps, vpmaxub, ...)
_MIN_MAX = re.compile(r"^\s+v?p?(min|max)\w*\s")
#: a memory operand based on the stack pointer (LLVM omits the frame pointer and uses rbp as a
#: general register, as in the k loop's pointer to B)
_STACK = re.compile(r"\(%rsp[,)]|\[rsp\b")
_VECTOR = re.compile(r"%?\b[xyz]mm\d+")


def kernel_assembly(options: KernelOptions, kernel: str = "relax_product") -> str:
    """x86 assembly of one tile kernel for these options (relax_product, relax_layers, relax_rows or
    micro_rows), compiled afresh (Numba keeps no assembly for code it loads from its cache) with the
    vectorizer settings the kernel module uses."""
    module = ModuleType("polyfw_kernels_for_assembly")
    exec(compile(kernel_source(options, cache=False), module.__name__, "exec"), module.__dict__)
    signatures = kernel_signatures(options)
    for name in ("micro_rows", "relax_rows", "relax_layers", "relax_product"):
        with vectorizers(slp=name.startswith("micro_"), loop=not name.startswith("micro_")):
            getattr(module, name).compile(signatures[name])
    return next(iter(getattr(module, kernel).inspect_asm().values()))


def hot_loop(assembly: str) -> list[str]:
    """The lines of the innermost loop (a backward jump with no other inside it) holding the most
    vector min/max instructions: the register block's k loop."""
    lines = assembly.splitlines()
    labels = {}
    loops = []
    for number, line in enumerate(lines):
        label = _LABEL.match(line)
        if label:
            labels[label.group(1)] = number
        jump = _JUMP.match(line)
        if jump and jump.group(1) in labels:
            loops.append((labels[jump.group(1)], number))
    innermost = [(start, end) for start, end in loops
                 if not any(start <= s and e <= end and (s, e) != (start, end) for s, e in loops)]
    if not innermost:
        return []
    start, end = max(innermost, key=lambda loop: _accumulators(lines[loop[0]:loop[1] + 1]))
    return lines[start:end + 1]


def _accumulators(loop: list[str]) -> tuple[int, int]:
    """(distinct registers its min/max instructions write, how many there are): the register block's k loop
    writes one accumulator per row and vector, while an edge block's one-row loop, which LLVM may unroll
    into more min/max instructions than the block's (emeraldrapids tuning with AVX2), writes a few."""
    minima = [line for line in loop if _MIN_MAX.match(line)]
    return len({line.rsplit(",", 1)[-1].strip() for line in minima}), len(minima)


def stack_accesses(lines: list[str], vectors: bool = True) -> int:
    """Instructions among `lines` that move a vector register (vectors=True: a spilled accumulator
    or B row) or a general register (vectors=False: a reloaded pointer or bound, cheap) to or
    from the stack."""
    return sum(bool(_STACK.search(line)) and bool(_VECTOR.search(line)) == vectors
               for line in lines if not _LABEL.match(line))


def spill_report(options: KernelOptions) -> tuple[int, int, int, int]:
    """(instructions, min/max instructions, vector spills, general-register stack accesses) of the
    product kernel's k loop."""
    loop = hot_loop(kernel_assembly(options))
    return (len(loop), sum(bool(_MIN_MAX.match(line)) for line in loop), stack_accesses(loop),
            stack_accesses(loop, vectors=False))
