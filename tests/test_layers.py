"""Imports point down only: tiling <- schedules <- codegen <- polyfw (and nothing imports what is above it)."""
import ast
from pathlib import Path

import pytest

LAYERS = ["tiling", "schedules", "codegen", "polyfw"]
ROOT = Path(__file__).resolve().parent.parent


def imported_packages(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, top-level package) of every import in a module, function-local ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, package if node.level else (node.module or "").split(".")[0]))
    return found


@pytest.mark.parametrize("package", LAYERS)
def test_no_import_points_up_a_layer(package):
    modules = sorted((ROOT / package).rglob("*.py"))
    assert modules
    upward = [f"{path.relative_to(ROOT)}:{line} imports {name}" for path in modules
              for line, name in imported_packages(path, package)
              if name in LAYERS and LAYERS.index(name) > LAYERS.index(package)]
    assert upward == []


def test_the_walk_sees_function_local_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def late():\n    from polyfw import solve\n")
    assert imported_packages(module, "schedules") == [(2, "polyfw")]


#: polyfw's rooms, lowest first ('' is the application's own modules at polyfw/'s top: solve, its plan,
#: the configuration, batches, comparisons, ...): a module imports from its own room and those below
ROOMS = ["errors", "progress", "graphs", "sparse", "machine", "", "explore", "networkx_backend", "cli"]


def _room(module: str) -> str:
    """The room of a module named under polyfw ('solver', 'graphs.inputs', ...)."""
    head = module.split(".")[0]
    return head if head in ROOMS else ""


def _polyfw_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module under polyfw) of every import of a polyfw module that names another one."""
    package = list(path.relative_to(ROOT / "polyfw").with_suffix("").parts)
    package = package[:-1]  # the package a relative import starts from (a package's __init__ included)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            found += ([(node.lineno, ".".join(base + [node.module]))] if node.module else
                      [(node.lineno, ".".join(base + [alias.name])) for alias in node.names])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("polyfw."):
            found.append((node.lineno, node.module.removeprefix("polyfw.")))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.removeprefix("polyfw.")) for alias in node.names
                      if alias.name.startswith("polyfw.")]
    return found


def test_no_import_runs_back_up_between_the_rooms_of_polyfw():
    modules = sorted((ROOT / "polyfw").rglob("*.py"))
    upward = []
    for path in modules:
        parts = path.relative_to(ROOT / "polyfw").with_suffix("").parts
        own = _room(".".join(parts))
        upward += [f"{path.relative_to(ROOT)}:{line} ({own or 'polyfw'}) imports {name} ({_room(name) or 'polyfw'})"
                   for line, name in _polyfw_imports(path) if ROOMS.index(_room(name)) > ROOMS.index(own)]
    assert upward == []


def test_the_rooms_walk_reads_relative_imports():
    assert ROOMS.index(_room("cli.solving")) > ROOMS.index(_room("solver")) > ROOMS.index(_room("graphs.inputs"))
    names = {name for _, name in _polyfw_imports(ROOT / "polyfw" / "sparse" / "searches.py")}
    assert {"errors", "graphs", "sparse.csr"} <= names  # `from .. import errors`, `from ..graphs import`, `from .csr`
    # the circle check sees what a function imports: sparse.paths sends a GPU search to sparse.cuda
    assert "sparse.cuda" in _module_imports()["sparse.paths"]


def _module_imports() -> dict[str, set[str]]:
    """polyfw's modules ('' the package itself) and the polyfw modules each imports, function-local
    imports included (a name imported from a module counts as that module)."""
    paths = {".".join(p.relative_to(ROOT / "polyfw").with_suffix("").parts).removesuffix("__init__").rstrip("."): p
             for p in (ROOT / "polyfw").rglob("*.py")}

    def module(name: str) -> str:
        while name not in paths:
            name = name.rpartition(".")[0]
        return name

    return {name: {module(imported) for _, imported in _polyfw_imports(path)} - {name, ""}
            for name, path in paths.items()}


def test_no_circle_of_imports_in_polyfw():
    imports = _module_imports()
    circles = []
    for start in imports:  # a module is on a circle when it can reach itself
        seen, frontier = set(), list(imports[start])
        while frontier:
            name = frontier.pop()
            if name not in seen:
                seen.add(name)
                frontier += imports[name]
        if start in seen:
            circles.append(start)
    assert circles == []
