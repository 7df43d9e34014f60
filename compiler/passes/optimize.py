"""Optimising passes (pure IR -> IR). Each keeps output byte-identical.

- ``known_str``: type knowledge. ``to_str(e)`` is dropped where ``e`` is known to be a
  ``str`` already (string constants, ``~`` concatenation, ``+`` of two known strings,
  helpers whose result is always a ``str``). Nothing that could raise is removed.
- ``merge_text``: adjacent ``Text`` nodes (and ``Output`` of a string constant) become one
  ``Text``, so the generated code appends each literal run once.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir

#: Helpers whose result is always exactly a ``str`` (never a subclass that prints otherwise).
STR_HELPERS = frozenset(
    {
        "jinja.concat",
        "jinja_filters.do_tojson",
        "jinja_filters.do_trim",
        "jinja_filters.do_upper",
        "jinja_filters.do_lower",
        "jinja_filters.do_replace",
        "jinja_filters.do_join",
        "jinja_filters.do_title",
        "jinja_filters.do_capitalize",
        "jinja_filters.do_string",
        "jinja_filters.do_center",
        "jinja_filters.do_indent",
        "builtins.str",
    }
)

#: Helpers that convert to str for printing (the dialect's print rule) and are identity on str.
TO_STR_HELPERS = frozenset({"jinja.to_str"})


def is_str(expr: Any) -> bool:
    if isinstance(expr, ir.Const):
        return type(expr.value) is str
    if isinstance(expr, ir.Helper):
        return expr.name in STR_HELPERS or expr.name in TO_STR_HELPERS
    if isinstance(expr, ir.BinOp) and expr.op == "+":
        # str + anything is a str or raises (a str subclass result prints the same)
        return is_str(expr.left) or is_str(expr.right)
    if isinstance(expr, ir.CondExpr):
        return is_str(expr.body) and is_str(expr.orelse)
    return False


def _map(node: Any, fn: Any) -> Any:
    """Rebuild ``node`` bottom-up, applying ``fn`` to every IR node."""
    if isinstance(node, tuple):
        return tuple(_map(n, fn) for n in node)
    if not isinstance(node, ir.Node):
        return node
    changes = {}
    for f in node.__dataclass_fields__:  # type: ignore[attr-defined]
        if f == "span":
            continue
        old = getattr(node, f)
        if isinstance(old, (ir.Node, tuple)):
            new = _map(old, fn)
            if new is not old:
                changes[f] = new
    if changes:
        node = dataclasses.replace(node, **changes)
    return fn(node)


def known_str(module: ir.Module) -> ir.Module:
    """Invariant: no ``to_str`` is applied to an expression already known to be a str."""

    def fold(node: Any) -> Any:
        if isinstance(node, ir.Helper) and node.name in TO_STR_HELPERS and len(node.args) == 1:
            if is_str(node.args[0]):
                return node.args[0]
        return node

    return dataclasses.replace(module, body=_map(module.body, fold))


def merge_text(module: ir.Module) -> ir.Module:
    """Invariant: no two adjacent statements of a block are both literal text."""

    def merge_block(body: tuple) -> tuple:
        out: list = []
        for stmt in body:
            if isinstance(stmt, ir.Output) and isinstance(stmt.expr, ir.Const) and type(stmt.expr.value) is str:
                stmt = ir.Text(stmt.expr.value, span=stmt.span)
            if isinstance(stmt, ir.Text):
                if not stmt.text:
                    continue
                if out and isinstance(out[-1], ir.Text):
                    out[-1] = ir.Text(out[-1].text + stmt.text, span=out[-1].span)
                    continue
            out.append(stmt)
        return tuple(out)

    def fold(node: Any) -> Any:
        changes = {}
        for f in ("body", "orelse", "else_"):
            if hasattr(node, f) and isinstance(getattr(node, f), tuple) and not isinstance(node, ir.Module):
                changes[f] = merge_block(getattr(node, f))
        return dataclasses.replace(node, **changes) if changes else node

    body = merge_block(_map(module.body, fold))
    return dataclasses.replace(module, body=body)


def run(module: ir.Module) -> ir.Module:
    return merge_text(known_str(module))
