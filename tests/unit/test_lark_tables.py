"""The prebuilt LALR tables (``compiler/lark_tables.py``): current for the grammars, the same
parser as one built from the grammar, and the grammars free of terminal collisions.

``TMPL2PY_UPDATE_TABLES=1`` rewrites the tables instead of failing when they are stale.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lark.exceptions import UnexpectedInput

from tmpl2py.compiler import lark_tables
from tmpl2py.compiler.errors import CompileError
from tmpl2py.compiler.gotmpl import frontend as go_frontend
from tmpl2py.compiler.jinja import frontend as jinja_frontend

from tmpl2py_paths import ROOT, SHARED
FRONTENDS = {"jinja": jinja_frontend, "gotmpl": go_frontend}


@pytest.mark.parametrize("name", sorted(FRONTENDS))
def test_tables_are_current(name):
    """The shipped tables are keyed by the grammar text, Lark's version and the options
    (their bytes are not reproducible: Lark numbers its LALR states in set order)."""
    frontend = FRONTENDS[name]
    text = lark_tables.grammar_path(name).read_text(encoding="utf-8")
    key = lark_tables.tables_key(text, tuple(frontend.post_lexer().always_accept))
    path = lark_tables.grammar_path(name).with_name("grammar_tables.py")
    if os.environ.get("TMPL2PY_UPDATE_TABLES") == "1":
        lark_tables.write_tables(name, frontend.post_lexer())
    shipped = path.read_text(encoding="utf-8") if path.exists() else ""
    assert f"KEY = {key!r}\n" in shipped, (
        f"{path} is stale: TMPL2PY_UPDATE_TABLES=1 pytest tests/unit/test_lark_tables.py"
    )


@pytest.mark.parametrize("name", sorted(FRONTENDS))
def test_grammar_has_no_terminal_collisions(name):
    """Lark's interegular check, strict: a collision between two terminals raises."""
    pytest.importorskip("interegular", reason="the collision check needs interegular")
    lark_tables.build_parser(name, FRONTENDS[name].post_lexer(), check_collisions=True)


def _templates(name: str) -> list[Path]:
    folder = SHARED / "corpus" / ("jinja" if name == "jinja" else "gotmpl") / "templates"
    return sorted(folder.iterdir()) if folder.is_dir() else []


@pytest.mark.parametrize("name", sorted(FRONTENDS))
def test_loaded_parser_parses_like_a_built_one(name):
    """Every shared corpus template (and a few broken inputs): the same tree or error."""
    frontend = FRONTENDS[name]
    loaded = frontend.parser()
    built = lark_tables.build_parser(name, frontend.post_lexer(), check_collisions=False)
    texts = [p.read_text(encoding="utf-8") for p in _templates(name)]
    texts += ["{% if x %}", "{{ a b }}", "{{ .X }}{{end}}", "{{", "text {#"]
    if len(texts) < 10:
        pytest.skip("../shared/corpus is absent: only the broken inputs would be compared")
    for text in texts:
        outcomes = []
        for p in (loaded, built):
            try:
                outcomes.append(p.parse(text))
            except Exception as e:  # noqa: BLE001 - comparing the two parsers' errors
                outcomes.append(_error(e))
        assert outcomes[0] == outcomes[1], text[:80]


@pytest.mark.parametrize("name", sorted(FRONTENDS))
def test_loaded_parser_positions_are_lark_s(name):
    """The loaded parser's trees start where Lark's ``propagate_positions`` says they do
    (``lark_tables.with_span_starts``): line, column and container of every subtree."""
    frontend = FRONTENDS[name]
    loaded = frontend.parser()
    built = lark_tables.build_parser(name, frontend.post_lexer(), check_collisions=False)
    texts = [p.read_text(encoding="utf-8") for p in _templates(name)]
    if len(texts) < 10:
        pytest.skip("../shared/corpus is absent")
    compared = 0
    for text in texts:
        try:
            trees = [p.parse(text) for p in (loaded, built)]
        except (UnexpectedInput, CompileError, go_frontend._GoError):  # broken: see above
            continue
        starts = [
            [
                (t.data, t.meta.empty)
                + (() if t.meta.empty else (t.meta.line, t.meta.column, t.meta.container_line,
                                            t.meta.container_column))
                for t in tree.iter_subtrees()
            ]
            for tree in trees
        ]
        assert starts[0] == starts[1], text[:80]
        compared += 1
    assert compared >= 10


def _error(e: Exception) -> tuple:
    """An error's type, place and expected terminals (a set: its printed order varies)."""
    expected = getattr(e, "expected", None) or getattr(e, "allowed", None) or ()
    where = (getattr(e, "line", None), getattr(e, "column", None), repr(getattr(e, "token", None)))
    return (type(e).__name__, where, sorted(expected))


def test_cold_process_does_not_build_a_parser():
    """Importing both frontends and parsing with each takes no LALR analysis or lexer check."""
    code = (
        "import time; t = time.perf_counter()\n"
        "from lark import lexer, parsers\n"
        "import lark.parsers.lalr_analysis as a\n"
        "a.LALR_Analyzer.compute_lalr = lambda self: (_ for _ in ()).throw(AssertionError('built'))\n"
        "from tmpl2py.compiler.jinja.frontend import parser as jp\n"
        "from tmpl2py.compiler.gotmpl.frontend import parser as gp\n"
        "jp().parse('{{ x }}'); gp().parse('{{ .X }}')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_first_characters_are_sound():
    """``FIRST`` (the terminals each ASCII character can start): no terminal matches any text
    that starts with a character it is not listed under (the lexer then matches one terminal
    alone where it is the only one listed: a terminal left out would be a wrong token)."""
    import re

    from tmpl2py.compiler.jinja.grammar_tables import FIRST

    parser = lark_tables.build_parser("jinja", FRONTENDS["jinja"].post_lexer(), check_collisions=False)
    flags = parser.parser.lexer.lexer.root_lexer.scanner.g_regex_flags
    tails = ["", "a", " ", "0", "{", "}", "%", "-", "'x'", '"x"', "{{", "%}", "}}", "#}", "\n", "x" * 3]
    for terminal in parser.terminals:
        pattern = re.compile(terminal.pattern.to_regexp(), flags)
        for c in map(chr, range(128)):
            if terminal.name in FIRST[c]:
                continue
            for tail in tails:
                match = pattern.match(c + tail)
                assert match is None or match.end() == 0, (terminal.name, repr(c + tail))
