"""What a benchmark run measured, kept where the documentation reads it: one JSON line a table in
benchmarks/results.jsonl, with the command that produced it, when, and on what machine (CPU model and
vector width, GPU). The site's performance page (docs/performance.py) shows the latest table of each
benchmark on each machine, so a figure is never quoted without its command and its hardware."""
from __future__ import annotations

import json
import os
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

from codegen.register_blocks import cpu_description

RESULTS = Path(__file__).with_name("results.jsonl")
ROOT = Path(__file__).resolve().parent.parent
#: what the benchmarks set for Numba's OpenMP layer, written in front of every recorded command
PASSIVE = "OMP_WAIT_POLICY=passive"


def command_line(argv: list[str] | None = None) -> str:
    """How to run this benchmark again from the repository's root, as it was run."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve()
    shown = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
    return " ".join([PASSIVE, "python", shlex.join([str(shown), *argv[1:]])])


def machine(gpu: str | None = None) -> dict[str, object]:
    """The hardware a figure belongs to: the CPU by model and vector width, the GPU by name when one ran."""
    cpu = cpu_description()
    return {"cpu": cpu["model"], "isa": cpu["isa"], "vector_bits": 8 * int(cpu["vector_bytes"]),
            "cores": cpu["cores"], "gpu": gpu}


def record(benchmark: str, title: str, columns: list[str], rows: list[list], *, note: str = "",
           gpu: str | None = None, path: Path | None = None) -> dict:
    """Append one table (`rows` of plain values under `columns`) to the results log and return it.
    benchmark: the script's name (e.g. 'per_call'); title: which of its tables this is."""
    if any(len(row) != len(columns) for row in rows):
        raise ValueError(f"every row of {benchmark!r} / {title!r} needs {len(columns)} values ({columns})")
    entry = {"benchmark": benchmark, "title": title, "command": command_line(),
             "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(gpu),
             "columns": columns, "rows": rows, "note": note}
    with open(path or os.environ.get("POLYFW_RESULTS", RESULTS), "a") as log:
        log.write(json.dumps(entry, default=float) + "\n")
    return entry


def markdown_row(values: list) -> str:
    """One row as the scripts print it (a missing value as a dash)."""
    return "| " + " | ".join("—" if value is None else str(value) for value in values) + " |"


class Table:
    """A markdown table printed row by row as a run measures it (a long run shows its progress), then
    recorded whole: what a reader saw on the terminal is what the log keeps."""

    def __init__(self, benchmark: str, title: str, columns: list[str], *, note: str = "",
                 gpu: str | None = None) -> None:
        self.benchmark, self.title, self.columns, self.note, self.gpu = benchmark, title, columns, note, gpu
        self.rows: list[list] = []
        print(f"\n{title}" + (f" ({note})" if note else "") + ":\n")
        print(markdown_row(columns) + "\n" + markdown_row(["---"] * len(columns)), flush=True)

    def add(self, *values) -> None:
        self.rows.append(list(values))
        print(markdown_row(self.rows[-1]), flush=True)

    def record(self) -> dict:
        return record(self.benchmark, self.title, self.columns, self.rows, note=self.note, gpu=self.gpu)


def print_and_record(benchmark: str, title: str, columns: list[str], rows: list[list], *, note: str = "",
                     gpu: str | None = None) -> dict:
    """A table measured whole before it is shown: printed in markdown and recorded in one call."""
    table = Table(benchmark, title, columns, note=note, gpu=gpu)
    for row in rows:
        table.add(*row)
    return table.record()
