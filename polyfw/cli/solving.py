"""The handlers of the commands that solve graph files: `polyfw solve` (on one machine or under
mpiexec), `mpi-info`, `bfs` and `sssp`. Kept apart from the schedule commands, whose imports (CUDA,
sympy, the exploration) a solve never needs: a small file is solved in about the time its process
takes to start Numba."""
from __future__ import annotations

import argparse
import os
from contextlib import contextmanager

import numpy as np

from codegen.mpi import launched_by_mpiexec, world
from codegen.targets import TARGETS, find_target
from tiling.semirings import MIN_PLUS
from tiling.semirings import semiring as find_semiring

from .. import errors
from ..graphs import MATRIX_FORMATS, read_graph, write_matrix
from ..solver import solve
from ..sparse import bfs, sssp
from .usage import UsageError


def _matrix_format(flag: str, path: str | None, accepted: tuple[str, ...] = MATRIX_FORMATS) -> None:
    """Refuse a matrix file to write whose extension is not one of `accepted`, naming them."""
    if path is not None and os.path.splitext(path)[1].lower() not in accepted:
        raise UsageError(f"{flag} {path}: the file's extension must be {' or '.join(accepted)}")


def _file_source(path: str, source: int) -> int:
    """DIMACS .gr and Matrix Market files number vertices from 1; polyfw from 0."""
    return source - 1 if str(path).endswith((".gr", ".mtx")) else source


@contextmanager
def _numbered_as_in(path: str):
    """A negative cycle named by its vertex as the file `path` numbers it."""
    try:
        yield
    except errors.NegativeCycleError as error:
        raise errors.NegativeCycleError(error.vertex, first=_file_source(path, 0) * -1) from None


def cmd_solve(args: argparse.Namespace) -> int:
    distributed = args.mpi or launched_by_mpiexec()
    for flag, path in (("-o", args.output), ("--predecessors", args.predecessors)):
        _matrix_format(flag, path, (".npy",) if distributed else MATRIX_FORMATS)  # refused before the work
    if distributed:
        return _solve_distributed(args)
    if str(args.input).endswith(".npy"):
        raise UsageError(f"{args.input}: .npy inputs are read block by block by MPI processes; add --mpi")
    with _numbered_as_in(args.input):
        result = solve(read_graph(args.input), schedule=args.schedule, tile=args.tile, kappa=args.kappa,
                       target=args.target, dtype=args.dtype, directed=not args.undirected,
                       predecessors=args.predecessors is not None, semiring=args.semiring, method=args.method)
    distances, predecessors = result if args.predecessors else (result, None)
    write_matrix(args.output, distances)
    print(f"wrote {distances.shape[0]} x {distances.shape[1]} {distances.dtype} distances to {args.output}")
    if predecessors is not None:
        write_matrix(args.predecessors, predecessors)
        print(f"wrote predecessors to {args.predecessors}")
    return 0


def _collective_target(name: str) -> str:
    """The target an MPI run takes for --target NAME: NAME where it is collective, else the
    collective target tuned as NAME (its kernels run in each process)."""
    if find_target(name).collective:
        return name
    found = [target.name for target in TARGETS.values() if target.collective and target.tuned_as == name]
    if not found:
        raise UsageError(f"MPI runs min-plus Floyd-Warshall on CPU processes; target {name!r} has no collective "
                         f"counterpart (collective targets: "
                         f"{', '.join(t.name for t in TARGETS.values() if t.collective) or 'none'})")
    return found[0]


def _solve_distributed(args: argparse.Namespace) -> int:
    """`polyfw solve` under mpiexec: every rank runs this; rank 0 reports."""
    if args.method == "sparse" or find_semiring(args.semiring) is not MIN_PLUS:
        raise UsageError("MPI runs min-plus Floyd-Warshall on CPU processes: --method dense --semiring min-plus")
    from ..distributed import solve_distributed  # (here: it imports scipy's csgraph, which a solve never needs)

    target = _collective_target(args.target)
    comm = world()
    try:
        result = solve_distributed(
            args.input, schedule=args.schedule, tile=args.tile, kappa=args.kappa,
            dtype=None if args.dtype == "auto" else args.dtype,
            directed=not args.undirected, predecessors=args.predecessors is not None, grid=args.grid,
            placement=args.placement, lookahead=False if args.no_lookahead else None, skip_inf=not args.no_skip_inf,
            threads=args.threads, output=args.output, predecessors_output=args.predecessors, target=target)
    except Exception as error:
        if comm.Get_rank() != 0 and getattr(error, "collective", False):
            return 1  # raised on every rank alike: rank 0 reports it once
        raise
    if comm.Get_rank() == 0:
        totals = result.totals()
        print(f"wrote distances to {args.output} from {comm.Get_size()} processes ({result.grid}, {result.schedule}) "
              f"in {result.seconds:.3f} s: {totals['messages_sent']} messages, {totals['bytes_sent']} bytes, "
              f"{totals['skipped_tile_layers']} of {totals['tile_layers']} tile-layers skipped (nothing reachable)")
        if args.predecessors:
            print(f"wrote predecessors to {args.predecessors}")
    return 0


def cmd_mpi_info(args: argparse.Namespace) -> int:
    from ..distributed import world_report

    report = world_report(args.grid, args.placement, args.n, args.family, args.tile, not args.no_lookahead,
                          args.dtype)
    if report is not None:
        print(report)
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    """bfs and sssp from one vertex, numbered as the file numbers it."""
    graph = read_graph(args.input)
    source = _file_source(args.input, args.source)
    first = source - args.source  # -1 where the file numbers vertices from 1
    if not 0 <= source < graph.n:
        raise UsageError(f"--source must be a vertex {-first}..{graph.n - 1 - first} as {args.input} numbers them, "
                         f"got {args.source}")
    if args.command == "bfs":
        result, parent = bfs(graph, source, directed=not args.undirected)
        unreached = int((result == np.iinfo(result.dtype).max).sum())
        what = f"{result.dtype} levels (unreached: {np.iinfo(result.dtype).max}, {unreached} vertices)"
    else:
        with _numbered_as_in(args.input):
            result, parent = sssp(graph, source, directed=not args.undirected)
        what = f"distances ({int(np.isinf(result).sum())} vertices unreachable: inf)"
    np.save(args.output, result)
    print(f"wrote {result.shape[0]} {what} from vertex {args.source} to {args.output}")
    if args.parents:
        np.save(args.parents, parent)
        print(f"wrote parents (0-based, -1: unreached) to {args.parents}")
    return 0
