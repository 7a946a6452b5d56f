"""Layer products against one product a layer (issue 51, item 1): the same schedule built with
products=true and products=false, on the same matrix, in interleaved rounds.

    OMP_WAIT_POLICY=passive python benchmarks/layer_products.py --sizes 2048 4096 --dtypes int16 int32 float32

A layer product keeps C's register tiles across every layer a task holds on one block (generalized
κ's reverse and Rest steps, the recursive order's products), so C is loaded and stored once a product
instead of once a layer. Rates are relaxations per second (n^3 / median seconds)."""
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
from schedules.families import build  # noqa: E402

#: (family, tile, parameters): the families whose tasks hold several layers of one block
CANDIDATES = (("generalized", 128, {"kappa": 2}), ("generalized", 128, {"kappa": 4}),
              ("generalized", 256, {"kappa": 2}), ("recursive", None, {"base": 128}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096])
    parser.add_argument("--dtypes", nargs="+", default=["int16", "int32", "float32"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runtimes", nargs="+", default=["barrier", "dataflow"], choices=["barrier", "dataflow"])
    args = parser.parse_args(argv)
    table = Table("layer_products", "Layer products against one product a layer",
                  ["n", "dtype", "runtime", "schedule", "products G/s", "a layer each G/s", "ratio"],
                  note=f"{numba.get_num_threads()} threads, medians of {args.rounds} rounds")
    for n in args.sizes:
        for dtype in args.dtypes:
            base = random_distances(n, dtype)
            for runtime in args.runtimes:
                for family, tile, params in CANDIDATES:
                    runs = {}
                    for products in (True, False):
                        schedule = build(family, n, tile, products=products, **params)
                        compiled = generate(schedule, "cpu", dtype, runtime=runtime)
                        buffer = np.zeros((n, padded_stride(n)), dtype=dtype)
                        runs["products" if products else "a layer each"] = (compiled, buffer)
                    seconds = median_seconds(runs, base, args.rounds)
                    rate = {key: n**3 / value / 1e9 for key, value in seconds.items()}
                    name = build(family, n, tile, **params).name.replace(f"n={n}, ", "")
                    together, apart = rate["products"], rate["a layer each"]
                    table.add(n, dtype, runtime, name, round(together, 1), round(apart, 1), round(together / apart, 3))
    table.record()


if __name__ == "__main__":
    main()
