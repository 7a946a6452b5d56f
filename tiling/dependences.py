"""The two dependence models of the Floyd–Warshall nest (DESIGN.md §1).

*Exact*: value-based flow, anti and output dependences that isl computes
from the sequential order. They forbid rectangular 3-D tiling.

*Relaxed*: what min/+ semantics really need, built directly from the
accesses. S[k,i,j] must see every update of the two elements it combines
from earlier layers (R_row for a[i,k], R_col for a[k,j]); updates of one
element are min-accumulations whose order is free but which must never run
concurrently (W). The relaxed model is sound, not complete.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from . import model


#: the relations of each model, by name
RELATION_NAMES = {"exact": ("flow", "anti", "output"), "relaxed": ("R_row", "R_col", "W")}


@dataclass(frozen=True)
class DependenceModel:
    """Named dependence relations S -> S of one model, for one n (None = parametric)."""

    name: str
    n: int | None
    #: source must finish before sink starts
    ordered: dict[str, isl.Map]
    #: the two instances must not run concurrently; either order is fine
    exclusive: dict[str, isl.Map] = field(default_factory=dict)
    #: smaller ordered relations whose transitive closure covers every relation above
    #: (a sufficient test: a schedule respecting them respects the model)
    generators: dict[str, isl.Map] = field(default_factory=dict)

    def relations(self) -> dict[str, isl.Map]:
        return {**self.ordered, **self.exclusive}


def _statement_space(n: int | None) -> isl.Space:
    space = model.domain(n).get_space()
    return isl.Space.map_from_domain_and_range(space, space)


def _as_map(relation: isl.UnionMap, n: int | None) -> isl.Map:
    return relation.extract_map(_statement_space(n)).coalesce()


def _last_source(sink: isl.Map, source: isl.Map, order: isl.Map, n: int | None) -> isl.Map:
    """For every sink instance, the last source instance before it (same element) under `order`."""
    info = isl.UnionAccessInfo.from_sink(isl.UnionMap.from_map(sink))
    info = info.set_must_source(isl.UnionMap.from_map(source))
    info = info.set_schedule_map(isl.UnionMap.from_map(order))
    return _as_map(info.compute_flow().get_must_dependence(), n)


def _reversed_order(n: int | None) -> isl.Map:
    prefix = "[n] -> " if n is None else ""
    return isl.Map(f"{prefix}{{ S[k, i, j] -> [-k, -i, -j] }}").intersect_domain(model.domain(n))


def exact_dependences(n: int | None = None) -> DependenceModel:
    """Value-based flow, anti and output dependences of the sequential order.

    Anti dependences (a read to the next write of its element) are the flow
    dependences of the reversed order, turned around.
    """
    writes, reads = model.write_access(n), model.read_accesses(n)
    order = model.sequential_schedule(n)
    flow = _last_source(reads, writes, order, n)
    output = _last_source(writes, writes, order, n)
    anti = _last_source(reads, writes, _reversed_order(n), n).reverse().coalesce()
    return DependenceModel("exact", n, {"flow": flow, "anti": anti, "output": output})


def _earlier_layer(n: int | None) -> isl.Map:
    prefix = "[n] -> " if n is None else ""
    return isl.Map(f"{prefix}{{ S[k', i', j'] -> S[k, i, j] : k' < k }}")


def relaxed_relations(writes: isl.Map, row_read: isl.Map, column_read: isl.Map,
                      earlier: isl.Map) -> tuple[dict[str, isl.Map], dict[str, isl.Map]]:
    """(ordered, exclusive) relaxed relations of a nest from its accesses: whoever writes what an
    instance reads as its a[i,k] (row_read) or a[k,j] (column_read) in an earlier layer comes
    first; two writers of one element never overlap. Shared by this nest and the batched one
    (tiling.batch), so both models are derived from their accesses the same way."""
    def writers_of(read: isl.Map) -> isl.Map:
        return writes.apply_range(read.reverse()).intersect(earlier).coalesce()

    same_element = writes.apply_range(writes.reverse())
    space = isl.Space.map_from_set(writes.domain().get_space())
    exclusive = same_element.subtract(isl.Map.identity(space)).coalesce()
    return {"R_row": writers_of(row_read), "R_col": writers_of(column_read)}, {"W": exclusive}


def relaxed_dependences(n: int | None = None) -> DependenceModel:
    """R_row, R_col (complete inputs from earlier layers) and W (exclusive writes)."""
    ordered, exclusive = relaxed_relations(model.write_access(n), model.read_access("a[i,k]", n),
                                           model.read_access("a[k,j]", n), _earlier_layer(n))
    return DependenceModel("relaxed", n, ordered, exclusive, _relaxed_generators(n))


def _relaxed_generators(n: int | None) -> dict[str, isl.Map]:
    """Updates of one element in increasing k, and each read after the previous layer's update.

    If S[k,i,j] -> S[k+1,i,j] and S[k-1,i,k] -> S[k,i,j] (S[k-1,k,j] -> S[k,i,j])
    are all ordered, then by transitivity so is every S[k',i,k] -> S[k,i,j]
    with k' < k (R_row, R_col), and no two updates of one element overlap (W).
    """
    prefix = "[n] -> " if n is None else ""
    domain = model.domain(n)

    def relation(text: str) -> isl.Map:
        return isl.Map(prefix + "{ " + text + " }").intersect_domain(domain).intersect_range(domain)

    return {
        "W": relation("S[k, i, j] -> S[k2, i, j] : k2 = k + 1"),
        "R_row": relation("S[k0, i, k] -> S[k, i, j] : k0 = k - 1"),
        "R_col": relation("S[k0, k, j] -> S[k, i, j] : k0 = k - 1"),
    }


def dependence_model(model_name: str, n: int | None = None) -> DependenceModel:
    """The model named 'exact' or 'relaxed'."""
    builders = {"exact": exact_dependences, "relaxed": relaxed_dependences}
    if model_name not in builders:
        raise ValueError(f"unknown dependence model {model_name!r}; valid models are 'exact' and 'relaxed'")
    return builders[model_name](n)
