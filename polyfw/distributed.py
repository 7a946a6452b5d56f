"""All-pairs shortest paths on a grid of MPI processes: `solve` for matrices larger than one node.

Collective: every rank calls `solve_distributed` with the same arguments
(rank 0's graph may be the only one given). The graph is read on rank 0 and
each process receives its blocks, or, from a .npy file, every process maps
the file and reads its own blocks; the distances come back to rank 0 or go
straight from every process into one .npy. A problem found on one rank (a
file it cannot read, a bad weight) is raised on every rank with the same
message, so no rank is left waiting.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import numpy as np

from codegen import generate
from codegen.mpi import CompiledMPI, world
from schedules.distribute import Grid, grid_for, plan_distribution
from schedules.families import build
from schedules.schedule import Schedule
from tiling.semirings import INT32_INF

from .configuration import resolve_schedule, run_settings
from .errors import NegativeCycleError
from .graphs import NO_PREDECESSOR, GraphInputError, as_dense, read_graph, resolve_dtype

_ERRORS = {"GraphInputError": GraphInputError, "ValueError": ValueError, "FileNotFoundError": FileNotFoundError}


@dataclass
class DistributedSolution:
    """What `solve_distributed` returns on every rank (distances and predecessors on rank 0 only,
    when no output file was asked for)."""

    distances: np.ndarray | None
    predecessors: np.ndarray | None
    schedule: str
    grid: str
    seconds: float
    #: every rank's RunStats as a dict (on rank 0; the own rank's elsewhere)
    stats: list[dict] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        """The counts of `stats` summed over the ranks (messages, bytes, tile-layers, skipped ones)."""
        return {key: sum(stats[key] for stats in self.stats) for key in self.stats[0]
                if key not in ("seconds", "wait_seconds")}


def _agree(comm, error: Exception | None) -> None:
    """Raise on every rank the first error any rank found (a collective check)."""
    found = comm.allgather(None if error is None else (type(error).__name__, str(error)))
    for rank, problem in enumerate(found):
        if problem is not None:
            kind, message = problem
            raise _collective(_ERRORS.get(kind, RuntimeError)(f"rank {rank}: {message}"))


def _collective(error: Exception) -> Exception:
    """Mark an error every rank raises alike (the CLI reports it once, from rank 0)."""
    error.collective = True
    return error


def _read_on_root(comm, graph, dtype_name: str, directed: bool, weight: str):
    """(matrix on rank 0 or None, n, lightest edge) with rank 0's errors raised everywhere."""
    matrix, error = None, None
    if comm.Get_rank() == 0:
        try:
            if isinstance(graph, (str, os.PathLike)):
                graph = read_graph(graph)
            matrix = as_dense(graph, dtype=dtype_name, directed=directed, weight=weight)
        except (GraphInputError, ValueError, FileNotFoundError) as problem:
            error = problem
    _agree(comm, error)
    header = (matrix.shape[0], _lightest(matrix, dtype_name)) if comm.Get_rank() == 0 else None
    n, lightest = comm.bcast(header, root=0)
    return matrix, n, lightest


def _lightest(matrix: np.ndarray, dtype_name: str) -> float:
    return min(float(matrix.min()), 0.0) if dtype_name == "int32" and matrix.size else 0.0




def _load_blocks(compiled: CompiledMPI, path: str, dtype_name: str, directed: bool) -> float:
    """Every process reads its own blocks of the .npy at `path` (memory-mapped); returns the
    lightest edge over all of them (for int32's INF)."""
    from mpi4py import MPI

    process, comm = compiled.process, compiled.process.comm
    local, error = None, None
    try:
        source = np.load(path, mmap_mode="r")
        rows, cols = process.element_indices(process.rank)
        part = np.asarray(source[np.ix_(rows, cols)], dtype=np.float64)
        if not directed:
            part = np.minimum(part, np.asarray(source[np.ix_(cols, rows)], dtype=np.float64).T)
        if np.isnan(part).any():
            raise GraphInputError(f"{path}: NaN weights in this rank's blocks")
        diagonal = rows[:, None] == cols[None, :]
        part[diagonal] = np.minimum(part[diagonal], 0)
        local = part
    except (OSError, ValueError, GraphInputError) as problem:
        error = problem
    _agree(comm, error)
    dtype = np.dtype(dtype_name)
    if dtype == np.int32:
        finite = np.isfinite(local) & (local < INT32_INF)
        error = None
        if (local[finite] != np.round(local[finite])).any():
            error = GraphInputError(f"{path}: int32 needs integer weights")
        _agree(comm, error)
        local = np.where(finite, local, float(INT32_INF))
    region = process.local_blocks()
    region[...] = local.astype(dtype)
    mine = float(local.min()) if local.size else 0.0
    return min(comm.allreduce(mine, op=MPI.MIN), 0.0) if dtype == np.int32 else 0.0


def _initial_predecessors(compiled: CompiledMPI) -> None:
    """pred[i, j] = i for every edge i -> j (i != j) of this process's blocks."""
    process = compiled.process
    rows, cols = process.element_indices(process.rank)
    distances = process.local_blocks()
    inf = INT32_INF if distances.dtype == np.int32 else np.inf
    edge = (distances < inf) & (rows[:, None] != cols[None, :])
    process.region(process.pred)[...] = np.where(edge, rows[:, None], NO_PREDECESSOR).astype(np.int32)


def _restore_unreachable(compiled: CompiledMPI, lightest: float) -> None:
    """int32 with negative edges: INF + w may fall below INF; put INF back (polyfw.solve's rule)."""
    process = compiled.process
    distances = process.local_blocks()
    leaked = distances >= INT32_INF + (compiled.n - 1) * lightest
    distances[leaked] = INT32_INF
    if process.pred is not None:
        process.region(process.pred)[leaked] = NO_PREDECESSOR


def _save(compiled: CompiledMPI, local: np.ndarray, path: str) -> None:
    """Every process writes its blocks into one .npy (rank 0 creates it)."""
    process, comm = compiled.process, compiled.process.comm
    n = compiled.n
    if process.rank == 0:
        np.lib.format.open_memmap(path, mode="w+", dtype=local.dtype, shape=(n, n)).flush()
    comm.Barrier()
    target = np.load(path, mmap_mode="r+")
    layout, tile = process.layout, compiled.plan.tile
    for li, ib in enumerate(layout.rows.tolist()):
        for lj, jb in enumerate(layout.cols.tolist()):
            h, w = layout.width(ib), layout.width(jb)
            target[tile * ib:tile * ib + h, tile * jb:tile * jb + w] = local[tile * li:tile * li + h,
                                                                             tile * lj:tile * lj + w]
    target.flush()
    del target
    comm.Barrier()


def _layout(schedule: str | Schedule, n: int, dtype_name: str, processes: int, grid: tuple[int, int] | None,
            placement: str | None, lookahead: bool | None, target: str = "mpi"
            ) -> tuple[tuple[int, int] | None, str, bool]:
    """The grid, placement and lookahead to run with: the caller's, else the schedule's settings.
    A grid and placement from the settings are taken together, and only where the caller chose
    neither and the grid has as many processes as the world."""
    settings = run_settings(schedule, n, dtype_name, target)
    fits = "grid" not in settings or settings["grid"][0] * settings["grid"][1] == processes
    if grid is None and placement is None and fits:
        grid, placement = settings.get("grid"), settings.get("placement")
    return grid, placement or "block-cyclic", settings.get("lookahead", True) if lookahead is None else lookahead


def solve_distributed(graph=None, *, schedule: str | Schedule = "auto", tile: int | None = None,
                      kappa: int | None = None, dtype=None, directed: bool = True, weight: str = "weight",
                      predecessors: bool = False, grid: tuple[int, int] | None = None,
                      placement: str = "block-cyclic", lookahead: bool = True, skip_inf: bool = True,
                      threads: int | None = None, output: str | None = None,
                      predecessors_output: str | None = None, target: str = "mpi") -> DistributedSolution:
    """Shortest-path distances of `graph` on every process of MPI's world (collective).

    graph: on rank 0, anything polyfw.solve takes; or, on every rank, the path of an n x n
    .npy weight matrix (np.inf or INT32_INF: no edge), which each process reads its own
    blocks of. output / predecessors_output: .npy paths every process writes its blocks
    into; without them the result is gathered on rank 0. grid, placement, lookahead: those
    given, else the schedule text's ('classic:tile=64,grid=2x2,lookahead=false') or, for
    'auto', the tuning table's (polyfw explore --target mpi --tune), else the squarest
    block-cyclic grid with lookahead. Conventions as in polyfw.solve; raises
    NegativeCycleError on every rank when there is a negative cycle.
    """
    comm = world()
    rank = comm.Get_rank()
    dtype_name = resolve_dtype("float64" if dtype is None else dtype).name
    from_npy = isinstance(graph, (str, os.PathLike)) and str(graph).endswith(".npy")
    if from_npy:
        error, n = None, 0
        try:
            shape = np.load(graph, mmap_mode="r").shape  # the header only
            if len(shape) != 2 or shape[0] != shape[1]:
                raise GraphInputError(f"{graph}: a distance problem is a square matrix, got shape {shape}")
            n = shape[0]
        except (OSError, ValueError) as problem:
            error = problem
        _agree(comm, error)
        matrix, lightest = None, 0.0
    else:
        matrix, n, lightest = _read_on_root(comm, graph, dtype_name, directed, weight)
    chosen = resolve_schedule(schedule, n, dtype_name, target, tile, kappa)
    grid, placement, lookahead = _layout(schedule, n, dtype_name, comm.Get_size(), grid, placement, lookahead, target)
    started = time.perf_counter()
    compiled = generate(chosen, target=target, dtype=dtype_name, grid=grid, placement=placement,
                        lookahead=lookahead, skip_inf=skip_inf, threads=threads, predecessors=predecessors)
    process = compiled.process
    if from_npy:
        lightest = _load_blocks(compiled, str(graph), dtype_name, directed)
    else:
        process.scatter(matrix, include_pred=False)
        del matrix
    if dtype_name == "int32" and lightest < 0:  # INF + w < INF: unreachable is anything above this
        process.unreachable_from = INT32_INF + (n - 1) * lightest
    if predecessors:
        _initial_predecessors(compiled)
    negative = process.run()
    if negative >= 0:
        raise _collective(NegativeCycleError(negative))
    if dtype_name == "int32" and lightest < 0:
        _restore_unreachable(compiled, lightest)
    distances = pred = None
    if output is not None:
        _save(compiled, process.local_blocks(), output)
        if predecessors and predecessors_output is not None:
            _save(compiled, process.region(process.pred), predecessors_output)
    else:
        if rank == 0:
            distances = np.empty((n, n), dtype=dtype_name)
            pred = np.empty((n, n), dtype=np.int32) if predecessors else None
        process.gather(distances, pred, include_pred=predecessors)
    stats = comm.gather(process.stats.as_dict(), root=0)
    return DistributedSolution(distances, pred, chosen.name, str(compiled.plan.grid),
                               time.perf_counter() - started, stats if rank == 0 else [process.stats.as_dict()])


def world_report(grid: tuple[int, int] | None = None, placement: str | None = None, n: int | None = None,
                 family: str = "classic", tile: int = 128, lookahead: bool = True, dtype: str = "float64",
                 comm=None) -> str | None:
    """The MPI world, its process grid (the given one, else the squarest for the world's size), and
    with n each rank's share of the family's schedule on it: blocks, tile-layers, messages and
    bytes (collective; the text on rank 0, None elsewhere)."""
    import socket

    comm = world() if comm is None else comm
    size = comm.Get_size()
    placement = placement or "block-cyclic"
    layout = grid_for(size, placement) if grid is None else Grid(*grid, placement)
    hosts = comm.gather(socket.gethostname(), root=0)
    if comm.Get_rank() != 0:
        return None
    from mpi4py import MPI

    lines = [f"MPI: {MPI.Get_library_version().splitlines()[0].strip()}; {size} processes on "
             f"{len(set(hosts))} node(s); grid {layout}"]
    if layout.size != size:
        lines.append(f"(grid {layout.rows} x {layout.cols} needs {layout.size} processes: run under mpiexec -n "
                     f"{layout.size})")
    if n is None:
        return "\n".join(lines)
    schedule = build(family, n, tile)
    plan = plan_distribution(schedule, layout, lookahead)
    traffic = plan.traffic(np.dtype(dtype).itemsize)
    lines += [f"{schedule.name}: {plan.blocks} x {plan.blocks} blocks, {len(plan.units)} tile-layers, "
              f"{len(plan.sends)} messages",
              f"{'rank':>4} {'block rows':>10} {'block cols':>10} {'tile-layers':>11} {'sent':>6} {'received':>8} "
              f"{'MB sent':>8} {'MB received':>11}"]
    for r in range(layout.size):
        rows, cols = layout.block_rows(r, plan.blocks), layout.block_cols(r, plan.blocks)
        lines.append(f"{r:>4} {len(rows):>10} {len(cols):>10} "
                     f"{int((plan.owner == r).sum()):>11} {traffic['messages_sent'][r]:>6} "
                     f"{traffic['messages_received'][r]:>8} {traffic['bytes_sent'][r] / 1e6:>8.2f} "
                     f"{traffic['bytes_received'][r] / 1e6:>11.2f}")
    return "\n".join(lines)
