"""Where a DD tile-layer's rate goes between the register block and a real layer (issue 51, item 2): the
same products with their operands kept or moved, one thread, beside the C++ ceiling in the same run.
Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/dd_residency.py [--n 2048] [--tile 256]
        [--dtypes int32 float32] [--rounds 7]

One block layer's DD products of an n x n matrix (the middle layer, its operands published into
micro-panels as the dataflow runtime publishes them) run through the kernel module's relax_panels, on
one thread. The variants change only which memory the products touch:

- as run: every product's own C block, its row's A panel and its column's B panel, row by row;
- one C block: the same panels, but every product updates the same C (which then stays in L2);
- one pair of panels: every C, but the same A and B panels;
- one product repeated: C and panels the same every time (what the register block reaches on data in L2);
- C among 8 blocks: as run, but C cycles over 8 blocks (2 MB of int32 at tile 256: past L2, inside L3);
- as run, C not prefetched: the kernel module compiled with prefetch (0, 0);
- as run, by column strips 1 deep: the kernel module compiled with the pass every CPU had before the
  search chose one (codegen.register_blocks.PASS).

Each figure is the median of the rounds (variants interleaved in every round), as relaxations per second
and as a share of the C++ micro-kernel's best shape on one thread at its best: the most of the start's
sweep and of its samples in every round (a busy moment lowers a sample; it never raises one).
"""
from __future__ import annotations

import argparse
import ctypes
import os
import time
from dataclasses import replace

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from codegen.cpu import kernel_module  # noqa: E402  (first: it sets Numba's CPU features)

import numba  # noqa: E402
import numpy as np  # noqa: E402

from codegen.kernels import KernelOptions, padded_stride  # noqa: E402
from codegen.register_blocks import PASS, cpu_description, pass_words  # noqa: E402
from polyfw.machine.ceiling import Kernels, measure  # noqa: E402

from record import print_and_record  # noqa: E402  (benchmarks/record.py)

#: seconds a ceiling sample takes: every shape swept once at the start, the best one sampled each round
CEILING_SECONDS = 0.2


def layer_products(n: int, tile: int, layer: int) -> list[tuple[int, int]]:
    """The DD blocks (ib, jb) of block layer `layer`, row by row."""
    q = -(-n // tile)
    return [(ib, jb) for ib in range(q) for jb in range(q) if layer not in (ib, jb)]


def variants(blocks: list[tuple[int, int]]) -> dict[str, list[tuple[tuple[int, int], tuple[int, int]]]]:
    """name -> the products to run, each as (the C block, the (A row, B column) panels read)."""
    one = blocks[len(blocks) // 2]
    eight = [blocks[x % 8] for x in range(len(blocks))]
    return {"as run": list(zip(blocks, blocks)),
            "one C block": [(one, panels) for panels in blocks],
            "one pair of panels": [(c, one) for c in blocks],
            "one product repeated": [(one, one)] * len(blocks),
            "C among 8 blocks": list(zip(eight, blocks))}


def study(n: int, tile: int, dtype: str, rounds: int, ceiling: Kernels) -> None:
    options = KernelOptions(dtype=dtype)
    kernels = kernel_module(options)
    q, layer = -(-n // tile), (-(-n // tile)) // 2
    rng = np.random.default_rng(1)
    a = np.zeros((n, padded_stride(n)), dtype=dtype)
    a[:, :n] = rng.integers(1, 100, (n, n))
    panels = np.zeros(2 * q * q * tile * tile, dtype=dtype)
    status = np.zeros(4, dtype=np.int64)
    blocks = layer_products(n, tile, layer)
    for block in range(q):
        if block != layer:
            kernels.publish_operands(a, panels, layer, block, layer, 1, tile, n)
            kernels.publish_operands(a, panels, layer, layer, block, 1, tile, n)
    k0, k1 = layer * tile, min(layer * tile + tile, n)

    def run(module, products) -> float:
        started = time.perf_counter()
        for (ib, jb), (pi, pj) in products:
            module.relax_panels(a, panels, int(kernels.published_slot(layer, pi, tile, n, False)),
                                int(kernels.published_slot(layer, pj, tile, n, True)), tile, k0, k1,
                                ib * tile, min(ib * tile + tile, n), jb * tile, min(jb * tile + tile, n), status)
        return time.perf_counter() - started

    plans = {name: (kernels, products) for name, products in variants(blocks).items()}
    plans["as run, C not prefetched"] = (kernel_module(replace(options, prefetch=(0, 0))), plans["as run"][1])
    plans["as run, by column strips 1 deep"] = (kernel_module(replace(options, panel_pass=PASS)), plans["as run"][1])
    relaxations = len(blocks) * tile * tile * (k1 - k0)
    swept = measure([dtype], CEILING_SECONDS, 1, ceiling)[dtype]
    best_shape, reps = swept["best_shape"], swept["best_reps"]
    for module, products in plans.values():
        run(module, products[:2])  # compiled, pages mapped
    rates: dict[str, list[float]] = {name: [] for name in plans}
    rates["ceiling"] = []
    for _ in range(rounds):
        rates["ceiling"].append(ceiling.rate(dtype, best_shape, reps))
        for name, (module, products) in plans.items():
            rates[name].append(relaxations / run(module, products))
    stable = max(swept["best"], *rates.pop("ceiling"))
    median = {name: float(np.median(values)) for name, values in rates.items()} | {"ceiling (best sample)": stable}
    rows = [[name, round(value / 1e9, 1), f"{value / stable:.0%}", round(value / median["as run"], 3)]
            for name, value in median.items()]
    print_and_record("dd_residency", f"a DD layer's products by what they keep, n = {n}, tile {tile}, {dtype}",
                     ["variant", "G/s (1 thread)", "share of the ceiling", "over as run"], rows,
                     note=f"medians of {rounds} interleaved rounds; register block "
                          f"{options.register_block[0]} x {options.register_block[1]}, prefetch {options.prefetch}, "
                          f"passes by {pass_words(options.panel_pass)}; "
                          f"ceiling: the C++ micro-kernel at {best_shape[0]} x {best_shape[1]} vectors")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--tile", type=int, default=256)
    parser.add_argument("--dtypes", nargs="+", default=["int32", "float32"])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    numba.set_num_threads(1)
    ceiling = Kernels(args.dtypes)
    ctypes.CDLL("libgomp.so.1").omp_set_num_threads(1)  # the C++ kernel's OpenMP team: one thread too
    cpu = cpu_description()
    print(f"CPU: {cpu['model']} (LLVM {cpu['llvm_cpu']}), {cpu['isa']}, {cpu['vector_bytes']}-byte vectors; 1 thread")
    for dtype in args.dtypes:
        study(args.n, args.tile, dtype, args.rounds, ceiling)


if __name__ == "__main__":
    main()
