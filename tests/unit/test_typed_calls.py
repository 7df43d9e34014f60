"""The ``typed_calls`` pass (issue 15): string filters of an exact ``str`` as its methods (the
``replace`` filter where its size check cannot refuse), method calls on a computed receiver
bound once, a replace that cannot grow its input, and the environment's globals (a namespace of
keywords made directly), called directly; every other value takes the general path.

Every case renders through ``compile_template`` and through transformers' environment and must
come out (or fail) the same, for values of every kind (strings, ``Markup``, dicts with and
without keys named like the methods, lists, numbers, None, undefined, namespaces); the IR
tests check what the pass rewrites, that each receiver is evaluated once, and what it leaves
alone.
"""

from __future__ import annotations

import pytest

from reference import ours_render, ref_render, same_outcome
from tmpl2py.compiler import compile_template, ir

VALUES = {
    "str": " Hello, World. hello ",
    "empty": "",
    "unicode": " ǅungla ßtraße ",
    "dict": {"a": 1, "b": None},
    "dict_with_method_keys": {"strip": "k", "get": "g", "split": 3, "items": [1], "upper": 2},
    "list": ["a", " b "],
    "int": 5,
    "none": None,
    "bool": True,
}

# ``m.v`` / ``m['v']`` is a computed receiver (a lookup), ``m.w`` an absent key (undefined)
TEMPLATES = [
    "{{ m.v | trim }}|{{ m['v'] | upper }}|{{ m.v | lower }}|{{ m.v | capitalize }}|{{ m.v | string }}",
    "{{ m.w | trim }}|{{ m.w | upper }}|{{ m.w | string }}|{{ (m.v | trim) ~ '!' }}",
    "{{ m.v.strip() }}|{{ m.v.split(',') }}|{{ m.v.split(',', 1) }}|{{ m['v'].rstrip('. ') }}",
    "{{ m.v.startswith(' H') }}{{ m.v.endswith(p) }}{{ (m.v | trim).split(p) }}",
    "{{ m.v.get('a') }}|{{ m.v.get('z', 3) }}|{{ m.v.items() | list }}|{{ m.v.keys() | list }}",
    "{% if m.v.get('b') %}yes{% else %}no{% endif %}{% for k in m.v.keys() %}{{ k }}{% endfor %}",
    "{{ m.v.replace('l', 'L') }}|{{ m.v.replace('ll', '') }}|{{ m.v.replace('l', 'L', 1) }}",
    "{{ m.v.replace('l', 'LL') }}|{{ m.v.replace('', '-') }}",  # may grow: the general call
    "{{ m.w.strip() }}",
    "{{ m.v | replace('l', 'L') }}|{{ m.v | replace('l', 'LLL') }}|{{ m.v | replace('', '-') }}|{{ m.w | replace('a', 'b') }}",
    "{{ m.v.format(1) }}",
    "{{ m.v.pop('a') }}",
    "{{ m.v.strip(_loop_vars=1) }}",
]


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("kind", list(VALUES))
def test_typed_calls_on_every_kind_of_value(template: str, kind: str) -> None:
    ctx = {"m": {"v": VALUES[kind]}, "p": ", "}
    assert same_outcome(ours_render(template, ctx), ref_render(template, ctx))


TEMPLATE_VALUES = [
    "{% set m = {'v': ' <a> '|safe} %}{{ m.v | trim }}{{ m.v.strip() }}{{ m.v.replace('a', 'b') }}",
    "{% set m = {'v': namespace(strip=1, upper='u')} %}{{ m.v | upper }}{{ m.v.strip }}",
    "{% set m = {'v': namespace()} %}{{ m.v.strip() }}",
    "{% macro f(s) %}{{ s.x | trim }}{{ s.x.split('a') }}{% endmacro %}{{ f({'x': ' bab '}) }}{{ f(3) }}",
    "{% for x in [' a ', 3, none] if (x | string).strip() %}{{ (x | string).strip() }}{% endfor %}",
    "{% for x in [{'c': ' a '}, {'c': 'b'}] %}{{ loop.index }}{{ x.c | trim | upper }}{% endfor %}",
]


@pytest.mark.parametrize("template", TEMPLATE_VALUES)
def test_typed_calls_on_template_values(template: str) -> None:
    assert same_outcome(ours_render(template, {}), ref_render(template, {}))


def _nodes(source: str, cls: type) -> list:
    return [n for n in ir.walk(compile_template(source).ir) if isinstance(n, cls)]


def test_a_computed_receiver_is_bound_once_and_called_directly() -> None:
    source = "{{ m.v.split(',') }}{{ m['v'] | trim }}{{ (m.v | trim).startswith('a') }}"
    binds = _nodes(source, ir.Bind)
    assert len(binds) == 4  # one per computed value; the trim inside startswith's receiver too
    assert len({b.temp for b in binds}) == 4
    direct = [n for n in _nodes(source, ir.CallValue) if isinstance(n.func, ir.LoopAttr)]
    assert sorted(n.func.attr for n in direct) == ["split", "startswith", "strip", "strip"]


def test_a_variable_needs_no_binding() -> None:
    assert _nodes("{{ s | trim }}{{ s | upper }}", ir.Bind) == []
    assert len([n for n in _nodes("{{ s | trim }}", ir.CallValue) if isinstance(n.func, ir.LoopAttr)]) == 1


def test_the_pass_leaves_other_calls_alone() -> None:
    for source in (
        "{{ m.v.format(1) }}{{ m.v.pop('a') }}{{ m.v.nonexistent() }}",
        "{{ m.v.strip(t.x) }}{{ m.v.split(*a) }}{{ m.v.strip(_block_vars=1) }}",
        "{{ m.v.replace('a', 'bb') }}{{ m.v.replace('', 'b') }}{{ m.v.replace(a, 'b') }}",
        "{{ m.v | trim('x') }}{{ m.v | center(9) }}",
        "{% for x in xs if x.c | trim %}{% endfor %}",  # a generator's filter: no ``:=`` there
    ):
        assert _nodes(source, ir.Bind) == [], source


def test_a_replace_that_may_grow_keeps_its_size_check() -> None:
    from tmpl2py.runtime.limits import Limits, RenderLimitExceeded

    text = {"m": {"v": "a" * 20_000}}
    growing = compile_template("{{ m.v.replace('a', 'aa') | length }}", limits=Limits(output=30_000))
    with pytest.raises(RenderLimitExceeded) as info:
        growing.render(text)
    assert info.value.limit == "output"
    shrinking = compile_template("{{ m.v.replace('aa', 'a') | length }}", limits=Limits(output=30_000))
    assert shrinking.render(text) == "10000"
    # the filter: the builtin method only where its size check could not refuse
    filtered = compile_template("{{ m.v | replace('a', 'aa') | length }}", limits=Limits(output=30_000))
    with pytest.raises(RenderLimitExceeded) as info:
        filtered.render(text)
    assert info.value.limit == "output"
    assert filtered.render({"m": {"v": "a" * 4_000}}) == "8000"
    assert _nodes("{{ s | replace('a', 'aa') }}{{ s | replace('aa', '') }}", ir.CondExpr)


def test_a_namespace_of_keywords_is_made_directly() -> None:
    def made(source: str) -> int:
        return len([n for n in _nodes(source, ir.Helper) if n.name == "jinja.new_namespace"])

    assert made("{% set ns = namespace(a=1, b=x) %}{% set n2 = namespace() %}{{ ns.a }}{{ n2 }}") == 2
    assert made("{{ namespace(_a=1) }}{{ namespace({'a': 1}) }}{{ namespace(x, b=1) }}") == 0


GLOBAL_TEMPLATES = [
    "{% set ns = namespace(a=1, b=x | length) %}{% set ns.a = ns.a + 1 %}{{ ns.a }}{{ ns.b }}",
    "{% for i in range(x | length) %}{{ i }}{% endfor %}{{ range(2, 9, 3) | list }}",
    "{{ strftime_now('%Y-%m-%d') }}",
    "{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}",
    "{% set j = joiner(', ') %}{% for i in x %}{{ j() }}{{ i }}{% endfor %}",
    "{{ range(10 ** 12) | length }}",
    "{{ namespace(_a=1) }}",
    "{% set ns = namespace() %}{{ ns }}{% set ns = namespace(self=1, y=none) %}{{ ns.self }}{{ ns.y }}{{ ns }}",
    "{{ namespace({'a': 1}, b=2).a }}{{ namespace(x=1, _y=2) }}",
]


@pytest.mark.parametrize("template", GLOBAL_TEMPLATES)
@pytest.mark.parametrize(
    "names",
    [{}, {"namespace": dict, "range": "no", "strftime_now": 3, "cycler": None, "joiner": ["x"]}],
    ids=["the-environment's", "the-context's"],
)
def test_calls_of_the_environment_globals(template: str, names: dict) -> None:
    """The environment's own globals are called directly; the render context may bind each
    name to another value, which takes the general call (and fails as jinja2 fails)."""
    ctx = {"x": [1, 2, 3], **names}
    assert same_outcome(ours_render(template, ctx), ref_render(template, ctx))


def test_a_global_call_with_a_large_argument_stays_general() -> None:
    small = "{{ range(x | length) }}"
    large = "{{ range(" + " + ".join(f"a.b{i}" for i in range(12)) + ") }}"

    def direct(source: str) -> int:
        return len([n for n in _nodes(source, ir.CallValue) if isinstance(n.func, ir.Name)])

    assert direct(small) == 1
    assert direct(large) == 0


STRING_KEY_TEMPLATES = [
    "{% for p in c %}{% if p['type'] == 'text' %}T{{ p['text'] }}{% elif p['type'] == 'image' %}I{% else %}-{% endif %}{% endfor %}",
    "{% for p in c %}{{ p.type != 'text' }}{{ p['type'] == 3 }}{{ p.type == none }}{{ p.type != none }}{% endfor %}",
    "{% for p in c %}{{ p['upper'] == 'x' }}{{ p.split == 'x' }}{{ p['_x'] == 'x' }}{% endfor %}",
    "{% for p in c %}{% if p.type == 'text' %}{{ p.type }}{% endif %}{{ p.type }}{% endfor %}",
]
PARTS = {
    "string": " ab",
    "parts": [{"type": "text", "text": "a"}, {"type": "image"}, {"text": "b"}],
    "mixed": ["x", {"type": "text", "text": "y"}, 3, None, ["type"]],
}


@pytest.mark.parametrize("template", STRING_KEY_TEMPLATES)
@pytest.mark.parametrize("kind", list(PARTS))
def test_a_string_key_compared_with_a_constant(template: str, kind: str) -> None:
    ctx = {"c": PARTS[kind]}
    assert same_outcome(ours_render(template, ctx), ref_render(template, ctx))


def test_a_string_key_compared_answers_none_for_a_string() -> None:
    def shortcuts(source: str) -> int:
        return len(
            [
                n
                for n in _nodes(source, ir.CondExpr)
                if n.body == ir.Const(None) and isinstance(n.test, ir.Compare)
            ]
        )

    assert shortcuts("{% for p in c %}{{ p['type'] == 'text' }}{{ p.type != 'x' }}{% endfor %}") == 2
    # a key a str has, a None constant, a computed constant, an order comparison: unchanged
    assert shortcuts("{% for p in c %}{{ p.split == 'x' }}{{ p.type == none }}{{ p.t == x }}{{ p.t < 'a' }}{% endfor %}") == 0
