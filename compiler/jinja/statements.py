"""Lowering of the Jinja statements a chat template rarely uses: ``{% with %}`` and the
tags that need a loader (``include``, ``import``, ``from``, ``extends``).

A mixin of :class:`compiler.jinja.lowering.Lowering` (one method per grammar rule). Without
a loader, the loader tags compile and fail when they run, as jinja2's do in transformers'
environment (see ``runtime/jinja/loading.py``); the names ``import``/``from`` bind are
still names of the frame, so scoping around them is jinja2's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from lark import Token, v_args

from .. import ir
from ..errors import CompileError
from ..frontend import CachedTransformer
from .analysis import find_undeclared
from .autoescape import AutoescapeBlock

H = ir.Helper


def _span(tok: Any) -> ir.Span:
    if isinstance(tok, Token):
        return (tok.line or 0, tok.column or 0)
    return ir.NOSPAN


#: names jinja2 reads as constants (``nodes.Name.can_assign`` refuses them as targets)
CONSTANT_NAMES = frozenset({"true", "false", "none", "True", "False", "None"})


def assignable(target: Any) -> Any:
    """``target``, an assignment's (``set``, ``for``, ``with``), as jinja2's
    ``parse_assign_target`` lets it through: ``true`` / ``false`` / ``none`` (either case)
    read as constants, which cannot be assigned (``can't assign to 'const'``; a tuple holding
    one, at any depth: ``'tuple'``)."""
    if isinstance(target, ir.Name) and target.name in CONSTANT_NAMES:
        raise CompileError("syntax", "can't assign to 'const'", *target.span)
    if isinstance(target, ir.Target):
        for n in ir.walk(target):
            if isinstance(n, ir.Name) and n.name in CONSTANT_NAMES:
                raise CompileError("syntax", "can't assign to 'tuple'", *n.span)
    return target


def assignable_name(name: Token) -> str:
    """A name jinja2 reads with ``parse_assign_target(name_only=True)`` (a macro's, an
    import's): ``Name.can_assign`` refuses the constants' names (``can't assign to 'name'``)."""
    if str(name) in CONSTANT_NAMES:
        raise CompileError("syntax", "can't assign to 'name'", *_span(name))
    return str(name)


def _is(tok: Any, kind: str) -> bool:
    return isinstance(tok, Token) and tok.type == kind


@v_args(inline=True)
class StatementLowering(CachedTransformer):
    #: what the template holds, for the whole-template steps after lowering (``Lowering.start``
    #: skips a step, a walk of the whole tree, that has nothing to do)
    has_autoescape = False  # an ``{% autoescape %}`` block (``apply_autoescape``)
    has_include_without_context = False  # (``generator_macros``)
    has_extends = False  # (``check_extends``)

    # ------------------------------------------------------------------ with

    def with_stmt(self, tag: Token, *rest: Any) -> ir.Stmt:
        bindings = tuple(r for r in rest if isinstance(r, ir.Assign))
        body = next(r for r in rest if isinstance(r, tuple))
        return ir.Scoped(body, span=_span(tag), bindings=bindings)

    @v_args(meta=True, inline=True)
    def with_binding(self, meta: Any, target: Any, value: ir.Expr) -> ir.Assign:
        return ir.Assign(assignable(target), value, span=(meta.line or 0, meta.column or 0))

    # ------------------------------------------------------------------ autoescape

    def autoescape_stmt(self, tag: Token, value: ir.Expr, _end: Token, body: tuple, *_: Any) -> ir.Stmt:
        """Compiled by ``compiler/jinja/autoescape.py`` once the whole template is lowered."""
        self.has_autoescape = True
        return AutoescapeBlock(value, body, span=_span(tag))

    # ------------------------------------------------------------------ loader tags

    def include_stmt(self, tag: Token, template: ir.Expr, *rest: Any) -> ir.Stmt:
        ignore = any(_is(t, "IGNORE") for t in rest)
        call = H("jinja.include_template", (template, ir.Const(ignore)), span=_span(tag))
        if any(_is(t, "WITHOUT") for t in rest):
            self.has_include_without_context = True
            return IncludeWithoutContext(call, span=_span(tag))
        return ir.Output(call, span=_span(tag))

    def import_stmt(self, tag: Token, template: ir.Expr, _as: Token, name: Token, *_: Any) -> ir.Stmt:
        value = H("jinja.load_template", (template,), span=_span(tag))
        return ir.Assign(ir.Name(assignable_name(name), span=_span(name)), value, span=_span(tag))

    def from_stmt(self, tag: Token, template: ir.Expr, _import: Token, *rest: Any) -> ir.Stmt:
        names = [r for r in rest if isinstance(r, ir.Name)]
        value = H("jinja.load_template", (template,), span=_span(tag))
        if len(names) == 1:
            return ir.Assign(names[0], value, span=_span(tag))
        return ir.Assign(ir.Target(tuple(names)), value, span=_span(tag))

    def import_name(self, name: Token, *alias: Any) -> ir.Name:
        assignable_name(name)
        if str(name).startswith("_"):  # jinja2's TemplateAssertionError, at parse time
            raise CompileError(
                "syntax", "names starting with an underline can not be imported", *_span(name)
            )
        bound = alias[-1] if alias else name
        return ir.Name(assignable_name(bound), span=_span(bound))

    def context_mod(self, kind: Token, _context: Token) -> Token:
        return kind

    def extends_stmt(self, tag: Token, template: ir.Expr, _end: Token) -> ir.Stmt:
        self.has_extends = True
        return ir.ExprStmt(H("jinja.extends", (template,), span=_span(tag)), span=_span(tag))


@dataclass(frozen=True, slots=True)
class IncludeWithoutContext(ir.Output):
    """``{% include x without context %}``, until :func:`generator_macros` has seen it."""


def generator_macros(body: tuple) -> tuple:
    """jinja2 writes ``include ... without context`` as ``yield from``, also inside a macro,
    whose function then is a generator: calling the macro returns a generator object (its
    body never runs), whether or not the include would run. Reproduced: such a macro (or
    caller) returns ``jinja.macro_generator(<jinja2's qualified name of the function>)``."""

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, IncludeWithoutContext):
            return ir.Output(node.expr, span=node.span)
        if isinstance(node, ir.FuncDef):
            if node.ident.startswith("blk_"):
                path = "block_" + node.name
            else:
                path = path + ".<locals>.macro"
                if _yields(node.body):
                    gen = H("jinja.macro_generator", (ir.Const(path),))
                    # its own wrap name: no pass may call it directly or make it write into
                    # its caller's buffer (it returns a value, not text)
                    wrap = "jinja.make_generator_macro" if node.wrap else node.wrap
                    body = (ir.Return(gen, span=node.span),)
                    return dataclasses.replace(node, body=body, wrap=wrap)
        elif isinstance(node, ir.For) and node.recursive:
            inner = path + ".<locals>.loop"
            return dataclasses.replace(
                node,
                iter=walk(node.iter, path),
                body=walk(node.body, inner),
                else_=walk(node.else_, inner),
                filter=walk(node.filter, inner) if node.filter is not None else None,
            )
        return ir.map_children(node, lambda n: walk(n, path))

    if not any(isinstance(n, IncludeWithoutContext) for n in ir.walk(body)):
        return body
    return walk(body, "root")


def _yields(body: Any) -> bool:
    """Whether a function body (not the functions inside it) holds an include without context."""
    if isinstance(body, IncludeWithoutContext):
        return True
    if isinstance(body, ir.FuncDef):
        return False
    if isinstance(body, tuple):
        return any(_yields(n) for n in body)
    if isinstance(body, ir.Node):
        return any(_yields(v) for _, v in ir.children(body))
    return False


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


# ----------------------------------------------------------------------------- blocks


@v_args(inline=True)
class BlockLowering(StatementLowering):
    """``{% block %}``: each block becomes one function (``blk_NAME``) defined at the start
    of the template and resolving names as jinja2's block functions do; in place, the block
    is a call of it (a ``scoped`` block: of a copy defined where it sits, which sees the
    locals there). ``self`` is then a reference to those functions (``jinja.template_reference``)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: dict = {}  # name -> the block's function (a FuncDef)

    def block_stmt(self, tag: Token, name: Token, *rest: Any) -> Any:
        block = str(name)
        scoped = any(_is(t, "SCOPED") for t in rest)
        required = any(_is(t, "REQUIRED") for t in rest)
        body = next(r for r in rest if isinstance(r, tuple))
        ends = [t for t in rest if _is(t, "NAME")]
        if ends and str(ends[0]) != block:  # jinja2 skips only the block's own name
            raise CompileError(
                "syntax",
                f"expected token 'end of statement block', got {str(ends[0])!r}",
                *_span(ends[0]),
            )
        if required and not all(
            isinstance(n, ir.Text) and n.text.isspace() for n in body
        ):
            raise CompileError(
                "syntax", "Required blocks can only contain comments or whitespace", *_span(tag)
            )
        if block in self.blocks:
            raise CompileError("syntax", f"block {block!r} defined twice", *_span(tag))
        for sub in ir.walk(body):  # a block's body is no top-level frame (``check_extends``)
            if isinstance(sub, ir.ExprStmt) and _is_extends(sub):
                raise CompileError("syntax", "cannot use extend from a non top-level scope", *sub.span)
        ident = "blk_" + (block if block.isascii() else block.encode("utf-8").hex())
        self.blocks[block] = _block_func(ident, block, body, _span(tag))
        if required:
            return ir.Output(H("jinja.required_block", (ir.Const(block),)), span=_span(tag))
        if scoped:
            here = f"{ident}_{next(self._ids)}"  # type: ignore[attr-defined]
            func = dataclasses.replace(_block_func(here, block, body, _span(tag)), bind=False)
            return [func, ir.Output(ir.CallFunc(here, span=_span(tag)), span=_span(tag))]
        return ir.Output(ir.CallFunc(ident, span=_span(tag)), span=_span(tag))

    def with_blocks(self, body: tuple) -> tuple:
        """The template's body with its block functions (and ``self``) defined first."""
        if not self.blocks:
            return body
        funcs = tuple(self.blocks.values())
        reads_self = any(isinstance(n, ir.Name) and n.name == "self" for n in ir.walk(body)) or any(
            isinstance(n, ir.Name) and n.name == "self" for n in ir.walk(funcs)
        )
        if not reads_self:
            return funcs + body
        refs = tuple((ir.Const(name), ir.Local(f.ident)) for name, f in self.blocks.items())
        self_ref = ir.Assign(
            ir.Name("self"), H("jinja.template_reference", (ir.DictLit(refs),))
        )
        return funcs + (self_ref,) + body


def _block_func(ident: str, block: str, body: tuple, span: ir.Span) -> ir.FuncDef:
    undeclared_super = "super" in find_undeclared(body, ("super",))
    stored = _stored_names(body)
    return ir.FuncDef(
        ident,
        block,
        (),
        _block_reads(body, block, stored, undeclared_super),
        span=span,
    )


def _stored_names(body: tuple) -> set:
    names = {"self", "super"}
    for node in ir.walk(body):
        if isinstance(node, ir.Assign):
            names.update(n.name for n in ir.walk(node.target) if isinstance(n, ir.Name))
        elif isinstance(node, ir.For):
            names.update(n.name for n in ir.walk(node.target) if isinstance(n, ir.Name))
            names.add("loop")
        elif isinstance(node, ir.FuncDef):
            names.add(node.name)
            names.update(p.name.name for p in node.params)
    return names


def _block_reads(node: Any, block: str, stored: set, undeclared_super: bool) -> Any:
    """Each read of a name the block does not set, through ``jinja.block_name``; ``super``
    (when the block does not set it first) as jinja2's undefined parent block."""

    def walk(n: Any) -> Any:
        if isinstance(n, ir.Name):
            if n.name == "super" and undeclared_super:
                return H("jinja.no_parent_block", (ir.Const(block),))
            if n.name in stored or n.ident:
                return n
            return H("jinja.block_name", (n, ir.Local("context"), ir.Const(n.name)))
        if isinstance(n, ir.Assign):
            return dataclasses.replace(n, value=walk(n.value))
        if isinstance(n, ir.For):
            return dataclasses.replace(
                n,
                iter=walk(n.iter),
                body=walk(n.body),
                else_=walk(n.else_),
                filter=walk(n.filter) if n.filter is not None else None,
            )
        if isinstance(n, ir.Param):
            return dataclasses.replace(n, default=walk(n.default)) if n.default is not None else n
        if isinstance(n, ir.Target):
            return n
        return ir.map_children(n, walk)

    return walk(node)
