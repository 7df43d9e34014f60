"""Optimising passes (pure IR -> IR). Each keeps output byte-identical.

- ``known_str``: type knowledge. ``to_str(e)`` is dropped where ``e`` is known to be a
  ``str`` already (string constants, ``~`` concatenation, ``+`` of two known strings,
  helpers whose result is always a ``str``). Nothing that could raise is removed.
- ``inline_tests``: the type tests (``is string``, ``is defined``, ``is none``, ...) as the
  Python expressions their runtime functions evaluate (``isinstance(x, str)``), without the
  call.
- ``merge_text``: adjacent ``Text`` nodes (and ``Output`` of a string constant) become one
  ``Text``, so the generated code appends each literal run once.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir

#: Helpers whose result is always exactly a ``str`` (never a subclass that prints otherwise).
STR_HELPERS = frozenset(
    {
        "jinja.concat",
        "jinja_filters.do_tojson",
        "jinja_filters.do_trim",
        "jinja_filters.do_upper",
        "jinja_filters.do_lower",
        "jinja_filters.do_replace",
        "jinja_filters.do_join",
        "jinja_filters.do_title",
        "jinja_filters.do_capitalize",
        "jinja_filters.do_string",
        "jinja_filters.do_center",
        "jinja_filters.do_indent",
        "builtins.str",
    }
)

#: Helpers that convert to str for printing (the dialect's print rule) and are identity on str.
TO_STR_HELPERS = frozenset({"jinja.to_str"})


def is_str(expr: Any) -> bool:
    if isinstance(expr, ir.Const):
        return type(expr.value) is str
    if isinstance(expr, ir.Helper):
        return expr.name in STR_HELPERS or expr.name in TO_STR_HELPERS
    if isinstance(expr, ir.BinOp) and expr.op == "+":
        # str + anything is a str or raises (a str subclass result prints the same)
        return is_str(expr.left) or is_str(expr.right)
    if isinstance(expr, ir.CondExpr):
        return is_str(expr.body) and is_str(expr.orelse)
    if isinstance(expr, ir.CallFunc):  # a compiled macro returns its joined buffer
        return True
    return False


def _map(node: Any, fn: Any) -> Any:
    """Rebuild ``node`` bottom-up, applying ``fn`` to every IR node."""
    if isinstance(node, tuple):
        return ir.map_children(node, lambda n: _map(n, fn))
    if not isinstance(node, ir.Node):
        return node
    return fn(ir.map_children(node, lambda n: _map(n, fn)))


def known_str(module: ir.Module) -> ir.Module:
    """Invariant: no ``to_str`` is applied to an expression already known to be a str."""

    def fold(node: Any) -> Any:
        if isinstance(node, ir.Helper) and node.name in TO_STR_HELPERS and len(node.args) == 1:
            if is_str(node.args[0]):
                return node.args[0]
        return node

    return dataclasses.replace(module, body=_map(module.body, fold))


def _isinstance(value: Any, cls: str) -> ir.Expr:
    return ir.Helper("builtins.isinstance", (value, ir.Ref(cls)))


#: test helper -> the expression its body is, for its one argument
def _is_bool(expr: Any) -> bool:
    return (isinstance(expr, ir.Helper) and expr.name == "builtins.isinstance") or (
        isinstance(expr, ir.Compare) and all(op in ("is", "is not") for op, _ in expr.ops)
    )


INLINE_TESTS = {
    "jinja_filters.test_string": lambda x: _isinstance(x, "builtins.str"),
    "jinja_filters.test_defined": lambda x: ir.Not(_isinstance(x, "jinja.Undefined")),
    "jinja_filters.test_undefined": lambda x: _isinstance(x, "jinja.Undefined"),
    "jinja_filters.test_none": lambda x: ir.Compare(x, (("is", ir.Const(None)),)),
    "jinja_filters.test_true": lambda x: ir.Compare(x, (("is", ir.Const(True)),)),
    "jinja_filters.test_false": lambda x: ir.Compare(x, (("is", ir.Const(False)),)),
}


def inline_tests(module: ir.Module) -> ir.Module:
    """Invariant: no call of a test helper whose body is one Python expression."""

    def fold(node: Any) -> Any:
        if (
            isinstance(node, ir.Helper)
            and node.name in INLINE_TESTS
            and len(node.args) == 1
            and not node.kwargs
            # ``1 is None`` would make Python warn about ``is`` with a literal
            and not isinstance(node.args[0], (ir.Const, ir.ListLit, ir.TupleLit, ir.DictLit))
        ):
            return dataclasses.replace(INLINE_TESTS[node.name](node.args[0]), span=node.span)
        if (
            isinstance(node, ir.Not)
            and isinstance(node.operand, ir.Not)
            and _is_bool(node.operand.operand)
        ):
            return node.operand.operand  # ``not not b`` is ``b`` for a bool
        return node

    return dataclasses.replace(module, body=_map(module.body, fold))


def merge_text(module: ir.Module) -> ir.Module:
    """Invariant: no two adjacent statements of a block are both literal text."""

    def merge_block(body: tuple) -> tuple:
        out: list = []
        for stmt in body:
            if (
                isinstance(stmt, ir.Output)
                and isinstance(stmt.expr, ir.Const)
                and type(stmt.expr.value) is str
            ):
                stmt = ir.Text(stmt.expr.value, span=stmt.span)
            if isinstance(stmt, ir.Text):
                if not stmt.text:
                    continue
                if out and isinstance(out[-1], ir.Text):
                    out[-1] = ir.Text(out[-1].text + stmt.text, span=out[-1].span)
                    continue
            out.append(stmt)
        return tuple(out)

    def fold(node: Any) -> Any:
        changes = {}
        for f in ("body", "orelse", "else_"):
            if (
                hasattr(node, f)
                and isinstance(getattr(node, f), tuple)
                and not isinstance(node, ir.Module)
            ):
                changes[f] = merge_block(getattr(node, f))
        return dataclasses.replace(node, **changes) if changes else node

    body = merge_block(_map(module.body, fold))
    return dataclasses.replace(module, body=body)


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
        for f in node.__dataclass_fields__:  # type: ignore[attr-defined]
            if f == "span":
                continue
            value = getattr(node, f)
            if isinstance(node, ir.Assign) and f == "target":
                continue
            _reads(value, out, into_funcs)
    return out


def _funcs_read(body: tuple) -> set:
    """Idents read by functions (macros) defined in ``body``: they read them at call time."""
    out: set = set()

    def walk(node: Any) -> None:
        if isinstance(node, tuple):
            for n in node:
                walk(n)
        elif isinstance(node, ir.FuncDef):
            _reads((node.prologue, node.params, node.body, node.wrap_args), out)
        elif isinstance(node, ir.Node):
            for f in node.__dataclass_fields__:  # type: ignore[attr-defined]
                walk(getattr(node, f))

    walk(body)
    return out


def _targets(target: Any) -> set:
    if isinstance(target, ir.Name):
        return {target.ident}
    out: set = set()
    for t in target.names:
        out |= _targets(t)
    return out


def _read_before_assigned(body: tuple, candidates: set) -> set:
    """Candidates that some path may read before it definitely assigns them."""
    unsafe: set = set()

    def block(stmts: tuple, assigned: set) -> set:
        for stmt in stmts:
            assigned = one(stmt, assigned)
        return assigned

    def check(expr: Any, assigned: set) -> None:
        unsafe.update((_reads(expr, set(), into_funcs=False) & candidates) - assigned)

    def one(stmt: Any, assigned: set) -> set:
        if isinstance(stmt, ir.Assign):
            check(stmt.value, assigned)
            return assigned | _targets(stmt.target)
        if isinstance(stmt, ir.If):
            check(stmt.test, assigned)
            return block(stmt.body, assigned) & block(stmt.orelse, assigned)
        if isinstance(stmt, ir.For):
            check((stmt.iter, stmt.filter), assigned)
            block(stmt.body, assigned | _targets(stmt.target))
            block(stmt.else_, assigned)
            return assigned  # the body may run zero times
        if isinstance(stmt, ir.Scoped):
            check(tuple(b.value for b in stmt.bindings), assigned)
            return block(stmt.body, assigned)
        if isinstance(stmt, ir.FuncDef):
            check(stmt.wrap_args, assigned)
            return assigned | {stmt.ident}
        check(stmt, assigned)  # Output, ExprStmt, Return: captures are checked inside
        for sub in _walk_captures(stmt):
            block(sub.body, assigned)
        return assigned

    block(body, set())
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
            for f in n.__dataclass_fields__:  # type: ignore[attr-defined]
                walk(getattr(n, f))

    walk(node)
    return found


#: Start values a scope gives its names (see passes/scope.py): side-effect free lookups.
INIT_HELPERS = frozenset(
    {
        "jinja.undefined",
        "jinja.resolve",
        "jinja.resolve_top",
        "jinja.resolve_missing",
        "jinja.unset",
    }
)


def _is_init(stmt: Any) -> bool:
    return (
        isinstance(stmt, ir.Assign)
        and isinstance(stmt.target, ir.Name)
        and isinstance(stmt.value, ir.Helper)
        and stmt.value.name in INIT_HELPERS
    )


def _prune(block: tuple, rest: tuple = ()) -> tuple:
    """``block`` without the start values that no path of the scope can read.

    The scope's statements are ``block`` (minus its start values) followed by ``rest``."""
    inits = {s.target.ident for s in block if _is_init(s)}
    if not inits:
        return block
    stmts = tuple(s for s in block if not _is_init(s)) + rest
    keep = _read_before_assigned(stmts, inits) | (_funcs_read(stmts) & inits)
    return tuple(s for s in block if not (_is_init(s) and s.target.ident not in keep))


def drop_dead_inits(module: ir.Module) -> ir.Module:
    """Invariant: a scope only gives a name its start value (undefined, or a context lookup)
    when some path can read that value.

    ``{% set x = ... %}`` gives ``x`` an undefined start value, a name read in a macro starts as
    a context lookup (jinja2's rules); when every read of ``x`` follows an assignment on every
    path, and no macro defined in the scope reads it (a macro may run earlier), the start value
    is never seen and is not built. Applies to every scope: the template, loop bodies, macros,
    captured blocks."""
    if module.dialect != "jinja":
        return module

    def fold(node: Any) -> Any:
        if isinstance(node, ir.For):
            return dataclasses.replace(node, body=_prune(node.body), else_=_prune(node.else_))
        if isinstance(node, (ir.Scoped, ir.Capture)):
            return dataclasses.replace(node, body=_prune(node.body))
        if isinstance(node, ir.FuncDef):
            defaults = tuple(ir.ExprStmt(p.default) for p in node.params if p.default is not None)
            return dataclasses.replace(node, prologue=_prune(node.prologue, defaults + node.body))
        return node

    return dataclasses.replace(module, body=_prune(_map(module.body, fold)))


def run(module: ir.Module) -> ir.Module:
    return merge_text(known_str(inline_tests(drop_dead_inits(module))))
