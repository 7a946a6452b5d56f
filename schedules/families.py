"""The schedule families, each written once as a spec over tile-layers T[kb, ib, jb].

A tile-layer is block layer kb applied to block (ib, jb). Q = ceil(n/r)
blocks per side; the last block is partial when r does not divide n. The
families differ only in the spec; trees, legality, stage views, costs and
code all come from it.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tiling.registry import Registry

from .parameters import (FAMILY_PARAMETERS, GENERALIZED_VARIANTS, REVERSE_DIRECTIONS, TILE, Parameter,
                         check_parameters, parameter)
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


CLASSIC_ORDER = ("I", "SD", "DD")


def classic_spec(stages: Sequence[str] = CLASSIC_ORDER, overlap: bool = False, panels: bool = False) -> Node:
    """Classic blocked FW (κ = 1): per block layer, the pivot, then its row and column, then the rest.
    panels: the DD stage's operand blocks are copied into micro-panels as it starts (tree.PACK_MARK)."""
    order = _permutation(stages, CLASSIC_ORDER, "classic stages")
    if overlap:
        if order != CLASSIC_ORDER:
            raise ValueError(f"classic with overlap runs its stages in the order I, SD, DD; got {', '.join(order)}")
        if panels:
            raise ValueError("classic with overlap runs on a GPU's streams, which do not pack: use overlap or panels")
        return _overlap_spec()
    children = tuple(stage(f"classic.{name}", *CLASSIC_STAGES[name], packed=panels and name == "DD") for name in order)
    return Band(("kb",), False, Sequence_(children))


def _overlap_spec() -> Node:
    """Classic with look-ahead: the next layer's pivot and panels run beside this layer's products.

    Step s runs two children of a set, which the proof reads as concurrent (a GPU's two streams):
    the products of layer s off row and column s + 1, and, in order, the products of layer s on
    row and column s + 1 (what the next pivot and panels read), the pivot of layer s + 1 and its
    panels. So a round's small launches hide behind the big one instead of draining the device.
    """
    head = "ib = kb or jb = kb"
    next_cross = "ib != kb and jb != kb and (ib = kb + 1 or jb = kb + 1)"
    rest = "ib != kb and jb != kb and ib != kb + 1 and jb != kb + 1"
    ahead = Sequence_((stage("classic.next_DD", next_cross, ("DD",)),
                       *(stage(f"classic.{name}", *CLASSIC_STAGES[name]) for name in ("I", "SD"))))
    step = (("kb - 1", head), ("kb", "ib != kb and jb != kb"))
    return Band((step,), False, Sequence_((stage("classic.DD", rest, ("DD",)),
                                           Filter(f"({next_cross}) or ({head})", ahead)), unordered=True))


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
                     reverse: str = "descending", products: bool = True, panels: bool = False) -> Node:
    """Seed 000's generalized blocked FW: groups of κ block layers, blocks kept over several layers.

    Per group K: a forward loop over l (LeadBlock(K,l), then LeadRowCol(K,l)),
    a reverse loop (LeadRowColReverse(K,l), l from κ'-2 down to 0), then
    Rest(K). A tile-layer's forward step is the smallest in-group block index
    >= kb among ib, jb; its reverse step the largest in-group index, when
    both are < kb. variant='fused' runs the reverse loop and Rest as one
    parallel stage (proved legal; κ'-1 fewer stages per group);
    reverse='ascending' runs the reverse loop from l = 0 up (also legal).
    step_order and part_order reorder the steps for exploration; the
    checker says which orders are legal. products: the layers a reverse or
    Rest task holds on one block run as one product (tree.PRODUCT_MARK). panels: Rest(K)'s operand
    blocks are copied into micro-panels as it starts (tree.PACK_MARK).
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
        "reverse": Filter(backward, Band((reverse_time,), False, tasks("generalized.LeadRowColReverse", ("DD",),
                                                                                as_product=products))),
        "rest": stage("generalized.Rest", rest, ("DD",), packed=panels, as_product=products),
    }
    order = _permutation(part_order, ("forward", "reverse", "rest"), "generalized part order")
    if variant == "fused":
        # the reverse loop and Rest become one stage, placed where the first of them was
        parts["tail"] = stage("generalized.ReverseAndRest", f"({backward}) or ({rest})", ("DD",),
                              as_product=products)
        order = tuple(dict.fromkeys(p if p == "forward" else "tail" for p in order))
    return Band((f"floor(kb/{kappa})",), False, Sequence_(tuple(parts[p] for p in order)))


# ---------------------------------------------------------------- recursive


def _recursive_levels(blocks: int) -> int:
    return max(0, math.ceil(math.log2(blocks))) if blocks > 1 else 0


def recursive_spec(levels: int, paired: bool = True, products: bool = True) -> Node:
    """Park et al.'s recursive order down to base tiles, with R-Kleene's launch structure.

    FW on a diagonal block of 2^(s+1) base tiles runs, for each k-half h in
    turn (a band over floor(kb / 2^s)): FW on the diagonal block of h
    (recursively: the tile-layers whose kb, ib, jb share a half), then the
    calls of h — its pivot rows (SD_row: i in h), pivot columns (SD_col: j
    in h) and the remaining quadrant (DD, a min-plus product). One band and
    one sequence per level: O(log Q) nodes, all quasi-affine. paired=True
    runs SD_row and SD_col as one stage (one launch): 5Q - 4 stages, else 7Q - 6.
    products: the 2^s layers a product task holds on one block run as one product (tree.PRODUCT_MARK).
    """

    def calls(s: int) -> Node:
        d = 2**s
        i_in, j_in = f"floor(ib/{d}) = floor(kb/{d})", f"floor(jb/{d}) = floor(kb/{d})"
        row = stage("recursive.SD_row", i_in, ("SD_row", "DD"), task=("jb",), then=("ib",))
        col = stage("recursive.SD_col", j_in, ("SD_col", "DD"), task=("ib",), then=("jb",))
        product = stage("recursive.DD", f"floor(ib/{d}) != floor(kb/{d}) and floor(jb/{d}) != floor(kb/{d})", ("DD",),
                        as_product=products)
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


# ---------------------------------------------------------------- the registry


@dataclass(frozen=True)
class Family:
    """A schedule family, declared once: its parameters (schedules.parameters.Parameter), the
    tile-level spec they make (whose stages name their roles), and what a built schedule records."""

    name: str
    help: str
    parameters: tuple[Parameter, ...]
    #: spec(blocks, **every parameter but the size) -> the tile-level spec for Q = blocks per side
    spec: Callable[..., Node]
    #: record(values, given) -> the parameters the schedule's name and text show
    record: Callable[[dict, dict], dict]
    #: the parameter that is the block size ('tile' or 'base'), or None: one element (tile 1)
    size: str | None = "tile"
    #: its tree depends on Q, so it is built for a concrete n only
    needs_n: bool = False
    #: whether a combination of its parameters (every one but the size) makes a schedule: an
    #: exploration's space leaves the others out
    builds: Callable[[dict], bool] = lambda values: True

    def parameter(self, name: str) -> Parameter:
        return parameter(self.name, name)

    def settings(self, given: dict[str, Any], blocks: int | None) -> dict[str, Any]:
        """`given` checked, with every other parameter (the size aside) at its default."""
        checked = check_parameters(self.name, given, blocks)
        return {p.name: checked.get(p.name, p.default) for p in self.parameters if p.name != self.size}


#: every family build, solve, explore and the CLI know: `register(Family(...))` adds one
FAMILIES: Registry[Family] = Registry("schedule family")
find_family = FAMILIES.find


def register(family: Family) -> Family:
    """Make a family available to build, solve, explore and the CLI (one line per family); its
    parameters are then what schedules.parameters checks text and values against."""
    FAMILY_PARAMETERS[family.name] = family.parameters
    return FAMILIES.register(family)


def _order_parameter(name: str, steps: tuple[str, ...], help: str) -> Parameter:
    return Parameter(name, "order", steps, help, steps)


def _products_parameter() -> Parameter:
    # not searched unless asked for (--axis products=true,false): it would double the space, and on Zen 3 it
    # moved a run by less than the host's noise (benchmarks/layer_products.py)
    return Parameter("products", "bool", True, "the block layers a task holds on one block run as one min-plus "
                     "product, its register tiles kept across them (false: one product a layer)", searched_on=())


def _products_record(values: dict) -> dict:
    return {} if values["products"] else {"products": False}


def _panels_parameter(stage: str) -> Parameter:
    # not searched unless asked for (--axis panels=true,false): only the CPU's barrier runtime packs
    return Parameter("panels", "bool", False, f"{stage}'s operand blocks copied once into contiguous micro-panels "
                     "as it starts, on the CPU's barrier runtime (schedules.packing proves the copy exact)",
                     searched_on=())


def _panels_record(values: dict) -> dict:
    return {"panels": True} if values["panels"] else {}


def _generalized_record(values: dict, given: dict) -> dict:
    orders = {k: "-".join(values[k]) for k in given if k in ("step_order", "part_order")}  # as given
    reverse = {} if values["reverse"] == "descending" else {"reverse": values["reverse"]}
    return {"kappa": values["kappa"], "variant": values["variant"], **orders, **reverse, **_products_record(values),
            **_panels_record(values)}


register(Family("naive", "the loop nest as written: layer k, its rows in parallel; n stages", (), lambda blocks: naive_spec(),
                lambda values, given: {}, size=None))
register(Family("classic", "blocked FW (κ = 1): per block layer the pivot, then its row and column, then the rest; 3Q stages",
                (TILE, _order_parameter("stages", ("I", "SD", "DD"), "the order of a block layer's stages (only "
                                        "I-SD-DD is legal; the others are for the checker)"),
                 Parameter("overlap", "bool", False, "the next layer's pivot and panels beside this layer's products "
                           "(look-ahead; on a GPU, a second stream)", searched_on=("cuda", "cudasim")),
                 _panels_parameter("the DD stage")),
                lambda blocks, stages, overlap, panels: classic_spec(stages, overlap, panels),
                lambda values, given: ({} if values["stages"] == ("I", "SD", "DD") else
                                       {"stages": "-".join(values["stages"])})
                | ({"overlap": True} if values["overlap"] else {}) | _panels_record(values),
                builds=lambda values: not values.get("overlap") or (tuple(values.get("stages", CLASSIC_ORDER))
                                                                    == CLASSIC_ORDER and not values.get("panels"))))
register(Family("generalized", "seed 000's multitile blocked FW: κ block layers per group; 3κ' stages a group (seed), 2κ'+1 (fused)",
                (TILE,
                 Parameter("kappa", "int", 2, "block layers per group (seed 000's kappa)", up_to_blocks=True),
                 Parameter("variant", "choice", "seed", "'seed': seed 000's stages; 'fused': the reverse loop and "
                           "Rest(K) in one parallel stage", GENERALIZED_VARIANTS),
                 Parameter("reverse", "choice", "descending", "the reverse loop's direction (seed 000: descending)",
                           REVERSE_DIRECTIONS),
                 _order_parameter("step_order", ("LeadBlock", "LeadRowCol"), "the forward loop's two steps"),
                 _order_parameter("part_order", ("forward", "reverse", "rest"), "a group's three parts"),
                 _products_parameter(), _panels_parameter("Rest(K)")),
                lambda blocks, **values: generalized_spec(**values), _generalized_record))
register(Family("recursive", "Park et al.'s recursive order down to base tiles, with R-Kleene's launches; 5Q−4 stages (paired), 7Q−6",
                (Parameter("base", "int", None, "base block size t_R (solve's default: the tuning table's, else 128)"),
                 Parameter("paired", "bool", True, "the SD row and column products in one launch (false: two)"),
                 _products_parameter()),
                lambda blocks, paired, products: recursive_spec(_recursive_levels(blocks), paired, products),
                lambda values, given: {"base": values["base"], "paired": values["paired"], **_products_record(values)},
                size="base", needs_n=True))


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
    """The tile-level spec a family builds for these parameters (the others at their defaults):
    what its tree is made from, and what schedules.mutate starts from."""
    family = find_family(name)
    blocks = _blocks(n, tile)
    return family.spec(blocks, **family.settings(params, blocks))


def build(name: str, n: int | None, tile: int | None = None, **params) -> Schedule:
    """A schedule of the named family: build('generalized', 1024, 32, kappa=4). Parameters are
    checked against the family's declarations (schedules.parameters); text is parsed by type."""
    family = find_family(name)
    if family.size is None:
        size = 1
    else:  # a size named otherwise ('base') may also come as the positional tile
        size = params.pop(family.size, None) if family.size != "tile" else None
        size = tile if size is None else size
    if size is None:
        raise ValueError(f"the {name} family needs a {family.size} size ({family.size}=...)")
    if family.needs_n and n is None:
        raise ValueError(f"the {name} family needs a concrete n (its tree depends on the block count)")
    if family.size is not None:
        size = check_parameters(name, {family.size: size})[family.size]
    _validate(n, size)
    blocks = _blocks(n, size)
    values = family.settings(params, blocks)
    recorded = family.record({**values, family.size: size} if family.size else values, params)
    return from_spec(name, family.spec(blocks, **values), n, size, recorded)
