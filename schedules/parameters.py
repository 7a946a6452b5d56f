"""Each family's parameters, declared once: name, type, default, range and meaning.

The builders check their arguments here, the 'family:key=value' parser and
the CLI's flags parse text here, and `polyfw schedules` and an exploration
space list them from here, so a parameter's type is written in one place
('paired=false' is False, not the truthy string 'false').
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

KINDS = ("int", "bool", "choice", "order")
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


@dataclass(frozen=True)
class Parameter:
    """One parameter of a family. kind 'int' (minimum .. blocks per side when `up_to_blocks`),
    'bool', 'choice' (one of `choices`) or 'order' (a permutation of `choices`, written a-b-c)."""

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: int = 1
    up_to_blocks: bool = False
    #: the targets whose explorations search it by default (None: every target's); elsewhere it keeps
    #: its default unless its values are given
    searched_on: tuple[str, ...] | None = None

    def describe(self) -> str:
        """The type and range, e.g. 'int in 1..Q' or 'one of seed, fused'."""
        if self.kind == "int":
            return f"an int in {self.minimum}..Q (blocks per side)" if self.up_to_blocks else f"an int >= {self.minimum}"
        if self.kind == "bool":
            return "true or false"  # also yes/no, on/off, 1/0
        if self.kind == "choice":
            return f"one of {', '.join(self.choices)}"
        return f"an order of {'-'.join(self.choices)}"

    def _refuse(self, family: str, value: Any) -> ValueError:
        return ValueError(f"{family} parameter {self.name} must be {self.describe()}, got {value!r}")

    def parse(self, text: str, family: str) -> Any:
        """The typed value of `text` (as written after 'name=' or a CLI flag)."""
        text = str(text).strip()
        if self.kind == "int":
            try:
                return int(text)
            except ValueError:
                raise self._refuse(family, text) from None
        if self.kind == "bool":
            if text.lower() not in _TRUE + _FALSE:
                raise self._refuse(family, text)
            return text.lower() in _TRUE
        if self.kind == "choice":
            return text
        return tuple(part.strip() for part in text.split("-"))

    def check(self, value: Any, family: str, blocks: int | None = None) -> Any:
        """`value` checked against the type and range (text is parsed first)."""
        if isinstance(value, str) and self.kind != "choice":
            value = self.parse(value, family)
        if self.kind == "int":
            too_many = self.up_to_blocks and blocks is not None and value > blocks
            if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum or too_many:
                limit = f", Q = {blocks} here" if self.up_to_blocks and blocks is not None else ""
                raise ValueError(f"{family} parameter {self.name} must be {self.describe()}{limit}, got {value!r}")
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise self._refuse(family, value)
        elif self.kind == "choice":
            if value not in self.choices:
                raise self._refuse(family, value)
        else:
            value = tuple(value)
            if sorted(value) != sorted(self.choices):
                raise self._refuse(family, "-".join(map(str, value)))
        return value

    def values(self, blocks: int) -> list[Any]:
        """Every value this parameter can take for Q = `blocks` (an exploration space's axis); ints
        without a block bound are left to the caller (tile sizes)."""
        if self.kind == "int":
            if not self.up_to_blocks:
                raise ValueError(f"{self.name} has no finite range of its own; give its values")
            return list(range(self.minimum, blocks + 1))
        if self.kind == "bool":
            return [True, False]
        if self.kind == "choice":
            return list(self.choices)
        return list(itertools.permutations(self.choices))


TILE = Parameter("tile", "int", None, "block size r (solve's default: the tuning table's, else 128)")
GENERALIZED_VARIANTS = ("seed", "fused")
REVERSE_DIRECTIONS = ("descending", "ascending")

#: family -> its parameters besides n, in the order `polyfw schedules` lists them (filled by
#: schedules.families.register, where each family declares them)
FAMILY_PARAMETERS: dict[str, tuple[Parameter, ...]] = {}


def parameter(family: str, name: str) -> Parameter:
    """The declaration of `name` in `family`, or an error listing the family's parameters."""
    if family not in FAMILY_PARAMETERS:
        raise ValueError(f"unknown schedule family {family!r}; available: {', '.join(FAMILY_PARAMETERS)}")
    for declared in FAMILY_PARAMETERS[family]:
        if declared.name == name:
            return declared
    names = ", ".join(p.name for p in FAMILY_PARAMETERS[family]) or "none besides n"
    raise ValueError(f"the {family} family has no parameter {name!r}; its parameters: {names}")


def check_parameters(family: str, values: dict[str, Any], blocks: int | None = None) -> dict[str, Any]:
    """`values` typed and checked against the family's declarations (unknown names refused)."""
    return {name: parameter(family, name).check(value, family, blocks) for name, value in values.items()}
