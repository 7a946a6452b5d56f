"""An independent min-plus ceiling: a purpose-written C++ micro-kernel, every register-block shape
that fits the ISA, L1-resident, on all threads. Not polyfw's code, so it can judge polyfw's.

    .venv/bin/python -m polyfw.machine.ceiling [--dtypes float32 int32 float64] [--seconds 0.2]

Per thread: C, R rows x V vectors, stays in registers while k runs over an
L1-resident panel, C = min(C, a[r, k] + B[k, v]) with a broadcast of a[r, k]
and one vector load of B per vector; GCC vector extensions, g++ -O3
-march=native -fopenmp. A shape fits when its accumulators, one row of B
and the broadcast fit the vector register file (R*V + V + 1 <= registers).
Needs g++ (Debian's build-essential); reports the best shape per dtype.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from tiling.render import fill

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

#: the C++ type of each kernel dtype
C_TYPES = {"float32": "float", "int32": "int", "float64": "double"}
_PANEL = 256  # k per sweep: A (R x 256) and B (256 x V vectors) stay in L1

_HEAD = r'''
#include <chrono>
#include <omp.h>

template <typename T, int R, int V>
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
        for (int r = 0; r < R; ++r) for (int v = 0; v < V; ++v) c[r][v] = (vec){} + (T)1000000;
        #pragma omp barrier
        auto start = std::chrono::steady_clock::now();
        for (long rep = 0; rep < reps; ++rep) {
            for (int k = 0; k < K; ++k) {
                #pragma GCC unroll 16
                for (int r = 0; r < R; ++r) {
                    vec x = (vec){} + a[r * K + k];
                    #pragma GCC unroll 4
                    for (int v = 0; v < V; ++v) {
                        vec through = x + b[k * V + v];
                        c[r][v] = through < c[r][v] ? through : c[r][v];
                    }
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


def isa() -> tuple[str, int, int]:
    """(name, vector bytes, vector registers) of this CPU, from /proc/cpuinfo's flags."""
    flags = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    if "avx512f" in flags:
        return "AVX-512", 64, 32
    if "avx2" in flags or "avx" in flags:
        return "AVX2", 32, 16
    if "asimd" in flags:
        return "NEON", 16, 32
    return "SSE2", 16, 16


def shapes(registers: int) -> list[tuple[int, int]]:
    """(rows, vectors) of every register block whose accumulators, B row and broadcast fit."""
    return [(rows, vectors) for vectors in range(1, 5) for rows in range(1, 17)
            if rows * vectors + vectors + 1 <= registers]


def build(vector_bytes: int, fits: list[tuple[int, int]]) -> ctypes.CDLL:
    source = fill(_HEAD, vector_bytes=vector_bytes, panel=_PANEL)
    for name, ctype in C_TYPES.items():
        cases = "".join(f"    if (rows == {r} && vectors == {v}) return rate<{ctype}, {r}, {v}>(reps);\n"
                        for r, v in fits)
        source += f'extern "C" double rate_{name}(int rows, int vectors, long reps) {{\n{cases}    return -1;\n}}\n'
    folder = Path(tempfile.mkdtemp(prefix="polyfw-ceiling-"))
    (folder / "ceiling.cpp").write_text(source)
    subprocess.run(["g++", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-o", str(folder / "ceiling.so"),
                    str(folder / "ceiling.cpp")], check=True)
    library = ctypes.CDLL(str(folder / "ceiling.so"))
    for name in C_TYPES:
        getattr(library, f"rate_{name}").restype = ctypes.c_double
        getattr(library, f"rate_{name}").argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long]
    return library


def measure(dtypes: list[str], seconds: float = 0.2, repeats: int = 3) -> dict[str, dict]:
    """Per dtype: the rate of every shape that fits (best of `repeats`, each ~`seconds`) and the best."""
    name, vector_bytes, registers = isa()
    fits = shapes(registers)
    library = build(vector_bytes, fits)
    found = {}
    for dtype in dtypes:
        kernel = getattr(library, f"rate_{dtype}")
        lanes = vector_bytes // np.dtype(dtype).itemsize
        by_shape = {}
        for rows, vectors in fits:
            work = rows * vectors * lanes * _PANEL
            reps = max(1, int(seconds * 2e10 / work / 10))  # ~2e10 relaxations/s as a first guess
            first = kernel(rows, vectors, reps)
            reps = max(1, int(seconds * first / work / max(os.cpu_count() or 1, 1)))
            by_shape[(rows, vectors)] = max(kernel(rows, vectors, reps) for _ in range(repeats))
        best = max(by_shape, key=by_shape.get)
        found[dtype] = {"isa": name, "lanes": lanes, "registers": registers, "by_shape": by_shape,
                        "best_shape": best, "best": by_shape[best]}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", nargs="+", default=list(C_TYPES), choices=list(C_TYPES))
    parser.add_argument("--seconds", type=float, default=0.2, help="per shape and repeat")
    args = parser.parse_args()
    for dtype, result in measure(args.dtypes, args.seconds).items():
        rows, vectors = result["best_shape"]
        print(f"{dtype}: {result['isa']}, {result['lanes']} lanes x {result['registers']} registers; best "
              f"{rows} x {vectors} vectors: {result['best'] / 1e9:.1f} G relaxations/s")
        for (r, v), rate in sorted(result["by_shape"].items(), key=lambda item: -item[1])[:8]:
            print(f"    {r:2d} x {v} vectors {rate / 1e9:7.1f} G/s")


if __name__ == "__main__":
    main()
