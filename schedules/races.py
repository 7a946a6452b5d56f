"""Reads that race with writes of another task of the same stage.

The relaxed model allows them (a newer value is still a valid walk length),
but a reader of a (distance, predecessor) pair could see one element's new
distance with its old predecessor. Blocks over-approximate elements, so a
schedule found free of such reads is race-free for predecessors.
"""
from __future__ import annotations

import numpy as np

from .stages import StageView


def racing_reads(view: StageView) -> int:
    """How many tile-layer reads hit a block that another task of the same stage writes."""
    if not len(view.units):
        return 0
    blocks = int(view.units.max()) + 1
    kb, ib, jb = (view.units[:, c].astype(np.int64) for c in range(3))
    stage, task = view.stage.astype(np.int64), view.task.astype(np.int64)

    def key(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return (stage * blocks + i) * blocks + j

    written, first = np.unique(key(ib, jb), return_index=True)
    writer = task[first]  # one writing task per (stage, block): the W condition of legality
    racing = 0
    for read in (key(ib, kb), key(kb, jb)):
        at = np.clip(np.searchsorted(written, read), 0, len(written) - 1)
        racing += int(np.count_nonzero((written[at] == read) & (writer[at] != task)))
    return racing
