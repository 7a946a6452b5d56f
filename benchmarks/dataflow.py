"""Barrier against dataflow runtime, per schedule and priority, with the simulator's prediction
beside each (issue 13). Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/dataflow.py [--sizes 1024 2048 4096] [--tiles 64 128 256]

For each schedule: the barrier runtime, and the dataflow runtime with seed
004's block-row ownership ("own") and with one shared list ("shared"), each
taking ready tile-layers in the schedule's order ("sched.") and on the
critical path with lookahead ("crit."; schedules.simulate.priority_order),
in interleaved rounds on the same input (each result checked against the
barrier's), medians as ratios to the barrier. The predictions are the
simulator's barrier time over its dataflow time under each priority on as
many processors as threads, each tile-layer lasting what its kernel took on
one thread (I: the pivot block's kernel; SD, DD: the product). A last table runs
both runtimes on one thread: no parallelism to gain, so the ratio is the
dataflow runtime's own cost per tile-layer.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from codegen.cpu import _compile_kernels, generate_cpu  # noqa: E402  (first: it sets Numba's CPU features)

import numba  # noqa: E402
import numpy as np  # noqa: E402

from codegen.dataflow import PRIORITY, DataflowRun, call_priorities, tile_calls  # noqa: E402
from codegen.kernels import ROLE_KERNELS, KernelOptions  # noqa: E402
from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw.configuration import resolve_schedule  # noqa: E402
from codegen.kernels import padded_stride  # noqa: E402
from schedules.cost import tile_view  # noqa: E402
from schedules.simulate import (PRIORITIES, dataflow_times, priority_order, role_durations,  # noqa: E402
                                stage_barrier_times)

from interleaved import median_seconds, random_distances  # noqa: E402  (benchmarks/interleaved.py)
from record import Table  # noqa: E402  (benchmarks/record.py)

FAMILIES = ["classic", "generalized:kappa=2", "recursive"]
LISTS = {"dataflow": "own", "dataflow-shared": "shared"}
SHORT = {"schedule": "sched.", "critical-path": "crit."}


def kernel_seconds(dtype: str, tile: int) -> dict[str, float]:
    """One tile-layer's time on one thread, by role: the pivot block's kernel (I) and the product (SD, DD)."""
    kernels = _compile_kernels(KernelOptions(dtype=dtype))[0]
    a = np.ones((3 * tile, 3 * tile + 16), dtype=dtype)
    status = np.full(1, -1, dtype=np.int64)
    t = tile
    found = {}
    for role, bounds in (("I", (0, t, 0, t, 0, t)), ("DD", (0, t, t, 2 * t, 2 * t, 3 * t))):
        kernel = getattr(kernels, ROLE_KERNELS[role])
        kernel(a, *bounds, status)
        samples = []
        for _ in range(7):
            started = time.perf_counter()
            kernel(a, *bounds, status)
            samples.append(time.perf_counter() - started)
        found[role] = min(samples)
    return {"I": found["I"], "SD_row": found["DD"], "SD_col": found["DD"], "DD": found["DD"]}


def predicted_gains(schedule, seconds: dict[str, float], procs: int) -> dict[str, float]:
    """The simulator's barrier time over its dataflow time, per priority."""
    view = tile_view(schedule)
    durations = role_durations(view, seconds)
    barrier, _ = stage_barrier_times(view, procs, durations)
    return {priority: barrier / dataflow_times(view, procs, durations, priority).makespan for priority in PRIORITIES}


def contenders(spec: str, n: int, dtype: str) -> tuple[dict[str, object], object]:
    """The barrier runtime, then each list of LISTS under each priority, named 'own, crit.' etc."""
    schedule = resolve_schedule(spec, n, dtype)
    options = KernelOptions(dtype=dtype)
    view = tile_view(schedule)
    runs = {"barrier": generate_cpu(schedule, options, "barrier")}
    for runtime, lists in LISTS.items():
        compiled = generate_cpu(schedule, options, runtime)
        run = compiled._run
        for priority in PRIORITIES:
            order = call_priorities(priority_order(view, priority), tile_calls(view)[1])
            reordered = DataflowRun(run.runtime, run.calls, order, run.n, run.tile, run.owned)
            runs[f"{lists}, {SHORT[priority]}"] = dataclasses.replace(compiled, _run=reordered)
    return runs, schedule


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
    dataflows = [f"{lists}, {SHORT[priority]}" for lists in LISTS.values() for priority in PRIORITIES]
    table = Table("dataflow", f"barrier against dataflow, {args.dtype}",
                  ["n", "tile", "schedule", "barrier G relax/s", *(f"barrier / {name}" for name in dataflows),
                   *(f"predicted barrier / dataflow, {SHORT[priority]}" for priority in PRIORITIES)],
                  note=f"{threads} threads; medians of {args.rounds} interleaved rounds; above 1: dataflow faster")
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
                gains = [barrier / times[name] for name in dataflows]
                gains += predicted_gains(schedule, seconds, threads).values()
                table.add(n, tile, family, round(n**3 / barrier / 1e9, 1), *(round(gain, 3) for gain in gains))
    table.record()
    numba.set_num_threads(1)
    table = Table("dataflow", f"one thread: the dataflow runtime's own cost, {args.dtype}",
                  ["n", "tile", "dataflow / barrier", "µs more a tile-layer", "barrier µs a tile-layer"],
                  note=f"dataflow: own, {SHORT[PRIORITY]}; medians of {args.rounds} interleaved rounds")
    for n, tile in ((2048, 128), (1024, 64)):
        runs, _ = contenders(f"classic:tile={tile}", n, args.dtype)
        flow = f"own, {SHORT[PRIORITY]}"
        times = measure({name: runs[name] for name in ("barrier", flow)}, n, args.dtype, args.rounds)
        ratio = times[flow] / times["barrier"]
        layers = (-(-n // tile)) ** 3
        table.add(n, tile, round(ratio, 3), round((times[flow] - times["barrier"]) / layers * 1e6, 2),
                  round(times["barrier"] / layers * 1e6, 1))
    table.record()


if __name__ == "__main__":
    main()
