"""The independent ceiling's machine code: every accumulator computed, nothing else in its k loop.

A ceiling that drops accumulators reads too high; one that runs an instruction more per row reads too
low and makes polyfw's share of it look better than it is (a scalar add per row and k cost the float
ceilings 26-35% on Zen, znver1).
"""
from __future__ import annotations

import platform
import re

import pytest

from polyfw.machine.ceiling import RINGS, hot_loop_mix, isa, shapes

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
_BOOKKEEPING = re.compile(r"^(vmov\w+|add[lq]?|sub[lq]?|inc[lq]?|dec[lq]?|lea[lq]?|cmp[lq]?|j\w+)$")


def test_every_dtype_has_its_mnemonics():
    assert set(SEMIRING_MNEMONICS) == set(RINGS)


@pytest.mark.parametrize("dtype", list(RINGS))
@pytest.mark.parametrize("shape", [(1, 4), (4, 3)])
def test_the_k_loop_is_the_semiring_and_nothing_else(dtype, shape):
    assert shape in shapes(isa()[2])
    rows, vectors = shape
    mix = hot_loop_mix(dtype, shape)
    broadcasts = sum(count for mnemonic, count in mix.items() if "broadcast" in mnemonic)
    assert broadcasts and broadcasts % rows == 0, mix
    steps = broadcasts // rows  # k steps the loop holds (1 unless g++ unrolled it)
    plus, times = SEMIRING_MNEMONICS[dtype]
    assert mix[plus] == mix[times] == rows * vectors * steps, mix
    others = {mnemonic for mnemonic in mix if mnemonic not in (plus, times) and "broadcast" not in mnemonic}
    assert all(_BOOKKEEPING.match(mnemonic) for mnemonic in others), mix
