"""Proving the code a generator emits, not only the tree it was given.

The tree's proof covers the tree's coincident band members. A generator
decides for itself which loops of a parallel region become concurrent
workers (the tasks of a CPU stage, the thread blocks of a CUDA launch), and
a wrong choice there (a loop inside a task run as thread blocks) gives wrong
answers on a GPU while the tree stays legal. So each generator reports, for
every parallel region it emits, the schedule depths whose iterations it runs
in different workers (isl's AST names the loop at depth d `c<d>`); this
module proves with isl, region by region, that within one launch or stage
no two workers hold dependent instances (R_row, R_col, or W: one block
written by two workers) and that each worker runs its own instances in an
order the dependences allow. Regions are checked separately, with only the
instances that reach them, which keeps the proof cheap where a whole-tree
proof is not (recursive trees at large n); the order between launches is
the tree's own, proved by `schedules.check`.

The runtimes without stages emit other artefacts, proved here too: the
dataflow runtime a task list and the readiness rules its test is rendered
from (check_task_graph); the MPI runtime a distributed plan, checked by
schedules.distribute.check_plan.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import islpy as isl
import numpy as np

from tiling.dependences import dependence_model
from tiling.isl_utils import image_of_point, lex_before_at, sample_pair
from tiling.tile_dependences import PredecessorRule, rules_waits, unordered_pairs

from .packing import published_operand_problem
from .tree_to_map import flatten_below
from .legality import tile_lift


@dataclass(frozen=True)
class Workers:
    """One parallel region as a generator emits it."""

    #: the region in the generated code, for messages ('launch of band_2', 'run_tasks stage 1')
    label: str
    #: schedule depths whose iterations run in different workers at once; every other
    #: loop of the region runs in order inside a worker
    depths: frozenset[int]


class UnsafeCodeError(ValueError):
    """Generated code runs dependent instances in concurrent workers, or out of order in one."""


_NEEDS = {"R_row": "reads as its a[i,k] what", "R_col": "reads as its a[k,j] what"}


def _instance(coordinates: tuple[int, ...], statement: str) -> str:
    return f"{statement}[{','.join(map(str, coordinates))}]"


def _order(parallel: tuple[bool, ...], launch: int) -> tuple[isl.Map, isl.Map]:
    """On time vectors whose first `launch` columns name the launch: (same launch, ordered
    within it). Times first differing at a parallel column are in different workers at once."""
    ndim = len(parallel)
    t, u = [f"t{d}" for d in range(ndim)], [f"u{d}" for d in range(ndim)]
    equal = " and ".join(f"{t[d]} = {u[d]}" for d in range(launch)) or "true"
    same = isl.Map(f"{{ [{', '.join(t)}] -> [{', '.join(u)}] : {equal} }}")
    before = isl.Map.empty(same.get_space())
    for depth in range(launch, ndim):
        if not parallel[depth]:
            before = before.union(lex_before_at(ndim, depth))
    return same, before


def _coalesced(relation: isl.Map) -> isl.Map:
    """The relation in fewer pieces (5-10x quicker to compose), or as it is where isl's
    coalescing fails (seen: 'original tableau does not correspond to original basic map')."""
    try:
        return relation.coalesce()
    except isl.Error:
        return relation


def _region_problem(node: isl.ScheduleNode, workers: Workers, relations: dict[str, tuple[isl.Map, bool]],
                    statement: str) -> str | None:
    """The first dependence a region breaks inside one launch or stage, in one line, or None."""
    reach = isl.Set.from_union_set(node.get_domain())
    if reach.is_empty():
        return None
    prefix = isl.Map.from_union_map(node.get_prefix_schedule_union_map()).intersect_domain(reach)
    theta, parallel = flatten_below(node, node.get_domain(), lambda band, member, depth: depth in workers.depths)
    launch = prefix.dim(isl.dim_type.out)
    time = _coalesced(prefix.flat_range_product(theta.intersect_domain(reach)))
    same_launch, before = _order((False,) * launch + parallel, launch)
    for name, (relation, exclusive) in relations.items():
        local = _coalesced(relation.intersect_domain(reach).intersect_range(reach))
        times = local.apply_domain(time).apply_range(time).intersect(same_launch)
        bad = times.subtract(before.union(before.reverse()) if exclusive else before)
        if bad.is_empty():
            continue
        source, sink, _ = sample_pair(local.intersect(time.apply_range(bad).apply_range(time.reverse())))
        return _explain(workers, name, exclusive, statement, source, sink, image_of_point(time, source),
                        image_of_point(time, sink), (False,) * launch + parallel, launch)
    return None


def _explain(workers: Workers, name: str, exclusive: bool, statement: str, source: tuple[int, ...],
             sink: tuple[int, ...], t_source: tuple[int, ...], t_sink: tuple[int, ...],
             parallel: tuple[bool, ...], launch: int) -> str:
    src, snk = _instance(source, statement), _instance(sink, statement)
    where = ", ".join(f"c{d}={v}" for d, v in enumerate(t_source[:launch])) or "its only run"
    first = next((d for d, (a, b) in enumerate(zip(t_source, t_sink)) if a != b), None)
    if first is None:
        how = "at the same time"
    else:
        how = "in different workers at once" if parallel[first] else f"with {snk} first in one worker"
    element = "block" if statement == "T" else "element"
    why = (f"both write {element} ({source[1]},{source[2]})" if exclusive
           else f"{snk} {_NEEDS.get(name, 'needs what')} {src} writes ({name})")
    return f"{workers.label} (at {where}) runs {src} and {snk} {how}, but {why}"


def find_unsafe(tree: isl.Schedule, regions: Mapping[str, Workers], n: int, tile: int) -> list[str]:
    """One line per emitted parallel region that breaks a relaxed dependence; empty when safe.

    `tree` is the marked tree the generator walked, `regions` its parallel
    regions by the name of the mark above each; its statements are
    tile-layers T[kb, ib, jb] of `tile`, or points S[k, i, j].
    """
    statement = isl.Set.from_union_set(tree.get_domain()).get_tuple_name()
    deps = dependence_model("relaxed", n)
    relations = {name: (relation, name in deps.exclusive) for name, relation in deps.relations().items()}
    if statement == "T":
        relations = {name: (tile_lift(relation, n, tile), exclusive)
                     for name, (relation, exclusive) in relations.items()}
    marks: list[tuple[str, isl.ScheduleNode]] = []

    def visit(node: isl.ScheduleNode) -> bool:  # only collects: an exception inside isl's walk would be lost
        name = node.mark_get_id().get_name() if node.get_type() == isl.schedule_node_type.mark else None
        if name in regions:
            marks.append((name, node.copy()))  # the walk's node is only lent to the callback
        return name not in regions

    tree.get_root().foreach_descendant_top_down(visit)
    problems = (_region_problem(node, regions[name], relations, statement) for name, node in marks)
    return [problem for problem in problems if problem]


def check_emitted(tree: isl.Schedule, regions: Mapping[str, Workers], n: int, tile: int, what: str) -> None:
    """Raise UnsafeCodeError (one line: the launch or stage and a witness pair) unless the code is safe."""
    problems = find_unsafe(tree, regions, n, tile)
    if problems:
        raise UnsafeCodeError(f"refusing {what}: {problems[0]}")


def _unit_numbers(units: np.ndarray, blocks: int) -> np.ndarray:
    return (units[:, 0].astype(np.int64) * blocks + units[:, 1]) * blocks + units[:, 2]


def check_every_tile_layer_once(units: np.ndarray, n: int, tile: int, what: str) -> None:
    """Refuse a task list that misses a tile-layer or runs one twice."""
    blocks = -(-n // tile)
    counts = np.bincount(_unit_numbers(units, blocks), minlength=blocks**3) if len(units) else np.zeros(blocks**3)
    wrong = np.nonzero(counts != 1)[0]
    if len(wrong):
        kb, rest = divmod(int(wrong[0]), blocks * blocks)
        raise UnsafeCodeError(f"refusing {what}: it runs tile-layer T[{kb},{rest // blocks},{rest % blocks}] "
                              f"{int(counts[wrong[0]])} times, not once")


@cache
def _rules_problem(tile: int, rules: tuple[PredecessorRule, ...]) -> str | None:
    """A pair of the tile relation the rules leave unordered (for every n), in words, or None."""
    unordered = unordered_pairs(None, tile, rules_waits(rules))
    if unordered.is_empty():
        return None
    source, sink, params = sample_pair(unordered)
    return (f"at n = {params.get('n')}, T[{','.join(map(str, sink))}] need not wait for T[{','.join(map(str, source))}], "
            "which it depends on")


def check_task_graph(units: np.ndarray, n: int, tile: int, rules: tuple[PredecessorRule, ...], what: str) -> None:
    """The dataflow runtime's emitted artefacts: its task list runs every tile-layer once, and the
    readiness rules its code was rendered from order every pair of the relaxed tile relation (a
    task waits for its own block's layer and for each rule's block to be past the rule's layer)."""
    check_every_tile_layer_once(units, n, tile, what)
    problem = _rules_problem(tile, rules)
    if problem:
        raise UnsafeCodeError(f"refusing {what}: its readiness test is incomplete: {problem}")


def check_published_operands(tile: int, rules: tuple[PredecessorRule, ...], what: str) -> None:
    """The dataflow runtime's published operands: the copies its products read hold every update the
    relaxed model asks for, and exist before they are read (schedules.packing.published_operand_problem)."""
    problem = published_operand_problem(tile, rules)
    if problem:
        raise UnsafeCodeError(f"refusing {what}: its published operands are not proved: {problem}")
