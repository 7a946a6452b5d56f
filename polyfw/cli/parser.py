"""The `polyfw` command line's parser: one small function per subcommand, and the flags of what is
registered (targets and their options, semirings, strategies and their settings, families and
their parameters) generated from the registries where each is declared.

A run builds the flags of its own command only, and imports only its own handler's module: the
registries of CUDA architectures, strategies and calibration import CUDA, the explorer and scipy,
which `polyfw solve` never needs (about a second of its start)."""
from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any

from codegen.targets import TARGETS, find_target, parse_pair
from schedules.distribute import PLACEMENTS
from schedules.families import FAMILIES
from tiling.semirings import SEMIRINGS

from ..graphs import SHORTEST_PATH_DTYPES
from ..method import SOLVE_METHODS

#: the kernel dtypes by name (what every target but a semiring's own computes in)
DTYPE_NAMES = [dtype.name for dtype in SHORTEST_PATH_DTYPES]
#: what `polyfw demo` and `polyfw compare` run by default
DEMO_SCHEDULES = "classic;generalized:kappa=2;generalized:kappa=4;recursive"


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line and exit status 2, for the command and every subcommand."""

    def error(self, message: str):
        self.exit(2, f"polyfw: error: {message} (see {self.prog} --help)\n")


# ---------------------------------------------------------------- flags generated from the registries


def _registered(items) -> str:
    """'name: help; name: help' of registered declarations, for a flag's help (argparse's % escaped)."""
    return "; ".join(f"{item.name}: {item.help}" for item in items).replace("%", "%%")


def target_flag(parser: argparse.ArgumentParser, default: str = "cpu") -> None:
    """--target, one of the registered targets (codegen.targets)."""
    parser.add_argument("--target", default=default, choices=list(TARGETS),
                        help=f"where the code runs (default: {default}): {_registered(TARGETS.values())}")


def target_option_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per option any target declares, grouped by target."""
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
            if option.default is False:  # a switch
                group.add_argument(option.flag, action="store_const", const=True, default=None, help=option.help)
                continue
            default = "" if option.default is None else f" (default {option.default})"
            group.add_argument(option.flag, type=option.parse, default=None, choices=option.choices or None,
                               help=option.help + default)


def semiring_flag(parser: argparse.ArgumentParser) -> None:
    """--semiring, one of the registered semirings (tiling.semirings)."""
    meanings = "; ".join(f"{ring.name}: {ring.meaning}" for ring in SEMIRINGS.values())
    parser.add_argument("--semiring", default="min-plus", choices=list(SEMIRINGS), help=meanings.replace("%", "%%"))


def _knobs(registry, declared_by) -> list[tuple[Any, list[str]]]:
    """Each knob (option, parameter) the registered declarations take, once by name: its first
    declaration and the names of all that declare it, in the order they first appear."""
    found: dict[str, tuple[Any, list[str]]] = {}
    for declaration in registry.values():
        for knob in declared_by(declaration):
            found.setdefault(knob.name, (knob, []))[1].append(declaration.name)
    return list(found.values())


def strategy_flags(parser: argparse.ArgumentParser) -> None:
    """--strategy, one of the registered strategies, and one flag per setting any of them takes."""
    from ..explore import STRATEGIES

    parser.add_argument("--strategy", default="model", choices=list(STRATEGIES),
                        help=_registered(STRATEGIES.values()))
    for option, owners in _knobs(STRATEGIES, lambda strategy: strategy.options):
        parser.add_argument(option.flag, type=option.parse, default=None,
                            help=f"{'/'.join(owners)}: {option.help} (default {option.default})")


def family_flags(parser: argparse.ArgumentParser, tree: bool = False) -> None:
    """The family, n, and one flag per parameter a registered family declares (schedules.families)."""
    parser.add_argument("family", nargs="?" if tree else None, help=", ".join(FAMILIES))
    parser.add_argument("--n", type=int, required=not tree, default=None, help="problem size")
    for declared, owners in _knobs(FAMILIES, lambda family: family.parameters):
        parser.add_argument(f"--{declared.name.replace('_', '-')}", default=None, metavar="VALUE",
                            help=f"{'/'.join(owners)}: {declared.help} ({declared.describe()})")
    if tree:
        parser.add_argument("--tree", default=None, metavar="FILE",
                            help="a schedule tree in isl's text form ('-': standard input), as polyfw show prints it: "
                                 "over the points S[k,i,j], or over the tile-layers T[kb,ib,jb] with its tile size")


def _budget_seconds(text: str) -> float:
    """'300s', '5m', '1h' or a number of seconds, more than none."""
    units = {"s": 1, "m": 60, "h": 3600}
    text = text.strip().lower()
    scale = units.get(text[-1:], None)
    try:
        seconds = float(text[:-1] if scale else text) * (scale or 1)
    except ValueError:
        seconds = None
    if seconds is None or not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"a budget is a positive time like 300s, 5m or 1h, got {text!r}")
    return seconds


def _positive(text: str) -> int:
    """An int of at least 1 (a size, a count, an id)."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"an int of at least 1, got {text!r}")
    return value


def _axis(text: str) -> tuple[str, list[str]]:
    name, equals, values = text.partition("=")
    if not equals or not values:
        raise argparse.ArgumentTypeError(f"an axis is name=value,value,... (e.g. kappa=1,2,4), got {text!r}")
    return name.strip(), [v.strip() for v in values.split(",") if v.strip()]


def _process_grid_flags(parser) -> None:
    parser.add_argument("--grid", type=parse_pair, default=None,
                        help="PRxPC processes (default: the squarest grid for the number started)")
    parser.add_argument("--placement", default=None, choices=PLACEMENTS,
                        help="block-cyclic (default): block (i, j) on process (i mod pr, j mod pc); strips: "
                             "contiguous block rows")
    parser.add_argument("--no-lookahead", action="store_true",
                        help="run the tile-layers in the schedule's order, without computing the next pivot "
                             "row and column first")


def _compare_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tile", type=int, default=None,
                        help="block size r for every schedule (default: the schedule's, else the target's)")
    parser.add_argument("--dtype", default="int32", choices=DTYPE_NAMES)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per schedule (the median is shown)")
    parser.add_argument("--vertices", type=int, default=None, help="road network: use only the first N vertices")
    parser.add_argument("--csv", default=None, help="write the table as CSV")
    parser.add_argument("--plot", default=None, help="draw relaxations/s per schedule to this PNG")


# ---------------------------------------------------------------- one function per subcommand


def _deps(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, default=None, help="concrete problem size (default: parametric n)")


def _info(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--measure", action="store_true", help="measure the blocks not measured yet on this CPU")


def _docs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pages", nargs="*", help="the Markdown pages whose registry tables are rendered "
                                                 "(default: docs/*.md of the current directory)")
    parser.add_argument("--write", action="store_true", help="write them into the pages (else print the pages "
                                                              "that hold tables, as rendered)")


def _solve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="DIMACS .gr or Matrix Market .mtx file (or .npy under MPI)")
    parser.add_argument("-o", "--output", required=True,
                        help="where to save the distance matrix: .npy, or .csv (unreachable as inf)")
    parser.add_argument("--predecessors", default=None, metavar="P.npy",
                        help="also save predecessors (scipy's convention), .npy or .csv")
    parser.add_argument("--schedule", default="auto", help="auto, or family[:key=value,...], e.g. generalized:kappa=4")
    parser.add_argument("--tile", type=int, default=None, help="block size r (default: the schedule's or the target's)")
    parser.add_argument("--kappa", type=int, default=None, help="generalized: block layers per group")
    target_flag(parser)
    dtypes = dict.fromkeys(["auto", *DTYPE_NAMES, *(dtype for ring in SEMIRINGS.values() for dtype in ring.dtypes)])
    parser.add_argument("--dtype", default="auto", choices=list(dtypes),
                        help="auto (default): the narrowest exact type (int16, int32, float32, float64) the target "
                             "offers, saved as float64 with inf; a named dtype is computed in and saved (a "
                             "semiring's own: or-and's uint8)")
    parser.add_argument("--undirected", action="store_true", help="use every edge in both directions")
    semiring_flag(parser)
    parser.add_argument("--method", default="auto", choices=SOLVE_METHODS,
                        help="dense: Floyd-Warshall by the schedule; sparse: Johnson; auto (default): the faster by "
                             "the cost model (dense where --schedule, --tile or --kappa is given)")
    distributed = parser.add_argument_group(
        "MPI (under mpiexec, or with --mpi): the processes form a grid and share the work; the input may "
        "also be an n x n .npy weight matrix every process reads its blocks of; -o is written by all of them")
    distributed.add_argument("--mpi", action="store_true", help="run distributed even outside mpiexec (one process)")
    _process_grid_flags(distributed)
    distributed.add_argument("--no-skip-inf", action="store_true",
                             help="update blocks with nothing reachable too (for comparison)")
    distributed.add_argument("--threads", type=int, default=None,
                             help="threads per process (default: the node's cores over its processes)")


def _mpi_info(parser: argparse.ArgumentParser) -> None:
    _process_grid_flags(parser)
    parser.add_argument("--n", type=int, default=None, help="also show each rank's share of a problem this size")
    parser.add_argument("--family", default="classic", choices=list(FAMILIES), help="the schedule family for --n")
    parser.add_argument("--tile", type=int, default=128)
    parser.add_argument("--dtype", default="float64", choices=DTYPE_NAMES)


def _search(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="DIMACS .gr or Matrix Market .mtx file")
    parser.add_argument("--source", type=int, required=True,
                        help="the source vertex, numbered as in the file (from 1 in .gr and .mtx)")
    parser.add_argument("-o", "--output", required=True, help="where to save the result (.npy)")
    parser.add_argument("--parents", default=None, metavar="P.npy", help="also save the parent of each vertex")
    parser.add_argument("--undirected", action="store_true", help="use every edge in both directions")


def _emit(parser: argparse.ArgumentParser) -> None:
    family_flags(parser, tree=True)
    target_flag(parser)
    target_option_flags(parser)
    parser.add_argument("--dtype", default="float32", choices=DTYPE_NAMES)
    parser.add_argument("--kernels", action="store_true", help="also print the tile kernel module")
    parser.add_argument("--ptx", action="store_true",
                        help="print the PTX of every kernel instead, as one module (target cuda; no GPU needed)")
    _arch_flag(parser)


def _arch_flag(parser: argparse.ArgumentParser) -> None:
    from codegen.machine_code import ARCHITECTURES

    parser.add_argument("--arch", default="sm_90", choices=list(ARCHITECTURES),
                        help="the GPU architecture to compile for (default: %(default)s)")


def _gpu_report(parser: argparse.ArgumentParser) -> None:
    family_flags(parser, tree=True)
    target_option_flags(parser)
    parser.add_argument("--dtype", default="float32", choices=["float32", "int32", "uint8"])
    parser.add_argument("--sparse", action="store_true",
                        help="the sparse kernels instead of a schedule's: seed 002's BFS and Bellman-Ford, a thread "
                             "an edge or a vertex")
    _arch_flag(parser)
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the report as JSON")


def _compare(parser: argparse.ArgumentParser) -> None:
    _compare_flags(parser)
    parser.add_argument("input", nargs="?", default=None, help="graph file (default: the built-in road network)")
    parser.add_argument("--n", type=int, default=None, help="use a random graph with N vertices instead")
    parser.add_argument("--schedules", default=DEMO_SCHEDULES,
                        help="';'-separated family[:key=value,...] list (default: %(default)s)")
    target_flag(parser)


def _explore(parser: argparse.ArgumentParser) -> None:
    from ..explore import DEFAULT_STORE, default_families

    parser.add_argument("--n", type=_positive, default=2048, help="problem size (a random graph, 4n arcs)")
    parser.add_argument("--dtype", default="float32", choices=DTYPE_NAMES)
    target_flag(parser)
    semiring_flag(parser)
    strategy_flags(parser)
    parser.add_argument("--budget", type=_budget_seconds, default=None,
                        help="time budget of the whole command, e.g. 300s or 5m: it ends within the budget plus one "
                             "candidate's time (--mutate runs after it)")
    parser.add_argument("--max-candidates", type=_positive, default=None,
                        help="candidate budget: visit at most this many (with --resume: this many more)")
    parser.add_argument("--resume", nargs="?", type=_positive, const=True, default=False, metavar="ID",
                        help="continue the latest search in the store of the same problem, space, strategy and seed "
                             "(or search ID): what it visited is fed back to the strategy, only what is new is "
                             "measured")
    parser.add_argument("--families", default=None,
                        help=f"comma-separated families (default: {','.join(default_families())})")
    parser.add_argument("--axis", type=_axis, action="append", default=[], metavar="NAME=V1,V2",
                        help="narrow an axis, e.g. --axis tile=64,128 --axis kappa=1,2,4 (repeatable)")
    parser.add_argument("--register-blocks", nargs="+", default=None, metavar="RxV",
                        help="also search these register blocks (rows x vectors), on a target with that option")
    parser.add_argument("--repeats", type=_positive, default=3, help="timed runs per candidate (median)")
    parser.add_argument("--seed", type=int, default=0, help="the graph's and the random order's seed")
    parser.add_argument("--store", default=str(DEFAULT_STORE),
                        help="the results store, an SQLite file of measurements and searches (default: "
                             f"{DEFAULT_STORE} in the current directory)")
    parser.add_argument("--rerun", action="store_true", help="measure again what the store has for this machine")
    parser.add_argument("--export", default=None, help="also write the whole store to this .csv or .json")
    parser.add_argument("--plot", default=None, metavar="PNG",
                        help="draw the Pareto and predicted-vs-measured plot to this file (none unless given)")
    parser.add_argument("--compare-store", nargs=2, default=None, metavar=("A", "B"),
                        help="compare the measurements of A and B instead of exploring; each a store PATH, "
                             "PATH#MACHINE (one machine's records) or PATH@SEARCH_ID (one search's)")
    parser.add_argument("--tune", action="store_true",
                        help="write the winner, proved for the sizes it stands for, into the user's tuning "
                             "table solve(schedule='auto') reads over the shipped one")
    parser.add_argument("--tuning", default=None, metavar="FILE",
                        help="the table --tune writes (default: $POLYFW_TUNING, else tuning.json in the user "
                             "data directory)")
    parser.add_argument("--mutate", action="store_true",
                        help="also mutate the families' trees: prove, verify and time the novel legal orders")
    parser.add_argument("--no-calibrate", dest="calibrate", action="store_false",
                        help="rank by the model as it stands when this machine has no calibration for the dtype "
                             "(default: calibrate first, scaled to --n, and keep it in the store)")
    parser.add_argument("--no-ceiling", dest="ceiling", action="store_false",
                        help="skip measuring the independent min-plus ceiling (needs g++)")
    parser.add_argument("--runner", default="here", metavar="here|dask://HOST:PORT",
                        help="where candidates are verified and timed: in this process (default), or on the "
                             "workers of the dask.distributed scheduler at HOST:PORT, one at a time a worker, each "
                             "record naming the worker's machine (pip install polyfw[dask])")


def _check(parser: argparse.ArgumentParser) -> None:
    family_flags(parser, tree=True)
    parser.add_argument("--model", default="relaxed", choices=["relaxed", "exact"])


def _cost(parser: argparse.ArgumentParser) -> None:
    family_flags(parser, tree=True)
    parser.add_argument("--procs", type=int, default=1, help="processors for the simulation")
    parser.add_argument("--runtime", choices=find_target("cpu").option("runtime").choices, default="barrier",
                        help="a barrier after each stage, or each tile-layer once its predecessors are done")
    parser.add_argument("--explain", action="store_true",
                        help="the calibrated model's seconds on this machine (polyfw calibrate), by part: each "
                             "role's tile-layers, memory, waiting in stages, between stages, the runtime's own")
    parser.add_argument("--store", default=None,
                        help="--explain: the store to read the calibration from (default: the user's, where "
                             "polyfw calibrate writes)")
    parser.add_argument("--grid", type=parse_pair, default=None,
                        help="PRxPC: also the messages, bytes and alpha-beta times on that MPI process grid")
    parser.add_argument("--latency", type=float, default=2.0, help="--grid: network latency alpha in microseconds")
    parser.add_argument("--bandwidth", type=float, default=10.0, help="--grid: link bandwidth in GB/s")
    parser.add_argument("--rate", type=float, default=None,
                        help="--grid: relaxations/s of one process (default: measured on this CPU)")
    parser.add_argument("--dtype", default="float32", choices=DTYPE_NAMES, help="--grid, --explain: element type")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _calibrate(parser: argparse.ArgumentParser) -> None:
    from ..machine.calibrate import DEFAULT_DTYPES

    parser.add_argument("--dtype", nargs="+", default=list(DEFAULT_DTYPES), choices=DTYPE_NAMES,
                        help=f"element types to calibrate (default: {' '.join(DEFAULT_DTYPES)}; about 20 s each)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="rounds of the in-cache measurements (the fastest of each counts; fewer at larger sizes)")
    parser.add_argument("--store", default=None,
                        help="the results store to add the calibration to (default: $POLYFW_STORE, else "
                             "polyfw-explore.sqlite in the user data directory; explore, cost --explain and "
                             "solve read it from there)")


def _show(parser: argparse.ArgumentParser) -> None:
    family_flags(parser, tree=True)
    parser.add_argument("--level", default=None, choices=("tile", "point"),
                        help="the tree over the tile-layers T[kb,ib,jb] (default where there is one) or over the "
                             "points S[k,i,j] (what the generated code runs)")
    parser.add_argument("--png", default=None, help="draw which block runs in which stage to this PNG")
    parser.add_argument("--max-blocks", type=int, default=16)


def _demo(parser: argparse.ArgumentParser) -> None:
    _compare_flags(parser)
    parser.set_defaults(csv="demo_compare.csv", plot="demo_compare.png", input=None, n=None, target="cpu",
                        schedules=DEMO_SCHEDULES)


class _Handler:
    """A command's handler, by the module of polyfw.cli that holds it: imported when the command runs."""

    def __init__(self, where: str):
        """where: 'module.function' in polyfw.cli."""
        self.module, self.function = where.split(".")

    def __call__(self, args: argparse.Namespace) -> int:
        return getattr(import_module(f"{__package__}.{self.module}"), self.function)(args)


#: every subcommand: its name, its help, the function that adds its flags, and its handler
Command = tuple[str, str, Callable[[argparse.ArgumentParser], None], _Handler]
COMMANDS: tuple[Command, ...] = (
    ("deps", "print the exact and relaxed dependence models", _deps, _Handler("commands.cmd_deps")),
    ("info", "the CPU, its ISA and vector width, and the register blocks chosen on it",
     _info, _Handler("commands.cmd_info")),
    ("docs", "the documentation's tables of the registered targets, families, semirings and strategies", _docs,
     _Handler("commands.cmd_docs")),
    ("solve", "all-pairs shortest paths of a graph file", _solve, _Handler("solving.cmd_solve")),
    ("mpi-info", "the MPI world, its process grid, and a schedule's messages on it", _mpi_info,
     _Handler("solving.cmd_mpi_info")),
    ("bfs", "breadth-first levels from one vertex of a graph file", _search, _Handler("solving.cmd_search")),
    ("sssp", "single-source shortest distances from one vertex of a graph file",
     _search, _Handler("solving.cmd_search")),
    ("emit", "print the generated code of a schedule and isl's C AST", _emit, _Handler("commands.cmd_emit")),
    ("gpu-report", "what each CUDA kernel of a schedule compiles to (no GPU needed): registers, spills, shared "
     "memory, blocks per SM, SASS instructions per relaxation in its hot loop", _gpu_report,
     _Handler("commands.cmd_gpu_report")),
    ("compare", "verify and time schedules against scipy and the naive kernel",
     _compare, _Handler("commands.cmd_compare")),
    ("explore", "search the schedule space: prove, verify and time candidates, store them, rate the model", _explore,
     _Handler("commands.cmd_explore")),
    ("schedules", "list the schedule families and their parameters",
     lambda parser: None, _Handler("commands.cmd_schedules")),
    ("check", "prove a schedule legal, or print a witness (exit 1)", _check, _Handler("commands.cmd_check")),
    ("cost", "cost model: stages, launches, traffic, critical path, time on P processors; --explain: the "
     "calibrated seconds by part", _cost, _Handler("commands.cmd_cost")),
    ("calibrate", "measure the parts the exploration model is made of on this machine (under a minute) and store "
     "them", _calibrate, _Handler("commands.cmd_calibrate")),
    ("show", "print the schedule tree (as --tree reads it back) and draw its block order",
     _show, _Handler("commands.cmd_show")),
    ("demo", "dependence analysis, then compare the schedules on the road network",
     _demo, _Handler("commands.cmd_demo")),
)


def command_in(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` runs (its first word that names one), or None (--help, a mistake)."""
    names = {name for name, *_ in COMMANDS}
    return next((word for word in argv if word in names), None)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand; given `command`, only that one gets its flags (the others keep
    their names and help, for --help and for naming a mistake)."""
    parser = _Parser(prog="polyfw", description="Polyhedral schedules for Floyd-Warshall.")
    parser.add_argument("--debug", action="store_true", help="show the traceback of a failure")
    subcommands = parser.add_subparsers(dest="command", required=True)
    for name, help, add_flags, run in COMMANDS:
        subcommand = subcommands.add_parser(name, help=help)
        if command is None or command == name:
            add_flags(subcommand)
        subcommand.set_defaults(run=run)
    return parser
