"""The tuning table `solve(schedule='auto')` reads: where it lives, and how a winner is written in.

The shipped table is polyfw/tuning.json; POLYFW_TUNING names another file (a user's own, or a
test's), read and written instead. Entries are [up_to_n, family, parameters] per dtype, under
the CPU they were measured on for the targets that run on it (by_cpu.<cpu key>.cpu, .mpi) and
per target otherwise.
"""
from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

#: an entry's up_to that stands for every larger n
EVERY_LARGER_N = 10**9
#: targets whose winners are kept per CPU (the fastest configuration differs between CPUs)
TUNED_PER_CPU = ("cpu", "mpi")


def tuning_path() -> Path:
    """The file read and written: $POLYFW_TUNING, else the package's tuning.json."""
    given = os.environ.get("POLYFW_TUNING")
    return Path(given) if given else Path(str(resources.files("polyfw").joinpath("tuning.json")))


def tuning_table() -> dict[str, Any]:
    """The table of fastest configurations (benchmarks/cpu.py --tune and polyfw explore --tune write it)."""
    path = tuning_path()
    return json.loads(path.read_text()) if path.exists() else {}


def as_text_values(params: dict[str, Any]) -> dict[str, Any]:
    """Parameters as the table keeps them: an order as its 'a-b-c' text (JSON has no tuples, and
    solve needs hashable values); the declarations parse it back by type."""
    return {name: "-".join(map(str, value)) if isinstance(value, (tuple, list)) else value
            for name, value in params.items()}


def merge_winner(entries: list[list], n: int, family: str, params: dict[str, Any]) -> list[list]:
    """`entries` with the winner for n in place of the entry for that n; the winner at the largest
    measured n also stands for every larger n."""
    kept = sorted((e for e in entries if e[0] != n), key=lambda e: e[0])
    merged = sorted(kept + [[n, family, dict(params)]], key=lambda e: e[0])
    largest = max(e[0] for e in merged if e[0] < EVERY_LARGER_N)
    if largest == n:
        merged = [e for e in merged if e[0] < EVERY_LARGER_N] + [[EVERY_LARGER_N, family, dict(params)]]
    return merged


def write_winner(n: int, dtype: str, target: str, family: str, params: dict[str, Any], machine_key: str,
                 machine_model: str) -> Path:
    """Put the winner for (n, dtype, target) into the table; returns the file written."""
    path = tuning_path()
    table = tuning_table()
    if target in TUNED_PER_CPU:
        here = table.setdefault("by_cpu", {}).setdefault(machine_key, {"model": machine_model})
        rows = here.setdefault(target, {})
    else:
        rows = table.setdefault(target, {})
    rows[dtype] = merge_winner(rows.get(dtype, []), n, family, as_text_values(params))
    path.write_text(json.dumps(table, indent=2) + "\n")
    return path
