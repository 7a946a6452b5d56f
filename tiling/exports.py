"""A package's names imported from their modules on first use (PEP 562), for every layer: a call that
never asks for a name does not pay for its module's imports (sympy for tiling's distance analysis,
scipy.sparse for polyfw.graphs' datasets)."""
from __future__ import annotations

from collections.abc import Callable
from importlib import import_module


def names_on_first_use(package: str, exports: dict[str, str]) -> Callable[[str], object]:
    """The module-level __getattr__ of `package` that gives each name of `exports` (name -> its
    module, relative to the package) from its module, imported when the name is first asked for."""
    def __getattr__(name: str) -> object:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f".{exports[name]}", package), name)

    return __getattr__
