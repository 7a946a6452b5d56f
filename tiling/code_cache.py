"""Generated code and Numba, for every layer: a disk cache of generated modules, and the CPU
features Numba must see before it compiles anything.

Generated functions are written to a file and imported, so Numba's own
on-disk cache (cache=True) can keep their machine code between runs: a
second run of the same generated code skips compilation entirely.

On Intel CPUs LLVM prefers 256-bit vectors even where AVX-512 exists, which
halves the vectorised kernels (PERFORMANCE-NOTES); Numba reads the CPU
features once, when it creates its code generator, so the preference is
dropped here, at the bottom layer, which every package imports first
(tiling/__init__.py calls choose_cpu_features). Where POLYFW_ISA names a narrower ISA, the
features are narrowed to it too.

Faults heal: a damaged file in the cache (a generated module, its bytecode, Numba's index or
data files, here or of the package's own cache=True kernels) is rewritten or removed with a
warning on the 'polyfw' logger naming it, and the code is imported or compiled again.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import sys
import types
from importlib.metadata import version
from pathlib import Path
from types import ModuleType

import numpy as np

WIDE_VECTORS = "-prefer-256-bit"
#: the LLVM feature taken off the host's where POLYFW_ISA narrows the kernels to an ISA this machine runs
#: wider (codegen.intrinsics.target_isa), so that everything Numba compiles is what a machine of that ISA
#: runs, 16 registers and all (LLVM drops what builds on a feature with it: -avx takes AVX2, FMA and AVX-512)
NARROWING_FEATURE = {"avx2": "-avx512f", "sse2": "-avx"}
log = logging.getLogger("polyfw")


def choose_cpu_features() -> None:
    """Numba's CPU features, unless the user chose them already: the host's, without LLVM's preference for
    256-bit vectors, and narrowed to POLYFW_ISA's ISA where it names one."""
    if "NUMBA_CPU_FEATURES" in os.environ:
        return
    import llvmlite.binding as llvm

    narrowing = NARROWING_FEATURE.get(environment("POLYFW_ISA") or "")
    features = ",".join(filter(None, [llvm.get_host_cpu_features().flatten(), WIDE_VECTORS, narrowing]))
    os.environ["NUMBA_CPU_FEATURES"] = features
    if "numba" in sys.modules:  # imported already: effective only if nothing was compiled yet
        sys.modules["numba"].config.CPU_FEATURES = features


#: os.environ's own table of its encoded items (CPython keeps it as `_data`; None where it does not)
_ENVIRON_ITEMS = getattr(os.environ, "_data", None)


def environment(name: str) -> str | None:
    """os.environ.get(name), read from os.environ's own table where it has one: get() raises and catches
    two KeyErrors inside for an unset name (1.4 us each; every small solve asks seven settings, most unset)."""
    if _ENVIRON_ITEMS is None:
        return os.environ.get(name)
    value = _ENVIRON_ITEMS.get(os.environ.encodekey(name))
    return None if value is None else os.environ.decodevalue(value)


def cache_dir(create: bool = True) -> Path:
    """$POLYFW_CACHE, or ~/.cache/polyfw (created unless create=False: a caller that only looks
    at a file's stamp)."""
    path = _cache_root(environment("POLYFW_CACHE"), environment("HOME"))
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def file_stamp(path: str | os.PathLike) -> tuple[int, int] | None:
    """A file's (mtime in ns, size), or None if it cannot be read: what a reader keeps beside what
    it parsed, to parse again only when the file changes. (A missing one, as most users' tuning table is,
    is answered without raising: stat's FileNotFoundError cost every small solve 2-4 us.)"""
    if not os.access(path, os.F_OK):
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=8)
def _cache_root(given: str | None, home: str | None) -> Path:
    """(by the variables it reads: every solve looks at a file in it)"""
    return Path(given) if given else Path.home() / ".cache" / "polyfw"


def discard(path: str | os.PathLike, what: str, error: BaseException, then: str) -> None:
    """Remove an unreadable cache file (already gone is fine) and say so on the 'polyfw' logger."""
    done = "removed it"
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError as failed:
        done = f"could not remove it ({failed})"
    log.warning("%s %s is damaged (%s: %s): %s, %s", what, path, type(error).__name__, str(error)[:200], done, then)


def heal_numba_cache(caching: ModuleType) -> None:
    """Make a Numba caching module (numba.core.caching, numba.cuda.core.caching) treat a garbage,
    truncated or empty index (.nbi) or data file (.nbc) as absent: the file is removed, logged, and
    the function compiles again (and is cached anew), where Numba would raise UnpicklingError or
    EOFError on every call until the user deleted the file. Idempotent."""
    files, cache = caching.IndexDataCacheFile, caching.Cache
    if getattr(files, "_polyfw_heals", False):
        return
    load_index, load_data, load_overload = files._load_index, files._load_data, cache.load_overload

    def _load_index(self):
        try:
            return load_index(self)
        except Exception as error:  # noqa: BLE001 - pickle raises any of several on a damaged file
            discard(self._index_path, "Numba cache index", error, "compiling again")
            return {}

    def _load_data(self, name):
        try:
            return load_data(self, name)
        except OSError:
            raise  # Numba's load() reads a missing data file as no entry
        except Exception as error:  # noqa: BLE001
            discard(self._data_path(name), "Numba cache data", error, "compiling again")
            return None

    def _load_overload(self, sig, target_context):
        try:
            return load_overload(self, sig, target_context)
        except Exception as error:  # noqa: BLE001 - a data file that unpickles but does not rebuild
            discard(self._cache_file._index_path, "Numba cache index (an entry it lists did not load)", error,
                    "compiling again")
            return None

    files._load_index, files._load_data, cache.load_overload = _load_index, _load_data, _load_overload
    files._polyfw_heals = True


def heal_numba_caches() -> None:
    """heal_numba_cache on Numba's CPU caching, and on the CUDA one once numba.cuda is imported
    (it is not imported for the CPU targets; load_module calls this before a generated module
    with CUDA kernels is imported)."""
    import numba.core.caching

    heal_numba_cache(numba.core.caching)
    if "numba.cuda" in sys.modules:
        try:
            import numba.cuda.core.caching as cuda_caching
        except Exception:  # noqa: BLE001 - a numba.cuda without its own caching module: nothing to heal
            return
        heal_numba_cache(cuda_caching)


def _damage(path: Path, source: str) -> str | None:
    """None if `path` holds `source`; else '' if it is absent, or what is wrong with it."""
    try:
        found = path.read_text()
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as error:
        return f"{type(error).__name__}: {error}"
    return None if found == source else f"{len(found)} characters where its source has {len(source)}"


def _execute(spec, name: str) -> ModuleType:
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load_module(source: str, prefix: str) -> ModuleType:
    """Import generated `source` as a module (written once under cache_dir(), keyed by its hash).

    A file there that is not `source` (truncated, garbage) is written again, and a damaged
    bytecode file of it removed, with a warning on the 'polyfw' logger; Numba's cache files of its
    functions heal as heal_numba_cache says."""
    key = hashlib.sha256(f"{version('numba')}\n{source}".encode()).hexdigest()[:20]
    name = f"polyfw_{prefix}_{key}"
    if name in sys.modules:
        return sys.modules[name]
    heal_numba_caches()
    path = cache_dir() / f"{name}.py"
    damage = _damage(path, source)
    if damage is not None:
        if damage:
            log.warning("generated module %s was damaged (%s): wrote it again", path, damage)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(source)
        temporary.replace(path)
    spec = importlib.util.spec_from_file_location(name, path)
    try:
        return _execute(spec, name)
    except (ValueError, EOFError) as error:  # 'bad marshal data', 'marshal data too short'
        bytecode = importlib.util.cache_from_source(str(path))
        if "marshal" not in str(error) or not os.path.exists(bytecode):
            raise
        discard(bytecode, "bytecode", error, "importing the module from its source")
        return _execute(spec, name)


#: below this many entries a matrix pass runs serially: waking the threads for a parallel region
#: cost more than a 20 x 20 matrix's whole pass (2-core Zen 3, passive waiting: about 25 us a region)
PARALLEL_FROM_ENTRIES = 2**14


def parallel_above(entries: int = PARALLEL_FROM_ENTRIES):
    """Compile a matrix pass twice, with prange parallel and serial, and call the serial one when
    its first argument has fewer than `entries` entries. The serial copy is a function of its own
    name, so that Numba's on-disk cache keeps the two apart."""
    def compile_both(function):
        from numba import njit  # (this module sets Numba's CPU features before Numba is imported)

        serial_copy = types.FunctionType(function.__code__, function.__globals__, f"{function.__name__}_serial",
                                         function.__defaults__, function.__closure__)
        serial_copy.__qualname__ = f"{function.__qualname__}_serial"
        parallel, serial = njit(parallel=True, cache=True)(function), njit(cache=True)(serial_copy)

        @functools.wraps(function)
        def by_size(matrix, *rest):
            return (serial if matrix.size < entries else parallel)(matrix, *rest)

        by_size.parallel, by_size.serial = parallel, serial
        return by_size

    return compile_both
