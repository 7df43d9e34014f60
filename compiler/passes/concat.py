"""The ``~`` operator: constant operands joined at compile time, and written piece by piece.

``a ~ b ~ c`` is ``"".join([str(a), str(b), str(c)])`` (``jinja.concat``): adjacent string
constants are joined now (``'\\n' ~ '<tools>' ~ '\\n'`` is one constant, as jinja2's own
optimizer folds it), and a concatenation that an ``Output`` writes at once is written as its
operands, each through the print rule (``str``), in order: the same text, without the
joined copy (the output meter bounds what is written, as for a written ``+`` chain; see
``limits``). The written constants then merge with the literal text around them
(``merge_text``).

Guard: only the plain ``jinja.concat`` (autoescaped templates use their own helper); a
folded constant longer than ``concat``'s own size check (64 KiB) keeps the helper; no
writing in pieces in modules with ``{% generation %}``, whose spans measure the top-level
buffer while an operand runs (``'x' ~ m()``: jinja2 writes ``x`` only after ``m`` ran).

Keeps output byte-identical (pure IR -> IR).
"""

from __future__ import annotations

from typing import Any

from .. import ir
from .util import TO_STR_HELPERS, has_node, map_nodes, reads_top_output

_CHECKED_SIZE = 65536  # ``runtime/jinja/core.concat`` checks longer results against the limits


def _is_text(node: Any) -> bool:
    return isinstance(node, ir.Const) and type(node.value) is str


def _is_concat(node: Any) -> bool:
    return isinstance(node, ir.Helper) and node.name == "jinja.concat"


#: the classes of the nodes ``_is_concat`` can hold of (``has_node``'s filter)
_WANTED = frozenset({ir.Helper})


def _fold(node: Any) -> Any:
    """``concat`` with adjacent string constants joined (a constant when nothing else is left)."""
    if not (isinstance(node, ir.Helper) and node.name == "jinja.concat" and not node.kwargs):
        return node
    if any(isinstance(a, ir.Starred) for a in node.args):
        return node
    args: list = []
    for arg in node.args:
        if args and _is_text(arg) and _is_text(args[-1]):
            args[-1] = ir.Const(args[-1].value + arg.value, span=args[-1].span)
        else:
            args.append(arg)
    if len(args) == 1 and _is_text(args[0]) and len(args[0].value) <= _CHECKED_SIZE:
        return ir.Const(args[0].value, span=node.span)
    if len(args) == len(node.args):
        return node
    return ir.replace(node, args=tuple(args))


def _written(stmt: Any) -> Any:
    """The statements an ``Output`` of a concatenation (printed: ``to_str`` of a ``str`` is
    that ``str``) becomes; ``(stmt,)`` for any other statement."""
    if not isinstance(stmt, ir.Output):
        return (stmt,)
    expr = stmt.expr
    if isinstance(expr, ir.Helper) and expr.name in TO_STR_HELPERS and len(expr.args) == 1:
        expr = expr.args[0]
    if not (
        isinstance(expr, ir.Helper)
        and expr.name == "jinja.concat"
        and not expr.kwargs
        and not any(isinstance(a, ir.Starred) for a in expr.args)
    ):
        return (stmt,)
    return tuple(
        ir.Output(a if _is_text(a) else ir.Helper("jinja.to_str", (a,), span=a.span), span=stmt.span)
        for a in expr.args
    )


def _split_block(body: tuple) -> tuple:
    if not any(isinstance(s, ir.Output) for s in body):
        return body
    out: list = []
    for stmt in body:
        out.extend(_written(stmt))
    return tuple(out) if len(out) != len(body) else body


def run(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja" or not has_node(module.body, _is_concat, _WANTED):
        return module  # (``_fold`` and ``_written`` change only concatenations)
    if reads_top_output(module.body):  # generation spans: fold only
        return ir.replace(module, body=map_nodes(module.body, _fold))

    def visit(node: Any) -> Any:
        node = _fold(node)
        changes = {}
        for f in ("body", "orelse", "else_"):
            value = getattr(node, f, None)
            if type(value) is tuple and value and isinstance(value[0], ir.Stmt):
                new = _split_block(value)
                if new is not value:
                    changes[f] = new
        return ir.replace(node, **changes) if changes else node

    body = _split_block(map_nodes(module.body, visit))
    return ir.replace(module, body=body)
