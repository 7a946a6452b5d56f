"""Mutations of a schedule tree: orders the families do not write, for the checker to judge.

Each mutation is a pure function from a tile-level spec (schedules.tree) to a new one, named
verb_noun, applied at a path (the child indices from the root). `mutants` lists every single
mutation of a spec; the checker keeps the legal ones, and `order_signature` tells whether a
legal one is an order some family already produces (the same stages, each with the same
tasks, each running the same tile-layers in the same order) or a novel one.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from .stages import StageView
from .tree import PRODUCT_MARK, Band, Filter, Mark, Node, Sequence_

Path = tuple[int, ...]


def _children(node: Node) -> tuple:
    if isinstance(node, Sequence_):
        return node.children
    if isinstance(node, (Band, Filter, Mark)):
        return () if node.child is None else (node.child,)
    return ()


def walk(spec: Node, path: Path = ()) -> Iterator[tuple[Path, Node]]:
    """Every node of a spec with its path, parents first."""
    if spec is None:
        return
    yield path, spec
    for position, child in enumerate(_children(spec)):
        yield from walk(child, path + (position,))


def node_at(spec: Node, path: Path) -> Node:
    for position in path:
        spec = _children(spec)[position]
    return spec


def replace_at(spec: Node, path: Path, new: Node) -> Node:
    """The spec with the node at `path` replaced by `new` (the rest shared, nothing changed in place)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(spec, Sequence_):
        children = list(spec.children)
        children[head] = replace_at(children[head], rest, new)
        return replace(spec, children=tuple(children))
    return replace(spec, child=replace_at(spec.child, rest, new))


def _negated(member):
    if isinstance(member, str):
        return f"-({member})"
    return tuple((f"-({expression})", condition) for expression, condition in member)


def _later(member, condition: str):
    """`member` one step later where `condition` holds."""
    pieces = ((member, "0 = 0"),) if isinstance(member, str) else member
    return tuple(piece for expression, where in pieces
                 for piece in ((f"({expression}) + 1", f"({where}) and ({condition})"),
                               (expression, f"({where}) and not ({condition})")))


# ---------------------------------------------------------------- the mutations


def swap_children(spec: Node, path: Path, first: int, second: int) -> Node:
    """Two stages (children of an ordered sequence) exchanged."""
    node = node_at(spec, path)
    children = list(node.children)
    children[first], children[second] = children[second], children[first]
    return replace_at(spec, path, replace(node, children=tuple(children)))


def reverse_band(spec: Node, path: Path) -> Node:
    """A band's sweep run backwards (every member negated)."""
    node = node_at(spec, path)
    return replace_at(spec, path, replace(node, members=tuple(_negated(m) for m in node.members)))


def interchange_band(spec: Node, path: Path) -> Node:
    """A band's loop order reversed (its last member outermost)."""
    node = node_at(spec, path)
    return replace_at(spec, path, replace(node, members=node.members[::-1]))


def split_band(spec: Node, path: Path) -> Node:
    """A band of several members as two nested bands (its first member outside)."""
    node = node_at(spec, path)
    inner = Band(node.members[1:], node.coincident, node.child)
    return replace_at(spec, path, Band(node.members[:1], node.coincident, inner))


def fuse_bands(spec: Node, path: Path) -> Node:
    """A band and the band right below it (the same kind) as one band."""
    node = node_at(spec, path)
    return replace_at(spec, path, Band(node.members + node.child.members, node.coincident, node.child.child))


def parallelize_band(spec: Node, path: Path) -> Node:
    """A sequential band's iterations run as concurrent tasks."""
    return replace_at(spec, path, replace(node_at(spec, path), coincident=True))


def unorder_sequence(spec: Node, path: Path) -> Node:
    """An ordered sequence's children run concurrently (an isl set)."""
    return replace_at(spec, path, replace(node_at(spec, path), unordered=True))


def delay_child(spec: Node, path: Path, position: int) -> Node:
    """Below a one-member band over a sequence: the child at `position` runs in the band's next
    iteration instead (a stage moved across a group or layer boundary)."""
    band = node_at(spec, path)
    condition = band.child.children[position].condition
    return replace_at(spec, path, replace(band, members=(_later(band.members[0], condition),)))


def join_layers(spec: Node, path: Path) -> Node:
    """A sequential band over block layers run as one layer product (schedules.layer_products)."""
    return replace_at(spec, path, Mark(PRODUCT_MARK, node_at(spec, path)))


def _joinable(spec: Node, path: Path, band: Band) -> bool:
    """A sequential band over kb alone, not joined already."""
    above = node_at(spec, path[:-1]) if path else None
    return (not band.coincident and band.members == ("kb",)
            and not (isinstance(above, Mark) and above.name == PRODUCT_MARK))


@dataclass(frozen=True)
class Mutant:
    description: str
    spec: Node


def mutants(spec: Node) -> list[Mutant]:
    """Every single mutation of `spec` that applies, each described by what it did where."""
    found = []
    for path, node in walk(spec):
        where = "/".join(map(str, path)) or "root"
        if isinstance(node, Sequence_) and not node.unordered:
            for first in range(len(node.children)):
                for second in range(first + 1, len(node.children)):
                    found.append(Mutant(f"swap_children({where}, {first}, {second})",
                                        swap_children(spec, path, first, second)))
            if len(node.children) > 1:
                found.append(Mutant(f"unorder_sequence({where})", unorder_sequence(spec, path)))
        if not isinstance(node, Band):
            continue
        if not node.coincident:
            found.append(Mutant(f"reverse_band({where})", reverse_band(spec, path)))
            found.append(Mutant(f"parallelize_band({where})", parallelize_band(spec, path)))
        if len(node.members) > 1:
            found.append(Mutant(f"interchange_band({where})", interchange_band(spec, path)))
            found.append(Mutant(f"split_band({where})", split_band(spec, path)))
        if isinstance(node.child, Band) and node.child.coincident == node.coincident:
            found.append(Mutant(f"fuse_bands({where})", fuse_bands(spec, path)))
        if _joinable(spec, path, node):
            found.append(Mutant(f"join_layers({where})", join_layers(spec, path)))
        if len(node.members) == 1 and isinstance(node.child, Sequence_) and not node.child.unordered:
            for position in range(len(node.child.children) - 1):
                found.append(Mutant(f"delay_child({where}, {position})", delay_child(spec, path, position)))
    return found


def order_signature(view: StageView) -> str:
    """A digest of what a schedule runs: its stages in order, each the set of its tasks, each the
    tile-layers it runs in order. Two trees with the same digest run the same order."""
    digest = hashlib.sha256()
    for stage in range(view.n_stages):
        tasks = sorted(hashlib.sha256(np.ascontiguousarray(task.units, dtype=np.int32).tobytes()).hexdigest()
                       for task in view.tasks_of(stage))
        digest.update(("|".join(tasks) + ";").encode())
    return digest.hexdigest()
