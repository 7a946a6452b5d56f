"""A schedule tree as one flat schedule map, for the legality checker.

Every root-to-leaf path of the tree gives a list of time columns: band
members (parallel when coincident), and the child position at sequence
(sequential) and set (treated as concurrent, the strictest reading)
nodes. Paths are aligned depth by depth; where paths disagree on whether
a depth is parallel, that depth gets two columns, one of each kind, and
each path fills the one of its kind and zero in the other. Two instances
on different paths are already told apart by an earlier sequence or set
column, so each path keeps exactly its own ordering.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce

import islpy as isl

from .schedule_map import ScheduleMap

#: whether band member `member` of a band node, at schedule depth `depth`, runs concurrently
MemberKind = Callable[[isl.ScheduleNode, int, int], bool]


def coincident(node: isl.ScheduleNode, member: int, depth: int) -> bool:
    """The tree's own reading: a band member is parallel when it is coincident."""
    return node.band_member_get_coincident(member)


@dataclass
class _Path:
    domain: isl.UnionSet
    columns: list[tuple[isl.UnionMap, bool]]
    #: schedule depth (band members above), as isl's AST names its iterators c<depth>
    depth: int = 0


def _band_column(node: isl.ScheduleNode, member: int) -> isl.UnionMap:
    upa = node.band_get_partial_schedule().get_at(member)
    return isl.UnionMap.from_multi_union_pw_aff(isl.MultiUnionPwAff.from_union_pw_aff(upa))


def _constant(domain: isl.UnionSet, value: int) -> isl.UnionMap:
    return isl.UnionMap.from_domain_and_range(domain, isl.UnionSet(f"{{ [{value}] }}"))


def _walk(node: isl.ScheduleNode, path: _Path, found: list[_Path], kind_of: MemberKind = coincident) -> None:
    kind = node.get_type()
    if kind == isl.schedule_node_type.leaf:
        found.append(path)
        return
    if kind in (isl.schedule_node_type.sequence, isl.schedule_node_type.set):
        concurrent = kind == isl.schedule_node_type.set
        for position in range(node.n_children()):
            child = node.child(position)
            domain = path.domain.intersect(child.filter_get_filter())
            column = (_constant(domain, position), concurrent)
            _walk(child.child(0), _Path(domain, path.columns + [column], path.depth), found, kind_of)
        return
    if kind == isl.schedule_node_type.band:
        members = range(node.band_n_member())
        columns = [(_band_column(node, m), kind_of(node, m, path.depth + m)) for m in members]
        _walk(node.child(0), _Path(path.domain, path.columns + columns, path.depth + len(members)), found, kind_of)
        return
    if kind == isl.schedule_node_type.filter:
        domain = path.domain.intersect(node.filter_get_filter())
        _walk(node.child(0), _Path(domain, path.columns, path.depth), found, kind_of)
        return
    if kind in (isl.schedule_node_type.mark, isl.schedule_node_type.context, isl.schedule_node_type.guard):
        _walk(node.child(0), path, found, kind_of)
        return
    raise ValueError(f"schedule tree node of type {kind} is not supported (use bands, sequences, sets, filters and marks)")


def leaf_domains(tree: isl.Schedule) -> list[isl.UnionSet]:
    """The instances reaching each leaf of the tree (each runs once per leaf it reaches)."""
    root = tree.get_root()
    paths: list[_Path] = []
    _walk(root.child(0), _Path(root.domain_get_domain(), []), paths)
    return [path.domain for path in paths]


def _layout(paths: list[_Path]) -> list[tuple[int, bool]]:
    """Global columns as (path depth, parallel?) pairs."""
    depth = max((len(p.columns) for p in paths), default=0)
    layout = []
    for d in range(depth):
        kinds = sorted({p.columns[d][1] for p in paths if len(p.columns) > d})
        layout += [(d, kind) for kind in kinds]
    return layout


def flatten(tree: isl.Schedule, n: int | None, name: str, tile: int | None = None) -> ScheduleMap:
    """The flat ScheduleMap of an isl schedule tree over S[k, i, j] (or over T[kb, ib, jb] of `tile`)."""
    root = tree.get_root()
    flat, parallel = flatten_below(root.child(0), root.domain_get_domain())
    if n is not None:
        index = flat.get_space().find_dim_by_name(isl.dim_type.param, "n")
        if index >= 0:
            flat = flat.fix_val(isl.dim_type.param, index, n).project_out(isl.dim_type.param, index, 1)
    return ScheduleMap(flat.coalesce(), parallel, n, name, tile)


def flatten_below(node: isl.ScheduleNode, domain: isl.UnionSet,
                  kind_of: MemberKind = coincident) -> tuple[isl.Map, tuple[bool, ...]]:
    """The flat order of the subtree at `node` over `domain`, and each column's kind (True: parallel)."""
    paths: list[_Path] = []
    _walk(node, _Path(domain, [], node.get_schedule_depth()), paths, kind_of)
    layout = _layout(paths)
    pieces = []
    for path in paths:
        columns = []
        for depth, parallel in layout:
            own = len(path.columns) > depth and path.columns[depth][1] == parallel
            columns.append(path.columns[depth][0] if own else _constant(path.domain, 0))
        if not columns:
            columns = [_constant(path.domain, 0)]
        pieces.append(reduce(lambda a, b: a.flat_range_product(b), columns).intersect_domain(path.domain))
    flat = isl.Map.from_union_map(reduce(lambda a, b: a.union(b), pieces))
    return flat, tuple(kind for _, kind in layout) or (False,)
