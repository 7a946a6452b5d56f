"""Dependence distance vectors as sympy expressions.

A distance is sink − source, written in the sink's coordinates (k, i, j);
source coordinates that the sink does not determine stay free and are
primed (k' in R_row: any earlier layer).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
import sympy

from . import model
from .isl_utils import aff_to_sympy


@dataclass(frozen=True)
class Distance:
    vector: tuple[sympy.Expr, ...]
    #: the sink instances (and free source coordinates) it holds for, as isl text
    where: str

    def __str__(self) -> str:
        return "(" + ", ".join(str(c) for c in self.vector) + ")"


def _source_coordinate(sink_to_source: isl.BasicMap, d: int, names: tuple[str, ...]) -> sympy.Expr:
    n_out = sink_to_source.dim(isl.dim_type.out)
    only_d = sink_to_source.project_out(isl.dim_type.out, d + 1, n_out - d - 1).project_out(isl.dim_type.out, 0, d)
    if only_d.is_single_valued():
        pieces: list[isl.MultiAff] = []
        isl.Map.from_basic_map(only_d).as_pw_multi_aff().foreach_piece(lambda _, aff: pieces.append(aff))
        if len(pieces) == 1:
            return aff_to_sympy(pieces[0].get_at(0), names)
    return sympy.Symbol(names[d] + "'")


def distance_vectors(relation: isl.Map) -> list[Distance]:
    """One distance per basic relation of `relation` (after coalescing), duplicates merged."""
    names = model.ITERATORS
    sinks = [sympy.Symbol(name) for name in names]
    found: dict[tuple[sympy.Expr, ...], list[str]] = {}
    for piece in relation.coalesce().get_basic_maps():
        sink_to_source = piece.reverse()
        vector = tuple(
            sympy.expand(sinks[d] - _source_coordinate(sink_to_source, d, names)) for d in range(len(names))
        )
        found.setdefault(vector, []).append(str(isl.Map.from_basic_map(piece).range()))
    return [Distance(vector, " or ".join(wheres)) for vector, wheres in found.items()]
