"""The CUDA kernels' machine code, read without a GPU (codegen.machine_code, `polyfw gpu-report`).

The suite runs with Numba's CUDA simulator on; PTX comes from the real compiler, so the reports
run in a subprocess with the simulator off. ptxas and cuobjdump come from PyPI (the test extra).
"""
import json
import os
import subprocess
import sys

from codegen.machine_code import (ARCHITECTURES, Instruction, blocks_per_sm, hot_loop, merged_ptx, sass_instructions,
                                  tool)

#: SASS instructions per relaxation in the DD kernel's hot loop (issue 34's targets), by dtype
DD_TARGETS = {"float32": 2.3, "int32": 1.3}
#: every family at a size with a few tiles a side (a Rest stage for generalized: more blocks than kappa)
SCHEDULES = {
    "classic": (256, {"tile": 64}),
    "generalized": (256, {"tile": 64, "kappa": 2}),
    "recursive": (128, {"base": 64}),
    "naive": (16, {}),
}
NO_SIMULATOR = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}
#: one process for every family and dtype: the kernel module's device functions are typed once a dtype
REPORTS = """
import json, sys
import schedules
from codegen import generate
from codegen.machine_code import gpu_report
found = []
for family, (n, parameters) in json.loads(sys.argv[1]).items():
    for dtype in ("float32", "int32"):
        compiled = generate(schedules.build(family, n, **parameters), target="cuda", dtype=dtype)
        for report in gpu_report(compiled, "sm_90"):
            band = int(report.name.split("_")[1])
            found.append(dict(family=family, dtype=dtype, name=report.name, kind=compiled.band_kinds[band],
                              roles=sorted(map(str, compiled.band_roles[band])), spills=report.spills,
                              blocks_per_sm=report.blocks_per_sm, resident_warps=report.resident_warps,
                              per_relaxation=report.loop.per_relaxation))
print(json.dumps(found))
"""


def polyfw(*arguments: str) -> str:
    done = subprocess.run([sys.executable, "-m", "polyfw.cli", *arguments], env=NO_SIMULATOR, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_kernel_of_every_family_and_dtype_meets_the_machine_code_targets():
    done = subprocess.run([sys.executable, "-c", REPORTS, json.dumps(SCHEDULES)], env=NO_SIMULATOR,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    kernels = json.loads(done.stdout)
    assert {(k["family"], k["dtype"]) for k in kernels} == {(f, d) for f in SCHEDULES for d in DD_TARGETS}
    for kernel in kernels:
        assert kernel["spills"] == 0 and kernel["kind"] == "registers", kernel
    for family in set(SCHEDULES) - {"naive"}:  # points (1 x 1 tiles, a thread a task): the nest as written
        for dtype, target in DD_TARGETS.items():
            mine = [k for k in kernels if (k["family"], k["dtype"]) == (family, dtype)]
            products = [k for k in mine if k["roles"] == ["DD"]]
            assert products, f"{family} has a stage of DD tile-layers only"
            best = min(k["per_relaxation"] for k in products)
            assert best <= target, (family, dtype, best)
            # every kernel that holds DD tile-layers keeps 16 warps on an SM (launch bounds, staging, carveout)
            assert all(k["resident_warps"] >= 16 for k in mine if "DD" in k["roles"]), mine
            for kernel in mine:  # pivots and panels within twice the product's count
                assert kernel["per_relaxation"] <= 2 * best, kernel


def test_gpu_report_prints_each_kernel_and_counts_launches(tmp_path):
    report = tmp_path / "report.json"
    printed = polyfw("gpu-report", "classic", "--n", "200", "--dtype", "int32", "--json", str(report))
    assert "tile 64: 12 launches a run" in printed  # the cuda target's default tile; 4 block layers, 3 stages each
    written = json.loads(report.read_text())
    assert written["launches"] == 12 and [k["roles"] for k in written["kernels"]] == [["I"], ["SD_col", "SD_row"],
                                                                                        ["DD"]]
    assert all(kernel["spill_bytes"] == 0 for kernel in written["kernels"])
    assert written["kernels"][2]["per_relaxation"] <= DD_TARGETS["int32"]
    dd = written["kernels"][2]  # what decides speed beside the hot loop: warps, bytes and barriers per relaxation
    assert dd["resident_warps"] >= 16 and dd["carveout_bytes"] == 228 * 1024
    assert dd["global_bytes_per_relaxation"] == 4 * 4 / 64 and dd["shared_bytes_per_relaxation"] == 2 * 4 / 8 + 2 * 4 / 64
    assert 0 < dd["barriers_per_relaxation"] < 1e-4
    predicted = written["predicted"]  # the model fitted to the stored device measurements
    assert predicted["rows"] >= 10 and 0 < predicted["rate"] < 2e13 and "predicted:" in printed
    assert predicted["seconds"] >= written["launches"] * predicted["launch_seconds"]  # 12 launches of 200 x 200


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


PTX_CACHE = """
import schedules
from numba import cuda
from codegen import generate
import codegen.machine_code as machine_code
compiled = generate(schedules.build("classic", 64, tile=32), target="cuda", dtype="float32")
calls = []
compile_ptx = cuda.compile_ptx
machine_code.cuda.compile_ptx = lambda *a, **k: calls.append(a) or compile_ptx(*a, **k)
first = machine_code.kernel_ptx(compiled)
again = machine_code.kernel_ptx(compiled)
print(len(calls), again == first)
path = next(machine_code._ptx_path(compiled.source, "band_1", "sm_90").parent.glob("band_1_*"))
path.write_text(path.read_text()[:100])  # cut short: compiled again (Numba names it anew), kept whole
whole = machine_code.kernel_ptx(compiled)["band_1"]
print(len(calls), whole.rstrip().endswith("}") and path.read_text() == whole)
"""


def test_ptx_is_compiled_once_per_schedule_and_kept(tmp_path):
    done = subprocess.run([sys.executable, "-c", PTX_CACHE], env={**NO_SIMULATOR, "POLYFW_CACHE": str(tmp_path)},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3", "True", "4", "True"]


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


def test_gpu_report_reads_the_sparse_kernels(tmp_path):
    """The persistent search kernels (a grid-wide barrier: assembled relocatable, the device runtime
    linked at load time): none spills, each holds at least 32 warps an SM, and a search's loop over
    its levels holds the whole kernel."""
    report = tmp_path / "sparse.json"
    printed = polyfw("gpu-report", "--sparse", "--json", str(report))
    assert "sparse kernels, sm_90: a whole search a launch" in printed
    kernels = {kernel["name"]: kernel for kernel in json.loads(report.read_text())["kernels"]}
    assert set(kernels) == {f"{name}_{scope}" for name in ("bfs_search", "near_far_search")
                            for scope in ("grid", "block")}
    assert all(k["spill_bytes"] == 0 and k["blocks_per_sm"] * k["threads"] >= 32 * 32 for k in kernels.values())
    assert all(k["widest_loop"] > 0.8 * k["instructions"] for k in kernels.values())
