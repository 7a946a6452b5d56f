"""`polyfw info`: the CPU the kernels are shaped for and the register blocks chosen on it."""
from __future__ import annotations

import numba
import numpy as np

from codegen.intrinsics import vector_width
from codegen.register_blocks import (BlockChoice, cached_choice, choose_register_block, cpu_description, cpu_key,
                                     override, pass_words)
from tiling.code_cache import cache_dir

from ..graphs import SHORTEST_PATH_DTYPES


def _choice(dtype: str, measure: bool) -> BlockChoice | None:
    chosen = override(dtype)
    if chosen is not None:
        return chosen
    if measure:
        return choose_register_block(dtype)
    return cached_choice(dtype)


def machine_report(measure: bool = False,
                   dtypes: tuple[str, ...] = tuple(d.name for d in SHORTEST_PATH_DTYPES)) -> str:
    """CPU, ISA, vector width and registers; per dtype the min-plus register block and its measured
    rate (one thread, and times the threads: the kernels' own ceiling on this machine). `polyfw info`
    prints what is registered below it (polyfw.cli.registry_tables)."""
    cpu = cpu_description()
    threads = numba.get_num_threads()
    lines = [f"CPU: {cpu['model']} (LLVM: {cpu['llvm_cpu']}), {cpu['cores']} cores, {threads} Numba threads",
             f"ISA: {cpu['isa']}, {cpu['vector_bytes']}-byte vectors, {cpu['vector_registers']} vector registers",
             f"register blocks cached in {cache_dir() / 'register_blocks.json'} under {cpu_key()}"]
    for dtype in dtypes:
        lanes = vector_width(np.dtype(dtype).itemsize)
        choice = _choice(dtype, measure)
        if choice is None:
            lines.append(f"  {dtype:8s} {lanes:3d} lanes  block not measured yet (the first kernel compile, or "
                         f"`polyfw info --measure`, measures it)")
            continue
        line = (f"  {dtype:8s} {lanes:3d} lanes  block {choice.rows} x {choice.vectors} vectors "
                f"({choice.rows} x {choice.vectors * lanes}), k unrolled {choice.unroll}x, "
                f"C prefetched {choice.prefetch[0]} blocks ahead into L1 and {choice.prefetch[1]} into L2, "
                f"products on micro-panels by {pass_words(choice.panel_pass)}, {choice.source}")
        if choice.rates:
            best = max(choice.rates.values())
            line += (f"; {best / 1e9:.1f} G relaxations/s on one thread ({best * threads / 1e9:.1f} G on "
                     f"{threads}), best of {len(choice.rates)} candidates")
        lines.append(line)
    return "\n".join(lines)
