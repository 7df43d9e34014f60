"""Context reads as ``dict.get``: the template's start values without a helper call.

Runs last: the other passes know ``resolve_top`` as a start value. Only at the top level, only
for ``resolve_top`` of the render context by a constant name (what ``top_resolve`` made).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir


def run(module: ir.Module) -> ir.Module:
    """The template's start values (``resolve_top``) as ``ContextGet``: a ``dict.get`` each,
    with the defaults computed once, when the module is imported. Runs last (the other passes
    know ``resolve_top`` as a start value)."""
    if module.dialect != "jinja":
        return module

    def one(stmt: Any) -> Any:
        if (
            isinstance(stmt, ir.Assign)
            and isinstance(stmt.value, ir.Helper)
            and stmt.value.name == "jinja.resolve_top"
            and stmt.value.args[0] == ir.Local("context")
            and isinstance(stmt.value.args[1], ir.Const)
        ):
            return dataclasses.replace(stmt, value=ir.ContextGet(stmt.value.args[1].value))
        return stmt

    return dataclasses.replace(module, body=tuple(one(s) for s in module.body))
