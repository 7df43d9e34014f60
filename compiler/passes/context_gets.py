"""Context reads as ``dict.get``: the template's start values without a helper call.

Runs last: the other passes know ``resolve_top`` as a start value. Only at the top level, only
for ``resolve_top`` of the render context by a constant name (what ``top_resolve`` made).
"""

from __future__ import annotations

from typing import Optional

from .. import ir
from .util import map_start_values


def run(module: ir.Module) -> ir.Module:
    """The template's start values (``resolve_top``) as ``ContextGet``: a ``dict.get`` each,
    with the defaults computed once, when the module is imported."""
    return map_start_values(module, "jinja.resolve_top", _context_get)


def _context_get(call: ir.Helper) -> Optional[ir.Expr]:
    """``resolve_top(context, "name")`` as ``ContextGet("name")``; None for anything else."""
    if call.args[0] == ir.Local("context") and isinstance(call.args[1], ir.Const):
        return ir.ContextGet(call.args[1].value)
    return None
