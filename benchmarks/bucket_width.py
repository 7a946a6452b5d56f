"""Delta-stepping's bucket width: the default (CSRGraph.bucket_width, the mean weight over the mean
out-degree) against fixed fractions of the mean weight, on the graphs of benchmarks/gapbs.py and on a
square grid (4 arcs a vertex, a road network's degree). Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/bucket_width.py [--scales 16 18] [--grid 1024]
        [--fractions 2 4 8 16 32 64] [--roots 4] [--rounds 3]

Every width runs from every root in every round, the widths' order reversed in odd rounds, all in one
process; answers are checked equal across widths. A figure is the median over (root, round) of that
call's time over the default's from the same root in the same round: drift on a shared host falls on
both sides of each pair.
"""
from __future__ import annotations

import argparse
import os
import time
from statistics import median

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402

from codegen.register_blocks import cpu_description  # noqa: E402
from gapbs import make_graph  # noqa: E402  (benchmarks/gapbs.py)
from polyfw.graphs import Edges  # noqa: E402
from polyfw.sparse import as_csr  # noqa: E402
from polyfw.sparse.paths import delta_stepping  # noqa: E402
from record import Table  # noqa: E402  (benchmarks/record.py)


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[16, 18])
    parser.add_argument("--graphs", nargs="+", choices=("kronecker", "uniform"), default=["kronecker", "uniform"])
    parser.add_argument("--grid", type=int, default=1024, help="side of the grid graph (0: none)")
    parser.add_argument("--fractions", type=int, nargs="+", default=[2, 4, 8, 16, 32, 64],
                        help="bucket widths tried, as the mean weight over each of these")
    parser.add_argument("--roots", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    return parser.parse_args()


def grid_graph(side: int, seed: int = 3) -> Edges:
    """A side x side grid, each neighbouring pair joined both ways by one weight of 1-255."""
    rng = np.random.default_rng(seed)
    at = np.arange(side * side).reshape(side, side)
    source = np.concatenate([at[:, :-1].ravel(), at[:-1, :].ravel()])
    target = np.concatenate([at[:, 1:].ravel(), at[1:, :].ravel()])
    weight = rng.integers(1, 256, source.size).astype(np.float64)
    return Edges(side * side, np.concatenate([source, target]), np.concatenate([target, source]),
                 np.concatenate([weight, weight]))


def main() -> None:
    arguments = parse_arguments()
    graphs = [(f"{kind}, scale {scale}", make_graph(kind, scale)) for scale in arguments.scales
              for kind in arguments.graphs]
    if arguments.grid:
        graphs.append((f"grid {arguments.grid} x {arguments.grid}", grid_graph(arguments.grid)))
    print(f"CPU: {cpu_description()}")
    widths = ["default", *(f"1/{f}" for f in arguments.fractions)]
    table = Table("bucket_width", "Delta-stepping's time at each bucket width over its time at the default",
                  ["graph", "default width", "default ms", *widths[1:]],
                  note=f"distances; {arguments.roots} roots, {arguments.rounds} rounds, interleaved; medians of "
                       "paired ratios")
    for name, edges in graphs:
        csr = as_csr(edges, directed=False)
        rng = np.random.default_rng(5)
        roots = [int(r) for r in rng.choice(np.flatnonzero(csr.out_degree > 0), arguments.roots, replace=False)]
        deltas = [csr.bucket_width, *(csr.mean_weight / f for f in arguments.fractions)]

        def call(root: int, delta: float) -> tuple[float, np.ndarray]:
            started = time.perf_counter()
            found = delta_stepping(csr, root, delta)
            return time.perf_counter() - started, found
        _, expected = call(roots[0], deltas[0])  # (compiles)
        seconds = {width: [] for width in widths}
        for round_ in range(arguments.rounds):
            for root in roots:
                order = list(zip(widths, deltas))
                for width, delta in (order if round_ % 2 == 0 else order[::-1]):
                    taken, found = call(root, delta)
                    assert root != roots[0] or np.array_equal(found, expected), f"{name}: width {width} differs"
                    seconds[width].append(taken)
        default = np.array(seconds["default"])
        table.add(name, round(deltas[0], 2), round(median(default) * 1e3, 2),
                  *(round(float(np.median(np.array(seconds[width]) / default)), 3) for width in widths[1:]))
    table.record()


if __name__ == "__main__":
    main()
