"""Lowering of the Jinja statements a chat template rarely uses: ``{% with %}`` and the
tags that need a loader (``include``, ``import``, ``from``, ``extends``).

A mixin of :class:`compiler.jinja.lowering.Lowering` (one method per grammar rule). Without
a loader, the loader tags compile and fail when they run, as jinja2's do in transformers'
environment (see ``runtime/jinja/loading.py``); the names ``import``/``from`` bind are
still names of the frame, so scoping around them is jinja2's.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Transformer, v_args

from .. import ir
from ..errors import CompileError

H = ir.Helper


def _span(tok: Any) -> ir.Span:
    if isinstance(tok, Token):
        return (tok.line or 0, tok.column or 0)
    return ir.NOSPAN


def _is(tok: Any, kind: str) -> bool:
    return isinstance(tok, Token) and tok.type == kind


@v_args(inline=True)
class StatementLowering(Transformer):
    # ------------------------------------------------------------------ with

    def with_stmt(self, tag: Token, *rest: Any) -> ir.Stmt:
        bindings = tuple(r for r in rest if isinstance(r, ir.Assign))
        body = next(r for r in rest if isinstance(r, tuple))
        return ir.Scoped(body, span=_span(tag), bindings=bindings)

    @v_args(meta=True, inline=True)
    def with_binding(self, meta: Any, target: Any, value: ir.Expr) -> ir.Assign:
        return ir.Assign(target, value, span=(meta.line or 0, meta.column or 0))

    # ------------------------------------------------------------------ loader tags

    def include_stmt(self, tag: Token, template: ir.Expr, *rest: Any) -> ir.Stmt:
        ignore = any(_is(t, "IGNORE") for t in rest)
        call = H("jinja.include_template", (template, ir.Const(ignore)), span=_span(tag))
        return ir.Output(call, span=_span(tag))

    def import_stmt(self, tag: Token, template: ir.Expr, _as: Token, name: Token, *_: Any) -> ir.Stmt:
        value = H("jinja.load_template", (template,), span=_span(tag))
        return ir.Assign(ir.Name(str(name), span=_span(name)), value, span=_span(tag))

    def from_stmt(self, tag: Token, template: ir.Expr, _import: Token, *rest: Any) -> ir.Stmt:
        names = [r for r in rest if isinstance(r, ir.Name)]
        value = H("jinja.load_template", (template,), span=_span(tag))
        if len(names) == 1:
            return ir.Assign(names[0], value, span=_span(tag))
        return ir.Assign(ir.Target(tuple(names)), value, span=_span(tag))

    def import_name(self, name: Token, *alias: Any) -> ir.Name:
        if str(name).startswith("_"):  # jinja2's TemplateAssertionError, at parse time
            raise CompileError(
                "syntax", "names starting with an underline can not be imported", *_span(name)
            )
        bound = alias[-1] if alias else name
        return ir.Name(str(bound), span=_span(bound))

    def context_mod(self, *_: Any) -> None:
        return None

    def extends_stmt(self, tag: Token, template: ir.Expr, _end: Token) -> ir.Stmt:
        return ir.ExprStmt(H("jinja.extends", (template,), span=_span(tag)), span=_span(tag))


def check_extends(body: tuple) -> tuple:
    """jinja2's rules for ``extends`` at compile time: only in the template's top-level frame
    (its ``if`` bodies included), else "cannot use extend from a non top-level scope"; once
    one ran at the very top level, jinja2 emits no further output of that frame (so an
    unknown filter there is no error), and a second one ends the compiled template."""
    return _extends_frame(body, top=True, root=True, known=[False])


def _extends_frame(body: tuple, top: bool, root: bool, known: list) -> tuple:
    out = []
    for node in body:
        if _is_extends(node):
            if not top:
                raise CompileError(
                    "syntax", "cannot use extend from a non top-level scope", *node.span
                )
            if known[0]:  # jinja2 writes the "extended multiple times" raise, then stops
                out.append(node)
                break
            known[0] = known[0] or root
            out.append(node)
            continue
        if known[0] and isinstance(node, (ir.Output, ir.Text)) and top:
            continue  # never emitted by jinja2 (and never reached: extends raised)
        out.append(_extends_children(node, top, known))
    return tuple(out)


def _extends_children(node: Any, top: bool, known: list) -> Any:
    if isinstance(node, ir.If):
        import dataclasses

        return dataclasses.replace(
            node,
            body=_extends_frame(node.body, top, False, known),
            orelse=_extends_frame(node.orelse, top, False, known),
        )
    for sub in ir.walk(node):
        if isinstance(sub, ir.ExprStmt) and _is_extends(sub):
            raise CompileError("syntax", "cannot use extend from a non top-level scope", *sub.span)
    return node


def _is_extends(node: Any) -> bool:
    return (
        isinstance(node, ir.ExprStmt)
        and isinstance(node.expr, ir.Helper)
        and node.expr.name == "jinja.extends"
    )
