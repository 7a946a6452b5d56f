"""What users call: solve, the scipy drop-ins, compare, the CLI and the tuning table.

The application layer sits above the generators: tiling <- schedules <- codegen <- polyfw.
Its rooms: solve (with configuration: which schedule, method: dense or sparse), scipy_api,
compare, distributed (MPI); graphs (inputs, formats, datasets), explore (the search),
machine (tuning table, ceiling, info), cli, sparse (the CSR kernels).
The scipy drop-ins (floyd_warshall, shortest_path, dijkstra, bellman_ford, johnson) take
scipy.sparse.csgraph's arguments; polyfw.sparse keeps the CSR kernels under their own names
(polyfw.sparse.johnson is the all-pairs kernel on a CSR graph, not the drop-in).
"""
from schedules.legality import IllegalScheduleError
from schedules.proofs import RefusedScheduleError

from .compare import compare
from .scipy_api import bellman_ford, dijkstra, floyd_warshall, johnson, shortest_path
from .machine.tuning import tuning_table
from .solve import NegativeCycleError, solve

__all__ = ["IllegalScheduleError", "NegativeCycleError", "RefusedScheduleError", "bellman_ford", "compare", "dijkstra", "floyd_warshall", "johnson",
           "shortest_path", "solve", "tuning_table"]
