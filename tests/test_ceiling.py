"""The independent ceiling's machine code: every accumulator computed, nothing else in its k loop.

A ceiling that drops accumulators reads too high; one that runs an instruction more per row reads too
low and makes polyfw's share of it look better than it is (a scalar add per row and k cost the float
ceilings 26-35% on Zen, znver1).
"""
from __future__ import annotations

import platform
import re
import subprocess

import pytest

from codegen.intrinsics import ISAS, target_isa
from polyfw.machine.ceiling import RINGS, compiler_flags, hot_loop, hot_loop_mix, isa, shapes

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="reads x86 assembly")

#: (plus, times) as x86 vector mnemonics, for each dtype's semiring (RINGS)
SEMIRING_MNEMONICS = {
    "float32": ("vminps", "vaddps"),
    "int32": ("vpminsd", "vpaddd"),
    "float64": ("vminpd", "vaddpd"),
    "int16": ("vpminsw", "vpaddsw"),
    "uint8": ("vpmaxub", "vpminub"),
}
#: what else the loop may hold: vector moves and the loop's own counting
_BOOKKEEPING = re.compile(r"^(v?mov\w+|add[lq]?|sub[lq]?|inc[lq]?|dec[lq]?|lea[lq]?|cmp[lq]?|j\w+)$")


def test_every_dtype_has_its_mnemonics():
    assert set(SEMIRING_MNEMONICS) == set(RINGS)


def _without_vex(mnemonic: str) -> str:
    """The SSE name of an AVX mnemonic: what g++ writes once -mno-avx narrows the kernel (POLYFW_ISA=sse2)."""
    return mnemonic[1:] if isa()[0] == "SSE2" else mnemonic


@pytest.mark.isa
@pytest.mark.parametrize("dtype", list(RINGS))
@pytest.mark.parametrize("shape", [(1, 4), (4, 3)])
def test_the_k_loop_is_the_semiring_and_nothing_else(dtype, shape):
    assert shape in shapes(isa()[2])
    rows, vectors = shape
    mix = hot_loop_mix(dtype, shape)
    plus, times = (_without_vex(mnemonic) for mnemonic in SEMIRING_MNEMONICS[dtype])
    per_step = rows * vectors
    assert mix[plus] == mix[times] and mix[plus] and mix[plus] % per_step == 0, mix
    steps = mix[plus] // per_step  # k steps the loop holds (1 unless g++ unrolled it)
    # a row's a[r, k] reaches every lane once a k step: one broadcast (SSE2 has none: a load, then a shuffle)
    spreads = [mnemonic for mnemonic in mix if "broadcast" in mnemonic or "shuf" in mnemonic or "unpckl" in mnemonic
               or mnemonic == "movddup"]
    assert sum(mix[mnemonic] for mnemonic in spreads) >= rows * steps, mix
    others = {mnemonic for mnemonic in mix if mnemonic not in (plus, times, *spreads)}
    assert all(_BOOKKEEPING.match(mnemonic) for mnemonic in others), mix


@pytest.mark.isa
def test_the_kernel_is_narrowed_to_the_isa_polyfw_is_shaped_for():
    """Under POLYFW_ISA=avx2 (or sse2) polyfw's kernels run 32-byte (16-byte) vectors: a ceiling on wider ones
    would judge them against a machine they do not use."""
    name, vector_bytes, registers = isa()
    assert (vector_bytes, registers) == ISAS[target_isa()]
    defined = subprocess.run(["g++", *compiler_flags(), "-dM", "-E", "-x", "c++", "/dev/null"], check=True,
                             capture_output=True, text=True).stdout
    widest_first = {"AVX-512": "__AVX512F__", "AVX2": "__AVX__", "SSE2": "__SSE2__"}  # each ISA's g++ macro
    kept = list(widest_first).index(name)
    present = [f"#define {macro} " in defined for macro in widest_first.values()]
    assert all(present[kept:]) and not any(present[:kept]), (present, compiler_flags())
    loop = " ".join(hot_loop("float32", (4, 3)))
    assert not [register for register in {32: ("zmm",), 16: ("ymm", "zmm")}.get(vector_bytes, ()) if register in loop]
