"""Render errors that point into the template: the position table and its use.

The emitter records, for every line of the render body it writes, the template span of the
statement the line belongs to (``emit.emit_with_spans``). That table is for the module text
*before* black; black lays lines out anew but never adds, drops or reorders a statement (it
checks that the AST is unchanged), so the n-th statement of the formatted module is the n-th
of the raw one. :class:`PositionTable` pairs them up, lazily: nothing is built or looked up
until an exception leaves a render, so the fast path pays nothing.

When one does, :meth:`PositionTable.locate` finds the innermost frame of the generated module
in the traceback (of the exception, or of the exception it replaced: a budget or recursion
error raised anew ``from None``), maps its line to a template span and attaches, to the same
exception object (its type, message and identity unchanged):

- ``template_name``, ``template_line``, ``template_column`` (1-based; the column of the tag,
  ``{{`` or ``{%``, of the statement that raised) and ``template_source_line`` (that line of
  the template, as written);
- a PEP 678 note ``name:line:col: <the source line, stripped>``, so a traceback shows it;
- for a limit error (``RenderLimitExceeded``), its ``where`` (``name:line:col``), ``line`` and
  ``column``.

Dialect-neutral: the spans are whatever the frontend put on the IR's statements.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    import ast

from tmpl2py.runtime.limits import RenderLimitExceeded

Span = tuple

_LINE_BREAK = r"\r\n|\r|\n"  # compiled where used (errors only): no cost at import
#: Attributes a located exception carries (``template_line`` set means: already located).
ATTRIBUTES = ("template_name", "template_line", "template_column", "template_source_line")


def _statements(tree: ast.AST) -> list:
    """Every statement of ``tree``, in source order (parents before their bodies)."""
    import ast  # on the error path only (a template from the cache starts without it)

    out: list = []

    def visit(node: ast.AST) -> None:
        for field in node._fields:
            value = getattr(node, field, None)
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, ast.stmt):
                    out.append(item)
                    visit(item)
                elif isinstance(item, (ast.excepthandler, ast.match_case)):
                    visit(item)

    visit(tree)
    return out


def _header_end(stmt: ast.stmt) -> int:
    """The last line of a statement's own text (a compound statement's header only)."""
    body = getattr(stmt, "body", None)
    if isinstance(body, list) and body:
        return max(stmt.lineno, body[0].lineno - 1)
    return stmt.end_lineno or stmt.lineno


def build_table(raw_text: str, raw_spans: tuple, final_text: str) -> dict:
    """generated line (1-based, of ``final_text``) -> template span."""
    import ast

    first, spans = raw_spans
    raw = _statements(ast.parse(raw_text))
    final = raw if final_text == raw_text else _statements(ast.parse(final_text))
    table: dict = {}
    if len(raw) != len(final):  # cannot happen for black's output; no positions then
        return table
    for r, f in zip(raw, final):
        i = r.lineno - 1 - first
        if not 0 <= i < len(spans) or not spans[i][0]:
            continue
        for line in range(f.lineno, _header_end(f) + 1):
            table[line] = spans[i]
    return table


class PositionTable:
    """The generated module's line -> template position map, built on first use."""

    def __init__(
        self,
        filename: str,
        name: str,
        source: str,
        final_text: str,
        raw: Any = None,
    ) -> None:
        self.filename = filename
        self.name = name
        self.source = source
        self.final_text = final_text
        # (raw_text, (first, spans)); a function that returns them (made on the first error:
        # a module loaded from the cache); or None: no positions known
        self.raw = raw
        self._table: Optional[dict] = None

    def register_source(self) -> None:
        """Let tracebacks (``linecache``) show the generated module's real lines: done by
        ``locate``, when an error first leaves a render (a render that raises nothing never
        pays for splitting the module text)."""
        import linecache  # on the error path only

        if self.filename not in linecache.cache:
            lines = self.final_text.splitlines(True)
            linecache.cache[self.filename] = (len(self.final_text), None, lines, self.filename)

    def table(self) -> dict:
        if self._table is None:
            self._table = {}
            raw = self.raw() if callable(self.raw) else self.raw
            if raw is not None:
                self._table = build_table(raw[0], raw[1], self.final_text)
        return self._table

    def span_at(self, line: int) -> Optional[Span]:
        """The template span of generated line ``line``. A module compiled from the
        emitter's own text (``compile_template``'s, unformatted) is read straight from its
        spans, the n-th line's being the n-th the emitter wrote (``table`` parses the module:
        seconds for a module of megabytes, on an error path a hostile template can take);
        a formatted one pairs its statements with the emitter's (:func:`build_table`)."""
        raw = self.raw
        if type(raw) is tuple and raw[0] is self.final_text:
            first, spans = raw[1]
            i = line - 1 - first
            return spans[i] if 0 <= i < len(spans) and spans[i][0] else None
        return self.table().get(line)

    def span_of(self, exc: BaseException) -> Optional[Span]:
        """The template span of the innermost generated frame that ``exc`` (or an exception
        it replaced) passed through."""
        seen: set = set()
        current: Optional[BaseException] = exc
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            line = None
            tb = current.__traceback__
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == self.filename:
                    line = tb.tb_lineno
                tb = tb.tb_next
            if line is not None:
                return self.span_at(line)
            current = current.__cause__ or current.__context__
        return None

    def locate(self, exc: BaseException, cause: Optional[BaseException] = None) -> BaseException:
        """Attach the template position to ``exc`` (found through ``cause`` when given:
        the exception ``exc`` replaces); returns ``exc``."""
        self.register_source()
        if getattr(exc, "template_line", None) is not None:
            return exc
        span = self.span_of(cause if cause is not None else exc)
        if not span or not span[0]:
            return exc
        line, column = span[0], span[1]
        lines = re.split(_LINE_BREAK, self.source)
        text = lines[line - 1] if line <= len(lines) else ""
        try:
            exc.template_name = self.name  # type: ignore[attr-defined]
            exc.template_line = line  # type: ignore[attr-defined]
            exc.template_column = column  # type: ignore[attr-defined]
            exc.template_source_line = text  # type: ignore[attr-defined]
        except AttributeError:  # an exception type without a __dict__: the note still tells
            pass
        if isinstance(exc, RenderLimitExceeded):
            exc.locate(f"{self.name}:{line}:{column}", line, column)
        exc.add_note(f"{self.name}:{line}:{column}: {text.strip()}")
        return exc


def describe(exc: BaseException) -> Optional[str]:
    """``name:line:col: ErrorType: message`` and the source line with a caret under the column,
    for a located exception (None when it carries no position)."""
    line = getattr(exc, "template_line", None)
    if line is None:
        return None
    column = getattr(exc, "template_column", 0) or 1
    text = getattr(exc, "template_source_line", "")
    head = f"{getattr(exc, 'template_name', '<template>')}:{line}:{column}: {type(exc).__name__}: {exc}"
    if not text:
        return head
    return f"{head}\n    {text[:200]}\n    {' ' * min(column - 1, 200)}^"
