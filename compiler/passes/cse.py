"""Common lookups: a dict key read again reads the value its first read kept.

Chat templates read the same keys of the same message over and over (``message.role`` six
times in one iteration of seed 001's loop). After ``dict_items`` each such read is a
``DictLookup``; this pass finds the reads that an earlier read of the same key of the same
variable *dominates* (it ran on every path to them, in the same Python function) with nothing
in between that could change the answer:

- the variable is not bound again (an assignment, a loop target);
- no call of template-supplied code runs (a macro, a ``caller``, ``x()`` of a value): dicts
  are immutable under the sandbox, so only foreign code could change one.

The first read keeps its value and whether the object is a dict (``(v := obj[key]) if (d :=
type(obj) is dict) and key in obj else (v := <general lookup>)``); a later read is ``v if d
else <general lookup>``: a dict answers with the kept value, anything else is looked up again
exactly as before. The one difference a template could see is identity: a dict without the
key answers each read with one undefined value instead of a new one each time. So the pass runs
only where the template cannot tell (``scope.uses_identity`` is false; ``pipeline`` decides).
Under the same condition, an undefined value that depends only on constants (``a if b``
without ``else``) is made once, at import (``Hoisted``).

Dominance is read off the IR's structure: statements of a block run in order; a branch's
test runs before its branches; the first operand of ``and``/``or``, the test of a conditional
expression and the first comparison of a chain run whenever their expression does. A loop
body starts from what is known before the loop, less what the loop itself may change (each
iteration runs the same body). Bodies Python runs elsewhere start from nothing: a macro (its
own function), a recursive loop (a nested function), a loop filter (a generator) and a
``Capture`` (emitted before the statement that holds it).
"""

from __future__ import annotations

from operator import is_not
from typing import Any, Optional

from .. import ir
from .util import LEAVES, calls_foreign_code


def _bound(target: Any) -> set:
    if isinstance(target, ir.Name):
        return {target.ident}
    if isinstance(target, ir.Target):
        return {n.ident for n in target.names if isinstance(n, ir.Name)}
    return set()


class _Known:
    """What is kept on every path to here: ``values``, (ident, key) -> (the local keeping that
    lookup's value, ``item`` or ``truth``: the value itself or only its truth); ``flags``,
    ident -> (the local keeping whether it is a dict, the read that set it). A region made
    for a branch starts as a copy of its parent's; forgetting (a call, a rebinding) also
    forgets in every enclosing region, since the branch may have run."""

    __slots__ = ("parent", "values", "flags")

    def __init__(self, parent: Optional["_Known"] = None, copy: bool = False):
        self.parent = parent
        self.values: dict = dict(parent.values) if copy and parent else {}
        self.flags: dict = dict(parent.flags) if copy and parent else {}

    def branch(self) -> "_Known":
        return _Known(self, copy=True)

    def forget(self, idents: Optional[set] = None) -> None:
        region: Optional[_Known] = self
        while region is not None:
            if idents is None:
                region.values.clear()
                region.flags.clear()
            else:
                for k in [k for k in region.values if k[0] in idents]:
                    del region.values[k]
                for i in idents:
                    region.flags.pop(i, None)
            region = region.parent


class _Pass:
    def __init__(self) -> None:
        self.count = 0
        self.flag_names: dict[str, str] = {}
        self.reused: set[str] = set()  # kept values read again
        self.flag_used: set[int] = set()  # reads whose flag another read relies on
        # ids of the nodes this traversal made (``_finished`` visits only them: every other
        # node is the input's, with no kept lookup under it), and whether a helper
        # ``_shared`` may hoist was seen (then ``_finished`` visits every node)
        self.made: set[int] = set()
        self.shareable = False

    def replaced(self, node: Any, **fields: Any) -> Any:
        """``_replaced``, the node made noted in ``made``."""
        new = _replaced(node, **fields)
        if new is not node:
            self.made.add(id(new))
        return new

    # ------------------------------------------------------------------ expressions

    def lookup(self, node: ir.DictLookup, known: _Known, first_ok: bool) -> ir.Expr:
        if not (
            isinstance(node.obj, ir.Name)
            and isinstance(node.key, ir.Const)
            and type(node.key.value) is str
        ):
            return node
        ident = node.obj.ident
        flag = known.flags.get(ident)
        if flag is not None:
            self.flag_used.add(flag[1])
        kept = known.values.get((ident, node.key.value))
        # dominated by a read of the same key, so by its flag too; a ``truth`` read keeps
        # only the truth (``obj.get(key)``: an absent key costs no undefined value)
        if kept is not None and (kept[1] == "item" or node.mode == "truth"):
            self.reused.add(kept[0])
            return ir.replace(node, cache=kept[0], flag=flag[0], again=True)
        if not first_ok:  # a place where ``:=`` may not stand: only a known flag
            return node if flag is None else ir.replace(node, flag=flag[0])
        self.count += 1
        value = ""
        if node.mode != "defined":  # a ``defined`` test does not compute the value
            value = f"_v{self.count}"  # no template text in identifiers
            known.values[(ident, node.key.value)] = (value, node.mode)
        if flag is None:
            name = self.flag_names.setdefault(ident, f"_dict{len(self.flag_names) + 1}")
            known.flags[ident] = (name, self.count)
            return ir.replace(node, cache=value, flag=name, sets_flag=self.count)
        return ir.replace(node, cache=value, flag=flag[0])

    def expr(self, node: Any, known: _Known, first_ok: bool = True) -> Any:
        """``node`` rewritten, in Python's evaluation order; ``known`` grows with the reads
        that run whenever ``node`` does."""
        if node.__class__ in LEAVES:  # (most nodes: no lookup under them, no call)
            return node
        if isinstance(node, tuple):
            return _map_tuple(node, lambda n: self.expr(n, known, first_ok))
        if not isinstance(node, ir.Node):
            return node
        if isinstance(node, ir.DictLookup):
            if node.bind is not None:  # a lookup on an expression: the expression runs first
                return self.replaced(node, bind=self.expr(node.bind, known, first_ok))
            return self.lookup(node, known, first_ok)
        if isinstance(node, ir.BoolOp):
            values = [self.expr(node.values[0], known, first_ok)]
            region = known
            for v in node.values[1:]:  # each runs only after the ones before it
                region = region.branch()
                values.append(self.expr(v, region, first_ok))
            return self.replaced(node, values=_same_tuple(values, node.values))
        if isinstance(node, ir.CondExpr):
            test = self.expr(node.test, known, first_ok)
            body = self.expr(node.body, known.branch(), first_ok)
            orelse = self.expr(node.orelse, known.branch(), first_ok)
            return self.replaced(node, test=test, body=body, orelse=orelse)
        if isinstance(node, ir.Compare):
            left = self.expr(node.left, known, first_ok)
            ops, region = [], known
            for i, pair in enumerate(node.ops):
                if i:
                    region = region.branch()  # a chain stops at the first false comparison
                e = self.expr(pair[1], region, first_ok)
                ops.append(pair if e is pair[1] else (pair[0], e))
            return self.replaced(node, left=left, ops=_same_tuple(ops, node.ops))
        if isinstance(node, ir.Capture):
            # emitted before the statement that holds it: nothing kept is known there yet
            return self.replaced(node, body=self.block(node.body, _Known(known)))
        changed = ir.map_children(node, lambda child: self.expr(child, known, first_ok))
        if changed is not node:
            self.made.add(id(changed))
        if calls_foreign_code(node):
            known.forget()  # after its arguments ran
        elif node.__class__ is ir.Helper and node.name in _SHAREABLE:
            self.shareable = True
        return changed

    # ------------------------------------------------------------------ statements

    def block(self, body: tuple, known: _Known) -> tuple:
        return _map_tuple(body, lambda s: self.stmt(s, known))

    def stmt(self, node: Any, known: _Known) -> Any:
        if isinstance(node, (ir.Output, ir.ExprStmt)):
            return self.replaced(node, expr=self.expr(node.expr, known))
        if isinstance(node, ir.Return):
            return self.replaced(node, value=self.expr(node.value, known))
        if isinstance(node, ir.Assign):
            value = self.expr(node.value, known)
            known.forget(_bound(node.target))
            return self.replaced(node, value=value)
        if isinstance(node, ir.If):
            test = self.expr(node.test, known)
            body = self.block(node.body, known.branch())
            orelse = self.block(node.orelse, known.branch())
            return self.replaced(node, test=test, body=body, orelse=orelse)
        if isinstance(node, ir.Scoped):
            bindings = self.block(node.bindings, known)  # run first, in this block
            body = self.block(node.body, known.branch())
            return self.replaced(node, bindings=bindings, body=body)
        if isinstance(node, ir.For):
            return self.for_(node, known)
        if isinstance(node, ir.FuncDef):
            if ir.has((node.params, node.wrap_args), _shareable):  # (not traversed)
                self.shareable = True
            # its own Python function: starts from nothing, and runs only when called
            prologue = self.block(node.prologue, _Known())
            return self.replaced(node, prologue=prologue, body=self.block(node.body, _Known()))
        return node  # Text, Break, Continue

    def for_(self, node: ir.For, known: _Known) -> ir.For:
        nested = node.recursive or node.filter is not None
        # a filtered loop's iterable sits in a generator expression, where ``:=`` may not
        it = self.expr(node.iter, known, first_ok=not nested)
        inner = _Known(known)  # a nested function or generator: nothing kept is known
        changes = None if nested else _changes(node)
        if changes is not None:
            inner.values = {k: v for k, v in known.values.items() if k[0] not in changes}
            inner.flags = {k: v for k, v in known.flags.items() if k not in changes}
        if node.filter is not None:  # (not traversed: a generator's, where nothing is kept)
            filtered = ir.walk(node.filter)
            if any(calls_foreign_code(n) for n in filtered):
                known.forget()
            if any(_shareable(n) for n in filtered):
                self.shareable = True
        body = self.block(node.body, inner)
        else_ = self.block(node.else_, known.branch())
        known.forget(_bound(node.target) | ({node.loop} if node.loop else set()))
        return self.replaced(node, iter=it, body=body, else_=else_)


def _changes(node: ir.Node) -> Optional[set]:
    """The idents a statement may bind, or None when it may call foreign code (each node
    dispatched on its class: ``calls_foreign_code`` asked of the call classes only)."""
    out: set = set()
    calls, binders, func = _CALLS, _BINDERS, ir.FuncDef
    for n in ir.of_classes(ir.walk(node), _LOOKED_AT):
        cls = n.__class__
        if cls in calls:
            if calls_foreign_code(n):
                return None
        elif cls in binders:
            out |= _bound(n.target)
        elif cls is func:
            out.add(n.ident)
    return out


#: the classes of the nodes ``calls_foreign_code`` may be true of, and of those with a target
_CALLS = frozenset({ir.CallValue, ir.CallFunc, ir.Helper})
_BINDERS = frozenset({ir.Assign, ir.For})
_LOOKED_AT = _CALLS | _BINDERS | {ir.FuncDef}


def _unkept(node: Any, p: _Pass) -> Any:
    """Kept values and flags nothing read again: not kept."""
    if isinstance(node, tuple):
        return _map_tuple(node, lambda n: _unkept(n, p))
    if not isinstance(node, ir.Node):
        return node
    if isinstance(node, ir.DictLookup) and node.bind is not None:
        return _replaced(node, bind=_unkept(node.bind, p))
    if isinstance(node, ir.DictLookup) and not node.again:
        cache = node.cache if node.cache in p.reused else ""
        sets_flag = node.sets_flag if node.sets_flag in p.flag_used else 0
        flag = node.flag if sets_flag or not node.sets_flag else ""
        if (cache, flag, sets_flag) != (node.cache, node.flag, node.sets_flag):
            return ir.replace(node, cache=cache, flag=flag, sets_flag=sets_flag)
        return node
    return ir.map_children(node, lambda child: _unkept(child, p))


def _finished(node: Any, p: _Pass) -> Any:
    """``_shared(_unkept(node, p))`` in one walk (``_unkept`` changes only ``DictLookup``
    nodes and what is under them, ``_shared`` only helpers of constants, which hold none).
    Unless ``p`` saw a helper ``_shared`` may hoist, only the nodes ``p`` made (and every
    lookup) are visited: a node of the input holds no lookup ``p`` changed (the input holds
    no kept value: this pass runs once), so ``_unkept`` leaves it as it is."""
    mappers = ir._MAPPERS
    made = None if p.shareable else p.made

    def go(n: Any) -> Any:
        if isinstance(n, tuple):
            return _map_tuple(n, go)
        if not isinstance(n, ir.Node):
            return n
        if isinstance(n, ir.DictLookup):
            return _shared(_unkept(n, p))
        if made is not None and id(n) not in made:
            return n
        if _shareable(n):
            return ir.Hoisted(n, span=n.span)
        mapper = mappers.get(n.__class__) or ir._mapper(n.__class__)
        return mapper(n, go)

    return go(node)


def _map_tuple(items: tuple, fn: Any) -> tuple:
    """``items`` with ``fn`` applied to each, in order; the same tuple when none changed."""
    return _same_tuple([fn(n) for n in items], items)


def _same_tuple(new: list, old: tuple) -> tuple:
    return tuple(new) if any(map(is_not, new, old)) else old


def _replaced(node: Any, **fields: Any) -> Any:
    """``node`` with ``fields``, or ``node`` itself when each is the object it holds."""
    for name, value in fields.items():
        if getattr(node, name) is not value:
            return ir.replace(node, **fields)
    return node


def run(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module
    p = _Pass()
    body = p.block(module.body, _Known())
    return ir.replace(module, body=_finished(body, p))


#: Undefined values that depend only on constant arguments: one for every render (the
#: same condition as kept lookups: the template cannot compare identities).
_SHAREABLE = frozenset({"jinja.cond_undefined"})


def _shareable(node: Any) -> bool:
    return (
        isinstance(node, ir.Helper)
        and node.name in _SHAREABLE
        and not node.kwargs
        and all(isinstance(a, ir.Const) for a in node.args)
    )


def _shared(node: Any) -> Any:
    if isinstance(node, tuple):
        return _map_tuple(node, _shared)
    if not isinstance(node, ir.Node):
        return node
    if _shareable(node):
        return ir.Hoisted(node, span=node.span)
    return ir.map_children(node, _shared)
