"""Render errors carry the template position of the statement that raised (compiler/positions.py).

Each template fails on both sides; the exception type and message are the reference's
(transformers' environment), and the line is the one jinja2's own traceback names (jinja2
rewrites its frames to ``File "<template>", line N``), so the position is reference-checked.
The column is the tag's (``{{``/``{%``) and the note reads ``name:line:col: source line``.
"""

from __future__ import annotations

import linecache
import sys
import traceback
from pathlib import Path

import pytest

from tmpl2py.compiler import compile_template
from tmpl2py.runtime.budget import RenderBudgetExceeded

pytest.importorskip("transformers")
from transformers.utils.chat_template_utils import _compile_jinja_template  # noqa: E402

CASES = [
    # name, template, context, expected (line, column) of the failing statement
    ("undefined_chain", "hello\n   {{ x.y.z }}\n", {}, (2, 4)),
    ("raise_in_macro", "{% macro m(a) %}\n{{ raise_exception('boom ' ~ a) }}{% endmacro %}\n"
     "{% for i in [1] %}\n  {% set q = m(i) %}{% endfor %}", {}, (2, 1)),
    ("mixed_plus", "a\nb {% if true %}\n{{ 1 + 'a' }}{% endif %}", {}, (3, 1)),
    ("security", "{% set d = {} %}\n\n{{ d.pop('k') }}", {}, (3, 1)),
    ("range_limit", "x\n{% for i in range(n) %}{% endfor %}", {"n": 10**6}, (2, 1)),
    ("set_block_body", "{% set x %}\n  {{ m.content.bad.x }}{% endset %}", {"m": {"content": 1}}, (2, 3)),
    ("loop_filter", "x\n{% for m in ms if m.a.b %}{% endfor %}", {"ms": [{}]}, (2, 1)),
    ("long_line_black_splits", "\n\n{{ raise_exception(a ~ b ~ c ~ d ~ e ~ f ~ g ~ h ~ i ~ j ~ k ~ l ~ m ~ n ~ o ~ p"
     " ~ q ~ r ~ s ~ t ~ u ~ v ~ w ~ x ~ y ~ z) if go else '' }}", {"go": True}, (3, 1)),
    # jinja2's traceback names line 1 here (the outer with's), coarser than the binding's line
    ("with_binding", "{% with a = 1 %}\n{% with b = a.c.d %}{% endwith %}{% endwith %}", {}, (2, 1)),
    ("include_no_loader", "ok\n{% if go %}{% include 'x.jinja' %}{% endif %}", {"go": 1}, (2, 12)),
]


def _reference(source: str, context: dict) -> tuple[BaseException, int]:
    try:
        _compile_jinja_template(source).render(**context)
    except Exception as e:  # noqa: BLE001 - the reference's failure is the expectation
        lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == "<template>"]
        assert lines, f"jinja2 names no template line for {type(e).__name__}: {e}"
        return e, lines[-1]
    raise AssertionError("the reference renders this template")


@pytest.mark.parametrize("name,source,context,where", CASES, ids=[c[0] for c in CASES])
def test_render_error_names_the_template_position(name, source, context, where) -> None:
    ref, ref_line = _reference(source, context)
    if name != "with_binding":
        assert where[0] == ref_line
    t = compile_template(source, name=f"{name}.jinja")
    with pytest.raises(Exception) as info:
        t.render(context)
    err = info.value
    assert (type(err).__name__, str(err)) == (type(ref).__name__, str(ref))
    assert (err.template_name, err.template_line, err.template_column) == (f"{name}.jinja", *where)
    line_text = source.split("\n")[where[0] - 1]
    assert err.template_source_line == line_text
    assert err.__notes__ == [f"{name}.jinja:{where[0]}:{where[1]}: {line_text.strip()}"]
    shown = "".join(traceback.format_exception(err))
    assert f"{name}.jinja:{where[0]}:{where[1]}:" in shown


def test_the_exception_itself_is_raised_on() -> None:
    """Identity, type and message are the runtime's own; only the note and attributes are new."""
    from tmpl2py.runtime.jinja import UndefinedError

    t = compile_template("{{ x.y }}")
    with pytest.raises(UndefinedError) as info:
        t.render({})
    assert info.value.args == ("'x' is undefined",)


def test_conversation_errors_are_located() -> None:
    t = compile_template("{% for m in messages %}\n{{ m.content.x.y }}{% endfor %}", name="c.jinja")
    with pytest.raises(Exception) as info:
        t.render_conversation([{"role": "user", "content": "hi"}])
    assert (info.value.template_line, info.value.template_column) == (2, 1)


def test_budget_and_recursion_errors_are_located() -> None:
    t = compile_template("{% for i in range(100000) %}{% for j in range(100000) %}\n{{ j }}{% endfor %}{% endfor %}")
    with pytest.raises(RenderBudgetExceeded) as info:  # no fuel limit: the budget ends it
        t.render({}, budget=0.05, limits={"fuel": None})
    assert info.value.template_line in (1, 2)
    t = compile_template("x\n{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}")
    with pytest.raises(RecursionError) as info2:
        t.render({})
    assert (info2.value.template_line, info2.value.template_column) == (2, 16)


def test_tracebacks_show_the_generated_lines() -> None:
    t = compile_template("a\n{{ raise_exception('no') }}", name="tb.jinja")
    with pytest.raises(Exception) as info:
        t.render({})
    frames = [f for f in traceback.extract_tb(info.value.__traceback__) if f.filename.startswith("<tmpl2py:tb.jinja")]
    assert frames and frames[-1].line == linecache.getline(frames[-1].filename, frames[-1].lineno).strip()
    assert "raise_exception" in frames[-1].line


def test_errors_outside_the_template_get_no_position() -> None:
    t = compile_template("{{ messages }}")
    with pytest.raises(ValueError) as info:  # transformers' input handling, after the render
        t.render_conversation([{"role": "user", "content": object()}], continue_final_message=True)
    assert not hasattr(info.value, "template_line") and not getattr(info.value, "__notes__", None)


def test_cli_prints_position_and_caret(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from tmpl2py.cli import main

    path = tmp_path / "bad.jinja"
    path.write_text("Hello\n  {{ messages[0].nope.x }}\n", encoding="utf-8")
    ctx = tmp_path / "ctx.json"
    ctx.write_text('{"messages": [{"role": "user", "content": "hi"}]}', encoding="utf-8")
    assert main(["render", str(path), "--context", str(ctx), "--raw"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-3] == "bad.jinja:2:3: UndefinedError: 'dict object' has no attribute 'nope'"
    assert err[-2] == "      {{ messages[0].nope.x }}"
    assert err[-1] == "      ^"


def _templates_for_spans() -> list:
    examples = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.jinja"))
    from tmpl2py_paths import SHARED

    corpus = sorted((SHARED / "corpus" / "jinja" / "templates").glob("*.jinja"))
    return [pytest.param(p, id=p.name) for p in examples + corpus[::4]]


@pytest.mark.parametrize("path", _templates_for_spans())
def test_unformatted_modules_read_spans_by_line(path: Path) -> None:
    """A module compiled from the emitter's own text finds a line's span by its number, without
    parsing the module (``PositionTable.span_at``: on a megabyte module the parse took
    seconds, on an error path): the same span as pairing the module's statements
    (``build_table``) for every line of code that pairing maps. Fails if the emitter ever writes a
    statement over lines that do not match its span list. (Every fourth corpus template when
    ../shared is present; the project's examples always.)"""
    from tmpl2py.compiler.positions import build_table

    from tmpl2py.compiler import CompileError

    source = path.read_text(encoding="utf-8")
    try:
        t = compile_template(source, name=path.name)
    except CompileError:  # a corpus template the reference refuses too: no module, no table
        with pytest.raises(Exception):
            _compile_jinja_template(source)
        return
    table = t.positions
    text, raw_spans = table.raw
    assert text is table.final_text  # the direct path is the one taken
    paired = build_table(text, raw_spans, table.final_text)
    assert len(paired) > 3
    lines = text.splitlines()
    for line, span in paired.items():
        if not lines[line - 1].lstrip().startswith("#"):  # a header's range takes in comments
            assert table.span_at(line) == span, line


if sys.version_info < (3, 11):  # pragma: no cover
    pytest.skip("PEP 678 notes need Python 3.11", allow_module_level=True)
