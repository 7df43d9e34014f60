"""Direct macro calls: a call of a macro that can only be that macro calls its function.

a call ``m(a, b)`` of a macro whose binding can only be that macro when the call runs (the
``{% macro %}`` precedes the call in the same scope and nothing else assigns the name; or
the call is in the body of a macro defined earlier that nothing can call before ``m`` is
defined: no statement uses it before, and no macro whose body uses it can be called before,
transitively), with no more arguments than the macro has parameters, no ``*args``, and
keyword arguments only for the parameters after the positional ones, in their order
(``m(a, b=x)``: positional in effect), calls the macro's function directly (``CallFunc``):
jinja2's argument binding would pass exactly these arguments, evaluated in the same order. A
macro whose name is then never read is not wrapped into a ``Macro`` object at all.

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations

import bisect

from typing import Any, Optional

from .. import ir
from .util import bindings, is_block, is_init, map_nodes


def _callable_directly(node: ir.FuncDef, binds: list) -> Optional[tuple]:
    """The macro's parameter names (jinja2's, in order) when calls may bypass its ``Macro``
    object, else None."""
    if node.wrap != "jinja.make_macro" or not isinstance(node.wrap_args[1], ir.Const):
        return None
    catch_kwargs, catch_varargs, caller = (a.value for a in node.wrap_args[2:5])  # type: ignore[attr-defined]
    if catch_kwargs or catch_varargs or caller:
        return None
    for why in binds:  # only the macro itself, and the scope's start value before it
        if why is not node and not is_init(why):
            return None
    names = node.wrap_args[1].value  # type: ignore[attr-defined]
    return tuple(names) if isinstance(names, tuple) and len(names) == len(node.params) else None


def _positional(args: tuple, kwargs: tuple, names: tuple) -> Optional[tuple]:
    """The call's arguments by position, when its keywords name the parameters after the
    positional ones in their order (so jinja2 binds them to the same parameters and the
    arguments are evaluated in the same order), else None."""
    if len(args) + len(kwargs) > len(names):
        return None
    for i, (name, _) in enumerate(kwargs):
        if name != names[len(args) + i]:
            return None
    return args + tuple(value for _, value in kwargs)


def _referenced(node: Any) -> set:
    """Idents a statement reads or calls (nested function bodies included)."""
    return {n.ident for n in ir.walk(node) if isinstance(n, (ir.Name, ir.Local, ir.CallFunc))}


def _call_times(body: tuple) -> dict:
    """For each function defined in ``body`` (by index): the index of the first statement from
    which it may be called. A statement that refers to it may call it from there on (a
    reference is taken as a call: the value can be kept and called later); a macro whose body
    refers to it, from that macro's own call time. So the least direct reference time over
    every macro that reaches it through references: each macro's time is handed down its
    references once, in increasing order of the times (linear in references)."""
    index = {stmt.ident: i for i, stmt in enumerate(body) if isinstance(stmt, ir.FuncDef)}
    deferred = {  # macros: their bodies run only when they are called
        i for i, stmt in enumerate(body)
        if isinstance(stmt, ir.FuncDef) and stmt.wrap == "jinja.make_macro"
    }
    direct = {i: len(body) for i in index.values()}
    refers: dict = {}  # macro index -> the functions its body refers to
    for k, stmt in enumerate(body):
        if is_init(stmt):
            continue
        for ident in _referenced(stmt):
            i = index.get(ident)
            if i is None or i == k:
                continue
            if k in deferred:
                refers.setdefault(k, []).append(i)
            elif k < direct[i]:
                direct[i] = k
    times: dict = {}
    for start, i in sorted((t, i) for i, t in direct.items()):
        if i in times:
            continue
        times[i] = start
        stack = [i]
        while stack:
            for j in refers.get(stack.pop(), ()):
                if j not in times:  # (reached from an earlier time already)
                    times[j] = start
                    stack.append(j)
    return times


def _later_macros(body: tuple, binds: dict) -> dict:
    """For a function defined at index ``i`` of ``body``: the macros defined after it that its
    body may call directly, because nothing can call it before their definition
    (``_call_times``)."""
    macros = []
    for j, stmt in enumerate(body):
        if isinstance(stmt, ir.FuncDef):
            names = _callable_directly(stmt, binds.get(stmt.ident, []))
            if names is not None:
                macros.append((j, stmt.ident, names))
    if not macros:
        return {}
    times = _call_times(body)
    starts = [j for j, _, _ in macros]
    table: dict = {}  # ident -> [(its index in ``macros``, parameter names)]
    for index, (_, ident, names) in enumerate(macros):
        table.setdefault(ident, []).append((index, names))
    later: dict = {}
    for i, stmt in enumerate(body):
        if not isinstance(stmt, ir.FuncDef):
            continue
        limit = times[i]  # no statement before ``limit`` can call it
        lo, hi = bisect.bisect_right(starts, i), bisect.bisect_right(starts, limit)
        if lo < hi:
            later[i] = (table, lo, hi)  # the macros ``macros[lo:hi]``, looked up, not copied
    return later


class _Known:
    """The macros a statement may call directly, by ident -> their parameter names:
    a layer per block (the macros defined in it so far) over the enclosing blocks' layers,
    and per function statement the later macros it may call (``_later_macros``: a range of
    the block's macros). Looked up through the layers (a block nests in at most the compile
    caps' depth), never copied: a copy per block and per statement was quadratic in the
    number of macros."""

    __slots__ = ("own", "parent", "later")

    def __init__(self, parent: Optional["_Known"] = None, later: Optional[tuple] = None) -> None:
        self.own: dict = {}
        self.parent = parent
        self.later = later

    def get(self, ident: str) -> Optional[tuple]:
        layer: Optional[_Known] = self
        while layer is not None:
            if layer.later is not None:  # (it overrides what the block knows)
                table, lo, hi = layer.later
                for index, names in reversed(table.get(ident, ())):
                    if lo <= index < hi:
                        return names
            names = layer.own.get(ident)
            if names is not None:
                return names
            layer = layer.parent
        return None


#: the class of the calls ``run`` may make direct
_HELPER = frozenset({ir.Helper})


def run(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    if ir.FuncDef not in set(map(type, ir.walk(module.body))):
        return module  # no macro (the walk is remembered for ``bindings``)
    binds: dict = {}  # every binder of each ident (``util.assignments``, in another order)
    wraps = False  # some macro is wrapped (else there is nothing to do)
    for ident, why in bindings(module.body):
        binds.setdefault(ident, []).append(why)
        wraps = wraps or (isinstance(why, ir.FuncDef) and why.wrap == "jinja.make_macro")
    if not wraps:
        return module

    def block(body: tuple, outer: Optional[_Known]) -> tuple:
        known = _Known(outer)
        later = _later_macros(body, binds)
        out = []
        for i, stmt in enumerate(body):
            if isinstance(stmt, ir.FuncDef):
                names = _callable_directly(stmt, binds.get(stmt.ident, []))
                if names is not None:
                    known.own[stmt.ident] = names  # from here on (its own body included) the name is it
            out.append(rewrite(stmt, _Known(known, later[i]) if i in later else known))
        return tuple(out)

    def rewrite(node: Any, known: _Known) -> Any:
        if isinstance(node, ir.Stmt):

            def child(n: Any) -> Any:
                if is_block(n):  # statement blocks are scopes in order
                    return block(n, known)
                if calls.isdisjoint(map(id, ir.walk(n))):
                    return n  # no call under it may be made direct (the usual case)
                return rewrite(n, known)

            return ir.map_children(node, child)
        if isinstance(node, ir.Node) and not isinstance(node, ir.Module):
            # statement blocks are scopes in order: a macro is known after its definition
            node = ir.map_children(
                node,
                lambda n: block(n, known) if is_block(n) else rewrite(n, known),
            )
        elif isinstance(node, tuple):
            node = ir.map_children(node, lambda n: rewrite(n, known))
        if (
            isinstance(node, ir.Helper)
            and node.name == "jinja.call"
            and not any(isinstance(a, ir.Starred) for a in node.args)
            and isinstance(node.args[0], ir.Name)
            and (names := known.get(node.args[0].ident)) is not None
            and (args := _positional(node.args[1:], node.kwargs, names)) is not None
        ):
            return ir.CallFunc(node.args[0].ident, args, span=node.span)
        return node

    macros = {
        ident
        for ident, whys in binds.items()
        for why in whys
        if isinstance(why, ir.FuncDef) and _callable_directly(why, whys) is not None
    }
    body = module.body
    calls = {  # the calls the rewrite may make direct (by identity: the module holds them)
        id(n)
        for n in ir.of_classes(ir.walk(body), _HELPER)
        if n.name == "jinja.call"
        and n.args
        and isinstance(n.args[0], ir.Name)
        and n.args[0].ident in macros
    } if macros else set()
    if calls:  # (else it would change nothing)
        body = block(body, None)
    # Macros nobody reads as a value any more need no Macro object.
    targets: set = set()
    read: set = set()
    wrapped = []
    for node in ir.walk(body):  # parents first: an assignment's target before its names
        if isinstance(node, (ir.Name, ir.Local)):
            if id(node) not in targets:
                read.add(node.ident)
        elif isinstance(node, ir.Assign):
            target = node.target
            if isinstance(target, ir.Name):
                targets.add(id(target))
            else:
                targets.update(map(id, ir.walk(target)))
        elif isinstance(node, ir.FuncDef) and node.wrap == "jinja.make_macro":
            wrapped.append(node)
    if all(m.ident in read for m in wrapped):
        return module if body is module.body else ir.replace(module, body=body)

    def unbound(node: Any) -> bool:
        return (
            isinstance(node, ir.FuncDef)
            and node.wrap == "jinja.make_macro"
            and node.ident not in read
        )

    def unbind(node: Any) -> Any:
        return ir.replace(node, bind=False) if unbound(node) else node

    # (the usual case: every such macro the walk met is a statement of the template's own
    # body, so the body's statements are all that change)
    if sum(map(unbound, wrapped)) == sum(map(unbound, body)):
        return ir.replace(module, body=tuple(map(unbind, body)))
    return ir.replace(module, body=map_nodes(body, unbind))
