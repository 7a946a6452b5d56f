"""isl AST -> Python source: the front end every generator (and the stage view) shares.

The translator knows loops, conditions, blocks and isl's integer
expressions; what a statement or a mark turns into is decided by the
caller through two hooks, so one walk serves the CPU and CUDA generators
and the task enumerator alike.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import islpy as isl

_BINARY = {
    isl.ast_expr_op_type.add: "+",
    isl.ast_expr_op_type.sub: "-",
    isl.ast_expr_op_type.mul: "*",
    isl.ast_expr_op_type.div: "//",      # exact division
    isl.ast_expr_op_type.fdiv_q: "//",   # floor division, as Python's //
    isl.ast_expr_op_type.pdiv_q: "//",   # dividend known non-negative
    isl.ast_expr_op_type.pdiv_r: "%",
    isl.ast_expr_op_type.zdiv_r: "%",    # only compared with zero
    isl.ast_expr_op_type.eq: "==",
    isl.ast_expr_op_type.le: "<=",
    isl.ast_expr_op_type.lt: "<",
    isl.ast_expr_op_type.ge: ">=",
    isl.ast_expr_op_type.gt: ">",
    # conditions are side-effect free: & and | keep them one basic block each, where
    # short-circuit and/or made Numba's compile time grow with every clause
    isl.ast_expr_op_type.and_: "&",
    isl.ast_expr_op_type.and_then: "&",
    isl.ast_expr_op_type.or_: "|",
    isl.ast_expr_op_type.or_else: "|",
}


def expr_to_python(expr: isl.AstExpr) -> str:
    """An isl AST expression as a Python expression (ints only)."""
    kind = expr.get_type()
    if kind == isl.ast_expr_type.int:
        return str(expr.get_val().to_python())
    if kind == isl.ast_expr_type.id:
        return expr.get_id().get_name()
    op = expr.get_op_type()
    args = [expr_to_python(expr.get_op_arg(a)) for a in range(expr.get_op_n_arg())]
    if op in _BINARY:
        return f"({args[0]} {_BINARY[op]} {args[1]})"
    if op == isl.ast_expr_op_type.minus:
        return f"(-{args[0]})"
    if op in (isl.ast_expr_op_type.min, isl.ast_expr_op_type.max):
        name = "min" if op == isl.ast_expr_op_type.min else "max"
        return f"{name}({', '.join(args)})"
    if op in (isl.ast_expr_op_type.cond, isl.ast_expr_op_type.select):
        return f"({args[1]} if {args[0]} else {args[2]})"
    raise NotImplementedError(f"isl AST operation {op} has no Python translation")


def ids_in(expr: isl.AstExpr) -> set[str]:
    """The names (iterators, parameters) an isl AST expression reads."""
    if expr.get_type() == isl.ast_expr_type.id:
        return {expr.get_id().get_name()}
    if expr.get_type() != isl.ast_expr_type.op:
        return set()
    return set().union(*(ids_in(expr.get_op_arg(a)) for a in range(expr.get_op_n_arg())))


@dataclass
class Hooks:
    """What statements and marks become. Each returns (lines before the body, lines after)."""

    #: statement name, argument expressions -> lines
    statement: Callable[[str, list[str]], list[str]]
    #: mark name -> (lines before the body, lines after it)
    mark: Callable[[str], tuple[list[str], list[str]]] = field(default=lambda name: ([f"# {name}"], []))
    #: loop iterator -> the name of the range function ('range' or e.g. 'prange'), or
    #: 'grid.x' / 'grid.y': one iteration per thread block, from grid_x0 / grid_y0 on
    loop: Callable[[str], str] = field(default=lambda iterator: "range")
    #: called with the iterator of a loop of one iteration (written as an assignment)
    assign: Callable[[str], None] = field(default=lambda iterator: None)
    #: mark name, the node below it -> lines that replace the marked subtree, or None to walk it
    replace: Callable[[str, isl.AstNode], list[str] | None] = field(default=lambda name, node: None)
    #: called with the mark's name once its body is written
    leave_mark: Callable[[str], None] = field(default=lambda name: None)
    #: called with every isl expression the walk writes (loop iterators and bounds, conditions, and a
    #: statement's arguments, in order, just before `statement`): with ids_in, the names the code reads
    expression: Callable[[isl.AstExpr], None] = field(default=lambda expr: None)


def _written(expr: isl.AstExpr, hooks: Hooks) -> str:
    """An expression the walk writes, shown to hooks.expression first."""
    hooks.expression(expr)
    return expr_to_python(expr)


def loop_range(node: isl.AstNode) -> tuple[str, str, str, str]:
    """(iterator, first value, stop, step) of an isl for node, as Python expressions."""
    iterator = expr_to_python(node.for_get_iterator())
    cond = node.for_get_cond()
    bounds = (isl.ast_expr_op_type.le, isl.ast_expr_op_type.lt)
    if cond.get_type() != isl.ast_expr_type.op or cond.get_op_type() not in bounds:
        raise NotImplementedError(f"loop condition {cond.to_C_str()} is not an upper bound")
    if expr_to_python(cond.get_op_arg(0)) != iterator:
        raise NotImplementedError(f"loop condition {cond.to_C_str()} does not bound {iterator}")
    bound = expr_to_python(cond.get_op_arg(1))
    stop = f"{bound} + 1" if cond.get_op_type() == isl.ast_expr_op_type.le else bound
    return iterator, expr_to_python(node.for_get_init()), stop, expr_to_python(node.for_get_inc())


def _loop_header(node: isl.AstNode, hooks: Hooks) -> list[str]:
    iterator, init, stop, step = loop_range(node)
    for expr in (node.for_get_iterator(), node.for_get_init(), node.for_get_cond(), node.for_get_inc()):
        hooks.expression(expr)
    kind = hooks.loop(iterator)
    if kind.startswith("grid."):
        if step != "1":
            raise NotImplementedError(f"loop over {iterator} steps by {step}: it cannot be a grid dimension")
        axis = kind[-1]
        return [f"{iterator} = grid_{axis}0 + cuda.blockIdx.{axis}",
                f"if ({iterator} >= {init}) & ({iterator} < {stop}):"]
    step_part = "" if step == "1" else f", {step}"
    return [f"for {iterator} in {kind}({init}, {stop}{step_part}):"]


def node_to_python(node: isl.AstNode, hooks: Hooks, indent: int = 0) -> list[str]:
    """Python source lines for an isl AST node, indented by `indent` levels."""
    pad = "    " * indent
    kind = node.get_type()
    if kind == isl.ast_node_type.block:
        children = node.block_get_children()
        lines = []
        for c in range(children.n_ast_node()):
            lines += node_to_python(children.get_at(c), hooks, indent)
        return lines
    if kind == isl.ast_node_type.for_:
        if node.for_is_degenerate():
            iterator = _written(node.for_get_iterator(), hooks)
            hooks.assign(iterator)
            head = [f"{pad}{iterator} = {_written(node.for_get_init(), hooks)}"]
            return head + node_to_python(node.for_get_body(), hooks, indent)
        return [pad + line for line in _loop_header(node, hooks)] + node_to_python(node.for_get_body(), hooks,
                                                                                      indent + 1)
    if kind == isl.ast_node_type.if_:
        lines = [f"{pad}if {_written(node.if_get_cond(), hooks)}:"]
        lines += node_to_python(node.if_get_then_node(), hooks, indent + 1)
        if node.if_has_else_node():
            lines += [f"{pad}else:"] + node_to_python(node.if_get_else_node(), hooks, indent + 1)
        return lines
    if kind == isl.ast_node_type.mark:
        name = node.mark_get_id().get_name()
        replacement = hooks.replace(name, node.mark_get_node())
        if replacement is not None:
            return [pad + line for line in replacement]
        before, after = hooks.mark(name)
        body = node_to_python(node.mark_get_node(), hooks, indent)
        hooks.leave_mark(name)
        return [pad + line for line in before] + body + [pad + line for line in after]
    if kind == isl.ast_node_type.user:
        call = node.user_get_expr()
        name = expr_to_python(call.get_op_arg(0))
        args = [_written(call.get_op_arg(a), hooks) for a in range(1, call.get_op_n_arg())]
        return [pad + line for line in hooks.statement(name, args)]
    raise NotImplementedError(f"isl AST node {kind} has no Python translation")


def build_ast(schedule: isl.Schedule) -> isl.AstNode:
    """isl's AST for a schedule tree, built under its own parameter context."""
    context = isl.Set.universe(schedule.get_domain().params().get_space())
    return isl.AstBuild.from_context(context).node_from_schedule(schedule)


def schedule_to_c(schedule: isl.Schedule) -> str:
    """isl's own C rendering of the schedule's AST (marks show as comments)."""
    return build_ast(schedule).to_C_str()
