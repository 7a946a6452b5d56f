"""`polyfw calibrate`: measure on this machine the parts the exploration model is made of, in about a minute a dtype.

Per element type: each tile role's time per relaxation and a tile kernel's
cost per call at every searched tile size, fitted to the profiles
(codegen.profile) of real runs of two families with the matrix in cache:
classic, whose every tile-layer is a call and a task, and generalized with
κ = 4, whose tasks run κ layers of one block as one product (one call, its
block loaded once). The same runs with the matrix out of the last-level cache
give what an element loaded from memory costs; the runs' time outside their
tile-layers gives a stage's start and barrier, the driver's time per call and
a task's, for each driver form; the dataflow runtimes' own time per call comes
from timing them beside the model. Classic with packed operands, in cache,
gives a product's rate on micro-panels and what copying an element into them
costs. The register-block
search's rates (codegen.register_blocks) give each block's product rate.
The result (schedules.predict.Calibration) is stored per machine in the
results store (polyfw.machine.calibrations) and read by explore, `polyfw cost
--explain` and solve's choices.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numba
import numpy as np

from codegen import generate
from codegen.cpu import driver_form
from codegen.kernels import padded_stride
from codegen.profile import RunProfile, relaxations_by_role, run_profile
from codegen.register_blocks import cached_choice, label_shape
from codegen.targets import find_target
from schedules import StageView, build
from schedules.cost import tile_view
from schedules.predict import Calibration, on_panels, packed_elements, packed_stages, predict, task_loads
from schedules.stages import ROLES

from ..graphs import as_dense, exact_weights, random_graph
from . import calibrations

#: the tiles calibrated (the cpu target's searched ones and one above)
TILES = (32, 64, 128, 256)
#: the matrix size whose runs stay in cache, and the largest one taken out of it
IN_CACHE_N, OUT_OF_CACHE_N = 1024, 4096
#: the speed probe's problem size and tile (a few milliseconds)
PROBE = (512, 128)
DEFAULT_DTYPES = ("float32", "int32")
#: the family calibrated beside classic and its block layers a task: fewer calls and tasks than
#: tile-layers, so that what a relaxation, a call and a task each cost can be told apart
SECOND_FAMILY, SECOND_KAPPA = "generalized", 4
#: the cpu target's runtimes besides the barrier one (the model simulates them as dataflow)
DATAFLOW_RUNTIMES = tuple(r for r in find_target("cpu").option("runtime").choices if r != "barrier")


def calibration_parts(dtype: str, in_cache_n: int = IN_CACHE_N, out_of_cache_n: int = OUT_OF_CACHE_N) -> int:
    """How many lines calibrate says: one a part measured (a progress bar's length)."""
    return len(spilling_sizes(in_cache_n, out_of_cache_n, np.dtype(dtype).itemsize)) + 3


def spilling_sizes(in_cache_n: int, largest: int, itemsize: int) -> list[int]:
    """The sizes timed for what spilling out of the caches costs: doubling from the in-cache size up to
    `largest`, the last one past twice the last-level cache where the largest allows."""
    sizes, n = [], 2 * in_cache_n
    while n <= largest:
        sizes.append(n)
        if n * n * itemsize > 2 * last_level_cache_bytes():
            break
        n *= 2
    return sizes


def cache_sizes() -> dict[int, int]:
    """Cache level -> bytes of cpu0's data or unified cache at that level, as Linux reports them (32 MiB
    of last-level cache where it reports none)."""
    sizes = {}
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            level, kind, text = ((index / name).read_text().strip() for name in ("level", "type", "size"))
        except OSError:
            continue
        if kind != "Instruction":
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            sizes[int(level)] = int(text.rstrip("KMG")) * scale
    return sizes or {3: 32 << 20}


def last_level_cache_bytes() -> int:
    sizes = cache_sizes()
    return sizes[max(sizes)]


def private_cache_bytes() -> int:
    """A thread's own cache: the level-2 one where there is one (0 where unknown)."""
    return cache_sizes().get(2, 0)


@dataclass(frozen=True)
class _Run:
    """One profiled run: its view and where its time went."""

    view: StageView
    profile: RunProfile
    form: str


@lru_cache(maxsize=4)
def _matrix(n: int, dtype: str) -> np.ndarray:
    """The input an exploration measures on (polyfw.explore.Problem's graph: 4n arcs, seed 0)."""
    return as_dense(random_graph(n, m=min(4 * n, n * (n - 1)), weights=exact_weights(n, dtype), seed=0), dtype=dtype)


def _families(n: int, tile: int) -> tuple[tuple[str, dict], ...]:
    """The schedules calibrated at (n, tile): classic, and the second family with as many block layers
    a task as there are blocks, up to SECOND_KAPPA."""
    return ("classic", {}), (SECOND_FAMILY, {"kappa": min(SECOND_KAPPA, -(-n // tile))})


def _run_once(n: int, tile: int, dtype: str, runtime: str = "barrier", driver: str = "auto",
              family: tuple[str, dict] = ("classic", {})) -> tuple[float, dict]:
    """One run of a blocked FW schedule (classic by default) on rows padded as solve and explore pad
    them: its seconds and its last_run record (the generated code is compiled once and cached)."""
    name, params = family
    compiled = generate(build(name, n, tile, **params), target="cpu", dtype=dtype, runtime=runtime, driver=driver)
    buffer = np.empty((n, padded_stride(n)), dtype=dtype)
    buffer[:, :n] = _matrix(n, dtype)
    started = time.perf_counter()
    compiled(buffer)
    return time.perf_counter() - started, dict(compiled.last_run)


def speed_probe(dtype: str, repeats: int = 3) -> float:
    """Seconds of a short in-cache run (classic, PROBE = (n, tile)), the fastest of `repeats`: taken when
    calibrating and again beside a measurement, their ratio is how much slower the host is now."""
    return min(_run_once(*PROBE, dtype)[0] for _ in range(repeats))


@dataclass(frozen=True)
class _Host:
    """Runs for the calibration, each one's time scaled to the host's speed when the calibration began
    (a speed probe beside every run): a shared host's speed moves up to 2x within the hour, and one
    part measured in a slow minute would skew every prediction made of it."""

    dtype: str
    reference: float

    def run(self, n: int, tile: int, runtime: str = "barrier", driver: str = "auto",
            family: tuple[str, dict] = ("classic", {})) -> tuple[float, dict, float]:
        """(seconds, last_run record, scale): the run's seconds at the reference speed, and the factor used."""
        scale = self.reference / speed_probe(self.dtype, 2)
        seconds, last_run = _run_once(n, tile, self.dtype, runtime, driver, family)
        return seconds * scale, last_run, scale

    def profiled(self, n: int, tiles: Sequence[int], rounds: int, driver: str = "auto",
                 families: Callable[[int, int], Sequence[tuple[str, dict]]] = _families) -> list[_Run]:
        """Each tile's and family's (`families(n, tile)`: classic and the second family by default) median
        run at the reference speed over `rounds` rounds that take every one in turn. The median, as a
        measurement reports it: the fastest of a few runs is one where no thread was held up, which on a
        shared host a barrier run rarely is."""
        schedules = [(tile, family) for tile in tiles for family in families(n, tile)]
        found: dict[int, list[tuple[float, dict, float]]] = {at: [] for at in range(len(schedules))}
        for _ in range(rounds):
            for at, (tile, family) in enumerate(schedules):
                found[at].append(self.run(n, tile, driver=driver, family=family))
        middle = {at: sorted(runs, key=lambda run: run[0])[(len(runs) - 1) // 2] for at, runs in found.items()}
        return [_Run(tile_view(build(family[0], n, tile, **family[1])),
                     _scaled(run_profile(middle[at][1]), middle[at][2]), driver_form(n, tile, driver))
                for at, (tile, family) in enumerate(schedules)]


def _scaled(profile: RunProfile, scale: float) -> RunProfile:
    return RunProfile(profile.seconds * scale, profile.threads, {k: v * scale for k, v in profile.parts.items()})


def _role_seconds(run: _Run) -> np.ndarray:
    """Thread-seconds of each role's tile-layers in the run (ROLES order)."""
    return np.array([run.profile.parts[role] * run.profile.threads for role in ROLES])


def _calls_by_role(view: StageView) -> np.ndarray:
    """Tile kernel calls of each role (ROLES order): a layer product's layers are one."""
    return np.bincount(view.role[view.call_start].astype(np.int64), minlength=len(ROLES))[:len(ROLES)]


def _rates_and_calls(runs: Sequence[_Run], floor: float = 0.0) -> tuple[dict[int, dict[str, float]], dict[int, float]]:
    """Per tile, each role's thread-seconds per relaxation; and a call's cost, entering the kernel plus
    its block loaded and stored (a + b * tile^2, one pair for every tile); fitted together (least squares,
    each role of each run relative to its own time, the calls' costs non-negative and every rate at least
    `floor`: _product_floor) to the runs' role times. In classic every tile-layer is a call; the second
    family's layer products are one call for several, which is what tells a call's cost from a
    relaxation's. Without the floor, the calls could take a role's whole time on noisy runs (AMD Zen 5:
    int32 fitted a rate of 0 and fell back to classic's rates with its calls inside, which price
    generalized's 32-block products as dear as classic's; int16's SD_col fitted 415 G relaxations/s a
    thread, its best block 224)."""
    from scipy.optimize import nnls  # here: scipy.optimize costs every CLI call its import

    tiles = sorted({run.view.tile for run in runs})
    rows = []
    for run in runs:
        at = len(ROLES) * tiles.index(run.view.tile)
        counts = relaxations_by_role(run.view.n, run.view.tile)
        for r, (seconds, calls) in enumerate(zip(_role_seconds(run), _calls_by_role(run.view))):
            if seconds > 0:
                row = np.zeros(len(ROLES) * len(tiles) + 2)
                row[at + r], row[-2], row[-1] = counts[ROLES[r]], calls, calls * run.view.tile**2
                rows.append(row / seconds)
    system = np.array(rows)
    lowest = np.r_[np.full(len(ROLES) * len(tiles), floor), 0.0, 0.0]
    fitted = lowest + nnls(system, 1.0 - system @ lowest)[0]  # the unknowns above their bounds, non-negative
    if not fitted[:-2].all():  # a role's rate absorbed by the calls: runs too small to tell them apart, no floor
        return _rates_with_calls_inside(runs), {}
    relaxation = {tile: dict(zip(ROLES, map(float, fitted[len(ROLES) * t:len(ROLES) * (t + 1)])))
                  for t, tile in enumerate(tiles)}
    return relaxation, {tile: float(fitted[-2] + fitted[-1] * tile**2) for tile in tiles}


def _rates_with_calls_inside(runs: Sequence[_Run]) -> dict[int, dict[str, float]]:
    """Per tile, each role's thread-seconds per relaxation in its classic run, calls included (every
    tile-layer a call): what a calibration holds where the two families' runs cannot be told apart."""
    return {run.view.tile: dict(zip(ROLES, map(float, _role_seconds(run) / np.array(
        [relaxations_by_role(run.view.n, run.view.tile)[role] for role in ROLES]))))
        for run in runs if run.view.call_start.all()}


def _element_load(runs: Sequence[_Run], calibration: Calibration) -> float:
    """Thread-seconds per element loaded beyond what the in-cache rates and calls account for, over runs
    of one size and tile (a classic task loads its three blocks whatever the cache holds; a longer task
    keeps its block while the thread's own cache holds what it touched)."""
    extra = loads = 0.0
    for run in runs:
        counts = np.array([relaxations_by_role(run.view.n, run.view.tile)[role] for role in ROLES])
        modelled = (counts * calibration.per_relaxation(run.view.tile)).sum() \
            + run.view.call_start.sum() * calibration.call_seconds(run.view.tile)
        extra += _role_seconds(run).sum() - modelled
        loads += task_loads(run.view, capacity=calibration.capacity()).sum()
    return max(extra / loads, 0.0)


def _overheads(runs: Sequence[_Run], calibration: Calibration) -> Calibration:
    """The calibration with, per driver form, a stage's seconds and the driver's per call, the
    thread-seconds per task, and the share of a stage's length its stragglers add: fitted (non-negative
    least squares, each run weighted by its length) to each run's time beyond its tile-layers and the
    model's uneven split of them (the second family's tasks and calls are fewer than its tile-layers,
    and the stages' lengths grow with the work, which tells the four apart)."""
    from scipy.optimize import nnls  # here: scipy.optimize costs every CLI call its import

    forms = sorted({run.form for run in runs})
    rows, beyond = [], []
    for run in runs:
        row = np.zeros(2 * len(forms) + 2)
        at = 2 * forms.index(run.form)
        row[at], row[at + 1] = run.view.n_stages, run.view.call_start.sum()
        row[-2] = run.view.n_tasks / run.profile.threads
        modelled = predict(run.view, calibration, driver=run.form)
        row[-1] = sum(modelled.parts[part] for part in (*ROLES, "memory", "waiting in stages"))  # the stages' spans
        rows.append(row / run.profile.seconds)
        beyond.append((run.profile.seconds - modelled.seconds) / run.profile.seconds)
    fitted = nnls(np.array(rows), np.array(beyond))[0]
    return replace(calibration, stage={form: float(fitted[2 * f]) for f, form in enumerate(forms)},
                   driver={form: float(fitted[2 * f + 1]) for f, form in enumerate(forms)}, task=float(fitted[-2]),
                   straggle=float(fitted[-1]))


def _dataflow_seconds(host: _Host, calibration: Calibration, rounds: int, n: int, tile: int) -> dict[str, float]:
    """Each dataflow runtime's own thread-seconds per call: its measured time beyond the model's, over
    both families at the smallest tile (many calls, so their own time shows)."""
    found = {}
    for runtime in DATAFLOW_RUNTIMES:
        extra = calls = 0.0
        for family in _families(n, tile):
            view = tile_view(build(family[0], n, tile, **family[1]))
            measured = float(np.median([host.run(n, tile, runtime, family=family)[0] for _ in range(rounds)]))
            modelled = predict(view, replace(calibration, dataflow={runtime: 0.0}), runtime).seconds
            extra += (measured - modelled) * calibration.threads
            calls += view.call_start.sum()
        found[runtime] = max(extra / calls, 0.0)
    return found


def _packed(host: _Host, calibration: Calibration, rounds: int, n: int,
            tiles: Sequence[int]) -> Calibration:
    """The calibration with a product's thread-seconds per relaxation on micro-panels at each tile (its
    profiled DD time less the calls' cost, never below the fastest register block's: _product_floor), and
    what a packed stage's copying costs a stage and an element (fitted to the profiled packing of each tile's
    run: the smaller the tile, the more stages a copy), from classic with panels in cache."""
    from scipy.optimize import nnls  # here: scipy.optimize costs every CLI call its import

    runs = host.profiled(n, tiles, rounds, families=lambda n, tile: [("classic", {"panels": True})])
    floor, packed = _product_floor(calibration.dtype), {}
    for run in runs:
        dd = run.view.role == ROLES.index("DD")
        calls = int((run.view.call_start & dd).sum())
        seconds = _role_seconds(run)[ROLES.index("DD")] - calls * calibration.call_seconds(run.view.tile)
        packed[run.view.tile] = max(seconds / relaxations_by_role(n, run.view.tile)["DD"], floor, 0.0)
    # each run's packing (wall seconds) = its packed stages * a stage's cost + its elements * an element's / threads
    timed = [(run, on_panels(run.view, "barrier")) for run in runs if run.profile.parts["packing"] > 0]
    if not timed:  # too small a matrix to pack anything
        return replace(calibration, packed=packed)
    rows = [[packed_stages(run.view, on), packed_elements(run.view, on) / run.profile.threads] for run, on in timed]
    (pack_stage, pack), _ = nnls(np.array(rows) / np.array([[run.profile.parts["packing"]] for run, _ in timed]),
                                 np.ones(len(timed)))
    return replace(calibration, packed=packed, pack=float(pack), pack_stage=float(pack_stage))


def _product_floor(dtype: str) -> float:
    """Thread-seconds per relaxation of the fastest register block measured on this CPU (0 where none was):
    no tile-layer runs faster, whatever a fit leaves once the calls' cost is taken out (at tile 32, where the
    calls fitted on in-place runs cost more than on micro-panels, that left 98-471 G relaxations/s a thread)."""
    choice = cached_choice(dtype)
    return 1.0 / max(choice.rates.values()) if choice is not None and choice.rates else 0.0


def _register_blocks(dtype: str) -> dict[str, float]:
    """Each measured register block's product rate relative to the chosen one ('RxC', C in elements)."""
    choice = cached_choice(dtype)
    if choice is None or not choice.rates:
        return {}
    from codegen.intrinsics import vector_width

    lanes = vector_width(np.dtype(dtype).itemsize)
    chosen = choice.rates.get(choice.label) or max(choice.rates.values())
    relative = {}
    for label, rate in choice.rates.items():
        rows, vectors = label_shape(label)
        key = f"{rows}x{vectors * lanes}"
        relative[key] = max(relative.get(key, 0.0), rate / chosen)
    return relative


def memory_bandwidth(megabytes: int = 256, repeats: int = 3) -> float:
    """Bytes per second a large copy moves (read and written), best of `repeats`."""
    source = np.ones(megabytes << 18, dtype=np.float32)
    target = np.empty_like(source)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        np.copyto(target, source)
        best = min(best, time.perf_counter() - started)
    return 2 * source.nbytes / best


def calibrate(dtype: str, repeats: int = 5, bandwidth: float = 0.0, say: Callable[[str], None] = lambda line: None,
              tiles: Sequence[int] = TILES, in_cache_n: int = IN_CACHE_N,
              out_of_cache_n: int = OUT_OF_CACHE_N) -> Calibration:
    """Measure this machine's Calibration for `dtype` on numba's threads (about 20 s; smaller `tiles`
    and sizes for a quick look); `say` is given each part's figures as a line (calibration_parts of them)."""
    threads = numba.get_num_threads()
    host = _Host(dtype, speed_probe(dtype, 5))
    in_cache = host.profiled(in_cache_n, tiles, repeats)
    relaxation, call = _rates_and_calls(in_cache, _product_floor(dtype))
    say(f"{dtype}: in cache (n = {in_cache_n}), G relaxations/s per thread and us per call by tile: " + ", ".join(
        f"{tile}: DD {1e-9 / r['DD']:.1f} I {1e-9 / r['I']:.1f} call {call.get(tile, 0.0) * 1e6:.2f}"
        for tile, r in relaxation.items()))
    itemsize = np.dtype(dtype).itemsize
    calibration = Calibration(dtype, threads, relaxation, {}, in_cache_n * in_cache_n * itemsize,
                              private_cache_bytes=private_cache_bytes(), register_blocks=_register_blocks(dtype),
                              bandwidth=bandwidth, probe=host.reference, call=call)
    element_load, out_of_cache = {}, []
    for n in spilling_sizes(in_cache_n, out_of_cache_n, itemsize):
        # half the rounds at twice the in-cache size, one from four times on (those runs take seconds)
        runs = host.profiled(n, tiles, max(1, repeats * (2 * in_cache_n) ** 3 // (2 * n**3)))
        element_load[n * n * itemsize] = {tile: _element_load([run for run in runs if run.view.tile == tile],
                                                              calibration) for tile in tiles}
        out_of_cache += runs
        say(f"{dtype}: n = {n}, ns per element loaded by tile: "
            + ", ".join(f"{tile}: {s * 1e9:.2f}" for tile, s in element_load[n * n * itemsize].items()))
    # the other driver form on many tile-layers, for the overheads (its tile-layers cost what they do in the others)
    other = "compiled" if driver_form(in_cache_n, min(tiles)) == "replayed" else "replayed"
    runs = [*in_cache, *out_of_cache, *host.profiled(in_cache_n, [min(tiles)], repeats, other,
                                                       lambda n, tile: _families(n, tile)[:1])]
    calibration = _overheads(runs, replace(calibration, element_load=element_load))
    calibration = replace(calibration, dataflow=_dataflow_seconds(host, calibration, repeats, in_cache_n,
                                                                  min(tiles)))
    calibration = _packed(host, calibration, repeats, in_cache_n, tiles)
    say(f"{dtype}: on micro-panels, G relaxations/s per thread by tile: " + ", ".join(
        f"{tile}: {1e-9 / s:.1f}" for tile, s in calibration.packed.items() if s > 0)
        + f"; packing {calibration.pack_stage * 1e6:.1f} us a stage and {calibration.pack * 1e9:.2f} ns an element")
    say(f"{dtype}: per stage " + ", ".join(f"{form} {s * 1e6:.1f} us" for form, s in calibration.stage.items())
        + "; per call " + ", ".join(f"{form} driver {s * 1e9:.0f} ns" for form, s in calibration.driver.items())
        + f"; per task {calibration.task * 1e9:.0f} ns; stragglers {calibration.straggle:.1%} of a stage"
        + "; dataflow runtimes per call "
        + ", ".join(f"{r} {s * 1e9:.0f} ns" for r, s in calibration.dataflow.items()))
    return calibration


def ensure_calibrated(dtype: str, store: str | Path, n: int, tiles: Sequence[int],
                      say: Callable[[str], None] = lambda line: None) -> Calibration:
    """This machine's calibration for `dtype` from `store` or the user's store; where neither has one,
    one measured now at the problem's scale (its tiles, sizes up to n's) and kept in `store`."""
    threads = numba.get_num_threads()
    found = calibrations.stored(dtype, threads, store)
    if found is not None:
        return found
    in_cache_n = min(IN_CACHE_N, n)
    say(f"no calibration of this machine for {dtype} on {threads} threads: calibrating at the scale of n = {n} "
        f"(polyfw calibrate measures the full one)")
    found = calibrate(dtype, tiles=sorted({min(tile, in_cache_n) for tile in tiles}), in_cache_n=in_cache_n,
                      out_of_cache_n=min(OUT_OF_CACHE_N, max(n, in_cache_n)), say=say)
    calibrations.save(found, store)
    return found
