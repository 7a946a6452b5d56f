"""Compile time of `generate` on a machine that has never seen polyfw (an empty cache: the
register-block search, the kernel module and the driver), then in a new process with the cache
filled. Not a test.

    .venv/bin/python benchmarks/compile_time.py [--dtypes float32 int32] [--n 4096]

Issue 12's target: <= 30 s the first time, <= 1 s cached.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from record import Table  # (benchmarks/record.py)

_RUN = """
import time
started = time.perf_counter()
import schedules
from codegen import generate
imported = time.perf_counter()
generate(schedules.build({family!r}, {n}, tile=128{extra}), dtype={dtype!r})
done = time.perf_counter()
print(f"{{imported - started:.2f}} {{done - imported:.2f}}")
"""


def timed(code: str, cache: str) -> tuple[float, float]:
    """(import seconds, generate seconds) in a fresh interpreter using `cache`."""
    environment = {**os.environ, "POLYFW_CACHE": cache, "OMP_WAIT_POLICY": "passive"}
    environment.pop("POLYFW_REGISTER_BLOCK", None)
    done = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True)
    imported, generated = done.stdout.split()[-2:]
    return float(imported), float(generated)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "int32"])
    parser.add_argument("--n", type=int, default=4096)
    args = parser.parse_args()
    table = Table("compile_time", f"compile time of generate, n = {args.n}",
                  ["dtype", "family", "first generate s", "import s", "generate in a new process, cache filled s"],
                  note="an empty cache, then the same cache in a fresh interpreter")
    for dtype in args.dtypes:
        with tempfile.TemporaryDirectory(prefix="polyfw-cold-") as cache:
            for family, extra in (("classic", ""), ("generalized", ", kappa=4"), ("recursive", "")):
                code = _RUN.format(family=family, n=args.n, extra=extra, dtype=dtype)
                first = timed(code, cache)
                again = timed(code, cache)
                table.add(dtype, family, round(first[1], 2), round(first[0], 1), round(again[1], 2))
    table.record()


if __name__ == "__main__":
    main()
