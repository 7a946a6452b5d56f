"""Barrier against dataflow runtime, per schedule, with the simulator's prediction beside each (issue 13).
Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/dataflow.py [--sizes 1024 2048 4096] [--tiles 64 128 256]

For each schedule: the barrier runtime, the dataflow runtime with seed 004's
block-row ownership, and with one shared ready list, in interleaved rounds
on the same input (each result checked against the barrier's), medians as
ratios to the barrier. The prediction is the simulator's barrier time over
its dataflow time on as many processors as threads, each tile-layer lasting
what its kernel took on one thread (I: the nest's order; SD, DD: the
product). A last table runs both runtimes on one thread: no parallelism to
gain, so the ratio is the dataflow runtime's own cost per tile-layer.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from codegen.cpu import _compile_kernels, generate_cpu  # noqa: E402  (first: it sets Numba's CPU features)

import numba  # noqa: E402
import numpy as np  # noqa: E402

from codegen.kernels import KernelOptions  # noqa: E402
from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw.configuration import resolve_schedule  # noqa: E402
from polyfw.solve import padded_stride  # noqa: E402
from schedules.cost import tile_view  # noqa: E402
from schedules.simulate import dataflow_times, role_durations, stage_barrier_times  # noqa: E402

from interleaved import median_seconds, random_distances  # noqa: E402  (benchmarks/interleaved.py)

FAMILIES = ["classic", "generalized:kappa=2", "recursive"]


def kernel_seconds(dtype: str, tile: int) -> dict[str, float]:
    """One tile-layer's time on one thread: the nest's order (I) and the product (SD, DD)."""
    kernels = _compile_kernels(KernelOptions(dtype=dtype))[0]
    a = np.ones((3 * tile, 3 * tile + 16), dtype=dtype)
    status = np.full(1, -1, dtype=np.int64)
    t = tile
    found = {}
    for role, run in (("I", lambda: kernels.relax_layers(a, 0, t, 0, t, 0, t, status)),
                      ("DD", lambda: kernels.relax_product(a, 0, t, t, 2 * t, 2 * t, 3 * t, status))):
        run()
        samples = []
        for _ in range(7):
            started = time.perf_counter()
            run()
            samples.append(time.perf_counter() - started)
        found[role] = min(samples)
    return {"I": found["I"], "SD_row": found["DD"], "SD_col": found["DD"], "DD": found["DD"]}


def predicted_gain(schedule, seconds: dict[str, float], procs: int) -> float:
    view = tile_view(schedule)
    durations = role_durations(view, seconds)
    barrier, _ = stage_barrier_times(view, procs, durations)
    return barrier / dataflow_times(view, procs, durations).makespan


def contenders(spec: str, n: int, dtype: str) -> tuple[dict[str, object], object]:
    schedule = resolve_schedule(spec, n, dtype)
    options = KernelOptions(dtype=dtype)
    return {"barrier": generate_cpu(schedule, options, "barrier"),
            "dataflow, own rows first": generate_cpu(schedule, options, "dataflow"),
            "dataflow, shared list": generate_cpu(schedule, options, "dataflow-shared")}, schedule


def measure(runs: dict, n: int, dtype: str, rounds: int) -> dict[str, float]:
    buffer = np.empty((n, padded_stride(n)), dtype=dtype)
    return median_seconds({name: (compiled, buffer) for name, compiled in runs.items()},
                          random_distances(n, dtype), rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--tiles", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    cpu = cpu_description()
    threads = numba.get_num_threads()
    print(f"CPU: {cpu['model']} (LLVM {cpu['llvm_cpu']}), {cpu['isa']}, {cpu['vector_bytes']}-byte vectors; "
          f"{threads} threads; {args.dtype}")
    print(f"{'n':>5} {'tile':>4} {'schedule':22s} {'barrier':>9} {'own rows':>9} {'shared':>9} {'predicted':>9}")
    for n in args.sizes:
        for tile in args.tiles:
            if -(-n // tile) > 64:
                continue
            seconds = kernel_seconds(args.dtype, tile)
            for family in FAMILIES:
                spec = f"{family}{',' if ':' in family else ':'}tile={tile}"
                runs, schedule = contenders(spec, n, args.dtype)
                times = measure(runs, n, args.dtype, args.rounds)
                barrier = times["barrier"]
                print(f"{n:5d} {tile:4d} {schedule.family + ' ' + str(schedule.params):22s} "
                      f"{n**3 / barrier / 1e9:7.1f} G "
                      f"x{barrier / times['dataflow, own rows first']:7.3f} x{barrier / times['dataflow, shared list']:7.3f} "
                      f"x{predicted_gain(schedule, seconds, threads):7.3f}", flush=True)
    print("one thread (the dataflow runtime's own cost):")
    numba.set_num_threads(1)
    for n, tile in ((2048, 128), (1024, 64)):
        runs, _ = contenders(f"classic:tile={tile}", n, args.dtype)
        times = measure({name: runs[name] for name in ("barrier", "dataflow, own rows first")}, n, args.dtype,
                        args.rounds)
        ratio = times["dataflow, own rows first"] / times["barrier"]
        per_tile = (times["dataflow, own rows first"] - times["barrier"]) / (-(-n // tile)) ** 3
        print(f"  n = {n}, tile {tile}: dataflow / barrier = {ratio:.3f} "
              f"({per_tile * 1e6:+.2f} us per tile-layer of {times['barrier'] / (-(-n // tile)) ** 3 * 1e6:.1f} us)")


if __name__ == "__main__":
    main()
