"""Generated code and Numba, for every layer: a disk cache of generated modules, and the CPU
features Numba must see before it compiles anything.

Generated functions are written to a file and imported, so Numba's own
on-disk cache (cache=True) can keep their machine code between runs: a
second run of the same generated code skips compilation entirely.

On Intel CPUs LLVM prefers 256-bit vectors even where AVX-512 exists, which
halves the vectorised kernels (PERFORMANCE-NOTES); Numba reads the CPU
features once, when it creates its code generator, so the preference is
dropped here, at the bottom layer, which every package imports first
(tiling/__init__.py calls prefer_wide_vectors).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from importlib.metadata import version
from pathlib import Path
from types import ModuleType

WIDE_VECTORS = "-prefer-256-bit"


def prefer_wide_vectors() -> None:
    """Add '-prefer-256-bit' to Numba's CPU features unless the user chose features already."""
    if "NUMBA_CPU_FEATURES" in os.environ:
        return
    import llvmlite.binding as llvm

    features = f"{llvm.get_host_cpu_features().flatten()},{WIDE_VECTORS}"
    os.environ["NUMBA_CPU_FEATURES"] = features
    if "numba" in sys.modules:  # imported already: effective only if nothing was compiled yet
        sys.modules["numba"].config.CPU_FEATURES = features


def cache_dir() -> Path:
    """$POLYFW_CACHE, or ~/.cache/polyfw."""
    root = os.environ.get("POLYFW_CACHE") or Path.home() / ".cache" / "polyfw"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def load_module(source: str, prefix: str) -> ModuleType:
    """Import generated `source` as a module (written once under cache_dir(), keyed by its hash)."""
    key = hashlib.sha256(f"{version('numba')}\n{source}".encode()).hexdigest()[:20]
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
