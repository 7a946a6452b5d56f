"""The object networkx's `networkx.backends` entry point names: the conversions, can_run,
should_run and every function of info.DISPATCHED, taken from algorithms.py by name."""
from __future__ import annotations

import inspect
from functools import cache

from . import algorithms
from ..solver import MEMORY_WORTH_CHECKING, available_memory, memory_needed
from .graph import convert_from_nx, convert_to_nx
from .info import DISPATCHED

#: polyfw's own costs beside networkx's (info.DISPATCHED): reading one node or arc of a networkx
#: graph, one entry of a result built in Python (seconds, 2-core AMD EPYC Zen 3;
#: benchmarks/networkx_backend.py --calibrate)
CONVERT_SECONDS_PER_ARC = 3.3e-7
RESULT_SECONDS_PER_ENTRY = 6.0e-8


@cache
def _signature(name: str) -> inspect.Signature:
    return inspect.signature(getattr(algorithms, name))


def _arguments(name: str, args: tuple, kwargs: dict) -> dict:
    bound = _signature(name).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments


#: the functions whose answer polyfw computes as one n x n matrix (networkx's as dicts, row by row)
MATRIX_RESULTS = {"floyd_warshall", "floyd_warshall_numpy", "floyd_warshall_predecessor_and_distance",
                  "transitive_closure"}


def can_run(name: str, args: tuple, kwargs: dict) -> bool | str:
    """Whether polyfw computes networkx's answer for these arguments (a string says why not): every
    dispatched function with every argument networkx takes, unless its n x n matrix does not fit
    in this machine's memory."""
    if name not in DISPATCHED:
        return f"polyfw does not implement {name}"
    if name in MATRIX_RESULTS:
        n = len(_arguments(name, args, kwargs)["G"])
        needed = memory_needed(n, "float64", predecessors=name.endswith("distance"))
        available = available_memory() if needed >= MEMORY_WORTH_CHECKING else None
        if available is not None and needed > available:
            return (f"{n} nodes need about {needed / 2**30:.1f} GiB for polyfw's all-pairs matrix and this "
                    f"machine has {available / 2**30:.1f} GiB available")
    return True


def _converted(graph) -> bool:
    """Whether networkx already holds this graph converted for polyfw (its conversion cache)."""
    cache = getattr(graph, "__networkx_cache__", None) or {}
    return bool(cache.get("backends", {}).get("polyfw")) or getattr(graph, "__networkx_backend__", None) == "polyfw"


def should_run(name: str, args: tuple, kwargs: dict) -> bool | str:
    """Whether running on polyfw saves time once converting the graph is paid: networkx's own time
    for this size (info.DISPATCHED) against polyfw's call, conversion and building the result in
    Python. On small graphs, and for one search on a graph not converted yet, networkx runs."""
    graph = _arguments(name, args, kwargs)["G"]
    n = len(graph)
    arcs = graph.number_of_edges() * (1 if graph.is_directed() else 2)
    cost = DISPATCHED[name]
    networkx = cost.networkx_seconds(n, arcs)
    converting = 0.0 if _converted(graph) else CONVERT_SECONDS_PER_ARC * (n + arcs)
    polyfw = cost.call_seconds + converting + RESULT_SECONDS_PER_ENTRY * cost.result_entries(n, arcs)
    if networkx > polyfw:
        return True
    return (f"{n} nodes and {arcs} arcs: networkx needs about {networkx:.2g} s, polyfw about {polyfw:.2g} s "
            f"({converting:.2g} s of it converting the graph), so networkx runs it")


class BackendInterface:
    """What networkx calls (its `networkx.backends` entry point)."""

    convert_from_nx = staticmethod(convert_from_nx)
    convert_to_nx = staticmethod(convert_to_nx)
    can_run = staticmethod(can_run)
    should_run = staticmethod(should_run)


for _name in DISPATCHED:
    setattr(BackendInterface, _name, staticmethod(getattr(algorithms, _name)))
