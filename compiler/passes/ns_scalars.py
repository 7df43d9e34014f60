"""Namespace attributes kept in locals.

a ``namespace(a=..., b=...)`` bound once to a variable that is only ever used as ``ns.a``
reads and ``{% set ns.a = ... %}`` stores of its own attributes, all later in the same
function, keeps each attribute in a local (no object, no lookups, no stores through the
runtime) when the call really reaches jinja2's ``namespace`` (a render context may bind
another value to that name: then the general path runs). Only for attributes whose stored
values are built from literals, operators and the namespace's own attributes: those can
never be the bound ``str.format`` the sandbox wraps on every read.

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Optional

from .. import ir
from .util import is_block, is_init, own_bindings

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
    statement's counts of every ident are kept (``_tables``): asking again for every suffix of
    a block, in every round of ``ns_scalars``, stays cheap."""
    if memo is None:
        return sum(1 for n in ir.walk(node) if isinstance(n, ir.Name) and n.ident == ident)
    if isinstance(node, tuple):
        return sum(_names_of(n, ident, memo) for n in node)
    if not isinstance(node, ir.Stmt):
        return _names_of(node, ident)
    return _tables(node, memo)[0].get(ident, 0)


def _one(field: str) -> Any:
    """The getter of a 1-tuple of ``node``'s one child field."""
    get = attrgetter(field)
    return lambda node: (get(node),)


#: per node class with children, the getter of its child fields' values, last first (a
#: stack's order), as a tuple (a class with one child field: of a 1-tuple, ``_one``)
_CHILDREN = {
    cls: attrgetter(*fields[::-1]) if len(fields) > 1 else _one(*fields)
    for cls, fields in ((cls, ir.child_fields(cls)) for cls in ir.NODE_CLASSES)
    if fields
}
_STMTS = frozenset(cls for cls in ir.NODE_CLASSES if issubclass(cls, ir.Stmt))
#: the nodes that bind names (``util.own_bindings``)
_BINDERS = frozenset({ir.Assign, ir.For, ir.FuncDef})


def _tables(stmt: ir.Stmt, memo: dict) -> tuple:
    """What the rounds ask of each statement, at or under it, from one walk: (the ``Name``
    count of each watched ident, the namespace bindings (``_ns_candidate``), the binders of
    each watched ident (``util.own_bindings``)); the watched idents (``memo["watched",]``) are
    those of the namespace bindings, the only ones the rounds ask about. Memoised by identity
    (IR nodes are immutable, and the memo holds the statement so its id stays its own) and kept
    across rounds: untouched statements keep theirs, and a rewritten one is made from its
    sub-statements' tables."""
    hit = memo.get(("tables", id(stmt)))
    if hit is None:
        watched = memo["watched",]
        counts: dict = {}
        found: list = []
        binds: dict = {}
        # ``ir.walk_own(stmt)``'s nodes in its order (parents first, children in field order),
        # read off a stack here: a walk per statement made a list, and called its test of a
        # nested statement on every node
        stack = [stmt]
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            item = pop()
            cls = item.__class__
            if cls is ir.Name:
                if item.ident in watched:
                    counts[item.ident] = counts.get(item.ident, 0) + 1
                continue
            if cls is tuple:
                extend(reversed(item))
                continue
            get = _CHILDREN.get(cls)
            if get is None:  # a node without children, a plain value, a tuple of a subclass
                if isinstance(item, tuple):
                    extend(reversed(item))
                continue
            if cls in _STMTS and item is not stmt:
                sub_counts, sub_found, sub_binds = _tables(item, memo)
                for k, n in sub_counts.items():
                    counts[k] = counts.get(k, 0) + n
                found.extend(sub_found)
                for k, whys in sub_binds.items():
                    binds.setdefault(k, []).extend(whys)
                continue
            if cls is ir.Assign and _ns_candidate(item) is not None:
                found.append(item)
            if cls in _BINDERS:
                for k, why in own_bindings(item):
                    if k in watched:
                        binds.setdefault(k, []).append(why)
            extend(get(item))
        hit = memo[("tables", id(stmt))] = (stmt, counts, tuple(found), binds)
    return hit[1:]


def _watch(ident: str, memo: dict) -> None:
    """Make ``ident`` one of the idents the tables count (made again from the next ask)."""
    if ident not in memo["watched",]:
        memo["watched",] = memo["watched",] | {ident}
        for key in [k for k in memo if k[0] == "tables"]:
            del memo[key]


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
    if isinstance(node, ir.For):
        return _FOR_LOCAL_FIELDS
    return ir.child_fields(type(node))  # (a field holding no node: its readers skip it)


_FOR_LOCAL_FIELDS = tuple(f for f in ir.child_fields(ir.For) if f != "filter")


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
        if not isinstance(node, ir.Node) or (
            isinstance(node, ir.Stmt) and not _names_of(node, ident, memo)
        ):
            return  # (a statement without the name has no use of it)
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


def _live(stmt: ir.Stmt, memo: dict) -> bool:
    """Some namespace binding at or under ``stmt`` has not failed its proof yet."""
    return any(("failed", id(c)) not in memo for c in _tables(stmt, memo)[1])


#: the class of the nodes that may make a namespace ``run`` watches
_ASSIGN = frozenset({ir.Assign})


def run(module: ir.Module) -> ir.Module:
    """Scalarise one namespace per round, the first (in the descent's order) whose proof holds
    on the module as it is then, until none does.

    A round skips the statements with no namespace binding under them that can still succeed:
    a binding whose proof failed fails in every later round (``memo["failed", id]``), because a
    rewrite of another namespace only adds bindings, only copies a read or store of another
    name in its place (the two branches on the mode), never moves one across a function or into
    or out of a region, and never turns a value plain; so the rounds find what a descent of the
    whole module would, at the cost of the paths to the live bindings."""
    if module.dialect != "jinja":
        return module
    watched = frozenset(
        n.target.ident
        for n in ir.of_classes(ir.walk(module.body), _ASSIGN)
        if _ns_candidate(n) is not None
    )
    if not watched:
        return module
    count = 0
    # tables per statement, kept across rounds (untouched nodes stay)
    memo: dict = {("watched",): watched}
    while True:  # one namespace at a time: each proof looks at the module as it is now
        changed = _ns_scalar_once(module, f"_ns{count + 1}", memo)
        if changed is None:
            return module
        module, count = changed, count + 1


def _ns_scalar_once(module: ir.Module, mode: str, memo: dict) -> Optional[ir.Module]:
    def scalarise(stmt: ir.Assign, region: tuple) -> Optional[tuple]:
        if ("failed", id(stmt)) in memo:
            return None
        new = scalarised(stmt, region)
        if new is None and _ns_candidate(stmt) is not None:
            memo["failed", id(stmt)] = stmt
        return new

    def scalarised(stmt: ir.Assign, region: tuple) -> Optional[tuple]:
        found = _ns_candidate(stmt)
        if found is None:
            return None
        ident, keys = found
        _watch(ident, memo)  # (a binding a rewrite made: none so far)
        binds = [w for top in module.body for w in _tables(top, memo)[2].get(ident, ())]
        if [w for w in binds if w is not stmt and not is_init(w)]:
            return None
        if not all(_plain(v, ident, keys) for _, v in stmt.value.kwargs):  # type: ignore[attr-defined]
            return None
        # every read (the binding statements' targets are not reads)
        total = _names_of(module.body, ident, memo) - len(binds)
        if total != _names_of(region, ident, memo) or not _ns_region_ok(
            region, ident, keys, memo
        ):
            return None
        on = ir.Name(mode, mode)
        slot = {k: ir.Name(f"{mode}_{k}", f"{mode}_{k}") for k in keys}

        def rewrite(node: Any, known: Optional[bool] = None) -> Any:
            """``node`` with the namespace's uses replaced; ``known``: the mode, where a branch
            on it has decided it."""
            if isinstance(node, tuple):
                if is_block(node):
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
            return ir.replace(node, **changes) if changes else node

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
                        ir.replace(call, args=call.args[:2] + (rewrite(value, False),)),
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
            if not _live(stmt, memo):
                continue  # no binding under it can succeed (see ``run``)
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
        if isinstance(node, ir.Scoped):  # its bindings are a scope's start values, not a block
            body = descend(node.body)
            return node if body is node.body else ir.replace(node, body=body)
        if isinstance(node, tuple):
            if is_block(node):
                return block(node)
            return ir.map_children(node, descend)
        if not isinstance(node, ir.Node) or not _has_capture(node, memo):
            return node  # an expression without a block in it has no assignment to look at
        return ir.map_children(node, descend)

    body = block(module.body)
    return ir.replace(module, body=body) if done[0] else None
