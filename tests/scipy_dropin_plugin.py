"""pytest plugin: scipy's shortest-path functions replaced by polyfw's drop-ins.

Load it with `-p scipy_dropin_plugin` (this folder on PYTHONPATH) when running scipy's own
installed tests (tests/test_scipy_suite.py does). The five functions of ROUTED are replaced in
scipy.sparse.csgraph as the plugin loads, before any test module is imported, so a test module's
`from scipy.sparse.csgraph import dijkstra` gets polyfw's; after collection every collected
module's globals are checked and patched too (a module imported earlier would still hold
scipy's), and a test that would still call one of scipy's fails. Everything else (yen,
construct_dist_matrix, NegativeCycleError, ...) stays scipy's.

Each drop-in is wrapped to count its calls from the tests; with SCIPY_DROPIN_REPORT set to a
path the counts, and which routed names each test module holds, are written there as JSON.
"""
from __future__ import annotations

import functools
import json
import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("POLYFW_REGISTER_BLOCK", "default")

import scipy.sparse.csgraph as csgraph  # noqa: E402

import polyfw  # noqa: E402

ROUTED = ("shortest_path", "floyd_warshall", "dijkstra", "bellman_ford", "johnson")
SCIPY = {name: getattr(csgraph, name) for name in ROUTED}
CALLS = dict.fromkeys(ROUTED, 0)
HELD: dict[str, list[str]] = {}


def _counted(name: str):
    drop_in = getattr(polyfw, name)

    @functools.wraps(drop_in)
    def call(*args, **kwargs):
        CALLS[name] += 1
        return drop_in(*args, **kwargs)

    return call


DROP_INS = {name: _counted(name) for name in ROUTED}
for _name, _drop_in in DROP_INS.items():
    setattr(csgraph, _name, _drop_in)


def pytest_report_header(config):
    return f"scipy.sparse.csgraph routed to polyfw: {', '.join(ROUTED)}"


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        module = getattr(item, "module", None)
        if module is None or module.__name__ in HELD:
            continue
        for name in ROUTED:
            if module.__dict__.get(name) is SCIPY[name]:
                setattr(module, name, DROP_INS[name])
        HELD[module.__name__] = [name for name in ROUTED if module.__dict__.get(name) is DROP_INS[name]]


def pytest_runtest_call(item):
    module = getattr(item, "module", None)
    for name in ROUTED:
        if module is not None and module.__dict__.get(name) is SCIPY[name]:
            raise AssertionError(f"{module.__name__}.{name} is still scipy's, not polyfw's drop-in")


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("SCIPY_DROPIN_REPORT")
    if path:
        with open(path, "w") as handle:
            json.dump({"calls": CALLS, "held": HELD}, handle)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line("polyfw drop-in calls: " + ", ".join(f"{k}={v}" for k, v in CALLS.items()))
