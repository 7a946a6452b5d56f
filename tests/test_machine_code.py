"""The CUDA kernels' machine code, read without a GPU (codegen.machine_code, `polyfw gpu-report`).

The suite runs with Numba's CUDA simulator on; PTX comes from the real compiler, so the reports
run in a subprocess with the simulator off. ptxas and cuobjdump come from PyPI (the test extra).
"""
import json
import os
import subprocess
import sys

import pytest

from codegen.machine_code import (ARCHITECTURES, Instruction, blocks_per_sm, hot_loop, merged_ptx, sass_instructions,
                                  tool)

#: SASS instructions per relaxation in the DD kernel's hot loop (issue 34's targets), by dtype
DD_TARGETS = {"float32": 2.3, "int32": 1.3}
#: every family at a size with a few tiles a side, as its kernels are generated for target cuda
SCHEDULES = {
    "classic": ["--n", "256", "--tile", "64"],
    "generalized": ["--n", "512", "--tile", "64", "--kappa", "4"],
    "recursive": ["--n", "256", "--base", "64"],
    "naive": ["--n", "16"],
}
NO_SIMULATOR = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}


def polyfw(*arguments: str) -> str:
    done = subprocess.run([sys.executable, "-m", "polyfw.cli", *arguments], env=NO_SIMULATOR, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("family", list(SCHEDULES))
def test_every_kernel_of_every_family_compiles_without_spills(tmp_path, family, dtype):
    report = tmp_path / "report.json"
    printed = polyfw("gpu-report", family, *SCHEDULES[family], "--dtype", dtype, "--json", str(report))
    kernels = json.loads(report.read_text())["kernels"]
    assert "per relaxation" in printed and len(kernels) >= 1
    for kernel in kernels:
        assert kernel["spill_bytes"] == 0, kernel
        assert kernel["blocks_per_sm"] >= 1, kernel
    assert {kernel["kind"] for kernel in kernels} == {"registers"}
    if family == "naive":  # points: 1 x 1 tiles, a thread a task, the nest as written
        return
    products = [kernel for kernel in kernels if kernel["roles"] == ["DD"]]
    assert products, "every blocked family has a stage of DD tile-layers only"
    best = min(kernel["per_relaxation"] for kernel in products)
    assert best <= DD_TARGETS[dtype]
    assert all(kernel["blocks_per_sm"] >= 2 for kernel in products)
    for kernel in kernels:  # pivots and panels within twice the product's count
        assert kernel["per_relaxation"] <= 2 * best, kernel


def test_emit_ptx_prints_one_module_that_ptxas_assembles(tmp_path):
    ptx = polyfw("emit", "classic", "--n", "256", "--tile", "64", "--target", "cuda", "--dtype", "int32", "--ptx",
                 "--arch", "sm_80")
    assert ptx.count(".version") == 1 and ptx.count(".entry") == 3 and ".target sm_80" in ptx
    source = tmp_path / "classic.ptx"
    source.write_text(ptx)
    assembled = subprocess.run([tool("ptxas"), "-arch=sm_80", "-v", "-o", str(tmp_path / "classic.cubin"),
                                str(source)], capture_output=True, text=True)
    assert assembled.returncode == 0, assembled.stderr
    assert assembled.stderr.count("Compiling entry function") == 3


def test_the_report_counts_launches_statically():
    printed = polyfw("gpu-report", "classic", "--n", "200", "--tile", "64", "--dtype", "float32")
    assert "12 launches a run" in printed  # 4 block layers, 3 stages each


def test_hot_loop_is_the_innermost_loop_with_the_most_relaxations():
    sass = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   FADD R2, R3, R4 ;
        /*0020*/                   FMNMX R5, R2, R5, PT ;
        /*0030*/              @P0 BRA 0x10 ;
        /*0040*/                   LDS.128 R8, [R9] ;
        /*0050*/                   VIADDMNMX R10, R11, R12, R10, PT ;
        /*0060*/                   VIADDMNMX R13, R11, R14, R13, PT ;
        /*0070*/                   IADD3 R9, R9, 0x10, RZ ;
        /*0080*/              @!P1 BRA 0x40 ;
        /*0090*/                   BRA 0x0 ;
        /*00a0*/                   EXIT ;
    """
    instructions = sass_instructions(sass)
    assert instructions[3] == Instruction(0x30, "@P0 BRA 0x10") and instructions[3].opcode == "BRA"
    loop = hot_loop(instructions)
    assert (loop.instructions, loop.relaxations, loop.per_relaxation) == (5, 2, 2.5)
    assert hot_loop(instructions[:2]) is None


def test_blocks_per_sm_by_registers_shared_memory_and_threads():
    sm_90 = ARCHITECTURES["sm_90"]
    assert blocks_per_sm(sm_90, threads=64, registers=168, shared_bytes=32768) == 6  # registers: 2 warps x 5376
    assert blocks_per_sm(sm_90, threads=256, registers=238, shared_bytes=0) == 1
    assert blocks_per_sm(sm_90, threads=64, registers=32, shared_bytes=100 * 1024) == 2  # shared memory
    assert blocks_per_sm(ARCHITECTURES["sm_80"], threads=64, registers=32, shared_bytes=100 * 1024) == 1
    assert blocks_per_sm(sm_90, threads=32, registers=16, shared_bytes=0) == 32  # the block limit


def test_merged_ptx_keeps_one_header_and_renames_shared_arrays_apart():
    module = """.version 9.5
.target sm_90
.address_size 64

.common .global .align 8 .u64 _ZN08NumbaEnv4same;
.visible .shared .align 4 .b8 _cudapy_smem_1[256];

.visible .entry {name}(
\t.param .u64 x
)
.maxntid 64, 1, 1
{{
\tst.shared.f32 [_cudapy_smem_1], %f1;
}}
"""
    merged = merged_ptx({"first": module.format(name="first"), "second": module.format(name="second")})
    assert merged.count(".version") == 1 and merged.count("NumbaEnv4same") == 1
    assert "_cudapy_smem_0_1[256]" in merged and "[_cudapy_smem_1_1]" in merged
    assert merged.count(".maxntid") == 2 and merged.index(".entry second") < merged.rindex(".maxntid")
