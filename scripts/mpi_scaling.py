"""Distributed FW past this machine: predicted time and parallel efficiency for n up to 300,000 and
P up to 4,096 processes (strong and weak scaling), 2D blocks against row strips (seed 003's
comparison), with and without lookahead, for a stated network; checked against the plan replay
where the replay runs.

Run: .venv/bin/python scripts/mpi_scaling.py [--latency-us 2] [--bandwidth-gbs 10] [--rate R]
     [--cores-per-process 1] [--broadcast flat|tree] [--png benchmarks/mpi_scaling.png]
The rate (relaxations/s of one core) defaults to this CPU's measured min-plus product rate.
Each process's words received: 2D ~ n^2/pr + n^2/pc = 2n^2/sqrt(P) on a square grid; strips ~ n^2.
"""
from __future__ import annotations

import argparse
import dataclasses

import schedules
from schedules.distribute import Network, grid_for, plan_distribution
from schedules.network import layer_model, simulate_plan

PROCESSES = (1, 4, 16, 64, 256, 1024, 4096)
STRONG_N = (30_000, 100_000, 300_000)
TILE = 256


def measured_rate(dtype: str = "float32") -> float:
    from codegen.register_blocks import choose_register_block

    return max(choose_register_block(dtype).rates.values())


def strong_rows(network: Network) -> list[tuple]:
    rows = []
    for n in STRONG_N:
        for processes in PROCESSES:
            for name, placement, lookahead in (("2D, lookahead", "block-cyclic", True),
                                               ("2D, bulk-synchronous", "block-cyclic", False),
                                               ("strips, lookahead", "strips", True)):
                model = layer_model(n, TILE, grid_for(processes, placement), network, lookahead)
                rows.append((n, processes, name, model))
    return rows


def weak_rows(network: Network, per_process: int = 4_096) -> list[tuple]:
    """n grows as sqrt(P): every process keeps per_process^2 elements."""
    rows = []
    for processes in PROCESSES:
        n = int(per_process * processes**0.5)
        for name, placement in (("2D", "block-cyclic"), ("strips", "strips")):
            rows.append((n, processes, name, layer_model(n, TILE, grid_for(processes, placement), network, True)))
    return rows


def replay_check(network: Network) -> list[str]:
    """The closed form beside the plan replay where the replay runs (classic, lookahead)."""
    lines = ["| n | tile | grid | replay (s) | closed form (s) | closed / replay |", "|---|---|---|---|---|---|"]
    for n, tile, processes in ((4096, 128, 4), (4096, 128, 16), (8192, 256, 16), (8192, 256, 64)):
        grid = grid_for(processes)
        plan = plan_distribution(schedules.build("classic", n, tile), grid, True, network)
        replay = simulate_plan(plan, network).makespan
        closed = layer_model(n, tile, grid, network, True).time
        lines.append(f"| {n} | {tile} | {grid} | {replay:.4g} | {closed:.4g} | {closed / replay:.3f} |")
    return lines


def plot(strong: list[tuple], weak: list[tuple], network: Network, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    styles = {"2D, lookahead": "-", "2D, bulk-synchronous": "--", "strips, lookahead": ":"}
    for colour, n in enumerate(STRONG_N):
        for name, style in styles.items():
            points = [(p, m.efficiency) for size, p, label, m in strong if size == n and label == name]
            left.plot(*zip(*points), style, color=f"C{colour}", marker="o", label=f"n={n:,}, {name}")
    left.set(xscale="log", xlabel="processes P", ylabel="parallel efficiency", ylim=(0, 1.05),
             title="strong scaling (classic FW, tile 256)")
    left.legend(fontsize=6)
    for name in ("2D", "strips"):
        points = [(p, m.efficiency) for _, p, label, m in weak if label == name]
        right.plot(*zip(*points), marker="o", label=f"{name}, lookahead")
    right.set(xscale="log", xlabel="processes P (n = 4,096 sqrt(P))", ylabel="parallel efficiency", ylim=(0, 1.05),
              title="weak scaling (n^2/P fixed)")
    right.legend()
    figure.suptitle(f"alpha = {network.latency * 1e6:g} us, {network.bandwidth / 1e9:g} GB/s per link, "
                    f"{network.rate:.3g} relaxations/s per process, {network.itemsize}-byte elements")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-us", type=float, default=2.0)
    parser.add_argument("--bandwidth-gbs", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=None, help="relaxations/s of one core (default: measured)")
    parser.add_argument("--cores-per-process", type=int, default=1, help="threads per process (seed 003's two levels)")
    parser.add_argument("--broadcast", choices=("flat", "tree"), default="flat",
                        help="flat: the root sends to each receiver in turn (the MPI runtime); tree: binomial")
    parser.add_argument("--png", default=None)
    args = parser.parse_args()
    rate = (args.rate or measured_rate()) * args.cores_per_process
    network = Network(args.latency_us * 1e-6, args.bandwidth_gbs * 1e9, rate, 4, args.broadcast)
    print(f"network: {dataclasses.asdict(network)}\n")
    strong = strong_rows(network)
    print("| n | P | layout | time (s) | efficiency | words received per process |")
    print("|---|---|---|---|---|---|")
    for n, processes, name, model in strong:
        print(f"| {n:,} | {processes} | {name} | {model.time:.4g} | {model.efficiency:.1%} | "
              f"{model.words_received:.3g} |")
    weak = weak_rows(network)
    print("\n| n | P | layout | time (s) | efficiency |")
    print("|---|---|---|---|---|")
    for n, processes, name, model in weak:
        print(f"| {n:,} | {processes} | {name} | {model.time:.4g} | {model.efficiency:.1%} |")
    print("\n" + "\n".join(replay_check(network)))
    if args.png:
        plot(strong, weak, network, args.png)
        print(f"\nplot: {args.png}")


if __name__ == "__main__":
    main()
