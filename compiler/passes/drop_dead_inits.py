"""Dead start values dropped: a scope builds a name's start value only when a path can read it.

``{% set x = ... %}`` gives ``x`` an undefined start value, a name read in a macro starts as
a context lookup (jinja2's rules); when every read of ``x`` follows an assignment on every
path, and no macro defined in the scope reads it (a macro may run earlier), the start value
is never seen and is not built. Applies to every scope: the template, loop bodies, macros,
captured blocks. Jinja modules only; keeps output byte-identical (pure IR -> IR).
"""

from __future__ import annotations

from operator import is_not
from typing import Any, Optional

from .. import ir
from .util import is_block, is_init, map_nodes


def _reads(node: Any, out: set, into_funcs: bool = True) -> set:
    """Idents read anywhere under ``node`` (optionally not inside nested functions)."""
    if isinstance(node, tuple):
        for n in node:
            _reads(n, out, into_funcs)
    elif isinstance(node, ir.Node):
        if isinstance(node, ir.Name) and node.ident:
            out.add(node.ident)
        if isinstance(node, ir.FuncDef) and not into_funcs:
            return out
        for f in ir.child_fields(type(node)):
            if isinstance(node, ir.Assign) and f == "target":
                continue
            _reads(getattr(node, f), out, into_funcs)
    return out


def _funcs_read(body: tuple, captures: bool = True) -> set:
    """Idents read by functions (macros) defined in ``body``: they read them at call time.
    Without ``captures`` (no ``Capture`` in the module) every function is a statement of a
    statement's block: expressions are not searched."""
    out: set = set()

    def walk(node: Any) -> None:
        if isinstance(node, tuple):
            for n in node:
                walk(n)
        elif isinstance(node, ir.FuncDef):
            _reads((node.prologue, node.params, node.body, node.wrap_args), out)
        elif isinstance(node, ir.Node):
            for f in ir.child_fields(type(node)):
                value = getattr(node, f)
                if captures or is_block(value):
                    walk(value)

    walk(body)
    return out


def _targets(target: Any) -> set:
    if isinstance(target, ir.Name):
        return {target.ident}
    out: set = set()
    for t in target.names:
        out |= _targets(t)
    return out


def _read_before_assigned(
    body: tuple, candidates: set, captures: bool = True, memo: Optional[dict] = None
) -> set:
    """Candidates that some path may read before it definitely assigns them (``captures``:
    the module may hold a ``Capture``, else none is looked for). ``memo`` keeps the reads of
    each node checked, by identity (the node held): a nested scope's statements are checked
    again for each scope around it."""
    unsafe: set = set()
    # the names definitely assigned at the statement being looked at: one set, changed in
    # place, with a trail of the names added so that a branch's additions are taken back
    # (copying the set at each assignment was quadratic: 40,000 took 114 s)
    assigned: set = set()
    trail: list = []

    def add(name: str) -> None:
        if name not in assigned:
            assigned.add(name)
            trail.append(name)

    def block(stmts: tuple) -> None:
        for stmt in stmts:
            one(stmt)

    def branch(stmts: tuple) -> set:
        """The names ``stmts`` assign (on every path), taken back after."""
        mark = len(trail)
        block(stmts)
        added = trail[mark:]
        del trail[mark:]
        assigned.difference_update(added)
        return set(added)

    def check(expr: Any) -> None:
        if memo is None or expr.__class__ is tuple:
            reads = _reads(expr, set(), into_funcs=False)
        else:
            known = memo.get(id(expr))
            if known is None:
                known = memo[id(expr)] = (expr, _reads(expr, set(), into_funcs=False))
            reads = known[1]
        unsafe.update((reads & candidates) - assigned)

    def one(stmt: Any) -> None:
        if isinstance(stmt, ir.Assign):
            check(stmt.value)
            for name in _targets(stmt.target):
                add(name)
        elif isinstance(stmt, ir.If):
            check(stmt.test)
            both = branch(stmt.body) & branch(stmt.orelse)
            for name in both:
                add(name)
        elif isinstance(stmt, ir.For):
            check((stmt.iter, stmt.filter))
            mark = len(trail)
            for name in _targets(stmt.target):
                add(name)
            block(stmt.body)
            assigned.difference_update(trail[mark:])  # the body may run zero times
            del trail[mark:]
            branch(stmt.else_)
        elif isinstance(stmt, ir.Scoped):
            check(tuple(b.value for b in stmt.bindings))
            block(stmt.body)
        elif isinstance(stmt, ir.FuncDef):
            check(stmt.wrap_args)
            add(stmt.ident)
        else:
            check(stmt)  # Output, ExprStmt, Return: captures are checked inside
            if captures:
                for sub in _walk_captures(stmt):
                    branch(sub.body)

    block(body)
    return unsafe


def _walk_captures(node: Any) -> list:
    found: list = []

    def walk(n: Any) -> None:
        if isinstance(n, tuple):
            for x in n:
                walk(x)
        elif isinstance(n, ir.Capture):
            found.append(n)
        elif isinstance(n, ir.Node) and not isinstance(n, ir.FuncDef):
            for f in ir.child_fields(type(n)):
                walk(getattr(n, f))

    walk(node)
    return found


def _prune(
    block: tuple, rest: tuple = (), kinds: Any = None, memo: Optional[dict] = None
) -> tuple:
    """``block`` without the start values that no path of the scope can read.

    The scope's statements are ``block`` (minus its start values) followed by ``rest``.
    ``kinds``, when given, holds the class of every node of the module: no ``Capture`` or
    ``FuncDef`` among them, none is looked for. ``memo``: ``_read_before_assigned``'s,
    shared by the scopes of one module."""
    inits = {s.target.ident for s in block if is_init(s)}
    if not inits:
        return block
    stmts = tuple(s for s in block if not is_init(s)) + rest
    captures = kinds is None or ir.Capture in kinds
    keep = _read_before_assigned(stmts, inits, captures, memo)
    if kinds is None or ir.FuncDef in kinds:
        keep |= _funcs_read(stmts, captures) & inits
    if inits <= keep:
        return block  # every start value may be read: the same block (no node rebuilt)
    return tuple(s for s in block if not (is_init(s) and s.target.ident not in keep))


def run(module: ir.Module) -> ir.Module:
    """Invariant: a scope only gives a name its start value (undefined, or a context lookup)
    when some path can read that value."""
    if module.dialect != "jinja":
        return module

    def fold(node: Any) -> Any:
        if isinstance(node, ir.For):
            body, else_ = _prune(node.body, (), kinds, memo), _prune(node.else_, (), kinds, memo)
            if body is node.body and else_ is node.else_:
                return node
            return ir.replace(node, body=body, else_=else_)
        if isinstance(node, (ir.Scoped, ir.Capture)):
            body = _prune(node.body, (), kinds, memo)
            return node if body is node.body else ir.replace(node, body=body)
        if isinstance(node, ir.FuncDef):
            defaults = tuple(ir.ExprStmt(p.default) for p in node.params if p.default is not None)
            prologue = _prune(node.prologue, defaults + node.body, kinds, memo)
            return node if prologue is node.prologue else ir.replace(node, prologue=prologue)
        return node

    # the classes of the module's nodes (its walk is usually remembered: the pass before
    # walked the same body): no scope statement, nothing to fold; no ``Capture``, every
    # block is a statement's, and only statements need visiting
    kinds = set(map(type, ir.walk(module.body)))
    memo: dict = {}
    body = module.body
    if not kinds.isdisjoint(_SCOPES):
        body = map_nodes(body, fold) if ir.Capture in kinds else map_stmts(body, fold)
    return ir.replace(module, body=_prune(body, (), kinds, memo))


#: the nodes whose blocks ``run`` prunes (the module's own body aside)
_SCOPES = (ir.For, ir.Scoped, ir.Capture, ir.FuncDef)


def map_stmts(body: tuple, fold: Any) -> tuple:
    """``map_nodes(body, fold)`` for a tree without a ``Capture``, where ``fold`` changes only
    statements: its blocks are all statements' (``is_block`` fields), so only statements are
    visited, bottom-up, each passed to ``fold`` once its blocks are mapped. (Shared with
    ``loop_counters``; its place is ``util``.)"""

    def block(stmts: tuple) -> tuple:
        new = [fold(ir.map_children(s, child)) for s in stmts]
        return tuple(new) if any(map(is_not, new, stmts)) else stmts

    def child(value: Any) -> Any:
        return block(value) if is_block(value) else value

    return block(body)
