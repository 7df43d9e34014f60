"""Specialising passes for Jinja modules (pure IR -> IR, after scope resolution).

Each keeps output byte-identical; each rests on a fact the IR proves, never on a guess:

- ``direct_calls``: a call ``m(a, b)`` of a macro whose binding can only be that macro when
  the call runs (the ``{% macro %}`` precedes the call in the same scope and nothing else
  assigns the name), with no more positional arguments than the macro has parameters, no
  ``*args`` and no keyword arguments, calls the macro's function directly (``CallFunc``): jinja2's argument
  binding would pass exactly these arguments. A macro whose name is then never read is not
  wrapped into a ``Macro`` object at all.
- ``dict_items``: ``x.key`` and ``x["key"]`` on a variable read ``x[key]`` inline when ``x``
  is exactly a ``dict`` holding ``key`` (chat data is dicts: ``message.role``), and go through
  the sandboxed lookup otherwise; only for keys that are not ``dict`` attributes (``items``,
  ``get``, ...), which jinja2 would find when the key is absent. Where only the value's truth
  is used (``{% if m.tool_calls %}``) an absent key reads as ``None`` (no undefined is built).
  (``m.x is defined`` is not a key test: a dict may hold an undefined value.) ``loop.last`` on
  the loop object a ``for`` made (and
  nothing else binds) is a plain attribute read.
- ``loop_counters``: a loop that only reads ``loop.index``/``index0``/``first`` uses
  ``enumerate`` and no loop object.
- ``top_resolve``: the template's own start values use ``resolve_top``, which gives every
  absent name one shared undefined value instead of building one per render. Only at the top
  level: there each name is looked up once per render, so no template can tell the values
  apart (a macro's own lookup still builds a fresh one, as jinja2 does).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from .. import ir
from .optimize import _is_init, _map

_DICT_ATTRS = frozenset(dir(dict))


# ----------------------------------------------------------------------------- direct calls


def _assignments(module: ir.Module) -> dict[str, list]:
    """Every statement or construct that binds each ident, anywhere in the module."""
    out: dict[str, list] = {}

    def bind(target: Any, why: Any) -> None:
        if isinstance(target, ir.Name):
            out.setdefault(target.ident, []).append(why)
        elif isinstance(target, ir.Target):
            for t in target.names:
                bind(t, why)

    for node in ir.walk(module.body):
        if isinstance(node, ir.Assign):
            bind(node.target, node)
        elif isinstance(node, ir.For):
            bind(node.target, node)
            if node.loop:
                out.setdefault(node.loop, []).append(node)
        elif isinstance(node, ir.FuncDef):
            out.setdefault(node.ident, []).append(node)
            for p in node.params:
                bind(p.name, p)
    return out


def _callable_directly(node: ir.FuncDef, binds: list) -> Optional[int]:
    """The macro's parameter count when calls may bypass its ``Macro`` object, else None."""
    if node.wrap != "jinja.make_macro" or not isinstance(node.wrap_args[1], ir.Const):
        return None
    catch_kwargs, catch_varargs, caller = (a.value for a in node.wrap_args[2:5])  # type: ignore[attr-defined]
    if catch_kwargs or catch_varargs or caller:
        return None
    for why in binds:  # only the macro itself, and the scope's start value before it
        if why is not node and not _is_init(why):
            return None
    return len(node.params)


def _is_block(value: Any) -> bool:
    """A tuple of statements (a body), as opposed to a tuple of expressions."""
    return isinstance(value, tuple) and bool(value) and isinstance(value[0], ir.Stmt)


def direct_calls(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    binds = _assignments(module)

    def block(body: tuple, known: dict) -> tuple:
        known = dict(known)
        out = []
        for stmt in body:
            if isinstance(stmt, ir.FuncDef):
                count = _callable_directly(stmt, binds.get(stmt.ident, []))
                if count is not None:
                    known[stmt.ident] = count  # from here on (its own body included) the name is it
            out.append(rewrite(stmt, known))
        return tuple(out)

    def rewrite(node: Any, known: dict) -> Any:
        if isinstance(node, ir.Node) and not isinstance(node, ir.Module):
            # statement blocks are scopes in order: a macro is known after its definition
            node = ir.map_children(
                node,
                lambda n: block(n, known) if _is_block(n) else rewrite(n, known),
            )
        elif isinstance(node, tuple):
            node = ir.map_children(node, lambda n: rewrite(n, known))
        if (
            isinstance(node, ir.Helper)
            and node.name == "jinja.call"
            and not node.kwargs
            and not any(isinstance(a, ir.Starred) for a in node.args)
            and isinstance(node.args[0], ir.Name)
            and node.args[0].ident in known
            and len(node.args) - 1 <= known[node.args[0].ident]
        ):
            return ir.CallFunc(node.args[0].ident, node.args[1:], span=node.span)
        return node

    body = block(module.body, {})
    # Macros nobody reads as a value any more need no Macro object.
    targets = {
        id(n) for node in ir.walk(body) if isinstance(node, ir.Assign) for n in ir.walk(node.target)
    }
    read = {
        n.ident
        for n in ir.walk(body)
        if isinstance(n, (ir.Name, ir.Local)) and id(n) not in targets
    }

    def unbind(node: Any) -> Any:
        if (
            isinstance(node, ir.FuncDef)
            and node.wrap == "jinja.make_macro"
            and node.ident not in read
        ):
            return dataclasses.replace(node, bind=False)
        return node

    return dataclasses.replace(module, body=_map(body, unbind))


# ----------------------------------------------------------------------------- dict items

_LOOP_ATTRS = frozenset(
    "index index0 revindex revindex0 first last length previtem nextitem depth depth0 cycle changed".split()
)


def _dict_key(node: Any) -> Optional[tuple]:
    """(obj, key) when ``node`` is ``obj.key`` / ``obj["key"]`` that a dict answers with its item."""
    if (
        isinstance(node, ir.Helper)
        and node.name in ("jinja.getattr_", "jinja.getitem")
        and len(node.args) == 2
        and not node.kwargs
        and isinstance(node.args[0], (ir.Name, ir.Local))
        and isinstance(node.args[1], ir.Const)
        and type(node.args[1].value) is str
    ):
        # an absent key of a dict falls back to its attributes (``x["items"]``, ``x.get``)
        if node.args[1].value not in _DICT_ATTRS:
            return node.args[0], node.args[1]
    return None


def dict_items(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    binds = _assignments(module)
    loops = {
        i
        for i, why in binds.items()
        if why and all(isinstance(w, ir.For) and w.loop == i for w in why)
    }

    def walk(node: Any, truth: bool = False) -> Any:
        if isinstance(node, tuple):
            return tuple(walk(n) for n in node)
        if not isinstance(node, ir.Node):
            return node
        if isinstance(node, ir.Helper):
            if (
                node.name == "jinja.getattr_"
                and isinstance(node.args[0], ir.Name)
                and node.args[0].ident in loops
                and isinstance(node.args[1], ir.Const)
                and node.args[1].value in _LOOP_ATTRS
            ):
                return ir.LoopAttr(node.args[0], node.args[1].value, span=node.span)
            found = _dict_key(node)
            if found is not None:
                return ir.DictLookup(*found, "truth" if truth else "item", node, span=node.span)
        if isinstance(node, ir.If):
            return dataclasses.replace(
                node, test=walk(node.test, True), body=walk(node.body), orelse=walk(node.orelse)
            )
        if isinstance(node, ir.Not):
            return dataclasses.replace(node, operand=walk(node.operand, True))
        if isinstance(node, ir.CondExpr):
            return dataclasses.replace(
                node,
                test=walk(node.test, True),
                body=walk(node.body, truth),
                orelse=walk(node.orelse, truth),
            )
        if isinstance(node, ir.BoolOp):
            return dataclasses.replace(node, values=tuple(walk(v, truth) for v in node.values))
        if isinstance(node, ir.For) and node.filter is not None:
            node = dataclasses.replace(node, filter=walk(node.filter, True))
        changes = {}
        for f in node.__dataclass_fields__:  # type: ignore[attr-defined]
            if f == "span" or (isinstance(node, ir.For) and f == "filter"):
                continue
            old = getattr(node, f)
            if isinstance(old, (ir.Node, tuple)):
                new = walk(old)
                if new is not old:
                    changes[f] = new
        return dataclasses.replace(node, **changes) if changes else node

    return dataclasses.replace(module, body=walk(module.body))


# ----------------------------------------------------------------------------- loop counters

_COUNTER_ATTRS = frozenset({"index", "index0", "first"})


def loop_counters(module: ir.Module) -> ir.Module:
    """A loop whose body only reads ``loop.index``, ``loop.index0`` or ``loop.first`` counts
    with ``enumerate`` instead of building a loop object (those need no look-ahead, so the
    iterable is consumed exactly as before)."""
    if module.dialect != "jinja":
        return module

    def uses(node: Any, ident: str, ok: list) -> None:
        if isinstance(node, tuple):
            for n in node:
                uses(n, ident, ok)
        elif isinstance(node, ir.Node):
            if (
                isinstance(node, ir.LoopAttr)
                and isinstance(node.loop, ir.Name)
                and node.loop.ident == ident
            ):
                if node.attr not in _COUNTER_ATTRS:
                    ok[0] = False
                return
            if isinstance(node, (ir.Name, ir.Local)) and node.ident == ident:
                ok[0] = False
                return
            for f in node.__dataclass_fields__:  # type: ignore[attr-defined]
                if f != "span":
                    uses(getattr(node, f), ident, ok)

    def fold(node: Any) -> Any:
        if not (isinstance(node, ir.For) and node.loop and not node.recursive):
            return node
        ok = [True]
        uses((node.body, node.filter), node.loop, ok)
        if not ok[0]:
            return node
        counter = "_i" + node.loop.split("_")[1]
        i = ir.Local(counter)

        def attr(n: Any) -> Any:
            if (
                isinstance(n, ir.LoopAttr)
                and isinstance(n.loop, ir.Name)
                and n.loop.ident == node.loop
            ):
                if n.attr == "index0":
                    return i
                if n.attr == "index":
                    return ir.BinOp("+", i, ir.Const(1), span=n.span)
                return ir.Compare(i, (("==", ir.Const(0)),), span=n.span)
            return n

        return dataclasses.replace(
            node, body=_map(node.body, attr), loop="", loop_helper="", counter=counter
        )

    return dataclasses.replace(module, body=_map(module.body, fold))


# ----------------------------------------------------------------------------- top-level lookups


def top_resolve(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module

    def one(stmt: Any) -> Any:
        if (
            isinstance(stmt, ir.Assign)
            and isinstance(stmt.value, ir.Helper)
            and stmt.value.name == "jinja.resolve"
        ):
            return dataclasses.replace(
                stmt, value=dataclasses.replace(stmt.value, name="jinja.resolve_top")
            )
        return stmt

    return dataclasses.replace(module, body=tuple(one(s) for s in module.body))


def batch_top_resolve(module: ir.Module) -> ir.Module:
    """The template's context lookups (``resolve_top``) as one ``resolve_many`` call: one
    assignment of a tuple instead of a call per name. Runs after dead start values are gone."""
    if module.dialect != "jinja":
        return module
    found = [
        s
        for s in module.body
        if isinstance(s, ir.Assign)
        and isinstance(s.target, ir.Name)
        and isinstance(s.value, ir.Helper)
        and s.value.name == "jinja.resolve_top"
    ]
    if len(found) < 3:
        return module
    names = tuple(s.value.args[1].value for s in found)  # type: ignore[attr-defined]
    batch = ir.Assign(
        ir.Target(tuple(s.target for s in found)),
        ir.Helper("jinja.resolve_many", (ir.Local("context"), ir.Const(names))),
    )
    first = module.body.index(found[0])
    rest = tuple(s for s in module.body if not any(s is f for f in found))
    return dataclasses.replace(module, body=rest[:first] + (batch,) + rest[first:])


def run(module: ir.Module) -> ir.Module:
    return loop_counters(dict_items(top_resolve(direct_calls(module))))
