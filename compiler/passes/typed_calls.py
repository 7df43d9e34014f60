"""Calls on a value of one exact builtin type, without the general path, whatever the value's
expression.

Five rules, each the general call's own result for that type or value:

- **String filters.** ``x | trim``, ``upper``, ``lower``, ``capitalize`` and ``string`` of a
  value that is exactly a ``str``: jinja2's filter is ``soft_str(x).<method>()`` (``string``:
  ``soft_str(x)``), and ``soft_str`` returns a ``str`` unchanged; so the filter is the
  builtin method, ``x.strip() if type(x) is str else do_trim(x)``.
- **Methods on a computed receiver.** ``method_calls`` calls ``x.name(args)`` directly when
  ``x`` is a variable; here the receiver is any expression (``message.content.split(',')``,
  ``(text | trim).startswith(p)``), kept in a compiler local as it is computed (``Bind``), so
  it is evaluated once: ``_x1.split(",") if type(_x1 := <receiver>) is str else <the general
  call on _x1>``. The same methods and guards as ``method_calls`` (``access.safe_methods``
  of ``str`` and ``dict``; arguments constants or variable reads).
- **The replace filter.** ``x | replace(old, new)`` with constant strings on a value that is
  exactly a ``str`` is jinja2's ``str(x).replace(old, new, -1)``: the builtin method, where the
  filter's size check (``bounded.guard_replace``) cannot refuse it, which it cannot when ``new``
  is no longer than ``old`` or the text is shorter than ``SMALL // (len(new) - len(old))``
  characters (a test of the text's length in the code).
- **Shrinking replace.** ``s.replace(old, new)`` with constant strings, ``old`` not empty and
  ``new`` no longer than ``old``: the result is never longer than ``s``, so the size check
  the general call makes first (``bounded.call_str_method``) cannot refuse it; on a ``str``
  receiver it is the builtin method.
- **The environment's own callables.** ``namespace(...)``, ``range(n)``, ``strftime_now(f)``,
  ``cycler(...)``, ``joiner(...)``: a call of a variable named like one of the environment's
  globals calls it directly when the variable holds exactly that global (the render context
  may bind the name to anything else: then the general call runs); the sandbox's call
  checks nothing on these (``access.call``). A ``namespace`` of keyword arguments only, none
  named with a leading ``_`` (which the namespace refuses), is made over them without its
  checks (``objects.new_namespace``). Its arguments appear in both branches, so each
  must be small (``SMALL_ARGUMENT`` nodes): the code grows by a bounded amount per call.
- **A string's key, compared.** ``part['type'] == 'text'`` (or ``part.type != 'image'``) where
  ``part`` is exactly a ``str`` (a template iterating ``message['content']`` expecting parts,
  given the text: once per character): a ``str`` answers a key that is none of its
  attributes with an undefined value, which equals no constant; so the dict lookup's general
  branch (taken by every value that is not a dict with the key) is ``None if type(part) is str
  else <the sandboxed lookup>``, and ``None`` compares as the undefined value does with any
  constant but None. Only the comparison reads that value (a kept copy, ``cse``'s, is read
  only where the value was a dict).

Any other value (a subclass such as ``Markup``, an undefined, a namespace) takes the general
call, unchanged. Runs after ``cse`` (a kept lookup's first read must not move into a branch)
and never inside a filtered loop's iterable or filter (a generator: no ``:=`` there).

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations

from typing import Any, Optional

from tmpl2py.runtime.jinja.bounded import SMALL

from .. import ir
from . import method_calls
from .util import LEAVES, type_is

#: filter helper -> the ``str`` method it is on a ``str`` ("": the value itself)
STR_FILTERS = {
    "jinja_filters.do_trim": "strip",
    "jinja_filters.do_upper": "upper",
    "jinja_filters.do_lower": "lower",
    "jinja_filters.do_capitalize": "capitalize",
    "jinja_filters.do_string": "",
}
_PLAIN = (ir.Const, ir.Name, ir.Local)
#: template name of an environment global -> the runtime object it is (``access.GLOBALS``)
GLOBAL_CALLS = {
    "namespace": "jinja.Namespace",
    "range": "jinja.safe_range",
    "strftime_now": "jinja.strftime_now",
    "cycler": "jinja.Cycler",
    "joiner": "jinja.Joiner",
}
#: the most IR nodes an argument of a direct global call may have (it is written twice)
SMALL_ARGUMENT = 16
_VARIABLE = (ir.Name, ir.Local)


class _Temps:
    def __init__(self) -> None:
        self.count = 0

    def bind(self, value: ir.Expr) -> tuple[ir.Expr, ir.Expr]:
        """(the expression to test, the expression reading the value again): ``value`` itself
        twice when it is a variable read, else a ``Bind`` and its local."""
        if isinstance(value, _VARIABLE):
            return value, value
        self.count += 1
        temp = f"_x{self.count}"
        return ir.Bind(temp, value, span=value.span), ir.Local(temp)


def _str_filter(node: ir.Helper, temps: _Temps) -> Optional[ir.Expr]:
    if len(node.args) != 1 or node.kwargs or isinstance(node.args[0], (ir.Const, ir.Starred)):
        return None
    test, again = temps.bind(node.args[0])
    method = STR_FILTERS[node.name]
    fast = again if not method else ir.CallValue(ir.LoopAttr(again, method), ())
    general = ir.replace(node, args=(again,))
    return ir.CondExpr(type_is(test, "builtins.str"), fast, general, span=node.span)


def _replace_filter(node: ir.Helper, temps: _Temps) -> Optional[ir.Expr]:
    if len(node.args) != 3 or node.kwargs or isinstance(node.args[0], (ir.Const, ir.Starred)):
        return None
    old, new = node.args[1], node.args[2]
    if not all(isinstance(a, ir.Const) and type(a.value) is str for a in (old, new)):
        return None
    test, again = temps.bind(node.args[0])
    fast = ir.CallValue(ir.LoopAttr(again, "replace"), (old, new))
    is_str: ir.Expr = type_is(test, "builtins.str")
    grow = len(new.value) - len(old.value)
    if grow > 0:  # (``guard_replace`` passes any text of at most this length)
        short = ir.Compare(ir.Helper("builtins.len", (again,)), (("<=", ir.Const(SMALL // grow)),))
        is_str = ir.BoolOp("and", (is_str, short))
    general = ir.replace(node, args=(again, old, new))
    return ir.CondExpr(is_str, fast, general, span=node.span)


def _receiver(func: Any) -> Optional[tuple[ir.Expr, str]]:
    """(receiver expression, method name) of ``getattr_(receiver, "name")``, also as the dict
    lookup ``dict_items`` made of it (a computed receiver bound to a compiler local)."""
    if isinstance(func, ir.DictLookup):
        if func.bind is None or func.cache or func.flag or func.mode != "item":
            return None
        func = ir.replace(func.fallback, args=(func.bind,) + func.fallback.args[1:])
    if (
        isinstance(func, ir.Helper)
        and func.name == "jinja.getattr_"
        and len(func.args) == 2
        and not func.kwargs
        and isinstance(func.args[1], ir.Const)
        and type(func.args[1].value) is str
        and not isinstance(func.args[0], (ir.Const, ir.Starred) + _VARIABLE)
    ):
        return func.args[0], func.args[1].value
    return None


def _shrinking_replace(args: tuple, kwargs: tuple) -> bool:
    if kwargs or len(args) not in (2, 3):
        return False
    old, new = args[0], args[1]
    if not all(isinstance(a, ir.Const) and type(a.value) is str for a in (old, new)):
        return False
    if len(args) == 3 and not (isinstance(args[2], ir.Const) and type(args[2].value) is int):
        return False
    return old.value != "" and len(new.value) <= len(old.value)


def _method_call(node: ir.Helper, temps: _Temps, methods: dict) -> Optional[ir.Expr]:
    found = _receiver(node.args[0])
    if found is None:
        return None
    receiver, name = found
    args = node.args[1:]
    if name in methods:
        kind = methods[name]
    elif name == "replace" and _shrinking_replace(args, node.kwargs):
        kind = "str"
    else:
        return None
    if not all(isinstance(a, _PLAIN) for a in args) or not all(
        k is not None and k not in method_calls.CALL_OWN_KWARGS and isinstance(v, _PLAIN)
        for k, v in node.kwargs
    ):
        return None
    test, again = temps.bind(receiver)
    fast = ir.CallValue(ir.LoopAttr(again, name), args, node.kwargs, span=node.span)
    general = ir.replace(
        node, args=(ir.Helper("jinja.getattr_", (again, ir.Const(name))),) + args
    )
    return ir.CondExpr(type_is(test, "builtins." + kind), fast, general, span=node.span)


def _small(node: Any) -> bool:
    count = 0
    for _ in ir.walk(node):
        count += 1
        if count > SMALL_ARGUMENT:
            return False
    return True


def _global_call(node: ir.Helper) -> Optional[ir.Expr]:
    func, args = node.args[0], node.args[1:]
    if not (isinstance(func, ir.Name) and func.name in GLOBAL_CALLS):
        return None
    if any(isinstance(a, ir.Starred) or not _small(a) for a in args) or not all(
        k is not None and k not in method_calls.CALL_OWN_KWARGS and _small(v)
        for k, v in node.kwargs
    ):
        return None
    is_global = ir.Compare(func, (("is", ir.Ref(GLOBAL_CALLS[func.name])),))
    direct: ir.Expr = ir.CallValue(func, args, node.kwargs, span=node.span)
    names = [k for k, _ in node.kwargs]
    if func.name == "namespace" and not args and all(k[:1] != "_" for k in names):
        if len(set(names)) == len(names):  # (a name given twice is the general call's error)
            direct = ir.Helper("jinja.new_namespace", (), node.kwargs, span=node.span)
    return ir.CondExpr(is_global, direct, node, span=node.span)


_LOOKUPS = ("jinja.getitem", "jinja.getattr_")


def _string_key_compared(node: ir.Compare) -> Optional[ir.Expr]:
    """``node`` with its lookup's general branch answering None for a ``str`` object."""
    lookup = node.left
    if not (
        len(node.ops) == 1
        and node.ops[0][0] in ("==", "!=")
        and isinstance(node.ops[0][1], ir.Const)
        and node.ops[0][1].value is not None
        and isinstance(lookup, ir.DictLookup)
        and lookup.mode == "item"
        and lookup.bind is None
        and isinstance(lookup.obj, _VARIABLE)
        and isinstance(lookup.key, ir.Const)
        and type(lookup.key.value) is str
        and lookup.key.value[:1] != "_"
        and not hasattr(str, lookup.key.value)
        and isinstance(lookup.fallback, ir.Helper)
        and lookup.fallback.name in _LOOKUPS
        and lookup.fallback.args[0] == lookup.obj
    ):
        return None
    fallback = ir.CondExpr(type_is(lookup.obj, "builtins.str"), ir.Const(None), lookup.fallback)
    return ir.replace(node, left=ir.replace(lookup, fallback=fallback))


def run(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    methods = method_calls.method_types()
    temps = _Temps()

    def rewrite(node: Any) -> Any:
        if node.__class__ in LEAVES:
            return node
        if isinstance(node, tuple):
            return ir.map_children(node, rewrite)
        if not isinstance(node, ir.Node):
            return node
        if isinstance(node, ir.For) and node.filter is not None:
            # the iterable and the filter are a generator's: only the rest is rewritten
            return ir.replace(
                node,
                body=rewrite(node.body),
                else_=rewrite(node.else_),
            )
        node = ir.map_children(node, rewrite)
        if isinstance(node, ir.Compare):
            return _string_key_compared(node) or node
        if isinstance(node, ir.Helper):
            if node.name in STR_FILTERS:
                return _str_filter(node, temps) or node
            if node.name == "jinja_filters.do_replace":
                return _replace_filter(node, temps) or node
            if node.name == "jinja.call" and node.args:
                return _method_call(node, temps, methods) or _global_call(node) or node
        return node

    return ir.replace(module, body=rewrite(module.body))
