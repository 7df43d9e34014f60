"""Macros that write into their caller's buffer.

a macro called only directly, each call's result output at once (``{{ m(x) }}``), writes
into its caller's buffer instead of joining its own (not in modules with ``{% generation
%}``, whose spans measure the top-level buffer while a macro runs).

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations

from typing import Any

from .. import ir
from .util import is_str, map_nodes


def _outputs_str(body: tuple) -> bool:
    """Every value ``body`` outputs is a ``str``: a filter block's result may not be, and
    jinja2 fails joining the macro's own output then (before its caller goes on)."""

    def visit(node: Any) -> bool:
        if isinstance(node, tuple):
            return all(visit(n) for n in node)
        if not isinstance(node, ir.Node) or isinstance(node, ir.FuncDef):
            return True
        if isinstance(node, ir.Output) and not (
            is_str(node.expr) or isinstance(node.expr, ir.CallFunc)
        ):
            return False
        return all(visit(value) for _f, value in ir.children(node))

    return visit(body)


#: the classes of the nodes ``run``'s walk looks at
_LOOKED_AT = frozenset({ir.Local, ir.FuncDef, ir.CallFunc, ir.Output})


def run(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    calls: dict = {}
    outputs: dict = {}
    macros = []
    # one walk, dispatched on the class: the macros, their calls, the calls output at once,
    # and whether the module reads its top-level output (``util.reads_top_output``)
    top = False
    for node in ir.of_classes(ir.walk(module.body), _LOOKED_AT):
        cls = node.__class__
        if cls is ir.Local:
            top = top or node == ir.TOP_OUTPUT
        elif cls is ir.FuncDef:
            macros.append(node)
        elif cls is ir.CallFunc:
            calls[node.ident] = calls.get(node.ident, 0) + 1
        elif cls is ir.Output:
            expr = node.expr
            if isinstance(expr, ir.Helper) and expr.name == "jinja.to_str" and len(expr.args) == 1:
                expr = expr.args[0]  # dropped later: a macro returns a str (known_str)
            if isinstance(expr, ir.CallFunc):
                outputs[expr.ident] = outputs.get(expr.ident, 0) + 1

    def writes(node: ir.FuncDef) -> bool:
        return (
            node.wrap == "jinja.make_macro"
            and not node.bind
            and calls.get(node.ident, 0) == outputs.get(node.ident, 0)
            and _outputs_str(node.body)
        )

    if top or not any(writes(n) for n in macros):
        return module

    def into(node: Any) -> Any:
        if isinstance(node, ir.FuncDef) and writes(node):
            return ir.replace(node, into=True)
        return node

    return ir.replace(module, body=map_nodes(module.body, into))
