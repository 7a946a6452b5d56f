"""The tile relation and the direct predecessors of every tile-layer, from isl, against brute force
and against seed 004's rules per block type."""
from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from tests.bruteforce import relaxed_pairs
from tiling.isl_utils import enumerate_points
from tiling.tile_dependences import covers, direct_predecessors, predecessor_rules, readiness_source, tile_relation


def _pairs(relation) -> set:
    return {(tuple(p[:3]), tuple(p[3:])) for p in enumerate_points(relation.wrap())}


@pytest.mark.parametrize("n, tile", [(6, 2), (7, 3), (8, 4), (5, 5), (9, 4)])
def test_the_tile_relation_is_the_point_relation_seen_on_tiles(n, tile):
    expected = set()
    for name, pairs in relaxed_pairs(n).items():
        for (k0, i0, j0), (k, i, j) in pairs:
            source, sink = (k0 // tile, i0 // tile, j0 // tile), (k // tile, i // tile, j // tile)
            # W only forbids overlap: each block takes its layers in increasing kb
            if source != sink and (name != "W" or source[0] < sink[0]):
                expected.add((source, sink))
    assert _pairs(tile_relation(n, tile)) == expected


def _seed_004_rule(kb: int, ib: int, jb: int) -> set:
    """Central blocks wait for their own older layers only; horizontal and vertical ones also for
    the central block of their layer; peripheral ones for their row's and their column's."""
    if ib == kb and jb == kb:
        return set()
    if ib == kb or jb == kb:
        return {(kb, kb, kb)}
    return {(kb, ib, kb), (kb, kb, jb)}


def _rule_predecessors(n: int, tile: int, kb: int, ib: int, jb: int) -> set:
    found = set()
    for rule in predecessor_rules(n, tile):
        if eval(rule.condition):  # the rules are isl's expressions in kb, ib, jb
            found.add((eval(rule.kb), eval(rule.ib), eval(rule.jb)))
    return found


@pytest.mark.parametrize("blocks", range(1, 13))
def test_whole_blocks_follow_seed_004_rules_and_the_readiness_test_agrees(blocks):
    tile = 2
    n = blocks * tile
    for kb, ib, jb in product(range(blocks), repeat=3):
        assert _rule_predecessors(n, tile, kb, ib, jb) == _seed_004_rule(kb, ib, jb), (kb, ib, jb)
    # the generated test against the rule on level states just short of and at readiness
    namespace: dict = {}
    exec("def ready(level, kb, ib, jb):\n" + "\n".join("    " + line for line in
                                                      readiness_source(predecessor_rules(n, tile)).splitlines()), namespace)
    ready = namespace["ready"]
    rng = np.random.default_rng(blocks)
    for kb, ib, jb in product(range(blocks), repeat=3):
        level = rng.integers(0, blocks + 1, size=(blocks, blocks))
        level[ib, jb] = kb
        needed = _seed_004_rule(kb, ib, jb)
        for _, pi, pj in needed:
            level[pi, pj] = max(level[pi, pj], kb + 1) if (pi, pj) != (ib, jb) else level[pi, pj]
        assert ready(level, kb, ib, jb)
        for _, pi, pj in needed:
            held = level.copy()
            held[pi, pj] = kb
            assert not ready(held, kb, ib, jb), (kb, ib, jb, pi, pj)


def test_a_last_block_one_wide_waits_for_nothing_of_its_own_layer():
    # n = 9, tile 4: block layer 2 is k = 8 alone; a[i, 8] and a[8, j] do not change in it, so the
    # peripheral tiles of that layer wait for layer 1 of their row's and column's blocks only
    assert _rule_predecessors(9, 4, 2, 0, 1) == {(1, 0, 2), (1, 2, 1)}
    assert _seed_004_rule(2, 0, 1) == {(2, 0, 2), (2, 2, 1)}


@pytest.mark.parametrize("n, tile", [(12, 4), (9, 4), (10, 3), (4096, 128), (1000, 128)])
def test_waiting_for_the_direct_predecessors_orders_the_whole_relation(n, tile):
    assert covers(n, tile)
    assert direct_predecessors(n, tile).is_subset(tile_relation(n, tile))


def test_the_model_is_parametric_in_n():
    assert covers(None, 4)
