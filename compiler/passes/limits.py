"""The size guards (run by ``api.generate`` on the final IR, just before the emitter, so
inspection and pass tests see the template's own operators): operators that can build a huge
value from a small template go through a checking helper of ``runtime/limits``.

Invariant left: no ``BinOp`` ``*``, ``**`` or ``%`` whose operands are not both constants
(repetition ``'x' * n``, ``2 ** n``, ``'%*d' % (n, 1)``), no ``+`` of two computed values
(doubling through a loop or a macro: ``s + s``; ``s + 'literal'`` grows by a constant,
and a ``+`` chain an ``Output`` writes is never kept: both stay plain ``+``), and no tuple literal holding a computed item (nesting tuples deeper
than hashing can recurse: ``ns.t = (ns.t,)``) remain plain Python; each is a
``Helper("limits.mul" | "limits.power" | "limits.mod" | "limits.add" | "limits.make_tuple")``
computing the same value. Constant operands are left alone when their result is small (``'-' * 80``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir

_GUARDED = {"*": "limits.mul", "**": "limits.power", "%": "limits.mod", "+": "limits.add"}

#: the render's meter, passed to the tuple helper (its registry of built tuples' depths)
METER = ir.Local("_m")


def _guard(node: Any, written: set) -> Any:
    if isinstance(node, ir.BinOp) and node.op in _GUARDED and id(node) not in written:
        left_const = isinstance(node.left, ir.Const)
        right_const = isinstance(node.right, ir.Const)
        if node.op == "+" and (isinstance(node.left, _SIZED) or isinstance(node.right, _SIZED)):
            return node  # grows by the literal's size
        if left_const and right_const and _small(node.op, node.left.value, node.right.value):
            return node
        return ir.Helper(_GUARDED[node.op], (node.left, node.right))
    if isinstance(node, ir.TupleLit) and not all(isinstance(i, _PLAIN) for i in node.items):
        if any(isinstance(i, ir.Starred) for i in node.items):
            return node
        return ir.Helper("limits.make_tuple", (METER,) + node.items)
    return node


def _small(op: str, left: Any, right: Any) -> bool:
    """Constant operands whose result is small whatever the limits (``'-' * 80``, ``2 ** 8``)."""
    numbers = (int, float)
    if type(left) in numbers and type(right) in numbers:
        return op != "**" or (type(right) is int and right <= 64)
    if op == "*":
        seq, count = (left, right) if type(right) is int else (right, left)
        return type(count) is int and isinstance(seq, str) and len(seq) * count <= 4096
    return op == "%" and isinstance(left, str) and "*" not in left and not any(
        c.isdigit() for c in left
    )


#: operands whose length is fixed by the template text (``+ 'x'``, ``+ [item]``)
_SIZED = (ir.Const, ir.ListLit, ir.TupleLit)

#: tuple items that cannot be a tuple the template built
_PLAIN = (ir.Const, ir.Ref)


def _written_concatenations(body: tuple) -> set:
    """The ``+`` chains an ``Output`` writes out directly: their value is never kept, and the
    output it adds to is bounded by the meter, so they stay plain ``+``."""
    written: set = set()
    for node in ir.walk(body):
        if isinstance(node, ir.Output):
            chain = [node.expr]
            while chain:
                expr = chain.pop()
                if isinstance(expr, ir.BinOp) and expr.op == "+":
                    written.add(id(expr))
                    chain += [expr.left, expr.right]
    return written


def _map(node: Any, fn: Any) -> Any:
    """``node`` rebuilt bottom-up with ``fn`` applied to every IR node."""
    if isinstance(node, tuple):
        return ir.map_children(node, lambda n: _map(n, fn))
    if not isinstance(node, ir.Node):
        return node
    return fn(ir.map_children(node, lambda n: _map(n, fn)))


def run(module: ir.Module) -> ir.Module:
    written = _written_concatenations(module.body)
    return dataclasses.replace(module, body=_map(module.body, lambda n: _guard(n, written)))
