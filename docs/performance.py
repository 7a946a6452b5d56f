"""The site's performance page, written from what the benchmarks recorded rather than by hand: the
latest table of each benchmark on each machine (benchmarks/results.jsonl, appended by
benchmarks/record.py) and the whole GPU calls the GPU model is fitted to
(polyfw/machine/gpu_measurements.json, written by benchmarks/gpu.py --json). Every table names its
command, its date and its CPU or GPU: a figure without its machine means nothing on a shared host."""
from __future__ import annotations

import json
from pathlib import Path

from polyfw.cli.registry_tables import markdown_table

HEADER = """# Performance

What the benchmarks measured: the latest table of each benchmark on each machine. A figure is
a ratio measured in one run (against scipy, a ceiling kernel or another variant) unless it says otherwise,
and belongs to the CPU or GPU beside it. To add a machine, run a benchmark there: each one appends its
tables to `benchmarks/results.jsonl`. The journal of how the figures came about is
[the measurement journal](results.md).
"""


def machine_name(machine: dict) -> str:
    """A machine as the page names it: the CPU by model, vector width and cores; the GPU when one ran."""
    cpu = f"{machine['cpu']} ({machine['isa']}, {machine['vector_bits']}-bit vectors, {machine['cores']} cores)"
    return cpu if not machine.get("gpu") else f"{machine['gpu']} on {cpu}"


def latest_tables(lines: list[str]) -> list[dict]:
    """The newest entry of each (benchmark, table, machine), by benchmark and table."""
    latest: dict[tuple, dict] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as bad:
            raise ValueError(f"line {number} of the results log is not JSON ({bad})") from None
        key = (entry["benchmark"], entry["title"], machine_name(entry["machine"]))
        if key not in latest or entry["date"] >= latest[key]["date"]:
            latest[key] = entry
    return [latest[key] for key in sorted(latest)]


def _table(columns: list[str], rows: list[list]) -> str:
    return markdown_table(columns, [[_cell(value) for value in row] for row in rows])


def _cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value).replace("|", "\\|")


def benchmark_sections(entries: list[dict]) -> str:
    """One section a benchmark, one table a (title, machine) with its command and date."""
    parts, current = [], None
    for entry in entries:
        if entry["benchmark"] != current:
            current = entry["benchmark"]
            parts.append(f"## {current}\n")
        parts.append(f"### {entry['title']}\n\n"
                     f"- machine: {machine_name(entry['machine'])}\n- date: {entry['date'][:10]}\n"
                     f"- command: `{entry['command']}`\n")
        if entry.get("note"):
            parts.append(entry["note"] + "\n")
        parts.append(_table(entry["columns"], entry["rows"]) + "\n")
    return "\n".join(parts)


def gpu_section(measurements: dict) -> str:
    """The whole GPU calls, as relaxations a second (n^3 / seconds)."""
    rows = [[row["family"], ", ".join(f"{k}={v}" for k, v in row["parameters"].items()), row["n"], row["dtype"],
             row["seconds"], row["n"] ** 3 / row["seconds"] / 1e12] for row in measurements["rows"]]
    return (f"## GPU: whole calls\n\n- machine: {measurements['device']}\n- date: {measurements['date']} "
            f"(commit {measurements['commit']})\n- command: `python benchmarks/gpu.py --json FILE` "
            "(its rows kept in `polyfw/machine/gpu_measurements.json`)\n\n"
            + _table(["family", "parameters", "n", "dtype", "seconds", "T relax/s"], rows) + "\n")


def performance_page(results: Path, gpu_measurements: Path) -> str:
    """The page's Markdown from the results log and the GPU measurements (either may be missing)."""
    entries = latest_tables(results.read_text().splitlines()) if results.exists() else []
    parts = [HEADER]
    if not entries:
        parts.append("No benchmark has recorded a table yet: run one (see `benchmarks/`).\n")
    parts.append(benchmark_sections(entries))
    if gpu_measurements.exists():
        parts.append(gpu_section(json.loads(gpu_measurements.read_text())))
    return "\n".join(part for part in parts if part)
