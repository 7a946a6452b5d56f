"""Which orders of the FW nest are legal under which dependence model — one table.

Run: .venv/bin/python scripts/legality_table.py [--n 8] [--tile 3]
Each row is a schedule, each column a model; an illegal cell names the
first dependence broken and a witness pair of iterations.
"""
from __future__ import annotations

import argparse

from schedules import find_violations, map_baselines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--tile", type=int, default=3)
    args = parser.parse_args()
    candidates = [map_baselines.loop_order(args.n, order) for order in ("kij", "kji", "ikj", "ijk")]
    candidates += [
        map_baselines.classic_blocked(args.n, args.tile, stages)
        for stages in (("I", "SD", "DD"), ("I", "DD", "SD"), ("SD", "I", "DD"))
    ]
    print(f"n = {args.n}, tile = {args.tile}")
    print(f"{'schedule':<26} {'exact':<44} {'relaxed':<44}")
    for schedule in candidates:
        cells = []
        for model in ("exact", "relaxed"):
            broken = find_violations(schedule, model)
            cells.append("legal" if not broken else f"breaks {broken[0].dependence}: S{list(broken[0].source)} -> S{list(broken[0].sink)}")
        print(f"{schedule.name:<26} {cells[0]:<44} {cells[1]:<44}")


if __name__ == "__main__":
    main()
