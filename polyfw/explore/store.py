"""The exploration's results store: one SQLite file that outlives runs and travels between machines.

A record is one measured (or refused) candidate on one machine: the tree it ran (isl text), its
parameters, the machine (CPU model, cores, vector width, the ceiling measured there), the cost
model's figures and the measured seconds. Records are keyed by machine and candidate, so a
re-run on the same machine skips what is stored and another machine adds its own rows.

A search is one strategy's walk over one space (table `searches`: the problem, the space's
narrowing, the strategy with its settings and seed, the budgets last given, whether it ran out of
candidates) and the keys it visited in order (table `visits`), which is what `--resume` feeds
back to the strategy.
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
    #: the calibrated model's seconds at the host's speed while the candidate ran (the speed probe's
    #: slowdown, model['host slowdown'], times model['predicted_seconds'], its seconds at calibration's)
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


@dataclass
class StoredSearch:
    """One search in a store: what a resumed run must match (`identity`), the settings it last
    ran with, and whether its strategy ran out of candidates."""

    machine: str
    target: str
    dtype: str
    n: int
    #: the space's narrowing (polyfw.explore.search.narrowing): families, axes' values, run axes, processes
    space: dict[str, Any]
    strategy: str
    settings: dict[str, Any]
    seed: int
    repeats: int = 3
    budget_seconds: float | None = None
    max_candidates: int | None = None
    created: float = field(default_factory=time.time)
    finished: bool = False
    id: int | None = None

    def identity(self) -> dict[str, Any]:
        """The fields two runs share when one continues the other (budgets and repeats may change),
        as the store holds them (JSON: a tuple is a list)."""
        return {name: json.loads(json.dumps(getattr(self, name))) for name in _SEARCH_IDENTITY}

    def differences(self, other: StoredSearch) -> list[str]:
        """'name mine vs other's' for each field of the identity the two do not share."""
        return [f"{name} {json.dumps(mine, sort_keys=True)} vs {json.dumps(theirs, sort_keys=True)}"
                for (name, mine), theirs in zip(self.identity().items(), other.identity().values()) if mine != theirs]


_SEARCH_IDENTITY = ("machine", "target", "dtype", "n", "space", "strategy", "settings", "seed")
_SEARCH_JSON = ("space", "settings")
_SEARCH_COLUMNS = tuple(f.name for f in fields(StoredSearch) if f.name != "id")


def _search_of(row: dict[str, Any]) -> StoredSearch:
    """A searches row as the StoredSearch it was written from (JSON read, SQLite's 0/1 a bool)."""
    return StoredSearch(**{**row, **{name: json.loads(row[name]) for name in _SEARCH_JSON},
                           "finished": bool(row["finished"])})


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
    """Records and searches in a SQLite file (`DEFAULT_STORE` unless told), with CSV and JSON export.
    read_only: open an existing store without writing to it (no file made, no table added)."""

    def __init__(self, path: str | Path = DEFAULT_STORE, read_only: bool = False):
        self.path = Path(path)
        if read_only and not self.path.is_file():
            raise ValueError(f"no explore store at {self.path}")
        self._db = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True) if read_only \
            else sqlite3.connect(self.path)
        try:
            with _intact(self.path):
                if not read_only:
                    self._create_tables()
        except BaseException:
            self._db.close()
            raise

    def _create_tables(self) -> None:
        columns = ", ".join(f"{name} TEXT" if name in _JSON_FIELDS else name for name in _COLUMNS)
        self._db.execute(f"CREATE TABLE IF NOT EXISTS records ({columns}, "
                         "PRIMARY KEY (machine, target, dtype, n, key))")
        self._db.execute(f"CREATE TABLE IF NOT EXISTS searches (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                         f"{', '.join(_SEARCH_COLUMNS)})")
        self._db.execute("CREATE TABLE IF NOT EXISTS visits (search INTEGER, position INTEGER, key TEXT, "
                         "PRIMARY KEY (search, position))")
        self._db.commit()

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

    def machines(self) -> list[str]:
        """The machine keys that have records here."""
        with _intact(self.path):
            return [row[0] for row in self._db.execute("SELECT DISTINCT machine FROM records ORDER BY machine")]

    # ------------------------------------------------------------ searches and their visits

    def begin(self, search: StoredSearch) -> StoredSearch:
        """Add a search (its id set from the store's) with no visits yet."""
        row = asdict(search)
        values = [json.dumps(row[name], sort_keys=True) if name in _SEARCH_JSON else row[name]
                  for name in _SEARCH_COLUMNS]
        with _intact(self.path):
            cursor = self._db.execute(f"INSERT INTO searches ({', '.join(_SEARCH_COLUMNS)}) VALUES "
                                      f"({', '.join('?' * len(_SEARCH_COLUMNS))})", values)
            self._db.commit()
        search.id = cursor.lastrowid
        return search

    def update(self, search: StoredSearch) -> None:
        """Write a search's budgets, repeats and whether it finished (its identity never changes)."""
        with _intact(self.path):
            self._db.execute("UPDATE searches SET repeats = ?, budget_seconds = ?, max_candidates = ?, finished = ? "
                             "WHERE id = ?", (search.repeats, search.budget_seconds, search.max_candidates,
                                              search.finished, search.id))
            self._db.commit()

    def searches(self) -> list[StoredSearch]:
        """Every search, the latest first (none in a store written before searches were kept)."""
        with _intact(self.path):
            if not self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'searches'").fetchone():
                return []
            cursor = self._db.execute(f"SELECT id, {', '.join(_SEARCH_COLUMNS)} FROM searches ORDER BY id DESC")
            return [_search_of(dict(zip(("id", *_SEARCH_COLUMNS), row))) for row in cursor]

    def search(self, search_id: int) -> StoredSearch:
        """The search of that id, or an error naming the ids there are."""
        every = self.searches()
        found = next((s for s in every if s.id == search_id), None)
        if found is None:
            ids = ", ".join(str(s.id) for s in reversed(every)) or "none"
            raise ValueError(f"{self.path} has no search {search_id}; its searches: {ids}")
        return found

    def visit(self, search_id: int, key: str) -> None:
        """Append `key` to the search's visits."""
        with _intact(self.path):
            self._db.execute("INSERT INTO visits (search, position, key) VALUES (?, (SELECT COALESCE(MAX(position) "
                             "+ 1, 0) FROM visits WHERE search = ?), ?)", (search_id, search_id, key))
            self._db.commit()

    def visited(self, search_id: int) -> list[str]:
        """The keys the search visited, in the order visited."""
        with _intact(self.path):
            return [row[0] for row in self._db.execute("SELECT key FROM visits WHERE search = ? ORDER BY position",
                                                       (search_id,))]

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
