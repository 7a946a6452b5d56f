"""The schedule families, each written once as a spec over tile-layers T[kb, ib, jb].

A tile-layer is block layer kb applied to block (ib, jb). Q = ceil(n/r)
blocks per side; the last block is partial when r does not divide n. The
families differ only in the spec; trees, legality, stage views, costs and
code all come from it.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from .schedule import Schedule
from .tree import ROLE_CONDITIONS, Band, Filter, Node, Sequence_, build_tree, roles, stage, tasks, to_point_tree

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


GENERALIZED_VARIANTS = ("seed", "fused")


def generalized_spec(kappa: int, variant: str = "seed",
                     step_order: Sequence[str] = ("LeadBlock", "LeadRowCol"),
                     part_order: Sequence[str] = ("forward", "reverse", "rest")) -> Node:
    """Seed 000's generalized blocked FW: groups of κ block layers, blocks kept over several layers.

    Per group K: a forward loop over l (LeadBlock(K,l), then LeadRowCol(K,l)),
    a reverse loop (LeadRowColReverse(K,l), l from κ'-2 down to 0), then
    Rest(K). A tile-layer's forward step is the smallest in-group block index
    >= kb among ib, jb; its reverse step the largest in-group index, when
    both are < kb. variant='fused' runs the reverse loop and Rest as one
    parallel stage (proved legal; κ'-1 fewer stages per group).
    """
    if variant not in GENERALIZED_VARIANTS:
        raise ValueError(f"unknown generalized variant {variant!r}; use one of {', '.join(GENERALIZED_VARIANTS)}")
    steps = _permutation(step_order, ("LeadBlock", "LeadRowCol"), "generalized step order")
    c = _group_conditions(kappa)
    K, IG, JG, nIG, nJG = c["K"], c["IG"], c["JG"], c["nIG"], c["nJG"]
    forward_step = (
        (f"ib - {K}", f"{IG} and ib >= kb and ({nJG} or jb < kb or jb >= ib)"),
        (f"jb - {K}", f"{JG} and jb >= kb and ({nIG} or ib < kb or ib > jb)"),
    )
    reverse_time = (
        (f"{K} - ib", f"{IG} and ib < kb and ({nJG} or jb <= ib)"),
        (f"{K} - jb", f"{JG} and jb < kb and ({nIG} or ib < jb)"),
    )
    forward = f"({IG} and ib >= kb) or ({JG} and jb >= kb)"
    reverse = f"({IG} and ib < kb and ({nJG} or jb < kb)) or ({JG} and jb < kb and ({nIG} or ib < kb))"
    rest = f"{nIG} and {nJG}"
    step_stages = {
        "LeadBlock": stage("generalized.LeadBlock", "ib = jb", ("DD", "I")),
        "LeadRowCol": stage("generalized.LeadRowCol", "ib != jb", ("DD", "SD_row", "SD_col")),
    }
    parts = {
        "forward": Filter(forward, Band((forward_step,), False, Sequence_(tuple(step_stages[s] for s in steps)))),
        "reverse": Filter(reverse, Band((reverse_time,), False, tasks("generalized.LeadRowColReverse", ("DD",)))),
        "rest": stage("generalized.Rest", rest, ("DD",)),
    }
    if variant == "fused":
        order = _permutation(part_order, ("forward", "reverse", "rest"), "generalized part order")
        fused = stage("generalized.ReverseAndRest", f"({reverse}) or ({rest})", ("DD",))
        children = []
        for part in order:
            if part == "forward":
                children.append(parts["forward"])
            elif fused not in children:
                children.append(fused)
        return Band((f"floor(kb/{kappa})",), False, Sequence_(tuple(children)))
    order = _permutation(part_order, ("forward", "reverse", "rest"), "generalized part order")
    return Band((f"floor(kb/{kappa})",), False, Sequence_(tuple(parts[p] for p in order)))


# ---------------------------------------------------------------- recursive


def _recursive_levels(blocks: int) -> int:
    return max(0, math.ceil(math.log2(blocks))) if blocks > 1 else 0


def recursive_spec(levels: int, paired: bool = True) -> Node:
    """Park et al.'s recursive order down to base tiles (R-Kleene's launch structure).

    At each level the diagonal call on a block of 2^(s+1) base tiles runs:
    the first k-half recursively, its pivot row and column (SD), the
    remaining quadrant (DD, a min-plus product), then the second k-half
    recursively and its row, column and product. Member p_l of the level
    band is 4 * (k-half) + (0: recursive call, 1: SD row, 2: SD col, 3: DD)
    at the level where kb, ib, jb first fall into different halves, and 0
    below it. paired=True gives SD row and column one stage (one launch).
    """
    members = []
    sd_col, dd = (1, 2) if paired else (2, 3)
    row_pieces, col_pieces, dd_pieces = [], [], []
    for level in range(levels):
        d, D = 2 ** (levels - 1 - level), 2 ** (levels - level)
        half = f"(floor(kb/{d}) - 2*floor(kb/{D}))"
        above = f"floor(ib/{D}) = floor(kb/{D}) and floor(jb/{D}) = floor(kb/{D})"
        i_with, j_with = f"floor(ib/{d}) = floor(kb/{d})", f"floor(jb/{d}) = floor(kb/{d})"
        i_apart, j_apart = f"floor(ib/{d}) != floor(kb/{d})", f"floor(jb/{d}) != floor(kb/{d})"
        row, col, product = f"{above} and {i_with} and {j_apart}", f"{above} and {j_with} and {i_apart}", f"{above} and {i_apart} and {j_apart}"
        members.append((
            (f"4*{half}", f"{i_with} and {j_with}"),
            (f"4*{half} + 1", row),
            (f"4*{half} + {sd_col}", col),
            (f"4*{half} + {dd}", product),
            ("0", f"floor(ib/{D}) != floor(kb/{D}) or floor(jb/{D}) != floor(kb/{D})"),
        ))
        row_pieces.append(f"({row})")
        col_pieces.append(f"({col})")
        dd_pieces.append(f"({product})")
    base = stage("recursive.I", "ib = kb and jb = kb", ("I",))
    if not levels:
        return Sequence_((base,))
    children = (
        base,
        stage("recursive.SD_row", " or ".join(row_pieces), ("SD_row", "DD"), task=("jb",), then=("ib",)),
        stage("recursive.SD_col", " or ".join(col_pieces), ("SD_col", "DD"), task=("ib",), then=("jb",)),
        stage("recursive.DD", " or ".join(dd_pieces), ("DD",)),
    )
    return Band(tuple(members), False, Sequence_(children, unordered=True))


# ---------------------------------------------------------------- building


def _blocks(n: int | None, tile: int) -> int | None:
    return None if n is None else -(-n // tile)


def _validate(n: int | None, tile: int) -> None:
    if n is not None and (not isinstance(n, int) or n < 1):
        raise ValueError(f"n must be a positive int (or None for parametric n), got {n!r}")
    if not isinstance(tile, int) or tile < 1:
        raise ValueError(f"tile must be a positive int, got {tile!r}")


def _from_spec(family: str, spec: Node, n: int | None, tile: int, params: dict) -> Schedule:
    tile_tree = build_tree(spec, n, tile)
    return Schedule(family, n, tile, to_point_tree(tile_tree, n, tile), tile_tree, params)


def build_naive(n: int | None, tile: int = 1) -> Schedule:
    return _from_spec("naive", naive_spec(), n, 1, {})


def build_classic(n: int | None, tile: int, stages: Sequence[str] = ("I", "SD", "DD")) -> Schedule:
    params = {} if tuple(stages) == ("I", "SD", "DD") else {"stages": "-".join(stages)}
    return _from_spec("classic", classic_spec(stages), n, tile, params)


def build_generalized(n: int | None, tile: int, kappa: int, variant: str = "seed", **orders) -> Schedule:
    blocks = _blocks(n, tile)
    if not isinstance(kappa, int) or kappa < 1 or (blocks is not None and kappa > blocks):
        limit = "Q" if blocks is None else f"Q = {blocks}"
        raise ValueError(f"kappa must be an int in 1..{limit} (blocks per side), got {kappa!r}")
    params = {"kappa": kappa, "variant": variant, **{k: "-".join(v) for k, v in orders.items()}}
    return _from_spec("generalized", generalized_spec(kappa, variant, **orders), n, tile, params)


def build_recursive(n: int | None, tile: int | None = None, base: int | None = None, paired: bool = True) -> Schedule:
    base = base or tile
    if n is None:
        raise ValueError("the recursive family needs a concrete n (its depth is log2 of the block count)")
    if base is None:
        raise ValueError("give the recursive family its base size (base=...)")
    _validate(n, base)
    levels = _recursive_levels(_blocks(n, base))
    return _from_spec("recursive", recursive_spec(levels, paired), n, base, {"base": base, "paired": paired})


FAMILIES: dict[str, Callable[..., Schedule]] = {
    "naive": build_naive,
    "classic": build_classic,
    "generalized": build_generalized,
    "recursive": build_recursive,
}

#: family -> (parameter, meaning) for `polyfw schedules`
FAMILY_PARAMETERS = {
    "naive": [("n", "problem size")],
    "classic": [("n", "problem size"), ("tile", "block size r")],
    "generalized": [("n", "problem size"), ("tile", "block size r"), ("kappa", "block layers per group, 1..Q"),
                    ("variant", "'seed' (seed 000's stages) or 'fused' (reverse loop and Rest in one stage)")],
    "recursive": [("n", "problem size"), ("base", "base tile size t_R"),
                  ("paired", "True: SD row and column share a launch")],
}


def build(name: str, n: int | None, tile: int | None = None, **params) -> Schedule:
    """A schedule of the named family: build('generalized', 1024, 32, kappa=4)."""
    if name not in FAMILIES:
        raise ValueError(f"unknown schedule family {name!r}; available: {', '.join(FAMILIES)}")
    if name != "recursive":
        tile = 1 if name == "naive" else tile
        if tile is None:
            raise ValueError(f"the {name} family needs a tile size (tile=...)")
        _validate(n, tile)
    return FAMILIES[name](n, tile, **params)
