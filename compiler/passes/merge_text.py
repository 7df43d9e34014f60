"""Adjacent literal text merged into one ``Text``, and into the constants of a printed ``+``.

adjacent ``Text`` nodes (and ``Output`` of a string constant) become one ``Text``, so the
generated code appends each literal run once. A ``Text`` just before an ``Output`` of a ``+``
chain whose first operand is a string constant joins that constant (``\n    `` then
``'<|im_start|>' + role + ...``: one append of ``'\n    <|im_start|>' + role + ...``), and one
just after a chain whose last operand is one joins it: the chain is a ``str`` or raises
either way, and what it raises is raised before the render's output is seen. Only text with
none of the characters HTML escapes (``& < > " '``): a ``Markup`` operand escapes the plain
string it is added to, and escaping is the identity on such text only, so ``escape(t + c) ==
t + escape(c)``.

Keeps output byte-identical (pure IR -> IR). The segment module keeps every text its own
piece (``emit_segments.segment_passes`` leaves this pass out).
"""

from __future__ import annotations

from operator import is_
from typing import Any

from .. import ir
from .drop_dead_inits import map_stmts
from .util import map_nodes


def run(module: ir.Module) -> ir.Module:
    """Invariant: no two adjacent statements of a block are both literal text."""

    def merge_block(body: tuple) -> tuple:
        out: list = []
        for stmt in body:
            if (
                isinstance(stmt, ir.Output)
                and isinstance(stmt.expr, ir.Const)
                and type(stmt.expr.value) is str
            ):
                stmt = ir.Text(stmt.expr.value, span=stmt.span)
            if isinstance(stmt, ir.Text):
                if not stmt.text:
                    continue
                if out and isinstance(out[-1], ir.Text):
                    out[-1] = ir.Text(out[-1].text + stmt.text, span=out[-1].span)
                    continue
            out.append(stmt)
        if len(out) > 1:
            out = _into_outputs(out)
        if len(out) == len(body) and all(map(is_, out, body)):
            return body  # (the same object: the node holding it need not be made again)
        return tuple(out)

    def fold(node: Any) -> Any:
        changes = {}
        for f in _BLOCK_FIELDS.get(node.__class__, ()):
            if isinstance(getattr(node, f), tuple):
                new = merge_block(getattr(node, f))
                if new is not getattr(node, f):
                    changes[f] = new
        return ir.replace(node, **changes) if changes else node

    # only blocks change: without a ``Capture`` they are all statements' (then only
    # statements are visited)
    if ir.Capture in set(map(type, ir.walk(module.body))):
        body = merge_block(map_nodes(module.body, fold))
    else:
        body = merge_block(map_stmts(module.body, fold))
    return ir.replace(module, body=body)


#: node class -> its fields ``run`` merges the text of (``body``, ``orelse``, ``else_``), for
#: each class with one (the module's own body is merged apart)
_BLOCK_FIELDS = {
    cls: fields
    for cls in ir.NODE_CLASSES
    if cls is not ir.Module
    and (fields := tuple(f for f in ("body", "orelse", "else_") if f in cls.__dataclass_fields__))
}


#: what ``markupsafe.escape`` changes: text without any is its own escape
_ESCAPED = frozenset("&<>\"'")


def _plain(text: str) -> bool:
    return _ESCAPED.isdisjoint(text)


def _end_const(expr: Any, first: bool) -> Any:
    """The string constant that ends (``first``: starts) a ``+`` chain, or None."""
    if not (isinstance(expr, ir.BinOp) and expr.op == "+"):
        return None
    while isinstance(expr, ir.BinOp) and expr.op == "+":
        expr = expr.left if first else expr.right
        if not first:
            break
    return expr if isinstance(expr, ir.Const) and type(expr.value) is str else None


def _with_end(expr: ir.BinOp, text: str, first: bool) -> ir.BinOp:
    """``expr`` with ``text`` joined to its first (before it) or last (after it) constant."""
    if not first:
        right = expr.right
        return ir.replace(expr, right=ir.replace(right, value=right.value + text))
    left = expr.left
    if isinstance(left, ir.BinOp):
        return ir.replace(expr, left=_with_end(left, text, True))
    return ir.replace(expr, left=ir.replace(left, value=text + left.value))


def _into_outputs(block: list) -> list:
    """Each ``Text`` joined to the printed chain before or after it (see the docstring)."""
    out: list = []
    for stmt in block:
        joined = _joined(out[-1], stmt) if out else None
        if joined is not None:
            out[-1] = joined
        else:
            out.append(stmt)
    return out


def _joined(prev: Any, stmt: Any) -> Any:
    """The ``Output`` that two adjacent statements make together (a ``Text`` and a printed
    chain, in either order), or None."""
    if isinstance(prev, ir.Text) and isinstance(stmt, ir.Output):
        text, output, first = prev.text, stmt, True
    elif isinstance(prev, ir.Output) and isinstance(stmt, ir.Text):
        text, output, first = stmt.text, prev, False
    else:
        return None
    if not _plain(text) or _end_const(output.expr, first) is None:
        return None
    return ir.replace(output, expr=_with_end(output.expr, text, first))
