"""The stage/task view of a schedule: ordered stages, each a set of parallel tasks.

A stage is everything the schedule runs between two barriers (a kernel
launch on a GPU); its tasks run concurrently, each sequentially inside.
The view is read off the tree: the first fully coincident band (or set
node) on a path opens a stage, its iterations (or the set's children) are
the tasks. The units are the domain's instances — tile-layers T[kb,ib,jb]
for the families (so Q = 256 is 16.7 M units, not 5e11 points), points for
a tree given only over S[k,i,j]. They are listed by a program that isl's
AST of the marked tree turns into, run under Numba when large.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import islpy as isl
import numpy as np

from tiling.code_cache import load_module
from tiling.isl_ast import Hooks, build_ast, node_to_python
from tiling.isl_utils import count_points

from .tree import PACK_MARK, PRODUCT_MARK, ROLE_CONDITIONS

STAGE_MARK, TASK_MARK = "stage", "task"
#: above a set whose children each hold stages (STREAMS_MARK), and above each child (stream_<position>)
STREAMS_MARK, STREAM_MARK = "streams", "stream"
ROLES = tuple(ROLE_CONDITIONS)
#: above this many units the enumerator is compiled with Numba
COMPILE_ABOVE = 200_000
#: the most units a view will list
MAX_UNITS = 2**28


def _coincident_flags(band: isl.ScheduleNode) -> list[bool]:
    return [band.band_member_get_coincident(m) for m in range(band.band_n_member())]


def _split_mixed_band(band: isl.ScheduleNode) -> isl.ScheduleNode:
    """Split a band whose members change kind, so each band is all parallel or all sequential."""
    flags = _coincident_flags(band)
    change = next((m for m in range(1, len(flags)) if flags[m] != flags[0]), None)
    return band if change is None else band.band_split(change)


def _task_below(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """Inside a set child: tasks are the iterations of a coincident band reached through
    filters and marks only; otherwise the whole child is one task."""
    probe = node
    while probe.get_type() in (isl.schedule_node_type.filter, isl.schedule_node_type.mark):
        probe = probe.child(0)
    if probe.get_type() == isl.schedule_node_type.band:
        probe = _split_mixed_band(probe)
        if all(_coincident_flags(probe)):
            marked = probe.child(0).insert_mark(isl.Id(TASK_MARK))
            return marked.parent()
    return node.insert_mark(isl.Id(TASK_MARK))


def _mark(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """Insert stage/task marks in the subtree at `node`; return the node at the same position."""
    kind = node.get_type()
    if kind == isl.schedule_node_type.band:
        node = _split_mixed_band(node)
        if all(_coincident_flags(node)):
            band = node.child(0).insert_mark(isl.Id(TASK_MARK)).parent()
            return band.insert_mark(isl.Id(STAGE_MARK))
        return _mark(node.child(0)).parent()
    if kind == isl.schedule_node_type.set:
        if any(_holds_stages(node.child(position).child(0)) for position in range(node.n_children())):
            return _mark_streams(node)
        for position in range(node.n_children()):
            node = _task_below(node.child(position).child(0)).parent().parent()
            node = _climb_to_set(node)
        return node.insert_mark(isl.Id(STAGE_MARK))
    if kind == isl.schedule_node_type.leaf:
        return node.insert_mark(isl.Id(TASK_MARK)).insert_mark(isl.Id(STAGE_MARK))
    if kind == isl.schedule_node_type.sequence:
        for position in range(node.n_children()):
            node = _mark(node.child(position)).parent()
        return node
    if kind in (isl.schedule_node_type.filter, isl.schedule_node_type.mark, isl.schedule_node_type.domain,
                isl.schedule_node_type.context, isl.schedule_node_type.guard):
        return _mark(node.child(0)).parent()
    raise ValueError(f"schedule tree node of type {kind} is not supported in a stage view")


def _holds_stages(node: isl.ScheduleNode) -> bool:
    """A set child holds stages of its own when, below its filters and marks, it is a sequence."""
    while node.get_type() in (isl.schedule_node_type.filter, isl.schedule_node_type.mark):
        node = node.child(0)
    return node.get_type() in (isl.schedule_node_type.sequence, isl.schedule_node_type.set)


def _mark_streams(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """A set whose children hold stages: each child is a stream (stream_<position>) with stages of its own,
    and the set is marked 'streams'. The stage view lists the streams' stages one stream after another
    (a set may run in any order); a GPU runs the streams at once, which the set's proof allows."""
    for position in range(node.n_children()):
        child = _mark(node.child(position).child(0)).insert_mark(isl.Id(f"{STREAM_MARK}_{position}"))
        node = child.parent().parent()
    return node.insert_mark(isl.Id(STREAMS_MARK))


def stream_number(name: str) -> int | None:
    """The position of a stream mark's child in its set (stream_<position>), else None."""
    prefix = STREAM_MARK + "_"
    return int(name[len(prefix):]) if name.startswith(prefix) and name[len(prefix):].isdigit() else None


def _climb_to_set(node: isl.ScheduleNode) -> isl.ScheduleNode:
    while node.get_type() != isl.schedule_node_type.set:
        node = node.parent()
    return node


def mark_stages(tree: isl.Schedule) -> isl.Schedule:
    """The tree with a 'stage' mark where each stage opens and a 'task' mark where each task does."""
    return _mark(tree.get_root()).get_schedule()


def _atomic(node: isl.ScheduleNode) -> isl.ScheduleNode:
    if node.get_type() == isl.schedule_node_type.band:
        for member in range(node.band_n_member()):
            node = node.band_member_set_ast_loop_type(member, isl.ast_loop_type.atomic)
    return node


def compact_loops(tree: isl.Schedule) -> isl.Schedule:
    """Ask isl for each loop once ('atomic'), not split by cases: smaller code, quicker to compile."""
    return tree.map_schedule_node_bottom_up(_atomic)


@dataclass(frozen=True)
class Task:
    stage: int
    kind: str
    units: np.ndarray  # (m, 3): the tile-layers (or points) of the task, in order

    @property
    def blocks(self) -> list[tuple[int, int]]:
        return sorted({(int(i), int(j)) for _, i, j in self.units})

    @property
    def layers(self) -> tuple[int, int]:
        return int(self.units[:, 0].min()), int(self.units[:, 0].max())


@dataclass(frozen=True, eq=False)
class StageView:
    """Every unit in execution order with its dense stage and task index, role and stage kind."""

    units: np.ndarray   # (U, 3) int32
    stage: np.ndarray   # (U,) int32, non-decreasing
    task: np.ndarray    # (U,) int32, non-decreasing, tasks never straddle stages
    role: np.ndarray    # (U,) int8, index into ROLES or -1
    kind: np.ndarray    # (U,) int16, index into kinds or -1
    kinds: tuple[str, ...]
    n: int
    tile: int
    #: (U,) int32: which set of streams the unit's stage belongs to (its stages overlap the other
    #: streams' of that set on a GPU), -1 outside every set of streams; and (U,) int8 its stream there
    group: np.ndarray
    stream: np.ndarray
    #: (U,) int32: the instance of a layer product (schedules.layer_products) the unit runs in, -1 outside
    #: every one: a runtime may run the consecutive layers of one block in one instance as one call
    product: np.ndarray
    #: (U,) bool: the unit's stage is under a PACK_MARK (schedules.packing): its products may read their
    #: operands from micro-panels copied as the stage starts
    packed: np.ndarray

    @property
    def n_stages(self) -> int:
        return int(self.stage[-1]) + 1 if len(self.stage) else 0

    @property
    def n_tasks(self) -> int:
        return int(self.task[-1]) + 1 if len(self.task) else 0

    @cached_property
    def call_start(self) -> np.ndarray:
        """(U,) bool: the unit starts a call of a runtime, True but for the next layer of the previous
        unit's block in the same layer product (the runtimes run those layers as one product)."""
        units, product = self.units, self.product
        joined = ((product[1:] >= 0) & (product[1:] == product[:-1]) & (self.role[1:] == self.role[:-1])
                  & (units[1:, 1] == units[:-1, 1]) & (units[1:, 2] == units[:-1, 2])
                  & (units[1:, 0] == units[:-1, 0] + 1))
        return np.concatenate([np.ones(min(len(units), 1), dtype=bool), ~joined])

    @cached_property
    def task_start(self) -> np.ndarray:
        """Offsets of each task's units (length n_tasks + 1)."""
        return np.searchsorted(self.task, np.arange(self.n_tasks + 1)).astype(np.int64)

    @cached_property
    def task_length(self) -> np.ndarray:
        return np.diff(self.task_start)

    @cached_property
    def task_stage(self) -> np.ndarray:
        return self.stage[self.task_start[:-1]]

    @cached_property
    def stage_start(self) -> np.ndarray:
        """Offsets of each stage's units (length n_stages + 1)."""
        return np.searchsorted(self.stage, np.arange(self.n_stages + 1)).astype(np.int64)

    def tasks_of(self, stage: int) -> list[Task]:
        """The tasks of one stage, with their units."""
        first, last = np.searchsorted(self.task_stage, [stage, stage + 1])
        found = []
        for t in range(first, last):
            lo, hi = self.task_start[t], self.task_start[t + 1]
            kind = self.kinds[self.kind[lo]] if self.kind[lo] >= 0 else "-"
            found.append(Task(stage, kind, self.units[lo:hi]))
        return found


_ENUMERATOR_HEAD = '''"""Generated by polyfw: lists the units of one schedule with their stage, task, role and kind."""
from numba import njit


@njit(cache=True)
def emit(out, state, a, b, c):
    count = state[4]
    out[count, 0] = state[0]
    out[count, 1] = state[1]
    out[count, 2] = state[2]
    out[count, 3] = state[3]
    out[count, 4] = a
    out[count, 5] = b
    out[count, 6] = c
    out[count, 7] = state[5] if state[6] >= 0 else -1
    out[count, 8] = state[6]
    out[count, 9] = state[7] if state[8] > 0 else -1
    out[count, 10] = state[9]
    state[4] = count + 1


@njit(cache=True)
'''


def _enumerator_source(ast: isl.AstNode, kinds: list[str], parameters: dict[str, int]) -> str:
    """A module whose enumerate_units(out, state) records every unit in execution order.

    state holds [stage, task, role, kind, count, set of streams, stream, layer product, inside one, packed]:
    counters in an array keep the generated function small for Numba, which crawls on many locals.
    """

    def mark(name: str) -> tuple[list[str], list[str]]:
        if name == STREAMS_MARK:
            return ["state[5] += 1"], ["state[6] = -1"]
        if stream_number(name) is not None:
            return [f"state[6] = {stream_number(name)}"], []
        if name == STAGE_MARK:
            return ["state[0] += 1"], []
        if name == TASK_MARK:
            return ["state[1] += 1"], []
        if name in ROLES:
            return [f"state[2] = {ROLES.index(name)}"], []
        if name == PRODUCT_MARK:  # how a task runs its layers, not a kind of stage
            return ["state[7] += 1", "state[8] = 1"], ["state[8] = 0"]
        if name == PACK_MARK:  # where a stage's operands come from, not a kind of stage
            return ["state[9] = 1"], ["state[9] = 0"]
        if name not in kinds:
            kinds.append(name)
        return [f"state[3] = {kinds.index(name)}"], []

    def statement(_: str, args: list[str]) -> list[str]:
        return [f"emit(out, state, {', '.join(args)})"]

    body = node_to_python(ast, Hooks(statement=statement, mark=mark), indent=1)
    head = ["def enumerate_units(out, state):"] + [f"    {name} = {value}" for name, value in parameters.items()]
    return _ENUMERATOR_HEAD + "\n".join(head + body + ["    return state[4]", ""])


def _run_enumerator(source: str, size: int) -> np.ndarray:
    """Run the enumerator: compiled (and cached on disk) when large, as plain Python when small."""
    enumerate_units = load_module(source, "stages").enumerate_units
    if size <= COMPILE_ABOVE:
        enumerate_units = enumerate_units.py_func
    out = np.empty((size, 11), dtype=np.int64)
    count = enumerate_units(out, np.array([-1, -1, -1, -1, 0, -1, -1, -1, 0, 0], dtype=np.int64))
    if count != size:
        raise RuntimeError(f"the stage view listed {count} units, but the domain has {size}")
    return out


def stage_view(tree: isl.Schedule, n: int, tile: int) -> StageView:
    """The stage/task view of a schedule tree for a concrete n (tile: the units' block size)."""
    size = count_points(tree.get_domain())
    if size > MAX_UNITS:
        raise ValueError(f"the stage view would list {size} units (more than {MAX_UNITS}); use a larger tile")
    kinds: list[str] = []
    params = tree.get_domain().get_space()
    parameters = {params.get_dim_name(isl.dim_type.param, d): n for d in range(params.dim(isl.dim_type.param))}
    source = _enumerator_source(build_ast(compact_loops(mark_stages(tree))), kinds, parameters)
    out = _run_enumerator(source, size)
    _, stage = np.unique(out[:, 0], return_inverse=True)
    _, task = np.unique(out[:, 1], return_inverse=True)
    return StageView(
        units=out[:, 4:7].astype(np.int32), stage=stage.astype(np.int32), task=task.astype(np.int32),
        role=out[:, 2].astype(np.int8), kind=out[:, 3].astype(np.int16), kinds=tuple(kinds), n=n, tile=tile,
        group=out[:, 7].astype(np.int32), stream=out[:, 8].astype(np.int8), product=out[:, 9].astype(np.int32),
        packed=out[:, 10].astype(bool),
    )
