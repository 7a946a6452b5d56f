"""All-pairs shortest paths on any supported input: graph semantics around generated code.

The generated code runs the bare nest; here the matrix gets its graph
meaning (zero diagonal, INF for missing edges), a padded row stride,
predecessors in scipy's convention, and negative cycles become an error.
"""
from __future__ import annotations

import logging
import os
from functools import lru_cache
from typing import Any

import numpy as np

from codegen import generate
from codegen.distances import float64_distances
from codegen.targets import TARGETS
from schedules.families import FAMILIES, build
from schedules.parameters import FAMILY_PARAMETERS, parameter
from schedules.schedule import Schedule
from tiling.graphs import (INT32_INF, WeightSummary, as_dense, as_semiring_matrix,
                           missing_edges, null_as_inf, read_graph, resolve_dtype, summarize_weights, vertex_count)
from tiling.semirings import MIN_PLUS
from tiling.semirings import semiring as find_semiring

from .errors import NegativeCycleError
from .method import MethodChoice, choose_method
from .sparse import as_csr, johnson
from .tuning import applies, machine_tuning, tuned_rows, tuning_table

log = logging.getLogger("polyfw")

#: scipy's mark for "no predecessor"
NO_PREDECESSOR = -9999
#: tile when none is given or tuned: the CPU's L2-sized blocks; on the GPU a tile-layer's block
#: (and its two operands) must fit a thread block's shared memory
DEFAULT_TILES = {"cpu": 128, "cuda": 32, "cudasim": 32}
DEFAULT_KAPPA = 4


class InsufficientMemoryError(MemoryError):
    """The run would need more memory than the machine has available."""


def memory_needed(n: int, dtype: str, predecessors: bool = False) -> int:
    """Bytes `solve` holds at its peak: the float64 matrix the input is staged in (with a mask
    and the cast to dtype), or later the input, the padded working copy and the result side by
    side; predecessors add three int32 matrices."""
    itemsize = np.dtype(dtype).itemsize
    staging = n * n * (8 + 1 + itemsize)
    running = n * n * (2 * itemsize + 1) + n * padded_stride(n) * itemsize
    return max(staging, running) + (3 * n * padded_stride(n) * 4 if predecessors else 0)


def available_memory() -> int | None:
    """Bytes the machine can give without swapping (Linux MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo") as info:
            fields = dict(line.split(":", 1) for line in info)
        return int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return None


def check_memory(n: int, dtype: str, predecessors: bool = False) -> None:
    """Refuse, before allocating, a problem the machine cannot hold."""
    needed, available = memory_needed(n, dtype, predecessors), available_memory()
    if available is None or needed <= available:
        return
    gib = 2.0**30
    smaller = ("" if np.dtype(dtype).itemsize == 4 else "dtype float32 or int32 (4 bytes per entry), ")
    raise InsufficientMemoryError(
        f"{n:,} vertices in {dtype}{' with predecessors' if predecessors else ''} need about {needed / gib:.1f} GiB "
        f"({n * n * np.dtype(dtype).itemsize / gib:.1f} GiB per matrix) and this machine has {available / gib:.1f} GiB "
        f"available: use {smaller}{'no predecessors, ' if predecessors else ''}fewer vertices, or a machine with more memory")


#: settings a schedule's text may carry besides its family's parameters: how a target runs it (the
#: cpu target's runtime; the mpi target's grid, placement and lookahead), each read and checked by
#: that target's declared option (codegen.targets) and kept as its text
RUN_SETTINGS = {"runtime": "cpu", "grid": "mpi", "placement": "mpi", "lookahead": "mpi"}


def _run_setting(key: str, value: str, text: str) -> str:
    option = next(o for o in TARGETS[RUN_SETTINGS[key]].options if o.name == key)
    try:
        parsed = option.parse(value)
    except ValueError as error:
        raise ValueError(f"{key} in {text!r}: {error}") from None
    if option.choices and parsed not in option.choices:
        raise ValueError(f"{key} in {text!r} must be one of {', '.join(option.choices)}, got {value!r}")
    return value


def parse_schedule(text: str) -> tuple[str, dict[str, Any]]:
    """'generalized:kappa=2,tile=64' -> ('generalized', {'kappa': 2, 'tile': 64}): each value parsed
    by its declared type (schedules.parameters; 'recursive:paired=false' is False), plus the run
    settings (RUN_SETTINGS: 'runtime=dataflow', 'grid=2x2', 'lookahead=false'), checked and kept as text.
    A ';' separates like ',' (an exploration's key: 'classic:tile=64,stages=I-SD-DD;runtime=dataflow')."""
    family, _, settings = text.partition(":")
    family = family.strip()
    params: dict[str, Any] = {}
    for item in filter(None, settings.replace(";", ",").split(",")):
        key, equals, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not equals:
            raise ValueError(f"schedule setting {item!r} in {text!r} is not key=value")
        if key in RUN_SETTINGS:
            params[key] = _run_setting(key, value, text)
        elif family in FAMILY_PARAMETERS:
            params[key] = parameter(family, "base" if key == "tile" and family == "recursive" else key).parse(
                value, family)
        else:
            raise ValueError(f"unknown schedule family {family!r} in {text!r}; use one of {', '.join(FAMILIES)}")
    return family, params


def run_settings(schedule: str | Schedule, n: int, dtype: str, target: str) -> dict[str, Any]:
    """The settings of `target` (typed) that a schedule's text gives, or for 'auto' the tuning
    table's entry for this size; {} for a Schedule object."""
    if isinstance(schedule, Schedule):
        return {}
    params = auto_configuration(n, dtype, target)[1] if schedule == "auto" else parse_schedule(schedule)[1]
    mine = {key: str(value) for key, value in params.items() if RUN_SETTINGS.get(key) == target}
    return TARGETS[target].read_options(mine)


#: a target whose kernels are another's: until it is tuned itself, that one's winners stand in
TUNING_STAND_INS = {"mpi": "cpu"}


def auto_configuration(n: int, dtype: str, target: str = "cpu") -> tuple[str, dict[str, Any]]:
    """The tuning tables' configuration for this size, dtype and target: the first row, the
    user's before the shipped ones, that stands for n and is proved legal there
    (polyfw.tuning.applies), else classic with the default tile."""
    rows = tuned_rows(target, dtype)
    if not rows and target in TUNING_STAND_INS:
        return auto_configuration(n, dtype, TUNING_STAND_INS[target])
    for row in rows:
        if applies(row, n):
            return row[1], _hashable(row[2])
    return "classic", {"tile": DEFAULT_TILES.get(target, DEFAULT_TILES["cpu"])}


def _hashable(params: dict[str, Any]) -> dict[str, Any]:
    """A table entry's parameters with orders as tuples (a JSON table may hold them as lists)."""
    return {name: tuple(value) if isinstance(value, list) else value for name, value in params.items()}


#: the tuning table's dataflow entries apply from this many blocks a side: below it a layer has
#: too few tiles to overlap, and each new tile size (tile = n when n < tile) compiles a runtime
DATAFLOW_FROM_BLOCKS = 4


def chosen_runtime(schedule: str | Schedule, n: int, dtype: str, target: str = "cpu") -> str:
    """'dataflow' where the schedule's text asks for it, or for 'auto' where the tuning table measured
    it faster on this CPU (and n has DATAFLOW_FROM_BLOCKS tiles a side); else 'barrier'."""
    if target != "cpu" or isinstance(schedule, Schedule):
        return "barrier"
    runtime = run_settings(schedule, n, dtype, "cpu").get("runtime", "barrier")
    if schedule != "auto":
        return runtime
    params = auto_configuration(n, dtype, target)[1]
    tile = int(params.get("tile", params.get("base", DEFAULT_TILES["cpu"])))
    return runtime if n >= DATAFLOW_FROM_BLOCKS * tile else "barrier"


@lru_cache(maxsize=64)
def _build_once(family: str, n: int, tile: int | None, params: tuple) -> Schedule:
    """Families build their isl trees afresh (recursive at n = 2642: 1.4 s), and solve asks
    for the same few again and again; schedules are never changed in place."""
    return build(family, n, tile, **dict(params))


def build_configuration(family: str, params: dict[str, Any], n: int | None, target: str = "cpu") -> Schedule:
    """The schedule a configuration (a tuning-table entry, a parsed schedule text) names, for n
    vertices or (n=None) parametric in n: the tile clipped to n, kappa to the blocks a side."""
    params = {key: value for key, value in params.items() if key not in RUN_SETTINGS}  # how it runs, not which
    tile_size = int(params.pop("tile", params.pop("base", DEFAULT_TILES.get(target, DEFAULT_TILES["cpu"]))))
    if n is not None:
        tile_size = min(tile_size, n)
        if family == "generalized":
            params["kappa"] = min(int(params.get("kappa", DEFAULT_KAPPA)), -(-n // tile_size))
    elif family == "generalized":
        params.setdefault("kappa", DEFAULT_KAPPA)
    if family == "recursive":
        params["base"] = tile_size
    return _build_once(family, n, None if family == "recursive" else tile_size, tuple(sorted(params.items())))


def resolve_schedule(schedule: str | Schedule, n: int, dtype: str, target: str = "cpu",
                     tile: int | None = None, kappa: int | None = None) -> Schedule:
    """A concrete schedule for an n-vertex problem from a family name, 'auto', or a Schedule."""
    if isinstance(schedule, Schedule):
        if schedule.n != n:
            raise ValueError(f"schedule {schedule.name} was built for n={schedule.n}, the graph has {n} vertices")
        return schedule
    family, params = auto_configuration(n, dtype, target) if schedule == "auto" else parse_schedule(schedule)
    if family not in FAMILIES:
        raise ValueError(f"unknown schedule {schedule!r}; use 'auto', one of {', '.join(FAMILIES)} "
                         f"(optionally 'family:key=value,...'), or a Schedule")
    if tile is not None:
        params["tile"] = tile
    if kappa is not None:
        params["kappa"] = kappa
    chosen = build_configuration(family, params, n, target)
    if schedule == "auto":
        log.info("schedule='auto' chose %s (%s, %s)", chosen.name, target, dtype)
    return chosen


def padded_stride(n: int) -> int:
    """Row length for an n-column matrix: a multiple of 16 elements (64-byte rows for
    float32), plus 16 so power-of-two n does not map every row to the same cache sets."""
    return -(-n // 16) * 16 + 16


def _restore_unreachable(distances: np.ndarray, lightest_edge: float) -> np.ndarray:
    """With negative edges, INF_int32 + w < INF_int32 can leak into results; put INF back.

    as_dense bounds (n-1)*(max-min) below INF, so every real path is below
    INF + (n-1)*min and everything at or above it went through a missing edge.
    Returns where INF was put back.
    """
    n = distances.shape[0]
    leaked = distances >= int(INT32_INF) + (n - 1) * lightest_edge
    distances[leaked] = INT32_INF
    return leaked


def initial_predecessors(distances: np.ndarray) -> np.ndarray:
    """pred[i, j] = i for every edge i -> j (i != j), NO_PREDECESSOR elsewhere."""
    n = distances.shape[0]
    pred = np.where(missing_edges(distances), NO_PREDECESSOR, np.arange(n, dtype=np.int32)[:, None])
    pred = pred.astype(np.int32)
    np.fill_diagonal(pred, NO_PREDECESSOR)
    return pred


class Distances(np.ndarray):
    """solve's distance matrix when method was 'sparse' or 'auto': `method_choice` says which
    method ran and both predicted times (polyfw.method.MethodChoice)."""

    method_choice: MethodChoice | None = None


def _with_choice(result, choice: MethodChoice):
    distances, pred = result if isinstance(result, tuple) else (result, None)
    distances = distances.view(Distances)
    distances.method_choice = choice
    return distances if pred is None else (distances, pred)


def _solve_sparse(graph, dtype_name: str, predecessors: bool):
    """Johnson's distances in solve's conventions (dtype, INF in int32)."""
    found = johnson(graph, predecessors=predecessors)
    distances, pred = found if predecessors else (found, None)
    if dtype_name == "int32":
        unreachable = np.isinf(distances)
        distances = np.where(unreachable, INT32_INF, distances).astype(np.int32)
    else:
        distances = distances.astype(dtype_name)
    return distances if pred is None else (distances, pred)


def solve(graph, *, schedule: str | Schedule = "auto", tile: int | None = None, kappa: int | None = None,
          target: str = "cpu", dtype="auto", directed: bool = True, predecessors: bool = False,
          weight: str = "weight", semiring: str = "min-plus", method: str = "auto",
          null_value: float | None = None):
    """Shortest-path distances between all pairs of vertices of `graph` (or, with another
    semiring, widest paths, minimax paths or reachability).

    With no options this takes the fastest exact path: dtype='auto' computes
    in the narrowest exact element type (int32 for integer weights whose
    path lengths stay below 2**30 - 1, else float64) and returns what a scipy
    user expects, float64 distances with np.inf where unreachable;
    method='auto' picks dense Floyd-Warshall or sparse Johnson by the cost
    model at that type's rate. Both choices are logged on the 'polyfw' logger
    with their reasons. A dtype given by name is computed in and returned.
    null_value: which entries of a dense matrix mean "no arc" besides inf
    (0 as in scipy's csgraph); None reads zeros as arcs and warns once when
    there are zeros off the diagonal.

    Accepts every input of tiling.graphs.as_dense. schedule: 'auto' (the
    tuning table's fastest configuration, logged on the 'polyfw' logger), a
    family name ('classic', 'generalized:kappa=2', ...), or a Schedule built
    for this n. Unreachable pairs are np.inf in float dtypes and
    tiling.graphs.INT32_INF in int32 (when dtype='int32' is asked for). Raises NegativeCycleError when a
    negative cycle exists. With predecessors=True returns (distances,
    predecessors) in scipy's convention (target 'cpu', min-plus only). Every
    schedule is proved legal before it runs: an illegal one raises
    schedules.RefusedScheduleError (a dependence and a witness pair).
    target: any of codegen.targets.TARGETS ('cpu', 'cuda' for a GPU, 'cudasim' its
    simulator, 'python'); the GPU targets compute in float32 unless dtype='int32'.
    method: 'dense' (Floyd-Warshall by the schedule), 'sparse' (Johnson's algorithm on the CSR
    graph: Bellman-Ford potentials, Dijkstra from every source; min-plus on the CPU) or 'auto'
    (the faster by polyfw.method's cost model, logged with both predictions; dense wherever a
    schedule, tile or kappa is given, or for another semiring or target).
    semiring (tiling.semirings), what each reads and what its result holds:
      'min-plus' (shortest paths): as above.
      'max-min' (widest paths): integer or float weights; unreachable is -inf
        (-(2**30 - 1) in int32), a vertex to itself +inf (2**30 - 1).
      'min-max' (minimax paths): integer or float weights; unreachable is +inf
        (2**30 - 1 in int32), a vertex to itself -inf (-(2**30 - 1)).
      'or-and' (reachability): a bool adjacency matrix (dense or sparse), 0/1 integers or
        weights (every nonzero finite entry an edge); returns a bool matrix, True where
        reachable, the diagonal True.
    An input of another dtype, or a dtype the semiring does not compute in, is refused in
    one line naming the accepted ones (GraphInputError, a ValueError).
    """
    ring = find_semiring(semiring)
    ring.check_relaxed()
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; available: {', '.join(TARGETS)}")
    if predecessors and ring is not MIN_PLUS:
        raise ValueError(f"predecessors are kept for semiring min-plus only, not {ring.name}")
    if method not in ("dense", "sparse", "auto"):
        raise ValueError(f"method must be 'dense', 'sparse' or 'auto', got {method!r}")
    if isinstance(graph, (str, os.PathLike)):
        graph = read_graph(graph)  # once: its vertex count first, then its matrix
    if isinstance(graph, (list, tuple)):
        graph = np.asarray(graph)
    if ring is MIN_PLUS and type(graph) is np.ndarray:
        graph = null_as_inf(graph, null_value)  # once; below, inf alone means no arc
    as_scipy = ring is MIN_PLUS and (dtype is None or dtype == "auto")
    summary = summarize_weights(graph, weight) if ring is MIN_PLUS and (as_scipy or method == "auto") else None
    dtype_name = auto_dtype(ring, target, summary) if dtype is None or dtype == "auto" else (
        np.dtype(dtype).name if ring is not MIN_PLUS else resolve_dtype(dtype).name)
    n = vertex_count(graph)
    if n == 0:
        empty = np.zeros((0, 0), dtype="float64" if as_scipy else "bool" if ring.name == "or-and" else dtype_name)
        return (empty, np.zeros((0, 0), dtype=np.int32)) if predecessors else empty
    check_memory(n, "float64" if as_scipy else dtype_name, predecessors)  # what is returned, at least
    if method == "auto" and (ring is not MIN_PLUS or target != "cpu" or schedule != "auto" or tile is not None
                             or kappa is not None):
        method = "dense"  # another semiring or target, or a schedule asked for: Floyd-Warshall by it
    if method == "dense":
        return _solve_dense(graph, n, ring, schedule, tile, kappa, target, dtype_name, directed, predecessors,
                            weight, as_scipy)
    if ring is not MIN_PLUS or target != "cpu":
        raise ValueError(f"method={method!r} solves min-plus on the CPU; use method='dense' for semiring "
                         f"{ring.name} on target {target!r}")
    arcs = summary.arcs if summary is not None else as_csr(graph, directed=directed, weight=weight).m
    choice = choose_method(n, arcs, dtype_name, machine_tuning(tuning_table(), "cpu").get("rates"))
    log.info("method=%r chose %s", method, choice if method == "auto" else f"sparse ({choice})")
    if method == "sparse" or choice.method == "sparse":
        sparse_graph = as_csr(graph, directed=directed, weight=weight)
        return _with_choice(_solve_sparse(sparse_graph, "float64" if as_scipy else dtype_name, predecessors), choice)
    return _with_choice(_solve_dense(graph, n, ring, schedule, tile, kappa, target, dtype_name, directed,
                                     predecessors, weight, as_scipy), choice)


def auto_dtype(ring, target: str, summary: WeightSummary | None) -> str:
    """dtype='auto': for min-plus the narrowest exact kernel type the target computes in (logged
    with the reason), for other semirings their first type."""
    if ring is not MIN_PLUS or summary is None:
        return ring.dtypes[0]
    exact, why = summary.exact_dtype()
    offered = TARGETS[target].dtypes
    chosen = exact.name if exact.name in offered else ("float64" if "float64" in offered else "float32")
    note = "" if chosen == exact.name else f" (target {target} has no {exact.name}: distances may round)"
    log.info("dtype='auto' chose %s: %s%s", chosen, why, note)
    return chosen


def _solve_dense(graph, n: int, ring, schedule, tile, kappa, target: str, dtype_name: str, directed: bool,
                 predecessors: bool, weight: str, as_scipy: bool):
    """Floyd-Warshall by the schedule in `dtype_name`; as_scipy: float64 with inf returned."""
    # the kernels take padded rows: the input is written straight into them
    matrix = np.empty((n, padded_stride(n)), dtype=dtype_name)
    distances = matrix[:, :n]
    if ring is MIN_PLUS:
        as_dense(graph, dtype=dtype_name, directed=directed, weight=weight, out=distances, null_value=np.inf)
    else:
        distances[...] = as_semiring_matrix(graph, ring, dtype_name, directed=directed, weight=weight)
    chosen = resolve_schedule(schedule, n, dtype_name, target, tile, kappa)
    runtime = chosen_runtime(schedule, n, dtype_name, target)
    compiled = generate(chosen, target=target, dtype=dtype_name, semiring=ring.name,
                        **({"predecessors": True} if predecessors else {}),
                        **({"runtime": runtime} if runtime != "barrier" else {}))
    # int32 sums through INF can fall below INF when edges are negative (_restore_unreachable);
    # INF is above every weight, so the matrix's minimum is the lightest edge
    lightest_edge = min(float(distances.min()), 0.0) if ring is MIN_PLUS and dtype_name == "int32" else 0.0
    pred = None
    if predecessors:
        pred = np.full((n, padded_stride(n)), NO_PREDECESSOR, dtype=np.int32)
        pred[:, :n] = initial_predecessors(distances)
    negative_at = compiled(matrix, pred)
    if negative_at >= 0:  # only min-plus has pivots that improve on themselves
        raise NegativeCycleError(negative_at)
    distances = matrix[:, :n]
    if distances.dtype == np.int32 and lightest_edge < 0:
        leaked = _restore_unreachable(distances, lightest_edge)
        if pred is not None:
            pred[:, :n][leaked] = NO_PREDECESSOR
    if ring.name == "or-and":
        return distances.astype(bool)
    # one conversion at the end: int32's INF becomes inf (float64 for a scipy user), else one copy
    distances = float64_distances(distances) if as_scipy and distances.dtype != np.float64 \
        else np.ascontiguousarray(distances)
    if pred is None:
        return distances
    return distances, np.ascontiguousarray(pred[:, :n])
