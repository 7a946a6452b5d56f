"""Sets of streams: a set whose children hold stages of their own (classic with overlap, the
look-ahead) is proved as concurrent children, listed child by child, run on streams of their own by
the CUDA target and checked under the simulator with streams that run at once."""
import numpy as np
import pytest

import schedules
from codegen import floyd_warshall_nest, generate
from codegen.gpu_semantics import ConcurrentBlocksMatrix, ConcurrentWriteError
from polyfw.graphs import polybench_matrix
from schedules.families import CLASSIC_STAGES, from_spec
from schedules.legality import IllegalScheduleError, check
from schedules.tree import Band, Filter, Sequence_, stage

NEXT = "ib = kb or jb = kb"


def overlap_too_early() -> schedules.Schedule:
    """The look-ahead without its first step: the next pivot and panels run beside every product of
    this layer, the products on their row and column among them."""
    products = stage("classic.DD", "ib != kb and jb != kb", ("DD",))
    ahead = Sequence_(tuple(stage(f"classic.{name}", *CLASSIC_STAGES[name]) for name in ("I", "SD")))
    step = (("kb - 1", NEXT), ("kb", "ib != kb and jb != kb"))
    spec = Band((step,), False, Sequence_((products, Filter(NEXT, ahead)), unordered=True))
    return from_spec("too-early", spec, 12, 4)


def test_overlap_is_legal_for_every_n_and_lists_each_stream_in_turn():
    assert check(schedules.build("classic", None, 8, overlap=True)).model == "relaxed"
    schedule = schedules.build("classic", 20, 4, overlap=True)
    assert schedule.name == "classic(n=20, tile=4, overlap=True)"
    view = schedules.stage_view(schedule.tile_tree, 20, 4)
    starts = view.stage_start[:-1]
    kinds = [view.kinds[view.kind[s]] for s in starts]
    # layer 0's pivot and panels first, then per step the products beside the next pivot and panels
    assert kinds[:6] == ["classic.I", "classic.SD", "classic.DD", "classic.next_DD", "classic.I", "classic.SD"]
    assert [int(view.stream[s]) for s in starts[:6]] == [1, 1, 0, 1, 1, 1]
    assert [int(view.group[s]) for s in starts[:6]] == [0, 0, 1, 1, 1, 1]
    assert view.n_stages == 4 * 5 - 1 and len(view.units) == 125
    step = view.group == 2  # step 1: layer 1's products off rows and columns 1 and 2 on stream 0
    beside = view.units[step & (view.stream == 0)]
    assert {(int(i), int(j)) for _, i, j in beside} == {(i, j) for i in (0, 3, 4) for j in (0, 3, 4)}
    assert set(beside[:, 0]) == {1} and set(view.units[step & (view.stream == 1)][:, 0]) == {1, 2}


def test_running_the_next_pivot_beside_the_products_it_needs_is_refused_with_a_witness():
    with pytest.raises(IllegalScheduleError, match=r"relaxed dependence (W|R_row|R_col).* they run concurrently"):
        check(overlap_too_early())
    with pytest.raises(schedules.RefusedScheduleError):
        generate(overlap_too_early(), target="cudasim")


def test_the_cuda_target_runs_each_stream_on_its_own_and_is_exact_with_concurrent_blocks():
    schedule = schedules.build("classic", 10, 4, overlap=True)
    compiled = generate(schedule, target="cudasim", dtype="float32")
    assert compiled.source.count("launch.fork()") == 1 and "launch.use_stream(1)" in compiled.source
    # the proof covers the streams: their region runs every launch's thread blocks beside the other stream's
    assert compiled.workers["streams_0"].depths == compiled.workers["parallel_0"].depths != frozenset()
    matrix = polybench_matrix(10).astype("float32")
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    assert compiled(matrix, concurrent_blocks=True) == -1
    np.testing.assert_array_equal(matrix, expected)
    assert compiled.last_run["stages"] == compiled.launches() == 11


def test_streams_that_clash_are_caught_by_the_simulator():
    # the refused order, run anyway: stream 1's pivot and stream 0's product write one block at once
    compiled = generate(schedules.unsafe_run_unproved(overlap_too_early()), target="cudasim", dtype="float32")
    matrix = polybench_matrix(12).astype("float32")
    with pytest.raises(ConcurrentWriteError, match=r"a set of streams run at once: streams 0 and 1 both write "
                                                   r"a\[4, 4\]"):
        compiled(matrix, concurrent_blocks=True)


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize("n", [1, 9, 13])
def test_overlap_is_exact_on_the_cpu_targets(target, n):
    schedule = schedules.build("classic", n, 4, overlap=True)
    matrix = polybench_matrix(n).astype("float64")
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    assert generate(schedule, target=target, dtype="float64")(matrix) == -1
    np.testing.assert_array_equal(matrix, expected)


def test_simulated_streams_start_from_the_fork_and_merge_at_the_join():
    matrix = ConcurrentBlocksMatrix(np.zeros((2, 2)))
    matrix.fork()
    matrix[0, 0] = 1.0
    matrix.use_stream(1)
    assert matrix[0, 0] == 0.0  # stream 1 does not see stream 0's write
    matrix[1, 1] = 2.0
    matrix.join()
    np.testing.assert_array_equal(matrix.copy_to_host(), [[1.0, 0.0], [0.0, 2.0]])
    matrix.fork()
    matrix[0, 1] = 3.0
    matrix.use_stream(1)
    matrix[0, 1] = 4.0
    with pytest.raises(ConcurrentWriteError, match=r"streams 0 and 1 both write a\[0, 1\] \(3.0 and 4.0\)"):
        matrix.join()
    with pytest.raises(RuntimeError, match="use_stream\\(\\) needs a fork\\(\\) first"):
        ConcurrentBlocksMatrix(np.zeros(1)).use_stream(1)
