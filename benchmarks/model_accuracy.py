"""How well the calibrated model ranks schedules on this machine (issue 36). Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/model_accuracy.py [--sizes 2048 4096]
        [--dtypes float32 int32] [--store benchmarks/model_accuracy.sqlite] [--plot benchmarks/model_accuracy.png]

First `polyfw calibrate` for each dtype (its time is printed: the target is
under a minute for the defaults), stored in --store. Then, per size and dtype,
every candidate of an evaluation space spread over every family, tile, κ and
runtime (EVALUATION_AXES: 60 candidates) is proved, verified exactly and timed
(median of --repeats, interleaving nothing: one candidate at a time on a quiet
machine), and the model's ranking is rated: Kendall's tau between predicted
and measured seconds, the top-1 regret (the model's favourite against the
best measured). Then the 'model' strategy searches the same space with the
same store, measuring at most a quarter of what exhaustive measured (stored
records stand in for its measurements), and its best is compared with the
exhaustive best. Last, every measured candidate is timed again in --rounds
interleaved rounds (a new random order each round) and the model's predictions
as calibrated are rated against those medians: on a shared host whose speed
drifts within minutes, measuring one candidate after another rates the host as
much as the model. The plot puts predicted against measured seconds, one panel
per size and dtype.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from codegen.register_blocks import cpu_description  # noqa: E402  (first: it sets Numba's CPU features)

import numba  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import kendalltau  # noqa: E402

from codegen import generate  # noqa: E402
from codegen.targets import find_target  # noqa: E402
from polyfw.explore import Exploration, Space, Store, explore, label  # noqa: E402
from polyfw.explore.space import build_candidate  # noqa: E402
from polyfw.graphs import as_dense, random_graph  # noqa: E402
from codegen.kernels import padded_stride  # noqa: E402
from polyfw.machine.calibrate import calibrate, memory_bandwidth  # noqa: E402
from polyfw.machine.calibrations import save  # noqa: E402
from record import print_and_record  # noqa: E402  (benchmarks/record.py)

#: the evaluation space: every family, the searched tiles, three kappas, every runtime (the
#: generalized family's fused variant in its seed order: its other settings are a few percent apart)
EVALUATION_AXES = {"tile": [32, 64, 128, 256], "kappa": [2, 4, 8], "variant": ["fused"], "reverse": ["descending"],
                   "step_order": ["LeadBlock-LeadRowCol"], "part_order": ["forward-reverse-rest"],
                   "paired": [True], "stages": ["I-SD-DD"]}


#: pairs measured at least this far apart count as told apart (near-ties are the host's noise to order)
APART = 0.10


def ordered_apart(found: Exploration) -> tuple[float, int]:
    """The share of the pairs measured at least APART apart that the model orders the same way, and
    how many such pairs there are: Kendall's tau counts near-ties too, which on a shared host
    (repeats a few percent apart) order at random."""
    records = found.measured
    pairs = [(a, b) for i, a in enumerate(records) for b in records[i + 1:]
             if max(a.seconds, b.seconds) >= (1 + APART) * min(a.seconds, b.seconds)]
    right = sum((a.seconds < b.seconds) == (a.predicted_seconds < b.predicted_seconds) for a, b in pairs)
    return (right / len(pairs) if pairs else float("nan")), len(pairs)


def interleaved(found: Exploration, rounds: int, seed: int = 0) -> dict[str, float]:
    """Each measured candidate timed again once a round, in a new random order each round: key ->
    the median over the rounds. A host whose speed drifts slows every candidate alike this way,
    where one candidate after another it slows the ones that ran in the slow minutes."""
    records = found.measured
    n, dtype = records[0].n, records[0].dtype
    matrix = as_dense(random_graph(n, m=min(4 * n, n * (n - 1)), seed=0), dtype=dtype)  # the problem measured
    buffer = np.empty((n, padded_stride(n)), dtype=dtype)
    target = find_target("cpu")
    compiled = {r.key: generate(build_candidate(found.candidates[r.key], n), target="cpu", dtype=dtype,
                                **target.read_options(found.candidates[r.key].option_dict())) for r in records}
    times: dict[str, list[float]] = {r.key: [] for r in records}
    order = list(times)
    random_order = np.random.default_rng(seed)
    for _ in range(rounds):
        random_order.shuffle(order)
        for key in order:
            buffer[:, :n] = matrix
            started = time.perf_counter()
            compiled[key](buffer)
            times[key].append(time.perf_counter() - started)
    return {key: float(np.median(found)) for key, found in times.items()}


def rated(found: Exploration) -> str:
    quality = found.quality()
    share, pairs = ordered_apart(found)
    return (f"tau {quality['kendall_tau']:.3f} over {quality['pairs']} candidates, regret "
            f"{100 * quality['regret']:.1f}%; {100 * share:.0f}% of the {pairs} pairs measured "
            f">= {100 * APART:.0f}% apart ordered right")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "int32"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3,
                        help="then time every measured candidate again once a round, interleaved (0: not)")
    parser.add_argument("--store", default="benchmarks/model_accuracy.sqlite")
    parser.add_argument("--plot", default="benchmarks/model_accuracy.png")
    parser.add_argument("--no-calibrate", dest="calibrate", action="store_false",
                        help="use the store's latest calibration (default: calibrate first)")
    args = parser.parse_args()
    cpu = cpu_description()
    print(f"CPU: {cpu['model']} ({cpu['llvm_cpu']}, {cpu['isa']}, {cpu['vector_bytes']}-byte vectors), "
          f"{numba.get_num_threads()} threads")
    if args.calibrate:
        started = time.perf_counter()
        bandwidth = memory_bandwidth()
        for dtype in args.dtypes:
            save(calibrate(dtype, bandwidth=bandwidth, say=print), args.store)
        print(f"calibrated {', '.join(args.dtypes)} in {time.perf_counter() - started:.1f} s")
    rows, panels, interleaved_rows = [], [], []
    with Store(args.store) as store:
        for n in args.sizes:
            for dtype in args.dtypes:
                space = Space(n, dtype, values=EVALUATION_AXES)
                started = time.perf_counter()
                every = explore(space, "exhaustive", store=store, repeats=args.repeats, progress=True)
                print(f"n = {n}, {dtype}: {len(every.measured)} measured in {time.perf_counter() - started:.0f} s; "
                      f"{rated(every)}")
                budget = max(1, len(every.records) // 4)
                guided = explore(space, "model", max_candidates=budget, store=store, repeats=args.repeats,
                                 progress=False)
                best, found = every.best, guided.best
                print(f"  exhaustive best {label(best.key)} {best.seconds:.4f} s; model strategy, {len(guided.records)}"
                      f" visited: {label(found.key)} {found.seconds:.4f} s ({100 * (found.seconds / best.seconds - 1):+.1f}%)")
                if args.rounds:
                    again = interleaved(every, args.rounds)
                    calibrated = [r.model["predicted_seconds"] for r in every.measured]
                    tau = kendalltau(calibrated, [again[r.key] for r in every.measured])[0]
                    favourite = min(every.measured, key=lambda r: r.model["predicted_seconds"]).key
                    print(f"  timed again in {args.rounds} interleaved rounds: tau {tau:.3f} (predictions as "
                          f"calibrated against the rounds' medians), regret "
                          f"{100 * (again[favourite] / min(again.values()) - 1):.1f}%")
                    interleaved_rows.append([n, dtype, round(tau, 3),
                                             round(100 * (again[favourite] / min(again.values()) - 1), 1)])
                quality = every.quality()
                share, pairs = ordered_apart(every)
                spread = max(r.seconds for r in every.measured) / best.seconds
                rows.append([n, dtype, len(every.measured), round(spread, 2), round(quality["kendall_tau"], 3),
                             round(100 * share) if pairs else None, pairs, round(100 * quality["regret"], 1),
                             len(guided.records), len(every.records),
                             round(100 * (found.seconds / best.seconds - 1), 1)])
                panels.append((f"n = {n}, {dtype}: tau {quality['kendall_tau']:.2f}", every.measured))
    apart = f"pairs >= {100 * APART:.0f}% apart"
    print_and_record("model_accuracy", "how well the calibrated model ranks schedules",
                     ["n", "dtype", "measured", "slowest / fastest", "Kendall tau", f"{apart} ordered right %", apart,
                      "top-1 regret %", "model strategy visited", "candidates", "its best vs exhaustive %"], rows,
                     note=f"medians of {args.repeats}, one candidate at a time")
    if interleaved_rows:
        print_and_record("model_accuracy", f"timed again in {args.rounds} interleaved rounds",
                         ["n", "dtype", "Kendall tau", "top-1 regret %"], interleaved_rows,
                         note="predictions as calibrated against the rounds' medians")
    if args.plot:
        plot(panels, args.plot, f"{cpu['model']}, {numba.get_num_threads()} threads")
        print(f"wrote {args.plot}")


def plot(panels, path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2), squeeze=False)
    colours = dict(zip(("classic", "generalized", "recursive"), plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    markers = {"barrier": "o", "dataflow": "^", "dataflow-shared": "s"}
    for axis, (name, records) in zip(axes[0], panels):
        for r in records:
            runtime = dict(item.split("=", 1) for item in r.key.split(";")[1:]).get("runtime", "barrier")
            axis.scatter(r.predicted_seconds, r.seconds, color=colours.get(r.family, "grey"),
                         marker=markers.get(runtime, "o"), s=22)
        low = min(min(r.predicted_seconds, r.seconds) for r in records)
        high = max(max(r.predicted_seconds, r.seconds) for r in records)
        axis.plot([low, high], [low, high], color="grey", linestyle=":")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_title(name, fontsize=9)
        axis.set_xlabel("predicted seconds (calibrated model)")
    axes[0][0].set_ylabel("measured seconds (median)")
    handles = [plt.Line2D([], [], color=c, marker="o", linestyle="", label=f) for f, c in colours.items()]
    handles += [plt.Line2D([], [], color="black", marker=m, linestyle="", label=r) for r, m in markers.items()]
    axes[0][-1].legend(handles=handles, fontsize=7)
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
