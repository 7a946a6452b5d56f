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
much as the model. The rounds' times are kept beside the store (STORE.rounds.json)
and give the noise: the median over candidates of a candidate's spread over the
rounds (max - min over the median); tau is also given over the pairs measured
further apart than that. The rounds' self-agreement (half the rounds against the
other half, on the pairs >= 10% apart) bounds what any model can score on them,
and their own regret (one half's fastest timed by the other half) is about what
a model that knew every true time would be judged to lose.
The plot puts predicted against measured seconds, one panel per size and dtype.

--rate-only measures nothing: it predicts the store's measured candidates again
with the store's latest calibration and rates that against the kept rounds (else
the stored medians): how a new calibration would have ranked the same times.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from codegen.register_blocks import cpu_description  # noqa: E402  (first: it sets Numba's CPU features)

import numba  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import kendalltau  # noqa: E402

from codegen import generate  # noqa: E402
from codegen.targets import find_target  # noqa: E402
from polyfw.explore import Exploration, Space, Store, explore, label  # noqa: E402
from polyfw.explore.model import Model  # noqa: E402
from polyfw.explore.space import build_candidate  # noqa: E402
from polyfw.graphs import as_dense, exact_weights, random_graph  # noqa: E402
from codegen.kernels import padded_stride  # noqa: E402
from polyfw.machine.calibrate import calibrate, memory_bandwidth  # noqa: E402
from polyfw.machine.calibrations import save, stored  # noqa: E402
from record import print_and_record  # noqa: E402  (benchmarks/record.py)

#: the evaluation space: every family, the searched tiles, three kappas, every runtime (the
#: generalized family's fused variant in its seed order: its other settings are a few percent apart)
EVALUATION_AXES = {"tile": [32, 64, 128, 256], "kappa": [2, 4, 8], "variant": ["fused"], "reverse": ["descending"],
                   "step_order": ["LeadBlock-LeadRowCol"], "part_order": ["forward-reverse-rest"],
                   "paired": [True], "stages": ["I-SD-DD"]}


#: pairs measured at least this far apart count as told apart (near-ties are the host's noise to order)
APART = 0.10


def ordered_apart(measured: dict[str, float], predicted: dict[str, float], apart: float = APART) -> tuple[float, int]:
    """The share of the pairs measured at least `apart` apart that the model orders the same way, and
    how many such pairs there are: Kendall's tau counts near-ties too, which on a shared host
    (repeats a few percent apart) order at random."""
    keys = list(measured)
    pairs = [(a, b) for i, a in enumerate(keys) for b in keys[i + 1:]
             if max(measured[a], measured[b]) >= (1 + apart) * min(measured[a], measured[b])]
    right = sum((measured[a] < measured[b]) == (predicted[a] < predicted[b]) for a, b in pairs)
    return (right / len(pairs) if pairs else float("nan")), len(pairs)


def noise(rounds: dict[str, list[float]]) -> float:
    """The host's noise: the median over candidates of one's spread over the rounds (max - min over median)."""
    return float(np.median([(max(t) - min(t)) / np.median(t) for t in rounds.values()]))


def self_agreement(rounds: dict[str, list[float]], splits: int = 64, seed: int = 0) -> tuple[float, float]:
    """How far the rounds agree with themselves, the rounds split at random into two halves: the share of
    the pairs >= APART apart by one half's medians that the other half orders the same way, and the top-1
    regret of one half's fastest by the other half's medians; each averaged over `splits` splits. No model
    orders the measured pairs right more often than the measurement repeats itself, and one that knew every
    candidate's true time would still be judged with about this regret (half the rounds: a little more)."""
    times = {key: np.asarray(t) for key, t in rounds.items()}
    count = min(len(t) for t in times.values())
    if count < 2:
        return float("nan"), float("nan")
    shuffle, shares, regrets = np.random.default_rng(seed), [], []
    for _ in range(splits):
        order = shuffle.permutation(count)
        first, second = ({key: float(np.median(t[half])) for key, t in times.items()}
                         for half in (order[:count // 2], order[count // 2:]))
        shares.append(ordered_apart(first, second)[0])
        regrets.append(second[min(first, key=first.get)] / min(second.values()) - 1)
    return float(np.nanmean(shares)), float(np.mean(regrets))


def rating(measured: dict[str, float], predicted: dict[str, float], spread: float) -> dict[str, float]:
    """tau over every candidate and over the pairs further apart than `spread` (the noise: 2 x the share
    of those pairs ordered right - 1), the share of the pairs >= APART apart ordered right, the top-1
    regret (the model's favourite against the fastest measured)."""
    keys = list(measured)
    share, pairs = ordered_apart(measured, predicted)
    beyond, beyond_pairs = ordered_apart(measured, predicted, spread)
    favourite = min(keys, key=predicted.get)
    return {"tau": float(kendalltau([predicted[k] for k in keys], [measured[k] for k in keys])[0]),
            "tau beyond noise": 2 * beyond - 1, "pairs beyond noise": beyond_pairs, "apart right": share,
            "pairs apart": pairs, "regret": measured[favourite] / min(measured.values()) - 1}


def rated_line(found: dict[str, float]) -> str:
    return (f"tau {found['tau']:.3f} ({found['tau beyond noise']:.3f} over the {found['pairs beyond noise']} pairs "
            f"apart beyond the noise), {100 * found['apart right']:.0f}% of the {found['pairs apart']} pairs "
            f">= {100 * APART:.0f}% apart ordered right, regret {100 * found['regret']:.1f}%")


def rounds_path(store: str) -> Path:
    return Path(f"{store}.rounds.json")


def kept_rounds(store: str) -> dict[str, list[float]]:
    """'n dtype key' -> the times of the interleaved rounds kept beside the store."""
    path = rounds_path(store)
    return json.loads(path.read_text()) if path.exists() else {}


def interleaved(found: Exploration, rounds: int, seed: int = 0) -> dict[str, list[float]]:
    """Each measured candidate timed again once a round, in a new random order each round: key ->
    its times. A host whose speed drifts slows every candidate alike this way, where one candidate
    after another it slows the ones that ran in the slow minutes."""
    records = found.measured
    n, dtype = records[0].n, records[0].dtype
    # the problem explore measured (polyfw.explore.runners.Problem: weights exact in the dtype)
    matrix = as_dense(random_graph(n, m=min(4 * n, n * (n - 1)), weights=exact_weights(n, dtype), seed=0), dtype=dtype)
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
    return times


def rate_only(args: argparse.Namespace) -> None:
    """The store's measured candidates predicted again by its latest calibration, rated against the kept
    rounds' medians where there are some, else the stored medians."""
    rounds = kept_rounds(args.store)
    with Store(args.store, read_only=True) as store:
        for n in args.sizes:
            for dtype in args.dtypes:
                calibration = stored(dtype, numba.get_num_threads(), args.store)
                space = Space(n, dtype, values=EVALUATION_AXES)
                candidates = {c.key: c for c in space}
                records = [r for r in store.records(dtype=dtype, n=n) if r.seconds and r.key in candidates]
                if calibration is None or not records:
                    print(f"n = {n}, {dtype}: nothing to rate (no calibration or no measurement in {args.store})")
                    continue
                model = Model(calibration)
                predicted = {r.key: model.prediction(build_candidate(candidates[r.key], n), candidates[r.key]).seconds
                             for r in records}
                again = {r.key: rounds[f"{n} {dtype} {r.key}"] for r in records if f"{n} {dtype} {r.key}" in rounds}
                measured = {key: float(np.median(t)) for key, t in again.items()} if len(again) == len(records) \
                    else {r.key: r.seconds for r in records}
                spread = noise(again) if again else APART
                agreement, own_regret = self_agreement(again) if again else (float("nan"), float("nan"))
                print(f"n = {n}, {dtype}: {len(records)} candidates, noise {100 * spread:.1f}% "
                      f"({'the kept rounds' if again else 'no rounds kept: APART'}"
                      + (f", {len(next(iter(again.values())))} rounds agreeing with themselves on "
                         f"{100 * agreement:.0f}% of the pairs, with a regret of {100 * own_regret:.1f}%"
                         if again else "") + "); " + rated_line(rating(measured, predicted, spread)))


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
    parser.add_argument("--rate-only", action="store_true",
                        help="measure nothing: rate the store's latest calibration on its measurements")
    args = parser.parse_args()
    if args.rate_only:
        rate_only(args)
        return
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
                as_calibrated = {r.key: r.model["predicted_seconds"] for r in every.measured}
                medians = {r.key: r.seconds for r in every.measured}
                print(f"n = {n}, {dtype}: {len(every.measured)} measured in {time.perf_counter() - started:.0f} s; "
                      + rated_line(rating(medians, {r.key: r.predicted_seconds for r in every.measured}, APART)))
                budget = max(1, len(every.records) // 4)
                guided = explore(space, "model", max_candidates=budget, store=store, repeats=args.repeats,
                                 progress=False)
                best, found = every.best, guided.best
                print(f"  exhaustive best {label(best.key)} {best.seconds:.4f} s; model strategy, {len(guided.records)}"
                      f" visited: {label(found.key)} {found.seconds:.4f} s ({100 * (found.seconds / best.seconds - 1):+.1f}%)")
                if args.rounds:
                    again = interleaved(every, args.rounds)
                    kept = kept_rounds(args.store)
                    kept.update({f"{n} {dtype} {key}": times for key, times in again.items()})
                    rounds_path(args.store).write_text(json.dumps(kept))
                    spread, (agreement, own_regret) = noise(again), self_agreement(again)
                    found_again = rating({key: float(np.median(t)) for key, t in again.items()}, as_calibrated, spread)
                    print(f"  timed again in {args.rounds} interleaved rounds (noise {100 * spread:.1f}%; half the "
                          f"rounds order {100 * agreement:.0f}% of the pairs as the other half, and its fastest is "
                          f"{100 * own_regret:.1f}% behind the other half's), predictions as "
                          f"calibrated against the rounds' medians: " + rated_line(found_again))
                    interleaved_rows.append([n, dtype, round(100 * spread, 1), round(100 * agreement),
                                             round(100 * own_regret, 1),
                                             round(found_again["tau"], 3),
                                             round(found_again["tau beyond noise"], 3),
                                             round(100 * found_again["apart right"]),
                                             round(100 * found_again["regret"], 1)])
                quality = every.quality()
                share, pairs = ordered_apart(medians, {r.key: r.predicted_seconds for r in every.measured})
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
                         ["n", "dtype", "noise %", "rounds' self-agreement %", "rounds' own regret %", "Kendall tau",
                          "tau beyond the noise",
                          f"{apart} ordered right %", "top-1 regret %"], interleaved_rows,
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
