"""Python source of ``ast`` nodes for the emitter, string literals in black's quotes.

``ast.unparse`` writes strings with ``repr``'s quotes; black then rewrites each one (string
normalisation is a sixth of black's time on a large module). To skip that work, ``unparse``
writes every ``str`` constant the way black would have quoted it, which needs a hook into
CPython's unparser: its private ``ast._Unparser`` and that class's ``_write_constant``.
This module is the only place that touches them. When either is missing, or the hook does
not behave (checked once, at import), ``QUOTES_STRINGS`` is False, ``unparse`` is plain
``ast.unparse``, and black normalises the strings instead (``api.format_module``): the
formatted module is the same either way (tests/unit/test_unparse.py).
"""

from __future__ import annotations

import ast
import functools
from typing import Any, Optional


@functools.lru_cache(maxsize=4096)
def _black_quoted(value: str) -> str:
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
                self.write(_black_quoted(value))
            else:
                super()._write_constant(value)

    probe = ast.Tuple([ast.Constant("it's"), ast.Constant('"'), ast.Constant(1)], ast.Load())
    try:
        written = QuotingUnparser().visit(probe)
    except (AttributeError, TypeError):  # the private interface changed shape
        return None
    return QuotingUnparser if written == "(\"it's\", '\"', 1)" else None


#: The hooked unparser (None: unavailable, fall back to ``ast.unparse``).
UNPARSER: Optional[type] = _quoting_unparser()

#: ``unparse`` writes strings in black's quotes (black need not normalise them).
QUOTES_STRINGS: bool = UNPARSER is not None


def unparse(node: ast.AST) -> str:
    """``ast.unparse(node)``, with string literals in black's quotes when ``QUOTES_STRINGS``."""
    if UNPARSER is None:
        return ast.unparse(node)
    return UNPARSER().visit(node)


def quote(value: str) -> str:
    """A string literal for ``value``, quoted as ``unparse`` quotes it."""
    return unparse(ast.Constant(value))
