"""The tuning table `solve(schedule='auto')` reads: where it lives, and how a winner is merged in
(polyfw.configuration.write_winner proves it first and writes it).

Two files make the table. The package ships polyfw/tuning.json, read only. A user's own
winners (polyfw explore --tune, benchmarks/cpu.py --tune) go to the user's file: --tuning FILE,
else $POLYFW_TUNING, else tuning.json in the platform's user data directory; its entries take
the place of the shipped ones for the same CPU, target and dtype. Entries are
[up_to_n, family, parameters, [first_n, last_n]] per dtype, under the CPU they were measured on
for the targets that run on it (Target.on_cpu: by_cpu.<cpu key>.<target>) and per target otherwise. The last
pair is the range of n the schedule is proved legal for: an entry is applied only inside it.
"""
from __future__ import annotations

import json
import logging
import sys
from collections.abc import Collection
from importlib import resources
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from codegen.register_blocks import cpu_key
from codegen.targets import find_target
from tiling.code_cache import environment, file_stamp

#: an entry's up_to that stands for every larger n
EVERY_LARGER_N = 10**9
_READ: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}
log = logging.getLogger("polyfw")


@cache
def shipped_path() -> Path:
    """The table the package ships (read only: the installed package is never written)."""
    return Path(str(resources.files("polyfw").joinpath("tuning.json")))


def user_data_dir() -> Path:
    """The platform's directory for a user's application data (XDG on Linux)."""
    return _user_data_dir(environment("LOCALAPPDATA"), environment("XDG_DATA_HOME"), environment("HOME"))


@lru_cache(maxsize=8)
def _user_data_dir(local_app_data: str | None, xdg_data_home: str | None, home: str | None) -> Path:
    """(by the variables it reads: every solve asks, and building the path took a tenth of a small call)"""
    if sys.platform == "win32":
        return Path(local_app_data or Path.home() / "AppData" / "Local") / "polyfw"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "polyfw"
    return Path(xdg_data_home or Path.home() / ".local" / "share") / "polyfw"


def tuning_path() -> Path:
    """The user's table, read over the shipped one and written by --tune: $POLYFW_TUNING, else
    tuning.json in the user data directory."""
    given = environment("POLYFW_TUNING")
    if given:
        return _tuning_path(given, None, None, None)
    return _tuning_path(None, environment("LOCALAPPDATA"), environment("XDG_DATA_HOME"), environment("HOME"))


@lru_cache(maxsize=8)
def _tuning_path(given: str | None, local_app_data: str | None, xdg_data_home: str | None, home: str | None) -> Path:
    return Path(given) if given else _user_data_dir(local_app_data, xdg_data_home, home) / "tuning.json"


def table_stamp() -> tuple:
    """What the tables say depends on, cheaply: the user's table's path and both files' (mtime,
    size). A choice read from the tables may be kept while this is unchanged."""
    user, shipped = _stamped_paths(tuning_path())
    return (user, file_stamp(user)), _shipped_stamp(shipped)


@cache
def _shipped_stamp(shipped: str) -> tuple:
    """(the installed package's table changes only with the package: stamped once a process)"""
    return shipped, file_stamp(shipped)


@lru_cache(maxsize=8)
def _stamped_paths(user: Path) -> tuple[str, str]:
    """(every call plans by the stamp: the paths as text once, not a Path's str each time)"""
    return str(user), str(shipped_path())


def read_table(path: Path) -> dict[str, Any]:
    """One table file ({} if absent), read again only when it changes. A damaged one (garbage,
    truncated, not a JSON object) counts as absent, with one warning on the 'polyfw' logger until
    it changes (the user's table is rewritten whole by the next --tune)."""
    stamp = file_stamp(path)
    if stamp is None:
        return {}
    known = _READ.get(path)
    if known is None or known[0] != stamp:
        try:
            table = json.loads(path.read_text())
            if not isinstance(table, dict):
                raise ValueError(f"a JSON {type(table).__name__}, not an object")
        except (OSError, UnicodeDecodeError, ValueError) as error:  # json.JSONDecodeError is a ValueError
            shipped = path == shipped_path()
            log.warning("tuning table %s is damaged (%s: %s): ignoring it%s", path, type(error).__name__,
                        str(error)[:200], " (reinstall polyfw)" if shipped else ", the shipped table is used")
            table = {}
        known = (stamp, table)
        _READ[path] = known
    return known[1]


def _overlay(shipped: dict[str, Any], mine: dict[str, Any]) -> dict[str, Any]:
    """`shipped` with `mine`'s entries in place of its own, dict by dict (a dtype's rows whole)."""
    merged = dict(shipped)
    for key, value in mine.items():
        merged[key] = _overlay(shipped[key], value) if isinstance(value, dict) and isinstance(
            shipped.get(key), dict) else value
    return merged


def tuning_table() -> dict[str, Any]:
    """The table of fastest configurations: the shipped one with the user's entries over it."""
    return _overlay(read_table(shipped_path()), read_table(tuning_path()))


def machine_tuning(table: dict[str, Any], target: str) -> dict[str, Any]:
    """A table's entries for `target` measured on this CPU if it has any (the fastest
    configuration differs between CPUs), else on a CPU of the same kind, else its entries for any
    machine."""
    if find_target(target).on_cpu:  # the fastest configuration differs between CPUs
        for key in same_kind_keys(table.get("by_cpu", {}), cpu_key()):
            if target in table["by_cpu"][key]:
                return table["by_cpu"][key][target]
    return table.get(target, {})


def same_kind_keys(keys: Collection[str], key: str) -> list[str]:
    """`key` if `keys` has it, then the keys of the same LLVM CPU name and ISA, sorted: two hosts of
    one model hide different features from their guests (a hypervisor's choice), which changes the
    key's digest but not the fastest schedule."""
    kind = key.rsplit("-", 1)[0] + "-"
    return [key] * (key in keys) + sorted(k for k in keys if k.startswith(kind) and k != key)


def tuned_rows(target: str, dtype: str) -> list[list]:
    """The rows that may stand for a size, the user's table's first, then the shipped table's."""
    rows: list[list] = []
    for table in (read_table(tuning_path()), read_table(shipped_path())):
        rows += machine_tuning(table, target).get(dtype) or table.get(target, {}).get(dtype) or []
    return rows


def applies(row: list, n: int) -> bool:
    """Whether a table row stands for n: n is within its up_to and the range it was proved for."""
    first, last = row[3] if len(row) > 3 else (1, EVERY_LARGER_N)
    return n <= row[0] and first <= n <= last


def as_text_values(params: dict[str, Any]) -> dict[str, Any]:
    """Parameters as the table keeps them: an order as its 'a-b-c' text (JSON has no tuples, and
    solve needs hashable values); the declarations parse it back by type."""
    return {name: "-".join(map(str, value)) if isinstance(value, (tuple, list)) else value
            for name, value in params.items()}


def merge_winner(entries: list[list], n: int, family: str, params: dict[str, Any],
                 proved: tuple[int, int] = (1, EVERY_LARGER_N)) -> list[list]:
    """`entries` with the winner for n in place of the entry for that n; the winner at the largest
    measured n also stands for every larger n it is proved for. `proved`: the range of n the
    winner is proved legal for, kept with it."""
    winner = [n, family, dict(params), list(proved)]
    kept = sorted((e for e in entries if e[0] != n), key=lambda e: e[0])
    merged = sorted(kept + [winner], key=lambda e: e[0])
    largest = max(e[0] for e in merged if e[0] < EVERY_LARGER_N)
    if largest == n:
        merged = [e for e in merged if e[0] < EVERY_LARGER_N] + [[EVERY_LARGER_N, *winner[1:]]]
    return merged


def target_rows(table: dict[str, Any], target: str, machine_key: str, machine_model: str = "") -> dict[str, Any]:
    """The rows by dtype that `table` keeps for `target` (under this CPU for a target that runs on
    it), made if absent."""
    if find_target(target).on_cpu:
        here = table.setdefault("by_cpu", {}).setdefault(machine_key, {"model": machine_model})
        return here.setdefault(target, {})
    return table.setdefault(target, {})
