"""The ``fstrings`` pass (issue 15): a ``+`` chain of three operands or more is one f-string
when its computed operands are exactly ``str``, the chain as written otherwise; adjacent
string constants of a chain are joined.

Every case renders through ``compile_template`` and through transformers' environment and
must come out (or fail) the same, for operands of every kind (strings, ``Markup``, numbers,
None, lists, dicts, undefined values); the IR tests check what the pass rewrites, that each
operand is evaluated once on the fast path and in the chain's order, and what it leaves alone.
"""

from __future__ import annotations

import re

import pytest

from reference import ours_render, ref_render, same_outcome
from tmpl2py.compiler import compile_template, ir
from tmpl2py.compiler.passes import fstrings, pipeline

VALUES = {
    "str": "Hello <b> & 'you'",
    "empty": "",
    "unicode": "ǅungla ßtraße 😀",
    "braces": "{x} {{y}} }{",
    "markup": "MARKUP",  # replaced by a Markup value in the template (``|safe``)
    "int": 5,
    "float": 2.5,
    "none": None,
    "bool": False,
    "list": ["a", 1],
    "dict": {"a": "b"},
    "absent": "ABSENT",  # the key is left out: an undefined value
}

TEMPLATES = [
    "{{ '<|' + m.a + '|>\\n' + m.b + '<|end|>' }}",
    "{{ m.a + '\\n' + m.b }}",
    "{{ m.a + ':' + ' ' + m.b + '.' + '!' }}",
    "{% set s = '[' + m['a'] + '](' + m['b'] + ')' %}{{ s }}|{{ s | length }}",
    "{{ (m.a | trim) + ' / ' + (m.b | upper) + ' / ' + m.a }}",
    "{{ m.a + m.b + m.a + m.b }}",
    "{{ m.a + ('x' + m.b + 'y') + 'z' }}",
    "{% for x in [m.a, m.b] %}{{ loop.index ~ ': ' + x + ' (' + m.a + ')' }}{% endfor %}",
    "{% macro f(p, q) %}{{ '<' + p + '|' + q + '>' }}{% endmacro %}{{ f(m.a, m.b) }}",
    "{{ m.a + '<' + '>' + '&' }}",  # constants joined after a value that may escape them
]


def _context(kind: str) -> dict:
    value = VALUES[kind]
    m: dict = {"a": "A:", "b": value}
    if kind == "absent":
        del m["b"]
    return {"m": m}


def _markup(template: str, kind: str) -> str:
    return template.replace("m.b", "(m.b | safe)").replace("m['b']", "(m['b'] | safe)") if kind == "markup" else template


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("kind", list(VALUES))
def test_chains_on_every_kind_of_operand(template: str, kind: str) -> None:
    source = _markup(template, kind)
    ctx = _context(kind)
    assert same_outcome(ours_render(source, ctx), ref_render(source, ctx))
    ctx["m"]["a"], ctx["m"]["b"] = ctx["m"].get("b", 7), "B"  # the first operand of each kind
    assert same_outcome(ours_render(source, ctx), ref_render(source, ctx))


ORDER_TEMPLATES = [
    # the first operand fails: a later operand that raises otherwise must not be reached
    "{{ n + 'a' + m.b + 'c' + (m.b | int) }}",
    "{{ 'x' + n + 'y' + undefined_name.attr }}",
    # a later operand that is no read (a call, ``loop.cycle``, a macro): the chain is kept
    "{% macro g() %}G{% endmacro %}{{ m.b + 'a' + g() + 'b' + m.b }}",
    "{% for i in [1, 2] %}{{ m.b + '-' + loop.cycle('x', 'y') + '-' + m.b }}{% endfor %}",
    "{% set ns = namespace(s='') %}{% for i in 'abc' %}{% set ns.s = ns.s + i + '.' + i %}{% endfor %}{{ ns.s }}",
]


@pytest.mark.parametrize("template", ORDER_TEMPLATES)
@pytest.mark.parametrize("n", [1, "one", None])
def test_evaluation_order_and_errors(template: str, n: object) -> None:
    ctx = {"n": n, "m": {"b": "7"}}
    assert same_outcome(ours_render(template, ctx), ref_render(template, ctx))


def _final(source: str) -> ir.Module:
    return pipeline.before_emit(compile_template(source).ir)


def _formats(source: str) -> list:
    return [n for n in ir.walk(_final(source)) if isinstance(n, ir.Format)]


def test_a_chain_becomes_one_guarded_format() -> None:
    (fmt,) = _formats("{% for m in ms %}{{ '<|' + m.role + '|>\\n' + m.content + '<|end|>' }}{% endfor %}")
    texts = [p.value if isinstance(p, ir.Const) else None for p in fmt.parts]
    assert texts == ["<|", None, "|>\n", None, "<|end|>"]
    conds = [n for n in ir.walk(_final("{{ a + 'x' + b }}")) if isinstance(n, ir.CondExpr) and isinstance(n.body, ir.Format)]
    (cond,) = conds
    binds = [n for n in ir.walk(cond.test) if isinstance(n, ir.Bind)]
    assert [b.temp for b in binds] == [p.ident for p in cond.body.parts if isinstance(p, ir.Local)]
    # the general branch keeps the first operand's value and evaluates the rest as written
    assert isinstance(fstrings._operands(cond.orelse)[0], ir.Local)
    assert isinstance(fstrings._operands(cond.orelse)[2], ir.Name)


def test_what_stays_a_chain() -> None:
    assert _formats("{{ a + 'x' }}{{ a + b }}{{ 1 + a + 'x' }}") == []  # two operands; a number
    assert _formats("{% macro g() %}{% endmacro %}{{ a + 'x' + g() }}") == []  # a call after the first
    assert _formats("{{ a + 'x' + c.d() }}") == []
    assert _formats("{% for x in xs if x + 'a' + x %}{% endfor %}") == []  # a generator's filter
    assert len(_formats("{% macro g() %}{% endmacro %}{{ g() + 'x' + a }}")) == 1  # a call first


def test_adjacent_constants_are_joined() -> None:
    final = _final("{{ a + 'x' + 'y' }}{{ a + 'p' + 'q' + b }}")
    consts = [n.value for n in ir.walk(final) if isinstance(n, ir.Const) and type(n.value) is str]
    assert "xy" in consts and "pq" in consts
    assert "x" not in consts and "p" not in consts


_F_STRING = re.compile(r"(?<![\w\"'])f[\"']")


def test_unoptimised_and_unbounded_modules() -> None:
    source = "{{ a + '-' + b + '-' + a }}"
    assert _F_STRING.search(compile_template(source).python_source)
    assert not _F_STRING.search(compile_template(source, optimize=False).python_source)
    for ctx in ({"a": "1", "b": "2"}, {"a": 1, "b": "2"}, {"b": "2"}):
        assert same_outcome(ours_render(source, ctx), ref_render(source, ctx))
        assert same_outcome(ours_render(source, ctx, optimize=False), ref_render(source, ctx))


SELF_FED = (
    "{% set ns = namespace(s='') %}{% for m in messages %}"
    "{% set ns.s = ns.s + '<' + m + '>' %}{% endfor %}{{ ns.s | length }}"
)


def test_a_chain_through_the_size_guards_is_checked_once() -> None:
    """``ns.s + '<' + m + '>'`` grows a value fed by itself: the size guards check its ``+``
    of a string; written as one f-string, the text is checked once as it is made."""
    from tmpl2py.runtime.limits import Limits, RenderLimitExceeded

    code = compile_template(SELF_FED).python_source
    assert _F_STRING.search(code) and "concatenated(" in code
    for count in (0, 1, 5):
        ctx = {"messages": ["x" * 10] * count}
        assert same_outcome(ours_render(SELF_FED, ctx), ref_render(SELF_FED, ctx))
    capped = compile_template(SELF_FED, limits=Limits(output=50_000))  # a string's cap
    assert capped.render({"messages": ["x" * 1000] * 10}) == "10020"
    with pytest.raises(RenderLimitExceeded) as info:
        capped.render({"messages": ["x" * 1000] * 100})
    assert info.value.limit == "output"


def test_a_long_chain_through_the_size_guards_keeps_each_check() -> None:
    source = (
        "{% set ns = namespace(s='') %}{% for m in messages %}"
        "{% set ns.s = ns.s + '<' + m + '|' + m + '|' + m + '|' + m + '>' %}{% endfor %}{{ ns.s }}"
    )
    final = _final(source)
    helpers = [n for n in ir.walk(final) if isinstance(n, ir.Helper)]
    # five computed operands: a prefix of four may be one checked f-string, the rest stay
    # checked links, each text made at most CHECKED_OPERANDS times the cap before its check
    assert any(n.name == "limits.concat" for n in helpers)
    for n in helpers:
        if n.name == "limits.concatenated":
            parts = n.args[0].parts
            assert sum(not isinstance(p, ir.Const) for p in parts) <= fstrings.CHECKED_OPERANDS
    ctx = {"messages": ["a", "b"]}
    assert same_outcome(ours_render(source, ctx), ref_render(source, ctx))


def test_a_printed_chain_in_a_macro_is_a_plain_fstring() -> None:
    """``{{ role + sep + content + sep }}`` in a macro: printed through ``to_str`` (with no
    string constant in it, the chain may not be a ``str``), its ``+`` are the size guards'; its f-string, of ``str``
    operands only, is what a chain of strings an ``Output`` writes is (left plain by the
    guards), so it is neither checked nor converted again: only the chain as written is."""
    source = (
        "{% macro turn(m) %}{{ m.role + sep + m.content + sep }}{% endmacro %}"
        "{% for m in messages %}{{ turn(m) }}{% endfor %}"
    )
    final = _final(source)
    outputs = [n for n in ir.walk(final) if isinstance(n, ir.Output) and isinstance(n.expr, ir.CondExpr)]
    assert outputs, "the printed chain is an f-string behind its type test"
    for out in outputs:
        assert isinstance(out.expr.body, ir.Format)  # no size check, no conversion
        assert isinstance(out.expr.orelse, ir.Helper) and out.expr.orelse.name == "jinja.to_str"
    for content in ("hi", "", 3, None, ["x"], "MARKUP"):
        message = {"role": "user", "content": content}
        ctx = {"messages": [message, {"role": "assistant", "content": "ok"}], "sep": "\n"}
        src = source.replace("m.content", "(m.content | safe)") if content == "MARKUP" else source
        assert same_outcome(ours_render(src, ctx), ref_render(src, ctx))
    # a macro's text is still capped where it is joined
    from tmpl2py.runtime.limits import Limits, RenderLimitExceeded

    capped = compile_template(source, limits=Limits(output=50_000))
    with pytest.raises(RenderLimitExceeded) as info:
        capped.render({"messages": [{"role": "user", "content": "x" * 60_000}], "sep": ""})
    assert info.value.limit == "output"
