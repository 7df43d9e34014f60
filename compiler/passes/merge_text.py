"""Adjacent literal text merged into one ``Text``.

adjacent ``Text`` nodes (and ``Output`` of a string constant) become one ``Text``, so the
generated code appends each literal run once.

Keeps output byte-identical (pure IR -> IR).
"""

from __future__ import annotations

import dataclasses
from operator import is_
from typing import Any

from .. import ir
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
        if len(out) == len(body) and all(map(is_, out, body)):
            return body  # (the same object: the node holding it need not be made again)
        return tuple(out)

    def fold(node: Any) -> Any:
        changes = {}
        for f in ("body", "orelse", "else_"):
            if (
                hasattr(node, f)
                and isinstance(getattr(node, f), tuple)
                and not isinstance(node, ir.Module)
            ):
                new = merge_block(getattr(node, f))
                if new is not getattr(node, f):
                    changes[f] = new
        return dataclasses.replace(node, **changes) if changes else node

    body = merge_block(map_nodes(module.body, fold))
    return dataclasses.replace(module, body=body)
