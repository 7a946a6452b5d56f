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
