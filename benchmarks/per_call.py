"""Per-call cost of polyfw.solve on a small graph through every input a user passes (a dense array with
inf, scipy CSR, CSC and COO matrices, a networkx DiGraph), each beside the fastest peer call on the same
input: scipy's shortest_path with every method (FW, D, J, BF and auto, the fastest one kept) and, on a
networkx graph, networkx's own floyd_warshall_numpy and scipy after networkx's conversion. All calls
interleaved; medians of many calls. Not a test.

    OMP_WAIT_POLICY=passive .venv/bin/python benchmarks/per_call.py [--n 20] [--calls 300] [--json FILE]

Run it on two trees alternately to compare them (PYTHONPATH=OLD_TREE).
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.sparse.csgraph import shortest_path  # noqa: E402

import polyfw  # noqa: E402
from codegen.register_blocks import cpu_description  # noqa: E402
from interleaved import taking_turns  # noqa: E402  (benchmarks/interleaved.py)
from record import print_and_record  # noqa: E402  (benchmarks/record.py)

#: scipy's methods; its fastest call on an input is the best of them
SCIPY_METHODS = ("FW", "D", "J", "BF", "auto")
#: the issue's bound: a door's median over the fastest peer's on the same input
TARGET = 1.0


def doors(n: int) -> dict[str, object]:
    """The same random digraph (20% arcs, integer weights 1-8) as every input kind."""
    rng = np.random.default_rng(0)
    arcs = rng.random((n, n)) < 0.2
    np.fill_diagonal(arcs, False)
    weights = np.where(arcs, rng.integers(1, 9, (n, n)), 0).astype(np.float64)
    csr = sp.csr_array(weights)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_weighted_edges_from((int(i), int(j), float(weights[i, j])) for i, j in zip(*np.nonzero(arcs)))
    return {"dense": np.where(arcs, weights, np.inf), "csr": csr, "csc": sp.csc_array(csr), "coo": sp.coo_array(csr),
            "networkx": graph}


def peer_calls(door: str, graph) -> dict[str, object]:
    """The peers' calls on this input (scipy reads a dense array's inf as no arc, as polyfw does)."""
    if door == "networkx":
        return {"networkx floyd_warshall_numpy": lambda: nx.floyd_warshall_numpy(graph),
                "scipy shortest_path(to_scipy_sparse_array)":
                    lambda: shortest_path(nx.to_scipy_sparse_array(graph), method="D")}
    return {f"scipy shortest_path(method={method!r})": (lambda method=method: shortest_path(graph, method=method))
            for method in SCIPY_METHODS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    cpu = cpu_description()
    print(f"CPU: {cpu['model']} ({cpu['isa']}); n = {args.n}; medians of {args.calls} interleaved calls")
    rows = []
    for door, graph in doors(args.n).items():
        calls = {"polyfw solve": lambda graph=graph: polyfw.solve(graph)}
        for name, call in peer_calls(door, graph).items():
            try:
                call()
            except (ValueError, TypeError) as refused:  # e.g. scipy's FW does not read COO
                print(f"  {door}: {name} refuses this input ({refused}): left out")
                continue
            calls[name] = call
        expected = np.asarray(shortest_path(nx.to_scipy_sparse_array(graph) if door == "networkx"
                                            else sp.csr_array(graph), method="FW"))
        for _ in range(20):  # compile, and warm every cache
            for call in calls.values():
                call()
        if not np.array_equal(np.asarray(polyfw.solve(graph)), expected):
            raise SystemExit(f"{door}: polyfw's distances differ from scipy's")
        found = {name: seconds * 1e6 for name, seconds in taking_turns(calls, args.calls).items()}
        fastest = min((name for name in found if name != "polyfw solve"), key=found.get)
        ratio = found["polyfw solve"] / found[fastest]
        rows.append({"door": door, "polyfw_us": found["polyfw solve"], "fastest_peer": fastest,
                     "peer_us": found[fastest], "ratio": ratio, "every": found})
        print(f"  {door:9s} polyfw {found['polyfw solve']:7.0f} us; fastest peer {fastest} {found[fastest]:7.0f} us: "
              f"{ratio:.2f}x ({'met' if ratio <= TARGET else 'missed'} <= {TARGET}x)", flush=True)
    print_and_record("per_call", f"per-call cost, n = {args.n}",
                     ["input", "polyfw solve µs", "fastest peer on the same input", "its µs", "polyfw / peer"],
                     [[row["door"], round(row["polyfw_us"]), row["fastest_peer"], round(row["peer_us"]),
                       round(row["ratio"], 2)] for row in rows], note=f"medians of {args.calls} interleaved calls")
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": cpu, "n": args.n, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
