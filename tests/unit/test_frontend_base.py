"""compiler/frontend.py: what both frontends share (parser bootstrap, token names, errors)."""

from __future__ import annotations

import pytest
from lark.exceptions import VisitError

from tmpl2py.compiler.errors import CompileError
from tmpl2py.compiler.frontend import TokenNames, error_at, run_parser
from tmpl2py.compiler.gotmpl import frontend as go_frontend
from tmpl2py.compiler.jinja import frontend as jinja_frontend


class _Mine(Exception):
    pass


def _convert(e: _Mine) -> CompileError:
    return CompileError("syntax", f"mine: {e}", 1, 1)


def _syntax(e: object) -> CompileError:
    return CompileError("syntax", "lark", 1, 1)


def _raise(exc: BaseException) -> None:
    raise exc


def test_run_parser_converts_known_errors_raised_directly_or_inside_a_transformer() -> None:
    with pytest.raises(CompileError, match="mine: direct"):
        run_parser(lambda: _raise(_Mine("direct")), (_Mine,), _convert, _syntax)
    wrapped = VisitError("rule", None, _Mine("in a rule"))
    with pytest.raises(CompileError, match="mine: in a rule") as info:
        run_parser(lambda: _raise(wrapped), (_Mine,), _convert, _syntax)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_run_parser_lets_bugs_through() -> None:
    with pytest.raises(ZeroDivisionError):
        run_parser(lambda: 1 // 0, (_Mine,), _convert, _syntax)
    with pytest.raises(VisitError):  # a transformer's own bug stays visible
        run_parser(
            lambda: _raise(VisitError("rule", None, KeyError("x"))), (_Mine,), _convert, _syntax
        )
    assert run_parser(lambda: 42, (_Mine,), _convert, _syntax) == 42


def test_both_frontends_build_their_parser_once() -> None:
    assert jinja_frontend.parser() is jinja_frontend.parser()
    assert go_frontend.parser() is go_frontend.parser()
    assert jinja_frontend.parser() is not go_frontend.parser()


def test_token_names_table_then_literal_then_lower_case() -> None:
    names = TokenNames({"NAME": "name"}, jinja_frontend.parser)
    assert names.describe("NAME") == "name"
    literals = {
        t.name: t.pattern.value
        for t in jinja_frontend.parser().terminals
        if t.pattern.type == "str"
    }
    some, text = sorted(literals.items())[0]
    assert names.describe(some) == repr(text)
    regexps = [
        t.name
        for t in jinja_frontend.parser().terminals
        if t.pattern.type != "str" and t.name != "NAME"
    ]
    assert names.describe(regexps[0]) == regexps[0].lower()
    assert "NAME" in names and names.get("X", "d") == "d"


def test_error_at_names_line_and_column_of_an_offset() -> None:
    e = error_at("ab\ncd", "t", "syntax", "boom", 4)
    assert (e.line, e.column, e.name) == (2, 2, "t")
    assert error_at("ab", None, "syntax", "end", 99).column == 3  # clamped to the end
