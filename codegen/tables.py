"""The task tables every generated driver records a stage into.

A driver walks its AST, writing each tile-layer it meets as a row
(kernel, kb, ib, jb) of the calls table and the index of each task's first
call into the tasks table, then hands both to the target's stage runner.
Drivers of large trees are compiled (so is `put`); small ones run as Python
with `put.py_func`, which saves the compile.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

#: the driver's own list of the two tables
TABLES = types.List(types.int64[:, ::1])


@njit(types.void(TABLES, *[types.int64] * 6), cache=True)
def put(tables, which, count, first, second, third, fourth):
    """Write row `count` of tables[which], an int64 table that doubles when full."""
    rows = tables[which]
    if count == rows.shape[0]:
        grown = np.empty((2 * count, 4), dtype=np.int64)
        grown[:count] = rows
        tables[which] = grown
        rows = grown
    rows[count, 0] = first
    rows[count, 1] = second
    rows[count, 2] = third
    rows[count, 3] = fourth


#: the lines a driver starts with
TABLES_INIT = ["# calls: (kernel, kb, ib, jb) of one stage; tasks: index of each task's first call",
               "tables = [np.empty((64, 4), dtype=np.int64), np.empty((64, 4), dtype=np.int64)]",
               "n_calls = 0", "n_tasks = 0"]
