"""The Floyd–Warshall nest over a batch of graphs, as isl objects.

    for b in [0, B): for k, i, j in [0, N)^3:   S[b,k,i,j]:  a[b,i,j] = min(a[b,i,j], a[b,i,k] + a[b,k,j])

One more loop around the nest (tiling.model), one more index on the array.
Graphs of fewer than N vertices are the same graph padded with isolated
vertices (no path enters or leaves them), so this one domain, parametric in
B and N, covers every ragged batch whose largest graph has N vertices. The
dependences are derived from the accesses exactly as the single nest's are
(tiling.dependences.relaxed_relations): that no dependence joins two graphs
is something isl shows (crossing_dependences), not something assumed.
"""
from __future__ import annotations

import islpy as isl

from . import model
from .dependences import DependenceModel, relaxed_relations

ITERATORS = ("b",) + model.ITERATORS
PARAMETERS = "[B, N] -> "


def domain() -> isl.Set:
    """{ S[b,k,i,j] : 0 <= b < B, 0 <= k,i,j < N }, for every batch size B and graph size N."""
    box = " and ".join(f"0 <= {x} < N" for x in model.ITERATORS)
    return isl.Set(f"{PARAMETERS}{{ {model.STATEMENT}[b, k, i, j] : 0 <= b < B and {box} }}")


def _access(element: str) -> isl.Map:
    text = f"{PARAMETERS}{{ {model.STATEMENT}[b, k, i, j] -> {model.ARRAY}[b, {element}] }}"
    return isl.Map(text).intersect_domain(domain())


def write_access() -> isl.Map:
    """S[b,k,i,j] writes a[b,i,j]."""
    return _access("i, j")


def read_access(name: str) -> isl.Map:
    """One of the nest's reads ('a[i,j]', 'a[i,k]', 'a[k,j]'), within graph b."""
    if name not in model.READS:
        raise ValueError(f"unknown read {name!r}; valid reads are {', '.join(model.READS)}")
    return _access(model.READS[name])


def relaxed_dependences() -> DependenceModel:
    """The relaxed model (DESIGN.md §1) of the batched nest, from its accesses."""
    earlier = isl.Map(f"{PARAMETERS}{{ S[b', k', i', j'] -> S[b, k, i, j] : k' < k }}")
    ordered, exclusive = relaxed_relations(write_access(), read_access("a[i,k]"), read_access("a[k,j]"), earlier)
    return DependenceModel("relaxed", None, ordered, exclusive)


def crossing_dependences(deps: DependenceModel) -> dict[str, isl.Map]:
    """The pairs of each relation whose instances belong to different graphs (all empty: the
    batch loop carries no dependence, so graphs may run in any order and at once)."""
    same_graph = isl.Map(f"{PARAMETERS}{{ S[b, k, i, j] -> S[b2, k2, i2, j2] : b2 = b }}")
    return {name: relation.subtract(same_graph) for name, relation in deps.relations().items()}
