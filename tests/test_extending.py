"""Extending polyfw: a toy target, a toy search strategy and a toy semiring, each declared here with
one registration line, reach solve, explore and the command line without any other change; and
the documentation's tables are the registries' own."""
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse.csgraph import shortest_path

import polyfw
from codegen.compiled import Compiled
from codegen.targets import TARGETS, Option, Target, find_target
from codegen.targets import register as register_target
from polyfw.cli import main
from polyfw.explore import Space, Store, explore
from polyfw.explore.strategies import STRATEGIES, Search, Strategy
from polyfw.explore.strategies import register as register_strategy
from polyfw.graphs import random_graph
from polyfw.cli.registry_tables import render, unplaced_tables
from tiling.semirings import MAX, MUL, SEMIRINGS, Semiring
from tiling.semirings import register as register_semiring

PAGES = sorted((Path(__file__).resolve().parents[1] / "docs").glob("*.md"))


# ---------------------------------------------------------------- a toy target


class CountingCompiled(Compiled):
    """The python target's code, run `sweeps` times over the same matrix (FW is idempotent: a
    second sweep changes nothing), counting its runs."""

    def __init__(self, inner: Compiled, sweeps: int) -> None:
        self.inner, self.sweeps, self.runs = inner, sweeps, 0
        self.name, self.n, self.target, self.source, self.proof = inner.name, inner.n, "counting", inner.source, inner.proof
        self.last_run: dict = {}

    def __call__(self, a, pred=None, **run_options) -> int:
        self.runs += 1
        found = [self.inner(a, pred) for _ in range(self.sweeps)]
        self.last_run.update(sweeps=self.sweeps)
        return found[0]


def build_counting(schedule, target, dtype, semiring, sweeps=1) -> CountingCompiled:
    return CountingCompiled(find_target("python").build(schedule, dtype, semiring), sweeps)


COUNTING = Target("counting", "the python target's code, run a given number of times", ("float32", "float64", "int32"),
                  (Option("sweeps", 1, "how many times each call runs the schedule", int, (1, 2)),),
                  f"{__name__}:build_counting", default_tile=8, search_tiles=(4, 8), search_axes=("sweeps",),
                  schedule_settings=("sweeps",))


# ---------------------------------------------------------------- a toy strategy


def largest_tiles_first(search: Search):
    """Every candidate, the largest tiles first (the family and its parameters by key within a tile)."""
    yield from sorted(search.space, key=lambda candidate: (-candidate.size, candidate.key))


LARGEST_FIRST = Strategy("largest-tiles-first", "every candidate, largest tiles first", largest_tiles_first)


# ---------------------------------------------------------------- a toy semiring


MAX_TIMES = Semiring("max-times", MAX, MUL, "most reliable paths (products of probabilities)", ("float32", "float64"),
                     zero={"float32": 0.0, "float64": 0.0}, from_lengths=lambda lengths: 0.5 ** (lengths % 4 + 1))


@pytest.fixture
def registered():
    """The three declarations registered for one test, and removed after it."""
    register_target(COUNTING), register_strategy(LARGEST_FIRST), register_semiring(MAX_TIMES)
    yield
    del TARGETS[COUNTING.name], STRATEGIES[LARGEST_FIRST.name], SEMIRINGS[MAX_TIMES.name]


def most_reliable(probabilities: np.ndarray) -> np.ndarray:
    """The max-times closure by the textbook nest in numpy (powers of 1/2 keep every product exact)."""
    found = probabilities.astype(np.float64)
    np.fill_diagonal(found, np.maximum(np.diagonal(found), 1.0))
    for k in range(len(found)):
        np.maximum(found, found[:, k:k + 1] * found[k:k + 1, :], out=found)
    return found


def probability_matrix(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.where(rng.random((n, n)) < 0.25, 0.5 ** rng.integers(1, 5, (n, n)), 0.0)


def test_a_toy_target_runs_through_solve_and_generate(registered):
    graph = random_graph(21, m=70, seed=3)
    expected = shortest_path(graph.to_sparse().tocsr(), method="FW")
    found = polyfw.solve(graph, target="counting", schedule="classic:tile=4", dtype="float64")
    np.testing.assert_array_equal(found, expected)
    from codegen import generate
    import schedules
    compiled = generate(schedules.build("classic", 21, 4), target="counting", dtype="float64", sweeps="2")
    assert isinstance(compiled, CountingCompiled) and compiled.sweeps == 2 and "legal" in str(compiled.proof)


def test_a_toy_target_and_strategy_run_through_explore(registered, tmp_path):
    store = Store(tmp_path / "store.sqlite")
    found = explore(Space(12, "float64", "counting", families=("classic",)), strategy="largest-tiles-first",
                    store=store, repeats=1, progress=False)
    measured = [r for r in found.records if r.status == "measured"]
    assert [r.params["tile"] for r in measured] == [8, 8, 4, 4]  # both sweeps values of each tile
    assert {r.target for r in measured} == {"counting"} and all(r.seconds > 0 for r in measured)


def test_a_toy_semiring_runs_through_solve_and_explore(registered, tmp_path):
    probabilities = probability_matrix(19, seed=4)
    found = polyfw.solve(probabilities, semiring="max-times", dtype="float64", schedule="generalized:tile=4,kappa=2")
    np.testing.assert_array_equal(found, most_reliable(probabilities))
    exploration = explore(Space(12, "float64", "cpu", families=("classic",), values={"tile": [4], "runtime": ["barrier"],
                                                                   "stages": ["I-SD-DD"]},
                                semiring="max-times"), strategy="exhaustive", store=Store(tmp_path / "s.sqlite"),
                          repeats=1, progress=False)
    assert [(r.status, r.dtype) for r in exploration.records] == [("measured", "float64:max-times")]


def test_the_toys_run_through_the_command_line(registered, tmp_path, capsys):
    probabilities = probability_matrix(9, seed=5)
    rows, columns = np.nonzero(probabilities)
    (tmp_path / "p.mtx").write_text("%%MatrixMarket matrix coordinate real general\n"
                                    f"9 9 {len(rows)}\n" + "".join(f"{i + 1} {j + 1} {probabilities[i, j]}\n"
                                                                   for i, j in zip(rows, columns)))
    assert main(["solve", str(tmp_path / "p.mtx"), "-o", str(tmp_path / "d.npy"), "--semiring", "max-times",
                 "--target", "counting", "--schedule", "classic:tile=4,sweeps=2", "--dtype", "float64"]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), most_reliable(probabilities))
    assert main(["explore", "--n", "10", "--dtype", "float64", "--target", "counting", "--strategy",
                 "largest-tiles-first", "--families", "classic", "--repeats", "1", "--no-ceiling",
                 "--store", str(tmp_path / "s.sqlite"), "--plot", str(tmp_path / "p.png")]) == 0
    assert "counting" in capsys.readouterr().out
    assert main(["docs", *map(str, PAGES)]) == 0
    tables = capsys.readouterr().out
    assert all(f"`{name}`" in tables for name in ("counting", "largest-tiles-first", "max-times"))
    assert main(["info"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in ("counting", "largest-tiles-first", "max-times"))


def test_documented_tables_are_the_registries():
    """A target, family, strategy or semiring registered in polyfw is in the documentation's tables as
    rendered (`polyfw docs --write` renders them), each table on one page."""
    texts = [page.read_text() for page in PAGES]
    assert not unplaced_tables(texts)
    assert all(render(text) == text for text in texts), "docs' registry tables are stale: run `polyfw docs --write`"
