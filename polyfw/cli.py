"""The `polyfw` command line."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np

from codegen.targets import TARGETS
from tiling.semirings import SEMIRINGS


def _cmd_deps(args: argparse.Namespace) -> int:
    from tiling.report import dependence_report

    print(dependence_report(args.n))
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from .info import machine_report

    print(machine_report(measure=args.measure))
    return 0


def _cmd_solve(args: argparse.Namespace) -> int:
    from codegen.mpi import launched_by_mpiexec
    from tiling.graphs import read_graph

    from .solve import solve

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
    _save_matrix(args.output, distances)
    print(f"wrote {distances.shape[0]} x {distances.shape[1]} {distances.dtype} distances to {args.output}")
    if predecessors is not None:
        _save_matrix(args.predecessors, predecessors)
        print(f"wrote predecessors to {args.predecessors}")
    return 0


#: what `solve -o` and `--predecessors` write, by the file's extension
MATRIX_FORMATS = (".npy", ".csv")


def _matrix_format(flag: str, path: str | None, accepted: tuple[str, ...] = MATRIX_FORMATS) -> str | None:
    """The extension of a matrix file to write, or a UsageError naming the accepted ones."""
    if path is None:
        return None
    extension = os.path.splitext(path)[1].lower()
    if extension not in accepted:
        raise UsageError(f"{flag} {path}: the file's extension must be {' or '.join(accepted)}")
    return extension


def _save_matrix(path: str, matrix: np.ndarray) -> None:
    """.npy as numpy saves it; .csv one row per line, every value exact, unreachable as inf (-inf
    where a semiring's unreachable is below every value)."""
    if _matrix_format("-o", path) == ".npy":
        np.save(path, matrix)
        return
    if matrix.dtype.kind == "f":
        np.savetxt(path, matrix, fmt="%.9g" if matrix.dtype.itemsize <= 4 else "%.17g", delimiter=",")
        return
    from tiling.graphs import INT32_INF

    text = matrix.astype(np.int64).astype(str)
    if matrix.dtype == np.int32:  # int32 distances mark unreachable with INT32_INF
        text[matrix >= INT32_INF] = "inf"
        text[matrix <= -INT32_INF] = "-inf"
    np.savetxt(path, text, fmt="%s", delimiter=",")


def _solve_distributed(args: argparse.Namespace) -> int:
    """`polyfw solve` under mpiexec: every rank runs this; rank 0 reports."""
    from codegen.mpi import world

    from .distributed import solve_distributed

    if args.target != "cpu" or args.method == "sparse" or args.semiring != "min-plus":
        raise UsageError("MPI runs min-plus Floyd-Warshall on CPU processes: --target cpu --method dense "
                         "--semiring min-plus")
    comm = world()
    try:
        result = solve_distributed(
            args.input, schedule=args.schedule, tile=args.tile, kappa=args.kappa,
            dtype=None if args.dtype == "auto" else args.dtype,
            directed=not args.undirected, predecessors=args.predecessors is not None, grid=args.grid,
            placement=args.placement, lookahead=False if args.no_lookahead else None, skip_inf=not args.no_skip_inf,
            threads=args.threads, output=args.output, predecessors_output=args.predecessors)
    except Exception as error:
        if comm.Get_rank() != 0 and getattr(error, "collective", False):
            return 1  # raised on every rank alike: rank 0 reports it once
        raise
    if comm.Get_rank() == 0:
        totals = {key: sum(stats[key] for stats in result.stats) for key in result.stats[0]
                  if key not in ("seconds", "wait_seconds")}
        print(f"wrote distances to {args.output} from {comm.Get_size()} processes ({result.grid}, {result.schedule}) "
              f"in {result.seconds:.3f} s: {totals['messages_sent']} messages, {totals['bytes_sent']} bytes, "
              f"{totals['skipped_tile_layers']} of {totals['tile_layers']} tile-layers skipped (nothing reachable)")
        if args.predecessors:
            print(f"wrote predecessors to {args.predecessors}")
    return 0


def _cmd_mpi_info(args: argparse.Namespace) -> int:
    import socket

    from codegen.mpi import world
    from schedules.distribute import Grid, grid_for, plan_distribution
    from schedules.families import build

    comm = world()
    size, rank = comm.Get_size(), comm.Get_rank()
    placement = args.placement or "block-cyclic"
    grid = grid_for(size, placement) if args.grid is None else Grid(*args.grid, placement)
    hosts = comm.gather(socket.gethostname(), root=0)
    if rank != 0:
        return 0
    from mpi4py import MPI

    print(f"MPI: {MPI.Get_library_version().splitlines()[0].strip()}; {size} processes on "
          f"{len(set(hosts))} node(s); grid {grid}")
    if grid.size != size:
        print(f"(grid {grid.rows} x {grid.cols} needs {grid.size} processes: run under mpiexec -n {grid.size})")
    if args.n is None:
        return 0
    schedule = build(args.family, args.n, args.tile)
    plan = plan_distribution(schedule, grid, not args.no_lookahead)
    traffic = plan.traffic(np.dtype(args.dtype).itemsize)
    print(f"{schedule.name}: {plan.blocks} x {plan.blocks} blocks, {len(plan.units)} tile-layers, "
          f"{len(plan.sends)} messages")
    print(f"{'rank':>4} {'block rows':>10} {'block cols':>10} {'tile-layers':>11} {'sent':>6} {'received':>8} "
          f"{'MB sent':>8} {'MB received':>11}")
    for r in range(grid.size):
        print(f"{r:>4} {len(grid.block_rows(r, plan.blocks)):>10} {len(grid.block_cols(r, plan.blocks)):>10} "
              f"{int((plan.owner == r).sum()):>11} {traffic['messages_sent'][r]:>6} "
              f"{traffic['messages_received'][r]:>8} {traffic['bytes_sent'][r] / 1e6:>8.2f} "
              f"{traffic['bytes_received'][r] / 1e6:>11.2f}")
    return 0


def _file_source(path: str, source: int) -> int:
    """DIMACS .gr and Matrix Market files number vertices from 1; polyfw from 0."""
    return source - 1 if str(path).endswith((".gr", ".mtx")) else source


@contextmanager
def _numbered_as_in(path: str):
    """A negative cycle named by its vertex as the file `path` numbers it."""
    from .errors import NegativeCycleError

    try:
        yield
    except NegativeCycleError as error:
        raise NegativeCycleError(error.vertex, first=_file_source(path, 0) * -1) from None


def _cmd_search(args: argparse.Namespace) -> int:
    from tiling.graphs import read_graph

    from .sparse import bfs, sssp

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


def _cmd_emit(args: argparse.Namespace) -> int:
    from codegen import generate

    compiled = generate(_schedule_from(args), target=args.target, dtype=args.dtype, **_given_options(args))
    print(f"# ---- isl's C AST of {compiled.name}\n{compiled.isl_c}")
    print(f"# ---- generated driver ({args.target}, {args.dtype})\n{compiled.source}")
    if args.kernels and hasattr(compiled, "kernel_source"):
        print(f"# ---- tile kernels\n{compiled.kernel_source}")
    return 0


def _compare_matrix(args: argparse.Namespace) -> tuple[np.ndarray, str]:
    from tiling.graphs import as_dense, minnesota_road_graph, random_graph, read_graph

    if args.input:
        return as_dense(read_graph(args.input), dtype=args.dtype), args.input
    if args.n:
        return as_dense(random_graph(args.n, seed=0), dtype=args.dtype), f"random graph, n={args.n}, m=4n"
    matrix = as_dense(minnesota_road_graph(), dtype=args.dtype)
    if args.vertices:
        matrix = np.ascontiguousarray(matrix[: args.vertices, : args.vertices])
    return matrix, f"Minnesota road network (pygsp), {matrix.shape[0]} vertices, metres"


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import compare, plot, table, write_csv

    matrix, label = _compare_matrix(args)
    n = matrix.shape[0]
    print(f"input: {label}; {args.dtype}; target {args.target}; median of {args.repeats} runs")
    rows = compare(matrix, [s for s in args.schedules.split(";") if s], tile=args.tile, target=args.target,
                   repeats=args.repeats)
    print(table(rows))
    if args.csv:
        write_csv(rows, args.csv)
        print(f"wrote {args.csv}")
    if args.plot:
        plot(rows, args.plot, f"{label}, n={n}, {args.dtype}, {args.target}")
        print(f"wrote {args.plot}")
    return 0 if all(r.exact for r in rows) else 1


def _budget_seconds(text: str) -> float:
    """'300s', '5m', '1h' or a number of seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    text = text.strip().lower()
    scale = units.get(text[-1:], None)
    try:
        return float(text[:-1] if scale else text) * (scale or 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a budget is seconds like 300s, 5m or 1h, got {text!r}") from None


def _axis(text: str) -> tuple[str, list[str]]:
    name, equals, values = text.partition("=")
    if not equals or not values:
        raise argparse.ArgumentTypeError(f"an axis is name=value,value,... (e.g. kappa=1,2,4), got {text!r}")
    return name.strip(), [v.strip() for v in values.split(",") if v.strip()]


def _explore_mutants(args: argparse.Namespace, best, options: tuple, store_path: str, runner) -> bool:
    """Judge every single mutation of the families' trees; time the novel legal orders at --n, run
    as the best candidate runs. Returns whether any mutant was proved legal yet gave wrong
    distances (a checker bug)."""
    from .explore import Problem
    from .mutants import explore_mutants, measure_novel, summary
    from .space import label
    from .store import Store

    verdicts = explore_mutants(progress=True, runner=runner, options=options)
    print(summary(verdicts))
    tile = min((best.params.get("tile") or best.params.get("base")) if best else 128, args.n)
    with Store(store_path) as store:
        records = measure_novel(verdicts, Problem.random(args.n, args.dtype, args.seed), tile, runner,
                                args.repeats, store, options)
    for record in records:
        timing = f"{record.seconds:.4f} s" if record.seconds else record.note
        print(f"novel order at n = {args.n}, tile {tile}: {label(record.key)}: {record.status}, {timing}"
              + (f" (best family candidate: {best.seconds:.4f} s)" if best and record.seconds else ""))
    return any(v.status == "wrong" for v in verdicts) or any(r.status == "wrong" for r in records)


def _cmd_explore(args: argparse.Namespace) -> int:
    """On the mpi target every rank starts here: rank 0 explores, the others serve its runs."""
    if args.target != "mpi":
        from .explore import RunHere

        return _explore(args, RunHere(args.target))
    from .explore_mpi import Team, serve

    team = Team()
    if team.rank != 0:
        serve(team.comm)
        return 0
    try:
        return _explore(args, team)
    finally:
        team.close()


def _explore(args: argparse.Namespace, runner) -> int:
    from .explore import explore, table
    from .explore_plots import plot_exploration
    from .space import RUN_AXES, Space
    from .store import Store
    from .tuning import read_table, target_rows, write_winner

    values = {name: [int(v) if v.lstrip("-").isdigit() else v for v in given] for name, given in args.axis}
    if args.register_blocks:
        values.setdefault("register_block", [tuple(map(int, v.split("x"))) for v in args.register_blocks])
    run_axes = None if not args.register_blocks else (*RUN_AXES[args.target], "register_block")
    space = Space(args.n, args.dtype, args.target, tuple(args.families.split(",")), values, run_axes,
                  runner.processes)
    ceiling = None
    if args.ceiling and args.target in ("cpu", "mpi"):
        from .ceiling import measure

        ceiling = measure([args.dtype])[args.dtype]["best"]  # 0.2 s x 3 a shape: shorter ones read low
        print(f"independent min-plus ceiling ({args.dtype}): {ceiling / 1e9:.1f} G relaxations/s")
    where = f", {space.processes} MPI processes x {runner.threads} threads" if args.target == "mpi" else ""
    print(f"space: {len(space)} candidates; strategy {args.strategy}; budget "
          f"{'none' if args.budget is None else f'{args.budget:g} s'}; n = {args.n}, {args.dtype}, {args.target}"
          f"{where}")
    with Store(args.store) as store:
        found = explore(space, args.strategy, args.budget, args.max_candidates, store, args.repeats, args.rerun,
                        args.seed, args.top, ceiling, runner=runner)
        print(table(found.records))
        quality = found.quality()
        print(f"{len(found.measured)} measured, {found.skipped} from the store, in {found.elapsed:.0f} s")
        if quality["kendall_tau"] is not None:
            print(f"cost model: Kendall tau {quality['kendall_tau']:.3f} (p = {quality['p_value']:.2g}) over "
                  f"{quality['pairs']} candidates; regret {100 * quality['regret']:.1f}% (the model's favourite "
                  f"against the best found)")
        best = found.best
        if best is not None:
            print(_best_line(best, found.candidates.get(best.key), ceiling))
        if args.export:
            print(f"exported {store.export(args.export)} records to {args.export}")
    if args.plot and found.measured:
        print(f"wrote {plot_exploration(found.records, args.plot, f'n = {args.n}, {args.dtype}, {args.target}')}")
    if args.mutate:
        options = found.candidates[best.key].options if best else ()
        wrong = _explore_mutants(args, best, options, args.store, runner)
        if wrong:
            return 1
    if args.tune and best is not None:
        from .solve import parse_schedule

        family, params = parse_schedule(found.candidates[best.key].schedule_text)
        machine = best.machine_description.get("model", "")
        written = write_winner(args.n, args.dtype, args.target, family, params, best.machine, machine, args.tuning)
        row = next(r for r in target_rows(read_table(written), args.target, best.machine)[args.dtype] if r[0] == args.n)
        print(f"wrote {written}: {family} {params} for n <= {args.n}, proved legal for n in {row[3][0]}..{row[3][1]}")
    return 1 if any(r.status == "wrong" for r in found.records) else 0


def _best_line(best, candidate, ceiling: float | None) -> str:
    """'best: TEXT (rate...)', TEXT as `polyfw solve --schedule` takes it (its run settings
    included), and the run options it cannot carry named."""
    from .solve import RUN_SETTINGS
    from .space import DEFAULT_OPTIONS

    text = candidate.schedule_text if candidate is not None else best.key
    left_out = [item for item in best.key.split(";")[1:] if item.partition("=")[0] not in RUN_SETTINGS
                and DEFAULT_OPTIONS.get(item.partition("=")[0]) != item.partition("=")[2]]
    rate = f"{best.rate / 1e9:.2f} G relaxations/s" + (
        f" = {best.rate / ceiling:.0%} of the ceiling" if ceiling else "")
    solve = "polyfw solve --schedule takes it as is" + (
        f", without the run options {', '.join(left_out)}" if left_out else "")
    return f"best: {text} ({rate}; {solve})"


def _cmd_demo(args: argparse.Namespace) -> int:
    from tiling.report import dependence_report

    print(dependence_report(None))
    args.input, args.n, args.target = None, None, "cpu"
    args.schedules = DEMO_SCHEDULES
    return _cmd_compare(args)


DEMO_SCHEDULES = "classic;generalized:kappa=2;generalized:kappa=4;recursive"


def _family_options(parser: argparse.ArgumentParser, tree: bool = False) -> None:
    """The family, n, and one flag per declared family parameter (schedules.parameters)."""
    from schedules.parameters import FAMILY_PARAMETERS

    parser.add_argument("family", nargs="?" if tree else None, help=", ".join(FAMILY_PARAMETERS))
    parser.add_argument("--n", type=int, required=not tree, default=None, help="problem size")
    seen: dict[str, list[str]] = {}
    for family, parameters in FAMILY_PARAMETERS.items():
        for declared in parameters:
            seen.setdefault(declared.name, []).append(family)
    for family, parameters in FAMILY_PARAMETERS.items():
        for declared in parameters:
            if seen[declared.name] and seen[declared.name][0] == family:
                owners = seen[declared.name]
                parser.add_argument(f"--{declared.name.replace('_', '-')}", default=None, metavar="VALUE",
                                    help=f"{'/'.join(owners)}: {declared.help} ({declared.describe()})")
    if tree:
        parser.add_argument("--tree", default=None, metavar="FILE",
                            help="a schedule tree in isl's text form ('-': standard input), as polyfw show prints it: "
                                 "over the points S[k,i,j], or over the tile-layers T[kb,ib,jb] with its tile size")


def _schedule_from(args: argparse.Namespace):
    from schedules.families import build
    from schedules.schedule import from_tree

    if getattr(args, "tree", None):
        if args.family:
            raise UsageError("give either a family or --tree FILE, not both")
        tile = getattr(args, "tile", None)
        if args.tree == "-":
            return from_tree(sys.stdin.read(), args.n, name="stdin", tile=None if tile is None else int(tile))
        with open(args.tree) as handle:
            return from_tree(handle.read(), args.n, name=args.tree, tile=None if tile is None else int(tile))
    if not args.family:
        raise UsageError("name a schedule family (see 'polyfw schedules') or give --tree FILE")
    from schedules.parameters import FAMILY_PARAMETERS, parameter

    names = {declared.name for parameters in FAMILY_PARAMETERS.values() for declared in parameters}
    given = {name: getattr(args, name) for name in sorted(names) if getattr(args, name, None) is not None}
    for name in given:
        parameter(args.family, name)  # a flag the family does not declare is refused by name
    tile = given.pop("tile", None)
    return build(args.family, args.n, None if tile is None else parameter(args.family, "tile").parse(tile,
                                                                                                  args.family),
                 **given)


def _cmd_schedules(args: argparse.Namespace) -> int:
    from schedules.parameters import FAMILY_PARAMETERS

    for family, parameters in FAMILY_PARAMETERS.items():
        print(f"{family} (n: problem size)")
        for declared in parameters:
            default = "" if declared.default is None else declared.default
            if isinstance(default, tuple):
                default = "-".join(default)
            print(f"  {declared.name:<11} {declared.describe():<38} default {str(default) or '-':<22} {declared.help}")
    print("as text: family:key=value,... e.g. generalized:tile=64,kappa=4 or recursive:base=32,paired=false")
    print("any schedule tree in isl's text form: polyfw check --tree FILE --n N")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from schedules.legality import IllegalScheduleError, check

    schedule = _schedule_from(args)
    try:
        print(check(schedule, args.model))
    except IllegalScheduleError as error:
        print(error)
        return 1
    return 0


def _cmd_cost(args: argparse.Namespace) -> int:
    import json

    from schedules.cost import cost

    network = None
    if args.grid is not None:
        from schedules.distribute import Network

        rate = args.rate if args.rate is not None else _measured_rate(args.dtype)
        network = Network(args.latency * 1e-6, args.bandwidth * 1e9, rate, np.dtype(args.dtype).itemsize)
    report = cost(_schedule_from(args), procs=args.procs, runtime=args.runtime, grid=args.grid, network=network)
    print(json.dumps(report.as_dict()) if args.json else report.table())
    return 0


def _measured_rate(dtype: str) -> float:
    """One core's min-plus product rate measured on this CPU (the register-block search's)."""
    from codegen.register_blocks import choose_register_block

    choice = choose_register_block(dtype)
    if not choice.rates:
        raise UsageError(f"no measured rate for {dtype} on this CPU ({choice.source} block); give --rate")
    return max(choice.rates.values())


def _generalized_findings(schedule) -> list[str]:
    """What the checker says about seed 000's orderings, for this size."""
    from schedules.families import build
    from schedules.legality import find_violations

    n, tile, kappa = schedule.n, schedule.tile, schedule.params["kappa"]
    questions = [
        ("the reverse loop run ascending (l = 0 up)", dict(reverse="ascending")),
        ("the reverse loop and Rest(K) in one parallel stage (variant 'fused')", dict(variant="fused")),
        ("LeadRowCol(K,l) before LeadBlock(K,l)", dict(step_order=("LeadRowCol", "LeadBlock"))),
        ("Rest(K) before the forward loop", dict(part_order=("rest", "forward", "reverse"))),
    ]
    lines = []
    for question, options in questions:
        broken = find_violations(build("generalized", n, tile, kappa=kappa, **options))
        lines.append(f"  {question}: " + ("legal" if not broken else f"illegal ({broken[0].dependence})"))
    return lines


def _cmd_show(args: argparse.Namespace) -> int:
    """The tree exactly as --tree reads it back: '#' lines (comments to isl's reader) say what it
    is, then the tree on one line."""
    from schedules.cost import tile_view
    from schedules.draw import draw_block_order

    schedule = _schedule_from(args)
    level = args.level or ("tile" if schedule.tile_tree is not None else "point")
    if level == "tile" and schedule.tile_tree is None:
        raise UsageError(f"{schedule.name} is a tree over the points only; it has no tile level")
    size = "N" if schedule.n is None else schedule.n
    header = [schedule.name,
              f"schedule tree, {level} level, in isl's text form; polyfw check, cost, emit and show read it back "
              f"with --tree FILE --n {size}"]
    if schedule.family == "generalized":
        header += ["checker findings on seed 000's orderings:", *_generalized_findings(schedule)]
    print("\n".join(f"# {line}" for line in header))
    print(schedule.tree_file_text(level))
    if args.png:
        if schedule.n is None:
            raise UsageError("give --n to draw the block order")
        view = tile_view(schedule)  # the tile-layers, or the points of a tree over points only
        blocks = -(-schedule.n // view.tile)
        if blocks > args.max_blocks:
            raise ValueError(f"Q = {blocks} blocks per side is too many to draw; use at most --max-blocks {args.max_blocks}")
        draw_block_order(view, blocks, schedule.name, args.png)
        print(f"block order drawn to {args.png}", file=sys.stderr)
    return 0


DTYPE_NAMES = ["float32", "float64", "int32"]


def _compare_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tile", type=int, default=None,
                        help="block size r for every schedule (default: the schedule's, else 128 on cpu, 32 on GPUs)")
    parser.add_argument("--dtype", default="int32", choices=DTYPE_NAMES)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per schedule (the median is shown)")
    parser.add_argument("--vertices", type=int, default=None, help="road network: use only the first N vertices")
    parser.add_argument("--csv", default=None, help="write the table as CSV")
    parser.add_argument("--plot", default=None, help="draw relaxations/s per schedule to this PNG")


def _target_options(parser: argparse.ArgumentParser) -> None:
    """One flag per option any target declares (codegen.targets), grouped by target."""
    seen: set[str] = set()
    for target in TARGETS.values():
        fresh = [option for option in target.options if option.name not in seen]
        if not fresh:
            continue
        group = parser.add_argument_group(f"options of target {target.name}"
                                          + "".join(f", {other.name}" for other in TARGETS.values()
                                                    if other is not target and other.options == target.options))
        for option in fresh:
            seen.add(option.name)
            flag = f"--{option.name.replace('_', '-')}"
            if option.default is False:  # a switch
                group.add_argument(flag, action="store_const", const=True, default=None, help=option.help)
                continue
            default = "" if option.default is None else f" (default {option.default})"
            group.add_argument(flag, type=option.parse, default=None, choices=option.choices or None,
                               help=option.help + default)


def _pair_of_ints(text: str) -> tuple[int, int]:
    from codegen.targets import _pair

    return _pair(text)


def _mpi_layout_options(parser) -> None:
    parser.add_argument("--grid", type=_pair_of_ints, default=None,
                        help="PRxPC processes (default: the squarest grid for the number started)")
    parser.add_argument("--placement", default=None, choices=("block-cyclic", "strips"),
                        help="block-cyclic (default): block (i, j) on process (i mod pr, j mod pc); strips: "
                             "contiguous block rows")
    parser.add_argument("--no-lookahead", action="store_true",
                        help="run the tile-layers in the schedule's order, without computing the next pivot "
                             "row and column first")


def _given_options(args: argparse.Namespace) -> dict:
    """The target options given on the command line (generate refuses those the target lacks)."""
    names = {option.name for target in TARGETS.values() for option in target.options}
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


class UsageError(ValueError):
    """Arguments that parse but do not go together: exit status 2, like argparse's own."""


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line and exit status 2, for the command and every subcommand."""

    def error(self, message: str):
        self.exit(2, f"polyfw: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="polyfw", description="Polyhedral schedules for Floyd-Warshall.")
    parser.add_argument("--debug", action="store_true", help="show the traceback of a failure")
    commands = parser.add_subparsers(dest="command", required=True)

    deps = commands.add_parser("deps", help="print the exact and relaxed dependence models")
    deps.add_argument("--n", type=int, default=None, help="concrete problem size (default: parametric n)")
    deps.set_defaults(run=_cmd_deps)

    info = commands.add_parser("info", help="the CPU, its ISA and vector width, and the register blocks chosen on it")
    info.add_argument("--measure", action="store_true", help="measure the blocks not measured yet on this CPU")
    info.set_defaults(run=_cmd_info)

    solve = commands.add_parser("solve", help="all-pairs shortest paths of a graph file")
    solve.add_argument("input", help="DIMACS .gr or Matrix Market .mtx file (or .npy under MPI)")
    solve.add_argument("-o", "--output", required=True,
                       help="where to save the distance matrix: .npy, or .csv (unreachable as inf)")
    solve.add_argument("--predecessors", default=None, metavar="P.npy",
                       help="also save predecessors (scipy's convention), .npy or .csv")
    solve.add_argument("--schedule", default="auto", help="auto, or family[:key=value,...], e.g. generalized:kappa=4")
    solve.add_argument("--tile", type=int, default=None, help="block size r (default: the schedule's or 128)")
    solve.add_argument("--kappa", type=int, default=None, help="generalized: block layers per group")
    solve.add_argument("--target", default="cpu", choices=list(TARGETS),
                       help="cudasim needs NUMBA_ENABLE_CUDASIM=1 in the environment")
    solve.add_argument("--dtype", default="auto", choices=["auto"] + DTYPE_NAMES + ["uint8"],
                       help="auto (default): int32 where exact, else float64 (float32 on GPUs), saved as float64 "
                            "with inf; a named dtype is computed in and saved; uint8 for or-and")
    solve.add_argument("--undirected", action="store_true", help="use every edge in both directions")
    solve.add_argument("--semiring", default="min-plus", choices=list(SEMIRINGS),
                       help="min-plus: shortest paths; max-min: widest; min-max: minimax; or-and: reachability")
    solve.add_argument("--method", default="auto", choices=("dense", "sparse", "auto"),
                       help="dense: Floyd-Warshall by the schedule; sparse: Johnson; auto (default): the faster by "
                            "the cost model (dense where --schedule, --tile or --kappa is given)")
    distributed = solve.add_argument_group(
        "MPI (under mpiexec, or with --mpi): the processes form a grid and share the work; the input may "
        "also be an n x n .npy weight matrix every process reads its blocks of; -o is written by all of them")
    distributed.add_argument("--mpi", action="store_true", help="run distributed even outside mpiexec (one process)")
    _mpi_layout_options(distributed)
    distributed.add_argument("--no-skip-inf", action="store_true",
                             help="update blocks with nothing reachable too (for comparison)")
    distributed.add_argument("--threads", type=int, default=None,
                             help="threads per process (default: the node's cores over its processes)")
    solve.set_defaults(run=_cmd_solve)

    mpi_info = commands.add_parser("mpi-info", help="the MPI world, its process grid, and a schedule's messages on it")
    _mpi_layout_options(mpi_info)
    mpi_info.add_argument("--n", type=int, default=None, help="also show each rank's share of a problem this size")
    mpi_info.add_argument("--family", default="classic", help="the schedule family for --n")
    mpi_info.add_argument("--tile", type=int, default=128)
    mpi_info.add_argument("--dtype", default="float64", choices=DTYPE_NAMES)
    mpi_info.set_defaults(run=_cmd_mpi_info)

    for name, what in (("bfs", "breadth-first levels"), ("sssp", "single-source shortest distances")):
        search = commands.add_parser(name, help=f"{what} from one vertex of a graph file")
        search.add_argument("input", help="DIMACS .gr or Matrix Market .mtx file")
        search.add_argument("--source", type=int, required=True,
                            help="the source vertex, numbered as in the file (from 1 in .gr and .mtx)")
        search.add_argument("-o", "--output", required=True, help="where to save the result (.npy)")
        search.add_argument("--parents", default=None, metavar="P.npy", help="also save the parent of each vertex")
        search.add_argument("--undirected", action="store_true", help="use every edge in both directions")
        search.set_defaults(run=_cmd_search)

    emit = commands.add_parser("emit", help="print the generated code of a schedule and isl's C AST")
    _family_options(emit, tree=True)
    emit.add_argument("--target", default="cpu", choices=list(TARGETS),
                      help="cudasim needs NUMBA_ENABLE_CUDASIM=1 in the environment")
    _target_options(emit)
    emit.add_argument("--dtype", default="float32", choices=DTYPE_NAMES)
    emit.add_argument("--kernels", action="store_true", help="also print the tile kernel module")
    emit.set_defaults(run=_cmd_emit)

    comparison = commands.add_parser("compare", help="verify and time schedules against scipy and the naive kernel")
    _compare_options(comparison)
    comparison.add_argument("input", nargs="?", default=None, help="graph file (default: the built-in road network)")
    comparison.add_argument("--n", type=int, default=None, help="use a random graph with N vertices instead")
    comparison.add_argument("--schedules", default=DEMO_SCHEDULES,
                            help="';'-separated family[:key=value,...] list (default: %(default)s)")
    comparison.add_argument("--target", default="cpu", choices=list(TARGETS),
                            help="cudasim needs NUMBA_ENABLE_CUDASIM=1 in the environment")
    comparison.set_defaults(run=_cmd_compare)

    exploration = commands.add_parser(
        "explore", help="search the schedule space: prove, verify and time candidates, store them, rate the model")
    exploration.add_argument("--n", type=int, default=2048, help="problem size (a random graph, 4n arcs)")
    exploration.add_argument("--dtype", default="float32", choices=DTYPE_NAMES)
    exploration.add_argument("--target", default="cpu", choices=("cpu", "cudasim", "cuda", "mpi"),
                             help="cudasim needs NUMBA_ENABLE_CUDASIM=1 and a tiny n; mpi: run under "
                                  "mpiexec -n P (rank 0 searches, every rank runs each candidate)")
    exploration.add_argument("--strategy", default="model", choices=("exhaustive", "random", "model"),
                             help="model: rank by the cost model, measure the top, refine around the best")
    exploration.add_argument("--budget", type=_budget_seconds, default=None, help="time budget, e.g. 300s or 5m")
    exploration.add_argument("--max-candidates", type=int, default=None, help="candidate budget")
    exploration.add_argument("--families", default="classic,generalized,recursive")
    exploration.add_argument("--axis", type=_axis, action="append", default=[], metavar="NAME=V1,V2",
                             help="narrow an axis, e.g. --axis tile=64,128 --axis kappa=1,2,4 (repeatable)")
    exploration.add_argument("--register-blocks", nargs="+", default=None, metavar="RxV",
                             help="cpu: also search these register blocks (rows x vectors)")
    exploration.add_argument("--top", type=int, default=8, help="model: how many of its best to measure first")
    exploration.add_argument("--repeats", type=int, default=3, help="timed runs per candidate (median)")
    exploration.add_argument("--seed", type=int, default=0, help="the graph's and the random order's seed")
    exploration.add_argument("--store", default="polyfw-explore.sqlite", help="the results store (SQLite)")
    exploration.add_argument("--rerun", action="store_true", help="measure again what the store has for this machine")
    exploration.add_argument("--export", default=None, help="also write the whole store to this .csv or .json")
    exploration.add_argument("--plot", default="polyfw-explore.png", help="Pareto and predicted-vs-measured plot")
    exploration.add_argument("--tune", action="store_true",
                             help="write the winner, proved for the sizes it stands for, into the user's tuning "
                                  "table solve(schedule='auto') reads over the shipped one")
    exploration.add_argument("--tuning", default=None, metavar="FILE",
                             help="the table --tune writes (default: $POLYFW_TUNING, else tuning.json in the user "
                                  "data directory)")
    exploration.add_argument("--mutate", action="store_true",
                             help="also mutate the families' trees: prove, verify and time the novel legal orders")
    exploration.add_argument("--no-ceiling", dest="ceiling", action="store_false",
                             help="skip measuring the independent min-plus ceiling (needs g++)")
    exploration.set_defaults(run=_cmd_explore)

    listing = commands.add_parser("schedules", help="list the schedule families and their parameters")
    listing.set_defaults(run=_cmd_schedules)

    check = commands.add_parser("check", help="prove a schedule legal, or print a witness (exit 1)")
    _family_options(check, tree=True)
    check.add_argument("--model", default="relaxed", choices=["relaxed", "exact"])
    check.set_defaults(run=_cmd_check)

    cost = commands.add_parser("cost", help="cost model: stages, launches, traffic, critical path, time on P processors")
    _family_options(cost, tree=True)
    cost.add_argument("--procs", type=int, default=1, help="processors for the simulation")
    cost.add_argument("--runtime", choices=("barrier", "dataflow"), default="barrier",
                      help="a barrier after each stage, or each tile-layer once its predecessors are done")
    cost.add_argument("--grid", type=_pair_of_ints, default=None,
                      help="PRxPC: also the messages, bytes and alpha-beta times on that MPI process grid")
    cost.add_argument("--latency", type=float, default=2.0, help="--grid: network latency alpha in microseconds")
    cost.add_argument("--bandwidth", type=float, default=10.0, help="--grid: link bandwidth in GB/s")
    cost.add_argument("--rate", type=float, default=None,
                      help="--grid: relaxations/s of one process (default: measured on this CPU)")
    cost.add_argument("--dtype", default="float32", choices=DTYPE_NAMES, help="--grid: element type")
    cost.add_argument("--json", action="store_true", help="print one JSON object")
    cost.set_defaults(run=_cmd_cost)

    show = commands.add_parser("show", help="print the schedule tree (as --tree reads it back) and draw its "
                                            "block order")
    _family_options(show, tree=True)
    show.add_argument("--level", default=None, choices=("tile", "point"),
                      help="the tree over the tile-layers T[kb,ib,jb] (default where there is one) or over the "
                           "points S[k,i,j] (what the generated code runs)")
    show.add_argument("--png", default=None, help="draw which block runs in which stage to this PNG")
    show.add_argument("--max-blocks", type=int, default=16)
    show.set_defaults(run=_cmd_show)

    demo = commands.add_parser("demo", help="dependence analysis, then compare the schedules on the road network")
    _compare_options(demo)
    demo.set_defaults(run=_cmd_demo, csv="demo_compare.csv", plot="demo_compare.png")
    return parser


#: the exit status of a command whose reader closed the pipe (a process killed by SIGPIPE: 128 + 13)
READER_GONE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; a failure is one line 'polyfw: error: ...' and exit status 1 (usage errors: 2).
    Output cut short by its reader (polyfw deps | head -1) ends quietly, status READER_GONE."""
    try:
        try:
            args = build_parser().parse_args(argv)
        finally:
            sys.stdout.flush()  # --help into a closed pipe fails here, not at exit
        status = _run(args)
        sys.stdout.flush()  # what is still buffered fails here, not at exit
        return status
    except BrokenPipeError:
        # nothing more can be written to the reader; point stdout at devnull so the interpreter's
        # own flush at exit stays quiet too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return READER_GONE


def _run(args: argparse.Namespace) -> int:
    try:
        return args.run(args)
    except BrokenPipeError:
        raise  # main's: the reader went away, not a failure to report
    except Exception as error:  # noqa: BLE001 - every failure reaches the user as one line
        if args.debug:
            raise
        lines = str(error).strip().splitlines() or [type(error).__name__]
        more = " (--debug shows the rest)" if len(lines) > 1 else ""
        print(f"polyfw: error: {lines[0]}{more}", file=sys.stderr)
        return 2 if isinstance(error, UsageError) else 1


if __name__ == "__main__":
    sys.exit(main())
