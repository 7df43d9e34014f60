"""Method calls on strings and dicts: ``text.strip()`` calls ``str.strip`` when ``text`` is a str.

A call ``x.name(args)`` compiles to ``call(getattr_(x, "name"), args)``. When ``x`` is exactly a
``str`` (or exactly a ``dict``) and ``name`` is one of that type's methods the sandbox lets
through unwrapped (``access.safe_methods``: public, not mutating, not ``format`` /
``format_map``, which the sandbox wraps; not one that grows its input, ``center``, ``replace``,
..., whose size the general call checks first), that is the builtin method called with the same
arguments: ``getattr_`` returns the bound method (a ``str`` answers no key, a ``dict`` finds
its attribute before its keys) and ``call`` calls a builtin method without probes. So the
call becomes ``x.name(args) if type(x) is str else <the general call>``.

Guard: the receiver is a variable read and every argument a constant or a variable read (so
evaluating either branch evaluates the same things in the same order, and duplicating the
arguments cannot make the code grow more than linearly); no ``*args``/``**kwargs`` and no
keyword named ``_loop_vars``/``_block_vars`` (``call`` drops those). Any other value (a
subclass such as ``Markup``, an undefined, a namespace) takes the general call, unchanged.

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations

from typing import Any, Optional

from tmpl2py.runtime.jinja import safe_methods
from tmpl2py.runtime.jinja.bounded import (
    FREE_ITEMS,
    GROWING_STR_METHODS,
    SPLITTING_STR_METHODS,
    STRIPPING_STR_METHODS,
)

from .. import ir
from .util import has_node, map_nodes

#: the receiver types whose methods are called directly (disjoint method names)
_TYPES = ("str", "dict")
_PLAIN = (ir.Const, ir.Name, ir.Local)
CALL_OWN_KWARGS = ("_loop_vars", "_block_vars")


def method_types() -> dict:
    """method name -> the builtin type name whose values may call it directly (made once)."""
    global _METHOD_TYPE
    if _METHOD_TYPE is not None:
        return _METHOD_TYPE
    table: dict = {}
    for kind in _TYPES:
        for name in safe_methods({"str": str, "dict": dict}[kind]):
            if kind == "str" and name in GROWING_STR_METHODS:
                continue  # its result's size is checked first (the general call's guard)
            assert name not in table, name  # the check below needs one type per name
            table[name] = kind
    _METHOD_TYPE = table
    return table


_METHOD_TYPE: Optional[dict] = None


def _lower(node: Any, methods: dict) -> Any:
    if not (isinstance(node, ir.Helper) and node.name == "jinja.call" and node.args):
        return node
    func, args = node.args[0], node.args[1:]
    if not (
        isinstance(func, ir.Helper)
        and func.name == "jinja.getattr_"
        and len(func.args) == 2
        and not func.kwargs
        and isinstance(func.args[0], (ir.Name, ir.Local))
        and isinstance(func.args[1], ir.Const)
        and type(func.args[1].value) is str
        and func.args[1].value in methods
    ):
        return node
    if not all(isinstance(a, _PLAIN) for a in args) or not all(
        k is not None and k not in CALL_OWN_KWARGS and isinstance(v, _PLAIN)
        for k, v in node.kwargs
    ):
        return node
    receiver, name = func.args[0], func.args[1].value
    if name in STRIPPING_STR_METHODS and (node.kwargs or not all(_short_text(a) for a in args)):
        return node  # chars of any length: the general call charges text x chars
    is_type: ir.Expr = ir.Compare(
        ir.Helper("builtins.type", (receiver,)), (("is", ir.Ref("builtins." + methods[name])),)
    )
    if name in SPLITTING_STR_METHODS:  # a long text's pieces are charged by the general call
        short = ir.Compare(ir.Helper("builtins.len", (receiver,)), (("<", ir.Const(FREE_ITEMS)),))
        is_type = ir.BoolOp("and", (is_type, short))
    direct = ir.CallValue(ir.LoopAttr(receiver, name), args, node.kwargs, span=node.span)
    return ir.CondExpr(is_type, direct, node, span=node.span)


def run(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    if not has_node(module.body, _is_method_call, _WANTED):
        return module  # (``_lower`` changes only those)
    methods = method_types()
    helper = ir.Helper

    def lower(node: Any) -> Any:  # (one call per node: most are not helpers)
        return _lower(node, methods) if node.__class__ is helper else node

    return ir.replace(module, body=map_nodes(module.body, lower, classes=_WANTED))


def _short_text(arg: Any) -> bool:
    """A constant string of a few characters (``'\\n'``, ``' '``): a strip's chars whose
    steps are a small multiple of the text's length."""
    return isinstance(arg, ir.Const) and type(arg.value) is str and len(arg.value) <= 16


def _is_method_call(node: Any) -> bool:
    return (
        isinstance(node, ir.Helper)
        and node.name == "jinja.call"
        and bool(node.args)
        and isinstance(node.args[0], ir.Helper)
        and node.args[0].name == "jinja.getattr_"
    )


#: the classes of the nodes ``_is_method_call`` can hold of (``has_node``'s filter)
_WANTED = frozenset({ir.Helper})
