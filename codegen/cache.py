"""A disk cache for generated source: one module per distinct source text.

Generated functions are written to a file and imported, so Numba's own
on-disk cache (cache=True) can keep their machine code between runs: a
second run of the same generated code skips compilation entirely.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import numba


def cache_dir() -> Path:
    """$POLYFW_CACHE, or ~/.cache/polyfw."""
    root = os.environ.get("POLYFW_CACHE") or Path.home() / ".cache" / "polyfw"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def load_module(source: str, prefix: str) -> ModuleType:
    """Import generated `source` as a module (written once under cache_dir(), keyed by its hash)."""
    key = hashlib.sha256(f"{numba.__version__}\n{source}".encode()).hexdigest()[:20]
    name = f"polyfw_{prefix}_{key}"
    if name in sys.modules:
        return sys.modules[name]
    path = cache_dir() / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(source)
        temporary.replace(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
