"""Items of lists and tuples by ints as Python's subscript.

``messages[0]``, ``messages[-1]``, ``messages[loop.index0 - 1]``, ``pair[1]``: the sandbox's
lookup of an int in a ``list`` or a ``tuple`` (``jinja.getitem``) is its item, and an
undefined value when Python's subscript raises ``IndexError``. So where the sequence is a
variable and the index an int constant or a loop's counter moved by int constants (always an
int, never a bool), the lookup is

    x[i] if (type(x) is list or type(x) is tuple) and -len(x) <= i < len(x) else getitem(x, i)

(``len(x) > i`` for a constant ``i >= 0``, ``len(x) >= -i`` for a negative one): the item
without a call (a list's test first: the commoner), and the general lookup for any other
value (a string, a dict with int keys, an undefined value, an index out of range). The fast branch is
``jinja.subscript`` (``operator.getitem``), which the emitter writes as a subscript. Runs
on the emitter's input (``BEFORE_EMIT``), not on the segment module's, whose origins name
each lookup's path (``emit_segments``).

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from .. import ir
from .util import map_nodes, type_is

_VARIABLE = (ir.Name, ir.Local)


def _int_constant(node: Any) -> Optional[int]:
    """The value of an int constant (``-2`` is ``-`` applied to ``2``), else None."""
    if isinstance(node, ir.UnaryOp) and node.op == "-":
        value = _int_constant(node.operand)
        return None if value is None else -value
    if isinstance(node, ir.Const) and type(node.value) is int:
        return node.value
    return None


def _counted(node: Any, counters: Callable[[], frozenset]) -> bool:
    """``node`` is always an int: a loop's counter (one of ``counters()``), moved by int
    constants."""
    if isinstance(node, ir.Local):
        return node.ident in counters()
    if isinstance(node, ir.BinOp) and node.op in ("+", "-"):
        return _int_constant(node.right) is not None and _counted(node.left, counters)
    return False


def _list_item(node: ir.Helper, counters: Callable[[], frozenset]) -> Optional[ir.Expr]:
    if len(node.args) != 2 or node.kwargs or not isinstance(node.args[0], _VARIABLE):
        return None
    obj, index = node.args
    size = ir.Helper("builtins.len", (obj,))
    k = _int_constant(index)
    if k is not None:
        in_range: ir.Expr = ir.Compare(size, ((">", ir.Const(k)),) if k >= 0 else ((">=", ir.Const(-k)),))
    elif _counted(index, counters):
        in_range = ir.Compare(ir.UnaryOp("-", size), (("<=", index), ("<", size)))
    else:
        return None
    sequence = ir.BoolOp("or", (type_is(obj, "builtins.list"), type_is(obj, "builtins.tuple")))
    test = ir.BoolOp("and", (sequence, in_range))
    fast = ir.Helper("jinja.subscript", (obj, index), span=node.span)
    return ir.CondExpr(test, fast, node, span=node.span)


def folder(module: ir.Module) -> Optional[Callable[[Any], Any]]:
    """The rewrite of one node (bottom-up, as ``map_nodes`` applies it) for ``module``, or
    None where there is nothing to fold (Go): for a pass that traverses the module anyway
    (``fstrings.with_list_items``). Its ``classes``: the only node classes it may change
    (the traversal need not call it on others). The loops' counters are gathered the first
    time an index may be one (most modules have no such lookup)."""
    if module.dialect != "jinja":
        return None
    known: list = []

    def counters() -> frozenset:
        if not known:
            loops = [n for n in ir.walk(module.body) if isinstance(n, ir.For)]
            known.append(frozenset(n.counter for n in loops if n.counter))
        return known[0]

    def fold(node: Any) -> Any:
        if isinstance(node, ir.Helper) and node.name == "jinja.getitem":
            return _list_item(node, counters) or node
        return node

    fold.classes = frozenset({ir.Helper})  # type: ignore[attr-defined]
    return fold


def run(module: ir.Module) -> ir.Module:
    """Invariant: no ``getitem`` of a variable by an int constant or a counted index
    outside a type test for ``list``."""
    fold = folder(module)
    if fold is None:
        return module
    return ir.replace(module, body=map_nodes(module.body, fold))
