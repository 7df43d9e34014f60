"""The ``list_items`` pass (issue 15): an item of a list by an int constant or a loop's
counter is Python's subscript behind a type and range test; every other value, index or
range takes the sandbox's lookup. Reference-checked over lists of every length, tuples,
strings, dicts with int keys, None, numbers and undefined values."""

from __future__ import annotations

import pytest

from reference import ours_render, ref_render, same_outcome
from tmpl2py.compiler import compile_template, ir


LIST_ITEMS = [
    "{{ xs[0] }}|{{ xs[1] }}|{{ xs[2] }}|{{ xs[-1] }}|{{ xs[-2] }}|{{ xs[-3] }}|{{ xs[0] is defined }}",
    "{% for x in xs %}[{{ xs[loop.index0 - 1] }}|{{ xs[loop.index0 + 1] }}|{{ xs[loop.index] }}"
    "|{{ xs[loop.index0 - 3] }}]{% endfor %}",
    "{% if xs[0]['role'] == 'system' %}{{ xs[0]['content'] }}{% endif %}{{ xs[-1].role }}",
    # an item of an item (a pair of ``items()``, a tuple the template built)
    "{% for x in xs %}{{ x[0] }}={{ x[1] }}|{{ x[-1] }};{% endfor %}",
    "{% set t = (xs, 'tail') %}{{ t[0] is string }}|{{ t[1] }}|{{ t[2] is defined }}|{{ t[-2] is sameas xs }}",
]
ITEM_VALUES = {
    "empty": [],
    "one": ["a"],
    "two": ["a", "b"],
    "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
    "tuple": ("a", "b"),
    "tuple_one": ("a",),
    "tuple_empty": (),
    "pairs": [("role", "system"), ("type", 3)],
    "str": "abc",
    "dict_int_keys": {0: "zero", -1: "minus one", 1: "one"},
    "none": None,
    "int": 3,
}


@pytest.mark.parametrize("template", LIST_ITEMS)
@pytest.mark.parametrize("kind", list(ITEM_VALUES) + ["absent"])
def test_items_of_lists_by_ints(template: str, kind: str) -> None:
    ctx = {} if kind == "absent" else {"xs": ITEM_VALUES[kind]}
    assert same_outcome(ours_render(template, ctx), ref_render(template, ctx))


def test_an_item_by_an_int_is_a_subscript() -> None:
    source = "{{ xs[0] }}{{ xs[-2] }}{% for x in xs %}{{ xs[loop.index0 - 1] }}{% endfor %}{{ xs[n] }}{{ xs[0.5] }}"
    from tmpl2py.compiler.passes import pipeline

    final = pipeline.before_emit(compile_template(source).ir)
    fast = [n for n in ir.walk(final) if isinstance(n, ir.Helper) and n.name == "jinja.subscript"]
    assert len(fast) == 3  # not ``xs[n]`` (any value), nor a float key
    code = " ".join(compile_template(source).python_source.split())  # (as black wraps it)
    assert "l_0_xs[0] if (type(l_0_xs) is list or type(l_0_xs) is tuple) and len(l_0_xs) > 0" in code
    assert "len(l_0_xs) >= 2" in code
