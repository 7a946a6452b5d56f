"""A run's profile: roles told apart as the tree declares them, parts that add up, and the pivot
closure (blocked inside its tile) exact."""
import islpy as isl
import numpy as np
import pytest

import schedules
from codegen import floyd_warshall_naive, generate
from codegen.cpu import _compile_kernels
from codegen.kernels import CLOSURE_BLOCK, PROFILE_SLOTS, KernelOptions
from codegen.profile import PARTS, relaxations_by_role, run_profile
from polyfw import solve
from polyfw.profiling import profiled
from schedules.tree import ROLE_CONDITIONS


def test_tile_role_is_the_tree_role_conditions():
    kernels = _compile_kernels(KernelOptions(dtype="float32"))[0]
    for role, condition in ROLE_CONDITIONS.items():
        tiles = isl.Set(f"{{ [kb, ib, jb] : 0 <= kb, ib, jb < 3 and {condition} }}")
        points = []
        tiles.foreach_point(lambda p: points.append([p.get_coordinate_val(isl.dim_type.set, d).to_python()
                                                     for d in range(3)]))
        assert points and all(PROFILE_SLOTS[kernels.tile_role.py_func(*p)] == role for p in points)


def test_relaxations_by_role_count_every_point_once():
    for n, tile in ((1, 4), (10, 4), (128, 32), (300, 128)):
        counts = relaxations_by_role(n, tile)
        assert sum(counts.values()) == n**3
        assert counts["SD_row"] == counts["SD_col"]


@pytest.mark.parametrize("side", [1, CLOSURE_BLOCK - 1, CLOSURE_BLOCK + 1, 2 * CLOSURE_BLOCK, 100])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_the_pivot_closure_is_the_nest_order_closure(side, dtype):
    """relax_closure blocks the pivot tile by CLOSURE_BLOCK: exact for any side, with negative
    edges (reweighted by potentials, so no negative cycle), inside a larger padded matrix."""
    rng = np.random.default_rng(side)
    potential = rng.integers(0, 30, size=side)
    block = (rng.integers(0, 40, size=(side, side)) + potential[:, None] - potential[None, :]).astype(dtype)
    np.fill_diagonal(block, 0)
    matrix = np.full((side + 5, side + 21), 777, dtype=dtype)
    matrix[2:2 + side, 2:2 + side] = block
    want = block.copy()
    floyd_warshall_naive(want)
    kernels = _compile_kernels(KernelOptions(dtype=dtype))[0]
    status = np.full(1, -1, dtype=np.int64)
    kernels.relax_closure(matrix, 2, 2 + side, 2, 2 + side, 2, 2 + side, status)
    np.testing.assert_array_equal(matrix[2:2 + side, 2:2 + side], want)
    assert status[0] == -1 and (matrix[:2] == 777).all() and (matrix[:, 2 + side:] == 777).all()


def test_the_pivot_closure_reports_the_first_negative_pivot():
    side = 3 * CLOSURE_BLOCK
    matrix = np.full((side, side), 50, dtype=np.int32)
    np.fill_diagonal(matrix, 0)
    matrix[70, 40], matrix[40, 70] = -60, 5  # 40 -> 70 -> 40 weighs -55
    want = matrix.copy()
    want_status = np.full(1, -1, dtype=np.int64)
    kernels = _compile_kernels(KernelOptions(dtype="int32"))[0]
    kernels.relax_layers(want, 0, side, 0, side, 0, side, want_status)
    status = np.full(1, -1, dtype=np.int64)
    kernels.relax_closure(matrix, 0, side, 0, side, 0, side, status)
    assert status[0] == want_status[0] == 70  # a[70, 70] < 0 once layer 40 has run


def test_a_run_profile_adds_up_to_the_run():
    n = 200
    compiled = generate(schedules.build("classic", n, tile=64), dtype="float32")
    rng = np.random.default_rng(0)
    a = rng.integers(1, 100, size=(n, n)).astype(np.float32)
    want = a.copy()
    floyd_warshall_naive(want)
    compiled(a)
    np.testing.assert_array_equal(a, want)
    profile = run_profile(compiled.last_run)
    assert tuple(profile.parts) == PARTS
    assert sum(profile.parts.values()) == pytest.approx(profile.seconds, rel=1e-9)
    for role in ("I", "SD_row", "SD_col", "DD"):
        assert 0 < profile.parts[role] < profile.seconds
    assert "DD" in profile.table()


def test_a_point_level_run_is_not_profiled():
    compiled = generate(schedules.build("naive", 6), dtype="float32")
    compiled(np.zeros((6, 6), dtype=np.float32))
    with pytest.raises(ValueError, match="only tile-level CPU runs"):
        run_profile(compiled.last_run)


def test_a_solve_profile_adds_up_to_the_call():
    rng = np.random.default_rng(1)
    graph = rng.integers(1, 50, size=(150, 150)).astype(np.float64)
    with profiled() as profile:
        distances = solve(graph, schedule="classic", tile=64, dtype="int32")
    assert distances.dtype == np.int32
    parts = profile.parts()
    assert {"input", "plan", "run: DD", "run: I", "output"} <= set(parts)
    assert sum(parts.values()) == pytest.approx(profile.seconds, rel=1e-9)
    assert all(seconds >= 0 for name, seconds in parts.items() if name not in ("run: waiting in stages", "other"))
    assert "solve" in profile.table(150**3)
