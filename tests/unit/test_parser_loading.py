"""How the frontends' parsers load (issue 15's cold start; ``compiler/lark_tables.py``,
``compiler/lark_import.py``): the pickled parser is the one used and parses like Lark's
own loading of the tables, the LALR loop over ``FastParser``'s table gives Lark's trees and
errors, and a compile imports neither ``regex`` nor ``interegular``."""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys
import zlib

import pytest
from lark.lexer import ContextualLexer
from lark.parsers.lalr_parser import _Parser as LarkParser

from tmpl2py.compiler import lark_loops, lark_tables
from tmpl2py.compiler.gotmpl import frontend as go_frontend
from tmpl2py.compiler.jinja import frontend as jinja_frontend

from tmpl2py_paths import ROOT, SHARED

FRONTENDS = {"jinja": jinja_frontend, "gotmpl": go_frontend}

BROKEN = ["{% if x %}", "{{ a b }}", "{{ .X }}{{end}}", "{{", "text {#", "{{ x | }}", "{% for %}"]


def _tables(name: str):
    return importlib.import_module(f"tmpl2py.compiler.{name}.grammar_tables")


def _texts(name: str) -> list[str]:
    folder = SHARED / "corpus" / ("jinja" if name == "jinja" else "gotmpl") / "templates"
    paths = sorted(folder.iterdir()) if folder.is_dir() else []
    return [p.read_text(encoding="utf-8") for p in paths] + BROKEN


def _outcome(parser, text: str):
    try:
        return ("tree", parser.parse(text))
    except Exception as e:  # noqa: BLE001 - comparing the two parsers' errors
        expected = getattr(e, "expected", None) or getattr(e, "allowed", None) or ()
        state = getattr(e, "state", None)
        stack = list(getattr(state, "value_stack", None) or ())
        where = (getattr(e, "line", None), getattr(e, "column", None), repr(getattr(e, "token", None)))
        return (type(e).__name__, str(e), where, sorted(expected), repr(stack))


@pytest.mark.parametrize("name", sorted(FRONTENDS))
def test_pickled_parser_is_current_and_used(name):
    """The shipped ``PARSER`` was pickled by this Python and Lark, and it loads (a stale or
    broken pickle would silently fall back to the slower load from ``TABLES``)."""
    tables = _tables(name)
    if tables.PARSER_KEY != lark_tables.python_key():
        pytest.skip(f"tables pickled for {tables.PARSER_KEY}, running {lark_tables.python_key()}")
    assert lark_tables._unpickled_parser(tables, FRONTENDS[name].post_lexer()) is not None


@pytest.mark.parametrize("name", sorted(FRONTENDS))
def test_pickled_parser_parses_like_the_tables(name):
    """Every shared corpus template and a few broken inputs: the unpickled parser and the
    one Lark loads from ``TABLES`` give equal trees, or the same error with the same parser
    stack (the Go frontend reads it)."""
    tables = _tables(name)
    frontend = FRONTENDS[name]
    pickled = lark_tables._unpickled_parser(tables, frontend.post_lexer())
    if pickled is None:
        pytest.skip("no pickled parser for this Python")
    data, memo = pickle.loads(zlib.decompress(tables.TABLES))
    loaded = lark_tables._loaded_parser(data, memo, frontend.post_lexer())
    for p in (pickled, loaded):
        lark_tables.with_span_starts(p)
    for text in _texts(name):
        assert _outcome(pickled, text) == _outcome(loaded, text), text[:80]


@pytest.mark.parametrize("name", sorted(FRONTENDS))
def test_fast_loops_are_lark_s(name):
    """The same loaded parser with Lark's own LALR loop and contextual lexer and with
    ``FastParser``'s and ``FastContextualLexer``'s: equal trees (positions included) or
    the same error, with the same parser stack."""
    parser = FRONTENDS[name].parser()
    inner = parser.parser.parser.parser
    lexer = parser.parser.lexer.lexer
    assert type(inner) is lark_loops.FastParser
    assert type(lexer) is lark_loops.FastContextualLexer
    try:
        for text in _texts(name):
            inner.__class__, lexer.__class__ = lark_loops.FastParser, lark_loops.FastContextualLexer
            fast = _outcome(parser, text)
            inner.__class__, lexer.__class__ = LarkParser, ContextualLexer
            slow = _outcome(parser, text)
            assert fast == slow, text[:80]
            if fast[0] == "tree":
                metas = [
                    [(t.data, t.meta.empty) + (() if t.meta.empty else (t.meta.line, t.meta.column))
                     for t in tree[1].iter_subtrees()]
                    for tree in (fast, slow)
                ]
                assert metas[0] == metas[1], text[:80]
    finally:
        inner.__class__, lexer.__class__ = lark_loops.FastParser, lark_loops.FastContextualLexer


def test_compile_imports_neither_regex_nor_interegular():
    """Lark's optional imports stand in ``sys.modules`` unloaded through a compile of each
    dialect (``importlib.util.find_spec`` still answers for them), and load when used
    (``lark_import``)."""
    code = (
        "import sys\n"
        "from tmpl2py.compiler import compile_template\n"
        "compile_template('{{ x | trim }}{% for m in messages %}{{ m.role }}{% endfor %}')\n"
        "compile_template('{{ .X }}{{ range .Messages }}{{ .Role }}{{ end }}', dialect='go')\n"
        "from tmpl2py.compiler.lark_import import _LazyModule\n"
        "lazy = [n for n in ('regex', 'interegular') if n in sys.modules]\n"
        "assert all(type(sys.modules[n]) is _LazyModule for n in lazy), lazy\n"
        "assert not any(m.startswith(('regex.', 'interegular.')) for m in sys.modules)\n"
        "import importlib.util\n"
        "assert all(importlib.util.find_spec(n).name == n for n in lazy)  # as before, unloaded\n"
        "assert all(type(sys.modules[n]) is _LazyModule for n in lazy), lazy\n"
        "for n in lazy:\n"
        "    m = __import__(n)\n"
        "    assert m.__name__ == n and callable(getattr(m, 'compile', None) or getattr(m, 'parse_pattern', None))\n"
        "    assert type(sys.modules[n]) is not _LazyModule\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip().endswith("ok")


@pytest.mark.parametrize("name", sorted(FRONTENDS))
def test_precompiled_patterns_are_re_s(name):
    """Each lexer pattern the tables hold compiled (``SRE``) makes the pattern ``re.compile``
    makes (``re.Pattern`` equality compares the compiled code), and the loaded parser's
    lexers use them."""
    import re

    tables = _tables(name)
    if tables.SRE_KEY != lark_tables.sre_key():
        pytest.skip("patterns compiled by another interpreter build")
    table = pickle.loads(zlib.decompress(tables.SRE))
    shim = lark_tables.PrecompiledRe(table)
    assert table
    for pattern, flags in table:
        assert shim.compile(pattern, flags) == re.compile(pattern, flags), pattern[:80]
    parser = FRONTENDS[name].parser()
    assert all(type(x.re) is lark_tables.PrecompiledRe for x in lark_tables._lexers(parser))


def _lowered(make, text: str, direct: bool):
    """The Jinja lowering of ``text`` by ``frontend.parse_and_transform`` (``direct``) or by
    Lark's way, a tree first and the transformer after; or the error raised."""
    from tmpl2py.compiler.frontend import parse_and_transform

    parser = FRONTENDS["jinja"].parser()
    try:
        if direct:
            return ("ir", parse_and_transform(parser, text, make))
        return ("ir", make().transform(parser.parse(text)))
    except Exception as e:  # noqa: BLE001 - comparing the two ways' errors
        return (type(e).__name__, str(e))


def test_lowering_as_the_parser_reduces_is_lowering_the_tree():
    """``parse_and_transform`` calls each rule's lowering method as the parser reduces the rule
    (no tree built and walked): the same IR, positions included, or the same error, as
    Lark's tree and the transformer after it, on every shared corpus template (when present),
    the project's examples, a few broken inputs and a nesting past ``LOWERING_DEPTH`` (which
    goes Lark's way)."""
    from tmpl2py.compiler.jinja.frontend import normalize_source
    from tmpl2py.compiler.jinja.lowering import Lowering

    texts = _texts("jinja") + [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.jinja"))]
    texts.append("{{ " + "(" * 120 + "x" + ")" * 120 + " }}")
    texts.append("{% for a in b %}{{ a.c(d, *e, f=g)|h(1)[2:3] if i else j }}{% endfor %}{% macro m() %}{% endmacro %}")
    for raw in texts:
        text = normalize_source(raw)
        make = lambda: Lowering(text)  # noqa: E731
        assert _lowered(make, text, True) == _lowered(make, text, False), raw[:80]
