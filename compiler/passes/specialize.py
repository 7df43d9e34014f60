"""Specialising passes for Jinja modules (pure IR -> IR, after scope resolution).

Each keeps output byte-identical; each rests on a fact the IR proves, never on a guess:

- ``direct_calls``: a call ``m(a, b)`` of a macro whose binding can only be that macro when
  the call runs (the ``{% macro %}`` precedes the call in the same scope and nothing else
  assigns the name; or the call is in the body of a macro defined earlier that nothing uses
  before ``m`` is defined), with no more positional arguments than the macro has parameters,
  no ``*args`` and no keyword arguments, calls the macro's function directly (``CallFunc``):
  jinja2's argument binding would pass exactly these arguments. A macro whose name is then never read is not
  wrapped into a ``Macro`` object at all.
- ``direct_output``: a macro called only directly, each call's result output at once
  (``{{ m(x) }}``), writes into its caller's buffer instead of joining its own (not in modules
  with ``{% generation %}``, whose spans measure the top-level buffer while a macro runs).
- ``dict_items``: ``x.key`` and ``x["key"]`` on a variable read ``x[key]`` inline when ``x``
  is exactly a ``dict`` holding ``key`` (chat data is dicts: ``message.role``), and go through
  the sandboxed lookup otherwise; only for keys that are not ``dict`` attributes (``items``,
  ``get``, ...), which jinja2 would find when the key is absent. Where only the value's truth
  is used (``{% if m.tool_calls %}``) an absent key reads as ``None`` (no undefined is built).
  ``m.x is defined`` tests the key and then the value (a dict may hold an undefined value),
  again without building an undefined for an absent key. ``loop.last`` on
  the loop object a ``for`` made (and
  nothing else binds) is a plain attribute read.
- ``loop_counters``: a loop that only reads ``loop.index``/``index0``/``first`` uses
  ``enumerate`` and no loop object.
- ``ns_scalars``: a ``namespace(a=..., b=...)`` bound once to a variable that is only ever
  used as ``ns.a`` reads and ``{% set ns.a = ... %}`` stores of its own attributes, all later in
  the same function, keeps each attribute in a local (no object, no lookups, no stores through
  the runtime) when the call really reaches jinja2's ``namespace`` (a render context may bind
  another value to that name: then the general path runs). Only for attributes whose stored
  values are built from literals, operators and the namespace's own attributes: those can never
  be the bound ``str.format`` the sandbox wraps on every read.
- ``top_resolve``: the template's own start values use ``resolve_top``, which gives every
  absent name one shared undefined value instead of building one per render. Only at the top
  level: there each name is looked up once per render, so no template can tell the values
  apart (a macro's own lookup still builds a fresh one, as jinja2 does).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from tmpl2py.runtime.jinja import DICT_ATTRS as _DICT_ATTRS
from tmpl2py.runtime.jinja import LOOP_ATTRS as _LOOP_ATTRS

from .. import ir
from .optimize import _is_init, _map, is_str

# ----------------------------------------------------------------------------- direct calls


def _assignments(module: ir.Module, memo: Optional[dict] = None) -> dict[str, list]:
    """Every statement or construct that binds each ident, anywhere in the module (in walk
    order). ``memo`` keeps each statement's own table across calls (see ``_names_of``)."""
    out: dict[str, list] = {}
    memo = {} if memo is None else memo
    for stmt in module.body:
        for ident, whys in _binds_under(stmt, memo).items():
            out.setdefault(ident, []).extend(whys)
    return out


def _binds_under(stmt: ir.Stmt, memo: dict) -> dict[str, list]:
    hit = memo.get(("binds", id(stmt)))
    if hit is not None:
        return hit[1]
    out: dict[str, list] = {}

    def bind(target: Any, why: Any) -> None:
        if isinstance(target, ir.Name):
            out.setdefault(target.ident, []).append(why)
        elif isinstance(target, ir.Target):
            for t in target.names:
                bind(t, why)

    def visit(node: Any) -> None:
        if isinstance(node, tuple):
            for n in node:
                visit(n)
        elif isinstance(node, ir.Stmt) and node is not stmt:
            for ident, whys in _binds_under(node, memo).items():
                out.setdefault(ident, []).extend(whys)
        elif isinstance(node, ir.Node):
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
            for _f, value in ir.children(node):
                visit(value)

    visit(stmt)
    memo[("binds", id(stmt))] = (stmt, out)
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


def _referenced(node: Any) -> set:
    """Idents a statement reads or calls (nested function bodies included)."""
    return {n.ident for n in ir.walk(node) if isinstance(n, (ir.Name, ir.Local, ir.CallFunc))}


def _later_macros(body: tuple, binds: dict) -> dict:
    """For a function defined at index ``i`` of ``body``: the macros defined after it that its
    body may call directly, because nothing before their definition can call it (every
    statement before them, except its own definition, leaves it alone)."""
    macros = []
    for j, stmt in enumerate(body):
        if isinstance(stmt, ir.FuncDef):
            count = _callable_directly(stmt, binds.get(stmt.ident, []))
            if count is not None:
                macros.append((j, stmt.ident, count))
    if not macros:
        return {}
    refs = [set() if _is_init(stmt) else _referenced(stmt) for stmt in body]  # start values: no use
    later: dict = {}
    for i, stmt in enumerate(body):
        if not isinstance(stmt, ir.FuncDef):
            continue
        for j, ident, count in macros:
            if j > i and not any(stmt.ident in refs[k] for k in range(j) if k != i):
                later.setdefault(i, {})[ident] = count
    return later


def direct_calls(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    binds = _assignments(module)

    def block(body: tuple, known: dict) -> tuple:
        known = dict(known)
        later = _later_macros(body, binds)
        out = []
        for i, stmt in enumerate(body):
            if isinstance(stmt, ir.FuncDef):
                count = _callable_directly(stmt, binds.get(stmt.ident, []))
                if count is not None:
                    known[stmt.ident] = count  # from here on (its own body included) the name is it
            out.append(rewrite(stmt, {**known, **later[i]} if i in later else known))
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


def _outputs_str(body: tuple) -> bool:
    """Every value ``body`` outputs is a ``str``: a filter block's result may not be, and
    jinja2 fails joining the macro's own output then (before its caller goes on)."""

    def visit(node: Any) -> bool:
        if isinstance(node, tuple):
            return all(visit(n) for n in node)
        if not isinstance(node, ir.Node) or isinstance(node, ir.FuncDef):
            return True
        if isinstance(node, ir.Output) and not (
            is_str(node.expr) or isinstance(node.expr, ir.CallFunc)
        ):
            return False
        return all(visit(value) for _f, value in ir.children(node))

    return visit(body)


def direct_output(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja" or any(n == ir.TOP_OUTPUT for n in ir.walk(module.body)):
        return module
    calls: dict = {}
    outputs: dict = {}
    for node in ir.walk(module.body):
        if isinstance(node, ir.CallFunc):
            calls[node.ident] = calls.get(node.ident, 0) + 1
        elif isinstance(node, ir.Output):
            expr = node.expr
            if isinstance(expr, ir.Helper) and expr.name == "jinja.to_str" and len(expr.args) == 1:
                expr = expr.args[0]  # dropped later: a macro returns a str (optimize.known_str)
            if isinstance(expr, ir.CallFunc):
                outputs[expr.ident] = outputs.get(expr.ident, 0) + 1

    def into(node: Any) -> Any:
        if (
            isinstance(node, ir.FuncDef)
            and node.wrap == "jinja.make_macro"
            and not node.bind
            and calls.get(node.ident, 0) == outputs.get(node.ident, 0)
            and _outputs_str(node.body)
        ):
            return dataclasses.replace(node, into=True)
        return node

    return dataclasses.replace(module, body=_map(module.body, into))


# ----------------------------------------------------------------------------- dict items


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


def _on_a_temp(node: Any) -> Any:
    """``node`` (a sandboxed lookup) as if its object were a plain variable, when it is an
    expression instead (so ``_dict_key`` can judge the key)."""
    if (
        isinstance(node, ir.Helper)
        and node.name in ("jinja.getattr_", "jinja.getitem")
        and len(node.args) == 2
        and not isinstance(node.args[0], (ir.Name, ir.Local, ir.Starred, ir.Const))
    ):
        return dataclasses.replace(node, args=(ir.Local("_t"), node.args[1]))
    return None


_DEFINED_TESTS = ("jinja_filters.test_defined", "jinja_filters.test_undefined")


def dict_items(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    binds = _assignments(module)
    loops = {
        i
        for i, why in binds.items()
        if why and all(isinstance(w, ir.For) and w.loop == i for w in why)
    }

    temps = [0]
    no_temps = [0]  # inside a filtered loop's iterable (a generator's: no ``:=`` there)

    def walk(node: Any, truth: bool = False) -> Any:
        if isinstance(node, tuple):
            return tuple(walk(n) for n in node)
        if not isinstance(node, ir.Node):
            return node
        if isinstance(node, ir.For) and node.filter is not None:
            no_temps[0] += 1
            it = walk(node.iter)
            no_temps[0] -= 1
            node = dataclasses.replace(node, iter=it, filter=walk(node.filter, True))
            return dataclasses.replace(
                node, body=walk(node.body), else_=walk(node.else_), target=walk(node.target)
            )
        if isinstance(node, ir.Helper):
            if node.name in _DEFINED_TESTS and len(node.args) == 1 and not node.kwargs:
                found = _dict_key(node.args[0])
                if found is not None:
                    defined = dataclasses.replace(node, name="jinja_filters.test_defined")
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
            found = _dict_key(node)
            if found is not None:
                return ir.DictLookup(*found, "truth" if truth else "item", node, span=node.span)
            if not no_temps[0] and _dict_key(_on_a_temp(node)) is not None:
                # a lookup on an expression: the expression once, into a compiler local
                temps[0] += 1
                temp = ir.Local(f"_t{temps[0]}")
                fallback = dataclasses.replace(node, args=(temp, node.args[1]))
                return ir.DictLookup(
                    temp,
                    node.args[1],
                    "truth" if truth else "item",
                    fallback,
                    span=node.span,
                    bind=walk(node.args[0]),
                )
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


def calls_foreign_code(node: Any) -> bool:
    """A call of code the template does not show (a macro, a value called)."""
    return isinstance(node, (ir.CallValue, ir.CallFunc)) or (
        isinstance(node, ir.Helper) and node.name == "jinja.call"
    )


def loop_counters(module: ir.Module) -> ir.Module:
    """A loop whose body only reads ``loop.index``, ``loop.index0`` or ``loop.first`` counts
    with ``enumerate`` instead of building a loop object (those need no look-ahead, so the
    iterable is consumed exactly as before). One that also reads ``loop.last`` counts too,
    and over a list or tuple compares the counter with the last index (``jinja.loop_last``);
    any other iterable still gets its loop object for ``last``. Not when the body may call
    foreign code (which could change the list while it is iterated)."""
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
                if node.attr == "last":
                    ok[1] = True
                elif node.attr not in _COUNTER_ATTRS:
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
        ok = [True, False]  # only counters and ``last``; ``last`` read
        uses((node.body, node.filter), node.loop, ok)
        if not ok[0] or (ok[1] and any(calls_foreign_code(n) for n in ir.walk(node.body))):
            return node
        counter = "_i" + node.loop.split("_")[1]
        i = ir.Local(counter)
        last = ir.Local("_n" + node.loop.split("_")[1]) if ok[1] else None

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
                if n.attr == "last" and last is not None:
                    return ir.CondExpr(
                        ir.Compare(last, (("is not", ir.Const(None)),)),
                        ir.Compare(i, (("==", last),)),
                        n,
                        span=n.span,
                    )
                return ir.Compare(i, (("==", ir.Const(0)),), span=n.span)
            return n

        if last is not None:
            return dataclasses.replace(
                node, body=_map(node.body, attr), counter=counter, last=last.ident
            )
        return dataclasses.replace(
            node, body=_map(node.body, attr), loop="", loop_helper="", counter=counter
        )

    return dataclasses.replace(module, body=_map(module.body, fold))


# ----------------------------------------------------------------------------- namespace scalars

_NS_READS = ("jinja.getattr_", "jinja.getitem")


def _ns_candidate(stmt: Any) -> Optional[tuple]:
    """(ident, keyword names) when ``stmt`` is ``{% set v = namespace(k=..., ...) %}``."""
    if not (
        isinstance(stmt, ir.Assign)
        and isinstance(stmt.target, ir.Name)
        and isinstance(stmt.value, ir.Helper)
        and stmt.value.name == "jinja.call"
        and len(stmt.value.args) == 1
        and isinstance(stmt.value.args[0], ir.Name)
        and stmt.value.args[0].name == "namespace"
        and stmt.value.kwargs
    ):
        return None
    keys = tuple(k for k, _ in stmt.value.kwargs)
    if any(type(k) is not str for k in keys):  # ``**mapping``
        return None
    if len(set(keys)) != len(keys) or any(k[:1] == "_" or not k.isidentifier() for k in keys):
        return None
    return stmt.target.ident, keys


def _ns_read_key(node: Any, ident: str) -> Optional[str]:
    """The attribute when ``node`` reads ``ident.attr`` (inline dict lookup or sandboxed)."""
    if isinstance(node, ir.DictLookup):
        node = node.fallback
    if (
        isinstance(node, ir.Helper)
        and node.name in _NS_READS
        and len(node.args) == 2
        and not node.kwargs
        and isinstance(node.args[0], ir.Name)
        and node.args[0].ident == ident
        and isinstance(node.args[1], ir.Const)
        and type(node.args[1].value) is str
    ):
        return node.args[1].value
    return None


def _ns_store(stmt: Any, ident: str, helper: str) -> Optional[ir.Helper]:
    if (
        isinstance(stmt, ir.ExprStmt)
        and isinstance(stmt.expr, ir.Helper)
        and stmt.expr.name == helper
        and isinstance(stmt.expr.args[0], ir.Name)
        and stmt.expr.args[0].ident == ident
    ):
        return stmt.expr
    return None


def _names_of(node: Any, ident: str, memo: Optional[dict] = None) -> int:
    """How many ``Name`` nodes for ``ident`` there are under ``node``. With ``memo``, each
    statement's counts of every ident are kept (by identity: IR nodes are immutable, and the
    memo holds the node so its id stays its own): asking again for every suffix of a block, in
    every round of ``ns_scalars``, stays cheap."""
    if memo is None:
        return sum(1 for n in ir.walk(node) if isinstance(n, ir.Name) and n.ident == ident)
    if isinstance(node, tuple):
        return sum(_names_of(n, ident, memo) for n in node)
    if not isinstance(node, ir.Stmt):
        return _names_of(node, ident)
    return _name_counts(node, memo).get(ident, 0)


def _name_counts(stmt: ir.Stmt, memo: dict) -> dict:
    hit = memo.get(("names", id(stmt)))
    if hit is None:
        counts: dict = {}
        todo = [v for _f, v in ir.children(stmt)]
        while todo:
            item = todo.pop()
            if isinstance(item, tuple):
                todo.extend(item)
            elif isinstance(item, ir.Stmt):
                for k, n in _name_counts(item, memo).items():
                    counts[k] = counts.get(k, 0) + n
            elif isinstance(item, ir.Name):
                counts[item.ident] = counts.get(item.ident, 0) + 1
                todo.extend(v for _f, v in ir.children(item))
            elif isinstance(item, ir.Node):
                todo.extend(v for _f, v in ir.children(item))
        hit = memo[("names", id(stmt))] = (stmt, counts)
    return hit[1]


def _has_capture(node: Any, memo: dict) -> bool:
    """``node`` is a statement or has a ``Capture`` (a block inside an expression) under it;
    memoised per expression node as ``_names_of`` is."""
    if not isinstance(node, ir.Expr):
        return True
    hit = memo.get(("capture", id(node)))
    if hit is None:
        found = any(isinstance(n, ir.Capture) for n in ir.walk(node))
        hit = memo[("capture", id(node))] = (node, found)
    return hit[1]


def _plain(expr: Any, ident: str, keys: tuple) -> bool:
    """``expr`` is built from literals, operators and ``ident``'s own attributes only, so its
    value has a builtin type (induction over the stores): never a bound method."""
    if isinstance(expr, (ir.Const, ir.ListLit, ir.TupleLit, ir.DictLit, ir.Not)):
        return True
    if _ns_read_key(expr, ident) in keys:
        return True
    if isinstance(expr, ir.BinOp):
        return _plain(expr.left, ident, keys) and _plain(expr.right, ident, keys)
    if isinstance(expr, ir.UnaryOp):
        return _plain(expr.operand, ident, keys)
    if isinstance(expr, ir.BoolOp):
        return all(_plain(v, ident, keys) for v in expr.values)
    if isinstance(expr, ir.Compare):
        return _plain(expr.left, ident, keys) and all(_plain(e, ident, keys) for _, e in expr.ops)
    return False


def _local_fields(node: ir.Node) -> tuple:
    """The fields of ``node`` that run in the current Python function: none of a function
    definition or a recursive loop (their own functions), and not a loop's filter (a generator
    expression)."""
    if isinstance(node, ir.FuncDef) or (isinstance(node, ir.For) and node.recursive):
        return ()
    return tuple(
        f for f, _v in ir.children(node) if not (isinstance(node, ir.For) and f == "filter")
    )


def _ns_region_ok(region: tuple, ident: str, keys: tuple, memo: dict) -> bool:
    """Every use of ``ident`` in ``region`` is a read or store of one of ``keys`` that runs in
    this function (not in a macro, call block, recursive loop or loop filter), and every stored
    value is plain; returns False otherwise (also when ``ident`` appears in a place it skips)."""
    seen = [0]
    ok = [True]

    def visit(node: Any) -> None:
        if not ok[0]:
            return
        if isinstance(node, tuple):
            for n in node:
                visit(n)
            return
        if not isinstance(node, ir.Node):
            return
        key = _ns_read_key(node, ident)
        if key is not None:
            if key not in keys:
                ok[0] = False
            seen[0] += _names_of(node, ident)
            return
        for helper in ("jinja.ns_set", "jinja.ns_check"):
            call = _ns_store(node, ident, helper)
            if call is not None:
                seen[0] += 1
                if helper == "jinja.ns_set":
                    attr = call.args[1]
                    if not (
                        isinstance(attr, ir.Const)
                        and attr.value in keys
                        and _plain(call.args[2], ident, keys)
                    ):
                        ok[0] = False
                    visit(call.args[2])
                return
        for f in _local_fields(node):
            visit(getattr(node, f))

    visit(region)
    return ok[0] and seen[0] == _names_of(region, ident, memo)


def ns_scalars(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    count = 0
    memo: dict = {}  # name counts per statement, kept across rounds (untouched nodes stay)
    while True:  # one namespace at a time: each proof looks at the module as it is now
        changed = _ns_scalar_once(module, f"_ns{count + 1}", memo)
        if changed is None:
            return module
        module, count = changed, count + 1


def _ns_scalar_once(module: ir.Module, mode: str, memo: dict) -> Optional[ir.Module]:
    binds = _assignments(module, memo)
    total = {}

    def scalarise(stmt: ir.Assign, region: tuple) -> Optional[tuple]:
        found = _ns_candidate(stmt)
        if found is None:
            return None
        ident, keys = found
        if [w for w in binds.get(ident, []) if w is not stmt and not _is_init(w)]:
            return None
        if not all(_plain(v, ident, keys) for _, v in stmt.value.kwargs):  # type: ignore[attr-defined]
            return None
        if ident not in total:  # every read (the binding statements' targets are not reads)
            total[ident] = _names_of(module.body, ident, memo) - len(binds[ident])
        if total[ident] != _names_of(region, ident, memo) or not _ns_region_ok(
            region, ident, keys, memo
        ):
            return None
        on = ir.Name(mode, mode)
        slot = {k: ir.Name(f"{mode}_{k}", f"{mode}_{k}") for k in keys}

        def rewrite(node: Any, known: Optional[bool] = None) -> Any:
            """``node`` with the namespace's uses replaced; ``known``: the mode, where a branch
            on it has decided it."""
            if isinstance(node, tuple):
                if _is_block(node):
                    new = stores(node, known)
                else:
                    new = tuple(rewrite(n, known) for n in node)
                # the same object when nothing changed: memoised counts stay valid
                return (
                    node
                    if all(a is b for a, b in zip(new, node)) and len(new) == len(node)
                    else new
                )
            if not isinstance(node, ir.Node) or (
                isinstance(node, ir.Stmt) and not _names_of(node, ident, memo)
            ):
                return node
            key = _ns_read_key(node, ident)
            if key is not None:
                general = node.fallback if isinstance(node, ir.DictLookup) else node
                if known is not None:
                    return slot[key] if known else general
                return ir.CondExpr(on, slot[key], general, span=node.span)
            changes = {}
            for f in _local_fields(node):
                old = getattr(node, f)
                new = rewrite(old, known)
                if new is not old:
                    changes[f] = new
            return dataclasses.replace(node, **changes) if changes else node

        def stores(body: tuple, known: Optional[bool]) -> tuple:
            """A block with ``{% set ns.k = v %}`` (a check, then the store) as one branch on
            the mode: the local on one side, the general store on the other."""
            out: list = []
            for stmt in body:
                if _ns_store(stmt, ident, "jinja.ns_check") is not None:
                    if known is None:
                        out.append(ir.If(ir.Not(on), (stmt,)))
                    elif known is False:
                        out.append(stmt)
                    continue
                call = _ns_store(stmt, ident, "jinja.ns_set")
                if call is None:
                    out.append(rewrite(stmt, known))
                    continue
                check = ()
                if (
                    out
                    and isinstance(out[-1], ir.If)
                    and out[-1].orelse == ()
                    and out[-1].test == ir.Not(on)
                ):
                    check = out.pop().body  # the check belongs to the general store
                value = call.args[2]
                local = ir.Assign(slot[call.args[1].value], rewrite(value, True), span=stmt.span)  # type: ignore[attr-defined]
                general = check + (
                    ir.ExprStmt(
                        dataclasses.replace(call, args=call.args[:2] + (rewrite(value, False),)),
                        span=stmt.span,
                    ),
                )
                if known is None:
                    out.append(ir.If(on, (local,), general))
                else:
                    out.extend((local,) if known else general)
            return tuple(out)

        create = stmt.value  # type: ignore[attr-defined]
        scalar = tuple(ir.Assign(slot[k], v, span=stmt.span) for k, v in create.kwargs)
        # the object is never read on this path; binding it keeps the flow analysis exact
        scalar += (ir.Assign(stmt.target, ir.Const(None), span=stmt.span),)
        head = (
            ir.Assign(
                on, ir.Compare(create.args[0], (("is", ir.Ref("jinja.Namespace")),)), span=stmt.span
            ),
            ir.If(on, scalar, (stmt,)),
        )
        return head + rewrite(region)

    done = [False]

    def block(body: tuple) -> tuple:
        for i, stmt in enumerate(body):
            if done[0]:
                return body
            if isinstance(stmt, ir.Assign):
                new = scalarise(stmt, body[i + 1 :])
                if new is not None:
                    done[0] = True
                    return body[:i] + new
            changed = descend(stmt)
            if done[0]:
                return body[:i] + (changed,) + body[i + 1 :]
        return body

    def descend(node: Any) -> Any:
        if done[0]:
            return node
        if isinstance(node, tuple):
            if _is_block(node):
                return block(node)
            return ir.map_children(node, descend)
        if not isinstance(node, ir.Node) or not _has_capture(node, memo):
            return node  # an expression without a block in it has no assignment to look at
        return ir.map_children(node, descend)

    body = block(module.body)
    return dataclasses.replace(module, body=body) if done[0] else None


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


def context_gets(module: ir.Module) -> ir.Module:
    """The template's start values (``resolve_top``) as ``ContextGet``: a ``dict.get`` each,
    with the defaults computed once, when the module is imported. Runs last (the other passes
    know ``resolve_top`` as a start value)."""
    if module.dialect != "jinja":
        return module

    def one(stmt: Any) -> Any:
        if (
            isinstance(stmt, ir.Assign)
            and isinstance(stmt.value, ir.Helper)
            and stmt.value.name == "jinja.resolve_top"
            and stmt.value.args[0] == ir.Local("context")
            and isinstance(stmt.value.args[1], ir.Const)
        ):
            return dataclasses.replace(stmt, value=ir.ContextGet(stmt.value.args[1].value))
        return stmt

    return dataclasses.replace(module, body=tuple(one(s) for s in module.body))


def run(module: ir.Module) -> ir.Module:
    return ns_scalars(loop_counters(dict_items(top_resolve(direct_output(direct_calls(module))))))
