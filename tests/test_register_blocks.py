"""Register blocks: every shape that fits each ISA is exact, the measured choice is cached per CPU
and can be overridden, the kernels' k loop does not spill, and `polyfw info` shows the choice."""
import platform
import re
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pytest
from numba import njit

import schedules
from codegen import floyd_warshall_nest
from codegen.assembly import hot_loop, kernel_assembly, spill_report, stack_accesses
from codegen.cpu import generate_cpu
from codegen.intrinsics import (ISAS, host_isa, runnable_isas, semiring_block, target_isa, vector_registers,
                               vector_width)
from codegen.kernels import KernelOptions
from codegen import register_blocks
from codegen.register_blocks import (BlockChoice, choose_register_block, fitting_shapes, registers_needed,
                                     search_shapes)
from polyfw.graphs import as_dense, random_graph

# every test here depends on the ISA: `make test` runs them again under each narrower one the machine executes
pytestmark = pytest.mark.isa


def rows_that_fit(vectors: int, at_most: int) -> int:
    """The most rows, up to `at_most`, of a block `vectors` wide that fits the target ISA's registers."""
    return min(at_most, max(rows for rows, width in fitting_shapes() if width == vectors))


def _block_reference(a, rows, columns, i0, j0, k0, depth):
    expected = a.copy()
    c = expected[i0:i0 + rows, j0:j0 + columns]
    for k in range(k0, k0 + depth):
        np.minimum(c, expected[i0:i0 + rows, k:k + 1] + expected[k:k + 1, j0:j0 + columns], out=c)
    return expected


@pytest.mark.parametrize("isa, dtype", [("avx512", "float32"), ("avx512", "int32"), ("avx512", "float64"),
                                        ("avx2", "float32"), ("avx2", "int32"), ("sse2", "float32")])
def test_every_shape_that_fits_the_isa_is_exact(isa, dtype):
    # narrower ISAs' vectors run on this machine too (LLVM splits wider ones it lacks)
    if isa not in runnable_isas():
        pytest.skip(f"this machine ({host_isa()}) does not execute {isa}")
    rng = np.random.default_rng(7)
    for rows, vectors in fitting_shapes(isa):
        columns = vectors * vector_width(np.dtype(dtype).itemsize, isa)
        unroll = 2 if (rows + vectors) % 2 else 1  # half the shapes with k unrolled, over an odd depth
        block = semiring_block(rows, vectors, unroll=unroll, isa=isa)

        @njit
        def run(a, i0, j0, k0, depth):
            block(a, np.uint64(i0), np.uint64(j0), np.uint64(k0), np.uint64(depth))

        k0, depth, i0, j0 = 1, 7, 9, 10  # C apart from the rows and columns k, as in DD
        a = rng.integers(-20, 500, size=(i0 + rows + 2, j0 + columns + 3)).astype(dtype)
        expected = _block_reference(a, rows, columns, i0, j0, k0, depth)
        run(a, i0, j0, k0, depth)
        assert np.array_equal(a, expected), (rows, vectors, unroll)


def test_fitting_shapes_follow_the_register_file():
    # accumulators + a row of B + the broadcast + the sum before its min: 8 x 2 fits 32 registers and not 16,
    # 4 x 2 both; 4 x 3 and 14 x 1 would take all 16 and leave the sum none
    assert len(fitting_shapes("avx512")) == 45
    assert (8, 2) in fitting_shapes("avx512") and (8, 2) not in fitting_shapes("avx2")
    assert (4, 2) in fitting_shapes("avx2") and (13, 1) in fitting_shapes("avx2") and (6, 2) in fitting_shapes("avx2")
    assert (14, 1) not in fitting_shapes("avx2") and (4, 3) not in fitting_shapes("avx2")
    # the search skips blocks that leave most registers idle
    assert (1, 1) not in search_shapes("avx512") and (13, 2) in search_shapes("avx512")


@contextmanager
def forced_isa(isa):
    """POLYFW_ISA=isa for the block's duration (the ISA and the CPU key are cached per process)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("POLYFW_ISA", isa)
        target_isa.cache_clear(), register_blocks.cpu_key.cache_clear()
        try:
            yield
        finally:
            patch.undo()
            target_isa.cache_clear(), register_blocks.cpu_key.cache_clear()


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYFW_CACHE", str(tmp_path))
    monkeypatch.delenv("POLYFW_REGISTER_BLOCK", raising=False)
    return tmp_path


def test_the_block_is_measured_once_per_cpu_then_cached(empty_cache, monkeypatch):
    wide = (rows_that_fit(2, 8), 2)
    monkeypatch.setattr(register_blocks, "search_shapes", lambda isa=None: [(4, 1), wide])
    measured = choose_register_block("int32")
    assert measured.source == "measured" and (measured.rows, measured.vectors) in [(4, 1), wide]
    # both shapes with each order at the deepest pass, the leaders unrolled, the winner's prefetch
    # distances (passing by column strips) and passes, on a C as large as a DD layer's at n = 2048:
    # every candidate has a positive rate
    plain = {f"{rows}x{vectors}{order}d2" for rows, vectors in [(4, 1), wide] for order in ("", "r")}
    assert plain <= set(measured.rates) and min(measured.rates.values()) > 0
    assert len({label.replace("u2", "") for label in measured.rates if "u2" in label and "p" not in label} & plain) >= 3
    winner = BlockChoice(measured.rows, measured.vectors, measured.unroll, measured.prefetch)
    assert {replace(winner, panel_pass=way).label for way in register_blocks.PASS_CANDIDATES} <= set(measured.rates)
    # prefetch distances are searched where the leader passed by column strips (block rows prefetch nothing)
    strips = {replace(winner, panel_pass=(False, 2), prefetch=pair).label
              for pair in register_blocks.PREFETCH_CANDIDATES}
    assert strips <= set(measured.rates) or measured.prefetch == register_blocks.PREFETCH
    monkeypatch.setattr(register_blocks, "search", lambda *args, **kwargs: pytest.fail("searched twice"))
    cached = choose_register_block("int32")
    assert cached.source == "cached" and (cached.rows, cached.vectors, cached.unroll) == (
        measured.rows, measured.vectors, measured.unroll)
    assert (empty_cache / "register_blocks.json").read_text().count(register_blocks.cpu_key()) == 1
    options = KernelOptions("int32")
    assert options.register_block == (measured.rows, measured.vectors * vector_width(4))
    assert (options.unroll, options.prefetch, options.panel_pass) == (measured.unroll, measured.prefetch,
                                                                      measured.panel_pass)


def test_the_override_wins_and_names_a_bad_value(empty_cache, monkeypatch):
    monkeypatch.setattr(register_blocks, "search", lambda *args, **kwargs: BlockChoice(3, 1, source="measured"))
    monkeypatch.setenv("POLYFW_REGISTER_BLOCK", "int32:6x3")
    assert choose_register_block("int32") == BlockChoice(6, 3, source="override")
    assert choose_register_block("float32").source == "measured"  # not named: searched
    monkeypatch.setenv("POLYFW_REGISTER_BLOCK", "default")
    assert choose_register_block("float32").source == "default"
    monkeypatch.setenv("POLYFW_REGISTER_BLOCK", "6by3")
    with pytest.raises(ValueError, match="POLYFW_REGISTER_BLOCK: '6by3' is not a shape ROWSxVECTORS"):
        choose_register_block("int32")


@pytest.mark.parametrize("dtype, vectors, most_rows, unroll, prefetch", [("int32", 3, 6, 1, (0, 0)),
                                                                        ("float32", 4, 5, 2, (2, 16))])
def test_kernels_with_edge_blocks_stay_exact(dtype, vectors, most_rows, unroll, prefetch):
    # blocks that divide no tile: one-row blocks below, fewer vectors right, the nest's order for the
    # last columns short of a vector
    rows = rows_that_fit(vectors, most_rows)
    block = (rows, vectors * vector_width(np.dtype(dtype).itemsize))
    for n, tile in ((45, 16), (200, 40), (300, 128)):
        # arcs of both signs and INF (PolyBench's matrix, all ones to sevens, let a block-row pass that dropped
        # the rows below go by)
        matrix = as_dense(random_graph(n, m=6 * n, weights=(1, 40), seed=n, potential=8), dtype=dtype)
        expected = matrix.copy()
        floyd_warshall_nest(expected)
        schedule = schedules.build("generalized", n, tile=tile, kappa=2)
        generate_cpu(schedule, KernelOptions(dtype, register_block=block, unroll=unroll, prefetch=prefetch))(matrix)
        assert np.array_equal(matrix, expected), (n, tile)


@pytest.mark.parametrize("panel_pass", [(True, 1), (False, 2)])  # (False, 1) is the default, tested throughout
@pytest.mark.parametrize("runtime, family, params", [("barrier", "classic", {}),
                                                     ("dataflow", "generalized", {"kappa": 2})])
def test_passes_over_c_on_panels_stay_exact(panel_pass, runtime, family, params):
    """Products on micro-panels by block rows, and by column strips two strips deep, with blocks that
    divide no tile (rows below, vectors right) and calls deeper than a pass (tile 128, kappa 2)."""
    dtype, vectors = "int32", 3
    rows = rows_that_fit(vectors, 5)
    options = KernelOptions(dtype, register_block=(rows, vectors * vector_width(4)), panel_pass=panel_pass)
    n = 300
    matrix = as_dense(random_graph(n, m=6 * n, weights=(1, 40), seed=n, potential=8), dtype=dtype)  # negative arcs
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    schedule = schedules.build(family, n, tile=128, panels=True, **params)
    assert generate_cpu(schedule, options, runtime=runtime)(matrix) == -1
    assert np.array_equal(matrix, expected)


def test_a_pass_outside_the_searched_ones_is_named():
    with pytest.raises(ValueError, match=r"panel_pass must be one of \(False, 1\), .* got \(True, 3\)"):
        KernelOptions("int32", register_block=(4, vector_width(4)), panel_pass=(True, 3))


def test_a_prefetch_distance_outside_the_searched_ones_is_named():
    with pytest.raises(ValueError, match=r"prefetch must be \(register blocks ahead into L1: 0..4, into L2: "
                                         r"0..16\), got 3"):
        KernelOptions("int32", register_block=(4, vector_width(4)), prefetch=3)


def test_the_k_loop_keeps_its_block_in_registers():
    rows = rows_that_fit(2, 8)  # the largest two-vector block the ISA holds: 8 rows on AVX-512, 6 on AVX2
    instructions, min_max, spills, _ = spill_report(KernelOptions("int32", register_block=(rows, 2 * vector_width(4))))
    # one min per accumulator per k step (LLVM unrolls the k loop 2x by itself for some shapes and ISAs)
    assert min_max in (2 * rows, 4 * rows) and spills == 0 and instructions > min_max


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="reads x86 registers")
def test_the_k_loop_is_code_a_machine_of_the_isa_runs():
    """Under POLYFW_ISA=avx2 (or sse2) Numba compiles as for a machine of that ISA (tiling.code_cache's
    features): no wider register, none of the 16 that only AVX-512 adds, no VEX encoding on SSE2. Shapes and
    speeds measured that way are what such a machine gets."""
    isa = target_isa()
    loop = "\n".join(hot_loop(kernel_assembly(KernelOptions("int32", register_block=(4, 2 * vector_width(4))))))
    registers = set(re.findall(r"\b([xyz]mm)(\d+)", loop))
    assert registers, loop
    wider = {"avx512": set(), "avx2": {"zmm"}, "sse2": {"ymm", "zmm"}}[isa]
    assert not {kind for kind, _ in registers} & wider, loop
    if isa != "avx512":
        assert max(int(number) for _, number in registers) < 16, loop
    if isa == "sse2":
        assert not re.search(r"^\s+v\w+\s", loop, re.MULTILINE), loop

    @njit
    def added(a, b):  # a loop LLVM vectorizes as wide as the features allow
        for i in range(a.size):
            a[i] += b[i]

    added(np.zeros(256, np.float32), np.ones(256, np.float32))
    used = set(re.findall(r"\b[xyz]mm", next(iter(added.inspect_asm().values()))))
    assert {"avx512": "zmm", "avx2": "ymm", "sse2": "xmm"}[isa] in used and not used & wider, used


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int16"])
def test_the_nest_order_kernels_store_whole_vectors(dtype):
    """A vectorized a[i, j] = min(a[i, j], ...) whose min is a select of a compare becomes a masked store
    on x86 (vmaskmovps: 5x slower float pivots on Zen 1); semiring_keep's minnum stores plainly."""
    options = KernelOptions(dtype, register_block=(2, vector_width(np.dtype(dtype).itemsize)))
    for kernel in ("micro_rows", "relax_rows"):
        assembly = kernel_assembly(options, kernel)
        assert re.search(r"\bv?p?min\w*\s", assembly), kernel
        assert "maskmov" not in assembly, kernel


def test_a_block_measured_under_one_isa_is_never_read_under_another(empty_cache, monkeypatch):
    monkeypatch.setattr(register_blocks, "search", lambda *args, **kwargs: BlockChoice(4, 1, source="measured"))
    others = [isa for isa in runnable_isas() if isa != target_isa()]
    if not others:
        pytest.skip(f"this machine runs no ISA but {target_isa()}")
    assert choose_register_block("float32").source == "measured"
    for isa in others:
        with forced_isa(isa):
            assert register_blocks.cached_choice("float32") is None, isa
            assert isa in register_blocks.cpu_key()
    assert register_blocks.cached_choice("float32").source == "cached"


def test_a_cached_block_that_no_longer_fits_is_searched_again(empty_cache):
    """A shape measured under an older fit rule (one register fewer) is not read back, so no kernel refuses it."""
    with forced_isa("avx2") if "avx2" in runnable_isas() else pytest.MonkeyPatch.context():
        rows = vector_registers() // 4  # 4 x 3 on 16 registers: 12 + 3 + 1 fitted the old rule, not this one
        register_blocks._store("float32/min-plus", BlockChoice(rows, 3, source="measured"))
        fits = registers_needed(rows, 3) <= vector_registers()
        assert (register_blocks.cached_choice("float32") is not None) == fits
        register_blocks._store("float32/min-plus", BlockChoice(2, 2, source="measured"))
        assert register_blocks.cached_choice("float32").rows == 2


def test_a_block_too_large_for_the_registers_is_seen_spilling():
    rows = ISAS[target_isa()][1] // 2  # rows x 4 vectors: more accumulators than registers
    block = semiring_block(rows, 4)

    @njit
    def run(a, depth):
        block(a, np.uint64(0), np.uint64(0), np.uint64(0), depth)

    a = np.zeros((rows + 4, 4 * vector_width(4) + 4), dtype=np.float32)
    run(a, np.uint64(2))
    loop = hot_loop(next(iter(run.inspect_asm().values())))
    assert stack_accesses(loop) > 0


def test_hot_loop_picks_the_innermost_loop_with_most_minima():
    assembly = """f:
.LBB0_1:
\tvminps\t%zmm1, %zmm2, %zmm2
.LBB0_2:
\tvminps\t%zmm1, %zmm2, %zmm2
\tvmovups\t%zmm3, 64(%rsp)
\tmovq\t8(%rsp), %rbp
\tvminps\t(%rax), %zmm2, %zmm2
\tjne\t.LBB0_2
\tjmp\t.LBB0_1
"""
    loop = hot_loop(assembly)
    assert loop[0] == ".LBB0_2:" and loop[-1].strip().startswith("jne")
    assert stack_accesses(loop) == 1 and stack_accesses(loop, vectors=False) == 1


def test_hot_loop_is_the_block_not_an_edge_row_unrolled_further():
    """A one-row edge loop unrolled 4x has more min/max instructions than a 2 x 1 block's loop, but writes
    one accumulator, the block two."""
    edge = "".join(f"\tvpminsd\t%ymm0, %ymm{3 + u}, %ymm0\n" for u in range(4))
    assembly = f""".LBB0_1:
{edge}\tjne\t.LBB0_1
.LBB0_2:
\tvpminsd\t%ymm0, %ymm3, %ymm0
\tvpminsd\t%ymm1, %ymm4, %ymm1
\tjne\t.LBB0_2
"""
    assert hot_loop(assembly)[0] == ".LBB0_2:"


def test_info_shows_the_cpu_and_the_blocks(empty_cache, monkeypatch, capsys):
    from polyfw.cli import main

    monkeypatch.setattr(register_blocks, "search", lambda *args, **kwargs: BlockChoice(
        6, 3, 2, prefetch=(2, 8), panel_pass=(True, 2), source="measured", rates={"6x3u2": 5.0e10, "8x2": 4.0e10}))
    assert main(["info"]) == 0
    before = capsys.readouterr().out
    assert f"ISA: {target_isa()}" in before and "not measured yet" in before
    assert main(["info", "--measure"]) == 0
    after = capsys.readouterr().out
    assert ("int32     16 lanes  block 6 x 3 vectors (6 x 48), k unrolled 2x, C prefetched 2 blocks ahead into L1 and 8 into L2, "
            "products on micro-panels by block rows, 2 strips deep, measured; 50.0 G") in after \
        or target_isa() != "avx512"
