"""GPU benchmark: generated CUDA schedules and DD kernel variants against the FP32 min-plus ceiling.

    .venv/bin/python benchmarks/gpu.py [--sizes 2048 4096 8192 16384] [--kappa-n 8192] [--json F]

Needs a CUDA GPU (target 'cuda'); `NUMBA_ENABLE_CUDASIM=1 ... --target cudasim --tile 4
--sizes 12 --kappa-n 12` runs the script itself in the simulator (against a nominal ceiling).
Per schedule and variant it prints the time of a whole call (one copy in, the stages, one copy
out; median of --repeats), relaxations/s (n^3 / time), the fraction of the ceiling, the kernel
launches, and the host driver's seconds (its loops and launches run ahead of the asynchronous
kernels: near the whole time, they would mean a host bottleneck).
Then seed 000's time-vs-kappa curve of the generalized schedule. Every
result up to --check-up-to (and every point of the kappa curve) is checked
against the CPU's generated classic schedule; a WRONG row is reported as
wrong and not timed, rows above that size say "not checked".

The ceiling: SMs x FP32 lanes per SM / 2 (a relaxation is an add and a
min, two FP32 instructions) x the SM clock; lanes per SM by compute
capability below. H100 SXM: 132 x 128 / 2 x 1.98 GHz = 1.67e13/s.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import codegen  # noqa: E402,F401  (first: it sets Numba's CPU features)
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import schedules  # noqa: E402
from codegen import generate  # noqa: E402
from polyfw.compare import median_seconds  # noqa: E402

#: FP32 lanes per SM by compute capability major (7: Volta/Turing, 8.0: A100, 8.6+/9/10/12: 128)
FP32_LANES = {(7, 0): 64, (7, 5): 64, (8, 0): 64}
DEFAULT_LANES = 128
TILE = 32


def variants(tile: int, n: int) -> list[tuple[str, dict, dict]]:
    """(family, schedule parameters, DD kernel parameters) measured at every size."""
    kappa = min(4, -(-n // tile))
    return [
        ("classic", {"tile": tile}, {"method": "A"}),
        ("classic", {"tile": tile}, {"method": "A", "per_block": 2}),
        ("classic", {"tile": tile}, {"method": "B", "t_prime": 4}),
        ("classic", {"tile": tile}, {"method": "B", "t_prime": 2}),
        ("classic", {"tile": 2 * tile}, {"method": "A", "sub_tile": (16, 64)}),
        ("generalized", {"tile": tile, "kappa": kappa}, {"method": "A"}),
        ("generalized", {"tile": tile, "kappa": kappa}, {"method": "B"}),
        ("recursive", {"base": tile}, {"method": "A"}),
    ]


def ceiling(target: str) -> tuple[float, str]:
    if target == "cudasim":
        return 1e12, "nominal (simulator)"
    device = cuda.get_current_device()
    sms = device.MULTIPROCESSOR_COUNT
    clock_hz = device.CLOCK_RATE * 1e3  # kHz
    lanes = FP32_LANES.get(device.compute_capability, DEFAULT_LANES)
    how = (f"{device.name.decode() if isinstance(device.name, bytes) else device.name}: {sms} SMs x {lanes} FP32 "
           f"lanes / 2 x {clock_hz / 1e9:.2f} GHz (cc {device.compute_capability[0]}.{device.compute_capability[1]})")
    return sms * lanes / 2 * clock_hz, how


def problem(n: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(n)
    matrix = rng.integers(1, 1000, size=(n, n)).astype(dtype)
    np.fill_diagonal(matrix, 0)
    return matrix


def measure(family: str, params: dict, variant: dict, matrix: np.ndarray, expected: np.ndarray | None,
            repeats: int, peak: float, target: str) -> dict:
    n = matrix.shape[0]
    started = time.perf_counter()
    compiled = generate(schedules.build(family, n, **params), target=target, dtype=matrix.dtype.name, **variant)
    compile_seconds = time.perf_counter() - started
    work = matrix.copy()
    compiled(work)  # warm-up: kernels compiled for this variant
    # exact: True/False against the CPU, None when not checked (n above --check-up-to)
    exact = None if expected is None else bool(np.array_equal(work, expected))
    row = {"n": n, "dtype": matrix.dtype.name, "schedule": compiled.name, "variant": variant,
           "compile_seconds": compile_seconds, "exact": exact}
    if exact is False:  # a wrong answer has no speed worth reporting
        wrong = int(np.count_nonzero(work != expected))
        print(f"  {compiled.name:42s} {str(variant):40s} WRONG: {wrong} of {n * n} entries differ from the CPU; "
              f"not timed", flush=True)
        return {**row, "wrong_entries": wrong}

    def once() -> None:
        work[...] = matrix
        compiled(work)

    seconds = median_seconds(once, repeats)
    row.update(seconds=seconds, rate=n**3 / seconds, of_ceiling=n**3 / seconds / peak,
               launches=compiled.last_run["stages"], product_launches=compiled.last_run["products"],
               driver_seconds=compiled.last_run["driver_seconds"])
    print(f"  {compiled.name:42s} {str(variant):40s} {seconds:9.4f} s {row['rate'] / 1e12:7.3f} T/s "
          f"{row['of_ceiling']:6.1%}  launches {row['launches']:5d} ({row['product_launches']} products), "
          f"host driver {row['driver_seconds']:.3f} s{'  (exact)' if exact else '  (not checked)'}", flush=True)
    return row


def reference(matrix: np.ndarray) -> np.ndarray:
    """The CPU's generated classic schedule (itself exact against PolyBench in the tests)."""
    result = matrix.copy()
    generate(schedules.build("classic", matrix.shape[0], tile=128), dtype=matrix.dtype.name)(result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096, 8192, 16384])
    parser.add_argument("--dtype", default="float32", choices=["float32", "int32"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check-up-to", type=int, default=8192, help="largest n checked against the CPU")
    parser.add_argument("--kappa-n", type=int, default=8192, help="n of the time-vs-kappa curve (0: skip)")
    parser.add_argument("--json", default=None, help="also save every measurement here")
    parser.add_argument("--target", default="cuda", choices=["cuda", "cudasim"])
    parser.add_argument("--tile", type=int, default=TILE, help="block size r (default %(default)s)")
    args = parser.parse_args()
    peak, how = ceiling(args.target)
    print(f"FP32 min-plus ceiling {peak / 1e12:.2f} T relaxations/s = {how}")
    rows: list[dict] = []
    for n in args.sizes:
        matrix = problem(n, args.dtype)
        expected = reference(matrix) if n <= args.check_up_to else None
        print(f"n = {n}, {args.dtype}{'' if expected is not None else ' (not checked)'}")
        rows += [measure(family, params, variant, matrix, expected, args.repeats, peak, args.target)
                 for family, params, variant in variants(args.tile, n)]
        exact = [r for r in rows if r["n"] == n and r["exact"]]
        if exact:
            best = max(exact, key=lambda r: r["rate"])
            print(f"  => best exact {best['schedule']} {best['variant']}: {best['of_ceiling']:.1%} of the ceiling")
    if args.kappa_n:
        n = args.kappa_n
        matrix = problem(n, args.dtype)
        print(f"time vs kappa: generalized, n = {n}, r = {args.tile} (kappa = 1 is classic; exact rows only)")
        expected = reference(matrix)  # the curve is only worth drawing from exact code
        for kappa in (1, 2, 4, 8, 16, 32):
            if kappa <= -(-n // args.tile):
                row = measure("generalized", {"tile": args.tile, "kappa": kappa}, {"method": "A"}, matrix, expected,
                              args.repeats, peak, args.target)
                rows.append({**row, "kappa": kappa})
    if args.json:
        Path(args.json).write_text(json.dumps({"ceiling": peak, "ceiling_from": how, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
