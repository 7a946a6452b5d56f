"""Run under `mpiexec -n P` by tests/test_mpi.py (not collected by pytest).

Every case is collective; rank 0 checks the result exactly against scipy
and prints one JSON line per case. `python mpi_cases.py exact` runs the
correctness cases, `counts` compares the runtime's messages and bytes with
the plan's, `disconnected` the skip-INF case.
"""
from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("POLYFW_REGISTER_BLOCK", "default")
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402
from scipy.sparse.csgraph import csgraph_from_dense, floyd_warshall  # noqa: E402

from codegen import generate  # noqa: E402
from codegen.mpi import world  # noqa: E402
from polyfw.distributed import solve_distributed  # noqa: E402
from schedules.distribute import grid_for  # noqa: E402
from schedules.families import build  # noqa: E402
from tiling.semirings import INT32_INF  # noqa: E402
from polyfw.graphs import as_dense, random_graph  # noqa: E402

COMM = world()
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()


def report(**fields) -> None:
    if RANK == 0:
        print(json.dumps(fields), flush=True)


def reference(graph, dtype: str) -> np.ndarray:
    """scipy's distances (a dense input to scipy drops 0-weight edges: its graph is built with INF as
    the only non-edge)."""
    found = floyd_warshall(csgraph_from_dense(as_dense(graph, dtype="float64"), null_value=np.inf))
    if dtype == "int32":
        return np.where(np.isinf(found), INT32_INF, found).astype(np.int32)
    return found.astype(dtype)


def exact_cases() -> None:
    families = [("classic", {}, 70, 16), ("generalized", {"kappa": 2}, 61, 8), ("recursive", {}, 50, 8)]
    dtypes = ("float32", "float64", "int32")
    for number, (family, params, n, tile) in enumerate(families):
        # every dtype on the grids with messages both ways or non-square; one a family on 1 and 2
        for dtype in dtypes if SIZE > 2 else dtypes[number:number + 1]:
            for lookahead in (True, False):
                graph = random_graph(n, 3 * n, weights=(0, 40), potential=12, seed=n + SIZE)
                schedule = f"{family}" + "".join(f":{k}={v}" for k, v in params.items())
                found = solve_distributed(graph if RANK == 0 else None, schedule=schedule, tile=tile, dtype=dtype,
                                          lookahead=lookahead)
                exact = bool(np.array_equal(found.distances, reference(graph, dtype))) if RANK == 0 else None
                report(case="exact", schedule=found.schedule, dtype=dtype, lookahead=lookahead, grid=found.grid,
                       exact=exact)
    graph = random_graph(33, 120, weights=(1, 9), seed=2)  # the last block one wide
    found = solve_distributed(graph if RANK == 0 else None, schedule=build("recursive", 33, base=8, paired=False))
    report(case="one-wide", exact=bool(np.array_equal(found.distances, reference(graph, "float64")))
           if RANK == 0 else None)
    graph = random_graph(45, 150, seed=4)
    if SIZE > 1:  # strips: P x 1, seed 003's row partition
        found = solve_distributed(graph if RANK == 0 else None, schedule="classic", tile=8, dtype="float64",
                                  placement="strips")
        report(case="strips", grid=found.grid,
               exact=bool(np.array_equal(found.distances, reference(graph, "float64"))) if RANK == 0 else None)
    # tile 8: every tile-layer in the nest's order; tile 64 on 150 vertices: products that keep predecessors
    # in register blocks, with rows and columns left over
    for case, graph, tile in (("predecessors", graph, 8), ("predecessor products", random_graph(150, 900, seed=5), 64)):
        found = solve_distributed(graph if RANK == 0 else None, schedule="classic", tile=tile, predecessors=True)
        if RANK == 0:
            from polyfw import solve

            _, pred = solve(graph, schedule="classic", tile=tile, predecessors=True)
            report(case=case, exact=bool(np.array_equal(found.distances, reference(graph, "float64"))
                                         and np.array_equal(found.predecessors, pred)))
        else:
            report()
    one = np.zeros((1, 1))
    found = solve_distributed(one if RANK == 0 else None, schedule="classic", tile=4)
    report(case="n=1", exact=bool(np.array_equal(found.distances, one)) if RANK == 0 else None)


def count_cases() -> None:
    """The runtime's own message and byte counts against the plan's (a graph with every edge:
    no block is skipped)."""
    for family, n, tile, predecessors in (("classic", 75, 16, False), ("generalized", 64, 8, True)):
        schedule = build(family, n, tile, **({"kappa": 2} if family == "generalized" else {}))
        compiled = generate(schedule, target="mpi", dtype="float32", predecessors=predecessors)
        a = pred = None
        if RANK == 0:
            a = np.ascontiguousarray(np.random.default_rng(1).integers(1, 50, (n, n)).astype(np.float32))
            np.fill_diagonal(a, 0)
            pred = np.zeros((n, n), dtype=np.int32)
        compiled(a, pred)
        stats = COMM.gather(compiled.last_run, root=0)
        model = compiled.plan.traffic(4, predecessors)
        if RANK == 0:
            measured = {key: [s[key] for s in stats] for key in ("messages_sent", "messages_received",
                                                                 "bytes_sent", "bytes_received")}
            report(case="counts", schedule=schedule.name, grid=str(compiled.plan.grid), measured=measured,
                   model={key: model[key].tolist() for key in measured})


def components(parts: int, size: int) -> np.ndarray:
    """`parts` random components of `size` vertices, no edge between them (negative edges inside)."""
    matrix = np.full((parts * size, parts * size), np.inf)
    for part in range(parts):
        graph = random_graph(size, 4 * size, weights=(0, 30), potential=10, seed=part)
        matrix[part * size:(part + 1) * size, part * size:(part + 1) * size] = as_dense(graph, dtype="float64")
    return matrix


def disconnected_case() -> None:
    """Components with no edge between them: skip-INF skips most tile-layers and stays exact; when
    the components straddle blocks, rows of a[i,k] with nothing reachable are left out."""
    for parts, size, tile in ((4, 32, 16), (5, 24, 16)):
        matrix = components(parts, size)
        for skip in (True, False):
            found = solve_distributed(matrix if RANK == 0 else None, schedule="classic", tile=tile, dtype="int32",
                                      skip_inf=skip)
            if RANK == 0:
                totals = {key: sum(s[key] for s in found.stats)
                          for key in ("skipped_tile_layers", "tile_layers", "empty_messages_sent", "skipped_rows")}
                report(case="disconnected", aligned=size % tile == 0, skip=skip, **totals,
                       exact=bool(np.array_equal(found.distances, reference(matrix, "int32"))))
            else:
                report()


if __name__ == "__main__":
    assert grid_for(SIZE).size == SIZE
    {"exact": exact_cases, "counts": count_cases, "disconnected": disconnected_case}[sys.argv[1]]()
