"""Every notebook runs top to bottom (each is written to run in seconds at its default sizes), and the
copies in the repository carry the outputs of such a run, so a reader sees them without running anything.

What a notebook shows is checked, in the run and in the committed copy alike (CHECKS): the counts and
model figures it prints equal what polyfw computes here directly, to the digits printed; figures
derived from timings are positive and finite and agree with the timings printed beside them to
the rounding of those (a relative tolerance stated at each check)."""
import ast
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
#: one notebook per seed paper (seedNNN_*.ipynb) reproducing its headline figure, and the tutorial
SEED_NOTEBOOKS = [path for path in NOTEBOOKS if path.name.startswith("seed")]
SCALED_NOTEBOOKS = SEED_NOTEBOOKS + [path for path in NOTEBOOKS if path.name == "tutorial.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_and_shows_what_the_library_computes(path):
    notebook = nbformat.read(path, as_version=4)
    with ThreadPoolExecutor(max_workers=1) as pool:
        # while the kernel runs, the library computes the figures the notebook shows (checking the
        # committed copy, whose verdict is test_committed_copy_shows_what_the_library_computes's)
        pool.submit(CHECKS[path.name], nbformat.read(path, as_version=4))
        NotebookClient(notebook, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    CHECKS[path.name](notebook)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_copy_shows_what_the_library_computes(path):
    """A reader sees the committed outputs: they must be what polyfw computes now (re-execute a notebook,
    at its small sizes, when a change moves its figures)."""
    CHECKS[path.name](nbformat.read(path, as_version=4))


def test_every_notebook_has_its_checks():
    assert sorted(CHECKS) == [path.name for path in NOTEBOOKS]


def test_there_are_notebooks():
    assert NOTEBOOKS


def test_every_seed_paper_has_a_notebook_and_there_is_a_tutorial():
    assert {path.name[:7] for path in SEED_NOTEBOOKS} >= {f"seed{number:03d}" for number in range(5)}
    assert any(path.name == "tutorial.ipynb" for path in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_copy_was_executed_top_to_bottom(path):
    """Every code cell ran, once, in order, in one kernel, and none ended in an error."""
    code = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    assert code
    assert [cell.get("execution_count") for cell in code] == list(range(1, len(code) + 1)), \
        f"{path.name}: execute the notebook and save it with its outputs"
    errors = [output for cell in code for output in cell.outputs if output.output_type == "error"]
    assert not errors, f"{path.name}: saved with an error: {errors[0].get('ename')}: {errors[0].get('evalue')}"


@pytest.mark.parametrize("path", SEED_NOTEBOOKS, ids=lambda p: p.name)
def test_committed_seed_notebook_shows_a_figure(path):
    notebook = nbformat.read(path, as_version=4)
    images = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
              if "image/png" in output.get("data", {})]
    assert images, f"{path.name}: no figure in the saved outputs"


@pytest.mark.parametrize("path", SCALED_NOTEBOOKS, ids=lambda p: p.name)
def test_first_code_cell_is_the_parameter_cell(path):
    """Small sizes by default; the papers' sizes with POLYFW_NOTEBOOK_SCALE=paper."""
    first = next(cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
    assert "os.environ.get('POLYFW_NOTEBOOK_SCALE') == 'paper'" in first.source
    assert "PAPER" in first.source


# ---------------------------------------------------------------- what each notebook shows


def _code(notebook, snippet: str):
    cells = [cell for cell in notebook.cells if cell.cell_type == "code" and snippet in cell.source]
    assert len(cells) == 1, f"{len(cells)} code cells contain {snippet!r}"
    return cells[0]


def _printed(notebook, snippet: str) -> list[str]:
    """The non-blank lines the code cell containing `snippet` printed."""
    text = "".join(output.get("text", "") for output in _code(notebook, snippet).outputs
                   if output.output_type == "stream" and output.get("name") == "stdout")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    assert lines, f"the cell with {snippet!r} printed nothing"
    return lines


def _value(shown: str) -> float:
    return float(shown.replace(",", "").strip().strip("%x"))


def _assert_agrees(shown: str, value: float, what: str, relative: float = 0.0, absolute: float = 0.0) -> None:
    """A printed number equals `value` to its last printed digit ('%': `value` as a percentage), give
    or take `relative` of it and `absolute` (in `value`'s units): the rounding of the printed
    timings a figure was derived from."""
    text = shown.replace(",", "").strip().strip("x")
    scale = 100.0 if text.endswith("%") else 1.0
    text = text.rstrip("%")
    digits = len(text.partition(".")[2])
    tolerance = 0.5 * 10.0**-digits + 1e-9 + scale * (relative * abs(value) + absolute)
    assert math.isfinite(value) and abs(float(text) - scale * value) <= tolerance, \
        f"{what}: shown {shown}, computed {scale * value:.6g} (tolerance {tolerance:.3g})"


def _defines(statement: ast.stmt) -> list[str]:
    """The names a top-level statement defines: a function, or plain names (and tuples of them)."""
    if isinstance(statement, ast.FunctionDef):
        return [statement.name]
    if not isinstance(statement, ast.Assign):
        return []
    names = []
    for target in statement.targets:
        parts = target.elts if isinstance(target, ast.Tuple) else [target]
        if not all(isinstance(part, ast.Name) for part in parts):
            return []
        names += [part.id for part in parts]
    return names


def _constants(notebook, names: tuple[str, ...], namespace: dict | None = None) -> dict:
    """The notebook's own top-level definitions of `names` (its parameters and inputs), run here at
    the scale its run printed ('small scale' or 'paper scale' in the parameter cell)."""
    first = next(cell for cell in notebook.cells if cell.cell_type == "code")
    scale = "paper" if any("paper scale" in output.get("text", "") for output in first.outputs) else "small"
    namespace = {"os": SimpleNamespace(environ={**os.environ, "POLYFW_NOTEBOOK_SCALE": scale}), **(namespace or {})}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for statement in ast.parse(cell.source).body:
            if set(_defines(statement)) & set(names):
                exec(compile(ast.Module([statement], []), "<notebook>", "exec"), namespace)
    missing = [name for name in names if name not in namespace]
    assert not missing, f"the notebook no longer defines {missing}"
    return namespace


def _text_value(text: str):
    return int(text) if text.isdigit() else {"True": True, "False": False}.get(text, text)


@lru_cache(maxsize=None)
def _built(family: str, n: int, params: tuple):
    from schedules import build

    return build(family, n, **dict(params))


def _built_named(name: str):
    """The schedule a printed name stands for: 'generalized(n=64, tile=8, kappa=4, variant=fused)'."""
    family, _, settings = name.rstrip(")").partition("(")
    params = dict(item.split("=") for item in settings.split(", "))
    n = int(params.pop("n"))
    if family == "recursive":
        params.pop("tile")
    return _built(family, n, tuple(sorted((key, _text_value(value)) for key, value in params.items())))


@lru_cache(maxsize=None)
def _cost(schedule, procs: int = 1, runtime: str = "barrier"):
    from schedules import cost

    return cost(schedule, procs=procs, runtime=runtime)


@lru_cache(maxsize=None)
def _view(family: str, n: int, params: tuple):
    from schedules.cost import tile_view

    return tile_view(_built(family, n, params))


def check_dependences(notebook):
    import numpy as np
    from scipy.sparse.csgraph import floyd_warshall

    from schedules import check, find_violations, map_baselines
    from polyfw import graphs
    from tiling import distance_vectors, exact_dependences, relaxed_dependences

    n, tile = (_constants(notebook, ("N", "TILE"))[name] for name in ("N", "TILE"))
    # the distance vectors of both dependence models
    shown: dict[str, dict[str, set[str]]] = {}
    for line in _printed(notebook, "distance_vectors(relation)"):
        if not line.startswith(" "):
            model = shown.setdefault(line, {})
        else:
            relation, _, vectors = line.strip().partition(" ")
            model[relation] = set(re.findall(r"\([^()]*\)", vectors))
    assert shown == {model.name: {name: {str(d) for d in distance_vectors(relation)}
                                  for name, relation in model.relations().items()}
                     for model in (exact_dependences(), relaxed_dependences())}
    # blocked FW: its map, legal under the relaxed model, and each violation of the exact one
    blocked = map_baselines.classic_blocked(n, tile)
    assert _printed(notebook, "blocked = map_baselines.classic_blocked") == [
        str(blocked.map), str(check(blocked, "relaxed")), *(v.explain() for v in find_violations(blocked, "exact"))]
    wrong = map_baselines.classic_blocked(n, tile, stages=("I", "DD", "SD"))
    assert _printed(notebook, "wrong = map_baselines.classic_blocked") == [v.explain() for v in find_violations(wrong, "relaxed")]
    # the distances printed are scipy's on the notebook's graph
    rows = _printed(notebook, "floyd_warshall(edges")
    shown_distances = np.array([[float(x) for x in re.findall(r"-?\d+\.?\d*|inf", row)] for row in rows])
    expected = floyd_warshall(graphs.random_graph(5 * n, potential=20, seed=1).to_sparse().tocsr())
    assert np.array_equal(shown_distances, expected[:4, :4])


def check_schedules(notebook):
    constants = _constants(notebook, ("N", "TILE"))
    rows = _printed(notebook, "c = cost(schedule, procs=4)")[1:]
    assert len(rows) == 6
    for row in rows:
        name, figures = row[:52].strip(), row[52:].split()
        c = _cost(_built_named(name), procs=4)
        assert [_value(x) for x in figures] == [c.stages, c.traffic, c.writebacks, c.time_on_procs], name
    tree = _built("generalized", constants["N"], (("kappa", 2), ("tile", constants["TILE"])))
    assert _printed(notebook, ".tree_text('tile')[:1500]") == [tree.tree_text("tile")[:1500].rstrip()]


def check_seed000(notebook):
    constants = _constants(notebook, ("PAPER", "N", "TILE", "KAPPAS"))
    n, tile, kappas = constants["N"], constants["TILE"], constants["KAPPAS"]

    def model(variant, kappa):
        return _cost(_built("generalized", n, (("kappa", kappa), ("tile", tile), ("variant", variant))), procs=2)

    classic = model("seed", 1)
    table = {(row[0], int(row[1])): row[2:] for row in map(str.split, _printed(notebook, "model[variant, k] = cost(")[1:])}
    assert list(table) == [("seed", k) for k in kappas] + [("fused", k) for k in kappas if k > 1]
    for (variant, kappa), (stages, writebacks, wb_ratio, traffic, traffic_ratio, time, time_ratio) in table.items():
        c, what = model(variant, kappa), f"{variant} kappa={kappa}"
        assert [_value(x) for x in (stages, writebacks, traffic, time)] == \
            [c.stages, c.writebacks, c.traffic, c.time_on_procs], what
        _assert_agrees(wb_ratio, c.writebacks / classic.writebacks, what)
        _assert_agrees(traffic_ratio, c.traffic / classic.traffic, what)
        _assert_agrees(time_ratio, c.time_on_procs / classic.time_on_procs, what)
    # the paper's argument, as the notebook states it: write-backs fall with every kappa
    falling = [_value(table["seed", k][1]) for k in kappas]
    assert all(a > b for a, b in zip(falling, falling[1:]))
    # the timings: milliseconds printed to 0.01; the ratio and rate beside each agree to that rounding
    timed = {}
    for line in _printed(notebook, "measured = {key: float(np.min(values))"):
        variant, kappa, ms, _, ratio, _, _, rate, *_ = line.split()
        timed[variant, int(kappa.removeprefix("κ="))] = (float(ms), ratio, rate)
    assert list(timed) == list(table)
    base = timed["seed", 1][0]
    for key, (ms, ratio, rate) in timed.items():
        assert 0 < ms < math.inf, key
        _assert_agrees(ratio, ms / base, f"{key} x classic", relative=0.005 / ms + 0.005 / base)
        _assert_agrees(rate, n**3 / (ms / 1e3) / 1e9, f"{key} G relaxations/s", relative=0.005 / ms)
    model_line, measured_line = _printed(notebook, "best = min(measured")
    shown = re.search(r"write-backs at κ = (\d+) are ([\d.]+) of classic's", model_line)
    assert int(shown[1]) == kappas[-1]
    _assert_agrees(shown[2], model("seed", kappas[-1]).writebacks / classic.writebacks, "write-backs at the largest kappa")
    shown = re.search(r"fastest is (\w+) κ = (\d+) at ([\d.]+) x classic; .*in this run: (.*)$", measured_line)
    fastest = (shown[1], int(shown[2]))
    assert timed[fastest][0] == min(ms for ms, _, _ in timed.values()) and shown[3] == timed[fastest][1]
    faster = [] if shown[4] == "none" else [int(k) for k in re.findall(r"\d+", shown[4])]
    for (variant, kappa), (_, ratio, _) in timed.items():
        if variant == "seed" and kappa > 1 and float(ratio) != 1.0:
            assert (kappa in faster) == (float(ratio) < 1.0), (kappa, ratio, faster)


def check_seed001(notebook):
    constants = _constants(notebook, ("PAPER", "T", "SIZES", "TIMED_N"))
    t, sizes = constants["T"], constants["SIZES"]
    lines = _printed(notebook, "recursive = cost(build('recursive', n, base=T))")
    rows = [line.split() for line in lines[1:-1]]
    assert [int(row[0]) for row in rows] == sizes
    for n, stages, paired, separate, okuyama, recursive_traffic, ratio in ((int(r[0]), *r[1:]) for r in rows):
        iterative = _cost(_built("classic", n, (("tile", t),)))
        recursive = _cost(_built("recursive", n, (("base", t),)))
        shown = [_value(x) for x in (stages, paired, separate, okuyama, recursive_traffic)]
        # the paper's formulas: 3n/t launches; 5n/t_R - 4 paired, 7n/t_R - 6 separate; N_b/d = 4n^3/t - 2n^2
        assert shown[:4] == [3 * n // t, 5 * n // t - 4, 7 * n // t - 6, 4 * n**3 // t - 2 * n**2], n
        assert shown == [iterative.stages, recursive.launches_paired, recursive.launches_separate, iterative.traffic,
                         recursive.traffic], n
        _assert_agrees(ratio, recursive.traffic / iterative.traffic, f"traffic ratio at n = {n}")
    shown = re.search(r"at n = (\d+), t = (\d+) .*: iterative (\d+), recursive (\d+) paired / (\d+) separate "
                      r"\(the paper: ([\d,]+)\)", lines[-1])
    n = int(shown[1])
    assert int(shown[2]) == t and [int(shown[k]) for k in (3, 4, 5)] == [3 * n // t, 5 * n // t - 4, 7 * n // t - 6]
    assert _value(shown[6]) == int(shown[5])  # 1,786: the paper's separate launches at n = 8192
    (iterative_ms, recursive_ms), ratio_line = [
        (lambda row: float(row.split()[-2]))(row) for row in _printed(notebook, "cpu = {name: float(")[:2]], \
        _printed(notebook, "cpu = {name: float(")[2]
    assert 0 < iterative_ms < math.inf and 0 < recursive_ms < math.inf
    assert f"at n = {constants['TIMED_N']}:" in ratio_line
    _assert_agrees(ratio_line.split()[-1], recursive_ms / iterative_ms, "recursive / iterative",
                   relative=0.005 / iterative_ms + 0.005 / recursive_ms)


def check_seed002(notebook):
    constants = _constants(notebook, ("PAPER", "SCALES", "PAPER_SSSP_BEST", "PAPER_BFS_RANGE"))
    scales = constants["SCALES"]
    lines = _printed(notebook, "mean = {name:")
    assert [int(s) for s in re.findall(r"scale (\d+)", lines[0])] == scales
    table = {}
    for line in lines[1:]:
        name, values = line[:34].strip(), [float(v) for v in line[34:].split()]
        assert len(values) == len(scales) and all(0 < v < math.inf for v in values), name
        table[name] = dict(zip(scales, values))
    assert len(table) == 6
    largest = scales[-1]
    # each figure below is derived from the table's M TEPS, printed to 0.1
    bfs, bellman_ford = (table[name][largest] for name in ("polyfw BFS, direction-optimizing", "polyfw SSSP, Bellman-Ford"))
    first, second, ratios, gpu = _printed(notebook, "bfs_over_sssp =")
    for line, value in ((first, bfs), (second, bellman_ford)):
        _assert_agrees(re.search(r"scale \d+: ([\d.]+) M TEPS", line)[1], value, line, relative=0.05 / value)
    shown = re.search(r"polyfw ([\d.]+), the paper's stated levels ([\d.]+)", ratios)
    _assert_agrees(shown[1], bfs / bellman_ford, ratios, relative=0.05 / bfs + 0.05 / bellman_ford)
    _assert_agrees(shown[2], constants["PAPER_BFS_RANGE"][0] / constants["PAPER_SSSP_BEST"], ratios)
    shown = re.search(r"BFS x(\d+), SSSP x(\d+)", gpu)
    _assert_agrees(shown[1], constants["PAPER_BFS_RANGE"][0] / (bfs * 1e6), gpu, relative=0.05 / bfs)
    _assert_agrees(shown[2], constants["PAPER_SSSP_BEST"] / (bellman_ford * 1e6), gpu, relative=0.05 / bellman_ford)


def check_seed003(notebook):
    from schedules.distribute import Grid, Network, grid_for
    from schedules.network import layer_model, simulate_plan

    constants = _constants(notebook, ("PAPER", "SIZES", "TILE", "REPLAY", "MPE_RATE", "GROUP_RATE"))
    sizes, tile, mpe, group = (constants[name] for name in ("SIZES", "TILE", "MPE_RATE", "GROUP_RATE"))
    versions = {"MPI (MPE only)": mpe, "MPI_Block (64 CPEs, DMA-bound)": group}
    layouts = {"2 × 2 blocks": Grid(2, 2), "4 × 1 strips": grid_for(4, "strips")}
    lines = _printed(notebook, "def speedup(")
    assert [int(x) for x in lines[0].split()[2:]] == sizes
    for row in lines[1:5]:
        version, layout, *speedups = re.split(r"\s{2,}", row.strip())
        assert len(speedups) == len(sizes)
        for n, shown in zip(sizes, speedups):  # the notebook's network: 2 us, 10 GB/s, 4-byte elements
            model = layer_model(n, tile, layouts[layout], Network(2e-6, 10e9, versions[version], 4), False)
            _assert_agrees(shown, n**3 / mpe / model.time, f"{version}, {layout}, n = {n}")
    shown = re.search(r"ceiling of MPI_Block: 4 x ([\d.]+) = (\d+)", lines[5])
    _assert_agrees(shown[1], group / mpe, lines[5])
    _assert_agrees(shown[2], 4 * group / mpe, lines[5])
    network = Network(2e-6, 10e9, group, 4)
    replays = _printed(notebook, "replay = simulate_plan(")
    assert len(replays) == len(constants["REPLAY"])
    for line, (n, size) in zip(replays, constants["REPLAY"]):
        shown = re.search(r"n = +(\d+), tile (\d+): replay +([\d.]+) ms, closed form +([\d.]+) ms, ratio ([\d.]+)", line)
        assert (int(shown[1]), int(shown[2])) == (n, size)
        replay = simulate_plan(_plan(n, size, network), network).makespan
        closed = layer_model(n, size, Grid(2, 2), network, True).time
        _assert_agrees(shown[3], replay * 1e3, line)
        _assert_agrees(shown[4], closed * 1e3, line)
        _assert_agrees(shown[5], closed / replay, line)
        assert abs(closed / replay - 1) < 0.05, f"the closed form is {closed / replay:.3f} of the replayed plan"


def _plan(n: int, tile: int, network):
    from schedules.distribute import Grid, plan_distribution

    return plan_distribution(_built("classic", n, (("tile", tile),)), Grid(2, 2), True, network)


def check_seed004(notebook):
    from schedules.simulate import dataflow_times, stage_barrier_times

    constants = _constants(notebook, ("PAPER", "BLOCKS", "PROCS", "TIMED_N", "TIMED_TILES"))
    classic = _view("classic", 8, (("tile", 2),))
    priority = _view("generalized", 8, (("kappa", 2), ("tile", 2)))
    barrier, flow = stage_barrier_times(classic, 2)[0], dataflow_times(priority, 2)
    # seed 004's example, 4 x 4 blocks on 2 processors: 36 units with barriers, 33 as dataflow
    assert (barrier, flow.makespan, flow.lower_bound) == (36, 33, 33)
    lines = _printed(notebook, "runs = {'classic, barrier after each stage'")
    runs = {}
    for line in lines[:3]:
        shown = re.fullmatch(r"(.*?) +(\d+) units, load ([\d.]+%), mean block span ([\d.]+)", line)
        runs[shown[1]] = shown.groups()[1:]
        _assert_agrees(shown[3], 64 / (2 * int(shown[2])), line)
    # the third run, seed 004's row-to-processor mapping, is the notebook's own simulator: the seed's 33 too
    assert [int(units) for units, _, _ in runs.values()] == [barrier, flow.makespan, 33]
    report = _cost(_built("generalized", 8, (("kappa", 2), ("tile", 2))), procs=2, runtime="dataflow")
    _assert_agrees(runs["dataflow, generalized κ=2 order"][2], report.locality, "T_ij of the dataflow run")
    assert lines[3] == f"lower bound for any order on 2 processors: {flow.lower_bound:.0f}"
    assert lines[4] == f"classic's own order without barriers: {dataflow_times(classic, 2).makespan:.0f}"
    assert lines[5:] == report.table().splitlines()
    # barrier against dataflow over Q and P
    sizes = {"classic": (("tile", 2),), "generalized κ=2": (("kappa", 2), ("tile", 2)), "recursive": (("base", 2),)}
    rows = _printed(notebook, "priorities = {")[1:]
    assert len(rows) == len(constants["BLOCKS"]) * len(sizes) * len(constants["PROCS"])
    for row in rows:
        shown = re.fullmatch(r" *(\d+) +(\d+) (.+?) +(\d+) +([\d.]+%) +(\d+) +([\d.]+%) +(\d+) +(-?[\d.]+%)", row)
        q, p, name = int(shown[1]), int(shown[2]), shown[3]
        view = _view(name.split()[0], 2 * q, sizes[name])
        barrier, flow = stage_barrier_times(view, p)[0], dataflow_times(view, p)
        assert int(shown[4]) == barrier, row
        _assert_agrees(shown[6], flow.makespan, row)
        _assert_agrees(shown[8], flow.lower_bound, row)
        _assert_agrees(shown[5], q**3 / (p * barrier), row)
        _assert_agrees(shown[7], q**3 / (p * flow.makespan), row)
        _assert_agrees(shown[9], 1 - flow.makespan / barrier, row)
    # the timings: milliseconds printed to 0.01, the share saved derived from them
    timed = _printed(notebook, "runs_cpu = {'barrier'")
    assert len(timed) == len(constants["TIMED_TILES"]) + 1
    for line, tile in zip(timed, constants["TIMED_TILES"]):
        shown = re.match(r"tile +(\d+) \(Q = (\d+)\): barrier +([\d.]+) ms, dataflow +([\d.]+) ms, saved +(-?[\d.]+%)", line)
        barrier_ms, dataflow_ms = float(shown[3]), float(shown[4])
        assert (int(shown[1]), int(shown[2])) == (tile, -(-constants["TIMED_N"] // tile))
        assert 0 < barrier_ms < math.inf and 0 < dataflow_ms < math.inf
        _assert_agrees(shown[5], 1 - dataflow_ms / barrier_ms, line,
                       absolute=0.005 / barrier_ms + 0.005 * dataflow_ms / barrier_ms**2)


@lru_cache(maxsize=None)
def _verdict(text: str, name: str) -> str:
    from schedules import check, from_tree

    return str(check(from_tree(text, name=name)))


def check_tutorial(notebook):
    import numpy as np
    from scipy.sparse.csgraph import floyd_warshall

    from schedules import IllegalScheduleError, check, execute, find_violations, from_spec, from_tree
    from schedules.tree import Band, Filter, Mark, Sequence_
    from polyfw import graphs

    constants = _constants(notebook, ("PAPER", "N", "TILE", "BY_HAND", "filters", "DD_BEFORE_SD", "one_stage",
                                      "FOUR_STAGES"), {"Band": Band, "Filter": Filter, "Mark": Mark, "Sequence_": Sequence_})
    n, tile, by_hand, dd_before_sd = (constants[name] for name in ("N", "TILE", "BY_HAND", "DD_BEFORE_SD"))
    assert _printed(notebook, "print(check(from_tree(BY_HAND")[0] == _verdict(by_hand, "by-hand")
    # DD before SD: refused, with the witness printed
    with pytest.raises(IllegalScheduleError) as refusal:
        check(from_tree(dd_before_sd, name="dd-before-sd"))
    witness = find_violations(from_tree(dd_before_sd))[0]
    assert _printed(notebook, "DD_BEFORE_SD = ") == [
        f"refused: {len(refusal.value.violations)} broken dependence(s)", witness.explain(),
        f"source {witness.source} at time {witness.source_time}", f"sink   {witness.sink} at time {witness.sink_time}"]
    # wrong distances when run: none by hand, some with DD first (the notebook's graph: 12 vertices, seed 3)
    weights = graphs.as_dense(graphs.random_graph(12, seed=3, potential=10), dtype=np.float64)
    expected = floyd_warshall(graphs.dense_to_sparse(weights))
    wrong = {name: int((execute(from_tree(text, n=12), weights) != expected).sum())
             for name, text in (("by hand", by_hand), ("DD before SD", dd_before_sd))}
    assert _printed(notebook, "found = execute(") == [f"{name:13} wrong distances: {count} of 144"
                                                       for name, count in wrong.items()]
    assert wrong["by hand"] == 0 < wrong["DD before SD"]
    # the cost table: four stages per block layer, and what cost computes for each
    four = _cost(from_spec("four-stage", constants["FOUR_STAGES"], n, tile), procs=4)
    assert four.stages == 4 * -(-n // tile)
    figures = {}
    for row in _printed(notebook, "c = cost(schedule, procs=4)")[1:]:
        name, (stages, traffic, time, load) = row[:52].strip(), row[52:].split()
        c = four if name.startswith("four-stage") else _cost(_built_named(name), procs=4)
        assert [_value(stages), _value(traffic), _value(time)] == [c.stages, c.traffic, c.time_on_procs], name
        _assert_agrees(load, c.load, name)
        figures[name.partition("(")[0]] = (c.stages, c.traffic)
    assert list(figures) == ["four-stage", "classic", "generalized"]
    # polyfw.compare: every row exact, its ratios those of the rates printed, the model's figures as above
    rows = [re.fullmatch(r"(\S+) +(.*?) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +(True|False)(?: +(\d+) +([\d,]+))?", row)
            for row in _printed(notebook, "rows = polyfw.compare(")[2:]]
    rates = {row[1]: float(row[4]) for row in rows}
    assert all(row[7] == "True" for row in rows) and all(0 < rate < math.inf for rate in rates.values())
    for row in rows:
        name, rate = row[1], rates[row[1]]
        _assert_agrees(row[5], rate / rates["scipy"], name, relative=0.005 / rate + 0.005 / rates["scipy"])
        _assert_agrees(row[6], rate / rates["naive-kernel"], name, relative=0.005 / rate + 0.005 / rates["naive-kernel"])
        assert (name in figures) == (row[8] is not None), name
        if name in figures:
            assert (int(row[8]), _value(row[9])) == figures[name], name
    # the networkx backend: the same distances both ways, the speed-up that of the seconds printed
    sizes, times = _printed(notebook, "backend='polyfw')")
    random_graph = graphs.random_graph(n, seed=5)
    assert sizes == f"{n} nodes, {len(random_graph.source)} edges: the same distances both ways: True"
    theirs, ours, ratio = re.fullmatch(r'networkx ([\d.]+) s, backend="polyfw" ([\d.]+) s: ([\d.]+)x', times).groups()
    _assert_agrees(ratio, float(theirs) / float(ours), "networkx / polyfw", relative=0.00005 / float(ours) + 0.00005 / float(theirs))


def check_exploration(notebook):
    from scipy.stats import kendalltau

    from polyfw.explore import Space, label
    from polyfw.explore.strategies import stratified

    constants = _constants(notebook, ("PAPER", "SIZES", "DTYPE", "TILES", "SEED", "CANDIDATES"))
    sizes, dtype, tiles, seed = (constants[name] for name in ("SIZES", "DTYPE", "TILES", "SEED"))
    # the space's counts, the candidates the rule left out, and the stratified order's start
    spaces = {n: Space(n, dtype, values={"tile": tiles}) for n in sizes}
    shown = _printed(notebook, "space.pruned()")
    assert shown[:len(sizes)] == [f"n = {n}: {len(space)} candidates, {space.pruned()} left out by rule (refuted "
                                  "stage orders)" for n, space in spaces.items()]
    assert shown[len(sizes):] == ["the random order begins:", *(f"  {label(c.key)}" for c in
                                                               stratified(spaces[sizes[0]], seed)[:6])]
    # each size's tau and the families measured: what the table of predicted and measured times gives
    table = _printed(notebook, "predicted ms  measured ms")
    heads = [i for i, line in enumerate(table) if line.startswith("n = ")] + [len(table)]
    measured = {}
    for first, after in zip(heads, heads[1:]):
        n = int(table[first].split()[2])
        rows = [line.rsplit(None, 2) for line in table[first + 1:after]]
        measured[n] = [(name.strip(), float(predicted), float(seconds)) for name, predicted, seconds in rows]
        assert 2 <= len(rows) <= constants["CANDIDATES"]
        assert all(0 < p < math.inf and 0 < m < math.inf for _, p, m in measured[n])
    assert list(measured) == sizes
    for line, (n, rows) in zip(_printed(notebook, "found[n] = explore("), measured.items()):
        families = sorted({name.partition(":")[0] for name, _, _ in rows})
        assert line.startswith(f"n = {n}: {len(rows)} measured ({', '.join(families)}); Kendall tau ")
        tau = kendalltau([p for _, p, _ in rows], [m for _, _, m in rows])[0]
        _assert_agrees(line.split("Kendall tau ")[1].split(",")[0], tau, f"tau at n = {n}", absolute=0.02)
    assert len({name.partition(":")[0] for name, _, _ in measured[sizes[0]]}) == 3  # every family in a short search
    # the winner and the slowest explained: their measured times as in the table, the parts adding up
    explained = _printed(notebook, "prediction.explain()")
    last = measured[sizes[-1]]
    heads = [i for i, line in enumerate(explained) if line.startswith(("fastest", "slowest"))] + [len(explained)]
    assert [explained[i].split(":")[0] for i in heads[:-1]] == [f"fastest at n = {sizes[-1]}",
                                                                f"slowest at n = {sizes[-1]}"]
    for head, after, row in zip(heads, heads[1:], (last[0], last[-1])):
        assert explained[head].split(": ", 1)[1].startswith(row[0][:64].rstrip())
        _assert_agrees(explained[head].rsplit("measured ", 1)[1].split()[0], row[2], "measured ms", absolute=1e-4)
        parts = [float(line.split()[-3]) for line in explained[head + 1:after - 1]]
        _assert_agrees(explained[after - 1].split()[1], sum(parts), "the parts' sum", absolute=0.002 * len(parts))


def check_molecules(notebook):
    import numpy as np
    from rdkit import Chem, RDConfig, RDLogger

    molecules = _constants(notebook, ("PAPER", "MOLECULES"))["MOLECULES"]
    RDLogger.DisableLog("rdApp.*")
    path = os.path.join(RDConfig.RDDataDir, "NCI", "first_5K.smi")
    atoms = np.array([m.GetNumAtoms() for m in (Chem.MolFromSmiles(line.split()[0])
                                                for line in open(path).read().splitlines()[:molecules]) if m])
    assert _printed(notebook, "RDLogger.DisableLog") == [
        f"{atoms.size:,} molecules read, {atoms.min()}-{atoms.max()} heavy atoms (mean {atoms.mean():.1f})"]
    equal, ours, theirs, speedup = _printed(notebook, "theirs = median_seconds")
    assert equal == "distance matrices equal: True"
    assert f"result ({atoms.size}, {atoms.max()}, {atoms.max()}) int16" in ours
    ours_ms, theirs_ms = (_value(re.search(r":\s+([\d.,]+) ms", line).group(1)) for line in (ours, theirs))
    _assert_agrees(speedup.split(": ")[1], theirs_ms / ours_ms, "speed-up", relative=0.02)
    groups = _printed(notebook, "per_graph_scipy.append")[-1]
    assert re.fullmatch(r"\d+ size groups from \d+ to \d+ atoms; solve_batch is [\d.]+x-[\d.]+x faster a molecule",
                        groups)
    assert any(output.output_type == "display_data" for output in _code(notebook, "semilogy").outputs)


CHECKS = {"dependences.ipynb": check_dependences, "molecules.ipynb": check_molecules, "exploration.ipynb": check_exploration, "schedules.ipynb": check_schedules,
          "seed000_kappa.ipynb": check_seed000, "seed001_recursive.ipynb": check_seed001,
          "seed002_teps.ipynb": check_seed002, "seed003_distributed.ipynb": check_seed003,
          "seed004_dataflow.ipynb": check_seed004, "tutorial.ipynb": check_tutorial}
