"""CPU benchmark: every figure of the CPU issue side by side in one run, each dtype judged against its
own independent ceiling measured in that run. Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/cpu.py [--sizes 2048 4096]
        [--dtypes float32 int32 float64 int16 uint8] [--rounds 5] [--parts dtypes road dataflow]
        [--schedules] [--tune] [--threads-n 8192] [--json FILE]

One table: per dtype and n, solve's default path (schedule='auto', conversions
included) as a share of that dtype's ceiling: polyfw/machine/ceiling.py's C++
micro-kernel in the dtype's semiring (min-plus; int16 saturating; uint8 or-and)
at its best register-block shape: every shape swept at the start, the best
sampled again before each timing and at the end, and the best of all those
samples (the stable ceiling) judges each target. The shared host's speed drifts within minutes, so every timing is
also paired with a ceiling sample of its dtype taken just before it, and the
median of those ratios is reported beside (a slow moment lowers a paired
sample and raises its share). int16 computes hop counts of an unweighted
graph, timed beside the same call in int32 (uint8 or-and reads the same
graph); then the road network against scipy, networkit and igraph
(benchmarks/road.py), and the dataflow runtime against the barrier one. --parts threads
times the tuned classic tile on both runtimes from 1 thread to all at --threads-n, as rates and
parallel efficiency.

--schedules adds, for every dtype of TUNED_DTYPES, every schedule of SCHEDULES, a
hand-written classic kernel, the naive kernel and scipy's floyd_warshall
(minutes more). --tune (implies --schedules) writes the fastest configuration
per dtype, proved for the sizes it stands for, into the table the package
ships (polyfw/tuning.json of this source tree; --tuning FILE writes another),
under this CPU (solve's schedule='auto' reads the entries of the CPU it runs on first).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from codegen import floyd_warshall_naive, generate  # noqa: E402  (first: it sets Numba's CPU features)

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from numba import njit, prange  # noqa: E402
from scipy.sparse.csgraph import floyd_warshall as scipy_floyd_warshall  # noqa: E402

from codegen.assembly import spill_report  # noqa: E402
from codegen.cpu import _compile_kernels  # noqa: E402
from codegen.distances import float64_distances  # noqa: E402
from codegen.kernels import DTYPES as KERNEL_DTYPES, KernelOptions  # noqa: E402
from codegen.register_blocks import choose_register_block, cpu_description, cpu_key  # noqa: E402
from polyfw import solve  # noqa: E402
from polyfw.configuration import (auto_configuration, chosen_runtime, parse_schedule, resolve_schedule,  # noqa: E402
                                  write_winner)
from polyfw.machine.ceiling import RINGS, Kernels, measure  # noqa: E402
from polyfw.machine.tuning import shipped_path  # noqa: E402
from codegen.kernels import padded_stride  # noqa: E402
from tiling.semirings import semiring  # noqa: E402

import road  # noqa: E402  (benchmarks/road.py)
from interleaved import median_seconds, random_distances  # noqa: E402  (benchmarks/interleaved.py)
from record import print_and_record  # noqa: E402  (benchmarks/record.py)

SCHEDULES = ["classic:tile=128", "classic:tile=256", "generalized:tile=128,kappa=2", "generalized:tile=128,kappa=4",
             "recursive:tile=128", "classic:tile=128,runtime=dataflow", "classic:tile=256,runtime=dataflow",
             "generalized:tile=128,kappa=2,runtime=dataflow", "recursive:tile=128,runtime=dataflow",
             "classic:tile=128,panels=true", "classic:tile=256,panels=true", "generalized:tile=128,kappa=2,panels=true",
             "classic:tile=128,runtime=dataflow,panels=true", "classic:tile=256,runtime=dataflow,panels=true",
             "generalized:tile=128,kappa=2,runtime=dataflow,panels=true"]
#: the min-plus dtypes --schedules times every schedule in, and --tune writes rows for
TUNED_DTYPES = ("float32", "int32", "float64", "int16")
#: the issue's targets for solve's default path, as a share of its dtype's ceiling, by dtype and n
SHARE_TARGETS = {dtype: {n: 0.90 for n in (2048, 4096, 8192)} for dtype in ("float32", "int32", "float64", "int16")}
#: int16 hop counts over int32's at this n, and polyfw's fastest exact call over scipy's on the road network
INT16_TARGET = (4096, 1.8)
ROAD_TARGET = 4.0
#: the runtimes compared: classic r=128 at n = 2048 in float32, barrier then dataflow
DATAFLOW = (2048, "float32", ["classic:tile=128", "classic:tile=128,runtime=dataflow"])
#: --parts threads: the runtimes compared on 1 thread up to all, and the parallel efficiency the issue asks
THREAD_RUNTIMES = ("barrier", "dataflow")
SCALING_TARGET = 0.85
#: samples of ~0.2 s of each dtype's best shape at the end of a run
AFTER_SAMPLES = 5
HOP_DENSITY = 0.05  # the unweighted graph's arcs over n^2: dense enough that solve's cost model picks Floyd-Warshall


class PairedCeiling:
    """Each dtype's independent ceiling: every shape swept at the start (best of 3 samples of ~0.2 s
    each), the best shape sampled again (~0.2 s) just before each timing it judges, and once more at
    the end (best of AFTER_SAMPLES). The stable ceiling, which the targets are judged by, is the best
    any of these samples reached in the run: a busy or throttled moment lowers a sample, never raises
    it, and a lowered paired sample raises its share, so the paired share is reported beside, never
    instead."""

    def __init__(self, dtypes: list[str]) -> None:
        self.kernels = Kernels(dtypes)
        self.found = measure(dtypes, kernels=self.kernels)
        self.after: dict[str, float] = {}
        self.best_paired: dict[str, float] = {}

    def sample(self, dtype: str) -> float:
        found = self.found[dtype]
        rate = self.kernels.rate(dtype, found["best_shape"], found["best_reps"])
        self.best_paired[dtype] = max(rate, self.best_paired.get(dtype, 0.0))
        return rate

    def measure_after(self) -> None:
        self.after = {dtype: max(self.sample(dtype) for _ in range(AFTER_SAMPLES)) for dtype in self.found}

    def stable(self, dtype: str) -> float:
        return max(self.found[dtype]["best"], self.after.get(dtype, 0.0), self.best_paired.get(dtype, 0.0))


@dataclass
class Contender:
    """A timed call: its relaxations, the dtype whose ceiling judges it, an untimed step before each
    run (refilling a buffer the run overwrites), fewer rounds than the others (slow ones), and the
    share of the ceiling the issue asks of it."""

    run: Callable[[], object]
    work: float
    dtype: str | None = None
    prepare: Callable[[], object] | None = None
    rounds: int | None = None
    target: float | None = None


def time_rounds(contenders: dict[str, Contender], rounds: int, ceiling: PairedCeiling | None) -> dict[str, dict]:
    """Medians over interleaved rounds (the contenders have run once already): seconds, rate, and for a
    contender with a dtype the paired ceiling samples and the median share of them."""
    seconds: dict[str, list[float]] = {name: [] for name in contenders}
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for round_ in range(rounds):
        for name, contender in contenders.items():
            if contender.rounds is not None and round_ >= contender.rounds:
                continue
            if ceiling is not None and contender.dtype is not None:
                samples[name].append(ceiling.sample(contender.dtype))
            if contender.prepare is not None:
                contender.prepare()
            started = time.perf_counter()
            contender.run()
            seconds[name].append(time.perf_counter() - started)
    found = {}
    for name, contender in contenders.items():
        median = float(np.median(seconds[name]))
        found[name] = {"seconds": median, "rate": contender.work / median, "dtype": contender.dtype,
                       "target": contender.target}
        if samples[name]:
            found[name]["ceiling"] = float(np.median(samples[name]))
            found[name]["share"] = float(np.median([contender.work / s / c for s, c in
                                                    zip(seconds[name], samples[name])]))
    return found


def hop_graph(n: int) -> sp.csr_array:
    """An unweighted random digraph (every arc 1) with HOP_DENSITY * n^2 arcs."""
    rng = np.random.default_rng(n)
    arcs = rng.choice(n * n, size=int(HOP_DENSITY * n * n), replace=False)
    rows, columns = arcs // n, arcs % n
    keep = rows != columns
    return sp.csr_array((np.ones(int(keep.sum())), (rows[keep], columns[keep])), shape=(n, n))


def default_paths(n: int, dtypes: list[str]) -> tuple[dict[str, Contender], list[str]]:
    """solve's default path per dtype at n, each run once and its answer checked against another
    dtype's; and a line per dtype left out."""
    contenders: dict[str, Contender] = {}
    left_out = []
    min_plus = semiring("min-plus").dtypes
    answers = {}
    for dtype in (d for d in ("float32", "int32", "float64") if d in dtypes):
        base = random_distances(n, dtype)
        answers[dtype] = np.asarray(solve(base, dtype=dtype), dtype=np.float64)
        contenders[f"{dtype} solve(a, dtype={dtype!r})"] = Contender(
            lambda base=base, dtype=dtype: solve(base, dtype=dtype), n**3, dtype, target=SHARE_TARGETS[dtype].get(n))
    if any(not np.array_equal(answer, next(iter(answers.values()))) for answer in answers.values()):
        raise SystemExit(f"n = {n}: solve's answers differ between {', '.join(answers)}")
    if "int16" in dtypes and "int16" not in min_plus:
        left_out.append("int16: not a min-plus dtype of this tree yet (tiling.semirings): its row is skipped")
    timed_int16 = "int16" in dtypes and "int16" in min_plus
    if timed_int16 or "uint8" in dtypes:
        graph = hop_graph(n)
        in_int32 = solve(graph, dtype="int32")
        hops = float64_distances(in_int32)  # int16's and or-and's answers are checked against it
        if timed_int16:
            in_int16 = solve(graph, dtype="int16")
            if not np.array_equal(float64_distances(in_int16), hops):
                raise SystemExit(f"n = {n}: int16 hop counts differ from int32's")
            chose = [getattr(found, "method_choice", None) for found in (in_int16, in_int32)]
            if any(choice is not None and choice.method != "dense" for choice in chose):
                left_out.append(f"n = {n}: hop counts went sparse ({', '.join(map(str, chose))}): not a kernel ratio")
            contenders["int16 hop counts solve(csr, dtype='int16')"] = Contender(
                lambda: solve(graph, dtype="int16"), n**3, "int16", target=SHARE_TARGETS["int16"].get(n))
            contenders["int32 hop counts solve(csr, dtype='int32')"] = Contender(
                lambda: solve(graph, dtype="int32"), n**3, "int32")
        if "uint8" in dtypes:
            if not np.array_equal(solve(graph, semiring="or-and"), np.isfinite(hops)):
                raise SystemExit(f"n = {n}: or-and's reachability differs from the finite hop counts")
            contenders["uint8 or-and solve(csr, semiring='or-and')"] = Contender(
                lambda: solve(graph, semiring="or-and"), n**3, "uint8", target=None)
    return contenders, left_out


def hand_written_classic(dtype: str, tile: int):
    """The yardstick: classic blocked FW written by hand over the same tile kernels."""
    kernels = _compile_kernels(KernelOptions(dtype=dtype))[0]
    layers, product = kernels.relax_layers, kernels.relax_product

    @njit(parallel=True)
    def classic(a, n, status):
        blocks = (n + tile - 1) // tile
        for kb in range(blocks):
            k0, k1 = kb * tile, min(kb * tile + tile, n)
            layers(a, k0, k1, k0, k1, k0, k1, status)
            for b in prange(2 * blocks):
                other = b % blocks
                if other != kb:
                    o0, o1 = other * tile, min(other * tile + tile, n)
                    if b < blocks:
                        product(a, k0, k1, k0, k1, o0, o1, status)
                    else:
                        product(a, k0, k1, o0, o1, k0, k1, status)
            for ib in prange(blocks):
                if ib != kb:
                    for jb in range(blocks):
                        if jb != kb:
                            product(a, k0, k1, ib * tile, min(ib * tile + tile, n), jb * tile,
                                    min(jb * tile + tile, n), status)

    return classic


def schedule_contenders(n: int, dtype: str, naive_rounds: int) -> dict[str, Contender]:
    """--schedules: the hand-written classic kernel, every schedule of SCHEDULES and the naive kernel,
    each run once (compiled or loaded from the cache)."""
    base = random_distances(n, dtype)
    buffer = np.empty((n, padded_stride(n)), dtype=dtype)
    square = np.empty((n, n), dtype=dtype)
    status = np.full(1, -1, dtype=np.int64)

    def fill_buffer() -> None:
        buffer[:, :n] = base

    def fill_square() -> None:
        square[...] = base

    yardstick = hand_written_classic(dtype, 128)
    contenders = {"hand-written classic r=128": Contender(lambda: yardstick(buffer, n, status), n**3, dtype,
                                                          fill_buffer)}
    for spec in SCHEDULES:
        compiled = generate(resolve_schedule(spec, n, dtype), dtype=dtype, runtime=chosen_runtime(spec, n, dtype))
        contenders[f"polyfw {spec}"] = Contender(lambda compiled=compiled: compiled(buffer), n**3, dtype, fill_buffer)
    contenders["naive Numba prange"] = Contender(lambda: floyd_warshall_naive(square), n**3, dtype, fill_square,
                                                 naive_rounds)
    for contender in contenders.values():
        contender.prepare()
        contender.run()
    return contenders


def dataflow_ratio(rounds: int) -> dict:
    """The barrier and dataflow runtimes of one schedule, interleaved on the same input."""
    n, dtype, specs = DATAFLOW
    runs = {spec: (generate(resolve_schedule(spec, n, dtype), dtype=dtype, runtime=chosen_runtime(spec, n, dtype)),
                   np.empty((n, padded_stride(n)), dtype=dtype)) for spec in specs}
    seconds = median_seconds(runs, random_distances(n, dtype), rounds)
    barrier, dataflow = (seconds[spec] for spec in specs)
    return {"n": n, "dtype": dtype, "seconds": seconds, "barrier_over_dataflow": barrier / dataflow}


def thread_counts() -> list[int]:
    """1, the powers of two below the machine's threads, and all of them."""
    every = numba.config.NUMBA_NUM_THREADS
    return sorted({1, every, *(2**p for p in range(every.bit_length()) if 2**p < every)})


def on_threads(threads: int, compiled) -> Callable[[np.ndarray], object]:
    """compiled(buffer) on `threads` threads (Numba's count, put back after)."""
    def run(buffer: np.ndarray) -> object:
        before = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            return compiled(buffer)
        finally:
            numba.set_num_threads(before)
    return run


def thread_scaling(n: int, dtypes: list[str], rounds: int) -> list[dict]:
    """The tuned classic tile, with packed operands where the tuned row packs them, on the barrier and
    the dataflow runtime, on 1 thread up to all, per dtype (rounds interleave every runtime and thread
    count; the first also checks that all agree): rate, and parallel efficiency = rate / (threads x
    the same runtime's 1-thread rate)."""
    found = []
    for dtype in (d for d in TUNED_DTYPES if d in dtypes):
        tuned = auto_configuration(n, dtype)[1]
        tile, packed = tuned.get("tile", 128), ",panels=true" if tuned.get("panels") else ""
        runs = {}
        for runtime in THREAD_RUNTIMES:
            spec = f"classic:tile={tile}{packed}" + ("" if runtime == "barrier" else f",runtime={runtime}")
            compiled = generate(resolve_schedule(spec, n, dtype), dtype=dtype, runtime=chosen_runtime(spec, n, dtype))
            for threads in thread_counts():
                runs[runtime, threads] = (on_threads(threads, compiled), np.empty((n, padded_stride(n)), dtype=dtype))
        seconds = median_seconds(runs, random_distances(n, dtype), rounds)
        for (runtime, threads), taken in seconds.items():
            alone = seconds[runtime, 1]
            found.append({"n": n, "dtype": dtype, "tile": f"{tile}{' packed' if packed else ''}", "runtime": runtime,
                          "threads": threads, "seconds": taken, "rate": n**3 / taken,
                          "efficiency": alone / taken / threads})
            print(f"  n = {n} {dtype} classic tile {found[-1]['tile']} {runtime:8s} {threads:3d} threads {taken:8.2f} s "
                  f"{n**3 / taken / 1e9:6.1f} G/s, parallel efficiency {alone / taken / threads:.0%}", flush=True)
    return found


def scaling_table(rows: list[dict], note: str) -> None:
    """Rate and parallel efficiency per runtime and thread count, judged against SCALING_TARGET."""
    print_and_record("cpu", "thread scaling of the tuned classic tile",
                     ["n", "dtype", "runtime", "tile", "threads", "G/s", "parallel efficiency %", "target"],
                     [[row["n"], row["dtype"], row["runtime"], row["tile"], row["threads"], round(row["rate"] / 1e9, 1),
                       percent(row["efficiency"]),
                       verdict(row["efficiency"], SCALING_TARGET) if row["threads"] > 1 else ""] for row in rows],
                     note=note)


def verdict(value: float, target: float | None) -> str:
    return "" if target is None else f">= {target:.0%}: {'met' if value >= target else 'missed'}"


def percent(share: float | None) -> int | None:
    """A share as whole percent, the form the tables print (None where no ceiling judged it)."""
    return None if share is None else round(100 * share)


def dtype_table(rows: list[dict], ceiling: PairedCeiling | None, note: str) -> None:
    """The table: per dtype and n, the ceiling of the run (start, end, paired; the stable one, the target's
    judge, apart) and solve's default path as a share of the stable ceiling and of the paired samples."""
    table = []
    for row in rows:
        dtype = row["dtype"]
        found = ceiling.found[dtype] if ceiling is not None else None
        detail = stable = share = None
        if found:
            detail = (f"{found['best'] / 1e9:.1f} ({found['best_shape'][0]}x{found['best_shape'][1]}) / "
                      f"{ceiling.after.get(dtype, float('nan')) / 1e9:.1f} / {row['ceiling'] / 1e9:.1f}")
            stable = ceiling.stable(dtype)
            share = row["rate"] / stable
        table.append([f"{dtype} ({RINGS[dtype].label})", row["name"].split(" ", 1)[1], row["n"], detail,
                      None if stable is None else round(stable / 1e9, 1), round(row["rate"] / 1e9, 1), percent(share),
                      percent(row.get("share")), "" if share is None else verdict(share, row["target"])])
    print_and_record("cpu", "every dtype beside its own ceiling",
                     ["dtype (semiring)", "call", "n", "ceiling G/s: start (best shape) / end / paired median",
                      "stable ceiling G/s", "polyfw G/s", "share of the stable ceiling %", "paired share %", "target"],
                     table, note=note)


def hop_ratios(rows: list[dict]) -> list[str]:
    """int16 hop counts over int32's, per n."""
    by_key = {(row["n"], row["name"].split()[0]): row for row in rows if "hop counts" in row["name"]}
    lines = []
    for n in sorted({n for n, _ in by_key}):
        ratio = by_key[n, "int32"]["seconds"] / by_key[n, "int16"]["seconds"]
        target = INT16_TARGET[1] if n == INT16_TARGET[0] else None
        lines.append(f"int16 hop counts at n = {n}: {ratio:.2f}x int32's"
                     + ("" if target is None else f" (target >= {target}x: {'met' if ratio >= target else 'missed'})"))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096])
    parser.add_argument("--dtypes", nargs="+", default=list(RINGS), choices=list(RINGS))
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds; each times every contender once")
    parser.add_argument("--parts", nargs="+", default=["dtypes", "road", "dataflow"],
                        choices=["dtypes", "road", "dataflow", "threads"])
    parser.add_argument("--threads-n", type=int, default=8192, help="--parts threads: the n it scales at")
    parser.add_argument("--schedules", action="store_true",
                        help="also time every schedule, a hand-written kernel, the naive one and scipy's FW "
                             f"({', '.join(TUNED_DTYPES)})")
    parser.add_argument("--naive-rounds", type=int, default=1, help="--schedules: rounds that time the naive kernel")
    parser.add_argument("--scipy-up-to", type=int, default=2048, help="--schedules: largest n to time scipy's FW at")
    parser.add_argument("--tune", action="store_true", help="write the fastest configurations to the tuning table")
    parser.add_argument("--tuning", default=None, metavar="FILE",
                        help="--tune writes this table (default: the one this source tree ships)")
    parser.add_argument("--json", default=None, help="also save every measurement here")
    parser.add_argument("--no-independent-ceiling", action="store_true",
                        help="skip polyfw/machine/ceiling.py (needs g++): no shares")
    args = parser.parse_args()
    args.schedules = args.schedules or args.tune
    started = time.perf_counter()
    cpu = cpu_description()
    print(f"CPU: {cpu['model']} (LLVM {cpu['llvm_cpu']}), {cpu['isa']}, {cpu['vector_bytes']}-byte vectors, "
          f"{cpu['vector_registers']} vector registers; {numba.get_num_threads()} threads "
          f"({numba.config.THREADING_LAYER}), OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}; "
          f"medians of {args.rounds} interleaved rounds", flush=True)
    for dtype in (d for d in args.dtypes if d in KERNEL_DTYPES and d in semiring(RINGS[d].semiring).dtypes):
        options = KernelOptions(dtype=dtype, semiring=RINGS[dtype].semiring)
        chosen = choose_register_block(dtype, options.semiring)
        instructions, min_max, spills, reloads = spill_report(options)
        print(f"{dtype} {options.semiring} register block {chosen.label} ({chosen.source}); its k loop: "
              f"{instructions} instructions, {min_max} min/max, {spills} vector spills, {reloads} general-register "
              f"stack accesses")
    ceiling = None if args.no_independent_ceiling else PairedCeiling(args.dtypes)
    for dtype, found in (ceiling.found if ceiling else {}).items():
        rows, vectors = found["best_shape"]
        print(f"independent {dtype} ceiling ({found['semiring']}; {found['isa']}, {found['lanes']} lanes, "
              f"{found['registers']} registers): {found['best'] / 1e9:.1f} G/s at {rows} x {vectors} vectors, best of "
              f"{len(found['by_shape'])} shapes", flush=True)
    results: dict = {"cpu": cpu, "ceilings": {dtype: {"best": f["best"], "best_shape": f["best_shape"]}
                                              for dtype, f in (ceiling.found if ceiling else {}).items()}}
    rows: list[dict] = []
    notes: list[str] = []
    if "dtypes" in args.parts:
        for n in args.sizes:
            contenders, left_out = default_paths(n, args.dtypes)
            notes += left_out
            for name, found in time_rounds(contenders, args.rounds, ceiling).items():
                rows.append({"n": n, "name": name, **found})
                share = f", {found['share']:.0%} of its paired ceiling" if "share" in found else ""
                print(f"  n = {n} {name:48s} {found['seconds']:7.3f} s {found['rate'] / 1e9:6.1f} G/s{share}",
                      flush=True)
    schedule_rows: list[dict] = []
    scipy_seconds: dict[int, float] = {}
    for dtype in (d for d in TUNED_DTYPES if args.schedules and d in args.dtypes):
        for n in args.sizes:
            measured = time_rounds(schedule_contenders(n, dtype, args.naive_rounds), args.rounds, ceiling)
            if n <= args.scipy_up_to and n not in scipy_seconds:  # float64 whatever the dtype: timed once
                graph = random_distances(n, "float64")
                clock = time.perf_counter()
                scipy_floyd_warshall(graph)
                scipy_seconds[n] = time.perf_counter() - clock
            best = max((name for name in measured if name.startswith("polyfw")), key=lambda k: measured[k]["rate"])
            schedule_rows += [{"n": n, "dtype": dtype, "name": name, **found} for name, found in measured.items()]
            print_and_record("cpu", f"every schedule, n = {n}, {dtype}",
                             ["contender", "median s", "G/s", "share of the paired ceiling %"],
                             [[name, round(found["seconds"], 3), round(found["rate"] / 1e9, 2),
                               percent(found.get("share"))] for name, found in measured.items()],
                             note=f"medians of {args.rounds} interleaved rounds")
            ratios = [f"{measured[best]['rate'] / measured['naive Numba prange']['rate']:.1f}x naive",
                      f"{measured[best]['rate'] / measured['hand-written classic r=128']['rate']:.2f}x hand-written"]
            if n in scipy_seconds:
                ratios.append(f"{scipy_seconds[n] / measured[best]['seconds']:.0f}x scipy floyd_warshall "
                              f"({scipy_seconds[n]:.1f} s)")
            print(f"  => best {best}: " + ", ".join(ratios) + f"; solve(schedule='auto') chose "
                  f"{auto_configuration(n, dtype)}", flush=True)
    scaling = thread_scaling(args.threads_n, args.dtypes, args.rounds) if "threads" in args.parts else []
    road_found = dataflow = None
    if "road" in args.parts:
        road_found = road.compare(args.rounds)
        road.table(road_found, "cpu", f"medians of {args.rounds} interleaved rounds")
        print("\n".join(road.report(road_found)), flush=True)
    if "dataflow" in args.parts:
        dataflow = dataflow_ratio(args.rounds)
        print(f"dataflow against barrier, {' / '.join(dataflow['seconds'])} at n = {dataflow['n']} "
              f"{dataflow['dtype']}: " + " / ".join(f"{s:.3f} s" for s in dataflow["seconds"].values()), flush=True)
    if ceiling is not None:
        ceiling.measure_after()
        results["ceilings_after"] = ceiling.after
        results["ceilings_stable"] = {dtype: ceiling.stable(dtype) for dtype in ceiling.found}
    print(f"\nAll figures, one run ({cpu['model']}, {cpu['isa']}, {cpu['vector_bytes']}-byte vectors, "
          f"{numba.get_num_threads()} threads; medians of {args.rounds} interleaved rounds; the stable ceiling is the "
          f"best sample of the run (the start's sweep, the paired samples, the end's); paired shares are medians of rate / the dtype's ceiling "
          f"sampled just before):")
    note = f"{numba.get_num_threads()} threads; medians of {args.rounds} interleaved rounds"
    if rows:
        dtype_table(rows, ceiling, note)
    if scaling:
        scaling_table(scaling, note)
    print()
    for line in [*hop_ratios(rows), *notes]:
        print(line)
    if road_found:
        fastest = road_found["fastest"]
        speedups = road_found["speedups"]
        print(f"road network: fastest exact polyfw call {fastest} {road_found['seconds'][fastest]:.3f} s = "
              + ", ".join(f"{s:.2f}x {name}" for name, s in speedups.items())
              + f" (target >= {ROAD_TARGET}x scipy: {'met' if speedups[road.SCIPY] >= ROAD_TARGET else 'missed'})")
    if dataflow:
        print(f"classic r=128 n = {dataflow['n']} {dataflow['dtype']}: barrier / dataflow seconds = "
              f"{dataflow['barrier_over_dataflow']:.2f} (above 1: dataflow faster)")
    print(f"(the whole run: {time.perf_counter() - started:.0f} s)")
    if args.json:
        results.update(rows=rows, schedules=schedule_rows, threads=scaling, scipy_floyd_warshall=scipy_seconds, road=road_found,
                       dataflow=dataflow, notes=notes)
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    if args.tune:
        for dtype in (d for d in TUNED_DTYPES if d in args.dtypes):
            for n in sorted(args.sizes):
                best = max((r for r in schedule_rows if r["n"] == n and r["dtype"] == dtype
                            and r["name"].startswith("polyfw")), key=lambda r: r["rate"])
                family, params = parse_schedule(best["name"].split()[1])
                written = write_winner(n, dtype, "cpu", family, params, cpu_key(), cpu["model"],
                                       args.tuning or shipped_path())
        print(f"wrote {written} for {cpu_key()}")


if __name__ == "__main__":
    main()
