"""Packed operands against reading them in place (issue 51, item 1): the same schedule built with
panels=true and panels=false, on the barrier and on the dataflow runtime, beside the dataflow runtime's
classic 128 in place (the tuned default on several CPUs), on the same matrix, in interleaved rounds.

    OMP_WAIT_POLICY=passive python benchmarks/panels.py --sizes 2048 4096 --dtypes int32 float32

With panels, the barrier runtime copies each operand block a packed stage's products read (classic's DD
stage, generalized's Rest(K)) once, as the stage starts, into micro-panels the register block streams;
the dataflow runtime has the call that gives a block its readers' layer publish it there (schedules.packing
proves both copies exact). Rates are relaxations per second (n^3 / median seconds).
Where this machine has a calibration for the dtype (`polyfw calibrate`), the model's predicted
panels / in place ratio is printed beside the measured one (schedules.predict prices packing)."""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from codegen import generate  # noqa: E402  (first: it sets Numba's CPU features)

import numba  # noqa: E402
from codegen.kernels import padded_stride  # noqa: E402
import numpy as np  # noqa: E402

from interleaved import median_seconds, random_distances  # noqa: E402  (benchmarks/interleaved.py)
from record import Table  # noqa: E402  (benchmarks/record.py)
from polyfw.machine.calibrations import stored  # noqa: E402
from schedules.cost import tile_view  # noqa: E402
from schedules.families import build  # noqa: E402
from schedules.predict import predict  # noqa: E402

#: (family, tile, parameters, runtime) built with and without panels
CANDIDATES = tuple((family, tile, params, runtime) for runtime in ("barrier", "dataflow")
                   for family, tile, params in (("classic", 128, {}), ("classic", 256, {}), ("generalized", 128, {"kappa": 2})))
#: what the panels are also compared with: classic 128 on the dataflow runtime, in place
REFERENCE = ("classic", 128, "dataflow", False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096])
    parser.add_argument("--dtypes", nargs="+", default=["int32", "float32", "int16", "float64"])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    table = Table("panels", "Packed operands against reading them in place",
                  ["n", "dtype", "schedule", "runtime", "panels G/s", "in place G/s", "panels / in place",
                   "predicted panels / in place", "panels / classic 128 dataflow"],
                  note=f"{numba.get_num_threads()} threads, medians of {args.rounds} interleaved rounds")
    for n in args.sizes:
        for dtype in args.dtypes:
            base = random_distances(n, dtype)
            runs = {}
            for family, tile, params, runtime in CANDIDATES:
                for panels in (True, False):
                    compiled = generate(build(family, n, tile, panels=panels, **params), "cpu", dtype, runtime=runtime)
                    runs[(family, tile, runtime, panels)] = (compiled, np.zeros((n, padded_stride(n)), dtype=dtype))
            seconds = median_seconds(runs, base, args.rounds)
            rate = {key: n**3 / value / 1e9 for key, value in seconds.items()}
            for family, tile, params, runtime in CANDIDATES:
                packed, in_place = rate[(family, tile, runtime, True)], rate[(family, tile, runtime, False)]
                name = build(family, n, tile, **params).name.replace(f"n={n}, ", "")
                table.add(n, dtype, name, runtime, round(packed, 1), round(in_place, 1), round(packed / in_place, 3),
                          predicted_ratio(family, n, tile, params, runtime, dtype), round(packed / rate[REFERENCE], 3))
    table.record()


def predicted_ratio(family: str, n: int, tile: int, params: dict, runtime: str, dtype: str) -> float | str:
    """The calibrated model's in-place seconds over its panels seconds ('-' where not calibrated)."""
    calibration = stored(dtype, numba.get_num_threads())
    if calibration is None or not calibration.packed or (runtime != "barrier" and runtime not in calibration.dataflow):
        return "-"
    seconds = [predict(tile_view(build(family, n, tile, panels=panels, **params)), calibration, runtime).seconds
               for panels in (True, False)]
    return round(seconds[1] / seconds[0], 3)


if __name__ == "__main__":
    main()
