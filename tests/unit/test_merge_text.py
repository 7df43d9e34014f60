"""Literal text joined to a printed ``+`` chain's constants (``passes/merge_text.py``): one
append instead of three, the same output and errors as transformers' environment, and no
join where a ``Markup`` operand would escape the text differently."""

from __future__ import annotations

import pytest

from reference import ours_render, ref_render, same_outcome
from tmpl2py.compiler.ir_printer import dump
from tmpl2py.compiler.jinja.frontend import parse
from tmpl2py.compiler.passes import pipeline


def optimized(source: str) -> str:
    return dump(pipeline.run(parse(source), profile="hf"))


def test_text_joins_the_chains_first_and_last_constants() -> None:
    out = optimized("{% for m in l %}\n  {{ '[' + m + ']' }}\n{% endfor %}")
    assert "out (('  [' + m@l_1_m) + ']\\n')" in out, out  # trim_blocks ate the first newline
    assert "text" not in out.split("for ", 1)[1], out  # no append of its own left in the loop


@pytest.mark.parametrize(
    "source",
    [
        "a<{{ '[' + m + ']' }}",  # text HTML escapes: a Markup operand would escape it
        "{{ '[' + m + ']' }}>b",
        "a{{ m + ']' }}",  # the chain starts with no constant
        "{{ '[' + m }}b",  # ends with none
        "a{{ m }}b",  # no chain
    ],
)
def test_text_that_stays_its_own(source: str) -> None:
    out = optimized(source)
    assert "text" in out, out


CONTEXTS = [
    {"l": ["x", "<y>"], "s": "<b>&"},
    {"l": ["x", 1], "s": "s"},  # str + int raises (after the text was written: the same error)
    {"l": [], "s": None},
    {"l": ["a"]},  # s undefined: str + undefined raises
]

TEMPLATES = [
    "{% for m in l %}\n    {{ '<|im_start|>' + m + '<|im_end|>\n' }}\n{% endfor %}",
    "\n{{ 'x' + (s | safe) + 'y' }}\n",  # a Markup operand: the text has nothing it escapes
    "<p>{{ 'x<' + (s | safe) + '>y' }}</p>",  # text with characters it escapes: not joined
    "\n{{ 'x' + (s | e) }}\n\n{{ (s | e) + 'z' }}\n",
    "{% for m in l %}  {{ '[' + m + ']' }}  {{ '(' + m + ')' }}\n{% endfor %}",
    "{% macro f(a) %}\n{{ '<' + a + '>' }}\n{% endmacro %}{% for m in l %}{{ f(m) }}|{% endfor %}",
    "{% for m in l %}{% if loop.first %}\n{{ 'a' + m }}{% else %}{{ m + 'b' }}\n{% endif %}{% endfor %}",
    "{% set t %}\n{{ 'a' + s + 'b' }}\n{% endset %}[{{ t }}]",
    "{% generation %}\n{{ 'a' + s + 'b' }}\n{% endgeneration %}",
]


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("ctx", CONTEXTS, ids=["escapes", "int", "empty", "undefined"])
def test_joined_text_renders_as_the_reference(template: str, ctx: dict) -> None:
    assert same_outcome(ours_render(template, ctx), ref_render(template, ctx))
