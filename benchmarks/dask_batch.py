"""solve_batch on a dask.distributed cluster beside the same batch solved in this process. Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/dask_batch.py [--graphs 400000] [--partitions 16]
        [--workers 2] [--repeats 3] [--scheduler HOST:PORT]

The batch is molecule-like graphs as (edge_index, n) pairs (polyfw.graphs.datasets.molecule_like),
split into --partitions lists. Contenders, interleaved round by round (medians quoted):

- local: solve_batch over every graph at once in this process (all its threads);
- futures: the partitions solved on the cluster, every future waited for (results left on the workers);
- store: the same with store=DIR, each worker writing its partitions as .npy files.

Without --scheduler a LocalCluster of --workers processes of one thread each is started here, so on one
machine the cluster can at best match the local call: the figures say what the partitioning, the
scheduler and the transfers cost. Every partition's answer is checked equal to the local call's slice.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from distributed import Client, LocalCluster, wait  # noqa: E402

import polyfw  # noqa: E402
from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw.graphs.datasets import molecule_like  # noqa: E402
from record import print_and_record  # noqa: E402  (benchmarks/record.py)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=400_000)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scheduler", default=None, help="a running scheduler's HOST:PORT (default: a LocalCluster)")
    args = parser.parse_args()
    edge_index, sizes = molecule_like(args.graphs)
    graphs = list(zip(edge_index, sizes.tolist()))
    bounds = np.linspace(0, len(graphs), args.partitions + 1).astype(int)
    partitions = [graphs[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    cluster = None if args.scheduler else LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                                       dashboard_address=None, env={"OMP_WAIT_POLICY": "passive"})
    client = Client(args.scheduler if args.scheduler else cluster)
    where = args.scheduler or f"a LocalCluster of {args.workers} one-thread worker processes"
    cpu = cpu_description()
    print(f"CPU: {cpu['model']} ({cpu['isa']}); local: {numba.get_num_threads()} threads; cluster: {where}; "
          f"{args.graphs:,} graphs in {args.partitions} partitions; medians of {args.repeats} interleaved rounds")
    expected = polyfw.solve_batch(graphs, padded=False)
    for part, a, found in zip(partitions, bounds, client.gather(polyfw.solve_batch(partitions, client=client,
                                                                                    padded=False))):
        assert all(np.array_equal(x, y) for x, y in zip(found, expected[a:a + len(part)])), "cluster != local"
    seconds = {"local": [], "futures": [], "store": []}
    with tempfile.TemporaryDirectory() as store:
        for _ in range(args.repeats):
            started = time.perf_counter()
            polyfw.solve_batch(graphs)
            seconds["local"].append(time.perf_counter() - started)
            started = time.perf_counter()
            futures = polyfw.solve_batch(partitions, client=client)
            wait(futures)
            seconds["futures"].append(time.perf_counter() - started)
            del futures
            started = time.perf_counter()
            wait(polyfw.solve_batch(partitions, client=client, store=store))
            seconds["store"].append(time.perf_counter() - started)
    medians = {what: statistics.median(times) for what, times in seconds.items()}
    print_and_record("dask_batch", f"solve_batch on a dask cluster, {args.graphs:,} graphs",
                     ["contender", "median s", "graphs/s", "speed over local"],
                     [[what, round(median, 3), round(args.graphs / median), round(medians["local"] / median, 2)]
                      for what, median in medians.items()],
                     note=f"{args.partitions} partitions; cluster: {where}; "
                          f"medians of {args.repeats} interleaved rounds")
    client.close()
    if cluster is not None:
        cluster.close()


if __name__ == "__main__":
    main()
