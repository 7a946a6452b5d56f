"""networkx's own functions against the same calls with backend="polyfw", converting the graph
included (networkx's conversion cache is emptied before every polyfw call). Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/networkx_backend.py [--repeats 3] [--calibrate]

Rounds interleave networkx and polyfw (the shared host drifts); every polyfw answer is checked
equal to networkx's first. Issue 37's targets: floyd_warshall_numpy on a 1,500-vertex weighted
graph >= 20x networkx, all_pairs_dijkstra_path_length on the road network (Minnesota, 2,642
vertices) >= 10x. --calibrate measures the per-step costs should_run weighs (info.DISPATCHED and
interface.py's constants).
"""
from __future__ import annotations

import argparse
import os
import time
from statistics import median
from typing import Callable

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402

from codegen.register_blocks import cpu_description  # noqa: E402
from polyfw.graphs import minnesota_road_graph  # noqa: E402
from polyfw.networkx_backend.graph import convert_from_nx  # noqa: E402
from record import Table, print_and_record  # noqa: E402  (benchmarks/record.py)

nx.config.warnings_to_ignore.add("cache")


def weighted_digraph(n: int, p: float, seed: int = 1) -> nx.DiGraph:
    """A G(n, p) digraph with integer weights 1..100."""
    graph = nx.gnp_random_graph(n, p, seed=seed, directed=True)
    rng = np.random.default_rng(seed)
    for (u, v), w in zip(graph.edges, rng.integers(1, 101, graph.number_of_edges()).tolist()):
        graph[u][v]["weight"] = w
    return graph


def road_graph() -> nx.Graph:
    edges = minnesota_road_graph()
    graph = nx.Graph()
    graph.add_nodes_from(range(edges.n))
    graph.add_weighted_edges_from(zip(edges.source.tolist(), edges.target.tolist(), edges.weight.astype(int).tolist()))
    return graph


def _uncached(graph: nx.Graph, call: Callable[[], object]) -> Callable[[], object]:
    def run():
        graph.__networkx_cache__.clear()  # the conversion is part of every polyfw call timed
        return call()
    return run


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def side_by_side(table: Table, label: str, graph: nx.Graph, networkx: Callable[[], object],
                 polyfw: Callable[[], object], equal: Callable[[object, object], bool], repeats: int) -> None:
    expected = networkx()
    assert equal(_uncached(graph, polyfw)(), expected), f"{label}: polyfw's answer differs from networkx's"
    times = {"networkx": [], "polyfw": []}
    for _ in range(repeats):
        times["networkx"].append(_timed(networkx))
        times["polyfw"].append(_timed(_uncached(graph, polyfw)))
    theirs, ours = median(times["networkx"]), median(times["polyfw"])
    n = len(graph)
    table.add(label, n, graph.number_of_edges(), round(theirs, 3), round(ours, 4), round(theirs / ours, 1),
              round(n**3 / ours / 1e9, 2))


def _same_rows(ours, theirs) -> bool:
    return dict(ours) == dict(theirs)


def targets(repeats: int) -> None:
    print(f"CPU: {cpu_description()}")
    table = Table("networkx_backend", "networkx against backend='polyfw'",
                  ["call", "nodes", "edges", "networkx s", "polyfw s", "speed-up", "polyfw n^3/s (G)"],
                  note=f"{repeats} interleaved rounds, median seconds; conversion included")
    for p in (0.01, 0.1):
        graph = weighted_digraph(1500, p)
        side_by_side(table, f"floyd_warshall_numpy, G(n, {p}) digraph, weights 1-100", graph,
                     lambda: nx.floyd_warshall_numpy(graph), lambda: nx.floyd_warshall_numpy(graph, backend="polyfw"),
                     np.array_equal, repeats)
    road = road_graph()
    side_by_side(table, "all_pairs_dijkstra_path_length, Minnesota roads (metres)", road,
                 lambda: dict(nx.all_pairs_dijkstra_path_length(road)),
                 lambda: dict(nx.all_pairs_dijkstra_path_length(road, backend="polyfw")), _same_rows, repeats)
    side_by_side(table, "floyd_warshall_numpy, Minnesota roads (metres)", road,
                 lambda: nx.floyd_warshall_numpy(road), lambda: nx.floyd_warshall_numpy(road, backend="polyfw"),
                 np.array_equal, repeats)
    small = weighted_digraph(20, 0.2)
    calls = 200
    side_by_side(table, f"floyd_warshall_numpy x {calls}, a 20-node digraph", small,
                 lambda: [nx.floyd_warshall_numpy(small) for _ in range(calls)],
                 lambda: [nx.floyd_warshall_numpy(small, backend="polyfw") for _ in range(calls)],
                 lambda a, b: all(map(np.array_equal, a, b)), max(repeats, 5))
    table.record()


def calibrate() -> None:
    """networkx's seconds per step of each kind should_run models, and polyfw's conversion per arc."""
    graph = weighted_digraph(300, 0.05)
    n, arcs = len(graph), graph.number_of_edges()
    steps = {
        "floyd_warshall_numpy, per n^3": (lambda: nx.floyd_warshall_numpy(graph), n**3),
        "floyd_warshall (dicts), per n^3": (lambda: nx.floyd_warshall(weighted_digraph(120, 0.05)), 120**3),
        "all_pairs_dijkstra_path_length, per n(n + arcs)":
            (lambda: dict(nx.all_pairs_dijkstra_path_length(graph)), n * (n + arcs)),
        "all_pairs_bellman_ford_path_length, per n(n + arcs)":
            (lambda: dict(nx.all_pairs_bellman_ford_path_length(graph)), n * (n + arcs)),
        "all_pairs_shortest_path_length, per n(n + arcs)":
            (lambda: dict(nx.all_pairs_shortest_path_length(graph)), n * (n + arcs)),
        "list(bfs_edges), per n + arcs": (lambda: [list(nx.bfs_edges(graph, v)) for v in range(50)], 50 * (n + arcs)),
        "polyfw's conversion, per n + arcs":
            (lambda: convert_from_nx(graph, edge_attrs={"weight": 1}), n + arcs),
        "polyfw's call (20 nodes, warm), per call":
            (lambda: nx.floyd_warshall_numpy(weighted_digraph(20, 0.2), backend="polyfw"), 1),
    }
    print(f"CPU: {cpu_description()}")
    rows = []
    for label, (call, count) in steps.items():
        call()
        rows.append([label, float(f"{median(_timed(call) for _ in range(3)) / count:.3g}")])
    print_and_record("networkx_backend", "the costs should_run weighs", ["step", "seconds"], rows,
                     note="median of 3 after one untimed call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calibrate", action="store_true", help="measure the costs should_run weighs instead")
    arguments = parser.parse_args()
    calibrate() if arguments.calibrate else targets(arguments.repeats)


if __name__ == "__main__":
    main()
