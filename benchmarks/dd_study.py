"""What stands between the tile kernels and the ceiling, one change at a time (issue 12). Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/dd_study.py [--n 4096] [--dtypes int32 float32]

Each variant differs from the baseline (this CPU's chosen register block and
k-unroll and prefetch distances, classic r = 128, padded rows) in one
knob: the prefetch distances (register blocks ahead into L1 and into L2), the tile size, row padding, the register block,
the unroll. Rounds interleave the variants on the same input (the shared
host drifts by up to 2x within minutes); each result is checked against the
baseline's, and every figure is the median of the rounds, as a ratio to the
baseline's median.
"""
from __future__ import annotations

import argparse
import os
from dataclasses import replace

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from codegen.cpu import generate_cpu  # noqa: E402  (first: it sets Numba's CPU features)

import numba  # noqa: E402
import numpy as np  # noqa: E402

from codegen.kernels import KernelOptions  # noqa: E402
from codegen.register_blocks import PREFETCH_CANDIDATES, cpu_description, default_register_block  # noqa: E402
from codegen.intrinsics import vector_width  # noqa: E402
from polyfw.configuration import resolve_schedule  # noqa: E402
from codegen.kernels import padded_stride  # noqa: E402

from interleaved import median_seconds, random_distances  # noqa: E402  (benchmarks/interleaved.py)
from record import print_and_record  # noqa: E402  (benchmarks/record.py)


def variants(dtype: str) -> dict[str, tuple[str, KernelOptions, bool]]:
    """name -> (schedule spec, kernel options, padded rows)."""
    base = KernelOptions(dtype=dtype)
    rows, vectors = default_register_block(dtype)
    fixed = (rows, vectors * vector_width(np.dtype(dtype).itemsize))
    found = {"baseline": ("classic:tile=128", base, True)}
    for pair in PREFETCH_CANDIDATES:
        if pair != base.prefetch:
            found[f"prefetch L1 {pair[0]}, L2 {pair[1]} ahead"] = ("classic:tile=128", replace(base, prefetch=pair), True)
    found["tile 256"] = ("classic:tile=256", base, True)
    found["tile 64"] = ("classic:tile=64", base, True)
    found["rows not padded"] = ("classic:tile=128", base, False)
    found[f"unroll {3 - base.unroll}"] = ("classic:tile=128", replace(base, unroll=3 - base.unroll), True)
    if fixed != base.register_block:
        found[f"fixed block {fixed[0]} x {fixed[1]}"] = ("classic:tile=128", replace(base, register_block=fixed), True)
    return found


def study(n: int, dtype: str, rounds: int) -> None:
    buffers = {True: np.empty((n, padded_stride(n)), dtype=dtype), False: np.empty((n, n), dtype=dtype)}
    runs, options_of = {}, {}
    for name, (spec, options, padded) in variants(dtype).items():
        runs[name] = (generate_cpu(resolve_schedule(spec, n, dtype), options), buffers[padded])
        options_of[name] = options
    seconds = median_seconds(runs, random_distances(n, dtype), rounds)
    baseline = seconds["baseline"]
    print_and_record("dd_study", f"one knob at a time, n = {n}, {dtype}",
                     ["variant", "median s", "G/s", "speed over the baseline", "register block", "unroll", "prefetch"],
                     [[name, round(median, 3), round(n**3 / median / 1e9, 1), round(baseline / median, 2),
                       "{} x {}".format(*options_of[name].register_block), options_of[name].unroll,
                       str(options_of[name].prefetch)] for name, median in seconds.items()],
                     note=f"medians of {rounds} interleaved rounds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--dtypes", nargs="+", default=["int32", "float32"])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    cpu = cpu_description()
    print(f"CPU: {cpu['model']} (LLVM {cpu['llvm_cpu']}), {cpu['isa']}, {cpu['vector_bytes']}-byte vectors; "
          f"{numba.get_num_threads()} threads")
    for dtype in args.dtypes:
        study(args.n, dtype, args.rounds)


if __name__ == "__main__":
    main()
