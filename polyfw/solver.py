"""All-pairs shortest paths on any supported input: graph semantics around generated code.

The generated code runs the bare nest; here the matrix gets its graph
meaning (zero diagonal, INF for missing edges), a padded row stride,
predecessors in scipy's convention, and negative cycles become an error.
What a call runs (dtype, method, ordering, schedule, conversion) is its plan,
made in polyfw.plan; here the input is read, the plan run and its result converted.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

import numpy as np

from codegen.dataflow import PROGRESS
from codegen.distances import compacted, float64_distances
from codegen.kernels import padded_stride
from codegen.packed_kernels import WORD_BITS, pack_rows, unpack_rows
from codegen.targets import Target, find_target
from schedules.schedule import Schedule
from tiling.pages import fresh_empty, mapped_empty
from tiling.semirings import INTEGER_INF, MIN_PLUS, top
from tiling.semirings import semiring as find_semiring

from . import errors
from .graphs.device_arrays import check_device_request, device_view, is_device_array, to_device_result
from .graphs import (NO_PREDECESSOR, Edges, as_dense, as_semiring_matrix, check_integer_weights, missing_edges,
                     null_as_inf, read_graph, summarize_weights, vertex_count)
from .graphs.blocks import tile_layers_run
from .graphs.components import condensation, expanded
from .graphs.dense_facts import dense_facts
from .graphs.inputs import check_float_sums, edges_or_dense
from .graphs.ordering import dissection_order
from .graphs.reading import one_reading
from .graphs.small import SmallGraph, read_small
from .method import RATE_TILE, MethodChoice
from .plan import Asked, Plan, asked as asked_for, plan_for
from .profiling import note_run, phase
from .progress import bar as progress_bar
from .sparse import as_csr, johnson

log = logging.getLogger("polyfw")


class InsufficientMemoryError(MemoryError):
    """The run would need more memory than the machine has available."""


def memory_needed(n: int, dtype: str, predecessors: bool = False) -> int:
    """Bytes `solve` holds at its peak: the float64 matrix the input is staged in (with a mask
    and the cast to dtype), or later the input, the padded working copy and, where the result is
    converted to float64, the result side by side (a result of dtype is the working copy itself);
    predecessors add three int32 matrices."""
    itemsize = np.dtype(dtype).itemsize
    staging = n * n * (8 + 1 + itemsize)
    converted = n * n * 8 if dtype != "float64" else 0
    running = n * n * (itemsize + 1) + n * padded_stride(n) * itemsize + converted
    return max(staging, running) + (3 * n * padded_stride(n) * 4 if predecessors else 0)


def available_memory() -> int | None:
    """Bytes the machine can give without swapping (Linux MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo") as info:
            fields = dict(line.split(":", 1) for line in info)
        return int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return None


#: below this many bytes check_memory does not read the machine's memory (any machine running
#: Python has it; reading /proc/meminfo was a twentieth of a small call)
MEMORY_WORTH_CHECKING = 2**28
#: below this many vertices no dtype needs MEMORY_WORTH_CHECKING bytes (float64 with predecessors at
#: 2047 vertices: about 170 MB), so a small call computes nothing
MEMORY_CHECKED_FROM = 2048


def check_memory(n: int, dtype: str, predecessors: bool = False) -> None:
    """Refuse, before allocating, a problem the machine cannot hold."""
    if n < MEMORY_CHECKED_FROM:
        return
    needed = memory_needed(n, dtype, predecessors)
    if needed < MEMORY_WORTH_CHECKING:
        return
    available = available_memory()
    if available is None or needed <= available:
        return
    gib = 2.0**30
    smaller = ("" if np.dtype(dtype).itemsize <= 4 else "dtype float32 or int32 (4 bytes per entry), ")
    raise InsufficientMemoryError(
        f"{n:,} vertices in {dtype}{' with predecessors' if predecessors else ''} need about {needed / gib:.1f} GiB "
        f"({n * n * np.dtype(dtype).itemsize / gib:.1f} GiB per matrix) and this machine has {available / gib:.1f} GiB "
        f"available: use {smaller}{'no predecessors, ' if predecessors else ''}fewer vertices, or a machine with more memory")


def _restore_unreachable(distances: np.ndarray, lightest_edge: float) -> np.ndarray:
    """With negative edges, INF + w < INF can leak into an integer dtype's results; put INF back.

    as_dense bounds (n-1)*(max-min) below INF, so every real path is below
    INF + (n-1)*min and everything at or above it went through a missing edge.
    Returns where INF was put back.
    """
    n, inf = distances.shape[0], top(distances.dtype)
    leaked = distances >= inf + (n - 1) * lightest_edge
    distances[leaked] = inf
    return leaked


def initial_predecessors(distances: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """pred[i, j] = i for every edge i -> j (i != j), NO_PREDECESSOR elsewhere (int32; in `out`, an
    n x n int32 array or view, where given)."""
    n = distances.shape[0]
    pred = fresh_empty((n, n), np.int32) if out is None else out
    pred[...] = np.arange(n, dtype=np.int32)[:, None]
    np.copyto(pred, NO_PREDECESSOR, where=missing_edges(distances))
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


def _solve_sparse(graph, dtype_name: str, predecessors: bool, target: Target):
    """Johnson's distances in solve's conventions (dtype, its INF in an integer dtype, which the
    weights must fit as they must for the dense path), on the GPU for a GPU target."""
    if dtype_name in INTEGER_INF:
        check_integer_weights(graph.weights, graph.n, dtype_name)
    if target.on_gpu:
        from codegen.cuda import check_cuda_target

        check_cuda_target(target.name, running=True)  # the dense path's refusal, word for word
    found = johnson(graph, predecessors=predecessors, target="cuda" if target.on_gpu else "cpu")
    distances, pred = found if predecessors else (found, None)
    if dtype_name in INTEGER_INF:
        distances = np.where(np.isinf(distances), top(dtype_name), distances).astype(dtype_name)
    else:
        distances = distances.astype(dtype_name)
    return distances if pred is None else (distances, pred)


def solve(graph, *, schedule: str | Schedule = "auto", tile: int | None = None, kappa: int | None = None,
          target: str = "cpu", dtype="auto", directed: bool = True, predecessors: bool = False,
          weight: str = "weight", semiring: str = "min-plus", method: str = "auto",
          null_value: float | None = None, progress: bool | None = None, device_result: bool = False,
          like: object | None = None):
    """Shortest-path distances between all pairs of vertices of `graph` (or, with another
    semiring, widest paths, minimax paths or reachability).

    With no options this takes the fastest exact path and returns what a scipy user expects:
    float64 distances with np.inf where unreachable. Every choice made for the caller ('auto')
    is logged on the 'polyfw' logger with its reason. Raises NegativeCycleError when a negative
    cycle exists.

    graph: any input of polyfw.graphs.as_dense (a dense array, a scipy.sparse matrix, a
    networkx graph, Edges, or the path of a DIMACS .gr or Matrix Market .mtx file).

    schedule: 'auto' (the tuning table's fastest configuration for this size), a family's
    text ('classic', 'generalized:kappa=2', ...), or a Schedule built for this n. tile and
    kappa override the schedule's. Every schedule is proved legal before it runs: an illegal
    one raises schedules.RefusedScheduleError (a dependence and a witness pair).

    target: any registered code generator (codegen.targets.TARGETS: 'cpu', 'cuda' for a GPU,
    'cudasim' its simulator, 'python', ...).

    dtype: 'auto' computes in the narrowest exact element type the target offers and returns
    float64 with np.inf: for integer weights int16 (twice int32's SIMD lanes; its sums saturate
    at INF) where the proved bound on every path, (n-1)*(max - min(min, 0)) (n - 1 for hop
    counts), stays below INT16_INF, else int32 below INT32_INF, float32 below 2**24; float64
    otherwise. It is never inexact: a target offering none of these is refused by name. A dtype
    given by name is computed in and returned, and an integer one the bound does not fit is
    refused (GraphInputError): unreachable pairs are np.inf in float dtypes, INT16_INF in int16
    and INT32_INF in int32 (tiling.semirings).

    directed: False uses every edge in both directions. weight: a networkx graph's edge
    attribute. null_value: which entries of a dense matrix mean "no arc" besides inf (0 as in
    scipy's csgraph); None reads zeros as arcs and warns once when there are zeros off the diagonal.

    predecessors: True returns (distances, predecessors) in scipy's convention (min-plus only).

    method: 'dense' (Floyd-Warshall by the schedule), 'sparse' (Johnson's algorithm on the CSR
    graph: Bellman-Ford potentials, Dijkstra from every source; min-plus, run on this CPU) or
    'auto' (the faster by polyfw.method's cost model, logged with both predictions; dense
    wherever a schedule, tile or kappa is given, for another semiring, or for a target the
    CPU's sparse code does not stand in for).

    semiring: a registered semiring (tiling.semirings), what each reads and what its result
    holds (INF below: inf in float dtypes, INT32_INF in int32, INT16_INF in int16):

    - 'min-plus' (shortest paths): as above.
    - 'max-min' (widest paths): integer or float weights; unreachable is -INF, a vertex to
      itself +INF.
    - 'min-max' (minimax paths): integer or float weights; unreachable is +INF, a vertex to
      itself -INF.
    - 'or-and' (reachability): a bool adjacency matrix (dense or sparse), 0/1 integers or
      weights (every nonzero finite entry an edge); returns a bool matrix, True where
      reachable, the diagonal True.

    An input of another dtype, or a dtype the semiring does not compute in, is refused in one
    line naming the accepted ones (GraphInputError, a ValueError).

    progress: a bar over the tile-layers of a dataflow run (the CPU's tuned runtime; polyfw.progress):
    True wherever stderr goes, False never, None (default) in a terminal or a notebook from
    PROGRESS_FROM vertices, where a call takes seconds.

    On target 'cuda' (or 'cudasim') `graph` may be a dense matrix on the GPU (a torch or cupy array, a
    numba device array: anything with `__cuda_array_interface__` or CUDA DLPack): it is read, run and
    converted there, never copied to the host (polyfw.device_solve). device_result=True returns the
    result on the GPU (a numba device array, which torch and cupy wrap without a copy), like=x as the
    same kind of array as x; both only on those targets.
    """
    if _plain(schedule, tile, kappa, target, dtype, predecessors, semiring, method, progress, device_result, like):
        with phase("input"):
            small = read_small(graph, weight, null_value)
        if small is not None:
            return _solve_small(small, directed, method)
    with one_reading():  # the input is read once for the whole call (its edges, a dense matrix's facts)
        return _solve(graph, schedule, tile, kappa, target, dtype, directed, predecessors, weight, semiring, method,
                      null_value, progress, device_result, like)


def _plain(schedule, tile, kappa, target, dtype, predecessors, semiring, method, progress, device_result,
           like) -> bool:
    """Whether a call asks what a scipy user asks (shortest paths on this CPU, every choice 'auto'): the
    quick path may take it."""
    return (isinstance(schedule, str) and schedule == "auto" and tile is None and kappa is None and target == "cpu"
            and (dtype is None or isinstance(dtype, str) and dtype == "auto") and not predecessors
            and semiring == "min-plus" and method in ("auto", "dense") and progress is not True
            and not device_result and like is None)


def _solve_small(small: SmallGraph, directed: bool, method: str):
    """A plain call on a small input (polyfw.graphs.small): its plan, then the matrix written once, run and
    converted, or Johnson's on its arcs where the plan says so."""
    with phase("plan"):
        plan = plan_for(asked_for("min-plus", "cpu", "auto", "auto", None, None, False, method), small.n,
                        small.summary, small.arc_count(directed), small.arcs is not None, logged=False)
    plan.log()
    if plan.method == "sparse":  # Johnson's, on the arcs read (a tiny graph with few arcs)
        arcs = as_csr(small.matrix if small.arcs is None else small.arcs, directed=directed and small.directed)
        return _with_choice(_solve_sparse(arcs, "float64", False, find_target("cpu")), plan.choice)
    n, integer = small.n, plan.dtype in INTEGER_INF  # (dtype names: numpy's dtype.name is Python, 3 us)
    if not integer and small.summary.arcs:  # (an exact integer type's bound holds by its choice)
        check_float_sums(small.summary.lightest, small.summary.heaviest, n, np.dtype(plan.dtype))
    with phase("input"):
        matrix = mapped_empty((n, padded_stride(n)), plan.dtype)
        small.write(matrix[:, :n], directed)
    lightest_edge = min(small.summary.lightest, 0.0) if integer else 0.0
    distances = _run_plan(matrix, n, MIN_PLUS, plan, lightest_edge, None, None, None)
    return distances if plan.choice is None else _with_choice(distances, plan.choice)


#: from this many vertices solve(progress=None) shows its run's bar in a terminal or a notebook (a
#: dataflow run at n = 4096 takes 1-2 s on a 2-core Xeon, more in float64)
PROGRESS_FROM = 4096


def _run_progress(progress: bool | None, n: int) -> AbstractContextManager[None]:
    """Inside, a dataflow run draws a bar over its tile-layers (codegen.dataflow.PROGRESS): with progress=True,
    or None from PROGRESS_FROM vertices (then only in a terminal or a notebook). Without a bar, a shared
    do-nothing context (a generator's cost 3 us of a small call)."""
    if progress is False or (progress is None and n < PROGRESS_FROM):
        return _NO_BAR
    return _bars(progress)


_NO_BAR = nullcontext()


@contextmanager
def _bars(progress: bool | None) -> Iterator[None]:
    bars = []

    def told(layers: int) -> Callable[[int], None]:
        shown = progress_bar(layers, "solve", unit="tile-layer", show=progress)
        bars.append(shown)
        return lambda done: shown.update(done - shown.n)

    token = PROGRESS.set(told)
    try:
        yield
    finally:
        PROGRESS.reset(token)
        for shown in bars:
            shown.close()


def _solve(graph, schedule, tile, kappa, target: str, dtype, directed: bool, predecessors: bool, weight: str,
           semiring: str, method: str, null_value, progress: bool | None = None, device_result: bool = False,
           like=None):
    """input -> plan -> run -> convert."""
    asked = asked_for(semiring, target, dtype, schedule, tile, kappa, predecessors, method)
    ring = asked.ring
    on_device = is_device_array(graph)
    check_device_request(target, on_device, device_result, like)
    if on_device:
        graph = device_view(graph)
    else:
        graph, directed = _read_once(graph, ring, null_value, directed, weight)
    n = graph.shape[0] if on_device else vertex_count(graph)
    if n == 0:
        empty = np.zeros((0, 0), dtype="float64" if asked.as_scipy else "bool" if ring.name == "or-and"
                         else ring.dtypes[0] if asked.auto_dtype else np.dtype(dtype).name)
        return to_device_result((empty, np.zeros((0, 0), dtype=np.int32)) if predecessors else empty,
                                device_result, like)
    if on_device:
        from .device_solve import solve_on_device

        return solve_on_device(graph, asked, directed, null_value, device_result, like)
    summary = summarize_weights(graph, weight) if asked.reads_weights else None
    sparse_input = not isinstance(graph, np.ndarray)
    arcs = None  # what the ordering and, without a summary, the method choice read
    if ring is MIN_PLUS and sparse_input:
        arcs = _arc_count(graph, n, directed, weight)
    elif ring is MIN_PLUS and summary is None and method == "sparse":
        arcs = as_csr(graph, directed=directed, weight=weight).m
    if asked.as_scipy:  # a float64 result whatever the plan: refused before the input is ordered and priced
        check_memory(n, "float64", predecessors)
    ordered, layers = None, None  # a sparse input in nested-dissection order, and what a dense run of it runs
    if asked.prices_skips(n, arcs, sparse_input):
        with phase("input"):
            ordered = in_dissection_order(graph, directed, weight, reorder=True)
            layers = tile_layers_run(n, ordered[0].source, ordered[0].target, RATE_TILE)
    with phase("plan"):
        plan = plan_for(asked, n, summary, arcs, sparse_input, layers)
    check_memory(n, "float64" if plan.as_scipy else plan.dtype, predecessors)  # what is returned, at least
    if plan.method == "packed":
        return _solve_packed(graph, n, asked, plan, directed, weight)
    if plan.method == "sparse":
        sparse_graph = as_csr(graph, directed=directed, weight=weight)
        return to_device_result(_with_choice(_solve_sparse(sparse_graph, "float64" if plan.as_scipy else plan.dtype,
                                                           predecessors, find_target(target)), plan.choice),
                                device_result, like)
    distances = _solve_dense(graph, n, ring, plan, directed, predecessors, weight, progress, ordered)
    return to_device_result(distances if plan.choice is None else _with_choice(distances, plan.choice),
                            device_result, like)


def _read_once(graph, ring, null_value: float | None, directed: bool, weight: str) -> tuple[object, bool]:
    """(graph, directed): the input as every later step reads it, and whether its arcs are one-way. A file's
    edges (read once: its vertex count first, then its matrix), a list as an array; for min-plus a dense
    matrix's null_value entries as inf (below, inf alone means no arc), and any other input as its arcs
    (an undirected networkx graph's both ways), so that no step reads the caller's object again."""
    if isinstance(graph, (str, os.PathLike)):
        graph = read_graph(graph)
    if isinstance(graph, (list, tuple)):
        graph = np.asarray(graph)
    if ring is not MIN_PLUS:
        return graph, directed
    if type(graph) is np.ndarray:
        return null_as_inf(graph, null_value, stacklevel=5), directed  # the warning at solve's caller
    if isinstance(graph, Edges):
        return graph, directed
    found, input_directed = edges_or_dense(graph, weight)
    return found, directed and input_directed


def _arc_count(graph, n: int, directed: bool, weight: str) -> int:
    """The arcs a sparse input's run sees (each edge twice when undirected; n^2 for an input dense
    enough to be read as a matrix), from the edges the call reads anyway."""
    found, input_directed = edges_or_dense(graph, weight)
    if not isinstance(found, Edges):
        return n * n
    return len(found.source) * (1 if directed and input_directed else 2)


def in_dissection_order(graph, directed: bool, weight: str, reorder: bool):
    """(graph, directed, position): with `reorder`, a sparse input's arcs renumbered in
    nested-dissection order (polyfw.graphs.ordering), position[v] being vertex v's new number, so
    that blocked FW skips the blocks that hold no path; else a dense array as it is and any other
    input as the edges it was read into (not read again), position None."""
    if isinstance(graph, np.ndarray):
        return graph, directed, None
    found, input_directed = edges_or_dense(graph, weight)
    directed = directed and input_directed
    if not reorder:
        return found, directed, None
    order = dissection_order(found.n, found.source, found.target)
    position = np.empty(found.n, dtype=np.int64)
    position[order] = np.arange(found.n)
    return Edges(found.n, position[found.source], position[found.target], found.weight), directed, position


def _solve_packed(graph, n: int, asked: Asked, plan: Plan, directed: bool, weight: str) -> np.ndarray:
    """Reachability (or-and) on rows packed 64 vertices a word (codegen.packed_kernels): the same proved
    schedules, an eighth of uint8's bytes, a row of B ORed in per set bit; on the default path over the
    graph's strongly connected parts where that costs less (polyfw.graphs.components)."""
    with phase("input"):
        words = _packed_input(graph, n, directed, weight)
    part = None  # each vertex's strongly connected part, where the closure runs over them
    if plan.condense:
        with phase("condense"):
            condensed = condensation(words, n, _whole_words)
        if condensed is not None:
            words, part = condensed
            plan = plan_for(asked, len(words), None, None, False, logged=False)
    with phase("run"):
        plan.compiled(words)
    note_run(getattr(plan.compiled, "last_run", {}))
    with phase("output"):
        return unpack_rows(words, n) if part is None else expanded(words, part, n)


def _whole_words(parts: int) -> int:
    """The vertices a condensation's closure runs on: its parts rounded up to whole words (one compiled
    schedule for every count of parts in 64)."""
    return -(-parts // WORD_BITS) * WORD_BITS


def _packed_input(graph, n: int, directed: bool, weight: str) -> np.ndarray:
    """or-and's input as packed rows, each vertex reaching itself: a square bool array packed as it is
    (the general reading, through a byte a pair, took 0.26 s of a 0.68 s call at n = 8192), any other
    input as semiring or-and reads it."""
    if isinstance(graph, np.ndarray) and graph.dtype == bool and graph.shape == (n, n):
        words = pack_rows(graph if directed else graph | graph.T)
        vertices = np.arange(n)
        words[vertices, vertices >> 6] |= np.left_shift(np.uint64(1), (vertices & 63).astype(np.uint64))
        return words
    return pack_rows(as_semiring_matrix(graph, find_semiring("or-and"), "uint8", directed=directed, weight=weight))


def _lightest_weight(graph, distances: np.ndarray) -> float:
    """The lightest weight a run starts from: a dense input's or an arc list's facts (read already), else the
    matrix's minimum."""
    if isinstance(graph, np.ndarray) and graph.ndim == 2 and graph.dtype.kind in "iuf":
        return dense_facts(graph).lightest
    if isinstance(graph, Edges) and np.asarray(graph.weight).dtype.kind in "iuf":
        return dense_facts(np.asarray(graph.weight)).lightest
    return float(distances.min())


def _solve_dense(graph, n: int, ring, plan: Plan, directed: bool, predecessors: bool, weight: str,
                 progress: bool | None = None, ordered: tuple | None = None):
    """Floyd-Warshall by the plan's compiled schedule in its dtype, converted as it says (`ordered`: the
    input already in nested-dissection order, as in_dissection_order gives it)."""
    dtype_name = plan.dtype
    # the kernels take padded rows: the input is written straight into them
    with phase("input"):
        matrix = mapped_empty((n, padded_stride(n)), dtype_name)
        distances = matrix[:, :n]
        position = None
        if ring is MIN_PLUS:
            if not predecessors:  # (predecessors name vertices: they stay in the input's order)
                graph, directed, position = ordered or in_dissection_order(graph, directed, weight, plan.reorder)
            as_dense(graph, dtype=dtype_name, directed=directed, weight=weight, out=distances, null_value=np.inf)
        else:
            distances[...] = as_semiring_matrix(graph, ring, dtype_name, directed=directed, weight=weight)
        # integer sums through INF can fall below INF when edges are negative (_restore_unreachable);
        # INF is above every weight, so the matrix's minimum is the lightest edge
        lightest_edge = min(_lightest_weight(graph, distances), 0.0) \
            if ring is MIN_PLUS and dtype_name in INTEGER_INF else 0.0
        pred = None
        if predecessors:
            pred = fresh_empty((n, padded_stride(n)), np.int32)
            pred[:, n:] = NO_PREDECESSOR
            initial_predecessors(distances, out=pred[:, :n])
    return _run_plan(matrix, n, ring, plan, lightest_edge, pred, position, progress)


def _run_plan(matrix: np.ndarray, n: int, ring, plan: Plan, lightest_edge: float, pred: np.ndarray | None,
              position: np.ndarray | None, progress: bool | None):
    """The plan's compiled schedule on the padded `matrix` (and `pred`), then its result as the plan
    returns it; `position`: each vertex's row where the run renumbered them, `lightest_edge`: below 0 where
    an integer dtype's INF may have leaked."""
    # a result of another dtype than the matrix's takes its pages before the run, while the pages the last call
    # freed are still the guest's: taken after a run of seconds, a KVM guest that reports free pages to its
    # host (virtio-balloon) faults them in from the host, 5-6 ms a MiB (Zen 4 guest: a float64 result at
    # n = 4096 took 0.5-1.0 s to write after another call, 0.02 s taken early). One of the matrix's dtype is
    # the matrix itself, compacted.
    converted = ring.name != "or-and" and plan.as_scipy and matrix.dtype != np.float64
    result = None
    if converted and position is None:
        with phase("output"):
            result = mapped_empty((n, n), np.float64)
    with phase("run"), _run_progress(progress, n):
        negative_at = plan.compiled(matrix, pred)
    note_run(getattr(plan.compiled, "last_run", {}))
    if negative_at >= 0:  # only min-plus has pivots that improve on themselves
        raise errors.NegativeCycleError(negative_at)
    with phase("output"):
        distances = matrix[:, :n]
        if lightest_edge < 0:
            leaked = _restore_unreachable(distances, lightest_edge)
            if pred is not None:
                pred[:, :n][leaked] = NO_PREDECESSOR
        if ring.name == "or-and":
            return distances.astype(bool)
        # one conversion at the end: an integer INF becomes inf (float64 for a scipy user), else none
        if converted:
            distances = float64_distances(distances, position, result)
        elif position is None:
            distances = compacted(matrix)
        else:
            distances = distances[np.ix_(position, position)]
    if pred is None:
        return distances
    return distances, compacted(pred)
