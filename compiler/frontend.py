"""What the two frontends share: the Lark bootstrap, terminal names, error translation.

Each dialect's frontend (``jinja/frontend.py``, ``gotmpl/frontend.py``) supplies its grammar
(``grammar.lark`` next to it, its LALR tables prebuilt in ``grammar_tables.py``), its post-lexer, its table of human token names and its own
wording; this module builds the parser (``build_parser``, the one place a ``Lark`` is
constructed), caches it (``LazyParser``), names terminals for "unexpected X" messages
(``TokenNames``) and turns what Lark raises into ``CompileError`` (``run_parser``), so both
dialects report a bad template the same way: a typed error at a template position.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Optional, TypeVar

from . import lark_tables
from lark import Lark
from lark.exceptions import UnexpectedInput, VisitError

from .errors import CompileError, position

T = TypeVar("T")


def build_parser(grammar_dir: str, postlex: Any) -> Lark:
    """The frontends' Lark parser: the grammar of the frontend package beside ``grammar_dir``
    (a module's ``__file__``), LALR with the contextual lexer, positions kept, ``postlex``
    applied to the token stream; loaded from its prebuilt tables when they are current
    (``lark_tables``). Every frontend parser is made here (one place to tune construction)."""
    return lark_tables.load_parser(Path(grammar_dir).resolve().parent.name, postlex)


class LazyParser:
    """A frontend's parser, built on first use and then kept (building one takes a while)."""

    def __init__(self, grammar_dir: str, postlex: Callable[[], Any]) -> None:
        self._grammar_dir = grammar_dir
        self._postlex = postlex
        self._parser: Optional[Lark] = None

    def __call__(self) -> Lark:
        if self._parser is None:
            self._parser = build_parser(self._grammar_dir, self._postlex())
        return self._parser


class TokenNames:
    """Human names of a grammar's terminals, for "unexpected X" messages: the dialect's own
    table first, else the terminal's literal text (``'('``), else its name in lower case."""

    def __init__(self, table: Mapping[str, str], parser: Callable[[], Lark]) -> None:
        self.table = table
        self._parser = parser
        self._literals: Optional[dict] = None

    def __contains__(self, terminal: str) -> bool:
        return terminal in self.table

    def get(self, terminal: str, default: Optional[str] = None) -> Optional[str]:
        return self.table.get(terminal, default)

    def describe(self, terminal: str) -> str:
        if terminal in self.table:
            return self.table[terminal]
        literal = self.literal(terminal)
        return repr(literal) if literal is not None else terminal.lower()

    def literal(self, terminal: str) -> Optional[str]:
        """The text a terminal matches when it is a fixed string, else None."""
        if self._literals is None:
            self._literals = {
                t.name: t.pattern.value for t in self._parser().terminals if t.pattern.type == "str"
            }
        return self._literals.get(terminal)


def run_parser(
    build: Callable[[], T],
    known: tuple[type[BaseException], ...],
    convert: Callable[[Any], CompileError],
    syntax: Callable[[UnexpectedInput], CompileError],
) -> T:
    """``build()`` (parse and transform), with every error it raises as a ``CompileError``:
    a ``known`` error (raised by the post-lexer, or inside a transformer, where Lark wraps it
    in ``VisitError``) through ``convert``, a Lark parse error through ``syntax``. Anything
    else is a bug and propagates unchanged."""
    try:
        return build()
    except VisitError as e:
        if isinstance(e.orig_exc, known):
            raise convert(e.orig_exc) from None
        raise
    except known as e:
        raise convert(e) from None
    except UnexpectedInput as e:
        raise syntax(e) from None


def error_at(
    source: str, name: Optional[str], code: str, message: str, offset: int
) -> CompileError:
    """A ``CompileError`` at a character offset of ``source`` (clamped to its end)."""
    line, column = position(source, min(offset, len(source)))
    return CompileError(code, message, line, column, source, name)
