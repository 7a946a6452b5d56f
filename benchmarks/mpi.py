"""The MPI runtime on this machine: `mpiexec -n 2` x 1 thread against 1 process x 2 threads (the cpu
target, same schedule, barrier and dataflow runtimes), lookahead on and off, skip-INF on a
disconnected graph, and the bytes sent beside the plan's.

Run: .venv/bin/python benchmarks/mpi.py [--sizes 2048 4096] [--rounds 5] [--dtype float32]
It launches itself under mpiexec -n 2. Rounds interleave the contenders: in each, both ranks run
the distributed schedule, then rank 0 runs the shared-memory one on 2 threads while rank 1
sleeps (an MPI wait would spin on a core). Times are medians of the run alone (scatter and
gather excluded, and shown separately); every result is checked against the first.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from record import print_and_record  # noqa: E402  (benchmarks/record.py)


def worker(args: argparse.Namespace) -> None:
    import numba
    import numpy as np

    from codegen import generate
    from codegen.mpi import world
    from codegen.register_blocks import cpu_description
    from schedules.families import build
    from tiling.semirings import INT32_INF

    sys.path.insert(0, str(Path(__file__).parent))
    from interleaved import random_distances

    comm = world()
    rank = comm.Get_rank()

    def idle_until_rank0_done() -> None:
        request = comm.Ibarrier()
        while not request.Test():
            time.sleep(0.002)

    def report(**fields) -> None:
        if rank == 0:
            print(json.dumps(fields), flush=True)

    if rank == 0:
        report(kind="machine", cpu=cpu_description(), processes=comm.Get_size())
    for n in args.sizes:
        schedule = build("classic", n, args.tile)
        base = random_distances(n, args.dtype)
        contenders = {f"mpi {comm.Get_size()} x 1, lookahead": generate(schedule, target="mpi", dtype=args.dtype,
                                                                        threads=1, lookahead=True),
                      f"mpi {comm.Get_size()} x 1, in order": generate(schedule, target="mpi", dtype=args.dtype,
                                                                       threads=1, lookahead=False)}
        shared = {}
        if rank == 0:
            numba.set_num_threads(comm.Get_size())
            shared = {f"cpu 1 x {comm.Get_size()}, {runtime}": generate(schedule, target="cpu", dtype=args.dtype,
                                                                        runtime=runtime)
                      for runtime in ("barrier", "dataflow")}
        seconds: dict[str, list[float]] = {name: [] for name in [*contenders, *shared]}
        moving: list[float] = []
        expected = None
        for round_ in range(args.rounds + 1):
            for name, compiled in contenders.items():
                a = base.copy() if rank == 0 else None
                comm.Barrier()
                started = time.perf_counter()
                compiled(a)
                total = time.perf_counter() - started
                run = compiled.last_run["seconds"]
                if rank == 0 and round_ == 0:
                    expected = a.copy() if expected is None else expected
                    if not np.array_equal(a, expected):
                        raise SystemExit(f"{name} differs at n = {n}")
                if round_:
                    seconds[name].append(comm.allreduce(run, op=max_op()))
                    moving.append(total - run)
            if rank == 0:
                for name, compiled in shared.items():
                    a = base.copy()
                    started = time.perf_counter()
                    compiled(a)
                    if round_:
                        seconds[name].append(time.perf_counter() - started)
                    elif not np.array_equal(a, expected):
                        raise SystemExit(f"{name} differs at n = {n}")
            idle_until_rank0_done()
        plan = contenders[next(iter(contenders))].plan
        model = plan.traffic(np.dtype(args.dtype).itemsize)
        sent = comm.gather(contenders[next(iter(contenders))].last_run["bytes_sent"], root=0)
        report(kind="times", n=n, tile=args.tile, dtype=args.dtype,
               seconds={name: float(np.median(times)) for name, times in seconds.items()},
               scatter_gather_seconds=float(np.median(moving)) if moving else 0.0,
               bytes_sent=sent, bytes_model=model["bytes_sent"].tolist() if rank == 0 else None)
        # four components with no edge between them: skip-INF against no skipping
        parts = 4
        block = n // parts
        disconnected = np.full((n, n), INT32_INF if args.dtype == "int32" else np.inf, dtype=args.dtype)
        for part in range(parts):
            window = slice(part * block, (part + 1) * block)
            disconnected[window, window] = base[window, window]
        timed: dict[str, list[float]] = {"skip-INF": [], "no skipping": []}
        skipped, saved = {}, {}
        for round_ in range(args.rounds + 1):
            for name, skip in (("skip-INF", True), ("no skipping", False)):
                compiled = generate(schedule, target="mpi", dtype=args.dtype, threads=1, skip_inf=skip)
                a = disconnected.copy() if rank == 0 else None
                compiled(a)
                if round_:
                    timed[name].append(comm.allreduce(compiled.last_run["seconds"], op=max_op()))
                skipped[name] = comm.allreduce(compiled.last_run["skipped_tile_layers"])
                saved[name] = comm.allreduce(compiled.last_run["bytes_saved"])
        report(kind="skip", n=n, seconds={name: float(np.median(t)) for name, t in timed.items()},
               skipped=skipped, tile_layers=len(plan.units), bytes_saved=saved["skip-INF"])


def max_op():
    from mpi4py import MPI

    return MPI.MAX


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tile", type=int, default=256)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    launcher = Path(sys.executable).parent / "mpiexec"
    command = [str(launcher), "-n", str(args.processes), sys.executable, __file__, "--worker", "--sizes",
               *map(str, args.sizes), "--rounds", str(args.rounds), "--tile", str(args.tile), "--dtype", args.dtype]
    done = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    if done.returncode:
        raise SystemExit(done.stdout + done.stderr[-4000:])
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    machine = lines[0]
    print(f"CPU: {machine['cpu']}")
    rows = []
    for line in lines:
        if line["kind"] == "times":
            n, seconds = line["n"], line["seconds"]
            barrier = next(v for k, v in seconds.items() if k.endswith("barrier"))
            dataflow = next(v for k, v in seconds.items() if k.endswith("dataflow"))
            rows += [[n, name, round(value, 3), round(n**3 / value / 1e9, 2), round(value / barrier, 3),
                      round(value / dataflow, 3)] for name, value in seconds.items()]
            rows.append([n, "scatter + gather (not in the above)", round(line["scatter_gather_seconds"], 3),
                         None, None, None])
            rows.append([n, f"bytes sent per rank: measured {line['bytes_sent']}, plan {line['bytes_model']}",
                         None, None, None, None])
        elif line["kind"] == "skip":
            n, seconds = line["n"], line["seconds"]
            rows.append([n, "disconnected (4 parts), no skipping", round(seconds["no skipping"], 3), None, None, None])
            rows.append([n, f"disconnected (4 parts), skip-INF: {line['skipped']['skip-INF']} of "
                            f"{line['tile_layers']} tile-layers skipped, {line['bytes_saved']} bytes not sent",
                         round(seconds["skip-INF"], 3), None, None, None])
    print_and_record("mpi", f"{machine['processes']} MPI processes x 1 thread against 1 process x "
                            f"{machine['processes']} threads",
                     ["n", "contender", "median s", "G relax/s", "time over cpu barrier", "time over cpu dataflow"],
                     rows, note=f"medians of {args.rounds} interleaved rounds; {args.dtype}, tile {args.tile}")


if __name__ == "__main__":
    main()
