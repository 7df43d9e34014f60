"""Compile errors: one exception type, with a stable code and a template position.

Codes (stable, documented in the README):
    syntax           the template does not parse (an unexpected token or character)
    unclosed-block   end of template inside an open block
    unknown-tag      a tag the environment does not know, or an end tag that closes nothing
    unknown-filter   a filter the environment does not define
    unknown-test     a test the environment does not define
    unknown-function a Go function that is not in the func map
    undefined-variable  a Go ``$variable`` used before it is declared
    unsupported      valid for the engine, but not compiled by tmpl2py (named in the message)
    bad-loop-control ``break``/``continue`` outside a loop
    too-deep         nesting beyond what the generated Python can hold
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Optional


class CompileError(Exception):
    """A template that cannot be compiled.

    ``code`` is one of the stable codes above; ``line`` and ``column`` are 1-based
    (0 when unknown); ``excerpt`` is the offending source line with a caret under
    the column. ``str(err)`` reads ``name:line:column: message`` followed by the excerpt.
    """

    def __init__(
        self,
        code: str,
        message: str,
        line: int = 0,
        column: int = 0,
        source: Optional[str] = None,
        name: Optional[str] = None,
    ) -> None:
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        self.name = name or "<template>"
        self.excerpt = _excerpt(source, line, column) if source is not None else ""
        super().__init__(self._format())

    def _format(self) -> str:
        where = f"{self.name}:{self.line}:{self.column}" if self.line else self.name
        text = f"{where}: {self.message} [{self.code}]"
        if self.excerpt:
            text += "\n" + self.excerpt
        return text

    def with_source(self, source: str, name: Optional[str]) -> "CompileError":
        """The same error with the excerpt and template name attached (done once, at the API)."""
        return CompileError(self.code, self.message, self.line, self.column, source, name)


@contextmanager
def attached_to(source: str, name: Optional[str]) -> Iterator[None]:
    """A compile step's errors as the template's: a ``CompileError`` gains the source and
    name; a ``RecursionError`` (nesting deeper than Python's stack in a recursive step) is the
    ``too-deep`` ``CompileError``."""
    try:
        yield
    except CompileError as e:
        raise e.with_source(source, name) from None
    except RecursionError:
        raise CompileError(
            "too-deep", "template nesting is too deep to compile", 0, 0, source, name
        ) from None


def _excerpt(source: str, line: int, column: int) -> str:
    if line <= 0:
        return ""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if line > len(lines):
        return ""
    text = lines[line - 1]
    shown = text[:200]
    caret = " " * (max(column, 1) - 1) if column <= 200 else " " * 200
    return f"    {shown}\n    {caret}^"


def position(source: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return line, column
