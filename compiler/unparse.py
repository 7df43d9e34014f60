"""Python source of ``ast`` nodes for the emitter, string literals in black's quotes.

``ast.unparse`` writes strings with ``repr``'s quotes; black then rewrites each one (string
normalisation is a sixth of black's time on a large module). To skip that work, ``unparse``
writes every ``str`` constant the way black would have quoted it, which needs a hook into
CPython's unparser: its private ``ast._Unparser`` and that class's ``_write_constant``.
This module is the only place that touches them. When either is missing, or the hook does
not behave (checked once, at import), ``QUOTES_STRINGS`` is False, ``unparse`` is plain
``ast.unparse``, and black normalises the strings instead (``api.format_module``): the
formatted module is the same either way (tests/unit/test_unparse.py). The hooked class also
does its parentheses and dispatch in fewer Python calls (``_fast_unparser``; half the
emitter's time was the unparser), used only when it writes ``_PROBES`` as ``ast.unparse``.
"""

from __future__ import annotations

import ast
import functools
from typing import Any, Optional


@functools.lru_cache(maxsize=4096)
def black_quoted(value: str) -> str:
    """black's quotes without importing black (``quotes`` is black's rule, checked against it)."""
    from .quotes import normalize_string_quotes

    return normalize_string_quotes(repr(value))


def _quoting_unparser() -> Optional[type]:
    """A subclass of CPython's unparser that quotes strings as black does, or None."""
    base = getattr(ast, "_Unparser", None)
    if base is None or not callable(getattr(base, "_write_constant", None)):
        return None

    class QuotingUnparser(base):  # type: ignore[misc,valid-type]
        def _write_constant(self, value: Any) -> None:
            if type(value) is str and not getattr(self, "_avoid_backslashes", False):
                self.write(black_quoted(value))
            else:
                super()._write_constant(value)

    probe = ast.Tuple([ast.Constant("it's"), ast.Constant('"'), ast.Constant(1)], ast.Load())
    try:
        written = QuotingUnparser().visit(probe)
    except (AttributeError, TypeError):  # the private interface changed shape
        return None
    if written != "(\"it's\", '\"', 1)":
        return None
    fast = _fast_unparser(QuotingUnparser)
    try:
        same = all(fast().visit(p) == ast.unparse(p) for p in _PROBES)
    except (AttributeError, TypeError):
        same = False
    return fast if same else QuotingUnparser


#: expressions whose text ``_fast_unparser``'s class must write as ``ast.unparse`` does
_PROBES = tuple(
    ast.parse(text, mode="eval").body
    for text in (
        "(a + b) * -c(d, *e, f=g, **h)[i:j] if not (k or l) and m < n <= o else [p, (q,)]",
        "{r: (s := t) for u in v if w} or (lambda x: x)(y)",
    )
)


def _fast_unparser(base: type) -> type:
    """``base`` with its hottest steps done in fewer Python calls, writing the same text:
    the parenthesis helpers as plain context objects instead of generator-based
    ``contextmanager`` ones, and ``traverse`` dispatching through a table of the class's
    ``visit_*`` methods (``NodeVisitor.visit`` builds each method's name per node)."""

    class FastUnparser(base):  # type: ignore[misc,valid-type]
        _visitors: dict = {}

        def delimit(self, start: str, end: str) -> Any:
            self.write(start)
            return _Delimit(self.write, end)

        def delimit_if(self, start: str, end: str, condition: bool) -> Any:
            return self.delimit(start, end) if condition else _NOTHING

        def require_parens(self, precedence: Any, node: Any) -> Any:
            return self.delimit_if("(", ")", self.get_precedence(node) > precedence)

        def traverse(self, node: Any) -> None:
            if isinstance(node, list):
                for item in node:
                    self.traverse(item)
                return
            visitor = self._visitors.get(node.__class__)
            if visitor is None:
                name = "visit_" + node.__class__.__name__
                visitor = self._visitors[node.__class__] = getattr(type(self), name, False)
            if visitor is False:
                self.generic_visit(node)
            else:
                visitor(self, node)

    return FastUnparser


class _Delimit:
    """``delimit``'s context: the closing text written on a normal exit (as the generator's
    ``contextmanager`` writes it: not when the body raises)."""

    __slots__ = ("write", "end")

    def __init__(self, write: Any, end: str) -> None:
        self.write, self.end = write, end

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> bool:
        if kind is None:
            self.write(self.end)
        return False


class _Nothing:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> bool:
        return False


_NOTHING = _Nothing()


#: The hooked unparser (None: unavailable, fall back to ``ast.unparse``).
UNPARSER: Optional[type] = _quoting_unparser()

#: ``unparse`` writes strings in black's quotes (black need not normalise them).
QUOTES_STRINGS: bool = UNPARSER is not None


def unparse(node: ast.AST) -> str:
    """``ast.unparse(node)``, with string literals in black's quotes when ``QUOTES_STRINGS``."""
    if UNPARSER is None:
        return ast.unparse(node)
    return UNPARSER().visit(node)


def unparse_in_fstring(node: ast.AST) -> str:
    """``node`` as the unparser writes it in an f-string's expression (CPython 3.11: string
    literals avoiding backslashes, ``_avoid_backslashes``; ``pysrc`` uses it only where its
    f-strings are checked to be this Python's)."""
    unparser = UNPARSER or ast._Unparser  # type: ignore[attr-defined]
    return unparser(_avoid_backslashes=True).visit(node)


def quote(value: str) -> str:
    """A string literal for ``value``, quoted as ``unparse`` quotes it."""
    return unparse(ast.Constant(value))
