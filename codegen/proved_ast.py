"""The part of code generation every target shares: which tree to walk, and its marks.

A family schedule is generated from its tile-level tree: each statement
T[kb, ib, jb] is one tile-layer, run by the tile kernel its role mark names,
so the code stays the same size for any n. A tree given only over the points
S[k, i, j] (a user's tree, a custom point order, tile size 1) is generated
point by point. Either way the tree gets the stage view's marks plus a
'parallel' mark above each band whose iterations are a stage's tasks.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import islpy as isl

from schedules.emitted import UnsafeCodeError, Workers, check_emitted
from schedules.proofs import UNSAFE, proof_path, prove
from schedules.schedule import Schedule
from schedules.stages import STAGE_MARK, STREAMS_MARK, TASK_MARK, compact_loops, mark_stages, stream_number
from schedules.tree import PACK_MARK, PRODUCT_MARK
from tiling.isl_ast import Hooks, build_ast, node_to_python

PARALLEL_MARK = "parallel"
#: numbered above each set of streams (streams_0, ...): the region a generator running the streams at once records
STREAMS_REGION = STREAMS_MARK + "_"


def is_parallel_mark(name: str) -> bool:
    """Parallel marks are numbered (parallel_0, parallel_1, ...): each is one region of the code."""
    return name.startswith(PARALLEL_MARK + "_")


def is_streams_region(name: str) -> bool:
    return name.startswith(STREAMS_REGION)


@dataclass(frozen=True)
class ProvedAst:
    """The tree a generator walks, its isl AST, and what a statement instance is."""

    tree: isl.Schedule
    ast: isl.AstNode
    #: 'tile' (statements are tile-layers T[kb, ib, jb]) or 'point' (statements are S[k, i, j])
    level: str
    n: int
    tile: int
    #: the schedule was handed over with schedules.unsafe_run_unproved: nothing is proved, the code
    #: runs what the tree declares
    unproved: bool = False

    @property
    def parameters(self) -> dict[str, int]:
        """The tree's parameters (a user's tree may keep n symbolic, bound to one value)."""
        space = self.tree.get_domain().get_space()
        return {space.get_dim_name(isl.dim_type.param, d): self.n for d in range(space.dim(isl.dim_type.param))}

    def check(self, regions: dict[str, Workers], what: str) -> None:
        """Refuse code whose parallel regions, as a generator emits them, break a dependence.

        A proof is kept on disk (next to the generated code) for the same tree, regions and
        checker source, so a new process that finds its code cached skips it too (0.3-3 s).
        POLYFW_PROVE_ALWAYS=1 proves again anyway: mutation testing changes the checker's
        behaviour without changing its files.
        """
        if self.unproved:
            return
        tile = self.tile if self.level == "tile" else 1
        unreported = sorted(parallel_marks(self.ast) - set(regions))
        if unreported:
            raise UnsafeCodeError(f"refusing {what}: parallel region {unreported[0]} was written without a record of "
                                  "what it runs at once, so it cannot be proved")
        regions_text = sorted((mark, region.label, sorted(region.depths)) for mark, region in regions.items())
        proof = proof_path(f"emitted\n{self.tree.to_str()}\n{regions_text}\n{self.n} {tile}")
        if proof.exists() and os.environ.get("POLYFW_PROVE_ALWAYS") != "1":
            return
        check_emitted(self.tree, regions, self.n, tile, what)
        proof.parent.mkdir(parents=True, exist_ok=True)
        proof.write_text(f"{what}: proved\n")


class MarkState:
    """Where a walk of the marked AST is. Every generator's mark hook feeds it, so the marks are
    read one way: the role of the statements below (the last role or stage-kind mark), the
    parallel region they are in, and whether that region's task has begun (loops met before it
    are the band whose iterations are tasks; loops after it run in order inside a task)."""

    def __init__(self) -> None:
        self.role: str | None = None
        self.region: str | None = None
        self.in_task = False
        #: below a PRODUCT_MARK: the task's layers of one block may join into one product
        self.in_product = False
        #: below a PACK_MARK: a stage here may read its products' operands from panels packed as it starts
        self.packed = False

    def enter(self, name: str) -> str:
        """Take in a mark; say what it is: 'region', 'task', 'stage', 'streams' (a set of streams, one of them, or its
        region), 'product' (a band of layers a task may run as one product), 'packed' (stages whose operands may
        be packed) or 'role'."""
        if is_parallel_mark(name):
            self.region, self.in_task = name, False
            return "region"
        if name == TASK_MARK:
            self.role, self.in_task = None, True
            return "task"
        if name == STAGE_MARK:
            return "stage"
        if name == STREAMS_MARK or is_streams_region(name) or stream_number(name) is not None:
            return "streams"
        if name == PRODUCT_MARK:
            self.in_product = True
            return "product"
        if name == PACK_MARK:
            self.packed = True
            return "packed"
        self.role = name
        return "role"

    def leave(self, name: str) -> None:
        if is_parallel_mark(name):
            self.region, self.in_task = None, False
        if name == PRODUCT_MARK:
            self.in_product = False
        if name == PACK_MARK:
            self.packed = False

    @property
    def before_task(self) -> bool:
        """Inside a parallel region, above its task mark."""
        return self.region is not None and not self.in_task


def parallel_marks(ast: isl.AstNode) -> set[str]:
    """The parallel marks isl's AST holds: each one region of the generated code (a stage with
    no instance for this n is absent from the AST, and from the code)."""
    found: set[str] = set()

    def mark(name: str) -> tuple[list[str], list[str]]:
        if is_parallel_mark(name):
            found.add(name)
        return [], []

    node_to_python(ast, Hooks(statement=lambda _, args: [], mark=mark))
    return found


def record_workers(regions: dict[str, Workers], mark: str, label: str, iterators: set[str]) -> None:
    """Note that the code of parallel region `mark` runs the iterations of `iterators` in different workers."""
    depths = frozenset(int(name[1:]) for name in iterators)  # isl names the loop at schedule depth d c<d>
    known = regions.get(mark)
    regions[mark] = Workers(label, depths) if known is None else Workers(known.label, known.depths | depths)


def mark_parallel(tree: isl.Schedule) -> isl.Schedule:
    """A numbered parallel mark above each band whose iterations are tasks, and a numbered streams
    region mark above each set of streams (after mark_stages)."""
    count, overlaps = [0], [0]

    def above_tasks(node: isl.ScheduleNode) -> isl.ScheduleNode:
        if node.get_type() == isl.schedule_node_type.mark and node.mark_get_id().get_name() == STREAMS_MARK:
            overlaps[0] += 1
            return node.insert_mark(isl.Id(f"{STREAMS_REGION}{overlaps[0] - 1}"))
        if node.get_type() != isl.schedule_node_type.band or node.n_children() != 1:
            return node
        below = node.child(0)
        if below.get_type() == isl.schedule_node_type.mark and below.mark_get_id().get_name() == TASK_MARK:
            count[0] += 1
            return node.insert_mark(isl.Id(f"{PARALLEL_MARK}_{count[0] - 1}"))
        return node

    return tree.map_schedule_node_bottom_up(above_tasks)


def prepare(schedule: Schedule) -> ProvedAst:
    """The marked tree and AST to generate code from, once the tree's order is proved (schedules.proofs)."""
    if schedule.n is None:
        raise ValueError(f"{schedule.name} is parametric in n; build it for a concrete n to generate code")
    unproved = prove(schedule).model == UNSAFE
    tile_level = schedule.tile_tree is not None and schedule.original_point_order and schedule.tile > 1
    tree = schedule.tile_tree if tile_level else schedule.tree
    marked = mark_parallel(compact_loops(mark_stages(tree)))
    return ProvedAst(marked, build_ast(marked), "tile" if tile_level else "point", schedule.n, schedule.tile, unproved)


def isl_c_source(proved: ProvedAst) -> str:
    """isl's own C rendering of the AST the generator walks (marks print as comments)."""
    return proved.ast.to_C_str()
