"""Go text/template frontend: template text -> Go parse tree -> IR (Ollama's semantics);
long because Go's parse-time checks read the parse tree the transformer builds, beside it.

Owns: lexing and parsing with Lark (``grammar.lark``), the trim markers (``{{- `` and
`` -}}``, applied to TEXT by a post-lexer), the checks Go's parser makes (undefined
variables and functions, ``break`` outside ``range``, adjacency rules that Go's lexer
enforces through its space tokens), the template set built from ``define`` / ``block``,
Ollama's parse-time behaviour (``Template.Vars``, the appended ``{{ .Response }}``, the
legacy-mode tree cut), and then the lowering to IR (``lower.py``). Lark is used only here;
every error leaves as ``CompileError``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .. import ir
from ..errors import CompileError
from ..frontend import CachedTransformer, LazyParser, TokenNames, error_at, run_parser
from . import nodes as n
from .literals import LiteralError, go_quote, parse_number, unquote
from .lower import BUILTINS, OLLAMA_FUNCS, lower_template_set

_SPACES = " \t\r\n"

#: Human names of terminals, for "unexpected X" messages.
HUMAN_NAMES = {
    "LD": "{{",
    "RD": "}}",
    "LD_END": "{{end}}",
    "LD_ELSE": "{{else}}",
    "LD_IF": "{{if}}",
    "LD_RANGE": "{{range}}",
    "LD_WITH": "{{with}}",
    "LD_DEFINE": "{{define}}",
    "LD_BLOCK": "{{block}}",
    "LD_TEMPLATE": "{{template}}",
    "LD_BREAK": "{{break}}",
    "LD_CONTINUE": "{{continue}}",
    "TEXT": "text",
    "PIPE": '"|"',
    "LPAR": '"("',
    "RPAR": '")"',
    "COMMA": '","',
    "DECLARE": '":="',
    "ASSIGN": '"="',
    "$END": "EOF",
}


def parser() -> Lark:
    """The Go template parser (built once, by ``compiler/frontend.build_parser``)."""
    return _PARSER()


def post_lexer() -> _TrimMarkers:
    """A fresh post-lexer for this grammar's parser (also for ``lark_tables``' tests)."""
    return _TrimMarkers()


class _GoError(Exception):
    """A parse-time error found while building the tree; becomes a CompileError."""

    def __init__(self, code: str, message: str, pos: int) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.pos = pos


def _left_trim(tok: Token) -> bool:
    v = tok.value
    return v.startswith("{{-") and len(v) > 3 and v[3] in _SPACES


class _TrimMarkers:
    """Post-lexer: ``{{- `` trims the spaces before, `` -}}`` the spaces after (lex.go).

    Holds one TEXT token back, to trim its end when the next delimiter has a marker.
    Comments are dropped here (Go drops them unless ParseComments is set). The closing
    delimiters are always lexed as such, so a stray one reads "unexpected {{end}}"."""

    always_accept = ("LD_END", "LD_ELSE", "LD_DEFINE", "BAD_COMMENT")

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        pending: Token | None = None
        trim_next = False
        for tok in stream:
            kind = tok.type
            if kind == "TEXT":
                value = tok.value.lstrip(_SPACES) if trim_next else tok.value
                pending = Token.new_borrow_pos("TEXT", value, tok)
                trim_next = False
                continue
            if kind == "BAD_COMMENT":
                raise _GoError("syntax", _BAD_COMMENT, tok.start_pos)
            if pending is not None:
                if (kind.startswith("LD") or kind == "COMMENT") and _left_trim(tok):
                    pending = Token.new_borrow_pos("TEXT", pending.value.rstrip(_SPACES), pending)
                if pending.value:
                    yield pending
                pending = None
            trim_next = False
            if kind == "COMMENT":
                trim_next = tok.value.endswith("-}}") and tok.value[-4] in _SPACES
                continue
            if kind == "RD":
                trim_next = tok.value.endswith("-}}")
            yield tok
        if pending is not None and pending.value:
            yield pending


_BAD_COMMENT = "<bad comment>"  # resolved against the source in _error

_PARSER = LazyParser(__file__, _TrimMarkers)
_NAMES = TokenNames(HUMAN_NAMES, parser)


# ----------------------------------------------------------------------------- tree building


@dataclass
class _Op:
    """An operand with its source span, for Go's adjacency rules."""

    node: Any
    start: int
    end: int
    token: Token | None = None


def _item_str(tok: Token) -> str:
    """How Go's parser names an unexpected token (item.String)."""
    if tok.type == "$END":
        return "EOF"
    if tok.type in _NAMES and tok.type.startswith("LD"):
        return "<" + tok.type[3:].lower() + ">" if tok.type != "LD" else '"{{"'
    value = str(tok.value)
    if tok.type in ("IF", "WITH", "NIL"):
        return f"<{value}>"
    if len(value) > 10:
        return go_quote(value[:10]) + "..."
    return go_quote(value)


class _Builder(CachedTransformer):
    """Lark tree -> Go parse tree (``nodes``). Checks Go's lexical adjacency rules."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source
        self.defines: list[tuple[str, n.ListNode, int]] = []

    def _line(self, pos: int) -> int:
        return self.source.count("\n", 0, pos) + 1

    # -- statements

    def start(self, items: list) -> n.ListNode:
        return n.ListNode(tuple(i for i in items if i is not None), pos=0, line=1)

    def list(self, items: list) -> n.ListNode:
        pos = items[0].pos if items else 0
        return n.ListNode(tuple(items), pos=pos, line=self._line(pos))

    def TEXT(self, tok: Token) -> n.Text:
        return n.Text(tok.value, pos=tok.start_pos, line=tok.line)

    def action(self, items: list) -> n.Action:
        ld, pipe, _rd = items
        return n.Action(pipe, pos=ld.start_pos, line=ld.line)

    def _branch(self, kind: str, items: list) -> n.Branch:
        ld, pipe, _rd, body, tail = items
        return n.Branch(kind, pipe, body, tail, pos=ld.start_pos, line=ld.line)

    def if_stmt(self, items: list) -> n.Branch:
        return self._branch("if", items)

    def with_stmt(self, items: list) -> n.Branch:
        return self._branch("with", items)

    def range_stmt(self, items: list) -> n.Branch:
        return self._branch("range", items)

    def tail_end(self, items: list) -> None:
        return None

    def tail_else(self, items: list) -> n.ListNode:
        return items[2]

    def _tail_else_branch(self, kind: str, items: list) -> n.ListNode:
        ld_else, kw, pipe, _rd, body, tail = items
        inner = n.Branch(kind, pipe, body, tail, pos=kw.start_pos, line=kw.line)
        return n.ListNode((inner,), pos=ld_else.start_pos, line=ld_else.line)

    def tail_else_if(self, items: list) -> n.ListNode:
        return self._tail_else_branch("if", items)

    def tail_else_with(self, items: list) -> n.ListNode:
        return self._tail_else_branch("with", items)

    def template_name(self, items: list) -> tuple[str, Token]:
        tok = items[0]
        return self._unquote(tok), tok

    def define_stmt(self, items: list) -> None:
        _ld, (name, tok), _rd, body, _ld_end, _rd2 = items
        self.defines.append((name, body, tok.start_pos))

    def block_stmt(self, items: list) -> n.TemplateCall:
        _ld, (name, tok), pipe, _rd, body, _ld_end, _rd2 = items
        self.defines.append((name, body, tok.start_pos))
        return n.TemplateCall(name, pipe, pos=tok.start_pos, line=tok.line)

    def template_stmt(self, items: list) -> n.TemplateCall:
        name, tok = items[1]
        pipe = items[2] if len(items) == 4 else None
        return n.TemplateCall(name, pipe, pos=tok.start_pos, line=tok.line)

    def break_stmt(self, items: list) -> n.Break:
        return n.Break(pos=items[0].start_pos, line=items[0].line)

    def continue_stmt(self, items: list) -> n.Continue:
        return n.Continue(pos=items[0].start_pos, line=items[0].line)

    # -- pipelines

    def pipeline(self, items: list) -> n.Pipe:
        decls: tuple = ()
        is_assign = False
        if items and isinstance(items[0], tuple):
            decls, is_assign = items[0]
            items = items[1:]
        cmds = tuple(i for i in items if isinstance(i, n.Command))
        first = decls[0] if decls else cmds[0]
        return n.Pipe(decls, is_assign, cmds, pos=first.pos, line=first.line)

    def _decl(self, items: list, is_assign: bool) -> tuple:
        variables = [t for t in items if t.type == "VARIABLE"]
        op = items[-1]
        last = variables[-1]
        if is_assign and last.end_pos == op.start_pos:
            # "$x=1": '=' is not a terminator after an identifier (lex.go atTerminator)
            raise _GoError("syntax", "bad character U+003D '='", op.start_pos)
        decls = []
        for tok in variables:
            if "." in tok.value[1:]:
                raise _GoError("syntax", f"unexpected {_item_str(op)} in command", op.start_pos)
            decls.append(n.Variable((tok.value,), pos=tok.start_pos, line=tok.line))
        return tuple(decls), is_assign

    def declare(self, items: list) -> tuple:
        return self._decl(items, False)

    def assign(self, items: list) -> tuple:
        return self._decl(items, True)

    def paren(self, items: list) -> _Op:
        lpar, pipe, rpar = items
        return _Op(pipe, lpar.start_pos, rpar.end_pos, None)

    def command(self, items: list) -> n.Command:
        ops: list[_Op] = []
        for item in items:
            op = item if isinstance(item, _Op) else self._operand(item)
            if ops and op.start == ops[-1].end:
                prev = ops[-1]
                if op.token is not None and op.token.type == "FIELD":
                    prev.node = self._chain(prev.node, op.node.idents, op.start)
                    prev.end = op.end
                    continue
                what = _item_str(op.token) if op.token is not None else '"("'
                raise _GoError("syntax", f"unexpected {what} in operand", op.start)
            ops.append(op)
        first = ops[0]
        return n.Command(tuple(o.node for o in ops), pos=first.start, line=self._line(first.start))

    def _chain(self, node: Any, fields: tuple, pos: int) -> Any:
        if isinstance(node, (n.Bool, n.String, n.Number, n.Nil, n.Dot)):
            raise _GoError("syntax", f"unexpected . after term {go_quote(str(node))}", pos)
        if isinstance(node, n.Field):
            return n.Field(node.idents + fields, pos=node.pos, line=node.line)
        if isinstance(node, n.Variable):
            return n.Variable(node.idents + fields, pos=node.pos, line=node.line)
        if isinstance(node, n.Chain):
            return n.Chain(node.node, node.fields + fields, pos=node.pos, line=node.line)
        return n.Chain(node, fields, pos=pos, line=self._line(pos))

    def _operand(self, tok: Token) -> _Op:
        kind, value, pos = tok.type, tok.value, tok.start_pos
        meta = {"pos": pos, "line": tok.line}
        node: Any
        if kind == "FIELD":
            node = n.Field(tuple(value[1:].split(".")), **meta)
        elif kind == "VARIABLE":
            parts = value.split(".")
            node = n.Variable(tuple(parts), **meta)
        elif kind == "DOT":
            node = n.Dot(**meta)
        elif kind == "NIL":
            node = n.Nil(**meta)
        elif kind == "BOOL":
            node = n.Bool(value == "true", **meta)
        elif kind == "IDENT":
            node = n.Identifier(value, **meta)
        elif kind in ("STRING", "RAW_STRING"):
            node = n.String(value, self._unquote(tok), **meta)
        elif kind in ("NUMBER", "CHAR"):
            try:
                num_kind, num = parse_number(value, is_char=kind == "CHAR")
            except LiteralError as e:
                raise _GoError("syntax", str(e), pos) from None
            node = n.Number(value, num_kind, num, **meta)
        else:  # pragma: no cover - the grammar allows nothing else
            raise _GoError("syntax", f"unexpected {_item_str(tok)} in operand", pos)
        return _Op(node, pos, tok.end_pos, tok)

    def _unquote(self, tok: Token) -> str:
        try:
            return unquote(tok.value)
        except LiteralError as e:
            raise _GoError("syntax", str(e), tok.start_pos) from None


# ----------------------------------------------------------------------------- checks


_KEYWORDS = frozenset(
    {"block", "break", "continue", "define", "else", "end", "if", "range", "template", "with"}
)


class _Checker:
    """The checks Go's parser makes while it reads, in source order (parse.go):
    variables must be declared (``t.vars``), functions must exist, ``break``/``continue``
    only inside a ``range`` body, declarations only where Go allows them."""

    def __init__(self, funcs: frozenset) -> None:
        self.funcs = funcs
        self.vars: list[str] = ["$"]
        self.range_depth = 0

    def template(self, root: n.ListNode) -> None:
        self.vars = ["$"]
        self.range_depth = 0
        self.list(root)

    def list(self, node: n.ListNode) -> None:
        for child in node.nodes:
            self.stmt(child)

    def stmt(self, node: Any) -> None:
        if isinstance(node, n.Action):
            self.pipe(node.pipe, "command")
        elif isinstance(node, n.Branch):
            mark = len(self.vars)
            self.pipe(node.pipe, node.kind)
            if node.kind == "range":
                self.range_depth += 1
            self.list(node.body)
            if node.kind == "range":
                self.range_depth -= 1
            if node.else_body is not None:
                self.list(node.else_body)
            del self.vars[mark:]
        elif isinstance(node, n.TemplateCall):
            if node.pipe is not None:
                self.pipe(node.pipe, "template clause")
        elif isinstance(node, (n.Break, n.Continue)) and self.range_depth == 0:
            word = "break" if isinstance(node, n.Break) else "continue"
            raise _GoError("bad-loop-control", f"{{{{{word}}}}} outside {{{{range}}}}", node.pos)

    def pipe(self, pipe: n.Pipe, context: str) -> None:
        if len(pipe.decls) > 1 and context != "range":
            raise _GoError("syntax", f"too many declarations in {context}", pipe.decls[1].pos)
        for decl in pipe.decls:
            self.vars.append(decl.idents[0])
        for stage, cmd in enumerate(pipe.cmds):
            if stage and isinstance(cmd.args[0], (n.Bool, n.Dot, n.Nil, n.Number, n.String)):
                raise _GoError(
                    "syntax", f"non executable command in pipeline stage {stage + 1}", cmd.pos
                )
            for arg in cmd.args:
                self.operand(arg)

    def operand(self, node: Any) -> None:
        if isinstance(node, n.Identifier):
            if node.name in _KEYWORDS:
                raise _GoError("syntax", f"unexpected <{node.name}> in operand", node.pos)
            if node.name not in self.funcs:
                raise _GoError(
                    "unknown-function", f"function {go_quote(node.name)} not defined", node.pos
                )
        elif isinstance(node, n.Variable):
            if node.idents[0] not in self.vars:
                raise _GoError(
                    "undefined-variable", f"undefined variable {go_quote(node.idents[0])}", node.pos
                )
        elif isinstance(node, n.Chain):
            self.operand(node.node)
        elif isinstance(node, n.Pipe):
            self.pipe(node, "parenthesized pipeline")


def _is_empty_tree(node: Any) -> bool:
    """parse.IsEmptyTree: only spaces and comments."""
    if isinstance(node, n.ListNode):
        return all(_is_empty_tree(c) for c in node.nodes)
    if isinstance(node, n.Text):
        return node.text.strip() == ""
    return False


# ----------------------------------------------------------------------------- entry point


@dataclass
class GoTemplate:
    """A parsed template set: the main tree and the defined templates, by name."""

    name: str
    root: n.ListNode
    templates: dict


def parse_tree(source: str, name: str | None = None, profile: str = "ollama") -> GoTemplate:
    """Parse and check ``source`` as Go's ``template.New(name).Funcs(...).Parse`` does."""
    tmpl_name = name or ""
    builder = _Builder(source)

    def convert(e: _GoError) -> CompileError:
        return _error(source, name, e.code, e.message, e.pos)

    root = run_parser(
        lambda: builder.transform(parser().parse(source)),
        (_GoError,),
        convert,
        lambda e: _syntax_error(source, name, e),
    )
    funcs = BUILTINS | (OLLAMA_FUNCS if profile == "ollama" else frozenset())
    checker = _Checker(funcs)
    templates: dict[str, n.ListNode] = {}
    try:
        for def_name, body, pos in builder.defines:
            checker.template(body)
            _add_template(templates, def_name, body, pos)
        checker.template(root)
        _add_template(templates, tmpl_name, root, len(source))
    except _GoError as e:
        raise convert(e) from None
    main = templates.pop(tmpl_name, root)
    return GoTemplate(tmpl_name, main, templates)


def _add_template(templates: dict, name: str, body: n.ListNode, pos: int) -> None:
    old = templates.get(name)
    if old is None or _is_empty_tree(old):
        templates[name] = body
    elif not _is_empty_tree(body):
        raise _GoError("syntax", f"template: multiple definition of template {go_quote(name)}", pos)


def parse(source: str, name: str | None = None, profile: str = "ollama") -> ir.Module:
    """Compile Go template ``source`` to an IR module (dialect "go").

    ``profile`` "ollama" gives Ollama's setup (its func map, ``missingkey=zero``, the
    appended ``{{ .Response }}``, and the cut tree of the legacy Prompt/Response mode in
    the module metadata); "plain" is ``text/template`` with no extra functions.
    """
    parsed = parse_tree(source, name, profile)
    try:
        return lower_template_set(parsed, profile)
    except _LowerError as e:  # pragma: no cover - lowering reports through CompileError
        raise _error(source, name, "unsupported", str(e), 0) from None
    except n.UndefinedTemplate:
        raise CompileError("syntax", "undefined template specified", 0, 0, source, name) from None


class _LowerError(Exception):
    pass


def _error(source: str, name: str | None, code: str, message: str, pos: int) -> CompileError:
    if message == _BAD_COMMENT:
        closed = source.find("*/", source.find("/*", pos) + 2)
        message = "unclosed comment" if closed < 0 else "comment ends before closing delimiter"
    return error_at(source, name, code, message, pos)


_CONTEXTS = {
    "LD": "command",
    "LD_IF": "if",
    "LD_RANGE": "range",
    "LD_WITH": "with",
    "IF": "if",
    "WITH": "with",
    "LD_BLOCK": "block clause",
    "LD_TEMPLATE": "template clause",
}
_UNTERMINATED = {
    '"': "unterminated quoted string",
    "`": "unterminated raw quoted string",
    "'": "unterminated character constant",
}


def _last_opener(e: UnexpectedInput) -> str:
    """The innermost construct open when the parser stopped (for "missing value for X")."""
    state = getattr(e, "state", None)
    stack = getattr(state, "value_stack", None) or ()
    for item in reversed(stack):
        if isinstance(item, Token) and item.type in _CONTEXTS:
            return item.type
    return "LD"


def _syntax_error(source: str, name: str | None, e: UnexpectedInput) -> CompileError:
    """Lark's error -> the message Go's lexer or parser gives for the same input."""
    pos = getattr(e, "pos_in_stream", None) or 0
    if isinstance(e, UnexpectedCharacters):
        return _error(source, name, "syntax", _character_message(source, pos), pos)
    if isinstance(e, UnexpectedToken):
        tok = e.token
        expected = set(e.expected or ())
        if tok.type == "$END":
            if _inside_action(source, len(source)):
                return _error(source, name, "syntax", "unclosed action", len(source))
            return _error(source, name, "unclosed-block", "unexpected EOF", len(source))
        pos = tok.start_pos or 0
        if tok.type == "LD_END":
            return _error(source, name, "unknown-tag", "unexpected {{end}}", pos)
        if tok.type == "LD_ELSE":
            message = (
                "unexpected {{else}}"
                if "LD_END" not in expected
                else "expected end; found {{else}}"
            )
            return _error(source, name, "unknown-tag", message, pos)
        if tok.type == "RD" and "RPAR" in expected:
            return _error(source, name, "syntax", "unclosed left paren", pos)
        if tok.type == "RD" and "RD" not in expected:
            return _error(
                source, name, "syntax", f"missing value for {_CONTEXTS[_last_opener(e)]}", pos
            )
        if tok.type == "RPAR":
            return _error(source, name, "syntax", "unexpected right paren", pos)
        if tok.type == "TEXT":  # the root lexer's fallback inside an action
            return _error(source, name, "syntax", _character_message(source, pos), pos)
        if tok.type == "LD_DEFINE":
            return _error(source, name, "syntax", "unexpected <define> in command", pos)
        if tok.type == "COMMA":
            return _error(
                source,
                name,
                "syntax",
                f"too many declarations in {_CONTEXTS[_last_opener(e)]}",
                pos,
            )
        return _error(
            source,
            name,
            "syntax",
            f"unexpected {_item_str(tok)} in {_CONTEXTS[_last_opener(e)]}",
            pos,
        )
    if isinstance(e, UnexpectedEOF):
        return _error(source, name, "unclosed-block", "unexpected EOF", len(source))
    return _error(source, name, "syntax", str(e), pos)


def _character_message(source: str, pos: int) -> str:
    """What Go says about a character that cannot start a token here."""
    ch = source[pos] if pos < len(source) else ""
    word = re.match(r"\w+", source[pos:])
    if ch in _UNTERMINATED:
        return _UNTERMINATED[ch]
    if ch in "+-" and not source[pos + 1 : pos + 2].isdigit():
        return f"illegal number syntax: {go_quote(ch)}"
    if word and word.group() in _KEYWORDS:
        return f"unexpected <{word.group()}> in input"
    if ch and _inside_action(source, pos):
        if ch.isprintable():
            return f"unexpected {go_quote(ch)} in command"
        return f"unrecognized character in action: U+{ord(ch):04X}"
    return "unexpected character"


def _inside_action(source: str, pos: int) -> bool:
    opened = source.rfind("{{", 0, pos)
    closed = source.rfind("}}", 0, pos)
    return opened > closed


__all__ = ["HUMAN_NAMES", "GoTemplate", "Tree", "parse", "parse_tree"]
