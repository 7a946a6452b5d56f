"""Orders beyond the families: mutate each family's tree, keep what the checker proves, run it
exactly, and say which legal orders are novel (no family with any parameters runs them).

Mutants are judged on a small problem first (`probe_n`, with a partial last block and
negative edges) twice over: by the prover, and by running them unproved
(schedules.unsafe_run_unproved) with the concurrency of the target they would run on: threads
for cpu (its stages' tasks also reversed and interleaved), the dataflow runtime's threads,
processes for mpi, concurrent thread blocks for cudasim. A mutant the checker accepts that
gives wrong distances is a checker bug and is reported as 'wrong'; each verdict says which of
the two found a mutant out ('prover', 'run' or both).
Novelty is decided at that size by comparing order signatures (schedules.mutate) with every
family instance of the same tile. The novel legal orders can then be timed at the
exploration's size like any candidate.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

import numpy as np

from codegen import floyd_warshall_naive, generate
from codegen.cpu import TASK_ORDERS
from codegen.targets import find_target
from schedules.cost import tile_view
from schedules.families import FAMILIES, family_spec, from_spec
from schedules.mutate import Mutant, mutants, order_signature
from schedules.proofs import unsafe_run_unproved
from schedules.schedule import Schedule

from ..graphs import as_dense, random_graph
from ..progress import bar as progress_bar
from .runners import Problem, Recipe, Runner, RunHere, first_difference, machine
from .search import measure, model_for, refusal_of
from .space import Candidate, Space, build_candidate, default_families
from .store import Record, Store

#: the small problem mutants are judged on: 4 blocks a side, the last one partial
PROBE_N, PROBE_TILE = 14, 4
#: the families whose trees are mutated, each at one parameter setting
BASES = (Candidate("classic", (("tile", PROBE_TILE),)),
         Candidate("generalized", (("tile", PROBE_TILE), ("kappa", 2), ("variant", "seed"))),
         Candidate("generalized", (("tile", PROBE_TILE), ("kappa", 3), ("variant", "fused"))),
         Candidate("recursive", (("base", PROBE_TILE), ("paired", True))))


@dataclass(frozen=True)
class MutantVerdict:
    base: str
    description: str
    #: 'illegal' (the checker refused it), 'exact' (proved, run, equal to the reference),
    #: 'wrong' (proved but wrong distances: a checker bug) or 'failed' (no code for it)
    status: str
    signature: str = ""
    #: the family candidate that runs the same order, or None for a novel order
    same_as: str | None = None
    note: str = ""
    #: who found the mutant out: 'prover', 'run', 'prover and run', or '' (neither: exact)
    found_by: str = ""
    #: how the run exercised the target's concurrency, and what it gave
    run_note: str = ""

    @property
    def novel(self) -> bool:
        return self.status == "exact" and self.same_as is None


@lru_cache(maxsize=8)
def family_signatures(n: int, tile: int) -> dict[str, str]:
    """Order signature -> the first family candidate (any parameters, this tile) that runs it. Not
    proved: one order has one verdict, so a legal mutant can only match a legal instance."""
    found: dict[str, str] = {}
    for candidate in Space(n, families=default_families(), values={"tile": [tile]}, run_axes=()):
        found.setdefault(order_signature(tile_view(build_candidate(candidate, n))), candidate.key)
    return found


def probe_inputs(n: int = PROBE_N) -> list[tuple[np.ndarray, np.ndarray]]:
    """(graph, exact distances): a sparse graph with negative edges (no negative cycle) and a
    denser one, integer-valued."""
    found = []
    for m, potential in ((3 * n, 50), (n * (n - 1) // 3, 0)):
        matrix = as_dense(random_graph(n, m=m, seed=n + m, potential=potential), dtype="float64")
        expected = matrix.copy()
        floyd_warshall_naive(expected)
        found.append((matrix, expected))
    return found


def _probe_problems(n: int, dtype: str) -> list[Problem]:
    return [Problem(n, dtype, matrix.astype(dtype), expected.astype(dtype)) for matrix, expected in probe_inputs(n)]


def run_unproved(recipe: Recipe, n: int, runner: Runner, options: tuple[tuple[str, Any], ...] = ()) -> str:
    """Run the schedule `recipe` builds, unproved, as `runner`'s target runs it, on the probe
    inputs: '' when every run is exact, else what went wrong. Code that runs each stage's tasks
    from lists (the cpu target's barrier runtime) also runs them reversed and interleaved (orders
    its threads may take)."""
    target = find_target(runner.target)
    dtype = "float64" if "float64" in target.dtypes else "float32"
    candidate = Candidate("mutant", (), options)
    for problem in _probe_problems(n, dtype):
        outcome = runner(recipe(), recipe, candidate, problem, 1)
        if outcome.status != "measured":
            return f"{outcome.status} ({runner.target}): {outcome.note.replace('proved legal but ', '')}"
        wrong = _wrong_in_task_orders(recipe, runner.target, dtype, options, problem)
        if wrong:
            return wrong
    return ""


def _wrong_in_task_orders(recipe: Recipe, target: str, dtype: str, options: tuple[tuple[str, Any], ...],
                          problem: Problem) -> str:
    """'' unless the target's code (with these run options) runs its stages' tasks from lists and
    some order of them (codegen.cpu.TASK_ORDERS) gives wrong distances; then what went wrong."""
    declared = find_target(target)
    if declared.collective:
        return ""  # its code runs on every process of a world at once: the runner's alone
    compiled = generate(recipe(), target=target, dtype=dtype, **declared.read_options(dict(options)))
    if not getattr(compiled, "runs_task_lists", False):
        return ""
    for order in TASK_ORDERS:
        got = problem.matrix.copy()
        compiled(got, task_order=order)
        wrong = first_difference(got, problem.expected)
        if wrong:
            return f"wrong ({target}, tasks {order}): {wrong.replace('proved legal but ', '')}"
    return ""


def unproved_mutant(base: Candidate, mutant: Mutant, n: int, tile: int) -> Schedule:
    """The mutant's schedule, to be run without a proof (judging it; never timed)."""
    return unsafe_run_unproved(mutant_schedule(base, mutant, n, tile))


def judge(base: Candidate, mutant: Mutant, n: int = PROBE_N, tile: int = PROBE_TILE,
          runner: Runner | None = None, options: tuple[tuple[str, Any], ...] = ()) -> MutantVerdict:
    """Prove the mutant, and run it unproved with its target's concurrency (runner: RunHere('cpu')
    unless given); place an exact legal one among the families' orders."""
    runner = runner or RunHere()
    schedule = mutant_schedule(base, mutant, n, tile)
    refusal = refusal_of(schedule)
    try:
        wrong_run = run_unproved(partial(unproved_mutant, base, mutant, n, tile), n, runner, options)
    except Exception as error:  # reported: an order the generator cannot serve
        return MutantVerdict(base.key, mutant.description, "illegal" if refusal else "failed", note=refusal or
                             f"{type(error).__name__}: {error}", found_by="prover" if refusal else "")
    if refusal is not None:
        return MutantVerdict(base.key, mutant.description, "illegal", note=refusal,
                             found_by="prover and run" if wrong_run else "prover", run_note=wrong_run)
    signature = order_signature(tile_view(schedule))
    same_as = family_signatures(n, tile).get(signature)
    if wrong_run:
        return MutantVerdict(base.key, mutant.description, "wrong", signature, same_as,
                             f"proved legal, but the run gave {wrong_run}", found_by="run", run_note=wrong_run)
    return MutantVerdict(base.key, mutant.description, "exact", signature, same_as)


def base_mutants(base: Candidate, n: int, tile: int) -> list[Mutant]:
    """Every single mutation of the base family's tree, built for this n and tile."""
    params = {name: value for name, value in base.params if name != FAMILIES[base.family].size}
    return mutants(family_spec(base.family, n, tile, **params))


def mutant_schedule(base: Candidate, mutant: Mutant, n: int, tile: int) -> Schedule:
    return from_spec(f"mutant[{mutant.description}]", mutant.spec, n, tile, {"of": base.key})


def measure_novel(verdicts: Sequence[MutantVerdict], problem: Problem, tile: int, runner: Runner | None = None,
                  repeats: int = 3, store: Store | None = None,
                  options: tuple[tuple[str, Any], ...] = ()) -> list[Record]:
    """Time each distinct novel legal order at the problem's size (proved again there first), as
    a record of origin 'mutant' keyed by its base and mutation. runner: as polyfw.explore.search.explore's;
    options: the run options (e.g. the best family candidate's), the same for every mutant."""
    runner = runner or RunHere()
    machine_key, description = machine(problem.dtype, runner)
    model = model_for(runner, problem.dtype)
    records, seen = [], set()
    bases = {base.key: base for base in BASES}
    for verdict in verdicts:
        if not verdict.novel or verdict.signature in seen or verdict.base not in bases:
            continue
        seen.add(verdict.signature)
        base = bases[verdict.base]
        size = FAMILIES[base.family].size
        params = tuple((k, tile if k == size else v) for k, v in base.params)
        mutant = next(m for m in base_mutants(base, problem.n, tile) if m.description == verdict.description)
        candidate = Candidate(f"mutant[{verdict.description}] of {base.family}", params, options)
        record = measure(candidate, problem, runner, repeats, model, machine_key, description, "mutant",
                         partial(mutant_schedule, base, mutant, problem.n, tile))
        records.append(record)
        if store is not None:
            store.put(record)
    return records


def explore_mutants(bases: Sequence[Candidate] = BASES, n: int = PROBE_N, tile: int = PROBE_TILE,
                    progress: bool | None = False, runner: Runner | None = None,
                    options: tuple[tuple[str, Any], ...] = ()) -> list[MutantVerdict]:
    """Every single mutation of each base family's tree, judged (see `judge`) on `runner`'s target
    with the run `options` (e.g. the best candidate's runtime); progress: a bar (polyfw.progress's `show`)."""
    verdicts = []
    judged = progress_bar(None, "mutants", unit="mutant", show=progress)
    for base in bases:
        for mutant in base_mutants(base, n, tile):
            verdicts.append(judge(base, mutant, n, tile, runner, options))
            judged.update(1)
    judged.close()
    return verdicts


def summary(verdicts: Sequence[MutantVerdict]) -> str:
    """Counts per base, then every novel legal order and every wrong one."""
    lines = [f"{'base':<44} {'mutants':>7} {'illegal':>7} {'exact':>6} {'novel':>6} {'wrong':>6} {'failed':>6}"
             f" {'prover':>7} {'run':>5} {'both':>5}"]
    for base in dict.fromkeys(v.base for v in verdicts):
        mine = [v for v in verdicts if v.base == base]
        distinct_novel = {v.signature for v in mine if v.novel}
        lines.append(f"{base[:44]:<44} {len(mine):>7} {sum(v.status == 'illegal' for v in mine):>7} "
                     f"{sum(v.status == 'exact' for v in mine):>6} {len(distinct_novel):>6} "
                     f"{sum(v.status == 'wrong' for v in mine):>6} {sum(v.status == 'failed' for v in mine):>6}"
                     f" {sum(v.found_by == 'prover' for v in mine):>7} {sum(v.found_by == 'run' for v in mine):>5}"
                     f" {sum(v.found_by == 'prover and run' for v in mine):>5}")
    seen: set[str] = set()
    for verdict in verdicts:
        if verdict.novel and verdict.signature not in seen:
            seen.add(verdict.signature)
            lines.append(f"novel legal order: {verdict.base} + {verdict.description}")
    for verdict in verdicts:
        if verdict.status in ("wrong", "failed"):
            lines.append(f"{verdict.status.upper()}: {verdict.base} + {verdict.description}: {verdict.note}")
    return "\n".join(lines)
