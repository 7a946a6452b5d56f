"""The schedule-comparison job: verify every schedule, time it, put the cost model beside it."""
from __future__ import annotations

import csv
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy.sparse.csgraph import floyd_warshall as scipy_floyd_warshall
from scipy.sparse.csgraph import shortest_path

from codegen import generate
from codegen.kernels import padded_stride
from codegen.reference import floyd_warshall_naive
from codegen.targets import find_target
from schedules.cost import cost

from .configuration import resolve_schedule
from .graphs import as_float_distances, dense_to_sparse
from .method import choose_method
from .plan import sparse_stands_in
from .progress import bar as progress_bar
from .sparse import as_csr, johnson


@dataclass
class Row:
    schedule: str
    parameters: str
    seconds: float
    relaxations_per_second: float
    speedup_vs_scipy: float
    speedup_vs_naive: float
    exact: bool
    compile_seconds: float
    model_stages: int | None = None
    model_traffic: int | None = None
    model_writebacks_saved: int | None = None


def run_times(run: Callable[[], object], repeats: int) -> list[float]:
    """Seconds of each of `repeats` calls of `run`."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times


def median_seconds(run: Callable[[], object], repeats: int) -> float:
    return float(np.median(run_times(run, repeats)))


def compare(matrix: np.ndarray, specs: Sequence[str], tile: int | None = None, target: str = "cpu",
            repeats: int = 3, with_cost: bool = True, progress: bool | None = None) -> list[Row]:
    """Time scipy, the naive Numba kernel and each schedule on one dense matrix (graph semantics applied).
    progress: the bar (polyfw.progress's `show`: None in a terminal or a notebook only)."""
    n = matrix.shape[0]
    dtype = matrix.dtype.name
    expected = scipy_floyd_warshall(dense_to_sparse(matrix))
    steps = progress_bar(2 + len(specs) + 1, "compare", unit="run", show=progress)
    steps.set_postfix_str("scipy floyd_warshall")
    scipy_seconds = median_seconds(lambda: scipy_floyd_warshall(dense_to_sparse(matrix)), max(1, repeats // 2))
    naive_result = matrix.copy()
    floyd_warshall_naive(naive_result)  # compiled and checked outside the timing
    naive_seconds = median_seconds(lambda: floyd_warshall_naive(matrix.copy()), repeats)
    rows = [Row("scipy", "float64, serial", scipy_seconds, n**3 / scipy_seconds, 1.0, naive_seconds / scipy_seconds,
                True, 0.0),
            Row("naive-kernel", f"{dtype}, prange rows", naive_seconds, n**3 / naive_seconds,
                scipy_seconds / naive_seconds, 1.0, bool(np.array_equal(as_float_distances(naive_result), expected)), 0.0)]
    steps.update(2)
    for spec in specs:
        steps.set_postfix_str(spec)
        schedule = resolve_schedule(spec, n, dtype, target, tile=tile)
        compiled = generate(schedule, target=target, dtype=dtype)
        buffer = np.empty((n, padded_stride(n)), dtype=matrix.dtype)

        def run() -> None:
            buffer[:, :n] = matrix
            compiled(buffer)

        run()
        exact = bool(np.array_equal(as_float_distances(np.ascontiguousarray(buffer[:, :n])), expected))
        seconds = median_seconds(run, repeats)
        parameters = ", ".join([f"tile={schedule.tile}"] + [f"{k}={v}" for k, v in schedule.params.items()])
        row = Row(schedule.family, parameters, seconds,
                  n**3 / seconds, scipy_seconds / seconds, naive_seconds / seconds, exact, compiled.compile_seconds)
        if with_cost and schedule.tile_tree is not None:
            report = cost(schedule)
            row.model_stages, row.model_traffic, row.model_writebacks_saved = (
                report.stages, report.traffic, report.writebacks_saved)
        rows.append(row)
        steps.update(1)
    steps.set_postfix_str("sparse methods")
    if sparse_stands_in(find_target(target)):
        rows += _sparse_rows(matrix, expected, scipy_seconds, naive_seconds, repeats, find_target(target).on_gpu)
    steps.update(1)
    steps.close()
    return rows


#: the sparse rows are left out where Johnson is predicted to take longer than this
SPARSE_UP_TO_SECONDS = 60.0


def _sparse_rows(matrix: np.ndarray, expected: np.ndarray, scipy_seconds: float, naive_seconds: float,
                 repeats: int, on_gpu: bool) -> list[Row]:
    """scipy's default (Dijkstra from every source on sparse graphs) and polyfw's Johnson (on the GPU
    for a GPU target), both checked."""
    n = matrix.shape[0]
    graph = as_csr(as_float_distances(matrix))  # int32 marks missing edges with INT32_INF
    if choose_method(n, graph.m, matrix.dtype.name).sparse_seconds > SPARSE_UP_TO_SECONDS:
        return []
    rows = []
    contenders = {"scipy-auto": ("shortest_path(method='auto')", lambda: shortest_path(dense_to_sparse(matrix))),
                  "polyfw-sparse": ("Johnson, parallel over sources" + (", on the GPU" if on_gpu else ""),
                                    lambda: johnson(graph, target="cuda" if on_gpu else "cpu"))}
    for name, (parameters, run) in contenders.items():
        exact = bool(np.array_equal(run(), expected))
        seconds = median_seconds(run, repeats)
        rows.append(Row(name, parameters, seconds, n**3 / seconds, scipy_seconds / seconds, naive_seconds / seconds,
                        exact, 0.0))
    return rows


def table(rows: Sequence[Row]) -> str:
    header = (f"{'schedule':<13} {'parameters':<32} {'seconds':>8} {'G relax/s':>9} {'x scipy':>8} {'x naive':>8} "
              f"{'exact':>5} {'stages':>7} {'model traffic':>14}")
    lines = [header, "-" * len(header)]
    for r in rows:
        stages = "" if r.model_stages is None else str(r.model_stages)
        traffic = "" if r.model_traffic is None else f"{r.model_traffic:,}"
        lines.append(f"{r.schedule:<13} {r.parameters[:32]:<32} {r.seconds:>8.3f} {r.relaxations_per_second / 1e9:>9.2f} "
                     f"{r.speedup_vs_scipy:>8.1f} {r.speedup_vs_naive:>8.2f} {str(r.exact):>5} {stages:>7} {traffic:>14}")
    return "\n".join(lines)


def write_csv(rows: Sequence[Row], path: str) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(asdict(rows[0])))
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)


def plot(rows: Sequence[Row], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r.schedule}\n{r.parameters}" if r.parameters and r.schedule not in ("scipy", "naive-kernel")
              else r.schedule for r in rows]
    rates = [r.relaxations_per_second / 1e9 for r in rows]
    figure, axes = plt.subplots(figsize=(max(6, 1.6 * len(rows)), 4))
    bars = axes.bar(range(len(rows)), rates, color=["#999999", "#bbbbbb"] + ["#3070b0"] * (len(rows) - 2))
    axes.bar_label(bars, [f"{r:.1f}" for r in rates], fontsize=8)
    axes.set_xticks(range(len(rows)), labels, fontsize=7)
    axes.set_ylabel("G relaxations / s (n^3 / median seconds)")
    axes.set_title(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
