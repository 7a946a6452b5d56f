"""Candidates timed on the workers of a dask.distributed cluster: `polyfw explore --runner dask://HOST:PORT`.

The search stays in the process that explores: its strategy, model, proofs, store, resume and
budgets are unchanged. Each proved candidate is sent to a worker as its recipe, built there, checked
exactly against the problem's answer and timed by RunHere in the worker's process. A machine times one
candidate at a time: a cluster-wide lock named after the worker's host, so that workers sharing a
machine (or two searches sharing a cluster) take turns; the search keeps one candidate running a host.
The record names the machine that measured it: the worker's CPU key and description, with its address.
"""
from __future__ import annotations

from typing import Any

import numba

from schedules import Schedule

from .runners import Outcome, Problem, Recipe, RunHere, machine
from .space import Candidate

#: what --runner takes besides 'here': a scheduler's address after this prefix
DASK_PREFIX = "dask://"


class DaskWorkers:
    """A Runner whose candidates run on a dask.distributed cluster's workers."""

    processes, tile_layer_overhead = 1, 0.0

    def __init__(self, address: str, target: str = "cpu", client: Any = None):
        """address: the scheduler's ('HOST:PORT' or a full 'tcp://HOST:PORT'); client: one already
        connected (then address only names it)."""
        from distributed import Client

        self.target, self.address = target, address
        self.client = client if client is not None else Client(address if "://" in address else f"tcp://{address}")
        described = self.client.run(_describe_worker, target)
        if not described:
            raise ValueError(f"no workers at {address}: start some (dask worker {address}) and run again")
        #: the first worker's (machine key, CPU description): what the search's records are stored under
        self.remote_machine = next(iter(described.values()))[0]
        self.threads = min(threads for _, threads in described.values())
        #: candidates timed at once: one a host (workers that share a machine take turns)
        self.slots = len({_host(worker) for worker in described})
        self._shipped: tuple[Problem, Any] | None = None

    def submit(self, schedule: Schedule, recipe: Recipe, candidate: Candidate, problem: Problem, repeats: int):
        """The candidate sent to a worker: a future whose result() is its Outcome."""
        if self._shipped is None or self._shipped[0] is not problem:  # sent once, kept on the cluster
            self._shipped = problem, self.client.scatter(problem, broadcast=True)
        return self.client.submit(_measure_on_worker, recipe, candidate, self._shipped[1], repeats, self.target,
                                  pure=False)

    def __call__(self, schedule: Schedule, recipe: Recipe, candidate: Candidate, problem: Problem,
                 repeats: int) -> Outcome:
        return self.submit(schedule, recipe, candidate, problem, repeats).result()

    def close(self) -> None:
        self.client.close()


def runner_for(spec: str, target: str):
    """The Runner --runner names: 'here' (this process; None: the default), or dask://HOST:PORT."""
    if spec == "here":
        return None
    if spec.startswith(DASK_PREFIX) and len(spec) > len(DASK_PREFIX):
        return DaskWorkers(spec[len(DASK_PREFIX):], target)
    raise ValueError(f"--runner must be 'here' or {DASK_PREFIX}HOST:PORT (a dask.distributed scheduler), "
                     f"got {spec!r}")


def _host(address: str) -> str:
    """The machine of a worker's address ('tcp://10.0.0.5:40123' -> '10.0.0.5')."""
    return address.split("://", 1)[-1].rsplit(":", 1)[0]


def _describe_worker(target: str, dask_worker: Any = None) -> tuple[tuple[str, dict[str, Any]], int]:
    """On a worker (client.run passes it): its machine as the store keys it, and the threads its
    kernels run on."""
    key, description = machine("", RunHere(target))
    description.pop("threads")
    return (key, {**description, "worker": dask_worker.address}), numba.get_num_threads()


def _measure_on_worker(recipe: Recipe, candidate: Candidate, problem: Problem, repeats: int,
                       target: str) -> Outcome:
    """On a worker: the candidate built from its recipe, checked and timed alone on this worker."""
    from distributed import Lock, get_worker

    worker = get_worker().address
    with Lock(f"polyfw-measure:{_host(worker)}"):  # never two timings at once on one machine
        runner = RunHere(target)
        outcome = runner(recipe(), recipe, candidate, problem, repeats)
    key, description = machine(problem.dtype, runner)
    outcome.machine = key, {**description, "worker": worker}
    return outcome
