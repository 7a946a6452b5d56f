"""A fresh process pays only for what its call needs: a solve on a dense array or of a graph file
imports no sympy, CUDA, plotting, networkx or explorer, and no scipy.sparse for a dense array
(benchmarks/first_call.py times it)."""
import os
import subprocess
import sys

import numpy as np
import pytest

#: modules a call on a dense array must not import, with what each costs a fresh process
NOT_FOR_A_DENSE_CALL = ("sympy", "numba.cuda", "matplotlib", "networkx", "scipy.sparse", "polyfw.explore")
#: the same for `polyfw solve FILE`, which reads the file into scipy.sparse's arrays
NOT_FOR_THE_COMMAND = ("sympy", "numba.cuda", "matplotlib", "networkx", "polyfw.explore", "polyfw.comparison")

_LOADED = """
import sys
{call}
print(" ".join(sorted(name for name in {banned!r} if name in sys.modules)))
"""


def _loaded(call: str, banned: tuple[str, ...], cwd) -> list[str]:
    # in a user's process: the suite switches Numba's CUDA simulator on, and a process that simulates
    # CUDA loads it with codegen (codegen.gpu_semantics.interleave_threads)
    user = {name: value for name, value in os.environ.items() if name != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, "-c", _LOADED.format(call=call, banned=banned)], capture_output=True,
                          text=True, cwd=cwd, timeout=600, env=user)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1].split()  # (the last line: a command prints before it)


def test_a_dense_call_imports_only_what_it_runs(tmp_path):
    call = ("import numpy as np\nimport polyfw\n"
            "d = polyfw.solve(np.array([[0.0, 2.0, np.inf], [np.inf, 0.0, 1.0], [4.0, np.inf, 0.0]]))\n"
            "assert d.tolist() == [[0.0, 2.0, 3.0], [5.0, 0.0, 1.0], [4.0, 6.0, 0.0]], d")
    assert _loaded(call, NOT_FOR_A_DENSE_CALL, tmp_path) == []


def test_the_solve_command_imports_only_what_it_runs(tmp_path):
    graph = tmp_path / "small.gr"
    graph.write_text("p sp 3 3\na 1 2 2\na 2 3 1\na 3 1 4\n")
    call = ("from polyfw.cli import main\n"
            f"assert main(['solve', {str(graph)!r}, '-o', {str(tmp_path / 'd.npy')!r}]) == 0")
    assert _loaded(call, NOT_FOR_THE_COMMAND, tmp_path) == []
    assert np.load(tmp_path / "d.npy").tolist() == [[0.0, 2.0, 3.0], [5.0, 0.0, 1.0], [4.0, 6.0, 0.0]]


@pytest.mark.parametrize("name", ["NegativeCycleError", "Distance", "distance_vectors"])
def test_names_made_on_first_use_are_the_modules_own(name):
    """polyfw.errors and tiling give their lazily imported names as their modules define them."""
    import scipy.sparse.csgraph

    import polyfw
    import polyfw.graphs
    import tiling
    from polyfw import errors
    from tiling import distances

    if name == "NegativeCycleError":
        assert polyfw.NegativeCycleError is errors.NegativeCycleError
        assert issubclass(errors.NegativeCycleError, scipy.sparse.csgraph.NegativeCycleError)
        assert errors.NegativeCycleError.__qualname__ == "NegativeCycleError"
    else:
        assert getattr(tiling, name) is getattr(distances, name)
    for package in (errors, tiling, polyfw.graphs):
        with pytest.raises(AttributeError, match=f"module '{package.__name__}' has no attribute 'missing'"):
            package.missing  # noqa: B018
