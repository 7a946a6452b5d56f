"""What users call: solve, the scipy drop-ins, compare, the CLI and the tuning table.

The application layer sits above the generators: tiling <- schedules <- codegen <- polyfw.
Its rooms: solver (solve; with configuration: which schedule, method: dense or sparse),
scipy_api, comparison, distributed (MPI); graphs (inputs, formats, datasets), explore (the
search), machine (tuning table, ceiling, info), cli, sparse (the CSR kernels), networkx_backend
(polyfw as a networkx backend).
The scipy drop-ins (floyd_warshall, shortest_path, dijkstra, bellman_ford, johnson) take
scipy.sparse.csgraph's arguments; polyfw.sparse keeps the CSR kernels under their own names
(polyfw.sparse.johnson is the all-pairs kernel on a CSR graph, not the drop-in).

Names are imported on first use: `import networkx` loads polyfw's backend description, and
that must not pay for isl, Numba and the generators (about 1.5 s) before anything is solved.
"""
from __future__ import annotations

import importlib

#: each public name and the module that defines it
_PUBLIC = {
    "IllegalScheduleError": "schedules.legality",
    "RefusedScheduleError": "schedules.proofs",
    "NegativeCycleError": "polyfw.errors",
    "compare": "polyfw.comparison",
    "solve": "polyfw.solver",
    "solve_batch": "polyfw.batch",
    "NegativeCycleInBatch": "polyfw.batch",
    "tuning_table": "polyfw.machine.tuning",
    **{name: "polyfw.scipy_api" for name in ("bellman_ford", "dijkstra", "floyd_warshall", "johnson",
                                             "shortest_path")},
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    """A public name from its module, or a subpackage (polyfw.sparse, ...) imported on first use."""
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
    else:
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as missing:
            if missing.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'polyfw' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
