"""``CompiledTemplate.render``'s fast entry: a call without ``budget`` or ``limits`` on a
template with the default limits goes straight to the generated function (a Jinja render is
the generated function itself, whose ``render_entry`` / ``render_failed`` the compiled
template binds; a Go one goes through ``compiled._fast_render``); everything else takes the
method's general way. Both give the reference's output and the same positioned errors."""

from __future__ import annotations

import pytest

from tests.reference import ours_render, ref_render, same_outcome
from tmpl2py import compile_template
from tmpl2py.compiler.compiled import CompiledTemplate
from tmpl2py.runtime.limits import DEFAULT_LIMITS, Limits, RenderLimitExceeded

SOURCE = "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] | trim }}\n{% endfor %}"
CONTEXT = {"bos_token": "<s>", "messages": [{"role": "user", "content": " hi "}]}


def test_fast_and_general_entries_agree_with_the_reference() -> None:
    t = compile_template(SOURCE)
    ref = ref_render(SOURCE, CONTEXT)
    assert same_outcome(ours_render(SOURCE, CONTEXT), ref)
    assert t.render(CONTEXT) == ref[1]  # the fast entry (an instance attribute)
    assert CompiledTemplate.render(t, CONTEXT) == ref[1]  # the method
    assert t.render(CONTEXT, budget=10.0) == ref[1]  # a budget: the general way
    assert t.render(CONTEXT, limits=DEFAULT_LIMITS) == ref[1]
    assert t.render(CONTEXT, limits=None) == ref[1]
    assert t.render() == t.render(None) == ref_render(SOURCE, {})[1]  # no context: {}


def test_a_template_s_limits_replaced_after_compiling_take_the_general_way() -> None:
    t = compile_template("{% for i in range(n) %}x{% endfor %}")
    assert t.render({"n": 3}) == "xxx"
    t.limits = Limits(output=1000)  # the fast entry reads the template's limits per call
    with pytest.raises(RenderLimitExceeded):
        t.render({"n": 100_000})
    t.limits = DEFAULT_LIMITS
    assert t.render({"n": 100_000}) == "x" * 100_000


def test_errors_from_the_fast_entry_are_positioned_like_the_method_s() -> None:
    source = "a\n  {{ raise_exception('bad role') }}"
    ref = ref_render(source, {})
    t = compile_template(source)
    with pytest.raises(Exception) as fast:
        t.render({})
    with pytest.raises(Exception) as general:
        t.render({}, budget=10.0)
    assert same_outcome(("err", f"{type(fast.value).__name__}: {fast.value}"), ref)
    assert type(fast.value) is type(general.value) and str(fast.value) == str(general.value)
    assert fast.value.template_line == general.value.template_line == 2  # type: ignore[attr-defined]


def test_go_data_may_be_nil_on_the_fast_entry() -> None:
    t = compile_template("{{ . }}", dialect="go", profile="plain")
    assert t.render(None) == CompiledTemplate.render(t, None) == "<no value>"


def test_depth_errors_from_the_fast_entry_are_positioned() -> None:
    from tmpl2py.runtime.limits import RenderDepthExceeded

    t = compile_template("{% macro f() %}{{ f() }}{% endmacro %}\n{{ f() }}")
    with pytest.raises(RenderDepthExceeded) as fast:
        t.render({})
    with pytest.raises(RenderDepthExceeded) as general:
        t.render({}, budget=10.0)
    assert fast.value.template_line == general.value.template_line  # type: ignore[attr-defined]


def test_a_jinja_render_is_the_generated_function_itself() -> None:
    t = compile_template(SOURCE)
    assert t.render is t._render is t.namespace["render"]
    t.limits = Limits(output=1000)
    assert t.render is not t._render and t.render(CONTEXT) == ref_render(SOURCE, CONTEXT)[1]
    t.limits = DEFAULT_LIMITS
    assert t.render is t._render


def test_a_generated_module_on_its_own_takes_the_runtime_s_entry() -> None:
    """Executed without a compiled template (as ``tmpl2py compile`` writes it), the module's
    render binds ``runtime/limits``' own ``render_entry`` and ``render_failed``: no context
    is ``{}``, a budget or limits run it under them, a RecursionError is the depth error."""
    from tmpl2py.runtime.limits import RenderDepthExceeded, live

    def module(source: str) -> dict:
        namespace: dict = {}
        exec(compile(compile_template(source).python_source, "<module>", "exec"), namespace)
        return namespace

    render = module(SOURCE)["render"]
    ref = ref_render(SOURCE, CONTEXT)[1]
    assert render(CONTEXT) == render(CONTEXT, budget=10.0) == render(CONTEXT, limits=None) == ref
    assert render() == render(None) == ref_render(SOURCE, {})[1]
    loop = module("{% for i in range(n) %}x{% endfor %}")["render"]
    with pytest.raises(RenderLimitExceeded):
        loop({"n": 100_000}, limits=Limits(output=1000))
    assert live() is None and loop({"n": 100_000}) == "x" * 100_000
    deep = module("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}")["render"]
    with pytest.raises(RenderDepthExceeded):
        deep({})
    assert live() is None
