"""A namespace's attributes read inline (``emit.Emitter.namespace_attribute``) where a
variable is only ever bound to ``namespace(...)``, and the stores ``{% set ns.x = ... %}``
written inline (``emit.Emitter.namespace_store``): every edge the sandbox's lookup and
jinja2's store keep (an absent attribute, a stored ``str.format`` the sandbox wraps,
``_private`` names, Markup, a render context binding ``namespace`` to something else, a
namespace passed to a macro, a non-namespace assigned to) checked against transformers'
rendering, bounded and unbounded."""

from __future__ import annotations

import pytest

from reference import ours_render, ref_render, same_outcome
from tmpl2py.compiler import compile_template

NS = "{% set ns = namespace(a=1, s='x', l=[1, 2]) %}"
#: one name bound to a namespace in two macros, one kept in locals (``ns_scalars``), read in
#: loops (a loop's scope copies the macro's variable)
MACROS = (
    "{% macro f(x) %}{% set ns = namespace(a='') %}{% for i in x %}{% set ns.a = ns.a ~ i %}"
    "{% endfor %}{{ ns.a }}{% endmacro %}{% macro g() %}{% set ns = namespace(b=0) %}"
    "{% for i in [1, 2] %}{% set ns.b = ns.b + i %}{% endfor %}{{ ns.b }}{% endmacro %}"
    "{{ f(['p', 'q']) }}{{ g() }}{{ f(text) }}"
)
CASES = [
    NS + "{{ ns.a }}|{{ ns.s }}|{{ ns.l }}|{{ ns.l|length }}",
    NS + "{% if ns.a %}yes{% endif %}{% if ns.missing %}no{% endif %}",
    NS + "[{{ ns.missing }}]{{ ns.missing is defined }}{{ ns.a is defined }}",
    NS + "{{ ns.missing.deeper }}",
    NS + "{{ ns.missing|default('d') }}",
    NS + "{% for m in [1, 2, 3] %}{% set ns.a = ns.a + m %}{% set ns.s = ns.s ~ m %}{% endfor %}"
    "{{ ns.a }} {{ ns.s }}",
    # a stored str.format: the sandbox wraps it on every read (and checks its fields)
    NS + "{% set ns.f = 'a{}b'.format %}{{ ns.f('x') }}",
    NS + "{% set ns.f = '{0.__class__}'.format %}{{ ns.f('x') }}",
    NS + "{% set ns.f = 'a{}'.format %}{{ ns.f is sameas ns.f }}",
    NS + "{% set ns.m = 'ab'.upper %}{{ ns.m() }}",
    # names with a leading underscore: refused when stored, the general path when read
    NS + "{{ ns._x }}",
    NS + "{{ ns.__class__ }}",
    NS + "{% set ns._x = 1 %}",
    # Markup kept as it is
    NS + "{% set ns.h = '<b>'|safe %}{{ ns.h }}{{ ns.h|escape }}",
    "{% autoescape true %}" + NS + "{% set ns.h = '<b>'|safe %}{{ ns.h }}{{ ns.s ~ '<' }}"
    "{% endautoescape %}",
    # a namespace read in a macro it is passed to, or that reads it as a global
    NS + "{% macro f(n) %}{{ n.a }}{{ ns.s }}{% set ns.a = 5 %}{% endmacro %}{{ f(ns) }}{{ ns.a }}",
    MACROS,
    # read before the binding (a loop's second pass), and bound again by namespace() only
    "{% for i in [1, 2] %}{{ ns.a }}{% set ns = namespace(a=i) %}{% endfor %}",
    "{% for i in [1, 2] %}{% if ns is defined %}{{ ns.a }}{% endif %}"
    "{% set ns = namespace(a=i) %}{% endfor %}",
    # a loop over an attribute, filtered (the iterable of a generator: no ``:=`` in it)
    NS + "{% set ns.l = text %}{% for x in ns.l if x != 'y' and ns.a %}{{ x }}{% else %}E{% endfor %}",
    NS + "{% set ns.l = text %}{% for x in ns.l|select if ns.a %}{{ loop.index }}{{ x }}{% endfor %}",
    # stores: a non-namespace, an undefined, tuples (nesting checked), a namespace in a list
    "{% set x = 1 %}{% set x.a = 2 %}",
    "{% set u.a = 2 %}",
    NS + "{% set ns.t = (1, (2, 3)) %}{{ ns.t }}",
    NS + "{% set ns.d = {'k': ns.l} %}{{ ns.d.k }}",
    NS + "{% set l = [ns] %}{% set l[0].a = 3 %}{{ l[0].a }}",
    NS + "{% set ns.a %}captured{% endset %}{{ ns.a }}",
]
CONTEXTS = [
    {"text": "xyz"},
    {"namespace": dict},  # the context binds ``namespace``: ns is a dict then
    {"ns": {"a": "context"}},
]


@pytest.mark.parametrize("bounded", [True, False])
@pytest.mark.parametrize("context", CONTEXTS, ids=["plain", "dict-namespace", "ns-given"])
@pytest.mark.parametrize("source", CASES)
def test_namespace_reads_and_stores(source: str, context: dict, bounded: bool) -> None:
    ours = ours_render(source, dict(context), bounded=bounded)
    assert same_outcome(ours, ref_render(source, dict(context))), ours


def test_the_reads_are_inline() -> None:
    """The fast paths are what the code runs (else the cases above test the general path)."""
    # (a value of the context stored: the namespace is not kept in locals, ``ns_scalars``)
    template = NS + "{% set ns.s = text %}{{ ns.s }}"
    source = compile_template(template, bounded=False).python_source
    assert 'object_attribute(l_0_ns, "_Namespace__attrs").get("s", MISSING)' in source
    source = compile_template(MACROS, bounded=False).python_source
    assert 'object_attribute(l_1_ns, "_Namespace__attrs").get("a", MISSING)' in source
