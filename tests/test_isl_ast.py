"""The isl-AST-to-Python front end, checked by meaning: the Python written for a set's AST visits
exactly the set's points, in the schedule's order, whatever isl's AST uses to get there
(strides, floor divisions, remainders, min/max bounds, if/else, degenerate loops)."""
import islpy as isl
import pytest

from tiling.isl_ast import Hooks, build_ast, expr_to_python, loop_range, node_to_python, schedule_to_c
from tiling.isl_utils import enumerate_points


def visits(domain: str, schedule: str, parameters: dict[str, int] | None = None, **hooks) -> list[tuple]:
    """Run the Python isl's AST of (domain, schedule) turns into; return the statements it ran."""
    tree = isl.Schedule.from_domain(isl.UnionSet(domain)).insert_partial_schedule(isl.MultiUnionPwAff(schedule))
    ast = build_ast(tree)
    statement = hooks.pop("statement", lambda name, args: [f"seen.append(({name!r}, {', '.join(args)}))"])
    lines = node_to_python(ast, Hooks(statement=statement, **hooks), indent=1)
    source = "def run(seen):\n" + "".join(f"    {k} = {v}\n" for k, v in (parameters or {}).items())
    source += "\n".join(lines) + "\n"
    scope: dict = {}
    exec(compile(source, "<generated>", "exec"), scope)
    seen: list = []
    scope["run"](seen)
    return seen


def points_in_order(domain: str, order) -> list[tuple]:
    found = []
    pieces = isl.UnionSet(domain).get_set_list()
    for position in range(pieces.n_set()):
        piece = pieces.get_at(position)
        found += [(piece.get_tuple_name(), *p) for p in enumerate_points(piece)]
    return sorted(found, key=order)


CASES = [
    # (domain, schedule, order of the points it must visit)
    ("{ S[i, j] : 0 <= i < 7 and i <= j < 9 }", "[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]",
     lambda p: (p[1], p[2])),
    # a stride: i runs 0, 3, 6, ... (range with a step)
    ("{ S[i] : 0 <= i <= 20 and i mod 3 = 0 }", "[{ S[i] -> [(i)] }]", lambda p: p[1]),
    # a remainder and a floor division in the bounds and guards
    ("{ S[i, j] : 0 <= i < 11 and 0 <= j < 11 and (i + 2 * j) mod 4 = 1 }",
     "[{ S[i, j] -> [(floor(i / 2))] }, { S[i, j] -> [(j)] }, { S[i, j] -> [(i)] }]", lambda p: (p[1] // 2, p[2], p[1])),
    # min and max bounds
    ("{ S[i, j] : 0 <= i < 9 and j >= i - 3 and j >= 0 and j <= i + 2 and j < 6 }",
     "[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]", lambda p: (p[1], p[2])),
    # two statements split by conditions: if / else branches
    ("{ A[i] : 0 <= i < 6; B[i] : 3 <= i < 9 }", "[{ A[i] -> [(i)]; B[i] -> [(i)] }, { A[i] -> [(0)]; B[i] -> [(1)] }]",
     lambda p: (p[1], p[0])),
    # one statement, two pieces of its schedule: if / else
    ("{ S[i, j] : 0 <= i < 6 and 0 <= j < 2 }", "[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] : i < 3; S[i, j] -> [(-j)] : i >= 3 }]",
     lambda p: (p[1], p[2] if p[1] < 3 else -p[2])),
    # descending order: a negated schedule dimension
    ("{ S[i, j] : 0 <= i < 5 and 0 <= j < 4 }", "[{ S[i, j] -> [(-i)] }, { S[i, j] -> [(j - i)] }]",
     lambda p: (-p[1], p[2] - p[1])),
    # a coordinate that is a function of another: an exact division in the statement's arguments
    ("{ S[i, j] : 0 <= i < 8 and j = floor(i / 2) }", "[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]", lambda p: p[1]),
    # a fixed value: the loop is written as an assignment
    ("{ S[i, j] : i = 4 and 0 <= j < 3 }", "[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]", lambda p: p[2]),
    # a parametric bound, bound to a value by the caller
    ("[n] -> { S[i] : 0 <= i < n }", "[n] -> [{ S[i] -> [(i)] }]", lambda p: p[1]),
]


@pytest.mark.parametrize("domain, schedule, order", CASES)
def test_the_python_of_an_ast_visits_exactly_the_points_in_schedule_order(domain, schedule, order):
    parameters = {"n": 6} if domain.startswith("[n]") else None
    expected = points_in_order(domain.replace("[n] -> { S[i] : 0 <= i < n }", "{ S[i] : 0 <= i < 6 }"), order)
    assert visits(domain, schedule, parameters) == expected


def test_every_expression_kind_is_translated():
    def python_of(text: str) -> str:
        build = isl.AstBuild.from_context(isl.Set("[a, b] -> { : }"))
        return expr_to_python(build.expr_from_pw_aff(isl.PwAff(text)))

    cases = (("[(a + b)]", lambda a, b: a + b), ("[(a - b)]", lambda a, b: a - b), ("[(3a)]", lambda a, b: 3 * a),
             ("[(floor(a / 4))]", lambda a, b: a // 4), ("[(a mod 4)]", lambda a, b: a % 4), ("[(-a)]", lambda a, b: -a),
             ("[(min(a, b))]", min), ("[(max(a, 2b))]", lambda a, b: max(a, 2 * b)),
             ("[(1)] : a > b; [(2)] : a <= b", lambda a, b: 1 if a > b else 2))
    for text, meaning in cases:
        python = python_of(f"[a, b] -> {{ {text} }}")
        for a, b in ((17, 5), (5, 17), (-7, 3), (4, 4)):
            assert eval(python, {"a": a, "b": b}) == meaning(a, b), (text, python, a, b)


def test_comparisons_and_conditions_keep_their_meaning():
    tree = isl.Schedule.from_domain(isl.UnionSet("{ S[i, j] : 0 <= i < 8 and 0 <= j < 8 and (i < j or i > j + 2) }"))
    tree = tree.insert_partial_schedule(isl.MultiUnionPwAff("[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]"))
    lines = node_to_python(build_ast(tree), Hooks(statement=lambda name, args: [f"seen.append(({', '.join(args)}))"]))
    scope: dict = {}
    exec("def run(seen):\n" + "\n".join("    " + line for line in lines), scope)
    seen: list = []
    scope["run"](seen)
    assert seen == [(i, j) for i in range(8) for j in range(8) if i < j or i > j + 2]


def test_marks_go_through_the_mark_hook_and_around_their_body():
    tree = isl.Schedule.from_domain(isl.UnionSet("{ S[i] : 0 <= i < 3 }"))
    tree = tree.get_root().child(0).insert_mark(isl.Id("outer")).get_schedule()
    tree = tree.get_root().child(0).child(0).insert_partial_schedule(isl.MultiUnionPwAff("[{ S[i] -> [(i)] }]"))
    tree = tree.get_schedule()
    left = []
    hooks = Hooks(statement=lambda name, args: [f"call({args[0]})"],
                  mark=lambda name: ([f"# enter {name}"], [f"# leave {name}"]), leave_mark=left.append)
    lines = node_to_python(build_ast(tree), hooks, indent=2)
    assert lines == ["        # enter outer", "        for c0 in range(0, 2 + 1):", "            call(c0)",
                     "        # leave outer"]
    assert left == ["outer"]
    replaced = Hooks(statement=lambda name, args: ["unused"], replace=lambda name, node: ["# replaced " + name])
    assert node_to_python(build_ast(tree), replaced) == ["# replaced outer"]


def test_the_default_hooks_comment_marks_and_use_range():
    tree = isl.Schedule.from_domain(isl.UnionSet("{ S[i] : 0 <= i < 2 }"))
    tree = tree.get_root().child(0).insert_mark(isl.Id("m")).get_schedule()
    tree = tree.get_root().child(0).child(0).insert_partial_schedule(isl.MultiUnionPwAff("[{ S[i] -> [(i)] }]"))
    lines = node_to_python(build_ast(tree.get_schedule()), Hooks(statement=lambda name, args: [f"{name}({args[0]})"]))
    assert lines == ["# m", "for c0 in range(0, 1 + 1):", "    S(c0)"]


def test_loop_hooks_name_the_range_and_grid_loops_become_guards():
    domain, schedule = "{ S[i, j] : 0 <= i < 4 and 0 <= j < 3 }", "[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]"
    tree = isl.Schedule.from_domain(isl.UnionSet(domain)).insert_partial_schedule(isl.MultiUnionPwAff(schedule))
    ast = build_ast(tree)
    kinds = {"c0": "prange", "c1": "grid.x"}
    lines = node_to_python(ast, Hooks(statement=lambda name, args: ["pass"], loop=kinds.get))
    assert lines == ["for c0 in prange(0, 3 + 1):", "    c1 = grid_x0 + cuda.blockIdx.x", "    if (c1 >= 0) & (c1 < 2 + 1):",
                     "        pass"]
    assert loop_range(ast) == ("c0", "0", "3 + 1", "1")


def test_a_strided_loop_cannot_be_a_grid_dimension():
    tree = isl.Schedule.from_domain(isl.UnionSet("{ S[i] : 0 <= i <= 9 and i mod 3 = 0 }"))
    tree = tree.insert_partial_schedule(isl.MultiUnionPwAff("[{ S[i] -> [(i)] }]"))
    with pytest.raises(NotImplementedError) as refused:
        node_to_python(build_ast(tree), Hooks(statement=lambda name, args: [], loop=lambda iterator: "grid.y"))
    assert str(refused.value) == "loop over c0 steps by 3: it cannot be a grid dimension"


def test_schedule_to_c_is_iscls_own_rendering():
    tree = isl.Schedule.from_domain(isl.UnionSet("{ S[i] : 0 <= i < 3 }"))
    tree = tree.insert_partial_schedule(isl.MultiUnionPwAff("[{ S[i] -> [(i)] }]"))
    assert schedule_to_c(tree) == "for (int c0 = 0; c0 <= 2; c0 += 1)\n  S(c0);\n"
