"""GPU benchmark: every family's generated CUDA code beside yardsticks polyfw did not write.

    .venv/bin/python benchmarks/gpu.py [--sizes 8192 16384] [--dtypes float32 int32] [--json F]

Needs a CUDA GPU. In one run, side by side:

- the independent ceiling: ../shared/peers/gpu/minplus_ceiling.cu compiled with nvcc (the
  toolkit's, or the nvidia-cuda-nvcc wheel's) and run; a dtype's ceiling is its best mode
  (float32: f32, f32x2; int32: i32, dpx, i32x2);
- the hand-written peer: ../shared/peers/gpu/blocked_fw.cu compiled by NVRTC through cupy's
  RawModule, its three kernels launched per block layer (kernels only, as its authors
  measured it), checked exact first;
- every family of polyfw (classic tile 64 and 128, with and without overlap, generalized,
  recursive, method A), whole calls (copy in, every stage, copy out), each checked exact
  against the CPU first, with the rate gpu-report's model predicts beside the measured one;
- seed 000's curve: generalized at n = --kappa-n for kappa = 1, 2, 4, 8, 16, against classic.

Rates are relaxations per second (n^3 / seconds), medians of --repeats. --json writes the rows
in the form polyfw/machine/gpu_measurements.json keeps (the kernels' facts with each), ready to
be added to it so that the model is calibrated on them.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import codegen  # noqa: E402,F401  (first: it sets Numba's CPU features)
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import schedules  # noqa: E402
from codegen import generate  # noqa: E402
from codegen.machine_code import gpu_report, tool  # noqa: E402
from polyfw.comparison import median_seconds  # noqa: E402
from polyfw.gpu_model import kernel_reports, predict, stored_facts  # noqa: E402
from record import Table  # noqa: E402  (benchmarks/record.py)

PEERS = Path(__file__).resolve().parents[1].parent / "shared" / "peers" / "gpu"
#: the ceiling program's modes, by the dtype whose relaxation each one is
CEILING_MODES = {"float32": ("f32", "f32x2"), "int32": ("i32", "dpx", "i32x2")}
PEER_TYPES = {"float32": ("float", "float4"), "int32": ("int", "int4")}
COLUMNS = ["schedule", "options", "median s", "T relax/s", "of the ceiling %", "model T relax/s", "model error %",
           "launches", "host driver s"]


def variants(n: int) -> list[tuple[str, dict, dict]]:
    """(family, schedule parameters, kernel options) measured at every size."""
    return [("classic", {"tile": 64}, {}), ("classic", {"tile": 128}, {}),
            ("classic", {"tile": 64, "overlap": True}, {}), ("classic", {"tile": 128, "overlap": True}, {}),
            ("generalized", {"tile": 128, "kappa": 4}, {}), ("generalized", {"tile": 64, "kappa": 4}, {}),
            ("recursive", {"base": 128}, {}), ("recursive", {"base": 64}, {}),
            ("classic", {"tile": 64}, {"method": "A"})]


def architecture() -> str:
    major, minor = cuda.get_current_device().compute_capability
    return f"sm_{major}{minor}"


def independent_ceiling() -> dict[str, float]:
    """The best rate of each dtype's modes of the peer ceiling program (compiled and run here)."""
    with tempfile.TemporaryDirectory(prefix="polyfw-ceiling-") as folder:
        binary = Path(folder, "ceiling")
        subprocess.run([tool("nvcc"), "-O3", "-std=c++17", f"-arch={architecture()}a", "-DUNROLL=4",
                        str(PEERS / "minplus_ceiling.cu"), "-o", str(binary)], check=True)
        printed = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    print(printed.rstrip())
    rates = {name: float(rate) * 1e12 for name, rate in re.findall(r"^(\S+)\s+unroll.*?([\d.]+) T relax/s", printed,
                                                                      re.M)}
    return {dtype: max(rates[mode] for mode in modes if mode in rates) for dtype, modes in CEILING_MODES.items()}


def peer_blocked_fw(matrix: np.ndarray, expected: np.ndarray, repeats: int) -> dict | None:
    """The hand-written CUDA C blocked FW on `matrix`: exactness, then its kernels' median seconds."""
    import cupy

    n = matrix.shape[0]
    if n % 128:
        return None
    element, vector = PEER_TYPES[matrix.dtype.name]
    module = cupy.RawModule(code=(PEERS / "blocked_fw.cu").read_text(),
                            options=(f"-DELEM={element}", f"-DVEC={vector}", "-std=c++17"))
    phase1, phase2, phase3 = (module.get_function(name) for name in ("phase1", "phase2", "phase3"))
    device = cupy.asarray(matrix)
    size, layers = np.int32(n), n // 64

    def run() -> None:
        for kb in range(layers):
            phase1((1,), (32, 32), (device, size, np.int32(kb)))
            phase2((layers, 2), (32, 32), (device, size, np.int32(kb)))
            phase3((n // 128, n // 128), (256,), (device, size, np.int32(kb)))
        cupy.cuda.runtime.deviceSynchronize()

    run()
    exact = bool(np.array_equal(cupy.asnumpy(device), expected))

    kernels = []
    for _ in range(repeats):  # the matrix copied in anew each time, outside the timed kernels
        device.set(matrix)
        cupy.cuda.runtime.deviceSynchronize()
        started = time.perf_counter()
        run()
        kernels.append(time.perf_counter() - started)
    return {"exact": exact, "seconds": float(np.median(kernels))}


def problem(n: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(n)
    matrix = rng.integers(1, 1000, size=(n, n)).astype(dtype)
    np.fill_diagonal(matrix, 0)
    return matrix


def reference(matrix: np.ndarray) -> np.ndarray:
    """The CPU's generated classic schedule (itself exact against PolyBench in the tests)."""
    result = matrix.copy()
    generate(schedules.build("classic", matrix.shape[0], tile=128), dtype=matrix.dtype.name)(result)
    return result


def kernel_facts(compiled) -> dict[str, dict]:
    """The facts of the kernel each kind of stage runs, as gpu_measurements.json keeps them."""
    return {kind: {"per_relaxation": report.loop.per_relaxation, "threads": report.threads,
                   "registers": report.registers, "blocks_per_sm": report.blocks_per_sm}
            for kind, report in kernel_reports(compiled.band_roles, gpu_report(compiled, architecture())).items()}


def measure(family: str, params: dict, variant: dict, matrix: np.ndarray, expected: np.ndarray,
            repeats: int, ceiling: float, table: Table) -> dict:
    """One schedule's whole calls, checked exact first, added to the table beside the model's prediction."""
    n = matrix.shape[0]
    schedule = schedules.build(family, n, **params)
    compiled = generate(schedule, target="cuda", dtype=matrix.dtype.name, **variant)
    work = matrix.copy()
    compiled(work)  # warm-up: every kernel compiled
    exact = bool(np.array_equal(work, expected))
    row = {"family": family, "parameters": params, "options": variant, "n": n, "dtype": matrix.dtype.name,
           "schedule": compiled.name, "exact": exact}
    if not exact:  # a wrong answer has no speed worth reporting
        row["wrong_entries"] = int(np.count_nonzero(work != expected))
        table.add(f"{compiled.name}: WRONG, {row['wrong_entries']} of {n * n} entries differ from the CPU; not timed",
                  str(variant), *[None] * (len(COLUMNS) - 2))
        return row

    def once() -> None:
        work[...] = matrix
        compiled(work)

    seconds = median_seconds(once, repeats)
    facts = kernel_facts(compiled)
    predicted, _, _ = predict(schedule, stored_facts(facts))
    row.update(seconds=seconds, rate=n**3 / seconds, of_ceiling=n**3 / seconds / ceiling, predicted_seconds=predicted,
               launches=compiled.last_run["stages"], driver_seconds=compiled.last_run["driver_seconds"],
               kernels=facts)
    table.add(compiled.name, str(variant), round(seconds, 4), round(row["rate"] / 1e12, 2),
              round(100 * row["of_ceiling"], 1), round(n**3 / predicted / 1e12, 2),
              round(100 * (predicted / seconds - 1)), row["launches"], round(row["driver_seconds"], 3))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[8192, 16384])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "int32"], choices=["float32", "int32"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kappa-n", type=int, default=8192, help="n of the time-vs-kappa curve (0: skip)")
    parser.add_argument("--json", default=None, help="also save every measurement here")
    args = parser.parse_args()
    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else device.name
    print(f"device: {name}, {device.MULTIPROCESSOR_COUNT} SMs, driver {cuda.driver.get_version()}")
    ceilings = independent_ceiling()
    print("independent ceiling: " + ", ".join(f"{d} {r / 1e12:.2f} T/s" for d, r in ceilings.items()))
    rows: list[dict] = []
    peers: list[dict] = []
    for dtype in args.dtypes:
        for n in args.sizes:
            matrix = problem(n, dtype)
            expected = reference(matrix)
            table = Table("gpu", f"generated CUDA code, n = {n}, {dtype}", COLUMNS, gpu=name,
                          note=f"medians of {args.repeats} whole calls (the peer: its kernels only); independent "
                               f"ceiling {ceilings[dtype] / 1e12:.2f} T relax/s")
            peer = peer_blocked_fw(matrix, expected, args.repeats)
            if peer:
                peers.append({"peer": "blocked_fw.cu", "n": n, "dtype": dtype, **peer})
                rate = n**3 / peer["seconds"]
                table.add("hand-written CUDA C blocked FW" + ("" if peer["exact"] else ": WRONG"), "",
                          round(peer["seconds"], 4), round(rate / 1e12, 2), round(100 * rate / ceilings[dtype], 1),
                          None, None, None, None)
            for family, params, variant in variants(n):
                rows.append(measure(family, params, variant, matrix, expected, args.repeats, ceilings[dtype], table))
            table.record()
    if args.kappa_n:
        n = args.kappa_n
        for dtype in args.dtypes:
            matrix = problem(n, dtype)
            expected = reference(matrix)
            table = Table("gpu", f"seed 000's curve: generalized, n = {n}, tile 128, {dtype}", COLUMNS, gpu=name,
                          note=f"kappa = 1 is classic; medians of {args.repeats} whole calls")
            for kappa in (1, 2, 4, 8, 16):
                rows.append({**measure("generalized", {"tile": 128, "kappa": kappa}, {}, matrix, expected,
                                       args.repeats, ceilings[dtype], table), "kappa": kappa})
            table.record()
    if args.json:
        Path(args.json).write_text(json.dumps({"device": name, "ceilings": ceilings, "peers": peers,
                                               "rows": [row for row in rows if row["exact"]]}, indent=1))


if __name__ == "__main__":
    main()
