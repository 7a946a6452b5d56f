"""GPU semantics for Numba's CUDA simulator: the blocks of a launch as if they ran at once.

The simulator runs a launch's thread blocks one after another in index
order, so a block always sees what the blocks before it wrote: a missing
dependence between blocks of one launch (two tasks of a stage that must
not overlap) stays hidden and the result is exact. On a GPU the blocks
run at the same time. `ConcurrentBlocksMatrix` replays that worst case:
every block reads the matrix as it was when the launch began (plus its
own writes), and the writes of all blocks are merged when the launch
ends; two blocks writing different values to one element raise
`ConcurrentWriteError` (on a GPU one of the writes would be lost).
Reading an element another block writes in the same launch is allowed:
the relaxed model's benign race, which reads the old value here. An array
whose writes are atomic minima merges by 'min' (the smallest stands, as
on a GPU), and one whose every write is valid (a BFS parent: any frontier
vertex) by 'any'.

Within a block, a GPU interleaves its threads finely, where the simulator's Python threads each
ran up to Python's 5 ms switch interval alone: a missing barrier between a shared array's writers
and readers rarely showed, and the block's manager thread, which polls its threads while holding
the interpreter, left every barrier waiting for a slice's end. `interleave_threads` switches
threads every SIMULATED_SWITCH_SECONDS instead (4-5x faster simulated runs, measured on the
suite's CUDA tests).
"""
from __future__ import annotations

import sys
import threading

import numpy as np
from numba.cuda import types
from numba.cuda.np.numpy_support import as_dtype
from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
from numba.cuda.simulator.kernelapi import FakeCUDAShared

#: Python's switch interval while Numba's simulator is on (the interpreter's default: 5 ms)
SIMULATED_SWITCH_SECONDS = 5e-5


def interleave_threads() -> None:
    """Simulated threads switch every SIMULATED_SWITCH_SECONDS, as a GPU's threads interleave.

    The simulator names a shared array by the line that declares it, looks the name up and adds the
    array when missing, unlocked (numba-cuda 0.30): two threads switched between the two steps got
    an array each, and a block's threads stopped sharing it. So the lookup is made atomic first."""
    if not getattr(FakeCUDAShared.array, "atomic", False):
        unlocked, lock = FakeCUDAShared.array, threading.Lock()

        def array(self, shape, dtype, alignment=None):
            if shape == 0 or alignment is not None:  # dynamic shared memory, or the simulator's refusal
                return unlocked(self, shape, dtype, alignment)
            caller = sys._getframe(1)
            name = (caller.f_code.co_filename, caller.f_lineno)  # the simulator's own key
            with lock:
                if name not in self._allocations:
                    element = as_dtype(dtype) if isinstance(dtype, types.Type) else dtype
                    self._allocations[name] = np.empty(shape, element)
                return self._allocations[name]

        array.atomic = True
        FakeCUDAShared.array = array
    sys.setswitchinterval(SIMULATED_SWITCH_SECONDS)


class ConcurrentWriteError(RuntimeError):
    """Two thread blocks of one launch wrote different values to the same element."""


#: how the blocks' writes to one element meet when a launch ends: 'exclusive' (one block a value:
#: different values raise), 'min' (atomic minima: the smallest stands) or 'any' (any one stands)
MERGES = ("exclusive", "min", "any")


class ConcurrentBlocksMatrix(FakeCUDAArray):
    """A simulated device array whose blocks each work on a private copy during a launch.

    Streams that run at once (between fork and join) get the same treatment one level up: each
    starts from the matrix as it was at the fork, sees only its own launches' writes, and the
    streams' writes are merged at the join, two different values for one element raising.
    """

    def __init__(self, host: np.ndarray, merge: str = "exclusive") -> None:
        if merge not in MERGES:
            raise ValueError(f"merge must be one of {', '.join(MERGES)}, got {merge!r}")
        super().__init__(np.array(host, copy=True))
        self._merge = merge
        self._lock = threading.Lock()
        self._private: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] | None = None
        self._launch = ""
        #: between fork and join: the matrix at the fork, and each stream's (values, written)
        self._forked: np.ndarray | None = None
        self._streams: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._stream = 0

    def begin_launch(self, name: str) -> None:
        self._private, self._launch = {}, name

    def end_launch(self) -> None:
        """Merge the blocks' writes into the matrix; raise on two different values for one element."""
        blocks = sorted(self._private)
        written = self._merged(self._ary, [(str(block), *self._private[block]) for block in blocks],
                               f"{self._launch}: thread blocks")
        if self._forked is not None:
            self._streams[self._stream][1][...] |= written
        self._private = None

    def fork(self) -> None:
        """The streams used until join() run at once, each from the matrix as it is now."""
        self._forked, self._streams, self._stream = self._ary.copy(), {}, 0
        self.use_stream(0)

    def use_stream(self, number: int) -> None:
        """Launches from now on are the given stream's."""
        if self._forked is None:
            raise RuntimeError("use_stream() needs a fork() first: streams run at once only between fork and join")
        if number not in self._streams:
            self._streams[number] = (self._forked.copy(), np.zeros(self._ary.shape, dtype=bool))
        self._stream = number
        self._ary = self._streams[number][0]

    def join(self) -> None:
        """Merge the streams' writes into the matrix as it was at the fork."""
        merged, streams = self._forked, self._streams
        self._forked, self._streams, self._stream = None, {}, 0
        self._ary = merged
        self._merged(merged, [(str(number), *streams[number]) for number in sorted(streams)],
                     "a set of streams run at once: streams")

    def _merged(self, target: np.ndarray, pieces: list[tuple[str, np.ndarray, np.ndarray]], what: str) -> np.ndarray:
        """Write each piece's (name, values, written) into `target` by the merge rule; return where any
        piece wrote. `what` names the pieces in an error ('launch 3: thread blocks')."""
        merged, owner = target.copy(), np.full(target.shape, -1, dtype=np.int64)
        for number, (name, values, written) in enumerate(pieces):
            if self._merge == "min":
                values = np.where(owner >= 0, np.minimum(merged, values), values)
            clash = written & (owner >= 0) & (merged != values) & (self._merge == "exclusive")
            if clash.any():
                where = tuple(int(x) for x in np.argwhere(clash)[0])
                raise ConcurrentWriteError(
                    f"{what} {pieces[int(owner[where])][0]} and {name} both write a[{', '.join(map(str, where))}] "
                    f"({merged[where]} and {values[where]}); on a GPU one of the writes is lost")
            merged[written] = values[written]
            owner[written] = number
        target[...] = merged
        return owner >= 0

    def _block_copy(self) -> tuple[np.ndarray, np.ndarray] | None:
        if self._private is None:
            return None
        block = tuple(threading.current_thread().blockIdx)
        with self._lock:
            if block not in self._private:
                self._private[block] = (self._ary.copy(), np.zeros(self._ary.shape, dtype=bool))
            return self._private[block]

    def __getitem__(self, index):
        copy = self._block_copy()
        return super().__getitem__(index) if copy is None else copy[0][index]

    def __setitem__(self, index, value) -> None:
        copy = self._block_copy()
        if copy is None:
            super().__setitem__(index, value)
            if self._forked is not None:  # a write outside a launch, on a stream between fork and join
                self._streams[self._stream][1][index] = True
        else:
            copy[0][index] = value
            copy[1][index] = True
