"""The common-lookup pass (compiler/passes/cse.py): a dict key read again reuses the first
read's value only where that read dominates it and nothing in between can change the answer.
Every template here renders like transformers' sandbox, on dicts (the kept values) and on the
inputs that must be looked up again: objects whose attributes change as they are read, dict
subclasses, absent keys, values a called function changes, variables bound again."""

from __future__ import annotations

import copy

import pytest

from reference import compile_cached, ours_render, ref_render, same_outcome


def py_of(source: str) -> str:
    return compile_cached(source).python_source


def same(source: str, context: dict) -> None:
    """Each side renders its own copy (a ``Ticking`` counts the reads it answers)."""
    ours = ref = context
    if "Ticking" in repr(context):  # (objects print their address: only copy what counts)
        ours, ref = copy.deepcopy(context), copy.deepcopy(context)
    assert same_outcome(ours_render(source, ours), ref_render(source, ref)), source


class Ticking:
    """An object whose attribute is a new value at each read (no dict: looked up again)."""

    def __init__(self) -> None:
        self.n = 0

    @property
    def role(self) -> str:
        self.n += 1
        return f"r{self.n}"


class SubDict(dict):
    pass


def test_a_dominated_read_reuses_the_kept_value() -> None:
    source = "{% for m in ms %}{% if m.role == 'a' %}A{{ m.role }}{% elif m.role == 'b' %}B{% endif %}{% endfor %}"
    text = py_of(source)
    assert ":= l_1_m['role']" in text.replace('"', "'") and "_v1 if _dict1" in text
    for ms in ([{"role": "a"}, {"role": "b"}, {}], [Ticking(), SubDict(role="b"), {"role": 1}]):
        same(source, {"ms": ms})


def test_a_value_read_once_is_not_kept_but_the_dict_test_is_shared() -> None:
    text = py_of("{% for m in ms %}{{ m.role }}{{ m.content }}{% endfor %}")
    assert "_v1" not in text and "(_dict1 := " in text and "if _dict1 and" in text
    assert "_v1" not in py_of("{% for m in ms %}{{ m.role }}{% endfor %}")


@pytest.mark.parametrize(
    "source",
    [
        # not dominated: the first read is in a branch
        "{% if x %}{{ m.role }}{% endif %}{{ m.role }}{{ m.role }}",
        "{{ x and m.role }}{{ m.role }}",
        "{{ m.role if x else m.role }}{{ m.role }}",
        "{{ 1 < x < m.role }}{{ m.role }}",
        # the variable is bound again
        "{{ m.role }}{% set m = n %}{{ m.role }}{{ m.role }}",
        "{% for i in [1, 2] %}{{ m.role }}{% set m = n %}{{ m.role }}{% endfor %}{{ m.role }}",
        "{% for m in [m, n] %}{{ m.role }}{% endfor %}{{ m.role }}",
        # a loop body sees what is kept before the loop only when the loop cannot change it
        "{{ m.role }}{% for i in [1, 2] %}{{ m.role }}{% endfor %}{{ m.role }}",
        "{{ m.role }}{% for i in [1, 2] %}{{ m.role }}{% set m = n %}{% endfor %}{{ m.role }}",
        "{% for i in [1, 2] %}{% if loop.first %}{{ m.role }}{% endif %}{{ m.role }}{% endfor %}",
        # bodies Python runs elsewhere
        "{{ m.role }}{% set c %}{{ m.role }}{% endset %}{{ m.role }}{{ c }}",
        "{% set c %}{{ m.role }}{% endset %}{{ m.role }}{{ m.role }}{{ c }}",
        "{{ m.role }}{% macro k() %}{{ m.role }}{{ m.role }}{% endmacro %}{{ k() }}{{ m.role }}",
        "{{ m.role }}{% for t in [m, n] if t.role %}{{ t.role }}{{ m.role }}{% endfor %}",
        "{% for t in m.kids if t %}{{ m.role }}{% endfor %}{{ m.kids }}{{ m.kids }}",
        "{% for t in [m] recursive %}{{ t.role }}{{ t.role }}{% if t.kids %}{{ loop(t.kids) }}{% endif %}{% endfor %}",
        "{% for t in [m] %}{{ t.role }}{% else %}{{ t.role }}{% endfor %}{{ m.role }}{{ m.role }}",
        # truth, then the value; defined tests
        "{% if m.role %}{{ m.role }}{% endif %}{% if m.role %}{{ m.role }}{% endif %}",
        "{{ m.role is defined }}{{ m.role }}{{ m.role is defined }}{{ m.role is undefined }}",
        "{% if m.role is defined and m.role %}{{ m.role }}{% endif %}",
        # keys named like dict methods stay with the general lookup
        "{{ m.items }}{{ m.items }}{{ m['get'] }}{{ m['get'] }}",
    ],
)
def test_reads_render_like_the_sandbox(source: str) -> None:
    n = {"role": "other", "kids": []}
    for m in (
        {"role": "user", "kids": [{"role": "child"}]},
        {},
        {"role": None},
        SubDict(role="sub"),
        Ticking(),
    ):
        for x in (True, False, 5):
            same(source, {"m": m, "n": n, "x": x})


def test_a_called_function_may_change_the_dict_so_nothing_is_kept_across_it() -> None:
    def relabel(d: dict) -> str:
        d["role"] = d.get("role", "") + "!"
        return ""

    source = (
        "{{ m.role }}{{ f(m) }}{{ m.role }}{{ m.role }}"
        "{% macro k() %}{{ f(m) }}{% endmacro %}{{ m.role }}{{ k() }}{{ m.role }}"
        "{% for i in [1, 2] %}{{ m.role }}{{ f(m) }}{% endfor %}{{ m.role }}"
        "{% if m.role and f(m) == '' %}{% endif %}{{ m.role }}"
    )
    assert same_outcome(
        ours_render(source, {"m": {"role": "a"}, "f": relabel}),
        ref_render(source, {"m": {"role": "a"}, "f": relabel}),
    )


def test_templates_that_compare_identities_keep_each_read() -> None:
    source = "{{ m.x is sameas m.x }}{{ m.x }}{{ m.x }}"
    assert "_v1" not in py_of(source) and "_dict1" not in py_of(source)
    same(source, {"m": {}})
    same(source, {"m": {"x": [1]}})


def test_an_undefined_made_of_constants_is_made_once_unless_identity_can_be_compared() -> None:
    source = "{% set a = 1 if x %}{{ a }}|{{ a is defined }}|{{ (a ~ 'b') }}|{{ a|default('d') }}"
    assert "_once1 = cond_undefined(1)" in py_of(source)
    for x in (True, False):
        same(source, {"x": x})
    exact = "{% set a = 1 if x %}{% set b = 1 if x %}{{ a is sameas b }}"
    assert "_once" not in py_of(exact)
    same(exact, {"x": False})


def test_undefined_values_of_absent_keys_are_built_as_the_sandbox_builds_them() -> None:
    source = "{{ m.nope }}|{{ m.nope is defined }}|{{ m.nope|default('d') }}|{{ (m.nope ~ 'x') }}|{{ m.nope.deeper }}"
    for m in ({}, "text", [1], 3, None):
        same(source, {"m": m})
    same("{{ m.nope + 1 }}", {"m": {}})  # the error names the object's type and the key
    same("{{ s[0].type }}", {"s": "abc"})


@pytest.mark.parametrize(
    "source",
    [
        "{% for t in ts %}{{ t.function.name }}({{ t.function.arguments }}){% endfor %}",
        "{{ ms[0].role }}{{ ms[0]['role'] }}{{ (ms|first).role }}{{ ms[0].items }}",
        "{% for t in ts if t.function.name %}{{ t.function.name }}{% endfor %}",
        "{% for t in ts[0].kids if t %}{{ t }}{% endfor %}{% for t in ts[0].kids %}{{ t }}{% endfor %}",
        "{% if ms[0].role %}{{ ms[0].role is defined }}{% endif %}{{ ts[0].function.nope }}",
    ],
)
def test_a_lookup_on_an_expression_evaluates_it_once(source: str) -> None:
    assert "_t1 := " in py_of(source)
    for ts in (
        [{"function": {"name": "f", "arguments": "{}"}, "kids": [1]}, {"function": "s"}],
        [SubDict(function=SubDict(name="g")), {"function": {}}],
        [{"function": None, "kids": []}],
    ):
        for ms in ([{"role": "system"}], [Ticking()], ["text"]):
            same(source, {"ts": ts, "ms": ms})
