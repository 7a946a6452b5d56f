"""Pictures of an exploration: the Pareto front of time against traffic and stages, and the cost
model's predictions against the measurements."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .store import Record


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats in both coordinates (smaller is better)."""
    order = sorted(range(len(points)), key=lambda i: points[i])
    front, best_second = [], float("inf")
    for i in order:
        if points[i][1] < best_second:
            front.append(i)
            best_second = points[i][1]
    return front


def plot_exploration(records: Sequence[Record], path: str | Path, title: str) -> Path:
    """Three panels: seconds vs slow-memory traffic and vs stages, or messages on the mpi target
    (Pareto fronts drawn), and predicted vs measured seconds (log-log over a wide range, with the diagonal).
    Returns the file written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = [r for r in records if r.status == "measured"]
    if not measured:
        raise ValueError("no measured candidates to plot")
    families = sorted({r.family for r in measured})
    colours = dict(zip(families, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    figure, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    on_a_grid = all("messages_sent" in r.model for r in measured)  # the mpi target: no barriers, messages
    second = (("messages_sent", "messages sent by the busiest process (model)") if on_a_grid
              else ("stages", "stages (barriers or launches)"))
    for axis, (figure_of_merit, label) in zip(axes[:2], (("traffic", "slow-memory traffic (elements, model)"),
                                                         second)):
        points = [(r.model[figure_of_merit], r.seconds) for r in measured]
        for family in families:
            chosen = [p for p, r in zip(points, measured) if r.family == family]
            axis.scatter(*zip(*chosen), s=18, color=colours[family], label=family, alpha=0.8)
        front = sorted(points[i] for i in pareto_front(points))
        axis.plot(*zip(*front), drawstyle="steps-post", marker="o", markersize=9, markerfacecolor="none",
                  color="black", linewidth=1, label="Pareto front")
        if figure_of_merit == "traffic":
            axis.set_xscale("log")
        axis.set_xlabel(label)
        axis.set_ylabel("measured seconds (median)")
    axes[0].legend(fontsize=8)
    predicted = [r.predicted_seconds for r in measured]
    seconds = [r.seconds for r in measured]
    for family in families:
        axes[2].scatter([r.predicted_seconds for r in measured if r.family == family],
                        [r.seconds for r in measured if r.family == family], s=18, color=colours[family],
                        label=family)
    low, high = min(predicted + seconds), max(predicted + seconds)
    axes[2].plot([low, high], [low, high], color="grey", linestyle=":", label="predicted = measured")
    if high > 10 * low:  # log-log over a wide range; on a narrow one log ticks would be unreadable
        axes[2].set_xscale("log")
        axes[2].set_yscale("log")
    axes[2].set_xlabel("predicted seconds (cost model)")
    axes[2].set_ylabel("measured seconds")
    axes[2].legend(fontsize=8)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
