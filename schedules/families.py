"""The schedule families, each written once as a spec over tile-layers T[kb, ib, jb].

A tile-layer is block layer kb applied to block (ib, jb). Q = ceil(n/r)
blocks per side; the last block is partial when r does not divide n. The
families differ only in the spec; trees, legality, stage views, costs and
code all come from it.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from .parameters import GENERALIZED_VARIANTS, REVERSE_DIRECTIONS, check_parameters
from .schedule import Schedule
from .tree import ROLE_CONDITIONS, Band, Filter, Node, Sequence_, build_tree, stage, tasks, to_point_tree

ALL_ROLES = tuple(ROLE_CONDITIONS)


def _permutation(given: Sequence[str], expected: Sequence[str], what: str) -> tuple[str, ...]:
    if sorted(given) != sorted(expected):
        raise ValueError(f"{what} must order {', '.join(expected)}; got {', '.join(given)}")
    return tuple(given)


# ---------------------------------------------------------------- naive


def naive_spec() -> Node:
    """The original order: layer k, rows i as parallel tasks, j inside (tile size 1)."""
    return Band(("kb",), False, tasks("naive.layer", ALL_ROLES, task=("ib",), within=("jb",)))


# ---------------------------------------------------------------- classic

CLASSIC_STAGES = {
    "I": ("ib = kb and jb = kb", ("I",)),
    "SD": ("(ib = kb and jb != kb) or (jb = kb and ib != kb)", ("SD_row", "SD_col")),
    "DD": ("ib != kb and jb != kb", ("DD",)),
}


def classic_spec(stages: Sequence[str] = ("I", "SD", "DD")) -> Node:
    """Classic blocked FW (κ = 1): per block layer, the pivot, then its row and column, then the rest."""
    order = _permutation(stages, ("I", "SD", "DD"), "classic stages")
    children = tuple(stage(f"classic.{name}", *CLASSIC_STAGES[name]) for name in order)
    return Band(("kb",), False, Sequence_(children))


# ---------------------------------------------------------------- generalized


def _group_conditions(kappa: int) -> dict[str, str]:
    group = f"floor(kb/{kappa})"
    return {
        "K": f"{kappa}*{group}",
        "IG": f"floor(ib/{kappa}) = {group}",
        "JG": f"floor(jb/{kappa}) = {group}",
        "nIG": f"floor(ib/{kappa}) != {group}",
        "nJG": f"floor(jb/{kappa}) != {group}",
    }


def generalized_spec(kappa: int, variant: str = "seed",
                     step_order: Sequence[str] = ("LeadBlock", "LeadRowCol"),
                     part_order: Sequence[str] = ("forward", "reverse", "rest"),
                     reverse: str = "descending") -> Node:
    """Seed 000's generalized blocked FW: groups of κ block layers, blocks kept over several layers.

    Per group K: a forward loop over l (LeadBlock(K,l), then LeadRowCol(K,l)),
    a reverse loop (LeadRowColReverse(K,l), l from κ'-2 down to 0), then
    Rest(K). A tile-layer's forward step is the smallest in-group block index
    >= kb among ib, jb; its reverse step the largest in-group index, when
    both are < kb. variant='fused' runs the reverse loop and Rest as one
    parallel stage (proved legal; κ'-1 fewer stages per group);
    reverse='ascending' runs the reverse loop from l = 0 up (also legal).
    step_order and part_order reorder the steps for exploration; the
    checker says which orders are legal.
    """
    if reverse not in REVERSE_DIRECTIONS:
        raise ValueError(f"reverse must be one of {', '.join(REVERSE_DIRECTIONS)}, got {reverse!r}")
    if variant not in GENERALIZED_VARIANTS:
        raise ValueError(f"unknown generalized variant {variant!r}; use one of {', '.join(GENERALIZED_VARIANTS)}")
    steps = _permutation(step_order, ("LeadBlock", "LeadRowCol"), "generalized step order")
    c = _group_conditions(kappa)
    K, IG, JG, nIG, nJG = c["K"], c["IG"], c["JG"], c["nIG"], c["nJG"]
    forward_step = (
        (f"ib - {K}", f"{IG} and ib >= kb and ({nJG} or jb < kb or jb >= ib)"),
        (f"jb - {K}", f"{JG} and jb >= kb and ({nIG} or ib < kb or ib > jb)"),
    )
    sign = "-" if reverse == "descending" else ""
    reverse_time = (
        (f"{sign}(ib - {K})", f"{IG} and ib < kb and ({nJG} or jb <= ib)"),
        (f"{sign}(jb - {K})", f"{JG} and jb < kb and ({nIG} or ib < jb)"),
    )
    forward = f"({IG} and ib >= kb) or ({JG} and jb >= kb)"
    backward = f"({IG} and ib < kb and ({nJG} or jb < kb)) or ({JG} and jb < kb and ({nIG} or ib < kb))"
    rest = f"{nIG} and {nJG}"
    step_stages = {
        "LeadBlock": stage("generalized.LeadBlock", "ib = jb", ("DD", "I")),
        "LeadRowCol": stage("generalized.LeadRowCol", "ib != jb", ("DD", "SD_row", "SD_col")),
    }
    parts = {
        "forward": Filter(forward, Band((forward_step,), False, Sequence_(tuple(step_stages[s] for s in steps)))),
        "reverse": Filter(backward, Band((reverse_time,), False, tasks("generalized.LeadRowColReverse", ("DD",)))),
        "rest": stage("generalized.Rest", rest, ("DD",)),
    }
    order = _permutation(part_order, ("forward", "reverse", "rest"), "generalized part order")
    if variant == "fused":
        # the reverse loop and Rest become one stage, placed where the first of them was
        parts["tail"] = stage("generalized.ReverseAndRest", f"({backward}) or ({rest})", ("DD",))
        order = tuple(dict.fromkeys(p if p == "forward" else "tail" for p in order))
    return Band((f"floor(kb/{kappa})",), False, Sequence_(tuple(parts[p] for p in order)))


# ---------------------------------------------------------------- recursive


def _recursive_levels(blocks: int) -> int:
    return max(0, math.ceil(math.log2(blocks))) if blocks > 1 else 0


def recursive_spec(levels: int, paired: bool = True) -> Node:
    """Park et al.'s recursive order down to base tiles, with R-Kleene's launch structure.

    FW on a diagonal block of 2^(s+1) base tiles runs, for each k-half h in
    turn (a band over floor(kb / 2^s)): FW on the diagonal block of h
    (recursively: the tile-layers whose kb, ib, jb share a half), then the
    calls of h — its pivot rows (SD_row: i in h), pivot columns (SD_col: j
    in h) and the remaining quadrant (DD, a min-plus product). One band and
    one sequence per level: O(log Q) nodes, all quasi-affine. paired=True
    runs SD_row and SD_col as one stage (one launch): 5Q - 4 stages, else 7Q - 6.
    """

    def calls(s: int) -> Node:
        d = 2**s
        i_in, j_in = f"floor(ib/{d}) = floor(kb/{d})", f"floor(jb/{d}) = floor(kb/{d})"
        row = stage("recursive.SD_row", i_in, ("SD_row", "DD"), task=("jb",), then=("ib",))
        col = stage("recursive.SD_col", j_in, ("SD_col", "DD"), task=("ib",), then=("jb",))
        product = stage("recursive.DD", f"floor(ib/{d}) != floor(kb/{d}) and floor(jb/{d}) != floor(kb/{d})", ("DD",))
        if paired:
            return Sequence_((Filter(f"{i_in} or {j_in}", Sequence_((row, col), unordered=True)), product))
        return Sequence_((row, col, product))

    node: Node = Sequence_((stage("recursive.I", "ib = kb and jb = kb", ("I",)),))
    for s in range(levels):
        d = 2**s
        together = f"floor(ib/{d}) = floor(kb/{d}) and floor(jb/{d}) = floor(kb/{d})"
        apart = f"floor(ib/{d}) != floor(kb/{d}) or floor(jb/{d}) != floor(kb/{d})"
        node = Band((f"floor(kb/{d})",), False, Sequence_((Filter(together, node), Filter(apart, calls(s)))))
    return node


# ---------------------------------------------------------------- building


def _blocks(n: int | None, tile: int) -> int | None:
    return None if n is None else -(-n // tile)


def _validate(n: int | None, tile: int) -> None:
    if n is not None and (not isinstance(n, int) or n < 1):
        raise ValueError(f"n must be a positive int (or None for parametric n), got {n!r}")
    if not isinstance(tile, int) or tile < 1:
        raise ValueError(f"tile must be a positive int, got {tile!r}")


def from_spec(family: str, spec: Node, n: int | None, tile: int, params: dict | None = None,
              point_order: dict[str, tuple[str, ...]] | None = None) -> Schedule:
    """A schedule from a tile-level spec (how every family is built; open to new orders too)."""
    tile_tree = build_tree(spec, n, tile)
    original = all(tuple(order) == ("k", "i", "j") for order in (point_order or {}).values())
    return Schedule(family, n, tile, to_point_tree(tile_tree, n, tile, point_order), tile_tree, params or {}, original)


def family_spec(name: str, n: int | None, tile: int, **params) -> Node:
    """The tile-level spec a family builds for these (checked) parameters: what its tree is made
    from, and what schedules.mutate starts from."""
    if name == "naive":
        return naive_spec()
    if name == "classic":
        return classic_spec(params.get("stages", ("I", "SD", "DD")))
    if name == "generalized":
        return generalized_spec(params["kappa"], params.get("variant", "seed"), reverse=params.get("reverse", "descending"),
                                **{k: params[k] for k in ("step_order", "part_order") if k in params})
    if name == "recursive":
        return recursive_spec(_recursive_levels(_blocks(n, tile)), params.get("paired", True))
    raise ValueError(f"unknown schedule family {name!r}; available: {', '.join(FAMILIES)}")


def build_naive(n: int | None, tile: int = 1) -> Schedule:
    return from_spec("naive", family_spec("naive", n, 1), n, 1, {})


def build_classic(n: int | None, tile: int, stages: Sequence[str] = ("I", "SD", "DD")) -> Schedule:
    params = {} if tuple(stages) == ("I", "SD", "DD") else {"stages": "-".join(stages)}
    return from_spec("classic", family_spec("classic", n, tile, stages=stages), n, tile, params)


def build_generalized(n: int | None, tile: int, kappa: int, variant: str = "seed", reverse: str = "descending",
                      **orders) -> Schedule:
    blocks = _blocks(n, tile)
    if not isinstance(kappa, int) or kappa < 1 or (blocks is not None and kappa > blocks):
        limit = "Q" if blocks is None else f"Q = {blocks}"
        raise ValueError(f"kappa must be an int in 1..{limit} (blocks per side), got {kappa!r}")
    params = {"kappa": kappa, "variant": variant, **{k: "-".join(v) for k, v in orders.items()}}
    if reverse != "descending":
        params["reverse"] = reverse
    spec = family_spec("generalized", n, tile, kappa=kappa, variant=variant, reverse=reverse, **orders)
    return from_spec("generalized", spec, n, tile, params)


def build_recursive(n: int | None, tile: int | None = None, base: int | None = None, paired: bool = True) -> Schedule:
    base = base or tile
    if n is None:
        raise ValueError("the recursive family needs a concrete n (its depth is log2 of the block count)")
    if base is None:
        raise ValueError("give the recursive family its base size (base=...)")
    _validate(n, base)
    return from_spec("recursive", family_spec("recursive", n, base, paired=paired), n, base,
                     {"base": base, "paired": paired})


FAMILIES: dict[str, Callable[..., Schedule]] = {
    "naive": build_naive,
    "classic": build_classic,
    "generalized": build_generalized,
    "recursive": build_recursive,
}

def build(name: str, n: int | None, tile: int | None = None, **params) -> Schedule:
    """A schedule of the named family: build('generalized', 1024, 32, kappa=4). Parameters are
    checked against the family's declarations (schedules.parameters); text is parsed by type."""
    if name not in FAMILIES:
        raise ValueError(f"unknown schedule family {name!r}; available: {', '.join(FAMILIES)}")
    if name != "recursive":
        tile = 1 if name == "naive" else tile
        if tile is None:
            raise ValueError(f"the {name} family needs a tile size (tile=...)")
        if name != "naive":
            tile = check_parameters(name, {"tile": tile})["tile"]
        _validate(n, tile)
    elif "base" in params:
        params["base"] = check_parameters(name, {"base": params["base"]})["base"]
    size = tile if tile is not None else params.get("base")
    params = check_parameters(name, params, _blocks(n, size) if isinstance(size, int) and size > 0 else None)
    return FAMILIES[name](n, tile, **params)
