"""The exploration's results store: one SQLite file that outlives runs and travels between machines.

A record is one measured (or refused) candidate on one machine: the tree it ran (isl text), its
parameters, the machine (CPU model, cores, vector width, the ceiling measured there), the cost
model's figures and the measured seconds. Records are keyed by machine and candidate, so a
re-run on the same machine skips what is stored and another machine adds its own rows.
"""
from __future__ import annotations

import csv
import json
import sqlite3
import time
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

DEFAULT_STORE = Path("polyfw-explore.sqlite")

#: a candidate was verified and timed / refused by the checker / verified wrong (a checker bug)
STATUSES = ("measured", "illegal", "wrong", "failed")


@dataclass
class Record:
    machine: str
    target: str
    dtype: str
    n: int
    key: str
    family: str
    params: dict[str, Any]
    status: str
    tree: str = ""
    origin: str = "family"
    seconds: float | None = None
    times: list[float] = field(default_factory=list)
    compile_seconds: float | None = None
    predicted_seconds: float | None = None
    model: dict[str, Any] = field(default_factory=dict)
    machine_description: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    created: float = field(default_factory=time.time)

    @property
    def rate(self) -> float | None:
        """Relaxations per second (n^3 / median seconds)."""
        return None if not self.seconds else self.n**3 / self.seconds


class Measured:
    """What a list of records (an exploration's, or a strategy's view of one) says was measured."""

    records: list[Record]

    @property
    def measured(self) -> list[Record]:
        """The records of candidates that ran exactly and were timed."""
        return [r for r in self.records if r.status == "measured"]

    @property
    def best(self) -> Record | None:
        """The measured record with the smallest median time (None when none was measured)."""
        return min(self.measured, key=lambda r: r.seconds, default=None)


_JSON_FIELDS = ("params", "times", "model", "machine_description")
_COLUMNS = tuple(f.name for f in fields(Record))


class DamagedStoreError(ValueError):
    """The store file is not a SQLite database, or a damaged one (garbage, truncated): one line
    naming it (the file is left as it is: it may hold measurements worth recovering)."""


@contextmanager
def _intact(path: Path):
    """Turn SQLite's 'file is not a database' / 'database disk image is malformed' into one line
    naming the file; a locked or busy database (another run writing) is not damage and passes."""
    try:
        yield
    except sqlite3.DatabaseError as error:
        if type(error) is not sqlite3.DatabaseError:  # OperationalError (locked, busy), IntegrityError, ...
            raise
        raise DamagedStoreError(f"the explore store {path} is damaged or not a polyfw store ({error}): move it "
                                "aside or pass another --store") from None


class Store:
    """Records in a SQLite file (`DEFAULT_STORE` unless told), with CSV and JSON export."""

    def __init__(self, path: str | Path = DEFAULT_STORE):
        self.path = Path(path)
        self._db = sqlite3.connect(self.path)
        columns = ", ".join(f"{name} TEXT" if name in _JSON_FIELDS else name for name in _COLUMNS)
        try:
            with _intact(self.path):
                self._db.execute(f"CREATE TABLE IF NOT EXISTS records ({columns}, "
                                 "PRIMARY KEY (machine, target, dtype, n, key))")
                self._db.commit()
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def put(self, record: Record) -> None:
        """Insert or replace the record of this machine and candidate."""
        row = asdict(record)
        values = [json.dumps(row[name]) if name in _JSON_FIELDS else row[name] for name in _COLUMNS]
        with _intact(self.path):
            self._db.execute(f"INSERT OR REPLACE INTO records ({', '.join(_COLUMNS)}) VALUES "
                             f"({', '.join('?' * len(_COLUMNS))})", values)
            self._db.commit()

    def get(self, machine: str, target: str, dtype: str, n: int, key: str) -> Record | None:
        found = self.select("machine = ? AND target = ? AND dtype = ? AND n = ? AND key = ?",
                            (machine, target, dtype, n, key))
        return found[0] if found else None

    def select(self, where: str = "1", arguments: Iterable[Any] = ()) -> list[Record]:
        with _intact(self.path):
            cursor = self._db.execute(f"SELECT {', '.join(_COLUMNS)} FROM records WHERE {where} ORDER BY created",
                                      tuple(arguments))
            return [Record(**{name: json.loads(value) if name in _JSON_FIELDS else value
                              for name, value in zip(_COLUMNS, row)}) for row in cursor]

    def records(self, machine: str | None = None, target: str | None = None, dtype: str | None = None,
                n: int | None = None) -> list[Record]:
        """Every record, or those matching the given fields."""
        given = {name: value for name, value in (("machine", machine), ("target", target), ("dtype", dtype),
                                                 ("n", n)) if value is not None}
        return self.select(" AND ".join(f"{name} = ?" for name in given) or "1", given.values())

    def export(self, path: str | Path) -> int:
        """Write every record to a .csv or .json file; returns how many."""
        path = Path(path)
        rows = [asdict(record) for record in self.records()]
        if path.suffix == ".json":
            path.write_text(json.dumps(rows, indent=1))
        elif path.suffix == ".csv":
            with open(path, "w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(_COLUMNS))
                writer.writeheader()
                writer.writerows({name: json.dumps(row[name]) if name in _JSON_FIELDS else row[name]
                                  for name in _COLUMNS} for row in rows)
        else:
            raise ValueError(f"export to a .csv or .json file, got {str(path)!r}")
        return len(rows)
