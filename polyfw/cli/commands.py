"""The handlers of the commands that analyse, compile, compare and explore schedules: each translates its
arguments, calls polyfw's API and prints what it gave (solving and searching graphs: cli.solving)."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numba
import numpy as np

from codegen import generate
from codegen.cpu import driver_form
from codegen.machine_code import gpu_report, kernel_ptx, merged_ptx
from codegen.register_blocks import cpu_key
from codegen.targets import TARGETS, find_target
from schedules.cost import cost, tile_view
from schedules.families import FAMILIES, build
from schedules.legality import IllegalScheduleError, check
from schedules.parameters import parameter
from schedules.predict import predict
from schedules.report import tree_listing
from schedules.schedule import from_tree
from tiling.report import dependence_report
from tiling.semirings import MIN_PLUS

from ..comparison import compare, plot, table, write_csv
from ..explore import RunHere, Space, Store, best_line, explore, find_strategy, label, quality_line, tune
from ..explore import table as exploration_table
from ..explore.axes import check_axes
from ..explore.compare import compare_stores
from ..explore.dask_runner import runner_for
from ..explore.model import calibration_for
from ..explore.mpi import Team, serve
from ..explore.mutants import explore_mutants, measure_novel, summary
from ..explore.plots import plot_exploration
from ..explore.runners import Problem
from ..graphs import as_dense, minnesota_road_graph, random_graph, read_graph
from ..machine.calibrate import calibrate, calibration_parts, ensure_calibrated, memory_bandwidth
from ..machine.calibrations import calibration_store, save
from ..machine.ceiling import measure as measure_ceiling
from ..machine.info import machine_report
from ..progress import bar as progress_bar
from ..progress import say_above
from .registry_tables import registered, render, unplaced_tables
from .usage import UsageError


def cmd_deps(args: argparse.Namespace) -> int:
    print(dependence_report(args.n))
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    print(machine_report(measure=args.measure))
    print(registered())
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    pages = [Path(page) for page in args.pages] or sorted(Path("docs").glob("*.md"))
    texts = {page: page.read_text() for page in pages}
    unplaced = unplaced_tables(list(texts.values()))
    if unplaced:
        raise UsageError(f"no page of {', '.join(map(str, pages)) or '(none)'} holds the table of "
                         f"{', '.join(unplaced)}: give the pages of docs/ (run from the source tree's root)")
    rendered = {page: render(text) for page, text in texts.items()}
    if not args.write:
        print("".join(text for text in rendered.values() if "<!-- registry:" in text), end="")
        return 0
    for page, text in rendered.items():
        if text != texts[page]:
            page.write_text(text)
            print(f"wrote the registry tables into {page}")
    return 0


# ---------------------------------------------------------------- schedules


def schedule_from(args: argparse.Namespace, target: str | None = None):
    """The schedule the arguments name: a tree file (--tree), or a family with its parameters'
    flags (each one the family declares; one it does not is refused by name). Given a target, a
    family's tile (or base) left out is the target's default tile."""
    if getattr(args, "tree", None):
        if args.family:
            raise UsageError("give either a family or --tree FILE, not both")
        tile = getattr(args, "tile", None)
        tile = None if tile is None else int(tile)
        if args.tree == "-":
            return from_tree(sys.stdin.read(), args.n, name="stdin", tile=tile)
        with open(args.tree) as handle:
            return from_tree(handle.read(), args.n, name=args.tree, tile=tile)
    if not args.family:
        raise UsageError("name a schedule family (see 'polyfw schedules') or give --tree FILE")
    names = {declared.name for family in FAMILIES.values() for declared in family.parameters}
    given = {name: getattr(args, name) for name in sorted(names) if getattr(args, name, None) is not None}
    for name in given:
        parameter(args.family, name)  # a flag the family does not declare is refused by name
    size = FAMILIES[args.family].size if args.family in FAMILIES else None
    if target is not None and size is not None and size not in given:
        given[size] = find_target(target).default_tile
    tile = given.pop("tile", None)
    return build(args.family, args.n, None if tile is None else parameter(args.family, "tile").parse(tile, args.family),
                 **given)


def cmd_schedules(args: argparse.Namespace) -> int:
    for family in FAMILIES.values():
        print(f"{family.name} (n: problem size): {family.help}")
        for declared in family.parameters:
            default = "" if declared.default is None else declared.default
            if isinstance(default, tuple):
                default = "-".join(default)
            print(f"  {declared.name:<11} {declared.describe():<38} default {str(default) or '-':<22} {declared.help}")
    print("as text: family:key=value,... e.g. generalized:tile=64,kappa=4 or recursive:base=32,paired=false")
    print("any schedule tree in isl's text form: polyfw check --tree FILE --n N")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    try:
        print(check(schedule_from(args), args.model))
    except IllegalScheduleError as error:
        print(error)
        return 1
    return 0


def cmd_cost(args: argparse.Namespace) -> int:
    network = None
    if args.grid is not None:
        from schedules.distribute import Network

        rate = args.rate if args.rate is not None else _measured_rate(args.dtype)
        network = Network(args.latency * 1e-6, args.bandwidth * 1e9, rate, np.dtype(args.dtype).itemsize)
    schedule = schedule_from(args)
    simulated = "barrier" if args.runtime == "barrier" else "dataflow"
    report = cost(schedule, procs=args.procs, runtime=simulated, grid=args.grid, network=network)
    print(json.dumps(report.as_dict()) if args.json else report.table())
    if args.explain:
        print(_explained(schedule, args.dtype, args.runtime, args.store))
    return 0


def _explained(schedule, dtype: str, runtime: str, store: str | None) -> str:
    """The calibrated model's seconds for `schedule` on this machine, by part, with where the calibration came from."""
    if schedule.n is None:
        raise UsageError("--explain needs a concrete --n")
    threads = numba.get_num_threads()
    calibration = calibration_for(dtype, threads, store)
    source = ("calibrated on this machine" if calibration.measured else
              f"NOT calibrated for {dtype} on {threads} threads (run `polyfw calibrate --dtype {dtype}`): every "
              "role and tile at the register block's one-thread rate, no overheads")
    prediction = predict(tile_view(schedule), calibration, runtime, driver_form(schedule.n, schedule.tile))
    return f"predicted seconds, {dtype}, {source}:\n{prediction.explain()}"


def cmd_calibrate(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    bandwidth = memory_bandwidth()
    print(f"memory bandwidth (a 256 MB copy, read and written): {bandwidth / 1e9:.1f} GB/s", flush=True)
    path = args.store or calibration_store()
    for dtype in args.dtype:
        parts = progress_bar(calibration_parts(dtype), f"calibrate {dtype}", unit="part")
        save(calibrate(dtype, args.repeats, bandwidth, say=say_above(parts, lambda line: print(line, flush=True))),
             path)
        parts.close()
    print(f"calibrated {', '.join(args.dtype)} on {numba.get_num_threads()} threads in "
          f"{time.perf_counter() - started:.0f} s; stored in {path} for machine {cpu_key()}")
    return 0


def _measured_rate(dtype: str) -> float:
    """One core's min-plus product rate measured on this CPU (the register-block search's)."""
    from codegen.register_blocks import choose_register_block

    choice = choose_register_block(dtype)
    if not choice.rates:
        raise UsageError(f"no measured rate for {dtype} on this CPU ({choice.source} block); give --rate")
    return max(choice.rates.values())


def cmd_show(args: argparse.Namespace) -> int:
    """The tree exactly as --tree reads it back, and where asked its block order drawn."""
    from schedules.draw import draw_block_order

    schedule = schedule_from(args)
    level = args.level or ("tile" if schedule.tile_tree is not None else "point")
    if level == "tile" and schedule.tile_tree is None:
        raise UsageError(f"{schedule.name} is a tree over the points only; it has no tile level")
    print(tree_listing(schedule, level))
    if args.png:
        if schedule.n is None:
            raise UsageError("give --n to draw the block order")
        view = tile_view(schedule)  # the tile-layers, or the points of a tree over points only
        blocks = -(-schedule.n // view.tile)
        if blocks > args.max_blocks:
            raise ValueError(f"Q = {blocks} blocks per side is too many to draw; use at most --max-blocks "
                             f"{args.max_blocks}")
        draw_block_order(view, blocks, schedule.name, args.png)
        print(f"block order drawn to {args.png}", file=sys.stderr)
    return 0


def _given_options(args: argparse.Namespace) -> dict:
    """The target options given on the command line (generate refuses those the target lacks)."""
    names = {option.name for target in TARGETS.values() for option in target.options}
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def cmd_emit(args: argparse.Namespace) -> int:
    if args.ptx:
        if args.target != "cuda":
            raise ValueError(f"--ptx prints the cuda target's kernels, not {args.target}'s: add --target cuda")
        compiled = generate(schedule_from(args, "cuda"), target="cuda", dtype=args.dtype, **_given_options(args))
        print(merged_ptx(kernel_ptx(compiled, args.arch)), end="")
        return 0
    compiled = generate(schedule_from(args), target=args.target, dtype=args.dtype, **_given_options(args))
    print(f"# ---- isl's C AST of {compiled.name}\n{compiled.isl_c}")
    print(f"# ---- generated driver ({args.target}, {args.dtype})\n{compiled.source}")
    if args.kernels and hasattr(compiled, "kernel_source"):
        print(f"# ---- tile kernels\n{compiled.kernel_source}")
    return 0


def _print_table(rows: list[tuple]) -> None:
    widths = [max(len(str(row[column])) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        print("  ".join(str(cell).rjust(width) for cell, width in zip(row, widths)))


def _sparse_gpu_report(args: argparse.Namespace) -> int:
    from polyfw.sparse.cuda import machine_code

    found = machine_code(args.arch)
    print(f"sparse kernels, {args.arch}: a whole search a launch (grid: one search, cooperative; block: a search "
          "a block), lanes of a warp a frontier vertex")
    _print_table([("kernel", "a thread takes", "threads", "registers", "spilled bytes", "blocks/SM",
                   "SASS (no NOPs)", "widest loop")] +
                 [(r.name, takes, r.threads, r.registers, r.spills, r.blocks_per_sm, code, "-" if loop is None else loop)
                  for r, takes, code, loop in found])
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"arch": args.arch, "kernels": [dict(name=r.name, takes=takes, threads=r.threads,
                                                           registers=r.registers, spill_bytes=r.spills,
                                                           blocks_per_sm=r.blocks_per_sm, instructions=code,
                                                           widest_loop=loop) for r, takes, code, loop in found]},
                      out, indent=1)
    return 0


def cmd_gpu_report(args: argparse.Namespace) -> int:
    if args.sparse:
        if args.family or args.tree:
            raise UsageError("give a family (or --tree) or --sparse, not both")
        return _sparse_gpu_report(args)
    schedule = schedule_from(args, "cuda")
    compiled = generate(schedule, target="cuda", dtype=args.dtype, **_given_options(args))
    reports, launches = gpu_report(compiled, args.arch), compiled.launches()
    print(f"{compiled.name}, {args.dtype}, {args.arch}, CUDA method {compiled.options.method}, tile "
          f"{compiled.options.tile}: {launches} launches a run (n = {compiled.n})")
    names = [f"band_{number}" for number in range(len(compiled.band_kinds))]
    kinds = dict(zip(names, compiled.band_kinds))
    roles = {name: sorted(str(role) for role in band) for name, band in zip(names, compiled.band_roles)}
    traffic = _register_traffic(compiled, kinds)
    rows = [("kernel", "runs as", "threads", "registers", "spilled bytes", "shared bytes", "carveout", "blocks/SM",
             "warps/SM", "global B/relax", "shared B/relax", "barriers/Mrelax", "SASS", "hot loop", "relaxations",
             "per relaxation")]
    for report in reports:
        loop, moved = report.loop, traffic.get(report.name)
        rows.append((report.name, kinds.get(report.name, "tile-layer"), report.threads, report.registers,
                     report.spills, report.shared_bytes, f"{report.carveout_bytes // 1024} KiB", report.blocks_per_sm,
                     report.resident_warps, *(("-",) * 3 if moved is None else
                                              (f"{moved['global_bytes_per_relaxation']:.4f}",
                                               f"{moved['shared_bytes_per_relaxation']:.3f}",
                                               f"{moved['barriers_per_relaxation'] * 1e6:.2f}")),
                     report.instructions, loop.instructions if loop else "-", loop.relaxations if loop else "-",
                     f"{loop.per_relaxation:.3f}" if loop else "-"))
    _print_table(rows)
    predicted = _predicted_rate(schedule, compiled, reports)
    if predicted:
        print(f"predicted: {predicted['rate'] / 1e12:.2f} T relaxations/s ({predicted['seconds']:.4f} s) on "
              f"{predicted['device']}, the model calibrated on {predicted['rows']} measured calls "
              f"(polyfw.gpu_model: {predicted['latency_warps']:.1f} warps an SM half-busy, "
              f"{predicted['launch_seconds'] * 1e6:.0f} us a launch)")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"schedule": compiled.name, "dtype": args.dtype, "arch": args.arch,
                       "launches": launches, "predicted": predicted,
                       "kernels": [dict(name=r.name, kind=kinds.get(r.name, "tile-layer"), roles=roles.get(r.name, []),
                                        threads=r.threads,
                                        registers=r.registers, spill_bytes=r.spills, shared_bytes=r.shared_bytes,
                                        carveout_bytes=r.carveout_bytes, blocks_per_sm=r.blocks_per_sm,
                                        resident_warps=r.resident_warps, instructions=r.instructions,
                                        per_relaxation=r.loop.per_relaxation if r.loop else None,
                                        **traffic.get(r.name, {}))
                                   for r in reports]}, out, indent=1)
    return 0


def _register_traffic(compiled, kinds: dict[str, str]) -> dict[str, dict[str, float]]:
    """Bytes and barriers per relaxation of each register-tile kernel (method R's shapes)."""
    if compiled.options.method != "R":
        return {}
    shapes = compiled.options.registers
    return {name: {"global_bytes_per_relaxation": shapes.global_bytes_per_relaxation(),
                   "shared_bytes_per_relaxation": shapes.shared_bytes_per_relaxation,
                   "barriers_per_relaxation": shapes.barriers_per_relaxation}
            for name, kind in kinds.items() if kind == "registers"}


def _predicted_rate(schedule, compiled, reports) -> dict | None:
    """The rate polyfw.gpu_model predicts from these kernels (None without tiles or DD products)."""
    from polyfw.gpu_model import facts, kernel_reports, measured_device, predict

    by_kind = kernel_reports(compiled.band_roles, reports)
    if schedule.n is None or schedule.tile <= 1 or "DD" not in by_kind:
        return None
    seconds, calibration, rows = predict(schedule, {kind: facts(report) for kind, report in by_kind.items()})
    return {"seconds": seconds, "rate": schedule.n ** 3 / seconds, "rows": rows, "device": measured_device(),
            "latency_warps": calibration.latency_warps, "launch_seconds": calibration.launch_seconds}


# ---------------------------------------------------------------- comparing and exploring


def _compare_matrix(args: argparse.Namespace) -> tuple[np.ndarray, str]:
    if args.input:
        return as_dense(read_graph(args.input), dtype=args.dtype), args.input
    if args.n:
        return as_dense(random_graph(args.n, seed=0), dtype=args.dtype), f"random graph, n={args.n}, m=4n"
    matrix = as_dense(minnesota_road_graph(), dtype=args.dtype)
    if args.vertices:
        matrix = np.ascontiguousarray(matrix[: args.vertices, : args.vertices])
    return matrix, f"Minnesota road network (pygsp), {matrix.shape[0]} vertices, metres"


def cmd_compare(args: argparse.Namespace) -> int:
    matrix, name = _compare_matrix(args)
    n = matrix.shape[0]
    print(f"input: {name}; {args.dtype}; target {args.target}; median of {args.repeats} runs")
    rows = compare(matrix, [s for s in args.schedules.split(";") if s], tile=args.tile, target=args.target,
                   repeats=args.repeats)
    print(table(rows))
    if args.csv:
        write_csv(rows, args.csv)
        print(f"wrote {args.csv}")
    if args.plot:
        plot(rows, args.plot, f"{name}, n={n}, {args.dtype}, {args.target}")
        print(f"wrote {args.plot}")
    return 0 if all(r.exact for r in rows) else 1


def cmd_demo(args: argparse.Namespace) -> int:
    print(dependence_report(None))
    return cmd_compare(args)


def cmd_explore(args: argparse.Namespace) -> int:
    """On a collective target every rank starts here: rank 0 explores, the others serve its runs.
    With --compare-store nothing is explored: two stores' measurements are compared."""
    started = time.perf_counter()  # the time budget counts from here
    if args.compare_store:
        print(compare_stores(*args.compare_store))
        return 0
    if not find_target(args.target).collective:
        try:
            remote = runner_for(args.runner, args.target)
        except ValueError as refusal:
            raise UsageError(str(refusal)) from None
        try:
            return _explore(args, remote or RunHere(args.target), started)
        finally:
            if remote is not None:
                remote.close()
    if args.runner != "here":
        raise UsageError(f"--runner {args.runner}: target {args.target} runs collectively under mpiexec; "
                         "a dask cluster times the other targets' candidates")
    team = Team(target=args.target)
    if team.rank != 0:
        serve(team.comm)
        return 0
    try:
        return _explore(args, team, started)
    finally:
        team.close()


def _explore_space(args: argparse.Namespace, processes: int) -> Space:
    """The space the arguments ask for, each narrowed value checked: a family, axis or value that
    does not exist (there) is a usage error naming it and what would do."""
    target = find_target(args.target)
    values = {name: [int(v) if v.lstrip("-").isdigit() else v for v in given] for name, given in args.axis}
    run_axes = None
    if args.register_blocks:
        values.setdefault("register_block", args.register_blocks)
        run_axes = (*target.search_axes, "register_block")
    families = {} if args.families is None else {"families": tuple(args.families.split(","))}
    try:
        space = Space(args.n, args.dtype, args.target, values=values, run_axes=run_axes, processes=processes,
                      semiring=args.semiring, **families)
        check_axes(space)
    except ValueError as refusal:
        raise UsageError(str(refusal)) from None
    return space


def _explore(args: argparse.Namespace, runner, started: float) -> int:
    target = find_target(args.target)
    space = _explore_space(args, runner.processes)
    ceiling = None
    if args.ceiling and target.on_cpu and args.semiring == MIN_PLUS.name:
        ceiling = measure_ceiling([args.dtype])[args.dtype]["best"]  # 0.2 s x 3 a shape: shorter ones read low
        print(f"independent min-plus ceiling ({args.dtype}): {ceiling / 1e9:.1f} G relaxations/s")
    where = f", {space.processes} MPI processes x {runner.threads} threads" if target.collective else ""
    pruned = space.pruned()
    print(f"space: {len(space)} candidates" + (f" ({pruned:,} with refuted stage orders left out by rule)"
                                               if pruned else "")
          + f"; strategy {args.strategy}; budget "
          f"{'none' if args.budget is None else f'{args.budget:g} s'}; n = {args.n}, {args.dtype}, {args.target}"
          f"{where}")
    settings = {option.name: getattr(args, option.name) for option in find_strategy(args.strategy).options
                if getattr(args, option.name, None) is not None}
    with Store(args.store) as store:  # opened first: a damaged store is refused before anything is measured
        if args.calibrate and target.on_cpu and not target.collective and args.semiring == MIN_PLUS.name:
            ensure_calibrated(args.dtype, store.path, args.n, space.tiles(), say=lambda line: print(line, flush=True))
        found = explore(space, args.strategy, args.budget, args.max_candidates, store, args.repeats, args.rerun,
                        args.seed, ceiling=ceiling, runner=runner, resume=args.resume, started=started, **settings)
        print(exploration_table(found.records))
        print(f"{len(found.measured)} measured, {found.skipped} from the store, in {found.elapsed:.0f} s; "
              f"{_search_line(found)}")
        if found.overhead_note():
            print(found.overhead_note())
        quality = quality_line(found)
        if quality is not None:
            print(quality)
        best = found.best
        if best is not None:
            print(best_line(best, found.candidates.get(best.key), ceiling))
        if args.export:
            print(f"exported {store.export(args.export)} records to {args.export}")
    if args.plot and found.measured:
        print(f"wrote {plot_exploration(found.records, args.plot, f'n = {args.n}, {args.dtype}, {args.target}')}")
    if found.budget.given:
        print(found.budget.report())
    if args.mutate and _explore_mutants(args, found, runner):
        return 1
    if args.tune:
        tuned = tune(found, args.tuning)
        if tuned is not None:
            print(tuned)
    return 1 if any(r.status == "wrong" for r in found.records) else 0


def _search_line(found) -> str:
    """'search 3: 50 visited (40 before), finished' or '..., not finished: --resume 3 continues it'."""
    before = f" ({found.resumed} before)" if found.resumed else ""
    end = "finished" if found.finished else f"not finished: --resume {found.search} continues it"
    return f"search {found.search}: {len(found.records)} visited{before}, {end}"


def _explore_mutants(args: argparse.Namespace, found, runner) -> bool:
    """Judge every single mutation of the families' trees; time the novel legal orders at --n, run
    as the best candidate runs. Returns whether any mutant was proved legal yet gave wrong
    distances (a checker bug)."""
    best = found.best
    candidate = found.candidates[best.key] if best else None
    options = candidate.options if candidate else ()
    verdicts = explore_mutants(progress=None, runner=runner, options=options)
    print(summary(verdicts))
    tile = min(candidate.size if candidate else find_target(args.target).default_tile, args.n)
    with Store(args.store) as store:
        records = measure_novel(verdicts, Problem.random(args.n, args.dtype, args.seed), tile, runner,
                                args.repeats, store, options)
    for record in records:
        timing = f"{record.seconds:.4f} s" if record.seconds else record.note
        print(f"novel order at n = {args.n}, tile {tile}: {label(record.key, record.target)}: {record.status}, {timing}"
              + (f" (best family candidate: {best.seconds:.4f} s)" if best and record.seconds else ""))
    return any(v.status == "wrong" for v in verdicts) or any(r.status == "wrong" for r in records)
