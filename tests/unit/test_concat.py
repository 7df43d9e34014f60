"""The ``concat`` pass (issue 15): ``~`` with constant operands folded, and a written
concatenation written operand by operand. Every template renders (or fails) as transformers'
environment does; the IR tests check what the pass rewrites and what it leaves alone."""

from __future__ import annotations

import pytest

from reference import ours_render, ref_render, same_outcome
from tmpl2py.compiler import compile_template, ir

TEMPLATES = [
    "{{ 'a' ~ 'b' ~ 'c' }}|{{- '\\n' ~ '<tools>' ~ '\\n' -}}|",
    "{{ 'a' ~ x ~ 'b' ~ 'c' ~ y }}",
    "{{ x ~ y }}{{ x ~ 1 ~ none ~ true ~ 2.5 ~ [1] ~ {'k': 'v'} }}",
    "{{ 'p' ~ missing ~ 's' }}{{ missing ~ missing }}",
    "{{ 'p' ~ missing.attr }}",
    "{{ 'p' ~ x ~ (1 / 0) }}",
    "{% set s = 'a' ~ 'b' ~ x %}{{ s }}{{ s | length }}",
    "{% macro m(v) %}{{ '<' ~ v ~ '>' }}{% endmacro %}{{ m(x) }}{{ m(1) ~ '!' }}",
    "{% for i in range(3) %}{{ i ~ ',' ~ loop.index }}{% endfor %}",
    "{% set h = '<b>' | safe %}{{ h ~ '<i>' ~ x }}{{ (h ~ '<i>') | length }}",
    "{% if 'a' ~ 'b' == 'ab' %}yes{% endif %}{{ ('a' ~ 'b') is string }}",
    "{% set c %}{{ 'x' ~ x }}{% endset %}{{ c }}",
    "{% autoescape true %}{{ '<' ~ x ~ '>' }}{% endautoescape %}",
]


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("x", ["<v>", 3, None, ["l"]])
def test_concatenations_render_as_the_reference(template: str, x) -> None:
    ctx = {"x": x, "y": "Y"}
    assert same_outcome(ours_render(template, ctx), ref_render(template, ctx))


def _ir(source: str) -> list:
    return [n for n in ir.walk(compile_template(source).ir)]


def test_constant_operands_fold_into_the_text() -> None:
    nodes = _ir("A{{ '\\n' ~ '<tools>' ~ '\\n' }}B")
    assert not any(isinstance(n, ir.Helper) and n.name == "jinja.concat" for n in nodes)
    assert [n.text for n in nodes if isinstance(n, ir.Text)] == ["A\n<tools>\nB"]


def test_a_kept_concatenation_joins_its_adjacent_constants() -> None:
    nodes = _ir("{% set s = 'a' ~ 'b' ~ x ~ 'c' ~ 'd' %}{{ s }}")
    (concat,) = [n for n in nodes if isinstance(n, ir.Helper) and n.name == "jinja.concat"]
    assert [a.value for a in concat.args if isinstance(a, ir.Const)] == ["ab", "cd"]


def test_a_written_concatenation_is_written_piece_by_piece() -> None:
    nodes = _ir("{{ 'a' ~ x ~ 'b' }}")
    assert not any(isinstance(n, ir.Helper) and n.name == "jinja.concat" for n in nodes)
    assert [n.text for n in nodes if isinstance(n, ir.Text)] == ["a", "b"]


def test_a_module_with_generation_spans_keeps_written_concatenations_whole() -> None:
    nodes = _ir("{% macro g() %}{% generation %}x{% endgeneration %}{% endmacro %}{{ 'a' ~ g() ~ 'b' ~ 'c' }}")
    (concat,) = [n for n in nodes if isinstance(n, ir.Helper) and n.name == "jinja.concat"]
    assert [a.value for a in concat.args if isinstance(a, ir.Const)] == ["a", "bc"]


def test_a_huge_constant_keeps_the_size_check() -> None:
    big = "x" * 40000
    nodes = _ir("{% set s = '" + big + "' ~ '" + big + "' %}{{ s | length }}")
    assert any(isinstance(n, ir.Helper) and n.name == "jinja.concat" for n in nodes)
