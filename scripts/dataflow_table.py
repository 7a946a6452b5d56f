"""Barrier against dataflow on P processors, from the simulator: makespan, load and the gap to the
lower bound, for Q blocks a side (unit time per tile-layer, as seed 004's example).

Run: .venv/bin/python scripts/dataflow_table.py [--blocks 4 8 16 32] [--procs 2 4 8 16]
    [--priority schedule critical-path]
Among ready tile-layers the dataflow runtime takes the first by a priority
(schedules.simulate.PRIORITIES): the schedule's own order, or the critical
path's (the next layer's pivot and panels ahead of this layer's other products).
"""
from __future__ import annotations

import argparse

import schedules
from schedules.cost import tile_view
from schedules.simulate import PRIORITIES, dataflow_times, stage_barrier_times

FAMILIES = {"classic": {}, "generalized κ=2": {"kappa": 2}, "recursive": {}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--procs", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--priority", nargs="+", default=list(PRIORITIES), choices=PRIORITIES)
    args = parser.parse_args()
    print("| Q | P | family | priority | barrier | load | dataflow | load | lower bound | dataflow over bound |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for blocks in args.blocks:
        n = 2 * blocks  # tile 2: the simulator counts tile-layers, whatever their size
        for name, params in FAMILIES.items():
            family = name.split()[0]
            size = {"base": 2} if family == "recursive" else {"tile": 2}
            view = tile_view(schedules.build(family, n, **size, **params))
            work = len(view.units)
            for procs in args.procs:
                barrier, _ = stage_barrier_times(view, procs)
                for priority in args.priority:
                    flow = dataflow_times(view, procs, priority=priority)
                    print(f"| {blocks} | {procs} | {name} | {priority} | {barrier} | {work / (procs * barrier):.1%} | "
                          f"{flow.makespan:.0f} | {work / (procs * flow.makespan):.1%} | {flow.lower_bound:.0f} | "
                          f"{flow.makespan / flow.lower_bound - 1:+.1%} |", flush=True)


if __name__ == "__main__":
    main()
