"""Variables known to hold strings: a read of a local that every assignment reaching it gave
a ``str`` is marked ``Name(kind="str")``, and ``util.is_str`` trusts the mark.

type knowledge across statements. A forward data-flow analysis over each function's
structured statements (the template's, a macro's, a caller block's, a recursive loop's body)
carries the set of locals known to hold a string, in the order the generated code runs:

- ``x = e`` adds ``x`` when ``util.is_str(e)`` (with the reads known so far: a string built
  from a known string is known), and removes it otherwise; any other binding of ``x`` (a
  loop target, a tuple target, a macro, a parameter) removes it;
- ``if`` continues with what both branches know;
- a loop body starts from what it cannot change: the known locals that no binding anywhere in
  the body (nested loops and captures included) gives a value not known to be a string, found
  by a fixpoint (each round drops what the last round saw bound otherwise); what follows the
  loop (or its ``else``) knows the same, whether the loop ran zero or many times, or broke;
- a function body (a macro, a caller, a recursive loop, whose statements run later, maybe
  many times) starts knowing nothing, and its bindings are its own Python locals;
- a captured block (``{% set x %}...{% endset %}``) is written out before its statement (the
  emitter's ``x_Capture``): whatever it binds is unknown for the whole statement and after.

Only reads of Python locals the analysis follows are marked (``Name`` nodes; compiler
temporaries are ``Local`` and never marked), so every reaching assignment is seen. What the
mark changes is what ``is_str`` changes: ``known_str`` drops the print's ``to_str`` of the
variable, ``direct_output`` writes it directly, and ``+`` of it takes the string size guard
(``limits.concat``). ``is_str`` means "a ``str``, or a subclass that prints the same", so no
rule may drop a ``type(x) is str`` guard on the mark alone.

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations

from typing import Any

from .. import ir
from .util import bindings, has_node, is_str

_EMPTY: frozenset = frozenset()


def run(module: ir.Module) -> ir.Module:
    """Invariant: a ``Name`` read is marked ``kind="str"`` only if it holds a string wherever
    it is read."""
    if module.dialect != "jinja" or not has_node(module.body, _str_assign, _WANTED):
        return module  # (nothing is ever known: the flow would mark no read)
    body, _ = _Flow().block(module.body, _EMPTY)
    return module if body is module.body else ir.replace(module, body=body)


def _str_assign(node: Any) -> bool:
    """An assignment of a string: the only way a local becomes known (no read is marked
    before this pass, so ``is_str`` of a value here is what the flow's first look at it is)."""
    return isinstance(node, ir.Assign) and is_str(node.value)


#: the classes of the nodes ``_str_assign`` can hold of (``has_node``'s filter)
_WANTED = frozenset({ir.Assign})


def _bound(node: Any) -> set:
    """Every local any statement at or under ``node`` binds (functions' own included)."""
    return {ident for ident, _ in bindings(node)}


class _Flow:
    def __init__(self) -> None:
        # idents some binding in the current loop body gave a value not known to be a str
        self.spoiled: set = set()

    def spoil(self, known: frozenset, idents: Any) -> frozenset:
        self.spoiled.update(idents)
        return known.difference(idents) if known else known

    # ------------------------------------------------------------------ statements

    def block(self, stmts: tuple, known: frozenset) -> tuple[tuple, frozenset]:
        out = []
        changed = False
        for s in stmts:
            new, known = self.stmt(s, known)
            changed = changed or new is not s
            out.append(new)
        return (tuple(out) if changed else stmts), known

    def stmt(self, s: Any, known: frozenset) -> tuple[Any, frozenset]:
        if isinstance(s, (ir.Text, ir.Break, ir.Continue)):
            return s, known
        if isinstance(s, ir.Assign):
            value, known = self.expr(s.value, known)
            if isinstance(s.target, ir.Name):
                ident = s.target.ident
                if is_str(value):
                    known = known | {ident}
                else:
                    known = self.spoil(known, (ident,))
            else:
                known = self.spoil(known, _bound(s))
            return _replace(s, value=value), known
        if isinstance(s, (ir.Output, ir.ExprStmt)):
            value, known = self.expr(s.expr, known)
            return _replace(s, expr=value), known
        if isinstance(s, ir.Return):
            value, known = self.expr(s.value, known)
            return _replace(s, value=value), known
        if isinstance(s, ir.If):
            test, known = self.expr(s.test, known)
            body, k1 = self.block(s.body, known)
            orelse, k2 = self.block(s.orelse, known)
            return _replace(s, test=test, body=body, orelse=orelse), k1 & k2
        if isinstance(s, ir.Scoped):  # inline: its bindings, then its body
            bindings, known = self.block(s.bindings, known)
            body, known = self.block(s.body, known)
            return _replace(s, bindings=bindings, body=body), known
        if isinstance(s, ir.For):
            return self.loop(s, known)
        if isinstance(s, ir.FuncDef):
            return self.function(s), self.spoil(known, (s.ident,))
        # a statement this analysis does not know: nothing in it is marked, all it binds is lost
        return s, self.spoil(known, _bound(s))

    def loop(self, s: ir.For, known: frozenset) -> tuple[Any, frozenset]:
        iterable, known = self.expr(s.iter, known)
        own = _bound(ir.Assign(target=s.target, value=ir.Const(None)))
        known = self.spoil(known, own | ({s.loop} if s.loop else set()))
        if s.recursive:  # the body is a function, called again for nested items
            saved, self.spoiled = self.spoiled, set()
            body, _ = self.block(s.body, _EMPTY)
            self.spoiled = saved
            inside = _bound(s)
            known = self.spoil(known, inside)
            else_, known = self.block(s.else_, known)
            return _replace(s, iter=iterable, body=body, else_=else_), known
        saved = self.spoiled
        start = known
        while True:  # what no binding in the body makes unknown
            self.spoiled = set()
            if s.filter is not None:
                filt, _ = self.expr(s.filter, start)
            body, _ = self.block(s.body, start)
            spoiled = self.spoiled
            if not (start & spoiled):
                break
            start = start - spoiled
        self.spoiled = saved | spoiled
        new = _replace(s, iter=iterable, body=body)
        if s.filter is not None:
            new = _replace(new, filter=filt)
        else_, after = self.block(s.else_, start)
        return _replace(new, else_=else_), start & after

    def function(self, s: ir.FuncDef) -> Any:
        saved, self.spoiled = self.spoiled, set()
        prologue, _ = self.block(s.prologue, _EMPTY)
        body, _ = self.block(s.body, _EMPTY)
        self.spoiled = saved
        return _replace(s, prologue=prologue, body=body)

    # ------------------------------------------------------------------ expressions

    def expr(self, e: Any, known: frozenset) -> tuple[Any, frozenset]:
        """``e`` with its reads of known locals marked, and what is known after it (a
        captured block inside binds names: unknown for the whole statement)."""
        captured: set = set()
        for n in ir.walk(e):
            if isinstance(n, ir.Capture):
                captured |= _bound(n)
        if captured:
            known = self.spoil(known, captured)
        if not known and not captured:
            return e, known
        map_children, node_class = ir.map_children, ir.Node

        def go(n: Any) -> Any:
            if isinstance(n, tuple):
                return map_children(n, go)
            if not isinstance(n, node_class):
                return n
            if isinstance(n, ir.Name):
                if n.ident in known and n.kind != "str":
                    return ir.replace(n, kind="str")
                return n
            if isinstance(n, ir.Capture):  # written before the statement, with what is known
                body, _ = self.block(n.body, known)
                return _replace(n, body=body)
            if isinstance(n, ir.Hoisted):  # evaluated once, elsewhere
                return n
            return map_children(n, go)

        return go(e), known


def _replace(node: Any, **fields: Any) -> Any:
    """``node`` with ``fields``, or ``node`` itself when none changed (by identity)."""
    if all(getattr(node, k) is v for k, v in fields.items()):
        return node
    return ir.replace(node, **fields)
