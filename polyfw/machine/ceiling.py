"""An independent ceiling per element type: a purpose-written C++ micro-kernel, every register-block
shape that fits the ISA, L1-resident, on all threads. Not polyfw's code, so it can judge polyfw's.
The ISA is the one polyfw's kernels are shaped for: the CPU's widest, or a narrower one that POLYFW_ISA
names (g++ then leaves the wider instructions out), so AVX2 code on an AVX-512 machine is judged
against an AVX2 ceiling.

    .venv/bin/python -m polyfw.machine.ceiling [--dtypes float32 int32 float64 int16 uint8] [--seconds 0.2]

Per thread: C, R rows x V vectors, stays in registers while k runs over an
L1-resident panel, C = plus(C, times(a[r, k], B[k, v])) with a broadcast of
a[r, k] and one vector load of B per vector; GCC vector extensions, g++ -O3
-march=native -fopenmp. Each dtype computes the semiring polyfw runs in it
(RINGS, declared once): min-plus in float32, int32 and float64; min-plus with
a saturating add in int16 (a sum clamps at 32767 instead of wrapping); or-and
as max-min on unsigned bytes in uint8. Per accumulator and k the hot loop has
two instructions (g++ 12 -S on AVX2): vaddps/vpaddd/vaddpd then vminps/vpminsd/
vminpd; vpaddsw then vpminsw for int16, besides a broadcast per row and a load
per vector and nothing else (`hot_loop_mix`; the add is the intrinsic
_mm256_adds_epi16, _mm512_adds_epi16 with AVX-512BW: GCC does not turn a
widen-add-clamp into vpaddsw); vpminub then vpmaxub for uint8. A shape fits
when its accumulators, one row of B and the broadcast fit the vector register
file (R*V + V + 1 <= registers). Needs g++ (Debian's build-essential);
reports the best shape per dtype.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codegen.intrinsics import ISAS, target_isa
from tiling.render import fill

os.environ.setdefault("OMP_WAIT_POLICY", "passive")


@dataclass(frozen=True)
class Ring:
    """A dtype's semiring as the C++ kernel computes it: C = plus(C, times(a, b))."""

    ctype: str
    #: C++ functors of _SOURCE
    plus: str
    times: str
    #: the semiring polyfw registers it as (tiling.semirings)
    semiring: str

    @property
    def label(self) -> str:
        """The semiring as reports name it."""
        return f"{self.semiring}, saturating" if self.times == "AddSaturating" else self.semiring


#: every element type's semiring, declared once
RINGS = {
    "float32": Ring("float", "Min", "Add", "min-plus"),
    "int32": Ring("int", "Min", "Add", "min-plus"),
    "float64": Ring("double", "Min", "Add", "min-plus"),
    "int16": Ring("short", "Min", "AddSaturating", "min-plus"),
    "uint8": Ring("unsigned char", "Max", "Min", "or-and"),
}
_PANEL = 256  # k per sweep: A (R x 256) and B (256 x V vectors) stay in L1

_SOURCE = r'''
#include <chrono>
#include <omp.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

struct Min { template <class V> V operator()(V x, V y) const { return x < y ? x : y; } };
struct Max { template <class V> V operator()(V x, V y) const { return x > y ? x : y; } };
struct Add { template <class V> V operator()(V x, V y) const { return x + y; } };

// int16 lanes, clamped to [-32768, 32767]: one instruction on x86, a widen-add-clamp elsewhere
struct AddSaturating {
    template <class V> V operator()(V x, V y) const {
#if defined(__AVX512BW__)
        if constexpr (sizeof(V) == 64) return (V)_mm512_adds_epi16((__m512i)x, (__m512i)y);
#endif
#if defined(__AVX2__)
        if constexpr (sizeof(V) == 32) return (V)_mm256_adds_epi16((__m256i)x, (__m256i)y);
#endif
#if defined(__SSE2__)
        if constexpr (sizeof(V) == 16) return (V)_mm_adds_epi16((__m128i)x, (__m128i)y);
#endif
        typedef int wide __attribute__((vector_size(2 * sizeof(V))));
        wide sum = __builtin_convertvector(x, wide) + __builtin_convertvector(y, wide);
        sum = sum > 32767 ? 32767 : sum;
        sum = sum < -32768 ? -32768 : sum;
        return __builtin_convertvector(sum, V);
    }
};

template <typename T, int R, int V, class Plus, class Times>
static double rate(long reps) {
    typedef T vec __attribute__((vector_size($vector_bytes)));
    constexpr int W = $vector_bytes / sizeof(T);
    constexpr int K = $panel;
    double seconds = 0;
    int threads = 1;
    #pragma omp parallel
    {
        alignas(64) T a[R * K];
        alignas(64) vec b[K * V];
        for (int i = 0; i < R * K; ++i) a[i] = (T)(i % 7 + 1);
        for (int i = 0; i < K * V; ++i) b[i] = (vec){} + (T)(i % 5 + 1);
        vec c[R][V];
        for (int r = 0; r < R; ++r) for (int v = 0; v < V; ++v) c[r][v] = (vec){} + (T)100;  // in every type
        #pragma omp barrier
        auto start = std::chrono::steady_clock::now();
        for (long rep = 0; rep < reps; ++rep) {
            for (int k = 0; k < K; ++k) {
                #pragma GCC unroll 16
                for (int r = 0; r < R; ++r) {
                    // a - 0 is every value itself, so the broadcast reads memory; 0 + a is not (0 + -0.0
                    // is +0.0): a float kernel then kept one scalar add a row and k, 26-35% of the
                    // float32 and float64 ceilings on Zen (znver1)
                    vec x = a[r * K + k] - (vec){};
                    #pragma GCC unroll 4
                    for (int v = 0; v < V; ++v) c[r][v] = Plus()(c[r][v], Times()(x, b[k * V + v]));
                }
            }
            asm volatile("" : : "g"(&c) : "memory");  // keep C live, but in registers inside the k loop
        }
        #pragma omp barrier
        #pragma omp master
        {
            seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            threads = omp_get_num_threads();
        }
        volatile T sink = c[0][0][0];
        (void)sink;
    }
    return (double)threads * reps * K * R * V * W / seconds;
}
'''


#: g++ flags (beside -march=native) that narrow the C++ kernel to each ISA polyfw's kernels may be shaped for
#: (codegen.intrinsics.ISAS): with POLYFW_ISA=avx2 on an AVX-512 machine polyfw runs 32-byte vectors and 16
#: registers, and is judged against a ceiling that runs the same
_NARROWING = {"avx512": (), "avx2": ("-mno-avx512f",), "sse2": ("-mno-avx",), "neon": ()}
_NAMES = {"avx512": "AVX-512", "avx2": "AVX2", "sse2": "SSE2", "neon": "NEON"}


def isa() -> tuple[str, int, int]:
    """(name, vector bytes, vector registers) of the ISA polyfw's kernels are shaped for: this CPU's widest,
    or the narrower one POLYFW_ISA names."""
    shaped_for = target_isa()
    return (_NAMES[shaped_for], *ISAS[shaped_for])


def shapes(registers: int) -> list[tuple[int, int]]:
    """(rows, vectors) of every register block whose accumulators, B row and broadcast fit."""
    return [(rows, vectors) for vectors in range(1, 5) for rows in range(1, 17)
            if rows * vectors + vectors + 1 <= registers]


def source(vector_bytes: int, fits: list[tuple[int, int]], dtypes: list[str]) -> str:
    """The C++ of the kernels: one extern "C" rate_<dtype>(rows, vectors, reps) per dtype."""
    text = fill(_SOURCE, vector_bytes=vector_bytes, panel=_PANEL)
    for dtype in dtypes:
        ring = RINGS[dtype]
        cases = "".join(f"    if (rows == {r} && vectors == {v}) "
                        f"return rate<{ring.ctype}, {r}, {v}, {ring.plus}, {ring.times}>(reps);\n" for r, v in fits)
        text += f'extern "C" double rate_{dtype}(int rows, int vectors, long reps) {{\n{cases}    return -1;\n}}\n'
    return text


def compile_source(text: str, output: Path, *flags: str) -> None:
    """g++ -O3 -march=native -fopenmp, narrowed to the ISA of `isa()`, and `flags` on the C++ `text`, into
    `output`."""
    cpp = output.with_suffix(".cpp")
    cpp.write_text(text)
    subprocess.run(["g++", *compiler_flags(), *flags, "-o", str(output), str(cpp)], check=True)


def compiler_flags() -> list[str]:
    """g++'s flags for the kernels: this CPU's instructions, up to the ISA polyfw's kernels are shaped for."""
    return ["-O3", "-march=native", *_NARROWING[target_isa()], "-fopenmp"]


def hot_loop(dtype: str, shape: tuple[int, int]) -> list[str]:
    """The instructions of the k loop g++ makes of `dtype`'s kernel at `shape` (rows, vectors), one a line."""
    from codegen.assembly import hot_loop as loop_of  # the loop finder polyfw's own kernels are read with

    with tempfile.TemporaryDirectory(prefix="polyfw-ceiling-") as folder:
        assembly = Path(folder) / "ceiling.s"
        compile_source(source(isa()[1], [shape], [dtype]), assembly, "-S")
        loop = loop_of(assembly.read_text())
    return [line.strip() for line in loop if line.startswith("\t") and not line.lstrip().startswith(".")]


def hot_loop_mix(dtype: str, shape: tuple[int, int]) -> Counter[str]:
    """hot_loop's instructions counted by mnemonic: a ceiling holds only if that loop computes every
    accumulator and does nothing else."""
    return Counter(line.split()[0] for line in hot_loop(dtype, shape))


class Kernels:
    """The micro-kernels of some dtypes, compiled for this CPU; `rate` times one shape."""

    def __init__(self, dtypes: list[str]) -> None:
        self.isa, self.vector_bytes, self.registers = isa()
        self.fits = shapes(self.registers)
        with tempfile.TemporaryDirectory(prefix="polyfw-ceiling-") as folder:
            library = Path(folder) / "ceiling.so"
            compile_source(source(self.vector_bytes, self.fits, dtypes), library, "-shared", "-fPIC")
            self._library = ctypes.CDLL(str(library))  # loaded: the file may go
        self._kernels = {}
        for dtype in dtypes:
            kernel = getattr(self._library, f"rate_{dtype}")
            kernel.restype, kernel.argtypes = ctypes.c_double, [ctypes.c_int, ctypes.c_int, ctypes.c_long]
            self._kernels[dtype] = kernel

    def lanes(self, dtype: str) -> int:
        return self.vector_bytes // np.dtype(dtype).itemsize

    def reps(self, dtype: str, shape: tuple[int, int], seconds: float) -> int:
        """Repetitions of the panel that take about `seconds` (timed from a short first run)."""
        reps = 16
        while True:
            started = time.perf_counter()
            self._kernels[dtype](*shape, reps)
            elapsed = time.perf_counter() - started
            if elapsed > seconds / 20:
                return max(1, round(reps * seconds / elapsed))
            reps *= 8

    def rate(self, dtype: str, shape: tuple[int, int], reps: int) -> float:
        """Relaxations per second of one run of `reps` panels at `shape` (rows, vectors), all threads."""
        return self._kernels[dtype](*shape, reps)


def measure(dtypes: list[str], seconds: float = 0.2, repeats: int = 3, kernels: Kernels | None = None
            ) -> dict[str, dict]:
    """Per dtype: the rate of every shape that fits (best of `repeats`, each ~`seconds`) and the best."""
    kernels = kernels or Kernels(dtypes)
    found = {}
    for dtype in dtypes:
        by_shape, reps = {}, {}
        for shape in kernels.fits:
            reps[shape] = kernels.reps(dtype, shape, seconds)
            by_shape[shape] = max(kernels.rate(dtype, shape, reps[shape]) for _ in range(repeats))
        best = max(by_shape, key=by_shape.get)
        found[dtype] = {"isa": kernels.isa, "lanes": kernels.lanes(dtype), "registers": kernels.registers,
                        "semiring": RINGS[dtype].label, "by_shape": by_shape, "best_shape": best,
                        "best": by_shape[best], "best_reps": reps[best]}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", nargs="+", default=list(RINGS), choices=list(RINGS))
    parser.add_argument("--seconds", type=float, default=0.2, help="per shape and repeat")
    args = parser.parse_args()
    for dtype, result in measure(args.dtypes, args.seconds).items():
        rows, vectors = result["best_shape"]
        print(f"{dtype} ({result['semiring']}): {result['isa']}, {result['lanes']} lanes x {result['registers']} "
              f"registers; best {rows} x {vectors} vectors: {result['best'] / 1e9:.1f} G relaxations/s")
        for (r, v), rate in sorted(result["by_shape"].items(), key=lambda item: -item[1])[:8]:
            print(f"    {r:2d} x {v} vectors {rate / 1e9:7.1f} G/s")


if __name__ == "__main__":
    main()
