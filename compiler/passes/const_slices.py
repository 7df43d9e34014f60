"""Slices of constants made once: ``messages[1:]`` subscripts with a slice made at import.

A slice whose bounds are all constants (``slice(1, None, None)``, what ``x[1:]`` and
``x[:-1]`` lower to) is the same immutable value on every evaluation, and a template cannot
hold it (only a subscript takes it) nor compare its identity: so it is made once, when the
module is imported (``Hoisted``), instead of by a ``slice(...)`` call per subscript (~40 ns of
the ~100 a ``messages[1:]`` cost).

Keeps output byte-identical (pure IR -> IR). After the other passes, which read the slice's
bounds (inspection and the prefix analysis read the unoptimised IR).
"""

from __future__ import annotations

from typing import Any

from .. import ir
from .util import has_node, map_nodes


def _constant(node: Any) -> bool:
    """A constant, or a signed number (``-1`` is the operator applied to ``1``)."""
    if isinstance(node, ir.UnaryOp):
        node = node.operand
        return isinstance(node, ir.Const) and type(node.value) in (int, float)
    return isinstance(node, ir.Const)


def _constant_slice(node: Any) -> bool:
    return (
        isinstance(node, ir.Helper)
        and node.name == "builtins.slice"
        and not node.kwargs
        and all(_constant(a) for a in node.args)
    )


#: the classes of the nodes ``_constant_slice`` can hold of (``has_node``'s filter)
_WANTED = frozenset({ir.Helper})

#: the classes of the nodes ``run``'s rewrite changes
_HOIST = frozenset({ir.Helper, ir.Hoisted})


def run(module: ir.Module) -> ir.Module:
    """Invariant: every slice of constants is a ``Hoisted`` value."""
    if not has_node(module.body, _constant_slice, _WANTED):
        return module

    helper, hoisted = ir.Helper, ir.Hoisted

    def hoist(node: Any) -> Any:
        cls = node.__class__
        if cls is hoisted and isinstance(node.value, ir.Hoisted):
            return node.value  # one made already (its slice was rebuilt first, bottom-up)
        if cls is helper and _constant_slice(node):
            return ir.Hoisted(node, span=node.span)
        return node

    return ir.replace(module, body=map_nodes(module.body, hoist, classes=_HOIST))
