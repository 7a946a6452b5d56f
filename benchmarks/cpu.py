"""CPU benchmark: the min-plus ceiling, scipy, the naive kernel, a hand-written classic kernel,
and polyfw's generated schedules, in one run, as ratios. Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/cpu.py [--sizes 1024 2048 4096] [--tune]

Rounds interleave the contenders, and each timing is paired with a ceiling
sample taken just before it (the shared host's speed drifts within minutes).
That paired ceiling is polyfw's own register block, so it only tracks the
drift; the ceiling a schedule is judged against is polyfw/machine/ceiling.py's
(a C++ micro-kernel at its best register-block shape for the ISA), measured
once at the start.

--tune writes the fastest configuration per dtype, proved for the sizes it stands for, into the
table the package ships (polyfw/tuning.json of this source tree; --tuning FILE writes another),
under this CPU (solve's schedule='auto' reads the entries of the CPU it runs on first).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from codegen import floyd_warshall_naive, generate  # noqa: E402  (first: it sets Numba's CPU features)

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402
from scipy.sparse.csgraph import floyd_warshall as scipy_floyd_warshall  # noqa: E402
from codegen.assembly import spill_report  # noqa: E402
from codegen.cpu import _compile_kernels  # noqa: E402
from codegen.kernels import KernelOptions  # noqa: E402
from codegen.register_blocks import choose_register_block, cpu_description, cpu_key  # noqa: E402
from polyfw import solve  # noqa: E402
from polyfw.machine.tuning import shipped_path, write_winner  # noqa: E402
from polyfw.configuration import (auto_configuration, chosen_runtime, parse_schedule,  # noqa: E402
                                  resolve_schedule)
from polyfw.solve import padded_stride  # noqa: E402

from polyfw.machine.ceiling import measure as measure_ceiling  # noqa: E402

SCHEDULES = ["classic:tile=128", "classic:tile=256", "generalized:tile=128,kappa=2", "generalized:tile=128,kappa=4",
             "recursive:tile=128", "classic:tile=256,runtime=dataflow", "generalized:tile=128,kappa=2,runtime=dataflow",
             "recursive:tile=128,runtime=dataflow"]


def ceiling_sampler(dtype: str) -> Callable[[], float]:
    """A function returning one sample of the min-plus ceiling: relaxations/s of the DD
    register block on L1-resident 64 x 64 tiles (full blocks only), one per thread (~0.05 s a sample)."""
    options = KernelOptions(dtype=dtype)
    micro = _compile_kernels(options)[0].micro_product
    rows, columns = options.register_block
    full_rows, full_columns = 64 // rows * rows, max(64 // columns, 1) * columns

    @njit(parallel=True)
    def sweep(tiles, reps):
        for t in prange(tiles.shape[0]):
            for _ in range(reps):
                for j in range(0, full_columns, columns):
                    for i in range(0, full_rows, rows):
                        micro(tiles[t], np.uint64(i), np.uint64(j), np.uint64(0), np.uint64(64))

    threads = numba.get_num_threads()
    tiles = np.ones((threads, 64, full_columns + 16), dtype=dtype)
    sweep(tiles, 1)

    def sample() -> float:
        started = time.perf_counter()
        sweep(tiles, 2000)
        return threads * 2000 * full_rows * full_columns * 64 / (time.perf_counter() - started)

    return sample


def hand_written_classic(dtype: str, tile: int):
    """The yardstick: classic blocked FW written by hand over the same tile kernels."""
    kernels = _compile_kernels(KernelOptions(dtype=dtype))[0]
    layers, product = kernels.relax_layers, kernels.relax_product

    @njit(parallel=True)
    def classic(a, n, status):
        blocks = (n + tile - 1) // tile
        for kb in range(blocks):
            k0, k1 = kb * tile, min(kb * tile + tile, n)
            layers(a, k0, k1, k0, k1, k0, k1, status)
            for b in prange(2 * blocks):
                other = b % blocks
                if other != kb:
                    o0, o1 = other * tile, min(other * tile + tile, n)
                    if b < blocks:
                        product(a, k0, k1, k0, k1, o0, o1, status)
                    else:
                        product(a, k0, k1, o0, o1, k0, k1, status)
            for ib in prange(blocks):
                if ib != kb:
                    for jb in range(blocks):
                        if jb != kb:
                            product(a, k0, k1, ib * tile, min(ib * tile + tile, n), jb * tile,
                                    min(jb * tile + tile, n), status)

    return classic


def bench_size(n: int, dtype: str, repeats: int, naive_repeats: int) -> list[dict]:
    """Every contender once per round, each round with its own ceiling sample.

    The host is shared and its speed drifts by up to 2x within minutes, so a
    rate is compared with the ceiling sampled right before it in the same
    round ("paired"), and the median of those ratios is reported beside the
    median rate.
    """
    rng = np.random.default_rng(n)
    base = rng.integers(1, 1000, size=(n, n)).astype(dtype)
    np.fill_diagonal(base, 0)
    buffer = np.empty((n, padded_stride(n)), dtype=dtype)
    square = np.empty((n, n), dtype=dtype)
    status = np.full(1, -1, dtype=np.int64)
    sample_ceiling = ceiling_sampler(dtype)
    yardstick = hand_written_classic(dtype, 128)
    contenders: dict[str, Callable[[], object]] = {
        "hand-written classic r=128": lambda: yardstick(buffer, n, status)}
    for spec in SCHEDULES:
        compiled = generate(resolve_schedule(spec, n, dtype), dtype=dtype, runtime=chosen_runtime(spec, n, dtype))
        contenders[f"polyfw {spec}"] = lambda compiled=compiled: compiled(buffer)
    # what a user gets: the tuning table's choice for this CPU, conversions included
    contenders["solve(schedule='auto')"] = lambda: solve(base, dtype=dtype)
    seconds: dict[str, list[float]] = {name: [] for name in [*contenders, "naive Numba prange"]}
    paired: dict[str, list[float]] = {name: [] for name in seconds}
    ceilings = []

    def time_once(name: str, prepare: Callable[[], object], run: Callable[[], object]) -> None:
        ceilings.append(sample_ceiling())
        prepare()
        started = time.perf_counter()
        run()
        elapsed = time.perf_counter() - started
        seconds[name].append(elapsed)
        paired[name].append(n**3 / elapsed / ceilings[-1])

    def fill_buffer() -> None:
        buffer[:, :n] = base

    def fill_square() -> None:
        square[...] = base

    for run in contenders.values():  # first calls compile or load from the cache
        fill_buffer()
        run()
    fill_square()
    floyd_warshall_naive(square)
    for round_ in range(repeats):
        for name, run in contenders.items():
            time_once(name, fill_buffer, run)
        if round_ < naive_repeats:
            time_once("naive Numba prange", fill_square, lambda: floyd_warshall_naive(square))
    rows = []
    for name in (name for name in seconds if seconds[name]):  # the naive kernel may not have run
        median = float(np.median(seconds[name]))
        rows.append({"n": n, "dtype": dtype, "name": name, "seconds": median, "rate": n**3 / median,
                     "of_ceiling": float(np.median(paired[name]))})
        print(f"  {name:36s} {median:8.3f} s {n**3 / median / 1e9:8.2f} G/s "
              f"{rows[-1]['of_ceiling']:6.0%} of the paired ceiling", flush=True)
    rows.append({"n": n, "dtype": dtype, "name": "ceiling", "rate": float(np.median(ceilings)),
                 "best": float(max(ceilings))})
    print(f"  {'ceiling samples':36s} median {np.median(ceilings) / 1e9:.1f} G/s, best {max(ceilings) / 1e9:.1f} G/s")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "int32"])
    parser.add_argument("--repeats", type=int, default=5, help="rounds; each times every contender once")
    parser.add_argument("--naive-repeats", type=int, default=2, help="rounds that also time the naive kernel (slow)")
    parser.add_argument("--scipy-up-to", type=int, default=2048, help="largest n to time scipy at (it is slow)")
    parser.add_argument("--tune", action="store_true", help="write the fastest configurations to the tuning table")
    parser.add_argument("--tuning", default=None, metavar="FILE",
                        help="--tune writes this table (default: the one this source tree ships)")
    parser.add_argument("--json", default=None, help="also save every measurement here")
    parser.add_argument("--no-independent-ceiling", action="store_true",
                        help="skip polyfw/machine/ceiling.py (a C++ micro-kernel over every register-block "
                             "shape; needs g++)")
    args = parser.parse_args()
    print(f"threads: {numba.get_num_threads()} ({numba.config.THREADING_LAYER}); OMP_WAIT_POLICY="
          f"{os.environ.get('OMP_WAIT_POLICY')}")
    cpu = cpu_description()
    print(f"CPU: {cpu['model']} (LLVM {cpu['llvm_cpu']}), {cpu['isa']}, {cpu['vector_bytes']}-byte vectors, "
          f"{cpu['vector_registers']} registers")
    for dtype in args.dtypes:
        chosen = choose_register_block(dtype)
        instructions, min_max, spills, reloads = spill_report(KernelOptions(dtype=dtype))
        print(f"{dtype} register block {chosen.label} ({chosen.source}); its k loop: {instructions} instructions, "
              f"{min_max} min/max, {spills} vector spills, {reloads} general-register stack accesses")
    independent = {} if args.no_independent_ceiling else measure_ceiling(args.dtypes)
    for dtype, found in independent.items():
        rows, vectors = found["best_shape"]
        print(f"independent {dtype} ceiling ({found['isa']}, {found['lanes']} lanes, {found['registers']} registers): "
              f"{found['best'] / 1e9:.1f} G/s at {rows} x {vectors} vectors, best of {len(found['by_shape'])} shapes")
    results = []
    scipy_seconds: dict[int, float] = {}
    for dtype in args.dtypes:
        for n in args.sizes:
            print(f"n = {n}, {dtype}")
            rows = bench_size(n, dtype, args.repeats, args.naive_repeats)
            if n <= args.scipy_up_to:
                if n not in scipy_seconds:  # scipy computes in float64 whatever the dtype: time it once
                    graph = np.random.default_rng(n).integers(1, 1000, (n, n)).astype(np.float64)
                    started = time.perf_counter()
                    scipy_floyd_warshall(graph)
                    scipy_seconds[n] = time.perf_counter() - started
                seconds = scipy_seconds[n]
                rows.append({"n": n, "dtype": dtype, "name": "scipy floyd_warshall", "seconds": seconds,
                             "rate": n**3 / seconds})
                print(f"  {'scipy floyd_warshall (float64)':36s} {seconds:8.3f} s {n**3 / seconds / 1e9:8.2f} G/s")
            best = max((r for r in rows if r["name"].startswith("polyfw")), key=lambda r: r["rate"])
            by_name = {r["name"]: r["rate"] for r in rows}
            if dtype in independent:
                for row in rows:
                    if "seconds" in row:
                        row["of_independent"] = row["rate"] / independent[dtype]["best"]
                        print(f"  {row['name']:36s} {row['of_independent']:6.0%} of the independent ceiling")
            auto = by_name["solve(schedule='auto')"]
            family, params = auto_configuration(n, dtype)
            print(f"  solve(schedule='auto') chose {family} {params}: {auto / best['rate']:.0%} of the best schedule's "
                  f"rate", flush=True)
            ratios = [f"best {best['name']}: {best['rate'] / 1e9:.1f} G/s = {best['of_ceiling']:.0%} of the paired "
                      f"ceiling" + (f", {best['of_independent']:.0%} of the independent one" if dtype in independent
                                    else ""), f"{best['rate'] / by_name['naive Numba prange']:.1f}x naive",
                      f"{best['rate'] / by_name['hand-written classic r=128']:.2f}x hand-written"]
            if "scipy floyd_warshall" in by_name:
                ratios.append(f"{best['rate'] / by_name['scipy floyd_warshall']:.0f}x scipy")
            print("  => " + ", ".join(ratios), flush=True)
            results += rows
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.tune:
        for dtype in args.dtypes:
            for n in sorted(args.sizes):
                best = max((r for r in results if r.get("n") == n and r["dtype"] == dtype
                            and r["name"].startswith("polyfw")), key=lambda r: r["rate"])
                family, params = parse_schedule(best["name"].split()[1])
                written = write_winner(n, dtype, "cpu", family, params, cpu_key(), cpu["model"],
                                       args.tuning or shipped_path())
        print(f"wrote {written} for {cpu_key()}")


if __name__ == "__main__":
    main()
