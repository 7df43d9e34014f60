"""``context_gets.run_nested`` (issue 15): a name no scope assigns is read from the render context
with ``dict.get`` wherever it is read (loop bodies, macros, call blocks), and a loop body's read
is made once before the loop; templates that can tell undefined values apart keep jinja2's
fresh undefined per read.

Each case renders through ``compile_template`` and through transformers' environment and must
come out (or fail) the same; the IR tests check where the reads end up.
"""

from __future__ import annotations

import pytest

from reference import ours_render, ref_render, same_outcome
from tmpl2py.compiler import compile_template, ir

TEMPLATES = [
    "{% for m in ms %}{{ eos }}{% for k in m %}{{ bos }}{{ eos }}{{ k }}{% endfor %}{% endfor %}",
    "{% for m in ms %}{{ absent }}{{ absent is defined }}{{ absent | default('d') }}{% endfor %}",
    "{% for m in ms %}{{ bos }}{% set bos = m %}{{ bos }}{% endfor %}{{ bos }}",
    "{% for m in ms %}{% if loop.first %}{% set eos = 'x' %}{% endif %}{{ eos }}{% endfor %}",
    "{% macro f(a) %}{{ bos }}{% for i in a %}{{ eos }}{{ i }}{% endfor %}{% endmacro %}{{ f(ms) }}",
    "{% macro f() %}{{ caller() }}{% endmacro %}{% call f() %}{% for m in ms %}{{ eos }}{% endfor %}{% endcall %}",
    "{% for m in ms recursive %}{{ eos }}{% if m is iterable %}{{ loop(m) }}{% endif %}{% endfor %}",
    "{% for m in ms if eos %}{{ bos }}{% else %}{{ eos }}{% endfor %}",
    "{% for m in ms %}{% for i in range(2) %}{{ namespace(a=i).a }}{% endfor %}{% endfor %}",
    "{% for m in ms %}{{ x }}{% endfor %}{% set x = 3 %}{% for m in ms %}{{ x }}{% endfor %}",
    "{% for m in [] %}{{ absent.attr }}{% endfor %}{% for m in ms %}{{ absent.attr }}{% endfor %}",
]
CONTEXTS = [
    {"ms": [[1], [2, 3]], "eos": "E", "bos": "B"},
    {"ms": [], "eos": "E"},
    {"ms": [1, [2]], "range": "r", "namespace": dict},
]


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("ctx", CONTEXTS, ids=["full", "empty-loops", "shadowed-globals"])
def test_context_reads_in_nested_scopes(template: str, ctx: dict) -> None:
    assert same_outcome(ours_render(template, ctx), ref_render(template, ctx))


def _helpers(module: ir.Module, name: str) -> int:
    return sum(1 for n in ir.walk(module) if isinstance(n, ir.Helper) and n.name == name)


def test_nested_reads_are_dict_gets() -> None:
    module = compile_template("{% macro f() %}{{ eos }}{% endmacro %}{% for m in ms %}{{ bos }}{% endfor %}").ir
    assert _helpers(module, "jinja.resolve") == 0
    assert {n.name for n in ir.walk(module) if isinstance(n, ir.ContextGet)} == {"eos", "bos", "ms"}


def test_a_loop_body_reads_the_context_once_before_the_loop() -> None:
    module = compile_template(
        "{% for m in ms %}{% for k in m %}{{ bos }}{% endfor %}{{ eos }}{% endfor %}"
    ).ir
    loops = [n for n in ir.walk(module) if isinstance(n, ir.For)]
    assert loops and not any(isinstance(n, ir.ContextGet) for loop in loops for n in ir.walk(loop.body))
    # a name the body also assigns keeps its read at the body's start
    module = compile_template("{% for m in ms %}{{ bos }}{% set bos = m %}{% endfor %}").ir
    (loop,) = [n for n in ir.walk(module) if isinstance(n, ir.For)]
    assert any(isinstance(n, ir.ContextGet) for n in ir.walk(loop.body))


def test_templates_that_compare_identities_keep_fresh_undefined_values() -> None:
    source = "{% for m in ms %}{{ a is sameas b }}{% endfor %}"
    module = compile_template(source).ir
    assert _helpers(module, "jinja.resolve_missing") == 3  # ms, a, b: jinja2's own lookups
    assert not any(isinstance(n, ir.ContextGet) for n in ir.walk(module))
    assert same_outcome(ours_render(source, {"ms": [1]}), ref_render(source, {"ms": [1]}))
