"""Jinja frontend: template text -> IR, with jinja2's lexing and whitespace rules.

Owns: newline normalisation and the trailing-newline rule, whitespace control
(``-``/``+`` markers, ``trim_blocks``, ``lstrip_blocks``) applied to TEXT tokens by a
post-lexer, block nesting errors worded as jinja2 words them, and the lowering of
every construct to IR (attribute access, calls, filters and tests become
``Helper("jinja.*")`` calls into ``runtime/jinja.py``). Lark is used only here.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Optional

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .. import ir
from ..errors import CompileError
from ..frontend import LazyParser, TokenNames, parse_and_transform, run_parser
from .lowering import Lowering

_NEWLINE_RE = re.compile(r"(\r\n|\r|\n)")
_WHITESPACE_RE = re.compile(r"\s+")
_TAG_NAME_RE = re.compile(r"\{%[-+]?\s*(\w+)")

#: Blocks and the end tags jinja2 looks for while each is open (parser.py end_token_stack).
_BLOCK_ENDS = {
    "if": ("elif", "else", "endif"),
    "for": ("endfor", "else"),
    "macro": ("endmacro",),
    "set": ("endset",),
    "call": ("endcall",),
    "filter": ("endfilter",),
    "generation": ("endgeneration",),
    "with": ("endwith",),
    "block": ("endblock",),
    "autoescape": ("endautoescape",),
}

#: The keyword each known tag's token ends with (``_TAG_NAME_RE`` reads it off the text).
_TAG_NAMES = {
    f"TAG_{name.upper()}": name
    for block, ends in _BLOCK_ENDS.items()
    for name in (block, *ends)
} | {"TAG_BREAK": "break", "TAG_CONTINUE": "continue", "TAG_INCLUDE": "include",
     "TAG_IMPORT": "import", "TAG_FROM": "from", "TAG_EXTENDS": "extends"}

#: Human names of terminals, for "unexpected X" messages.
HUMAN_NAMES = {
    "VAR_START": "start of print statement '{{'",
    "VAR_END": "end of print statement '}}'",
    "BLOCK_END": "end of statement block '%}'",
    "TEXT": "template data",
    "NAME": "name",
    "STRING": "string",
    "INT": "integer",
    "FLOAT": "float",
    "$END": "end of template",
}


def parser() -> Lark:
    """The Jinja parser (built once, by ``compiler/frontend.build_parser``)."""
    return _PARSER()


def post_lexer() -> _WhitespaceControl:
    """A fresh post-lexer for this grammar's parser (also for ``lark_tables``' tests)."""
    return _WhitespaceControl()


def normalize_source(source: str) -> str:
    """What jinja2's lexer does first: every newline becomes ``\\n``; one trailing newline goes."""
    lines = _NEWLINE_RE.split(source)[::2]
    if lines[-1] == "":
        del lines[-1]
    return "\n".join(lines)


class _WhitespaceControl:
    """Post-lexer: applies jinja2's whitespace rules to TEXT and checks block nesting.

    Keeps at most one TEXT token back (to strip it according to the tag that follows);
    the contextual lexer's state is the same before and after a TEXT token, so this
    look-behind does not disturb it.
    """

    always_accept = ()

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        line_starting = True  # did the previous token end a line? (jinja2's ``line_starting``)
        pending: Optional[Token] = None
        pending_line_start = True
        stack: list[list[Any]] = []  # [tag, looking_for, set_undecided]
        depth = 0
        braces = 0  # open "{" inside the current tag
        half_end = False  # a "}}" closed one dict and left its second "}" for the print's end
        test_state = 0  # 1 after "is" (and "not"), 2 right after the test's name
        last = None  # the stream's last token (where an unclosed block is reported)
        plain_kinds = _PLAIN_KINDS
        for tok in stream:
            last = tok
            kind = tok.type
            plain = plain_kinds.get(kind)
            if plain is None:
                plain = plain_kinds[kind] = _plain_kind(kind)
            if plain and not test_state:  # most tokens: nothing below applies to them
                line_starting = tok.value.endswith("\n")
                yield tok
                continue
            if kind == "TEXT":
                if pending is not None:  # the "}" a split "}}" left over, then this text
                    tok = Token.new_borrow_pos("TEXT", pending.value + tok.value, pending)
                else:
                    pending_line_start = line_starting
                pending = tok
                line_starting = tok.value.endswith("\n")
                continue
            if kind in ("VAR_START", "COMMENT", "RAW") or kind.startswith("TAG_"):
                if pending is not None:
                    yield self._strip_before(pending, tok, pending_line_start)
                    pending = None
                depth = braces = 0
            if kind == "COMMENT":
                line_starting = tok.value.endswith("\n")
                continue
            if kind == "RAW":
                text_tok, line_starting = self._raw(tok)
                yield text_tok
                continue
            if kind.startswith("TAG_"):
                self._track_block(tok, stack)
            elif kind in ("LPAR", "LSQB", "LBRACE"):
                depth += 1
                braces += kind == "LBRACE"
            elif kind in ("RPAR", "RSQB", "RBRACE"):
                depth -= 1
                braces -= kind == "RBRACE"
                if kind == "RBRACE" and half_end:
                    # the second half of a "}}" that closed a dict: the real end of the print
                    half_end = False
                    line_starting = False
                    yield Token.new_borrow_pos("VAR_END", "}}", tok)
                    continue
            elif kind == "EQUAL" and depth == 0 and stack and stack[-1][2]:
                stack.pop()  # "{% set x = ... %}" is not a block
            elif kind == "BLOCK_END" and stack and stack[-1][2]:
                stack[-1][2] = False
            elif kind == "VAR_END" and half_end and tok.value == "}}":
                # "{{ {'a': 1}}}}": the first "}}" closed the dict and began the end; this
                # one ends the print with its first "}" and leaves the second as text
                half_end = False
                line_starting = False
                yield Token.new_borrow_pos("VAR_END", "}}", tok)
                pending, pending_line_start = Token.new_borrow_pos("TEXT", "}", tok), False
                continue
            elif kind == "VAR_END" and braces > 0 and tok.value.startswith("}}"):
                # The LALR lexer state after an operand accepts both "}" and "}}": like
                # jinja2's balancing stack, a "}}" inside open braces closes a dict first.
                for _ in range(2):
                    if braces > 0:
                        braces -= 1
                        depth -= 1
                        yield Token.new_borrow_pos("RBRACE", "}", tok)
                    else:
                        half_end = True
                continue
            if test_state == 2 and kind in _KEYWORD_ARGS:
                # jinja2 reads any name right after a test as the test's argument, keywords
                # included but ``else``/``or``/``and`` ("x is defined if y" does not parse;
                # "x is eq in" reads a name; "include x is defined ignore missing" fails at
                # ``missing``).
                tok = Token.new_borrow_pos("NAME", tok.value, tok)
                kind = "NAME"
            elif test_state == 2 and kind == "IS":
                raise CompileError(
                    "syntax",
                    "You cannot chain multiple tests with is",
                    tok.line or 0,
                    tok.column or 0,
                )
            if test_state or kind == "IS":  # (else it stays 0)
                test_state = _next_test_state(test_state, kind)
            line_starting = tok.value.endswith("\n")
            yield tok
        if pending is not None:
            yield pending
        if stack:
            last_pos = (1, 1)
            if last is not None:
                last_pos = (last.end_line or last.line or 1, last.end_column or last.column or 1)
            raise _nesting_error(None, stack, last_pos)

    @staticmethod
    def _strip_before(text: Token, tag: Token, line_start: bool) -> Token:
        sign = _sign(tag.value)
        value = text.value
        if sign == "-":
            value = value.rstrip()
        elif sign != "+" and tag.type != "VAR_START":
            l_pos = value.rfind("\n") + 1
            if (l_pos > 0 or line_start) and _WHITESPACE_RE.fullmatch(value, l_pos):
                value = value[:l_pos]
        if value is text.value:  # nothing stripped: the token as it is
            return text
        return Token.new_borrow_pos("TEXT", value, text)

    @staticmethod
    def _raw(tok: Token) -> tuple[Token, bool]:
        m = re.match(
            r"\{%[-+]?\s*raw\s*(?:-%\}\s*|%\})((?:.|\n)*?)(\{%([-+]?)\s*endraw\s*(?:\+%\}|-%\}\s*|%\}\n?))\Z",
            tok.value,
        )
        assert m is not None
        begin_len = m.start(1)
        body, end_sign = m.group(1), m.group(3)
        if end_sign == "-":
            body = body.rstrip()
        elif end_sign != "+":
            l_pos = body.rfind("\n") + 1
            starting = tok.value[:begin_len].endswith("\n")
            if (l_pos > 0 or starting) and _WHITESPACE_RE.fullmatch(body, l_pos):
                body = body[:l_pos]
        return Token.new_borrow_pos("TEXT", body, tok), tok.value.endswith("\n")

    @staticmethod
    def _track_block(tok: Token, stack: list[list[Any]]) -> None:
        kind = tok.type
        name = _TAG_NAMES.get(kind)  # a known tag's keyword (its pattern ends with it)
        if name is None:
            m = _TAG_NAME_RE.match(tok.value)
            name = m.group(1) if m else ""
        if kind == "TAG_UNKNOWN":
            if name == "raw":  # lexed as a tag only when no ``endraw`` closes it
                raise CompileError("syntax", "Missing end of raw directive", tok.line, tok.column)
            raise _nesting_error(name, stack, (tok.line, tok.column))
        if name in _BLOCK_ENDS:
            stack.append([name, _BLOCK_ENDS[name], name == "set"])
            return
        if name in ("elif", "else") or name.startswith("end"):
            top = stack[-1] if stack else None
            if top is None or name not in top[1]:
                raise _nesting_error(name, stack, (tok.line, tok.column))
            if name == "else":
                top[1] = ("endif",) if top[0] == "if" else ("endfor",)
            elif name.startswith("end"):
                stack.pop()


#: the token kinds ``_WhitespaceControl.process`` does something with (outside a test)
_SPECIAL_KINDS = frozenset({
    "TEXT", "VAR_START", "VAR_END", "BLOCK_END", "COMMENT", "RAW", "EQUAL", "IS",
    "LPAR", "LSQB", "LBRACE", "RPAR", "RSQB", "RBRACE",
})
_PLAIN_KINDS: dict = {}  # kind -> ``_plain_kind(kind)``, filled as kinds are seen


def _plain_kind(kind: str) -> bool:
    """``process`` passes a token of this kind on as it is when no test is being read: not
    text, a tag (``TAG_*``), a bracket, ``=``, ``is`` or the end of a tag."""
    return kind not in _SPECIAL_KINDS and not kind.startswith("TAG_")


#: keyword tokens that stand for a name (the test's argument) right after a test's name
_KEYWORD_ARGS = frozenset({
    "IF", "IN", "NOT", "RECURSIVE", "IGNORE", "SCOPED", "REQUIRED", "MISSING", "WITH",
    "WITHOUT", "CONTEXT", "AS", "IMPORT",
})


def _next_test_state(state: int, kind: str) -> int:
    if kind == "IS":
        return 1
    if state == 1 and kind == "NOT":
        return 1
    if state == 1 and kind in ("NAME", "NONE", "TRUE", "FALSE", "IN"):
        return 2
    return 0


def _sign(tag_text: str) -> str:
    return tag_text[2:3] if tag_text[2:3] in ("-", "+") else ""


def _nesting_error(name: Optional[str], stack: list[list[Any]], pos: tuple) -> CompileError:
    """jinja2's ``_fail_ut_eof`` message, word for word."""
    expected: set[str] = set()
    for entry in stack:
        expected.update(entry[1])
    currently_looking = " or ".join(map(repr, stack[-1][1])) if stack else None
    if name is None:
        message = ["Unexpected end of template."]
        code = "unclosed-block"
    else:
        message = [f"Encountered unknown tag {name!r}."]
        code = "unknown-tag"
    if currently_looking:
        if name is not None and name in expected:
            message.append(
                "You probably made a nesting mistake. Jinja is expecting this tag,"
                f" but currently looking for {currently_looking}."
            )
        else:
            message.append(f"Jinja was looking for the following tags: {currently_looking}.")
    if stack:
        message.append(f"The innermost block that needs to be closed is {stack[-1][0]!r}.")
    return CompileError(code, " ".join(message), pos[0] or 0, pos[1] or 0)


_PARSER = LazyParser(__file__, _WhitespaceControl)
_NAMES = TokenNames(HUMAN_NAMES, parser)


def parse(source: str, name: Optional[str] = None) -> ir.Module:
    """Parse a Jinja template into an IR module (names not yet resolved to locals)."""
    text = normalize_source(source)

    def build() -> tuple:
        return parse_and_transform(parser(), text, lambda: Lowering(text))

    body = run_parser(build, (CompileError,), lambda e: e, lambda e: _syntax_error(e, text))
    return ir.Module(body=body, dialect="jinja", profile="hf")


def _syntax_error(e: UnexpectedInput, text: str) -> CompileError:
    line, column = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0
    token = getattr(e, "token", None)
    offset = getattr(e, "pos_in_stream", None)
    if offset is None and token is not None:
        offset = getattr(token, "start_pos", None)
    if isinstance(offset, int) and text.startswith("{#", offset):  # a comment never closed
        at = (getattr(token, "line", None) or line, getattr(token, "column", None) or column)
        return CompileError("syntax", "Missing end of comment tag", *at)
    if isinstance(e, UnexpectedCharacters):
        char = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        return CompileError("syntax", f"unexpected char {char!r}", line, column)
    if isinstance(e, UnexpectedEOF):
        return CompileError("syntax", "unexpected end of template", line, column)
    if isinstance(e, UnexpectedToken):
        tok = e.token
        got = _NAMES.get(tok.type, repr(str(tok)))
        if tok.type == "TEXT":  # lexed by the fallback lexer: name the character, as jinja2 does
            stripped = tok.value.lstrip()
            column = (tok.column or 0) + len(tok.value) - len(stripped)
            return CompileError(
                "syntax", f"unexpected char {stripped[:1]!r}", tok.line or line, column
            )
        if tok.type == "$END":
            return CompileError("syntax", "unexpected end of template", line, column)
        expected = sorted(_describe_terminal(t) for t in e.expected)
        message = f"unexpected {got}"
        if len(expected) <= 6:
            message += ", expected " + " or ".join(expected)
        return CompileError("syntax", message, tok.line or line, tok.column or column)
    return CompileError("syntax", str(e).splitlines()[0], line, column)


def _describe_terminal(name: str) -> str:
    if name.startswith("TAG_") and name not in _NAMES:
        return "'" + name[4:].lower() + "' tag"
    return _NAMES.describe(name)
