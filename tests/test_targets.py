"""Targets are plug-ins: a registry of declared dtypes and options; 'python' is an independent oracle."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import schedules
from codegen import floyd_warshall_nest, generate
from codegen.targets import TARGETS, Target, register
from polyfw import solve
from polyfw.cli import build_parser
from polyfw.graphs import as_dense, polybench_matrix, random_graph

FAMILIES = [("classic", {"tile": 8}), ("generalized", {"tile": 8, "kappa": 3}),
            ("generalized", {"tile": 8, "kappa": 2, "variant": "fused"}), ("recursive", {"base": 8}),
            ("recursive", {"base": 4, "paired": False}), ("naive", {})]


def test_every_target_declares_its_dtypes_and_options():
    assert list(TARGETS) == ["cpu", "cuda", "cudasim", "mpi", "python"]
    assert [option.name for option in TARGETS["cuda"].options] == ["method", "sub_tile", "per_block", "t_prime"]
    assert [option.name for option in TARGETS["mpi"].options] == ["grid", "placement", "lookahead", "skip_inf",
                                                                   "threads", "predecessors", "unreachable_from",
                                                                   "register_block"]
    assert TARGETS["cuda"].options == TARGETS["cudasim"].options and TARGETS["python"].options == ()
    with pytest.raises(ValueError, match="unknown target 'tpu'; available: cpu, cuda, cudasim, mpi, python"):
        generate(schedules.build("classic", 8, tile=4), target="tpu")
    with pytest.raises(ValueError, match="target 'python' has no option method; its options: none"):
        generate(schedules.build("classic", 8, tile=4), target="python", method="A")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("family, params", FAMILIES)
def test_python_target_reproduces_the_nest(family, params, dtype):
    compiled = generate(schedules.build(family, 21, **params), target="python", dtype=dtype)
    matrix = polybench_matrix(21).astype(dtype)
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    assert compiled(matrix) == -1 and compiled.last_run["statements"] > 0
    np.testing.assert_array_equal(matrix, expected)
    assert "numba" not in compiled.source  # plain Python: nothing shared with the compiled targets' kernels


@given(n=st.integers(1, 40), tile=st.integers(2, 9), family=st.sampled_from(["classic", "generalized", "recursive"]),
       seed=st.integers(0, 2**16), dtype=st.sampled_from(["float32", "int32"]))
def test_cpu_target_agrees_with_the_python_oracle(n, tile, family, seed, dtype):
    params = {"generalized": {"tile": tile, "kappa": min(3, -(-n // tile))},
              "classic": {"tile": tile}, "recursive": {"base": tile}}[family]
    graph = random_graph(n, m=min(3 * n, n * (n - 1)), weights=(1, 20), seed=seed, potential=8)
    schedule = schedules.build(family, n, **params)
    results = {}
    for target in ("cpu", "python"):
        matrix = as_dense(graph, dtype=dtype)
        assert generate(schedule, target=target, dtype=dtype)(matrix) == -1
        results[target] = matrix
    np.testing.assert_array_equal(results["cpu"], results["python"])


@pytest.mark.parametrize("family, params", FAMILIES[:-1])
def test_mpi_target_in_one_process_reproduces_the_nest(family, params):
    """Outside mpiexec the world is one process (a 1 x 1 grid); tests/test_mpi.py runs 2-4."""
    compiled = generate(schedules.build(family, 29, **params), target="mpi", dtype="int32", threads=1)
    matrix = polybench_matrix(29).astype("int32")
    expected = matrix.copy()
    floyd_warshall_nest(expected)
    assert compiled(matrix) == -1 and compiled.last_run["tile_layers"] == len(compiled.plan.units)
    np.testing.assert_array_equal(matrix, expected)
    with pytest.raises(ValueError, match="grid 2 x 2 needs 4 processes; mpiexec started 1"):
        generate(schedules.build(family, 29, **params), target="mpi", grid=(2, 2))


def test_solve_runs_on_the_python_target_with_float64_by_default():
    graph = random_graph(30, seed=3, potential=5)
    np.testing.assert_array_equal(solve(graph, schedule="generalized:tile=8,kappa=2", target="python"),
                                  solve(graph, schedule="classic:tile=8"))


def test_a_new_target_is_one_registry_entry(monkeypatch):
    # a target registered from outside: generate and the CLI find it with nothing else edited
    monkeypatch.setitem(TARGETS, "oracle", Target("oracle", "the python target again, under another name",
                                                  ("int32",), (), "codegen.python_target:build"))
    compiled = generate(schedules.build("classic", 12, tile=4), target="oracle", dtype="int32")
    assert compiled.target == "oracle"
    args = build_parser().parse_args(["emit", "classic", "--n", "12", "--tile", "4", "--target", "oracle",
                                      "--dtype", "int32"])
    assert args.target == "oracle" and args.run(args) == 0


def test_register_adds_to_the_registry():
    from codegen.targets import TARGETS, find_target

    entry = register(Target("x", "", ("int32",), (), "codegen.python_target:build"))
    try:
        assert find_target("x") is entry and list(TARGETS)[-1] == "x"
    finally:
        del TARGETS["x"]
