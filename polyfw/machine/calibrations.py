"""Calibrations in the results store: one table beside the exploration's records, one row per
machine, element type, threads and time (polyfw.machine.calibrate measures them)."""
from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from codegen.register_blocks import cpu_key
from schedules.predict import Calibration

from .tuning import user_data_dir


def calibration_store() -> Path:
    """Where calibrations go unless told: $POLYFW_STORE, else the results store in the user data directory."""
    given = os.environ.get("POLYFW_STORE")
    return Path(given) if given else user_data_dir() / "polyfw-explore.sqlite"


@contextmanager
def _connected(path: Path) -> Iterator[sqlite3.Connection]:
    """The store with its calibrations table, committed and closed after use."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    try:
        db.execute("CREATE TABLE IF NOT EXISTS calibrations (machine TEXT, dtype TEXT, threads INTEGER, "
                   "processes INTEGER, created REAL, calibration TEXT)")
        yield db
        db.commit()
    finally:
        db.close()


def save(calibration: Calibration, path: str | Path | None = None, machine: str | None = None) -> Path:
    """Add `calibration` to the store at `path` (calibration_store() unless given) under this machine."""
    path = Path(path) if path is not None else calibration_store()
    with _connected(path) as db:
        db.execute("INSERT INTO calibrations VALUES (?, ?, ?, ?, ?, ?)",
                   (machine or cpu_key(), calibration.dtype, calibration.threads, calibration.processes, time.time(),
                    json.dumps(calibration.as_dict())))
    return path


def load(dtype: str, threads: int, path: str | Path | None = None, machine: str | None = None) -> Calibration | None:
    """The latest calibration of this machine for `dtype` on `threads` threads, or None."""
    path = Path(path) if path is not None else calibration_store()
    if not path.exists():
        return None
    with _connected(path) as db:
        row = db.execute("SELECT calibration FROM calibrations WHERE machine = ? AND dtype = ? AND threads = ? "
                         "ORDER BY created DESC LIMIT 1", (machine or cpu_key(), dtype, threads)).fetchone()
    return None if row is None else Calibration.from_dict(json.loads(row[0]))


def stored(dtype: str, threads: int, store: str | Path | None = None) -> Calibration | None:
    """The latest calibration of this machine for `dtype` on `threads` threads: from `store` where given
    and holding one, else from the user's (calibration_store(), where `polyfw calibrate` writes)."""
    found = None if store is None else load(dtype, threads, store)
    return found if found is not None else load(dtype, threads)
