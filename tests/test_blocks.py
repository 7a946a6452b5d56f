"""The share of DD tile-layers a sparse graph leaves to run is what blocked FW runs: counted against a
blocked FW in numpy that looks at its blocks' entries before each tile-layer, as the product kernel does."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from polyfw.graphs.blocks import product_share


def _layers_run(matrix: np.ndarray, tile: int) -> float:
    """Blocked FW, counting the DD tile-layers whose operand blocks both hold a finite entry."""
    d = matrix.copy()
    n, run, total = d.shape[0], 0, 0
    blocks = [slice(b, min(b + tile, n)) for b in range(0, n, tile)]
    for k, K in enumerate(blocks):
        panels = np.zeros((n, n), dtype=bool)
        panels[K, :] = panels[:, K] = True
        for pivot in range(K.start, K.stop):  # the pivot block, then its row and column panels
            np.minimum(d, d[:, pivot:pivot + 1] + d[pivot:pivot + 1, :], out=d, where=panels)
        for i, I in enumerate(blocks):
            for j, J in enumerate(blocks):
                if k in (i, j):
                    continue
                total += 1
                if np.isfinite(d[I, K]).any() and np.isfinite(d[K, J]).any():
                    run += 1
                    for pivot in range(K.start, K.stop):
                        d[I, J] = np.minimum(d[I, J], d[I, pivot:pivot + 1] + d[pivot:pivot + 1, J])
    return run / total


@settings(max_examples=30, deadline=None)
@given(st.integers(6, 70), st.integers(1, 9), st.floats(0.0, 0.25), st.integers(0, 2**31))
def test_the_share_is_what_blocked_fw_runs(n, tile, density, seed):
    source, target = np.nonzero(np.random.default_rng(seed).random((n, n)) < density)
    matrix = np.full((n, n), np.inf)
    matrix[source, target] = 1.0
    np.fill_diagonal(matrix, 0.0)
    expected = 1.0 if -(-n // tile) < 3 else _layers_run(matrix, tile)
    assert product_share(n, source, target, tile) == expected


def test_two_components_run_only_their_own_blocks():
    # two undirected paths of 8 vertices, tiles of 4: a block of one never reaches the other's
    path = [(v, v + 1) for v in range(7)] + [(v + 8, v + 9) for v in range(7)]
    source = np.array([s for s, t in path] + [t for s, t in path])
    target = np.array([t for s, t in path] + [s for s, t in path])
    # pivot 0 runs (1, 0, 1), pivot 1 runs (0, 1, 0), the same in the other path: 4 of 4 x 3 x 3
    assert product_share(16, source, target, 4) == 4 / 36
