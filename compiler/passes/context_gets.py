"""Context reads as ``dict.get``: the template's start values without a helper call.

Runs last: the other passes know ``resolve_top`` as a start value. ``run``: the top level's
``resolve_top`` of the render context by a constant name (what ``top_resolve`` made).
``run_nested``: every other ``resolve`` of the render context by a constant name (a name
read in a loop body, a macro or a call block that no scope assigns, looked up each time the
scope starts), where absent names may share one undefined value.

The rule: the render context is a plain dict the render never changes (the sandbox refuses
every mutating method, and ``{% set %}`` binds locals), and the environment's globals are
fixed, so looking a name up gives the same value whenever it runs; only an absent name's
undefined value is a new object each time, which no template can tell apart unless it
compares identities (``scope.uses_identity``: then this pass does not run). So a loop body's
start value read from the context, bound nowhere else in the loop, is read once before the
loop instead of once per iteration (a recursive loop's body is its own function: left alone).
"""

from __future__ import annotations

from typing import Any, Optional

from .. import ir
from .util import assignments, has_node, map_nodes, map_start_values


def run(module: ir.Module) -> ir.Module:
    """The template's start values (``resolve_top``) as ``ContextGet``: a ``dict.get`` each,
    with the defaults computed once, when the module is imported."""
    return map_start_values(module, "jinja.resolve_top", _context_get)


def run_nested(module: ir.Module) -> ir.Module:
    """Every ``resolve(context, "name")`` as ``ContextGet("name")`` (a ``dict.get`` with a
    default made once, instead of a helper call building a new undefined value per read)."""
    if module.dialect != "jinja" or not has_node(module.body, _nested_candidate, _WANTED):
        return module

    def one(node: Any) -> Any:
        if isinstance(node, ir.Helper) and node.name == "jinja.resolve" and len(node.args) == 2:
            new = _context_get(node)
            if new is not None:
                return ir.replace(new, span=node.span)
        return node

    memo: dict = {}

    def hoist(body: tuple) -> tuple:
        """``body`` (its statements rewritten already) with each loop's own context reads
        moved before the loop."""
        out: list = []
        changed = False
        for stmt in body:
            if isinstance(stmt, ir.For) and not stmt.recursive and _reads_context(stmt):
                binds = assignments(ir.replace(module, body=(stmt,)), memo)
                kept, moved = [], []
                for inner in stmt.body:
                    if (
                        isinstance(inner, ir.Assign)
                        and isinstance(inner.value, ir.ContextGet)
                        and isinstance(inner.target, ir.Name)
                        and binds.get(inner.target.ident) == [inner]
                    ):
                        moved.append(inner)
                    else:
                        kept.append(inner)
                if moved:
                    out.extend(moved)
                    stmt = ir.replace(stmt, body=tuple(kept))
                    changed = True
            out.append(stmt)
        return tuple(out) if changed else body

    # one rebuild, bottom-up, that also hoists in every block once its statements are
    # rewritten (inner loops first, as the reads they move are then in place)
    body = map_nodes(module.body, one, blocks=hoist)
    return module if body is module.body else ir.replace(module, body=body)


def _nested_candidate(node: Any) -> bool:
    """What ``run_nested`` may change: a ``resolve`` call, a loop that starts with a context
    read."""
    if isinstance(node, ir.Helper):
        return node.name == "jinja.resolve"
    return isinstance(node, ir.For) and not node.recursive and _reads_context(node)


#: the classes of the nodes ``_nested_candidate`` can hold of (``has_node``'s filter)
_WANTED = frozenset({ir.Helper, ir.For})


def _reads_context(loop: ir.For) -> bool:
    """Whether the loop body assigns a context read among its own statements (what the
    hoisting can move), so its bindings are looked at only then."""
    return any(
        isinstance(inner, ir.Assign) and isinstance(inner.value, ir.ContextGet)
        for inner in loop.body
    )


def _context_get(call: ir.Helper) -> Optional[ir.Expr]:
    """``resolve(context, "name")`` as ``ContextGet("name")``; None for anything else."""
    if call.args[0] == ir.Local("context") and isinstance(call.args[1], ir.Const):
        return ir.ContextGet(call.args[1].value)
    return None
