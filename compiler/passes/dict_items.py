"""Dict items read inline: ``message.role`` on a dict is ``message["role"]``.

``x.key`` and ``x["key"]`` on a variable read ``x[key]`` inline when ``x`` is exactly a
``dict`` holding ``key`` (chat data is dicts: ``message.role``), and go through the
sandboxed lookup otherwise; only for keys that are not ``dict`` attributes (``items``,
``get``, ...), which jinja2 would find when the key is absent. Where only the value's truth
is used (``{% if m.tool_calls %}``) an absent key reads as ``None`` (no undefined is built).
``m.x is defined`` tests the key and then the value (a dict may hold an undefined value),
again without building an undefined for an absent key. ``loop.last`` on the loop object a
``for`` made (and nothing else binds) is a plain attribute read. A variable only ever bound
to a ``namespace(...)`` keeps the sandboxed lookup (the emitter reads a namespace's own
attribute table inline: ``emit.Emitter.namespace_attribute``).

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations

from operator import is_not
from typing import Any, Optional

from tmpl2py.runtime.jinja import DICT_ATTRS as _DICT_ATTRS
from tmpl2py.runtime.jinja import LOOP_ATTRS as _LOOP_ATTRS

from .. import ir
from .util import LEAVES, bindings, namespace_vars


def _dict_key(node: Any, namespaces: frozenset = frozenset()) -> Optional[tuple]:
    """(obj, key) when ``node`` is ``obj.key`` / ``obj["key"]`` that a dict answers with its item
    (not on a variable holding a namespace, ``namespaces``: its dict test would always fail)."""
    if (
        isinstance(node, ir.Helper)
        and node.name in ("jinja.getattr_", "jinja.getitem")
        and len(node.args) == 2
        and not node.kwargs
        and isinstance(node.args[0], (ir.Name, ir.Local))
        and isinstance(node.args[1], ir.Const)
        and type(node.args[1].value) is str
        and not (isinstance(node.args[0], ir.Name) and node.args[0].ident in namespaces)
    ):
        # an absent key of a dict falls back to its attributes (``x["items"]``, ``x.get``)
        if node.args[1].value not in _DICT_ATTRS:
            return node.args[0], node.args[1]
    return None


def _on_a_temp(node: Any) -> Any:
    """``node`` (a sandboxed lookup) as if its object were a plain variable, when it is an
    expression instead (so ``_dict_key`` can judge the key)."""
    if (
        isinstance(node, ir.Helper)
        and node.name in ("jinja.getattr_", "jinja.getitem")
        and len(node.args) == 2
        and not isinstance(node.args[0], (ir.Name, ir.Local, ir.Starred, ir.Const))
    ):
        return ir.replace(node, args=(ir.Local("_t"), node.args[1]))
    return None


_DEFINED_TESTS = ("jinja_filters.test_defined", "jinja_filters.test_undefined")


def _loop_objects(binds: list) -> set:
    """The idents every binding of which (``binds``: ``util.bindings`` of the module) is a
    ``for`` loop's loop object: those ``for`` loops bind (``For.loop``) and nothing else does
    (an assignment, a loop target but the loop's own object, a macro, a parameter)."""
    loops: set = set()
    others: set = set()
    for ident, binder in binds:
        if isinstance(binder, ir.For) and ident == binder.loop:
            loops.add(ident)
        else:
            others.add(ident)
    return loops - others


def _map_tuple(items: tuple, fn: Any) -> tuple:
    """``items`` with ``fn`` applied to each, in order; the same tuple when none changed."""
    new = [fn(n) for n in items]
    return tuple(new) if any(map(is_not, new, items)) else items


def _replaced(node: Any, **fields: Any) -> Any:
    """``node`` with ``fields``, or ``node`` itself when each is the object it holds."""
    for name, value in fields.items():
        if getattr(node, name) is not value:
            return ir.replace(node, **fields)
    return node


def run(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    binds = list(bindings(module.body))  # (one walk for both)
    loops = _loop_objects(binds)
    namespaces = namespace_vars(module.body, binds)

    temps = [0]
    no_temps = [0]  # inside a filtered loop's iterable (a generator's: no ``:=`` there)

    # every node is rebuilt only where something under it changed (the same object
    # otherwise); the children are visited in the order the temps are numbered in
    def walk(node: Any, truth: bool = False) -> Any:
        if node.__class__ in LEAVES:
            return node
        if isinstance(node, tuple):
            return _map_tuple(node, walk)
        if not isinstance(node, ir.Node):
            return node
        if isinstance(node, ir.For) and node.filter is not None:
            no_temps[0] += 1
            it = walk(node.iter)
            no_temps[0] -= 1
            filter_ = walk(node.filter, True)
            body, else_, target = walk(node.body), walk(node.else_), walk(node.target)
            return _replaced(node, iter=it, filter=filter_, body=body, else_=else_, target=target)
        if isinstance(node, ir.Helper):
            if node.name in _DEFINED_TESTS and len(node.args) == 1 and not node.kwargs:
                found = _dict_key(node.args[0], namespaces)
                if found is not None:
                    defined = ir.replace(node, name="jinja_filters.test_defined")
                    lookup = ir.DictLookup(*found, "defined", defined, span=node.span)
                    return (
                        lookup
                        if node.name == "jinja_filters.test_defined"
                        else ir.Not(lookup, span=node.span)
                    )
            if (
                node.name == "jinja.getattr_"
                and isinstance(node.args[0], ir.Name)
                and node.args[0].ident in loops
                and isinstance(node.args[1], ir.Const)
                and node.args[1].value in _LOOP_ATTRS
            ):
                return ir.LoopAttr(node.args[0], node.args[1].value, span=node.span)
            found = _dict_key(node, namespaces)
            if found is not None:
                return ir.DictLookup(*found, "truth" if truth else "item", node, span=node.span)
            if not no_temps[0] and _dict_key(_on_a_temp(node)) is not None:
                # a lookup on an expression: the expression once, into a compiler local
                temps[0] += 1
                temp = ir.Local(f"_t{temps[0]}")
                fallback = ir.replace(node, args=(temp, node.args[1]))
                return ir.DictLookup(
                    temp,
                    node.args[1],
                    "truth" if truth else "item",
                    fallback,
                    span=node.span,
                    bind=walk(node.args[0]),
                )
        if isinstance(node, ir.If):
            test = walk(node.test, True)
            body, orelse = walk(node.body), walk(node.orelse)
            return _replaced(node, test=test, body=body, orelse=orelse)
        if isinstance(node, ir.Not):
            return _replaced(node, operand=walk(node.operand, True))
        if isinstance(node, ir.CondExpr):
            test = walk(node.test, True)
            body, orelse = walk(node.body, truth), walk(node.orelse, truth)
            return _replaced(node, test=test, body=body, orelse=orelse)
        if isinstance(node, ir.BoolOp):
            return _replaced(node, values=_map_tuple(node.values, lambda v: walk(v, truth)))
        # (a For without a filter: its filter is None, nothing to visit)
        return ir.map_children(node, walk)

    return ir.replace(module, body=walk(module.body))
