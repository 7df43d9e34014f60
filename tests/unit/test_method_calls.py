"""The ``method_calls`` pass (issue 15): ``x.name(args)`` calls the builtin method directly when
``x`` is exactly a ``str`` or a ``dict``, and takes the sandbox's general call otherwise.

Every case renders through ``compile_template`` and through transformers' environment and must
come out (or fail) the same, for receivers of every kind (strings, ``Markup``, dicts with and
without a key named like the method, lists, numbers, None, undefined, namespaces, loop
objects); the IR tests check what the pass rewrites and what it leaves alone.
"""

from __future__ import annotations

import pytest

from reference import ours_render, ref_render, same_outcome
from tmpl2py.compiler import compile_template
from tmpl2py.compiler.passes import method_calls

RECEIVERS = {
    "str": " Hello, World. hello ",
    "empty": "",
    "dict": {"a": 1, "b": None},
    "dict_with_method_keys": {"strip": "k", "get": "g", "split": 3, "items": [1]},
    "list": ["a", "b"],
    "int": 5,
    "none": None,
    "bool": True,
}

METHOD_TEMPLATES = [
    "{{ x.strip() }}|{{ x.split(',') }}|{{ x.split(',', 1) }}|{{ x.rstrip('. ') }}",
    "{{ x.startswith(' H') }}{{ x.endswith(p) }}{{ x.capitalize() }}{{ x.lower() }}",
    "{{ x.replace('l', p) }}{{ x.replace('l', 'L', 1) }}{{ x.find('o') }}{{ x.count('l') }}",
    "{{ x.split(sep=',', maxsplit=1) }}{{ x.rsplit(none, 1) }}{{ x.title() }}{{ x.zfill(3) }}",
    "{{ x.get('a') }}|{{ x.get('z', 3) }}|{{ x.get(p) }}|{{ x.items() | list }}",
    "{{ x.keys() | list }}{{ x.values() | list }}{{ x.copy() }}",
    "{% if x.get('b') %}yes{% else %}no{% endif %}{% for k, v in x.items() %}{{ k }}{% endfor %}",
    "{{ x.strip(undefined_name) }}",
    "{{ x.split(1) }}",
    "{{ x.get() }}",
    "{{ x.strip(_loop_vars=1) }}",
    "{{ x.format(1) }}{{ x.format_map({}) }}",
    "{{ x.pop('a') }}",
    "{{ x.nonexistent() }}",
]


@pytest.mark.parametrize("template", METHOD_TEMPLATES)
@pytest.mark.parametrize("kind", list(RECEIVERS))
def test_method_calls_on_every_kind_of_receiver(template: str, kind: str) -> None:
    ctx = {"x": RECEIVERS[kind], "p": ", ", "none": None}
    assert same_outcome(ours_render(template, ctx), ref_render(template, ctx))


OTHER_RECEIVERS = [
    "{% set x = ' a '|safe %}{{ x.strip() }}{{ x.split('a') }}{{ x.replace('a', '<') }}",
    "{{ x.strip() }}",  # x undefined
    "{% set x = namespace(strip=1, get=2) %}{{ x.get() }}",
    "{% set x = namespace() %}{{ x.strip() }}",
    "{% for a in [1] %}{{ loop.get('x') }}{% endfor %}",
    "{% set x = 'abc' %}{% set x = x.upper() %}{{ x.lower() }}{{ x.split('B') }}",
    "{% macro m(s) %}{{ s.strip() }}{% endmacro %}{{ m(' a ') }}{{ m(3) }}",
]


@pytest.mark.parametrize("template", OTHER_RECEIVERS)
def test_method_calls_on_template_values(template: str) -> None:
    assert same_outcome(ours_render(template, {}), ref_render(template, {}))


def _lowered(source: str) -> int:
    """How many direct method calls the pass made in ``source``'s final IR."""
    return _calls_made(compile_template(source).ir)


def _calls_made(module) -> int:
    from tmpl2py.compiler import ir

    return sum(
        1
        for n in ir.walk(module)
        if isinstance(n, ir.CallValue) and isinstance(n.func, ir.LoopAttr)
    )


def test_the_pass_lowers_calls_on_variables_with_plain_arguments() -> None:
    assert _lowered("{{ s.strip() }}{{ s.split(',', 1) }}{{ d.get(k) }}{{ s.split(sep=k) }}") == 4


def test_the_pass_leaves_other_calls_alone() -> None:
    assert _lowered("{{ s.format(1) }}{{ s.format_map(d) }}") == 0  # the sandbox wraps those
    assert _lowered("{{ d.pop('a') }}{{ d.update(e) }}") == 0  # mutating: refused
    assert _lowered("{{ s.strip(t.x) }}{{ s.split(*a) }}{{ s.split(**k) }}") == 0
    assert _lowered("{{ s.strip(_block_vars=1) }}{{ f() }}{{ s.nonexistent() }}") == 0
    # the receiver is then an expression: this pass leaves it (``typed_calls`` binds it once
    # and lowers it: tests/unit/test_typed_calls.py)
    from tmpl2py.compiler import build
    from tmpl2py.compiler.passes import scope

    module = scope.resolve(build.parse("{{ m.content.strip() }}"), False)
    assert _calls_made(method_calls.run(module)) == 0


def test_method_names_belong_to_one_type() -> None:
    table = method_calls.method_types()
    assert table["strip"] == "str" and table["get"] == "dict"
    assert "format" not in table and "format_map" not in table and "pop" not in table


@pytest.mark.parametrize("method", ["center", "ljust", "rjust", "zfill"])
def test_growing_methods_keep_their_size_check(method: str) -> None:
    """A str method that grows its input is not called directly: the general call checks
    the result's size first (a value limit error), and small arguments render as jinja2's."""
    from tmpl2py.runtime.limits import RenderLimitExceeded

    big = compile_template("{% set s = 'x' %}{{ s." + method + "(500000000) | length }}")
    with pytest.raises(RenderLimitExceeded) as info:
        big.render({})
    assert info.value.limit == "value"
    small = "{% set s = 'x' %}{{ s." + method + "(5) }}"
    assert same_outcome(ours_render(small, {}), ref_render(small, {}))
    assert method not in method_calls.method_types()
