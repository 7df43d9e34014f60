"""Scope resolution with jinja2's rules (a port of jinja2/idtracking.py onto the IR).

Invariant established: every ``Name`` has ``ident`` set to the Python local that holds
it, and every scope (the module, a loop body, a loop's else, a macro, a captured block)
starts with the assignments that give its names their initial values:

- a name first *read* in a scope (and not visible in an enclosing one) is resolved from
  the render context, then the globals, else undefined (``jinja.resolve``);
- a name first *stored* in a scope starts as an alias of the enclosing scope's local, or
  as undefined when no enclosing scope has it (so ``{{ x }}{% set x = 1 %}`` prints the
  context's ``x`` but a macro reading a later-set ``x`` sees undefined, as in jinja2);
- loop targets, ``loop`` and macro parameters are parameters: assigned by the construct.

Locals are named ``l_<level>_<name>`` like jinja2's, so a loop body's ``set`` never
touches the enclosing scope's variable. Only Jinja modules go through this pass; the Go
frontend resolves its own ``$variables``.

A macro parameter's default that reads a parameter not filled in yet (itself or a later one)
reads it as jinja2 does: undefined while it is absent (``jinja.load_name``).

Undefined values: jinja2 starts an absent name as ``missing`` and builds a new ``Undefined`` at
every read of it, which only the ``sameas`` test can tell apart from one shared undefined.
By default a scope starts such a name as one undefined value (cheap reads). With
``exact_undefined`` (templates that use ``sameas`` on two values, see ``uses_identity``) it
does what jinja2 does: start values are ``MISSING`` (``jinja.resolve_missing``,
``jinja.unset``) and every read of a name that is not a parameter goes through
``jinja.load_name``.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Optional

from .. import ir

PARAM, RESOLVE, ALIAS, UNDEFINED = "param", "resolve", "alias", "undefined"


def mangle(level: int, name: str) -> str:
    """The Python local for a template name. jinja2 writes ``l_<level>_<name>`` into Python
    source, where Python NFKC-normalises identifiers (so ``ﬁ`` and ``fi`` share a variable);
    we normalise the same way, then spell non-ASCII names in hex so the identifier is plain."""
    name = unicodedata.normalize("NFKC", name)
    if name.isascii() and name.isidentifier():
        return f"l_{level}_{name}"
    return f"l_{level}_u" + name.encode("utf-8").hex()


class Symbols:
    def __init__(self, parent: Optional["Symbols"] = None, level: Optional[int] = None) -> None:
        self.level = level if level is not None else (0 if parent is None else parent.level + 1)
        self.parent = parent
        self.refs: dict[str, str] = {}
        self.loads: dict[str, tuple[str, Optional[str]]] = {}
        self.stores: set[str] = set()

    def _define_ref(self, name: str, load: Optional[tuple] = None) -> str:
        ident = mangle(self.level, name)
        self.refs[name] = ident
        if load is not None:
            self.loads[ident] = load
        return ident

    def find_load(self, target: str) -> Optional[tuple]:
        if target in self.loads:
            return self.loads[target]
        return self.parent.find_load(target) if self.parent else None

    def find_ref(self, name: str) -> Optional[str]:
        if name in self.refs:
            return self.refs[name]
        return self.parent.find_ref(name) if self.parent else None

    def copy(self) -> "Symbols":
        rv = Symbols(self.parent, self.level)
        rv.refs = dict(self.refs)
        rv.loads = dict(self.loads)
        rv.stores = set(self.stores)
        return rv

    def store(self, name: str) -> None:
        self.stores.add(name)
        if name not in self.refs:
            if self.parent is not None:
                outer_ref = self.parent.find_ref(name)
                if outer_ref is not None:
                    self._define_ref(name, load=(ALIAS, outer_ref))
                    return
            self._define_ref(name, load=(UNDEFINED, None))

    def declare_parameter(self, name: str) -> str:
        self.stores.add(name)
        return self._define_ref(name, load=(PARAM, None))

    def load(self, name: str) -> None:
        if self.find_ref(name) is None:
            self._define_ref(name, load=(RESOLVE, name))

    def branch_update(self, branches: list["Symbols"]) -> None:
        stores: set[str] = set()
        for branch in branches:
            stores.update(branch.stores)
        stores.difference_update(self.stores)
        for sym in branches:
            self.refs.update(sym.refs)
            self.loads.update(sym.loads)
            self.stores.update(sym.stores)
        for name in stores:
            target = self.find_ref(name)
            assert target is not None
            if self.parent is not None:
                outer_target = self.parent.find_ref(name)
                if outer_target is not None:
                    self.loads[target] = (ALIAS, outer_target)
                    continue
            self.loads[target] = (RESOLVE, name)


# ----------------------------------------------------------------------------- analysis


class _Analyzer:
    """jinja2's FrameSymbolVisitor: what one scope reads and stores, in order."""

    def __init__(self, symbols: Symbols) -> None:
        self.symbols = symbols

    def stmts(self, body: tuple) -> None:
        for stmt in body:
            self.stmt(stmt)

    def stmt(self, node: ir.Stmt) -> None:
        if isinstance(node, (ir.Output, ir.ExprStmt)):
            self.expr(node.expr)
        elif isinstance(node, ir.Assign):
            self.expr(node.value)
            self.target(node.target)
        elif isinstance(node, ir.If):
            self.expr(node.test)
            original = self.symbols
            branches = []
            for branch in (node.body, node.orelse):
                self.symbols = original.copy()
                self.stmts(branch)
                branches.append(self.symbols)
            self.symbols = original
            original.branch_update(branches)
        elif isinstance(node, ir.For):
            self.expr(node.iter)
        elif isinstance(node, ir.FuncDef):
            if not node.ident:
                self.symbols.store(node.name)
        elif isinstance(node, ir.Scoped):
            for binding in node.bindings:  # read here; the body is a scope of its own
                self.expr(binding.value)
        # Text, Break, Continue: nothing in this scope.

    def target(self, target: Any) -> None:
        if isinstance(target, ir.Name):
            self.symbols.store(target.name)
        else:
            for item in target.names:
                self.target(item)

    def expr(self, node: Any) -> None:
        if isinstance(node, ir.Name):
            if not node.ident:
                self.symbols.load(node.name)
        elif isinstance(node, ir.Capture):
            return  # a block of its own
        elif isinstance(node, tuple):
            for item in node:
                self.expr(item)
        elif isinstance(node, ir.Node):
            for f in ir.child_fields(type(node)):
                self.expr(getattr(node, f))


def _param_names(target: Any) -> list[str]:
    if isinstance(target, ir.Name):
        return [target.name]
    out: list[str] = []
    for item in target.names:
        out.extend(_param_names(item))
    return out


# ----------------------------------------------------------------------------- rewriting


class _Resolver:
    def __init__(self, exact_undefined: bool = False) -> None:
        self.exact = exact_undefined

    def scope(self, body: tuple, symbols: Symbols) -> tuple:
        """Analyse ``body`` as one scope, rewrite it, and prepend its entry loads."""
        _Analyzer(symbols).stmts(body)
        new_body = tuple(self.stmt(s, symbols) for s in body)
        return self.prologue(symbols) + new_body

    def prologue(self, symbols: Symbols) -> tuple:
        out = []
        names = {ident: name for name, ident in symbols.refs.items()}
        for ident, (kind, src) in symbols.loads.items():
            name = names.get(ident, ident)
            target = ir.Name(name, ident)
            if kind == RESOLVE:
                resolve = "jinja.resolve_missing" if self.exact else "jinja.resolve"
                value: ir.Expr = ir.Helper(resolve, (ir.Local("context"), ir.Const(src)))
            elif kind == ALIAS:
                value = ir.Name(name, src or "")
            elif kind == UNDEFINED:
                value = (
                    ir.Helper("jinja.unset")
                    if self.exact
                    else ir.Helper("jinja.undefined", (ir.Const(name),))
                )
            else:
                continue
            out.append(ir.Assign(target, value))
        return tuple(out)

    def stmt(self, node: ir.Stmt, sym: Symbols) -> ir.Stmt:
        if isinstance(node, ir.For):
            return self.for_(node, sym)
        if isinstance(node, ir.FuncDef):
            return self.funcdef(node, sym)
        if isinstance(node, ir.Scoped):
            return self.scoped(node, sym)
        if isinstance(node, ir.If):
            return ir.replace(
                node,
                test=self.expr(node.test, sym),
                body=tuple(self.stmt(s, sym) for s in node.body),
                orelse=tuple(self.stmt(s, sym) for s in node.orelse),
            )
        if isinstance(node, ir.Assign):
            return ir.replace(
                node, target=self.target(node.target, sym), value=self.expr(node.value, sym)
            )
        if isinstance(node, (ir.Output, ir.ExprStmt)):
            return ir.replace(node, expr=self.expr(node.expr, sym))
        return node

    def scoped(self, node: ir.Scoped, sym: Symbols) -> ir.Scoped:
        """jinja2's ``With``: the values in the enclosing frame, the targets parameters of
        the inner one."""
        values = [self.expr(b.value, sym) for b in node.bindings]
        inner = Symbols(sym)
        for binding in node.bindings:
            for name in _param_names(binding.target):
                inner.declare_parameter(name)
        bindings = tuple(
            ir.replace(b, target=self.target(b.target, inner), value=v)
            for b, v in zip(node.bindings, values)
        )
        return ir.replace(node, body=self.scope(node.body, inner), bindings=bindings)

    def target(self, target: Any, sym: Symbols) -> Any:
        if isinstance(target, ir.Name):
            return ir.Name(
                target.name, target.ident or sym.find_ref(target.name) or "", target.span
            )
        return ir.Target(tuple(self.target(t, sym) for t in target.names), target.span)

    def for_(self, node: ir.For, sym: Symbols) -> ir.For:
        iterable = self.expr(node.iter, sym)
        body_sym = Symbols(sym)
        for name in _param_names(node.target):
            body_sym.declare_parameter(name)
        loop_ident = body_sym.declare_parameter("loop") if node.loop else ""
        test = None
        if node.filter is not None:
            # jinja2's filter frame has the targets but not ``loop``: there it is an outer name
            test = self._filter_test(node.filter, body_sym, sym, _param_names(node.target))
        body = self.scope(node.body, body_sym)
        target = self.target(node.target, body_sym)
        else_ = self.scope(node.else_, Symbols(sym)) if node.else_ else ()
        return ir.replace(
            node, target=target, iter=iterable, body=body, else_=else_, filter=test, loop=loop_ident
        )

    def _filter_test(
        self, expr: ir.Expr, body_sym: Symbols, outer: Symbols, params: list[str]
    ) -> ir.Expr:
        """A loop's ``if`` filter runs before the body scope exists: targets are the loop's
        parameters, every other name is the enclosing scope's (or a context lookup)."""

        def fix(node: Any) -> Any:
            if isinstance(node, ir.Name) and not node.ident:
                if node.name in params:
                    return ir.Name(node.name, body_sym.refs[node.name], node.span)
                ref = outer.find_ref(node.name)
                if ref is not None:
                    return self.load(ir.Name(node.name, ref, node.span), outer)
                return ir.Helper("jinja.resolve", (ir.Local("context"), ir.Const(node.name)))
            return ir.map_children(node, fix)

        return fix(expr)

    def funcdef(self, node: ir.FuncDef, sym: Symbols) -> ir.FuncDef:
        ident = node.ident or sym.find_ref(node.name) or ""
        inner = Symbols(sym)
        params = []
        for p in node.params:
            inner.declare_parameter(p.name.name)
        _Analyzer(inner).expr(tuple(p.default for p in node.params if p.default is not None))
        idents = [inner.refs[p.name.name] for p in node.params]
        position = {ident: i for i, ident in enumerate(idents)}
        for i, p in enumerate(node.params):
            default = None
            if p.default is not None:
                # jinja2 fills the defaults in order: a parameter not filled in yet is undefined
                resolved = self.expr(p.default, inner)
                pending = {  # the parameters it reads from this one on (a set per default)
                    n.ident
                    for n in ir.walk(resolved)
                    if isinstance(n, ir.Name) and position.get(n.ident, -1) >= i
                }
                default = _load_params(resolved, pending) if pending else resolved
            params.append(ir.Param(ir.Name(p.name.name, idents[i], p.name.span), default))
        body = self.scope(node.body, inner)
        # jinja2 assigns the frame's names before it fills in defaults (which may read them)
        prologue_len = len(self.prologue(inner))
        return ir.replace(
            node,
            ident=ident,
            params=tuple(params),
            prologue=body[:prologue_len],
            body=body[prologue_len:],
            wrap_args=tuple(self.expr(a, sym) for a in node.wrap_args),
        )

    def expr(self, node: Any, sym: Symbols) -> Any:
        if isinstance(node, ir.Name):
            if node.ident:
                return node
            ref = sym.find_ref(node.name)
            assert ref is not None, node.name
            return self.load(ir.Name(node.name, ref, node.span), sym)
        if isinstance(node, ir.Capture):
            return ir.replace(node, body=self.scope(node.body, Symbols(sym)))
        return ir.map_children(node, lambda n: self.expr(n, sym))

    def load(self, name: ir.Name, sym: Symbols) -> ir.Expr:
        """A read of a resolved name: as it is, or (``exact_undefined``) jinja2's load."""
        if self.exact and (sym.find_load(name.ident) or (PARAM,))[0] != PARAM:
            return ir.Helper("jinja.load_name", (name, ir.Const(name.name)))
        return name


def _load_params(expr: Any, idents: set) -> Any:
    """``expr`` with each read of one of ``idents`` (parameters that may still be absent) as
    ``jinja.load_name``."""
    if isinstance(expr, ir.Name) and expr.ident in idents:
        return ir.Helper("jinja.load_name", (expr, ir.Const(expr.name)))
    if isinstance(expr, ir.Helper) and expr.name == "jinja.load_name":
        return expr
    return ir.map_children(expr, lambda n: _load_params(n, idents))


def uses_identity(module: ir.Module) -> bool:
    """Whether the template can tell two undefined values apart: a ``sameas`` test of two
    operands neither of which is a constant (an undefined is never ``None``, ``true``, ...),
    or a ``select``/``reject``/``selectattr``/``rejectattr`` whose test may be ``sameas``."""
    from ..jinja.library import FILTER_FUNCS, TEST_FUNCS

    sameas = TEST_FUNCS["sameas"]
    dynamic = {
        FILTER_FUNCS[f]: 2 if f.endswith("attr") else 1
        for f in ("select", "reject", "selectattr", "rejectattr")
    }
    for node in ir.walk(module.body):
        if not isinstance(node, ir.Helper):
            continue
        if node.name == sameas and not any(isinstance(a, ir.Const) for a in node.args[:2]):
            return True
        if node.name in dynamic:
            i = dynamic[node.name]
            test = node.args[i] if len(node.args) > i else None
            if node.kwargs or any(isinstance(a, ir.Starred) for a in node.args[: i + 1]):
                return True
            if test is not None and not (isinstance(test, ir.Const) and test.value != "sameas"):
                return True
    return False


def resolve(module: ir.Module, exact_undefined: bool = False) -> ir.Module:
    """Resolve every name of a Jinja module (see the module docstring)."""
    body = _Resolver(exact_undefined).scope(module.body, Symbols())
    return ir.replace(module, body=body)
