"""docs/support.md is complete and true: every filter and test of the runtime has a row,
and every case file a row names exists and passes (tests/test_cases.py runs them)."""

from __future__ import annotations

import re

from tmpl2py.runtime.jinja.filters import FILTERS, TESTS
from tmpl2py_paths import ROOT

TABLE = (ROOT / "docs" / "support.md").read_text(encoding="utf-8")
CASES = {p.name for p in (ROOT / "tests" / "corpus" / "cases").glob("*.txt")}


def test_every_filter_and_test_has_a_row() -> None:
    rows = set(re.findall(r"^\| `([^`]+)` \|", TABLE, flags=re.M))
    assert set(FILTERS) <= rows
    assert set(TESTS) <= rows


def test_every_named_case_file_exists() -> None:
    for name in re.findall(r"`([\w.-]+\.txt)`", TABLE):
        assert name in CASES, name
    for pattern in re.findall(r"`(err_\w+)_\*\.txt`", TABLE):
        assert any(c.startswith(pattern + "_") for c in CASES), pattern


#: One template per tag transformers' environment knows (jinja2's, loop controls, generation).
EVERY_TAG = [
    "{% if x %}{% elif y %}{% else %}{% endif %}",
    "{% for a, (b, c) in x %}{% break %}{% continue %}{% else %}{% endfor %}",
    "{% set a, (b, c) = [1, [2, 3]] %}{% set d %}{% endset %}{% set e | upper %}{% endset %}",
    "{% macro m(a, b=1) %}{{ caller() }}{% endmacro %}{% call(v) m(1) %}{% endcall %}",
    "{% filter upper %}{% endfilter %}{% raw %}{{ }}{% endraw %}",
    "{% with a = 1, b = 2 %}{% endwith %}{% autoescape true %}{% endautoescape %}",
    "{% block b scoped %}{% endblock b %}{% if x %}{% block r required %}{% endblock %}{% endif %}",
    "{% if x %}{% include 'a' ignore missing without context %}{% import 'a' as m with context %}"
    "{% from 'a' import b as c, d %}{% endif %}",
    "{% if x %}{% extends 'a' %}{% endif %}{% generation %}{% endgeneration %}",
]


def test_no_refused_row_that_jinja2_accepts() -> None:
    """Every tag jinja2 compiles in transformers' environment compiles here too, and the
    table has no ``unsupported`` row left."""
    import pytest

    pytest.importorskip("transformers")
    from transformers.utils.chat_template_utils import _compile_jinja_template

    from tmpl2py.compiler import compile_template

    assert "`unsupported`" not in TABLE
    for source in EVERY_TAG:
        expected = _compile_jinja_template(source).render(x=[])  # the reference accepts it
        assert compile_template(source).render({"x": []}) == expected, source
