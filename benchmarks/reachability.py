"""Reachability (the or-and semiring) one bit a pair, beside polyfw's uint8 path and the Python user's
alternatives, in one run (issue 51, item 3). Not a test.

    OMP_WAIT_POLICY=passive python3 benchmarks/reachability.py [--sizes 2048 4096 8192] [--repeats 3]

Two graphs a size, 4n arcs each:
- a random digraph: about 96% of its vertices in one strongly connected part, so solve's default takes the
  closure over the parts (polyfw.graphs.components) and the answer is mostly ones;
- a random DAG (every arc from a lower to a higher vertex): n parts of one vertex, nothing to condense, so
  the default pays for finding the parts and runs over every vertex.
Rows, each checked equal to the default's result first:
- polyfw's default `solve(adjacency, semiring='or-and')`;
- the same rows over every vertex (`tile=512`: a schedule asked for is run as asked, without the parts);
- polyfw's uint8 path (`dtype='uint8'`): a byte a pair through the register-blocked product;
- a numpy bitset Warshall (rows packed by np.packbits, per k one OR of row k into the rows holding k);
- networkx's transitive_closure (up to --networkx-up-to vertices).
And the factor the issue compares with, on the first graph: polyfw's int32 min-plus `solve` against a numpy
Floyd-Warshall (per k one np.minimum of the matrix and a[:, k] + a[k]) with weights 1-1000.
Times are medians of --repeats whole calls, polyfw's taken in interleaved rounds, each right after a call of
its own (warm caches).
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from statistics import median

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import networkx as nx  # noqa: E402
import numba  # noqa: E402
import numpy as np  # noqa: E402

import polyfw  # noqa: E402
from codegen.intrinsics import host_isa  # noqa: E402
from codegen.packed_kernels import pack_rows, unpack_rows  # noqa: E402
from record import print_and_record  # noqa: E402  (benchmarks/record.py)


def seconds(run, repeats: int) -> float:
    run()
    found = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        found.append(time.perf_counter() - started)
    return median(found)


def interleaved(calls: dict, repeats: int) -> dict[str, float]:
    """Each call's median over `repeats` rounds, every call once a round (the host's speed drifts), each timed
    right after an untimed call of its own: a call of a few ms after one that streamed 100 MB finds the
    caches cold and ran 2x slower (0.83 -> 1.7 ms at n = 2048), whatever its own work."""
    found: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, run in calls.items():
            run()
            started = time.perf_counter()
            run()
            found[name].append(time.perf_counter() - started)
    return {name: median(taken) for name, taken in found.items()}


def random_arcs(n: int, rng, acyclic: bool) -> tuple[np.ndarray, np.ndarray]:
    tails, heads = rng.integers(0, n, 4 * n), rng.integers(0, n, 4 * n)
    return (np.minimum(tails, heads), np.maximum(tails, heads)) if acyclic else (tails, heads)


def numpy_bitset(adjacency: np.ndarray) -> np.ndarray:
    """Warshall on bitsets in numpy: per k, row k ORed into every row whose bit k is set."""
    n = len(adjacency)
    rows = pack_rows(adjacency | np.eye(n, dtype=bool))
    for k in range(n):
        holding = np.flatnonzero((rows[:, k >> 6] >> np.uint64(k & 63)) & np.uint64(1))
        rows[holding] |= rows[k]
    return unpack_rows(rows, n)


def numpy_floyd_warshall(weights: np.ndarray) -> np.ndarray:
    distances = weights.copy()
    for k in range(len(distances)):
        np.minimum(distances, distances[:, k:k + 1] + distances[k], out=distances)
    return distances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096, 8192])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--networkx-up-to", type=int, default=1024)
    args = parser.parse_args()
    print(f"CPU: {platform.processor() or platform.machine()}, {host_isa()}, {numba.get_num_threads()} threads")
    for n in args.sizes:
        rng = np.random.default_rng(n)
        for graph_name, acyclic in (("a random digraph", False), ("a random DAG", True)):
            tails, heads = random_arcs(n, rng, acyclic)
            adjacency = np.zeros((n, n), dtype=bool)
            adjacency[tails, heads] = True
            default = polyfw.solve(adjacency, semiring="or-and")
            tile = min(512, -(-n // 64) * 64)
            calls = {"packed (default)": lambda: polyfw.solve(adjacency, semiring="or-and"),
                     "packed over every vertex": lambda: polyfw.solve(adjacency, semiring="or-and", tile=tile),
                     "uint8": lambda: polyfw.solve(adjacency, semiring="or-and", dtype="uint8")}
            for name in list(calls)[1:]:
                assert np.array_equal(calls[name](), default), name
            rows = interleaved(calls, args.repeats)
            assert np.array_equal(numpy_bitset(adjacency), default)
            rows["numpy bitset Warshall"] = seconds(lambda: numpy_bitset(adjacency), 1)
            if n <= args.networkx_up_to:
                graph = nx.DiGraph(zip(tails.tolist(), heads.tolist()))
                graph.add_nodes_from(range(n))
                rows["networkx transitive_closure"] = seconds(lambda: nx.transitive_closure(graph, reflexive=True),
                                                              1)
            note = f"answers equal; medians of {args.repeats} (numpy and networkx: one)"
            if not acyclic:
                weights = np.full((n, n), np.inf)
                weights[tails, heads] = rng.integers(1, 1001, 4 * n)
                np.fill_diagonal(weights, 0)
                int32 = seconds(lambda: polyfw.solve(weights, dtype="int32"), args.repeats)
                note += f"; int32 min-plus solve {int32:.3f} s"
                if n <= 4096:
                    numpy_fw = seconds(lambda: numpy_floyd_warshall(weights), 1)
                    note += f"; numpy Floyd-Warshall {numpy_fw:.3f} s: int32 is {numpy_fw / int32:.1f}x ahead"
            base = rows["packed (default)"]
            print_and_record("reachability", f"reachability, n = {n}, {graph_name}",
                             ["call", "median ms", "over the default's time"],
                             [[name, round(taken * 1e3, 2), round(taken / base, 1)] for name, taken in rows.items()],
                             note=note)

if __name__ == "__main__":
    main()
