"""Malformed templates: each must raise CompileError with a stable code and line:column
(a table like Go's parse tests), and never an internal traceback."""

from __future__ import annotations

import pytest

from tmpl2py.compiler import CompileError, compile_template

CASES = [
    # name, dialect, source, code, line, column, words in the message
    ("unclosed_if", "jinja", "{% if x %}\nabc\n", "unclosed-block", 2, 4, "Unexpected end of template"),
    ("unclosed_for_hint", "jinja", "{% for x in y %}", "unclosed-block", 1, 17, "'endfor' or 'else'"),
    ("nesting_mistake", "jinja", "a\n{% for x in y %}{% if x %}{% endfor %}", "unknown-tag", 2, 27, "nesting mistake"),
    ("repeated_keyword", "jinja", "{{ f(a=1,\n a=2) }}", "syntax", 2, 2, "keyword argument repeated: a"),
    ("stray_end", "jinja", "{% endif %}", "unknown-tag", 1, 1, "unknown tag 'endif'"),
    ("unknown_tag_do", "jinja", "x\n  {% do items.append(1) %}", "unknown-tag", 2, 3, "unknown tag 'do'"),
    ("extends_in_loop", "jinja", "{% for x in y %}\n {% extends 'base' %}{% endfor %}", "syntax", 2, 2, "non top-level scope"),
    ("from_import_underscore", "jinja", "{% from 'a' import b, _c %}", "syntax", 1, 23, "underline"),
    ("missing_operand", "jinja", "{{ x + }}", "syntax", 1, 8, "unexpected char '}'"),
    ("unterminated_string", "jinja", 'ab\n  {{ "open }}', "syntax", 2, 6, "unexpected char '\"'"),
    ("unbalanced_paren", "jinja", "{{ (1 }}", "syntax", 1, 7, "unexpected end of print statement"),
    ("unknown_filter", "jinja", "\n{{ x | nosuch }}", "unknown-filter", 2, 8, "No filter named 'nosuch'."),
    ("unknown_test", "jinja", "{{ x is nosuch }}", "unknown-test", 1, 6, "No test named 'nosuch'."),
    ("bad_escape", "jinja", "{{ '\\N{nope}' }}", "syntax", 1, 4, "unknown Unicode character name"),
    # jinja2's lexer messages for a comment or a raw block never closed
    ("unclosed_comment", "jinja", "a\n  {#- x -", "syntax", 2, 3, "Missing end of comment tag"),
    ("unclosed_raw", "jinja", "a {% raw %}b{% endraw", "syntax", 1, 3, "Missing end of raw directive"),
]


@pytest.mark.parametrize("name,dialect,source,code,line,column,words", CASES, ids=[c[0] for c in CASES])
def test_compile_error(name, dialect, source, code, line, column, words) -> None:
    with pytest.raises(CompileError) as info:
        compile_template(source, dialect=dialect, name=f"{name}.tmpl")
    err = info.value
    assert (err.code, err.line, err.column) == (code, line, column), str(err)
    assert words in err.message
    # The rendering names the template and position, and shows a caret under the column.
    text = str(err)
    assert text.startswith(f"{name}.tmpl:{line}:{column}: ")
    caret_line = text.splitlines()[-1]
    assert caret_line.index("^") == 4 + column - 1


def test_error_is_not_a_traceback_for_garbage() -> None:
    for source in ["{{", "{%", "{{ }}", "{% %}", "{% if %}", "}}{{", "{% for %}{% endfor %}", "{% set %}"]:
        with pytest.raises(CompileError):
            compile_template(source)


GO_CASES = [
    ("go_unexpected_end", "{{ if .X }}a{{ end }}{{ end }}", "unexpected {{end}}"),
    ("go_undefined_variable", "{{ $x }}", 'undefined variable "$x"'),
    ("go_unknown_function", "{{ nosuch 1 }}", 'function "nosuch" not defined'),
    ("go_unclosed_action", "{{ .X ", "unclosed action"),
    ("go_unclosed_if", "{{ if .X }}", "unexpected EOF"),
]


@pytest.mark.parametrize("name,source,words", GO_CASES, ids=[c[0] for c in GO_CASES])
def test_go_compile_error(name, source, words) -> None:
    with pytest.raises(CompileError) as info:
        compile_template(source, dialect="go", name=name)
    assert words in info.value.message
    assert info.value.line >= 1


def test_seed002_fragment_fails_like_go() -> None:
    """The seed is cut at both ends: Go reports "unexpected {{end}}"; so must we, located."""
    from pathlib import Path

    source = (Path(__file__).parent / "seed002_fragment.gotmpl").read_text(encoding="utf-8")
    with pytest.raises(CompileError) as info:
        compile_template(source, dialect="go", profile="ollama")
    err = info.value
    assert "unexpected {{end}}" in err.message
    assert (err.line, err.column) == (43, 1)
    goref = pytest.importorskip("goref_client")
    if not goref.go_available():
        pytest.skip("`go` is not available")
    ok, message = goref.get_reference().ollama(source, {"messages": [{"role": "user", "content": "hi"}]})
    assert not ok and "unexpected {{end}}" in message
