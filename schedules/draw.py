"""A picture of a schedule's block order: in which stage each block receives each layer."""
from __future__ import annotations

import numpy as np

from .stages import StageView


def stage_grid(view: StageView, blocks: int) -> np.ndarray:
    """grid[kb, ib, jb] = the stage in which block (ib, jb) receives block layer kb."""
    grid = np.full((blocks, blocks, blocks), -1, dtype=np.int64)
    grid[view.units[:, 0], view.units[:, 1], view.units[:, 2]] = view.stage
    return grid


def draw_block_order(view: StageView, blocks: int, title: str, path: str) -> None:
    """One panel per block layer; each block is coloured and labelled with its stage."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = stage_grid(view, blocks)
    columns = min(blocks, 4)
    rows = -(-blocks // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 3.2 * rows), squeeze=False)
    for kb in range(rows * columns):
        axis = axes[kb // columns][kb % columns]
        axis.set_axis_off()
        if kb >= blocks:
            continue
        axis.imshow(grid[kb], cmap="viridis", vmin=0, vmax=max(view.n_stages - 1, 1))
        axis.set_title(f"block layer {kb}")
        for ib in range(blocks):
            for jb in range(blocks):
                axis.text(jb, ib, str(grid[kb, ib, jb]), ha="center", va="center", color="white", fontsize=8)
    figure.suptitle(f"{title}: stage of each block, per block layer ({view.n_stages} stages)")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
