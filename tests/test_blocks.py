"""The share of DD tile-layers a sparse graph leaves to run is what blocked FW runs: counted against a
blocked FW in numpy that looks at its blocks' entries before each tile-layer, as the product kernel does."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from polyfw.graphs.blocks import tile_layers_run


def _layers_run(matrix: np.ndarray, tile: int) -> tuple[float, float]:
    """Blocked FW, counting the panel and DD tile-layers whose operand blocks both hold a finite entry
    (the shares of each that run)."""
    d = matrix.copy()
    n, run, total, panels_run, panel_total = d.shape[0], 0, 0, 0, 0
    blocks = [slice(b, min(b + tile, n)) for b in range(0, n, tile)]
    for k, K in enumerate(blocks):
        panels = np.zeros((n, n), dtype=bool)
        panels[K, :] = panels[:, K] = True
        for pivot in range(K.start, K.stop):  # the pivot block, then its row and column panels
            np.minimum(d, d[:, pivot:pivot + 1] + d[pivot:pivot + 1, :], out=d, where=panels)
        for b, B in enumerate(blocks):
            if b != k:
                panel_total += 2
                panels_run += int(np.isfinite(d[K, B]).any()) + int(np.isfinite(d[B, K]).any())
        for i, I in enumerate(blocks):
            for j, J in enumerate(blocks):
                if k in (i, j):
                    continue
                total += 1
                if np.isfinite(d[I, K]).any() and np.isfinite(d[K, J]).any():
                    run += 1
                    for pivot in range(K.start, K.stop):
                        d[I, J] = np.minimum(d[I, J], d[I, pivot:pivot + 1] + d[pivot:pivot + 1, J])
    return panels_run / panel_total, run / total


@settings(max_examples=30, deadline=None)
@given(st.integers(6, 70), st.integers(1, 9), st.floats(0.0, 0.25), st.integers(0, 2**31))
def test_the_share_is_what_blocked_fw_runs(n, tile, density, seed):
    arcs = np.random.default_rng(seed).random((n, n)) < density
    expected = {}
    for kind, present in (("undirected", arcs | arcs.T), ("directed", arcs)):
        matrix = np.full((n, n), np.inf)
        matrix[present] = 1.0
        np.fill_diagonal(matrix, 0.0)
        expected[kind] = (1.0, 1.0) if -(-n // tile) < 3 else _layers_run(matrix, tile)
    source, target = np.nonzero(arcs)
    run = tile_layers_run(n, source, target, tile)
    # an arc's reverse is read in: exact for the undirected graph, an upper bound for the directed one
    assert (run.panels, run.dd) == expected["undirected"]
    assert run.panels >= expected["directed"][0] and run.dd >= expected["directed"][1]


def test_two_components_run_only_their_own_blocks():
    # two undirected paths of 8 vertices, tiles of 4: a block of one never reaches the other's
    path = [(v, v + 1) for v in range(7)] + [(v + 8, v + 9) for v in range(7)]
    source = np.array([s for s, t in path] + [t for s, t in path])
    target = np.array([t for s, t in path] + [s for s, t in path])
    # pivot 0 runs (1, 0, 1), pivot 1 runs (0, 1, 0), the same in the other path: 4 of 4 x 3 x 3
    run = tile_layers_run(16, source, target, 4)
    assert run.dd == 4 / 36 and run.panels == 4 / 12  # and one panel a side at each pivot: 8 of 2 x 4 x 3
