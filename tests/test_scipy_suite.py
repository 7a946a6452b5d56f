"""scipy's own shortest-path tests pass through polyfw's drop-ins.

The installed scipy's sparse/csgraph/tests/test_shortest_path.py (found through the import
system, not copied) runs in a pytest subprocess with tests/scipy_dropin_plugin.py, which routes
scipy.sparse.csgraph's shortest_path, floyd_warshall, dijkstra, bellman_ford and johnson to
polyfw's; the rest of the file (yen, construct_dist_matrix) stays scipy's. Every test the file
has must run and pass. Property tests then hold the drop-ins to scipy's exact distances (and
output shapes and dtypes) on integer weights beyond the file's fixed graphs.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import polyfw

HERE = Path(__file__).resolve().parent
#: the tests scipy 1.17.1's file holds (constraints.txt pins it): 81 through the drop-ins, 9 of yen
AT_LEAST = 90


def scipy_root() -> Path:
    return Path(importlib.util.find_spec("scipy").submodule_search_locations[0])


def _pytest(tmp_path: Path, *arguments: str, plugin: bool, **environment: str) -> subprocess.CompletedProcess:
    """pytest on scipy's file, rooted in scipy's package (its conftest.py applies, this project's
    configuration does not)."""
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n")
    # the plugin, and the very polyfw (with tiling, codegen, schedules) this process imported
    path = [str(HERE), str(Path(polyfw.__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")]
    env = {**os.environ, **environment, "OMP_WAIT_POLICY": "passive", "PYTHONPATH": os.pathsep.join(filter(None, path))}
    command = [sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(scipy_root()),
               "-p", "no:cacheprovider", *(["-p", "scipy_dropin_plugin"] if plugin else []), *arguments,
               str(scipy_root() / "sparse" / "csgraph" / "tests" / "test_shortest_path.py")]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)


def test_scipys_shortest_path_tests_pass_through_the_drop_ins(tmp_path):
    listed = _pytest(tmp_path, "--collect-only", "-q", plugin=False)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    in_file = sum(1 for line in listed.stdout.splitlines() if "::" in line)
    assert in_file >= AT_LEAST, listed.stdout

    report, calls = tmp_path / "junit.xml", tmp_path / "calls.json"
    run = _pytest(tmp_path, "-q", "-rfE", f"--junitxml={report}", plugin=True, SCIPY_DROPIN_REPORT=str(calls))
    output = run.stdout[-6000:] + run.stderr[-3000:]
    assert report.exists(), output
    suite = ElementTree.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    counts = {key: int(suite.get(key)) for key in ("tests", "failures", "errors", "skipped")}
    assert counts["failures"] == counts["errors"] == counts["skipped"] == 0, output
    assert counts["tests"] == in_file, (counts, in_file, output)
    assert run.returncode == 0, output

    # the routing took: the file's names are polyfw's, and each was called
    found = json.loads(calls.read_text())
    held = found["held"]["scipy.sparse.csgraph.tests.test_shortest_path"]
    assert {"shortest_path", "dijkstra", "johnson", "bellman_ford"} <= set(held), held
    assert all(found["calls"][name] > 0 for name in held), found["calls"]


# ---------------------------------------------------------------- beyond scipy's file: equal results


@st.composite
def problems(draw):
    """A graph scipy reads (dense with 0 or inf for no edge, or CSR with explicit zeros), integer
    weights, negative ones only through vertex potentials (no negative directed cycle)."""
    n = draw(st.integers(1, 12))
    edge = draw(arrays(np.bool_, (n, n)))
    weight = draw(arrays(np.int64, (n, n), elements=st.integers(0, 9)))
    negative = draw(st.booleans())
    if negative:
        potential = draw(arrays(np.int64, n, elements=st.integers(0, 6)))
        weight = weight + potential[:, None] - potential[None, :]
    if draw(st.booleans()):
        rows, cols = np.nonzero(edge)
        graph = sp.csr_array((weight[rows, cols].astype(np.float64), (rows, cols)), shape=(n, n))
    else:
        graph = np.where(edge, weight, draw(st.sampled_from([0.0, np.inf])))
    indices = draw(st.sampled_from([None, "one", "list", "grid"]))
    chosen = {None: None, "one": draw(st.integers(-n, n - 1)),
              "list": draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4)),
              "grid": np.array(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2))).reshape(2, 1)}[indices]
    return graph, chosen, bool(negative)


def _both(function: str, graph, **options):
    """scipy's and polyfw's answers (or the NegativeCycleError each raised)."""
    answers = []
    for module in (csgraph, polyfw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                answers.append(getattr(module, function)(graph, **options))
            except csgraph.NegativeCycleError as error:
                answers.append(error)
    return answers


def _valid_predecessors(graph, directed: bool, distances, predecessors) -> None:
    """Each predecessor is the last edge of a shortest path (ties may pick another than scipy's):
    dist[i, p] + w(p, j) == dist[i, j] with w as scipy reads it (dense 0 and inf: no edge; sparse:
    the explicit entries, explicit zeros too)."""
    if sp.issparse(graph):
        weight = np.full(graph.shape, np.inf)
        coo = graph.tocoo()
        weight[coo.row, coo.col] = coo.data
    else:
        weight = np.where(graph == 0, np.inf, graph)
    if not directed:
        weight = np.minimum(weight, weight.T)
    rows, cols = np.nonzero(predecessors != -9999)
    through = predecessors[rows, cols]
    np.testing.assert_array_equal(distances[rows, through] + weight[through, cols], distances[rows, cols])
    assert np.isfinite(distances[predecessors == -9999]).sum() == distances.shape[0]  # only i -> i


@given(problems(), st.sampled_from(["auto", "FW", "D", "BF", "J"]), st.booleans(), st.booleans())
def test_the_drop_ins_give_scipys_distances_on_integer_weights(problem, method, directed, unweighted):
    graph, indices, negative = problem
    if method == "FW":
        indices = None
    if method == "D" and negative and not unweighted:
        method = "J"  # scipy's Dijkstra is documented inaccurate with negative weights
    options = {"method": method, "directed": directed, "unweighted": unweighted, "indices": indices}
    theirs, mine = _both("shortest_path", graph, return_predecessors=True, **options)
    if isinstance(theirs, Exception):
        assert isinstance(mine, csgraph.NegativeCycleError), mine
        return
    assert mine[0].dtype == theirs[0].dtype and mine[1].dtype == theirs[1].dtype
    assert mine[0].shape == theirs[0].shape and mine[1].shape == theirs[1].shape
    np.testing.assert_array_equal(mine[0], theirs[0])
    np.testing.assert_array_equal(mine[1] == -9999, theirs[1] == -9999)
    if indices is None and not unweighted:
        _valid_predecessors(graph, directed, mine[0], mine[1])
    for function in ("bellman_ford", "johnson") + (() if negative else ("dijkstra",)):
        theirs, mine = _both(function, graph, directed=directed, unweighted=unweighted, indices=indices)
        if isinstance(theirs, Exception):
            assert isinstance(mine, csgraph.NegativeCycleError), (function, mine)
        else:
            assert mine.shape == theirs.shape, function
            np.testing.assert_array_equal(mine, theirs, err_msg=function)


@given(problems(), st.booleans(), st.sampled_from([0, 3, 7.5, np.inf]))
def test_dijkstra_limit_and_min_only_are_scipys(problem, directed, limit):
    graph, indices, negative = problem
    if negative:
        graph = abs(graph) if not sp.issparse(graph) else sp.csr_array(abs(graph))
    options = {"directed": directed, "indices": indices, "limit": limit}
    theirs, mine = _both("dijkstra", graph, return_predecessors=True, **options)
    np.testing.assert_array_equal(mine[0], theirs[0])
    np.testing.assert_array_equal(mine[1] == -9999, theirs[1] == -9999)
    theirs, mine = _both("dijkstra", graph, return_predecessors=True, min_only=True, **options)
    assert len(mine) == 3 and all(a.shape == b.shape and a.dtype == b.dtype for a, b in zip(mine, theirs))
    distances, predecessors, sources = mine
    np.testing.assert_array_equal(distances, theirs[0])
    np.testing.assert_array_equal(sources == -9999, theirs[2] == -9999)
    # each vertex hangs from a source at its distance, and its predecessors lead there
    full = csgraph.dijkstra(graph, directed=directed)
    starts = np.unique(np.arange(graph.shape[0]) if indices is None else
                       np.atleast_1d(indices).ravel() % graph.shape[0])
    for v in np.flatnonzero(sources != -9999):
        assert sources[v] in starts and full[sources[v], v] == distances[v]
        walk, steps = v, 0
        while predecessors[walk] != -9999:
            walk, steps = predecessors[walk], steps + 1
            assert sources[walk] == sources[v] and steps <= graph.shape[0]
        assert walk == sources[v]
    np.testing.assert_array_equal(_both("dijkstra", graph, min_only=True, **options)[1], distances)
