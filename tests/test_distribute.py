"""Placement, distributed plans and the network model (no MPI needed: schedules.distribute, .network)."""
from __future__ import annotations

import numpy as np
import pytest

from schedules.cost import cost
from schedules.distribute import Grid, Network, grid_for, plan_distribution
from schedules.families import build
from schedules.network import layer_model, simulate_plan
from schedules.schedule import from_tree


def test_grid_for_picks_the_squarest_grid_and_strips_are_p_by_one():
    assert [(g.rows, g.cols) for g in map(grid_for, (1, 2, 3, 4, 6, 12))] == [(1, 1), (1, 2), (1, 3), (2, 2), (2, 3),
                                                                             (3, 4)]
    assert (grid_for(5, "strips").rows, grid_for(5, "strips").cols) == (5, 1)


@pytest.mark.parametrize("bad, message", [((0, 2), "two positive ints"), ((2, 2, "rows"), "placement must be"),
                                          ((2, 2, "strips"), "P x 1")])
def test_bad_grids_are_named(bad, message):
    with pytest.raises(ValueError, match=message):
        Grid(*bad)


def test_block_cyclic_and_strip_placements_by_brute_force():
    blocks = 7
    cyclic, strips = Grid(2, 3), Grid(3, 1, "strips")
    for ib in range(blocks):
        for jb in range(blocks):
            assert cyclic.rank(ib, jb, blocks) == (ib % 2) * 3 + jb % 3
    owners = [int(strips.rank(ib, 0, blocks)) for ib in range(blocks)]
    assert owners == sorted(owners) and set(owners) == {0, 1, 2}  # contiguous strips, none empty
    for r in range(6):
        assert list(cyclic.block_rows(r, blocks)) == [b for b in range(blocks) if b % 2 == r // 3]
        assert list(cyclic.block_cols(r, blocks)) == [b for b in range(blocks) if b % 3 == r % 3]


def _check_plan(plan):
    count = len(plan.units)
    blocks = plan.blocks
    assert count == blocks**3
    assert np.array_equal(plan.owner, plan.grid.rank(plan.units[:, 1], plan.units[:, 2], blocks))
    # every operand is produced earlier in the order, by the operand block's own layer kb
    for v in range(count):
        kb, ib, jb = plan.units[v]
        for u, block in zip(plan.operands[v], ((ib, kb), (kb, jb))):
            if u < 0:
                assert tuple(block) == (ib, jb)
            else:
                assert u < v and tuple(plan.units[u]) == (kb, *block)
    # each block's layers in order
    for ib in range(blocks):
        for jb in range(blocks):
            layers = plan.units[(plan.units[:, 1] == ib) & (plan.units[:, 2] == jb), 0]
            assert list(layers) == list(range(blocks))
    # a send for every operand read on another process, and no other
    remote = {(int(u), int(plan.owner[v])) for v in range(count) for u in plan.operands[v]
              if u >= 0 and plan.owner[u] != plan.owner[v]}
    assert {(int(u), int(r)) for u, r, _ in plan.sends} == remote
    assert len(plan.sends) == len(remote)


@pytest.mark.parametrize("family, params", [("classic", {}), ("generalized", {"kappa": 2}),
                                            ("generalized", {"kappa": 3, "variant": "fused"}), ("recursive", {})])
@pytest.mark.parametrize("grid", [Grid(2, 2), Grid(1, 3), Grid(3, 1, "strips")])
@pytest.mark.parametrize("lookahead", [True, False])
@pytest.mark.parametrize("n", [41])  # the last block one wide: its own pivot layer moves nothing
def test_plans_are_topological_and_send_exactly_the_remote_operands(family, params, grid, lookahead, n):
    schedule = build(family, n, 8, **params) if family != "recursive" else build(family, n, base=8, paired=False)
    _check_plan(plan_distribution(schedule, grid, lookahead))


def test_without_lookahead_each_process_keeps_the_schedules_order():
    schedule = build("generalized", 40, 8, kappa=2)
    plan = plan_distribution(schedule, Grid(2, 2), lookahead=False)
    from schedules.stages import stage_view

    assert np.array_equal(plan.units, stage_view(schedule.tile_tree, 40, 8).units)


def test_lookahead_runs_the_next_pivot_row_before_this_layers_other_updates():
    plan = plan_distribution(build("classic", 64, 8), Grid(2, 2), lookahead=True)
    local = [tuple(plan.units[v]) for v in plan.local_order(0)]
    # process 0 holds block (2, 2): layer 1 moved it into block row 2, the pivot row of layer 2,
    # and it runs before layer 1's updates of blocks nobody else needs soon
    next_pivot = local.index((2, 2, 2))
    late_update = local.index((1, 6, 6))
    assert next_pivot < late_update


def test_point_level_schedules_are_refused_with_the_reason():
    tree = build("naive", 8).tree
    with pytest.raises(ValueError, match="tile-level schedules"):
        plan_distribution(from_tree(tree.to_str() if hasattr(tree, "to_str") else str(tree), 8), Grid(1, 2))


@pytest.mark.parametrize("grid", [Grid(2, 2), Grid(2, 3), Grid(4, 1, "strips"), Grid(3, 1)])
def test_2d_fw_moves_n2_over_pr_plus_n2_over_pc_words_per_process(grid):
    """Each process receives, per layer, the a[i,k] blocks of its block rows unless it holds
    column k, and the a[k,j] blocks of its columns unless it holds row k: n^2/pr (1 - 1/pc) +
    n^2/pc (1 - 1/pr) words in all when the grid divides the blocks evenly."""
    n, tile = 96, 8
    plan = plan_distribution(build("classic", n, tile), grid)
    words = plan.traffic(itemsize=1)["bytes_received"]
    pr, pc = grid.rows, grid.cols
    assert np.allclose(words, n * n / pr * (1 - 1 / pc) + n * n / pc * (1 - 1 / pr), rtol=0, atol=1e-6)


def test_predecessors_travel_with_their_blocks_in_the_byte_count():
    plan = plan_distribution(build("classic", 40, 8), Grid(2, 2))
    plain, with_pred = plan.traffic(8), plan.traffic(8, predecessors=True)
    assert np.array_equal(with_pred["bytes_sent"], plain["bytes_sent"] // 8 * 12)
    assert np.array_equal(with_pred["messages_sent"], plain["messages_sent"])


def test_closed_form_agrees_with_the_replay_on_2d_grids_with_lookahead():
    network = Network(latency=2e-6, bandwidth=10e9, rate=2e10, itemsize=4)
    for n, tile, grid in ((2048, 128, Grid(2, 2)), (2048, 128, Grid(2, 4))):
        plan = plan_distribution(build("classic", n, tile), grid, True, network)
        replay = simulate_plan(plan, network)
        closed = layer_model(n, tile, grid, network, lookahead=True)
        assert abs(closed.time / replay.makespan - 1) < 0.05, (closed, replay)
        in_order = simulate_plan(plan_distribution(build("classic", n, tile), grid, False, network), network)
        assert replay.makespan <= in_order.makespan * 1.001


def test_replay_of_one_process_is_the_serial_time():
    network = Network(rate=1e9)
    plan = plan_distribution(build("classic", 100, 16), Grid(1, 1), True, network)
    times = simulate_plan(plan, network)
    assert times.makespan == pytest.approx(100**3 / 1e9) and times.efficiency == pytest.approx(1.0)


def test_a_runtimes_overhead_is_paid_once_per_tile_layer():
    plain, with_overhead = Network(rate=1e9), Network(rate=1e9, overhead=1e-5)
    plan = plan_distribution(build("classic", 100, 16), Grid(1, 1), True, plain)
    extra = simulate_plan(plan, with_overhead).makespan - simulate_plan(plan, plain).makespan
    assert extra == pytest.approx(7**3 * 1e-5)  # 7 blocks a side, the last one 4 wide
    with pytest.raises(ValueError, match="overhead must be >= 0"):
        Network(overhead=-1.0)


def test_closed_form_efficiency_falls_with_processes_at_fixed_n_and_strips_receive_n2():
    network = Network()
    efficiency = [layer_model(30000, 256, grid_for(p), network, True).efficiency for p in (4, 64, 1024, 4096)]
    assert efficiency == sorted(efficiency, reverse=True) and efficiency[-1] < efficiency[0]
    strips = layer_model(30000, 256, grid_for(16, "strips"), network, True)
    assert strips.words_received == pytest.approx(30000**2 * (1 - 1 / 16))


def test_cost_on_a_grid_reports_the_plans_traffic_and_both_times():
    schedule = build("classic", 96, 16)
    report = cost(schedule, grid=(2, 2), network=Network(rate=1e9))
    plan = plan_distribution(schedule, Grid(2, 2))
    assert report.distributed["bytes_received"] == plan.traffic(4)["bytes_received"].tolist()
    assert report.distributed["words_formula"] * 4 == report.distributed["bytes_received"][0]
    assert report.distributed["lookahead"]["makespan"] <= report.distributed["in order"]["makespan"]
    assert "process grid" in report.table()
