"""solve_batch on a dask.distributed cluster: partitions solved on worker processes equal the local calls,
stored per partition, and a worker killed mid-batch leaves every graph's answer exactly once."""
import os
import signal
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
import dask.bag as db  # noqa: E402

import polyfw  # noqa: E402
from polyfw.dask_batch import StoredPartition  # noqa: E402
from polyfw.graphs import random_graph  # noqa: E402


def molecules(count: int, seed: int, smallest: int = 5, largest: int = 30) -> list:
    """(edge_index, n) pairs of sparse random graphs, hop counts."""
    rng = np.random.default_rng(seed)
    graphs = []
    for g in range(count):
        n = int(rng.integers(smallest, largest + 1))
        edges = random_graph(n, min(2 * n, n * (n - 1)), weights=(1, 1), seed=seed * 100_000 + g)
        graphs.append((np.stack([edges.source, edges.target]), n))
    return graphs


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       env={"OMP_WAIT_POLICY": "passive"})
    with distributed.Client(cluster) as connected:
        yield connected
    cluster.close()


def test_partitions_and_bags_are_solved_on_the_workers_as_locally(client, tmp_path):
    partitions = [molecules(40, seed) for seed in range(4)]
    futures = polyfw.solve_batch(partitions, client=client, directed=False)
    assert all(isinstance(future, distributed.Future) for future in futures)
    for part, found in zip(partitions, client.gather(futures)):
        assert np.array_equal(found, polyfw.solve_batch(part, directed=False))
    everything = [graph for part in partitions for graph in part]
    bag = db.from_sequence(everything, partition_size=50)
    stored = client.gather(polyfw.solve_batch(bag, client=client, store=tmp_path, predecessors=True))
    assert [type(part) for part in stored] == [StoredPartition] * bag.npartitions == [StoredPartition] * 4
    assert sorted(os.listdir(tmp_path)) == sorted([f"part-0000{i}.npy" for i in range(4)] +
                                                  [f"part-0000{i}-predecessors.npy" for i in range(4)])
    expected, pred = polyfw.solve_batch(everything, predecessors=True)
    side = expected.shape[-1]
    found = np.concatenate([np.pad(part.load(), ((0, 0), (0, side - part.side), (0, side - part.side)),
                                   constant_values=-1) for part in stored])
    assert found.shape == expected.shape and np.array_equal(found, expected)
    assert sum(part.graphs for part in stored) == len(everything)
    assert np.array_equal(np.load(stored[0].predecessors), pred[:stored[0].graphs, :stored[0].side, :stored[0].side])


def test_a_batch_wide_option_or_a_store_without_a_cluster_is_refused(client, tmp_path):
    with pytest.raises(ValueError, match="num_nodes describe one batch's arrays"):
        polyfw.solve_batch([[np.zeros((2, 0), dtype=np.int64)]], num_nodes=[3], client=client)
    with pytest.raises(ValueError, match="pass client= too"):
        polyfw.solve_batch(molecules(2, 0), store=tmp_path)
    with pytest.raises(ValueError, match="leave padded=True"):
        polyfw.solve_batch([molecules(2, 0)], client=client, store=tmp_path, padded=False)


def test_a_worker_killed_mid_batch_leaves_every_answer_exactly_once(client, tmp_path):
    partitions = [molecules(30, seed, smallest=150, largest=220) for seed in range(8)]
    futures = polyfw.solve_batch(partitions, client=client, store=tmp_path)
    pids = client.run(os.getpid)
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline:
        busy = [worker for worker, keys in client.processing().items() if keys]
        if busy and any(future.status == "finished" for future in futures) and \
                not all(future.status == "finished" for future in futures):
            killed = busy[0]
            os.kill(pids[killed], signal.SIGKILL)  # a worker dies while its partition runs
        time.sleep(0.01)
    assert killed is not None, "no moment with a partition running and another finished"
    stored = client.gather(futures)  # the dead worker's partitions run again on the workers left
    assert [part.index for part in stored] == list(range(len(partitions)))
    assert sorted(os.listdir(tmp_path)) == [f"part-{i:05d}.npy" for i in range(len(partitions))]
    for part, found in zip(partitions, stored):
        assert np.array_equal(found.load(), polyfw.solve_batch(part))


def test_explore_times_candidates_on_the_workers_and_names_their_machine(client, tmp_path, capsys):
    from polyfw.cli import main
    from polyfw.explore import Store

    client.wait_for_workers(2)  # (the worker an earlier test killed is back)
    address = client.scheduler.address.removeprefix("tcp://")
    arguments = ["explore", "--n", "48", "--strategy", "random", "--max-candidates", "3", "--repeats", "1",
                 "--no-calibrate", "--no-ceiling", "--store", str(tmp_path / "s.sqlite"),
                 "--runner", f"dask://{address}"]
    assert main(arguments) == 0
    assert "3 measured" in capsys.readouterr().out
    with Store(tmp_path / "s.sqlite") as store:
        records = store.records()
    assert len(records) == 3 and {record.status for record in records} == {"measured"}
    assert {record.machine_description["worker"] for record in records} <= set(client.scheduler_info()["workers"])
    assert main(arguments) == 0  # again: the store holds them for the workers' machine
    assert "3 from the store" in capsys.readouterr().out


def test_a_runner_that_is_not_a_cluster_is_a_usage_error(capsys):
    from polyfw.cli import main

    assert main(["explore", "--n", "48", "--max-candidates", "1", "--runner", "spark://x"]) == 2
    assert "--runner must be 'here' or dask://HOST:PORT" in capsys.readouterr().err
