"""solve_batch beyond one machine: a batch's partitions solved on the workers of a dask.distributed cluster.

A data set of millions of small graphs is embarrassingly parallel, and Dask is the Python world's
engine for that. Each partition (a list of graphs, or a partition of a dask.bag) runs solve_batch on
one worker, with the same proved batch schedule a local call runs. Its answer stays where it was
computed: a future held by the worker, or with `store`, a .npy file the worker writes into a
directory every worker can reach (a shared or network file system). A file is written under a
temporary name and renamed, so a partition solved again leaves one file, not two.

A worker that dies takes its partitions with it. The scheduler runs them again on the workers left
(dask's own retry, `distributed.scheduler.allowed-failures`), so every graph's answer exists once.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: solve_batch's options a partition cannot take: they describe one batch's arrays, not each partition's
BATCH_WIDE = ("num_nodes", "edge_weight")


@dataclass(frozen=True)
class StoredPartition:
    """Where a worker wrote one partition's answers (with `store`): graphs x side x side distances."""

    index: int
    path: str
    graphs: int
    side: int
    #: the predecessors' file, where asked for
    predecessors: str | None = None

    def load(self, mmap_mode: str | None = None) -> np.ndarray:
        """The distances (np.load; mmap_mode='r' reads them lazily)."""
        return np.load(self.path, mmap_mode=mmap_mode)


def is_bag(graphs: Any) -> bool:
    """Whether `graphs` is a dask.bag.Bag (without importing dask where it is not)."""
    return type(graphs).__module__.startswith("dask.bag") and hasattr(graphs, "to_delayed")


def solve_partitions(partitions, client, solve: Callable, read: Callable, *, store: str | os.PathLike | None = None,
                     **options) -> list:
    """Solve each partition of `partitions` (a dask.bag.Bag, or a sequence of lists of graphs) with
    `solve(partition, **options)` on the workers of `client` (a dask.distributed.Client); `solve` and
    `read` are polyfw.batch's solve_batch and read_batch (handed in: this module sits below them).

    Returns one future a partition, in order, holding what solve_batch returns for it; with `store`
    (a directory the workers can write), the future holds a StoredPartition naming the .npy file
    part-00000.npy, ... the worker wrote, and nothing else is kept in the workers' memory. Gather
    what you need (client.gather) or read the files; nothing is gathered here."""
    wide = [name for name in BATCH_WIDE if options.get(name) is not None]
    if wide:
        raise ValueError(f"{', '.join(wide)} describe one batch's arrays: give each partition graphs that carry "
                         "their own (edge_index, n) pairs, PyG objects, matrices or networkx graphs instead")
    if store is not None:
        if options.get("padded") is False:
            raise ValueError("store writes each partition as one padded (graphs, side, side) array: leave padded=True")
        Path(store).mkdir(parents=True, exist_ok=True)
        store = str(Path(store).resolve())
    if is_bag(partitions):
        import dask

        solving = dask.delayed(_solve_partition, pure=False)
        return [client.compute(solving(solve, part, index, store, options))
                for index, part in enumerate(partitions.to_delayed())]
    if not isinstance(partitions, Sequence) or isinstance(partitions, (str, bytes)):
        raise TypeError(f"partitions must be a dask.bag.Bag or a sequence of lists of graphs, got "
                        f"{type(partitions).__name__}")
    # a partition read here travels as a few flat arrays (a list of 25,000 small graphs pickles 10x slower)
    reading = {name: options.pop(name) for name in ("weight", "null_value", "directed") if name in options}
    return [client.submit(_solve_partition, solve, read(part, **reading), index, store, options, pure=False)
            for index, part in enumerate(partitions)]


def _solve_partition(solve: Callable, graphs, index: int, store: str | None, options: dict):
    """On a worker: one partition's solve_batch, kept as the future's value or written to `store`."""
    found = solve(graphs, **options)
    if store is None:
        return found
    distances, pred = found if isinstance(found, tuple) else (found, None)
    path = _write(Path(store) / f"part-{index:05d}.npy", distances)
    pred_path = None if pred is None else _write(Path(store) / f"part-{index:05d}-predecessors.npy", pred)
    return StoredPartition(index, path, int(distances.shape[0]), int(distances.shape[-1]), pred_path)


def _write(path: Path, array: np.ndarray) -> str:
    """np.save under a temporary name, then a rename: a reader sees a whole file or none, and a
    partition solved twice leaves one (and no temporary file of an attempt that died)."""
    for stale in path.parent.glob(f".{path.name}.*.partial"):  # an attempt whose worker died while writing
        stale.unlink(missing_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    with open(partial, "wb") as file:
        np.save(file, array)
    os.replace(partial, path)
    return str(path)
