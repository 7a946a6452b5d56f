"""What networkx reads about polyfw when it is imported (the `networkx.backend_info` entry point).

The list of dispatched functions is declared here once: networkx's documentation, the backend
object (interface.py) and should_run all read it. This module imports nothing of polyfw's
kernels, so that `import networkx` stays as fast with polyfw installed as without.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Dispatched:
    """One networkx function polyfw runs: what runs (networkx shows it in the function's docs), and
    for should_run, networkx's own seconds and how many entries the result holds for a graph of
    n nodes and a arcs (both directions of an undirected edge), and polyfw's time per call
    beyond that (solve's choices, or one kernel's launch)."""

    runs: str
    networkx_seconds: Callable[[int, int], float]
    result_entries: Callable[[int, int], float]
    call_seconds: float = 1.0e-4


#: a call through polyfw.solve (its dtype, method and schedule chosen each time; issue 38's to shrink)
SOLVE_CALL_SECONDS = 2.0e-3


def _cubic(per_step: float) -> Callable[[int, int], float]:
    return lambda n, a: per_step * n**3


def _searches(per_arc: float, sources: Callable[[int], int]) -> Callable[[int, int], float]:
    return lambda n, a: per_arc * sources(n) * (n + a)


def _all(n: int) -> int:
    return n


def _one(n: int) -> int:
    return 1


def _square(n: int, a: int) -> float:
    return float(n * n)


def _row(n: int, a: int) -> float:
    return float(n)


#: networkx's own time per step and polyfw's per call (seconds, 2-core AMD EPYC Zen 3; what matters is
#: their ratio to the conversion's cost in interface.py): benchmarks/networkx_backend.py --calibrate
DISPATCHED: dict[str, Dispatched] = {
    "floyd_warshall": Dispatched(
        "polyfw.solve: a proved tiled Floyd-Warshall schedule (or Johnson's on a sparse graph) in the "
        "narrowest exact dtype; a negative cycle raises NetworkXUnbounded.", _cubic(1.3e-7), _square, SOLVE_CALL_SECONDS),
    "floyd_warshall_numpy": Dispatched(
        "polyfw.solve: a proved tiled Floyd-Warshall schedule (or Johnson's on a sparse graph) in the "
        "narrowest exact dtype; a negative cycle raises NetworkXUnbounded.", _cubic(1.3e-9), lambda n, a: 1.0,
        SOLVE_CALL_SECONDS),
    "floyd_warshall_predecessor_and_distance": Dispatched(
        "polyfw.solve with predecessors; of equally short paths the predecessor may be another than "
        "networkx's. A negative cycle raises NetworkXUnbounded.", _cubic(1.4e-7), lambda n, a: 2.0 * n * n,
        SOLVE_CALL_SECONDS),
    "all_pairs_shortest_path_length": Dispatched(
        "A breadth-first search from every node, in parallel over the sources.",
        _searches(3.6e-8, _all), _square),
    "all_pairs_dijkstra_path_length": Dispatched(
        "Dijkstra from every node, in parallel over the sources (negative weights: Johnson's "
        "reweighting first, exact).", _searches(2.8e-7, _all), _square),
    "all_pairs_bellman_ford_path_length": Dispatched(
        "Johnson's algorithm: Bellman-Ford potentials, then Dijkstra from every node in parallel.",
        _searches(8.8e-7, _all), _square),
    "johnson": Dispatched(
        "Bellman-Ford potentials, then Dijkstra from every node in parallel; the paths are read off "
        "the search trees.", _searches(1.0e-6, _all), lambda n, a: 4.0 * n * n),
    "single_source_dijkstra_path_length": Dispatched(
        "Dijkstra (delta-stepping, parallel within each bucket, on large graphs); negative weights: "
        "Bellman-Ford, exact.",
        _searches(2.8e-7, _one), _row),
    "single_source_shortest_path_length": Dispatched(
        "A breadth-first search compiled with Numba, in networkx's order.", _searches(4.0e-8, _one), _row),
    "bfs_layers": Dispatched(
        "A breadth-first search compiled with Numba, in networkx's order.", _searches(9.0e-8, _one), _row),
    "bfs_edges": Dispatched(
        "A breadth-first search compiled with Numba, in networkx's order (sort_neighbors is called "
        "once per node).", _searches(9.0e-8, _one), _row),
    "transitive_closure": Dispatched(
        "Reachability by polyfw.solve in the or-and semiring (a proved Floyd-Warshall schedule on "
        "booleans), then the new edges added to a copy of the graph.", _searches(3.0e-7, _all), _square,
        SOLVE_CALL_SECONDS),
    "has_path": Dispatched(
        "A breadth-first search compiled with Numba.", _searches(4.0e-8, _one), lambda n, a: 1.0),
}


def backend_info() -> dict:
    """networkx's description of the backend (read at `import networkx`)."""
    return {
        "backend_name": "polyfw",
        "project": "polyfw",
        "package": "polyfw",
        "short_summary": "Proved tiled Floyd-Warshall schedules and parallel sparse shortest paths, compiled "
                         "with Numba.",
        "functions": {name: {"additional_docs": dispatched.runs} for name, dispatched in DISPATCHED.items()},
    }
