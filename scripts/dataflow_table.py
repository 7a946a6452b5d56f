"""Barrier against dataflow on P processors, from the simulator: makespan, load and the gap to the
lower bound, for Q blocks a side (unit time per tile-layer, as seed 004's example).

Run: .venv/bin/python scripts/dataflow_table.py [--blocks 4 8 16 32] [--procs 2 4 8 16]
The dataflow runtime takes ready tile-layers in the schedule's order, so each
family's order is a priority of its own.
"""
from __future__ import annotations

import argparse

import schedules
from schedules.cost import tile_view
from schedules.simulate import dataflow_times, stage_barrier_times

FAMILIES = {"classic": {}, "generalized κ=2": {"kappa": 2}, "recursive": {}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--procs", type=int, nargs="+", default=[2, 4, 8, 16])
    args = parser.parse_args()
    print("| Q | P | priority | barrier | load | dataflow | load | lower bound | dataflow over bound |")
    print("|---|---|---|---|---|---|---|---|---|")
    for blocks in args.blocks:
        n = 2 * blocks  # tile 2: the simulator counts tile-layers, whatever their size
        for name, params in FAMILIES.items():
            family = name.split()[0]
            size = {"base": 2} if family == "recursive" else {"tile": 2}
            view = tile_view(schedules.build(family, n, **size, **params))
            work = len(view.units)
            for procs in args.procs:
                barrier, _ = stage_barrier_times(view, procs)
                flow = dataflow_times(view, procs)
                print(f"| {blocks} | {procs} | {name} | {barrier} | {work / (procs * barrier):.1%} | "
                      f"{flow.makespan:.0f} | {work / (procs * flow.makespan):.1%} | {flow.lower_bound:.0f} | "
                      f"{flow.makespan / flow.lower_bound - 1:+.1%} |", flush=True)


if __name__ == "__main__":
    main()
