"""The host's share of a CUDA call, without a GPU: launches a run makes and what they cost in Python.

    NUMBA_ENABLE_CUDASIM=1 .venv/bin/python benchmarks/gpu_host.py [--n 16384] [--repeats 5]

Per schedule: the launches of one run (the generated host driver run with launches that only
count), the driver's loops alone (median of --repeats), and polyfw's own Python per launch (the
launcher with the kernel call stubbed out: choosing the grid, the arguments). numba-cuda's own
launch cost comes on top and needs a GPU (benchmarks/gpu.py prints the host-driver seconds there).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import schedules  # noqa: E402
from codegen import generate  # noqa: E402
from codegen.cuda import _Launcher  # noqa: E402
from record import Table  # noqa: E402  (benchmarks/record.py)

SCHEDULES = [("classic", {"tile": 64}), ("classic", {"tile": 128}), ("generalized", {"tile": 64, "kappa": 4}),
             ("generalized", {"tile": 128, "kappa": 4}), ("recursive", {"base": 64}), ("recursive", {"base": 128})]


class _StubKernel:
    """A kernel whose launch does nothing: what is left is the launcher's own Python."""

    def __getitem__(self, configuration):
        return lambda *arguments: None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16384)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    table = Table("gpu_host", f"the host's share of a CUDA call, n = {args.n}",
                  ["schedule", "launches", "driver loops ms", "launcher µs a launch"],
                  note=f"median of {args.repeats}; launches counted, kernels stubbed: no GPU")
    for family, parameters in SCHEDULES:
        compiled = generate(schedules.build(family, args.n, **parameters), target="cudasim")
        loops = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            launches = compiled.launches()
            loops.append(time.perf_counter() - started)
        launcher = _Launcher(compiled._kernels, compiled.options, object(), None, args.n)
        stub, per_launch = _StubKernel(), []
        for _ in range(args.repeats):
            started = time.perf_counter()
            for _ in range(10_000):
                launcher.stage(stub, "registers", 0, 256, 0, 256, 3)
            per_launch.append((time.perf_counter() - started) / 10_000)
        table.add(compiled.name, launches, round(statistics.median(loops) * 1e3, 2),
                  round(statistics.median(per_launch) * 1e6, 2))
    table.record()


if __name__ == "__main__":
    main()
