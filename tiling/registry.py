"""The one shape every extension point has: declarations by name, one registration line each."""
from __future__ import annotations

from typing import Generic, Protocol, TypeVar


class Named(Protocol):
    name: str


Declaration = TypeVar("Declaration", bound=Named)


class Registry(dict[str, Declaration], Generic[Declaration]):
    """Declarations of one kind (targets, families, strategies, semirings) by name; everything else
    reads them from here, so a registered one is everywhere at once."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def register(self, declaration: Declaration) -> Declaration:
        """Make `declaration` available by its name (a later one of the same name replaces it)."""
        self[declaration.name] = declaration
        return declaration

    def find(self, name: str) -> Declaration:
        """The declaration named `name`, or an error that lists the registered ones."""
        if name not in self:
            raise ValueError(f"unknown {self.kind} {name!r}; available: {', '.join(self)}")
        return self[name]
