"""GPU benchmark: generated CUDA schedules against the device's own min-plus ceiling.

    .venv/bin/python benchmarks/gpu.py [--sizes 4096 8192 16384] [--dtype float32|int32] [--json F]

Needs a CUDA GPU (target 'cuda'); `NUMBA_ENABLE_CUDASIM=1 ... --target cudasim --tile 4
--sizes 12 --kappa-n 12` runs the script itself in the simulator (against a nominal ceiling).

The ceiling is measured, not nominal: the register-tiled product that every schedule's DD stage
runs (method R's kernel of classic at this n and tile, launched for every block layer over all its
DD tasks), in relaxations per second. Beside it, the static prediction: the device's lanes x clock
over the SASS instructions per relaxation of that kernel's hot loop (codegen.machine_code, as
`polyfw gpu-report` prints it). Per schedule and variant it prints the time of a whole call (one
copy in, the stages, one copy out; median of --repeats), relaxations/s (n^3 / time), the share of
the measured ceiling, the kernel launches, and the host driver's seconds (its loops and launches
run ahead of the asynchronous kernels: near the whole time, they would mean a host bottleneck).
Then seed 000's time-vs-kappa curve of the generalized schedule. Every result up to --check-up-to
(and every point of the kappa curve) is checked against the CPU's generated classic schedule; a
WRONG row is reported as wrong and not timed, rows above that size say "not checked".
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
from polyfw.comparison import median_seconds  # noqa: E402

#: FP32 lanes per SM by compute capability (7.x: Volta/Turing, 8.0: A100; 8.6 and later: 128)
FP32_LANES = {(7, 0): 64, (7, 5): 64, (8, 0): 64}
DEFAULT_LANES = 128
TILE = 64


def variants(tile: int, n: int) -> list[tuple[str, dict, dict]]:
    """(family, schedule parameters, kernel options) measured at every size: method R (the default)
    on every family and both tiles, seed 001's methods A and B for comparison."""
    kappa = min(4, -(-n // tile))
    return [
        ("classic", {"tile": tile}, {}),
        ("classic", {"tile": 2 * tile}, {}),
        ("generalized", {"tile": tile, "kappa": kappa}, {}),
        ("recursive", {"base": tile}, {}),
        ("classic", {"tile": tile}, {"method": "A"}),
        ("classic", {"tile": tile}, {"method": "B", "t_prime": 4}),
    ]


def device_lanes(target: str) -> tuple[float, str]:
    """Lanes x clock of the device (instructions a second), and its description."""
    if target == "cudasim":
        return 1e12, "nominal (simulator)"
    device = cuda.get_current_device()
    sms = device.MULTIPROCESSOR_COUNT
    clock_hz = device.CLOCK_RATE * 1e3  # kHz
    lanes = FP32_LANES.get(device.compute_capability, DEFAULT_LANES)
    name = device.name.decode() if isinstance(device.name, bytes) else device.name
    return sms * lanes * clock_hz, (f"{name}: {sms} SMs x {lanes} lanes x {clock_hz / 1e9:.2f} GHz "
                                    f"(cc {device.compute_capability[0]}.{device.compute_capability[1]})")


def product_ceiling(n: int, dtype: str, tile: int, target: str, repeats: int) -> tuple[float, dict | None]:
    """Relaxations/s of method R's DD kernel alone (classic's DD band over every block layer), and
    the static figures of that kernel (None in the simulator, which has no machine code)."""
    compiled = generate(schedules.build("classic", n, tile=tile), target=target, dtype=dtype)
    band = next(number for number, roles in enumerate(compiled.band_roles) if roles == {"DD"})
    kernel, block = compiled.kernels()[f"band_{band}"]
    layers = -(-n // tile)
    matrix = cuda.to_device(problem(layers * tile, dtype))
    status = cuda.to_device(np.zeros(1, dtype=np.int64))

    def run() -> None:
        for kb in range(layers):
            kernel[(layers, layers), block](matrix, status, n, 0, 0, kb)
        cuda.synchronize()

    run()
    seconds = median_seconds(run, repeats)
    relaxations = layers * (layers - 1) ** 2 * tile**3  # every DD tile-layer (not the pivot row and column)
    static = None
    if target == "cuda":
        from codegen.machine_code import gpu_report

        major, minor = cuda.get_current_device().compute_capability
        report = next(r for r in gpu_report(compiled, f"sm_{major}{minor}") if r.name == f"band_{band}")
        static = {"per_relaxation": report.loop.per_relaxation, "registers": report.registers,
                  "blocks_per_sm": report.blocks_per_sm}
    return relaxations / seconds, static


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
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192, 16384])
    parser.add_argument("--dtype", default="float32", choices=["float32", "int32"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check-up-to", type=int, default=8192, help="largest n checked against the CPU")
    parser.add_argument("--kappa-n", type=int, default=8192, help="n of the time-vs-kappa curve (0: skip)")
    parser.add_argument("--json", default=None, help="also save every measurement here")
    parser.add_argument("--target", default="cuda", choices=["cuda", "cudasim"])
    parser.add_argument("--tile", type=int, default=TILE, help="block size r (default %(default)s)")
    args = parser.parse_args()
    lanes, how = device_lanes(args.target)
    print(f"device: {how}; driver {cuda.driver.get_version() if args.target == 'cuda' else '-'}")
    rows: list[dict] = []
    ceilings = {}
    for n in args.sizes:
        peak, static = product_ceiling(n, args.dtype, args.tile, args.target, args.repeats)
        ceilings[n] = {"rate": peak, "static": static}
        predicted = ""
        if static:
            per_relaxation = static["per_relaxation"]
            predicted = (f", predicted {lanes / per_relaxation / 1e12:.2f} T/s from {per_relaxation:.3f} SASS "
                         "instructions per relaxation")
        print(f"n = {n}, {args.dtype}: ceiling (method R's product alone, tile {args.tile}) "
              f"{peak / 1e12:.2f} T relaxations/s{predicted}")
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
                row = measure("generalized", {"tile": args.tile, "kappa": kappa}, {}, matrix, expected,
                              args.repeats, ceilings.get(n, {"rate": peak})["rate"], args.target)
                rows.append({**row, "kappa": kappa})
    if args.json:
        Path(args.json).write_text(json.dumps({"device": how, "ceilings": ceilings, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
