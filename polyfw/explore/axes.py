"""The values an exploration's axes are narrowed to, checked before anything runs.

A Space keeps a narrowed value at the tiles where it fits and leaves it out at the others (kappa 4
fits tile 16 of n = 64, not tile 32), and takes a value that fits at no tile as no narrowing at
all; such a value is the user's mistake, refused here with the range that would do.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from codegen.targets import as_text
from schedules.families import FAMILIES
from schedules.parameters import Parameter

from .space import Space


def check_axes(space: Space) -> None:
    """Refuse (ValueError, one line naming the axis, the value and what would do) a narrowed value
    no candidate of `space` can take: a tile outside 1..n, a family's parameter of the wrong type
    or out of range at every tile, a family's block size narrowed by its own name (it is the tile
    axis), a run option's value its target does not have."""
    if "tile" in space.values:
        _check_tiles(space.n, space.values["tile"])
    for name, given in space.values.items():
        for family in space.families if name != "tile" else ():
            declared = next((p for p in FAMILIES[family].parameters if p.name == name), None)
            if declared is not None:
                _check_parameter(space, family, declared, given)
    if set(space.values) & set(space.run_axes or ()):
        space.option_axes()  # refuses a value the target does not have, naming those it has


def _check_tiles(n: int, given: Sequence[Any]) -> None:
    for value in given:
        text = as_text(value).strip()
        whole = text.lstrip("-").isdigit()
        if not whole or not 1 <= int(text) <= n:
            raise ValueError(f"tile={text} is {f'out of range at n={n}' if whole else 'not an int'}: tile takes 1..{n}")


def _check_parameter(space: Space, family: str, parameter: Parameter, given: Sequence[Any]) -> None:
    if parameter.name == FAMILIES[family].size:
        raise ValueError(f"{parameter.name} is the {family} family's block size, which the tile axis sets: narrow it "
                         f"as tile={','.join(map(as_text, given))}")
    blocks = {tile: -(-space.n // tile) for tile in space.tiles()}
    for value in given:
        typed = parameter.check(value, family)  # its type and minimum; the bound by Q is per tile, below
        if parameter.up_to_blocks and typed > max(blocks.values()):
            per_tile = ", ".join(f"{q} at tile {tile}" for tile, q in blocks.items())
            raise ValueError(f"{parameter.name}={as_text(value)} is out of range at n={space.n}: {parameter.name} "
                             f"takes {parameter.minimum}..Q, Q = {per_tile}")
