"""A tiled schedule placed on a pr x pc process grid: who runs which tile-layer, in which
order, and which blocks travel between processes (seed 003's 2D FW, from any family).

Nothing here is written per family. A tile-layer T[kb,ib,jb] reads block
(ib,kb) as its a[i,k] operand and block (kb,jb) as its a[k,j] operand (the
accesses of the nest); it reads each as it is after layer kb, the version
its direct predecessors (tiling.tile_dependences) name. An operand that is
the tile-layer's own block is a copy taken just before it runs, which is
exact for the same reason the shared-memory SD kernel is (codegen.kernels).
A process holds its own blocks and receives every operand block another
process owns: that is the message list, the tile relation composed with the
placement. The plan checks that those operand waits include every direct
predecessor, which with the own block's order covers the whole tile
relation (`covers`, an isl proof), and that the order it runs puts every
operand's producer first, so the runtime can neither deadlock nor read too
early.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tiling.tile_dependences import PredecessorRule

from .emitted import UnsafeCodeError, check_task_graph

from .simulate import tile_predecessors
from .stages import StageView, stage_view

PLACEMENTS = ("block-cyclic", "strips")


@dataclass(frozen=True)
class Grid:
    """pr x pc processes, rank r * pc + c at process row r, column c. 'block-cyclic': block
    (ib, jb) on (ib mod pr, jb mod pc); 'strips': contiguous strips of block rows (pc = 1)."""

    rows: int
    cols: int
    placement: str = "block-cyclic"

    def __post_init__(self) -> None:
        if not (isinstance(self.rows, int) and isinstance(self.cols, int) and self.rows >= 1 and self.cols >= 1):
            raise ValueError(f"a process grid is two positive ints (pr, pc), got ({self.rows!r}, {self.cols!r})")
        if self.placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, got {self.placement!r}")
        if self.placement == "strips" and self.cols != 1:
            raise ValueError(f"'strips' places whole block rows: the grid is P x 1, got {self.rows} x {self.cols}")

    @property
    def size(self) -> int:
        return self.rows * self.cols

    def process_row(self, ib, blocks: int):
        ib = np.asarray(ib, dtype=np.int64)
        return ib % self.rows if self.placement == "block-cyclic" else ib * self.rows // blocks

    def process_col(self, jb, blocks: int):
        return np.asarray(jb, dtype=np.int64) % self.cols

    def rank(self, ib, jb, blocks: int):
        return self.process_row(ib, blocks) * self.cols + self.process_col(jb, blocks)

    def block_rows(self, rank: int, blocks: int) -> np.ndarray:
        """The block rows rank `rank` holds blocks of, ascending."""
        every = np.arange(blocks)
        return every[self.process_row(every, blocks) == rank // self.cols]

    def block_cols(self, rank: int, blocks: int) -> np.ndarray:
        every = np.arange(blocks)
        return every[self.process_col(every, blocks) == rank % self.cols]

    def __str__(self) -> str:
        return f"{self.rows} x {self.cols} {self.placement}"


def grid_for(processes: int, placement: str = "block-cyclic") -> Grid:
    """The squarest pr x pc = processes (pr <= pc), or P x 1 for strips."""
    if processes < 1:
        raise ValueError(f"processes must be at least 1, got {processes}")
    if placement == "strips":
        return Grid(processes, 1, placement)
    rows = max(r for r in range(1, int(processes**0.5) + 1) if processes % r == 0)
    return Grid(rows, processes // rows, placement)


@dataclass(frozen=True)
class Network:
    """The machine the model times: latency (s) and bandwidth (bytes/s) of one link, the
    relaxations per second of one process, the bytes of one element; broadcasts 'flat' (the
    root sends to each receiver in turn, as the MPI runtime does) or 'tree' (binomial); and the
    seconds a runtime spends on each tile-layer besides its relaxations (its dispatch: small
    tiles pay it many times over)."""

    latency: float = 2e-6
    bandwidth: float = 10e9
    rate: float = 2e10
    itemsize: int = 4
    broadcast: str = "flat"
    overhead: float = 0.0

    def __post_init__(self) -> None:
        if self.latency < 0 or self.bandwidth <= 0 or self.rate <= 0 or self.itemsize <= 0 or self.overhead < 0:
            raise ValueError(f"latency and overhead must be >= 0, bandwidth, rate and itemsize > 0; got {self}")
        if self.broadcast not in ("flat", "tree"):
            raise ValueError(f"broadcast must be 'flat' or 'tree', got {self.broadcast!r}")

    def message(self, size_bytes):
        return self.latency + size_bytes / self.bandwidth

    def to_all(self, receivers: int, size_bytes: float) -> float:
        """Time until the last of `receivers` has a block of size_bytes."""
        if receivers <= 0:
            return 0.0
        rounds = receivers if self.broadcast == "flat" else int(np.ceil(np.log2(receivers + 1)))
        return rounds * self.message(size_bytes)


#: operand kinds of a message: the a[i,k] block, the a[k,j] block (the pivot block is both)
A_OPERAND, B_OPERAND = 1, 2


@dataclass(frozen=True, eq=False)
class DistributedPlan:
    """The tile-layers in the order the processes run them, their owners and their operands,
    and the messages: block (ib, jb) after layer kb, from its owner to each reader elsewhere."""

    n: int
    tile: int
    grid: Grid
    lookahead: bool
    units: np.ndarray       # (U, 3) int64 (kb, ib, jb), in run order
    owner: np.ndarray       # (U,) rank running each
    operands: np.ndarray    # (U, 2) index of the unit producing the a[i,k] / a[k,j] block; -1: own block
    #: one row per (message, receiver): producing unit index, receiver rank, operand kinds (bits)
    sends: np.ndarray       # (M, 3) int64, ordered by producer then receiver

    @property
    def blocks(self) -> int:
        return -(-self.n // self.tile)

    def block_size(self, b: np.ndarray) -> np.ndarray:
        return np.minimum(self.tile, self.n - self.tile * np.asarray(b, dtype=np.int64))

    @cached_property
    def elements(self) -> np.ndarray:
        """Elements of the block each send carries."""
        produced = self.units[self.sends[:, 0]]
        return self.block_size(produced[:, 1]) * self.block_size(produced[:, 2])

    def traffic(self, itemsize: int, predecessors: bool = False) -> dict[str, np.ndarray]:
        """Per rank: messages and bytes sent and received (int32 predecessors travel along)."""
        size = self.grid.size
        per_element = itemsize + (4 if predecessors else 0)
        sender = self.owner[self.sends[:, 0]]
        receiver = self.sends[:, 1]
        bytes_each = self.elements * per_element
        return {"messages_sent": np.bincount(sender, minlength=size),
                "messages_received": np.bincount(receiver, minlength=size),
                "bytes_sent": np.bincount(sender, weights=bytes_each, minlength=size).astype(np.int64),
                "bytes_received": np.bincount(receiver, weights=bytes_each, minlength=size).astype(np.int64)}

    def local_order(self, rank: int) -> np.ndarray:
        """Indices of the units rank `rank` runs, in its order."""
        return np.nonzero(self.owner == rank)[0]


def _operands(units: np.ndarray, blocks: int) -> np.ndarray:
    """For each unit, the unit producing its a[i,k] and a[k,j] blocks after layer kb (-1: own block)."""
    kb, ib, jb = units.T
    index = np.full(blocks**3, -1, dtype=np.int64)
    index[(kb * blocks + ib) * blocks + jb] = np.arange(len(units))
    a_block = index[(kb * blocks + ib) * blocks + kb]
    b_block = index[(kb * blocks + kb) * blocks + jb]
    return np.column_stack([np.where(jb == kb, -1, a_block), np.where(ib == kb, -1, b_block)])


def check_plan(plan: DistributedPlan, rules: tuple[PredecessorRule, ...], what: str) -> None:
    """Prove the plan an MPI run executes (its emitted artefact) against the relaxed tile relation.

    `rules` are the readiness rules for the tile (tiling.tile_dependences), shown to order
    every pair of the tile relation; then, tile-layer by tile-layer, what each waits for
    reaches it: its own block's previous layer runs earlier on the same process (a block has
    one owner), and every other block it waits for is one of its operands at a layer at least
    as new, produced earlier in the plan's order (which every process follows, so no process
    waits for a later one: no deadlock) and, when produced on another process, sent to this
    one as that operand. A failure names the tile-layer and what it would miss.
    """
    units, blocks = plan.units, plan.blocks
    check_task_graph(units, plan.n, plan.tile, rules, what)
    owners = plan.grid.rank(units[:, 1], units[:, 2], blocks)
    if not np.array_equal(owners, plan.owner):
        v = int(np.nonzero(owners != plan.owner)[0][0])
        raise UnsafeCodeError(f"refusing {what}: T{units[v].tolist()} runs on process {int(plan.owner[v])}, not on "
                              f"its block's owner {int(owners[v])}")
    position = np.full(blocks**3, -1, dtype=np.int64)
    position[(units[:, 0] * blocks + units[:, 1]) * blocks + units[:, 2]] = np.arange(len(units))
    sent = {(int(producer), int(receiver)): int(kinds) for producer, receiver, kinds in plan.sends}
    for v, waited in enumerate(tile_predecessors(units, plan.n, plan.tile)):
        kb, ib, jb = (int(x) for x in units[v])
        for u in waited:
            uk, ui, uj = (int(x) for x in units[u])
            if (ui, uj) == (ib, jb):
                problem = None if u < v else f"its block's layer {uk} runs after it"
            else:
                problem = _operand_problem(plan, v, u, position, sent)
            if problem:
                raise UnsafeCodeError(f"refusing {what}: T{[kb, ib, jb]} waits for T{[uk, ui, uj]}, but {problem}")


def _operand_problem(plan: DistributedPlan, v: int, u: int, position: np.ndarray, sent: dict) -> str | None:
    """Why tile-layer v would not see tile-layer u's block at u's layer or newer, or None."""
    blocks = plan.blocks
    kb, ib, jb = (int(x) for x in plan.units[v])
    uk, ui, uj = (int(x) for x in plan.units[u])
    for column, kind, block in ((0, A_OPERAND, (ib, kb)), (1, B_OPERAND, (kb, jb))):
        if (ui, uj) != block or block == (ib, jb):
            continue
        producer = int(plan.operands[v, column])
        if producer != int(position[(kb * blocks + ui) * blocks + uj]) or kb < uk:
            return f"its {'a[i,k]' if column == 0 else 'a[k,j]'} operand is not block ({ui},{uj}) after layer {kb}"
        if producer > v:
            return f"that operand's layer runs after it (T{plan.units[producer].tolist()})"
        if plan.owner[producer] != plan.owner[v] and not sent.get((producer, int(plan.owner[v])), 0) & kind:
            return (f"block ({ui},{uj}) after layer {kb} is never sent from process {int(plan.owner[producer])} to "
                    f"process {int(plan.owner[v])}")
        return None
    return f"block ({ui},{uj}) is none of its operands"


def _lookahead_order(units: np.ndarray, operands: np.ndarray, owner: np.ndarray, urgent: np.ndarray,
                     seconds: np.ndarray, message: np.ndarray, processes: int) -> np.ndarray:
    """A list schedule of the units under the alpha-beta model: the process free first picks,
    among its tile-layers whose operands have arrived, an urgent one (its block goes to another
    process, now or after its next layer) before the others, else the schedule's order; when
    none has arrived it takes the first to arrive. The sequence of picks is a topological order
    of the operand and own-block relation, so every process's part is deadlock-free."""
    count = len(units)
    blocks = int(units[:, 1:].max()) + 1 if count else 0
    key = (units[:, 0] * blocks + units[:, 1]) * blocks + units[:, 2]
    position = np.full(blocks**3, -1, dtype=np.int64)
    position[key] = np.arange(count)
    following = np.where(units[:, 0] + 1 < blocks, position[np.minimum(key + blocks * blocks, blocks**3 - 1)], -1)
    successors: list[list[int]] = [[] for _ in range(count)]
    waiting = np.zeros(count, dtype=np.int64)
    for v in range(count):
        for u in operands[v]:
            if u >= 0:
                successors[u].append(v)
                waiting[v] += 1
        if following[v] >= 0:
            successors[v].append(int(following[v]))
            waiting[following[v]] += 1
    ready_at = np.zeros(count)
    arrivals = [[] for _ in range(processes)]   # heap of (ready time, unit) not yet ready by free[p]
    available = [[] for _ in range(processes)]  # heap of (priority, unit) ready by free[p]
    free = np.zeros(processes)
    for u in np.nonzero(waiting == 0)[0].tolist():
        heapq.heappush(arrivals[owner[u]], (0.0, u))
    turns = [(0.0, p) for p in range(processes) if arrivals[p]]
    heapq.heapify(turns)
    order: list[int] = []
    while turns:
        now, p = heapq.heappop(turns)
        if now != free[p] or not (arrivals[p] or available[p]):
            continue  # a stale turn
        while arrivals[p] and arrivals[p][0][0] <= free[p]:
            u = heapq.heappop(arrivals[p])[1]
            heapq.heappush(available[p], (not urgent[u], u))
        if not available[p]:
            start, u = heapq.heappop(arrivals[p])
            heapq.heappush(available[p], (not urgent[u], u))
            free[p] = start
        u = heapq.heappop(available[p])[1]
        order.append(u)
        free[p] += seconds[u]
        for v in successors[u]:
            remote = owner[v] != owner[u]
            ready_at[v] = max(ready_at[v], free[p] + (message[u] if remote else 0.0))
            waiting[v] -= 1
            if waiting[v] == 0:
                q = owner[v]
                heapq.heappush(arrivals[q], (ready_at[v], v))
                if q != p:
                    heapq.heappush(turns, (free[q], q))
        heapq.heappush(turns, (free[p], p))
    if len(order) != count:
        raise RuntimeError("the operand relation has a cycle; the schedule's order cannot be a topological one")
    return np.array(order, dtype=np.int64)


def _sends(units: np.ndarray, operands: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """(producer, receiver, operand kinds) for every operand read on another process than its owner's."""
    rows = []
    for column, kind in ((0, A_OPERAND), (1, B_OPERAND)):
        reader = np.nonzero(operands[:, column] >= 0)[0]
        producer = operands[reader, column]
        remote = owner[producer] != owner[reader]
        rows.append(np.column_stack([producer[remote], owner[reader][remote], np.full(remote.sum(), kind)]))
    table = np.concatenate(rows) if rows else np.zeros((0, 3), dtype=np.int64)
    if not len(table):
        return table.astype(np.int64)
    pair = table[:, 0] * (owner.max() + 1) + table[:, 1]
    unique, inverse = np.unique(pair, return_inverse=True)
    kinds = np.zeros(len(unique), dtype=np.int64)
    np.bitwise_or.at(kinds, inverse, table[:, 2])
    size = owner.max() + 1
    return np.column_stack([unique // size, unique % size, kinds]).astype(np.int64)


def tile_layers_in_order(schedule, runtime: str) -> StageView:
    """Every tile-layer of `schedule` (units (kb, ib, jb) and role marks) in the schedule's order:
    the one task list the runtimes that run tile-layers one by one start from (the dataflow
    runtime's priorities, the MPI plan's units); `runtime` names the one asking, in errors."""
    if schedule.n is None:
        raise ValueError(f"{schedule.name} is parametric in n; build it for a concrete n for {runtime}")
    if schedule.tile_tree is None or not schedule.original_point_order:
        raise ValueError(f"{runtime} runs tile-level schedules (the families); {schedule.name} is given "
                         "over points only")
    return stage_view(schedule.tile_tree, schedule.n, schedule.tile)


def plan_distribution(schedule, grid: Grid, lookahead: bool = True, network: Network | None = None
                      ) -> DistributedPlan:
    """The schedule's tile-layers placed on `grid`: order, owners, operands and messages.

    lookahead=False: every process runs its tile-layers in the schedule's order. True: in
    the order a list schedule under `network`'s model gives, which sends blocks others wait
    for as early as their operands allow (see _lookahead_order)."""
    network = Network() if network is None else network
    units = tile_layers_in_order(schedule, "the MPI runtime").units.astype(np.int64)
    n, tile = schedule.n, schedule.tile
    blocks = -(-n // tile)
    if len(units) != blocks**3 or len(np.unique((units[:, 0] * blocks + units[:, 1]) * blocks + units[:, 2])) \
            != blocks**3:
        raise ValueError(f"{schedule.name} does not run every tile-layer exactly once")
    operands = _operands(units, blocks)
    owner = grid.rank(units[:, 1], units[:, 2], blocks).astype(np.int64)
    if lookahead:
        sends = _sends(units, operands, owner)
        urgent = np.zeros(len(units), dtype=bool)
        urgent[sends[:, 0]] = True
        key = (units[:, 0] * blocks + units[:, 1]) * blocks + units[:, 2]
        position = np.full(blocks**3, -1, dtype=np.int64)
        position[key] = np.arange(len(units))
        previous = np.where(units[:, 0] > 0, position[np.maximum(key - blocks * blocks, 0)], -1)
        feeds = previous[urgent & (previous >= 0)]
        urgent[feeds] = True
        kb, ib, jb = (np.minimum(tile, n - tile * units[:, d]) for d in range(3))
        seconds = kb * ib * jb / network.rate
        message = network.message(ib * jb * network.itemsize)
        order = _lookahead_order(units, operands, owner, urgent, seconds, message, grid.size)
        renumber = np.empty(len(units), dtype=np.int64)
        renumber[order] = np.arange(len(units))
        units, owner = units[order], owner[order]
        operands = np.where(operands[order] >= 0, renumber[np.maximum(operands[order], 0)], -1)
    return DistributedPlan(n, tile, grid, lookahead, units, owner, operands, _sends(units, operands, owner))
