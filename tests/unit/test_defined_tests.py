"""``is defined`` / ``is undefined`` as exact type tests (issue 15): the runtime's ``Undefined``
is final, so ``isinstance(x, Undefined)`` is ``type(x) is Undefined`` (one compare, where
``isinstance`` of a namespace calls its Python ``__getattribute__`` for ``__class__``).

Reference-checked for values of every kind, and the IR and generated code checked for the
form.
"""

from __future__ import annotations

import pytest

from reference import ours_render, ref_render, same_outcome
from tmpl2py.compiler import compile_template
from tmpl2py.runtime.jinja import Undefined

TEMPLATE = (
    "{{ x is defined }}{{ x is undefined }}{{ x is not defined }}{{ not x is defined }}"
    "{{ x.a is defined }}{{ x['a'] is undefined }}{{ (x.a if x.a is defined else 'd') }}"
    "{% if x.a is not defined %}n{% endif %}{% if x is defined and x %}t{% endif %}"
)
VALUES = {
    "absent": None,
    "dict": {"a": 1},
    "dict-without": {"b": 1},
    "str": "s",
    "none": "none",
    "list": [1],
}


@pytest.mark.parametrize("kind", list(VALUES))
def test_defined_tests_on_every_kind_of_value(kind: str) -> None:
    ctx = {} if kind == "absent" else {"x": None if kind == "none" else VALUES[kind]}
    assert same_outcome(ours_render(TEMPLATE, ctx), ref_render(TEMPLATE, ctx))


def test_defined_tests_on_template_values() -> None:
    for source in (
        "{% set x = namespace(a=1) %}" + TEMPLATE,
        "{% set x = namespace() %}" + TEMPLATE,
        "{% for x in [1] %}{{ loop is defined }}{{ loop.nothing is defined }}{% endfor %}",
        "{% set x = undefined_name %}" + TEMPLATE,
    ):
        assert same_outcome(ours_render(source, {}), ref_render(source, {})), source


def test_undefined_is_final() -> None:
    with pytest.raises(TypeError):
        type("Sub", (Undefined,), {})


def test_generated_code_tests_the_exact_type() -> None:
    source = compile_template(TEMPLATE).python_source
    assert "isinstance" not in source
    assert "type(l_0_x) is not Undefined" in source and "not type(" not in source


MAPPING_TEMPLATE = (
    "{{ x is mapping }}{{ x is not mapping }}{{ not x is mapping }}"
    "{% if x is mapping and x %}t{% endif %}{% for v in [x, 1] %}{{ v is mapping }}{% endfor %}"
    "{% set ns = namespace(a=1) %}{{ ns is mapping }}{{ (x | items | list) is mapping }}"
)


@pytest.mark.parametrize(
    "value", [None, {}, {"a": 1}, "s", [1], 3, "ABSENT"], ids=lambda v: type(v).__name__ + repr(v)[:6]
)
def test_is_mapping_of_a_variable_tests_for_a_dict_first(value: object) -> None:
    """``x is mapping`` of a variable is ``type(x) is dict or test_mapping(x)``: a dict is a
    Mapping, and every other value takes the ABC's test (reference-checked)."""
    ctx = {} if value == "ABSENT" else {"x": value}
    assert same_outcome(ours_render(MAPPING_TEMPLATE, ctx), ref_render(MAPPING_TEMPLATE, ctx))
    code = compile_template("{{ x is mapping }}{{ x.y is mapping }}").python_source
    assert "type(l_0_x) is dict or test_mapping(l_0_x)" in code
    assert "test_mapping(\n" in code or "test_mapping(l_0_x[" in code  # a lookup: the call alone
