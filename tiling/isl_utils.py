"""Thin, Pythonic helpers over islpy, kept in one place.

Everything else in polyfw talks to isl through these functions or through
islpy directly; nothing here knows about Floyd–Warshall.
"""
from __future__ import annotations

from collections.abc import Sequence

from typing import TYPE_CHECKING

import islpy as isl

if TYPE_CHECKING:
    import sympy

Coordinates = tuple[int, ...]


def point_coordinates(point: isl.Point) -> Coordinates:
    """The set coordinates of an isl point as Python ints."""
    ndim = point.get_space().dim(isl.dim_type.set)
    return tuple(point.get_coordinate_val(isl.dim_type.set, d).to_python() for d in range(ndim))


def point_parameters(point: isl.Point) -> dict[str, int]:
    """The parameter values of an isl point, by name."""
    space = point.get_space()
    return {
        space.get_dim_name(isl.dim_type.param, d): point.get_coordinate_val(isl.dim_type.param, d).to_python()
        for d in range(space.dim(isl.dim_type.param))
    }


def enumerate_points(bounded: isl.Set) -> list[Coordinates]:
    """All integer points of a bounded, parameter-free set, in lexicographic order."""
    found: list[Coordinates] = []
    bounded.foreach_point(lambda p: found.append(point_coordinates(p)))
    return sorted(found)


def count_points(bounded: isl.Set | isl.UnionSet) -> int:
    """Number of integer points of a bounded, parameter-free set (or union of sets)."""
    if isinstance(bounded, isl.UnionSet):
        parts: list[isl.Set] = []
        bounded.foreach_set(parts.append)
        return sum(count_points(s) for s in parts)
    return int(bounded.count_val().to_python())


def fix_parameters(obj, values: dict[str, int]):
    """obj with the named parameters fixed to the given values (and kept as parameters)."""
    for name, value in values.items():
        index = obj.get_space().find_dim_by_name(isl.dim_type.param, name)
        if index < 0:
            raise KeyError(f"parameter {name!r} not in {obj.get_space()}")
        obj = obj.fix_val(isl.dim_type.param, index, value)
    return obj


def smallest_parameter_instance(relation: isl.Map, name: str = "n", limit: int = 256) -> isl.Map:
    """relation with parameter `name` fixed to the smallest value that leaves it non-empty.

    Small instances make the most readable witnesses.
    """
    if relation.get_space().find_dim_by_name(isl.dim_type.param, name) < 0:
        return relation
    for value in range(0, limit + 1):
        fixed = fix_parameters(relation, {name: value})
        if not fixed.is_empty():
            return fixed
    # past the scan (large tiles): isl's own smallest value, when there is one
    index = relation.get_space().find_dim_by_name(isl.dim_type.param, name)
    values = relation.params().move_dims(isl.dim_type.set, 0, isl.dim_type.param, index, 1)
    if values.is_empty() or not values.lexmin().is_bounded():
        raise ValueError(f"{relation} has no smallest {name} >= 0 for a witness")
    smallest = values.lexmin().sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()
    return fix_parameters(relation, {name: smallest})


def sample_pair(relation: isl.Map) -> tuple[Coordinates, Coordinates, dict[str, int]]:
    """A lexicographically smallest (source, sink) pair of a non-empty relation, with its parameters
    (each fixed in turn to its smallest value that keeps a pair)."""
    space = relation.get_space()
    for d in range(space.dim(isl.dim_type.param)):
        relation = smallest_parameter_instance(relation, space.get_dim_name(isl.dim_type.param, d))
    try:
        point = relation.wrap().lexmin().sample_point()
    except isl.Error:
        # isl's lexmin trips on some sets with local variables; any point is still a witness
        point = relation.wrap().sample_point()
    both = point_coordinates(point)
    n_in = relation.get_space().dim(isl.dim_type.in_)
    return both[:n_in], both[n_in:], point_parameters(point)


def image_of_point(function: isl.Map, coordinates: Sequence[int], params: dict[str, int] | None = None) -> Coordinates:
    """The unique image of one point under a single-valued map."""
    space = function.get_space().domain()
    point = isl.Set.universe(space)
    for d, value in enumerate(coordinates):
        point = point.fix_val(isl.dim_type.set, d, value)
    image = function.intersect_domain(point)
    if params:
        image = fix_parameters(image, params)
    return point_coordinates(image.range().sample_point())


def lex_before_at(ndim: int, depth: int) -> isl.Map:
    """{ t -> u : t and u agree before `depth` and t[depth] < u[depth] } on ndim-vectors."""
    if not 0 <= depth < ndim:
        raise ValueError(f"depth must be in 0..{ndim - 1}, got {depth}")
    t = [f"t{d}" for d in range(ndim)]
    u = [f"u{d}" for d in range(ndim)]
    conditions = [f"{t[d]} = {u[d]}" for d in range(depth)] + [f"{t[depth]} < {u[depth]}"]
    return isl.Map(f"{{ [{', '.join(t)}] -> [{', '.join(u)}] : {' and '.join(conditions)} }}")


def _val_to_sympy(val: isl.Val) -> sympy.Rational:
    import sympy  # (here: sympy takes a third of a second to import, and only distance analyses need it)

    return sympy.Rational(val.get_num_si(), val.get_den_val().get_num_si())


def aff_to_sympy(aff: isl.Aff, names: Sequence[str]) -> sympy.Expr:
    """A quasi-affine isl expression as sympy, naming its input dimensions `names`."""
    import sympy

    space = aff.get_domain_space()
    symbols = [sympy.Symbol(name) for name in names]
    params = [sympy.Symbol(space.get_dim_name(isl.dim_type.param, d)) for d in range(space.dim(isl.dim_type.param))]
    expr = _val_to_sympy(aff.get_constant_val())
    for d, symbol in enumerate(symbols):
        expr += _val_to_sympy(aff.get_coefficient_val(isl.dim_type.in_, d)) * symbol
    for d, symbol in enumerate(params):
        expr += _val_to_sympy(aff.get_coefficient_val(isl.dim_type.param, d)) * symbol
    for d in range(aff.dim(isl.dim_type.div)):
        coefficient = _val_to_sympy(aff.get_coefficient_val(isl.dim_type.div, d))
        if coefficient != 0:
            expr += coefficient * sympy.floor(aff_to_sympy(aff.get_div(d), names))
    return expr
