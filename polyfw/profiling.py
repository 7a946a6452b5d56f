"""Where a `solve` call's time goes: its phases, and inside the run each tile role's share.

    with profiled() as profile:
        solve(graph, dtype="int32")
    print(profile.table())

solve marks its phases (reading the input, its plan: choosing and compiling the schedule,
the run, the result's conversion); the run is split further by
codegen.profile (pivot, panels, DD, waiting in stages, between stages). The
parts add up to the call's wall time: the rest of the call, if any, is shown
as 'other'. Outside `profiled()` a phase mark costs one context-variable read.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field

from codegen.profile import RunProfile, run_profile

_ACTIVE: ContextVar[SolveProfile | None] = ContextVar("polyfw_solve_profile", default=None)


@dataclass
class SolveProfile:
    """Seconds by phase of the calls made inside `profiled()`, and the last run's role profile."""

    phases: dict[str, float] = field(default_factory=dict)
    run: RunProfile | None = None
    seconds: float = 0.0

    def parts(self) -> dict[str, float]:
        """Every phase, the run replaced by its parts where it was profiled, and 'other' (the
        call's time outside every phase): they add up to `seconds`."""
        parts: dict[str, float] = {}
        for name, seconds in self.phases.items():
            if name == "run" and self.run is not None:
                parts |= {f"run: {part}": value for part, value in self.run.parts.items()}
                parts["run: call overhead"] = seconds - self.run.seconds
            else:
                parts[name] = seconds
        parts["other"] = self.seconds - sum(self.phases.values())
        return parts

    def table(self, relaxations: float | None = None) -> str:
        lines = [f"  {name:30s} {seconds * 1e3:9.2f} ms {seconds / self.seconds:6.1%}"
                 for name, seconds in self.parts().items()]
        rate = f", {relaxations / self.seconds / 1e9:.1f} G relaxations/s" if relaxations else ""
        return "\n".join(lines + [f"  {'solve':30s} {self.seconds * 1e3:9.2f} ms{rate}"])


@contextmanager
def profiled() -> Iterator[SolveProfile]:
    """Profile the solve calls inside the block (their phases add up; the last run is split by role)."""
    profile = SolveProfile()
    token = _ACTIVE.set(profile)
    started = time.perf_counter()
    try:
        yield profile
    finally:
        profile.seconds = time.perf_counter() - started
        _ACTIVE.reset(token)


#: what phase gives outside profiled(): entering and leaving it does nothing
_UNTIMED = nullcontext()


def phase(name: str) -> AbstractContextManager[None]:
    """Count the block's seconds under `name` when a profile is being taken (else one shared do-nothing
    context: a small call enters six phases, and a generator-based one cost ~4 us each)."""
    profile = _ACTIVE.get()
    return _UNTIMED if profile is None else _timed(profile, name)


@contextmanager
def _timed(profile: SolveProfile, name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        profile.phases[name] = profile.phases.get(name, 0.0) + time.perf_counter() - started


def note_run(last_run: dict) -> None:
    """Keep a compiled run's role profile, when one is being taken and the run has one."""
    profile = _ACTIVE.get()
    if profile is not None and last_run.get("profile") is not None:
        profile.run = run_profile(last_run)
