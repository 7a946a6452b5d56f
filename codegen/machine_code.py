"""What a CUDA schedule compiles to, read without a GPU: PTX, ptxas's resources, the SASS hot loop.

numba-cuda compiles a kernel to PTX for any compute capability with no
device present (NVVM comes with its cu13 extra); only its device functions
ask the driver for the current device's compute capability, so while
compiling a stand-in answers with the architecture asked for. NVIDIA's
ptxas (PyPI: nvidia-cuda-nvcc) assembles the PTX and reports registers,
spills and shared memory; cuobjdump (nvidia-cuda-cuobjdump, which runs
nvidia-cuda-nvdisasm) prints the SASS an SM would run.

The hot loop is the innermost loop (a backward branch) holding the most
relaxations, one min or max instruction each: FMNMX (float), IMNMX or
VIMNMX, or VIADDMNMX (sm_90's add-then-min, a whole relaxation). Its
instructions per relaxation bound the share of an SM's issue rate a
kernel can turn into relaxations.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from typing import TYPE_CHECKING

from numba import cuda, types

from tiling.code_cache import cache_dir

if TYPE_CHECKING:
    from .cuda import CudaCompiledSchedule


@dataclass(frozen=True)
class Architecture:
    """An SM's limits that decide how many thread blocks it holds at once."""

    name: str
    compute_capability: tuple[int, int]
    registers: int = 65536
    shared_bytes: int = 228 * 1024
    threads: int = 2048
    blocks: int = 32
    #: shared memory the system keeps per thread block (sm_80 and later)
    reserved_shared_bytes: int = 1024


ARCHITECTURES = {
    "sm_80": Architecture("sm_80", (8, 0), shared_bytes=164 * 1024),
    "sm_90": Architecture("sm_90", (9, 0)),
}
#: SASS instructions that each finish one relaxation (the (+) of min-plus and max-plus)
RELAXING = ("FMNMX", "IMNMX", "VIMNMX", "VIADDMNMX")
_TOOL_PACKAGES = {"ptxas": "nvidia-cuda-nvcc", "cuobjdump": "nvidia-cuda-cuobjdump"}


def architecture(name: str) -> Architecture:
    if name not in ARCHITECTURES:
        raise ValueError(f"unknown GPU architecture {name!r}; known: {', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[name]


def tool(name: str) -> str:
    """The path of NVIDIA's `name`: from its PyPI package (nvidia/cu*/bin), whose version matches
    the NVVM that numba-cuda compiles with, else on PATH (an older toolkit may refuse newer PTX)."""
    with contextlib.suppress(ImportError):
        import nvidia

        for root in nvidia.__path__:
            for candidate in sorted(Path(root).glob(f"*/bin/{name}")):
                return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(f"{name} not found in Python's nvidia packages nor on PATH; install it with "
                            f"pip install {_TOOL_PACKAGES.get(name, name)}")


def _run_tool(name: str, *arguments: str) -> subprocess.CompletedProcess:
    done = subprocess.run([tool(name), *arguments], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{name} {' '.join(arguments)} failed: {done.stderr.strip() or done.stdout.strip()}")
    return done


class _StandInDevice:
    def __init__(self, compute_capability: tuple[int, int]) -> None:
        self.compute_capability = compute_capability


@contextlib.contextmanager
def _device_standing_in(compute_capability: tuple[int, int]):
    """numba-cuda compiles device functions for the current device's compute capability;
    without a GPU (or for another architecture) this answers for it while compiling."""
    from numba.cuda import dispatcher

    asked = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: _StandInDevice(compute_capability)
    try:
        yield
    finally:
        dispatcher.get_current_device = asked


def _signature(kernel, name: str, dtype: str) -> tuple:
    """Argument types of a generated kernel: the matrix, the status word, then integers."""
    matrix = types.Array(getattr(types, dtype), 2, "C")
    status = types.Array(types.int64, 1, "C")
    count = kernel.py_func.__code__.co_argcount
    if name == "run_call":  # (a, kernel, kb, ib, jb, n, status)
        return (matrix, *[types.int64] * (count - 2), status)
    return (matrix, status, *[types.int64] * (count - 2))


def kernel_ptx(compiled: "CudaCompiledSchedule", arch: str = "sm_90") -> dict[str, str]:
    """The PTX of every kernel a run of `compiled` (target 'cuda') may launch, by kernel name.

    Each is kept under cache_dir()/ptx, keyed by the kernel's own source (and the kernel module's,
    by its name, which holds its hash), the architecture and the compilers' versions: a report
    of a schedule seen before, or of another n whose kernels are the same, compiles nothing
    (compiling takes 1-10 s a kernel)."""
    if compiled.target != "cuda":
        raise ValueError(f"PTX is compiled from target 'cuda', not {compiled.target!r}")
    spec = architecture(arch)
    found = {}
    with _device_standing_in(spec.compute_capability):
        for name, (kernel, _) in compiled.kernels().items():
            bounds = kernel.targetoptions.get("launch_bounds")
            found[name] = _cached_ptx(_ptx_path(compiled.kernel_key(name), kernel.py_func.__name__, arch),
                                      lambda: cuda.compile_ptx(
                kernel.py_func, _signature(kernel, name, compiled.options.dtype), cc=spec.compute_capability,
                launch_bounds=bounds)[0])
    return found


def _cached_ptx(path: Path, compile_ptx) -> str:
    """The PTX kept at `path`, or compile_ptx()'s, kept there (written whole: a cut file is compiled again)."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        kept = path.read_text()
        if kept.rstrip().endswith("}"):
            return kept
    ptx = compile_ptx()
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(ptx)
    temporary.replace(path)
    return ptx


def _ptx_path(driver_source: str, kernel: str, arch: str) -> Path:
    compilers = []
    for package in ("numba-cuda", "nvidia-nvvm"):
        with contextlib.suppress(PackageNotFoundError):
            compilers.append(f"{package} {version(package)}")
    key = hashlib.sha256("\n".join([*compilers, arch, kernel, driver_source]).encode()).hexdigest()[:24]
    folder = cache_dir() / "ptx"
    folder.mkdir(exist_ok=True)
    return folder / f"{kernel}_{arch}_{key}.ptx"


def merged_ptx(modules: dict[str, str]) -> str:
    """One PTX module holding every kernel (what `polyfw emit --ptx` prints, for one ptxas call):
    the first module's header once, each module's shared arrays renamed apart, and what several
    modules define alike (a device function, Numba's environment variables) kept once."""
    merged: list[str] = []
    seen: set[str] = set()
    for number, (name, ptx) in enumerate(modules.items()):
        ptx = re.sub(r"\b_cudapy_smem_(\d+)\b", rf"_cudapy_smem_{number}_\1", ptx)
        merged.append(f"// ---- kernel {name}")
        lines = ptx.splitlines()
        if number:  # the header (.version, .target, .address_size) once
            lines = [line for line in lines if not line.startswith((".version", ".target", ".address_size"))]
        for item in _top_level_items(lines):
            text = "\n".join(item).strip()
            if text.strip() and text in seen:
                continue
            seen.add(text)
            merged.extend(item)
    return "\n".join(merged) + "\n"


#: what begins a module-level PTX item (a directive like .maxntid continues the entry before it)
_ITEM_STARTS = (".visible", ".entry", ".func", ".weak", ".common", ".global", ".extern", ".shared", ".const", "//")


def _top_level_items(lines: list[str]) -> list[list[str]]:
    """PTX split at its top level: each declaration, or function with its body."""
    items: list[list[str]] = [[]]
    depth = 0
    for line in lines:
        if depth == 0 and line.startswith(_ITEM_STARTS):
            items.append([])
        items[-1].append(line)
        depth += line.count("{") - line.count("}")
    return [item for item in items if item]


@dataclass(frozen=True)
class Instruction:
    address: int
    text: str

    @property
    def opcode(self) -> str:
        """The operation without predicate and modifiers: '@!P0 BRA 0x80' -> 'BRA'."""
        words = self.text.split()
        word = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
        return word.split(".")[0]

    @property
    def branch_target(self) -> int | None:
        match = re.search(r"\bBRA\b.*?0x([0-9a-f]+)", self.text)
        return int(match.group(1), 16) if match and self.opcode == "BRA" else None


def sass_instructions(sass: str) -> list[Instruction]:
    """The instructions of cuobjdump -sass output (one kernel), in address order."""
    found = []
    for line in sass.splitlines():
        match = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if match:
            found.append(Instruction(int(match.group(1), 16), match.group(2).strip()))
    return found


@dataclass(frozen=True)
class HotLoop:
    instructions: int
    relaxations: int

    @property
    def per_relaxation(self) -> float:
        return self.instructions / self.relaxations


def hot_loop(instructions: list[Instruction]) -> HotLoop | None:
    """The innermost loop (a span from a backward branch's target to the branch, holding no
    other such span) with the most relaxing instructions; None where no loop relaxes."""
    index = {instruction.address: number for number, instruction in enumerate(instructions)}
    loops = [(index[target], number) for number, instruction in enumerate(instructions)
             if (target := instruction.branch_target) is not None and target <= instruction.address
             and target in index]
    innermost = [(start, end) for start, end in loops
                 if not any(start <= s and e <= end and (s, e) != (start, end) for s, e in loops)]
    best = None
    for start, end in innermost:
        body = instructions[start:end + 1]
        relaxations = sum(instruction.opcode in RELAXING for instruction in body)
        if relaxations and (best is None or relaxations > best.relaxations):
            best = HotLoop(len(body), relaxations)
    return best


def outermost_loop(instructions: list[Instruction]) -> int | None:
    """The instructions of the widest loop (a backward branch's span, inner loops included; not the
    branch to itself that ends a kernel); None without one."""
    spans = [(instruction.branch_target, instruction.address) for instruction in instructions
             if instruction.branch_target is not None and instruction.branch_target < instruction.address]
    if not spans:
        return None
    first, last = max(spans, key=lambda span: span[1] - span[0])
    return sum(first <= instruction.address <= last for instruction in instructions)


@dataclass(frozen=True)
class KernelReport:
    """ptxas's resources and the SASS hot loop of one kernel."""

    name: str
    threads: int
    registers: int
    spill_stores: int
    spill_loads: int
    shared_bytes: int
    blocks_per_sm: int
    instructions: int
    loop: HotLoop | None
    #: its SASS, in address order
    listing: tuple[Instruction, ...] = ()
    #: the shared memory an SM gives its blocks under the carveout the kernel asks for
    carveout_bytes: int = 0

    @property
    def spills(self) -> int:
        return self.spill_stores + self.spill_loads

    @property
    def resident_warps(self) -> int:
        """Warps an SM holds at once: what hides the latency of loads and barriers (>= 16 on sm_90)."""
        return self.blocks_per_sm * -(-self.threads // 32)


def _resource(pattern: str, text: str) -> int:
    match = re.search(pattern, text)
    return int(match.group(1)) if match else 0


def carveout_bytes(spec: Architecture, carveout: str | int | None) -> int:
    """The shared memory an SM holds for its blocks under a kernel's shared_memory_carveout option
    (none given: the driver's choice, taken as all of it)."""
    if carveout is None or carveout in ("default", -1):
        return spec.shared_bytes
    percent = {"maxshared": 100, "maxl1": 0}.get(str(carveout).lower(), carveout)
    return int(spec.shared_bytes * int(percent) / 100)


def blocks_per_sm(spec: Architecture, threads: int, registers: int, shared_bytes: int,
                  carveout: int | None = None) -> int:
    """Thread blocks one SM holds at once: registers go to warps in units of 256, rows of 8; shared
    memory within the carveout (default: all the SM has)."""
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // 256) * 256
    by_registers = spec.registers // (per_warp * warps) if registers else spec.blocks
    by_shared = (spec.shared_bytes if carveout is None else carveout) // (shared_bytes + spec.reserved_shared_bytes)
    return min(by_registers, by_shared, spec.threads // (warps * 32), spec.blocks)


def assemble(name: str, ptx: str, threads: int, arch: str = "sm_90", carveout: str | int | None = None
             ) -> KernelReport:
    """Assemble one kernel's PTX with ptxas; read its resources and its SASS. carveout: the kernel's
    shared_memory_carveout option (None: the driver's choice)."""
    spec = architecture(arch)
    shared_limit = carveout_bytes(spec, carveout)
    with tempfile.TemporaryDirectory(prefix="polyfw-sass-") as folder:
        source, cubin = Path(folder, f"{name}.ptx"), Path(folder, f"{name}.cubin")
        source.write_text(ptx)
        # a kernel calling into the device runtime (a grid-wide barrier) is assembled relocatable: the
        # driver links the runtime at load time, and its resources are the kernel's own
        relocatable = ["-c"] if ".extern .func" in ptx else []
        assembled = _run_tool("ptxas", f"-arch={arch}", "-v", *relocatable, "-o", str(cubin), str(source))
        sass = _run_tool("cuobjdump", "-sass", str(cubin)).stdout
    info = assembled.stderr + assembled.stdout
    registers = _resource(r"Used (\d+) registers", info)
    shared = _resource(r"(\d+) bytes smem", info)
    instructions = sass_instructions(sass)
    return KernelReport(name, threads, registers, _resource(r"(\d+) bytes spill stores", info),
                        _resource(r"(\d+) bytes spill loads", info), shared,
                        blocks_per_sm(spec, threads, registers, shared, shared_limit), len(instructions),
                        hot_loop(instructions), tuple(instructions), shared_limit)


def gpu_report(compiled: "CudaCompiledSchedule", arch: str = "sm_90") -> list[KernelReport]:
    """Every kernel of a schedule compiled for target 'cuda', as an `arch` GPU would run it."""
    launches = compiled.kernels()
    assembled: dict[str, KernelReport] = {}  # bands that share a kernel are assembled once
    reports = []
    for name, ptx in kernel_ptx(compiled, arch).items():
        if ptx not in assembled:
            kernel, block = launches[name]
            assembled[ptx] = assemble(name, ptx, _threads(block), arch,
                                      kernel.targetoptions.get("shared_memory_carveout"))
        reports.append(dataclasses.replace(assembled[ptx], name=name))
    return reports


def _threads(block: tuple[int, ...]) -> int:
    count = 1
    for extent in block:
        count *= extent
    return count


def batch_report(compiled, arch: str = "sm_90", result_dtype: str | None = None) -> KernelReport:
    """The batch kernel (codegen.batch, target 'cuda': a graph per thread block) as an `arch` GPU
    would run it, writing a result of `result_dtype` (default: the dtype it computes in); its hot
    loop is one layer's relaxations of a thread's elements."""
    if compiled.target != "cuda":
        raise ValueError(f"PTX is compiled from target 'cuda', not {compiled.target!r}")
    vector = lambda dtype: types.Array(dtype, 1, "C")  # noqa: E731
    element, result = getattr(types, compiled.dtype), getattr(types, result_dtype or compiled.dtype)
    signature = (vector(types.int64), vector(types.int64), vector(types.int32), vector(types.int32),
                 vector(element), vector(result), vector(types.int64), vector(types.int64), vector(types.int64),
                 result, result, element, types.int64, types.int64, types.int64)
    return kernel_report("batch_run", compiled.run.py_func, signature, compiled.threads, arch,
                         (compiled.source, f"batch_run_{result_dtype or compiled.dtype}"))


def kernel_report(name: str, kernel, signature: tuple, threads: int, arch: str, key: tuple[str, str]
                  ) -> KernelReport:
    """A CUDA kernel (its dispatcher, whose launch bounds it keeps, or its Python function) compiled for
    `arch` with `signature` (types.*) and assembled. key: (its module's source, a name) to keep its PTX
    under the cache as every kernel's is."""
    spec = architecture(arch)
    source, label = key
    bounds = getattr(kernel, "targetoptions", {}).get("launch_bounds")
    with _device_standing_in(spec.compute_capability):
        ptx = _cached_ptx(_ptx_path(source, label, arch),
                          lambda: cuda.compile_ptx(getattr(kernel, "py_func", kernel), signature,
                                                   cc=spec.compute_capability, launch_bounds=bounds)[0])
    return assemble(name, ptx, threads, arch)
