"""Schedule trees: building them from a small spec, and reading them back.

Families describe their order once, over tile-layers T[kb, ib, jb] (block
layer kb of block (ib, jb)), as a nested spec of bands, sequences, sets,
filters and marks. `build_tree` turns a spec into an isl schedule tree;
`to_point_tree` pulls it back to the FW points S[k,i,j] and puts the point
loops (k, i, j) under every leaf. Everything downstream reads the isl tree,
so a user's tree written in isl's text form is served the same way.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

import islpy as isl

from tiling import model
from tiling.tile_dependences import TILE, TILE_ITERATORS
#: the roles a single tile-layer can have, from the block indices alone
ROLE_CONDITIONS = {
    "I": "ib = kb and jb = kb",
    "SD_row": "ib = kb and jb != kb",
    "SD_col": "jb = kb and ib != kb",
    "DD": "ib != kb and jb != kb",
}
#: above a task's band over several block layers of one block: the generator runs the band as one
#: min-plus product, k running over all of them (schedules.layer_products proves any order legal there)
PRODUCT_MARK = "layer_product"
#: above a stage whose tile-layers never write what a product of the stage reads as A or B: the barrier
#: runtime copies those operand blocks into contiguous micro-panels once, as the stage starts, and the
#: stage's products read the panels (schedules.packing proves the copy equals every read in place)
PACK_MARK = "packed_operands"


#: a band member: an expression over T[kb, ib, jb], or pieces (expression, condition)
Member = Union[str, tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class Band:
    members: tuple[Member, ...]
    coincident: bool
    child: Node = None


@dataclass(frozen=True)
class Filter:
    condition: str
    child: Node = None


@dataclass(frozen=True)
class Sequence_:
    children: tuple[Filter, ...]
    #: False: the children run one after another; True: an isl 'set' (any order, treated as concurrent)
    unordered: bool = False


@dataclass(frozen=True)
class Mark:
    name: str
    child: Node = None


Node = Union[Band, Sequence_, Mark, None]


def roles(names: Sequence[str], then: tuple[str, ...] = ()) -> Node:
    """A sequence of role filters, each under its mark, for the roles a stage can hold."""
    children = tuple(Filter(ROLE_CONDITIONS[name], Mark(name, Band(then, False) if then else None)) for name in names)
    return children[0].child if len(children) == 1 else Sequence_(children)


def tasks(name: str, role_names: Sequence[str], task: tuple[str, ...] = ("ib", "jb"),
          within: tuple[str, ...] = ("kb",), then: tuple[str, ...] = (), as_product: bool = False) -> Mark:
    """Parallel tasks indexed by `task`, under a mark naming them.

    Inside a task the tile-layers run in the order of `within` (a multitile
    holds one block over several layers); within each value of `within` the
    roles run in the order given, each under its mark, looping over `then`.
    as_product: the `within` band is marked PRODUCT_MARK (its layers run as one product).
    """
    inner = roles(role_names, then)
    if not within:
        return Mark(name, Band(task, True, inner))
    layers = Band(within, False, inner)
    return Mark(name, Band(task, True, Mark(PRODUCT_MARK, layers) if as_product else layers))


def stage(name: str, condition: str, role_names: Sequence[str], packed: bool = False, **task_options) -> Filter:
    """One stage: the tile-layers satisfying `condition`, run as `tasks` (packed: under PACK_MARK)."""
    run = tasks(name, role_names, **task_options)
    return Filter(condition, Mark(PACK_MARK, run) if packed else run)


# ---------------------------------------------------------------- building


def _prefix(params: Sequence[str]) -> str:
    return f"[{', '.join(params)}] -> " if params else ""


def _tile_tuple() -> str:
    return f"{TILE}[{', '.join(TILE_ITERATORS)}]"


def _member_text(member: Member) -> str:
    if isinstance(member, str):
        return f"{{ {_tile_tuple()} -> [({member})] }}"
    return "{ " + "; ".join(f"{_tile_tuple()} -> [({expr})] : {cond}" for expr, cond in member) + " }"


def _function(members: Sequence[Member], params: Sequence[str]) -> isl.MultiUnionPwAff:
    return isl.MultiUnionPwAff(f"{_prefix(params)}[{', '.join(_member_text(m) for m in members)}]")


def _grow(node: isl.ScheduleNode, spec: Node, params: Sequence[str]) -> isl.ScheduleNode:
    """Insert `spec` at the leaf `node`; return the node at the same position."""
    if spec is None:
        return node
    if isinstance(spec, Band):
        node = node.insert_partial_schedule(_function(spec.members, params))
        for member in range(len(spec.members)):
            node = node.band_member_set_coincident(member, spec.coincident)
        return _grow(node.child(0), spec.child, params).parent()
    if isinstance(spec, Mark):
        node = node.insert_mark(isl.Id(spec.name))
        return _grow(node.child(0), spec.child, params).parent()
    if isinstance(spec, Sequence_):
        filters = isl.UnionSetList.alloc(node.get_ctx(), len(spec.children))
        for child in spec.children:
            filters = filters.add(isl.UnionSet(f"{_prefix(params)}{{ {_tile_tuple()} : {child.condition} }}"))
        node = node.insert_set(filters) if spec.unordered else node.insert_sequence(filters)
        for position, child in enumerate(spec.children):
            node = _grow(node.child(position).child(0), child.child, params).parent().parent()
        return node
    if isinstance(spec, Filter):
        node = node.insert_filter(isl.UnionSet(f"{_prefix(params)}{{ {_tile_tuple()} : {spec.condition} }}"))
        return _grow(node.child(0), spec.child, params).parent()
    raise TypeError(f"not a schedule spec node: {spec!r}")


def tile_domain(n: int | None, tile: int) -> isl.Set:
    """The tile-layers of an n x n problem cut into tile x tile blocks (the last ones partial)."""
    bound = "n" if n is None else str(n)
    text = " and ".join(f"0 <= {x} and {tile}*{x} < {bound}" for x in TILE_ITERATORS)
    return isl.Set(f"{_prefix(['n'] if n is None else [])}{{ {_tile_tuple()} : {text} }}")


def build_tree(spec: Node, n: int | None, tile: int) -> isl.Schedule:
    """The tile-level isl schedule tree of a spec."""
    params = ["n"] if n is None else []
    root = isl.Schedule.from_domain(isl.UnionSet.from_set(tile_domain(n, tile)))
    return _grow(root.get_root().child(0), spec, params).get_schedule()


def _point_band_for(order: tuple[str, ...], n: int | None) -> isl.MultiUnionPwAff:
    names = ", ".join(model.ITERATORS)
    pieces = ", ".join(f"{{ {model.STATEMENT}[{names}] -> [({x})] }}" for x in order)
    return isl.MultiUnionPwAff(f"{_prefix(['n'] if n is None else [])}[{pieces}]")


def _enclosing_role(node: isl.ScheduleNode) -> str | None:
    while node.has_parent():
        node = node.parent()
        if node.get_type() == isl.schedule_node_type.mark and node.mark_get_id().get_name() in ROLE_CONDITIONS:
            return node.mark_get_id().get_name()
    return None


def mark_instances(tree: isl.Schedule, name: str) -> isl.UnionMap | None:
    """{ T -> T' : both under one instance of a mark called `name` (one value of everything above it) },
    or None when the tree has no such mark."""
    marked: list[isl.ScheduleNode] = []

    def visit(node: isl.ScheduleNode) -> bool:  # only collects: an exception inside isl's walk would be lost
        if node.get_type() == isl.schedule_node_type.mark and node.mark_get_id().get_name() == name:
            marked.append(node.copy())  # the walk's node is only lent to the callback
            return False
        return True

    tree.get_root().foreach_descendant_top_down(visit)
    together = None
    for node in marked:
        prefix = node.get_prefix_schedule_union_map()
        pairs = prefix.apply_range(prefix.reverse())
        together = pairs if together is None else together.union(pairs)
    return together


def points_to_tiles(n: int | None, tile: int) -> isl.Map:
    """{ S[k, i, j] -> T[kb, ib, jb] } over the domain for n: each point's tile-layer in blocks of `tile`."""
    blocks = ", ".join(f"floor({x}/{tile})" for x in model.ITERATORS)
    return isl.Map(f"{_prefix(['n'] if n is None else [])}{{ {model.STATEMENT}[{', '.join(model.ITERATORS)}] -> "
                   f"{TILE}[{blocks}] }}").intersect_domain(model.domain(n))


#: point trees by (tile tree as text, n, tile, point order), the most recently made last: an exploration
#: builds each candidate's schedule several times (proof, run, signature), and pulling a tree back to the
#: points took 0.14 s of isl a time, 58% of judging the families' mutants
_POINT_TREES: OrderedDict[tuple, isl.Schedule] = OrderedDict()
POINT_TREES_KEPT = 512


def to_point_tree(tile_tree: isl.Schedule, n: int | None, tile: int,
                  point_order: dict[str, tuple[str, ...]] | None = None) -> isl.Schedule:
    """The same order over the points S[k,i,j]: tile-layer by tile-layer, k, i, j inside each.

    point_order can give a role another order of the point loops (e.g.
    SD_row: ('i', 'j', 'k')) to explore what the checker then says. (isl's objects do not change, so
    the tree made once for the same arguments is handed out again.)
    """
    key = (tile_tree.to_str(), n, tile, tuple(sorted((point_order or {}).items())))
    found = _POINT_TREES.get(key)
    if found is None:
        found = _POINT_TREES[key] = _point_tree(tile_tree, n, tile, point_order)
        if len(_POINT_TREES) > POINT_TREES_KEPT:
            _POINT_TREES.popitem(last=False)
    else:
        _POINT_TREES.move_to_end(key)
    return found


def _point_tree(tile_tree: isl.Schedule, n: int | None, tile: int,
                point_order: dict[str, tuple[str, ...]] | None) -> isl.Schedule:
    names = ", ".join(model.ITERATORS)
    blocks = ", ".join(f"floor({x}/{tile})" for x in model.ITERATORS)
    to_tile = isl.UnionPwMultiAff(f"{_prefix(['n'] if n is None else [])}{{ {model.STATEMENT}[{names}] -> {TILE}[{blocks}] }}")
    points = tile_tree.pullback_union_pw_multi_aff(to_tile).intersect_domain(isl.UnionSet.from_set(model.domain(n)))
    bands = {role: _point_band_for(order, n) for role, order in (point_order or {}).items()}
    default = _point_band_for(model.ITERATORS, n)

    def add_point_loops(node: isl.ScheduleNode) -> isl.ScheduleNode:
        if node.get_type() == isl.schedule_node_type.leaf:
            return node.insert_partial_schedule(bands.get(_enclosing_role(node), default))
        return node

    return points.map_schedule_node_bottom_up(add_point_loops)
