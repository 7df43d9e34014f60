"""Pass tests, read through the IR printer."""

from __future__ import annotations

import textwrap

from tmpl2py.compiler.ir_printer import dump
from tmpl2py.compiler.jinja.frontend import parse
from tmpl2py.compiler.passes import pipeline, scope


def resolved(source: str, optimize_: bool = False) -> str:
    return dump(pipeline.run(parse(source), profile="hf", optimize=optimize_))


def test_scope_reads_context_for_names_first_read() -> None:
    assert resolved("{{ x }}{% set x = 1 %}{{ x }}") == textwrap.dedent("""\
        set x@l_0_x = jinja.resolve(%context, 'x')
        out jinja.to_str(x@l_0_x)
        set x@l_0_x = 1
        out jinja.to_str(x@l_0_x)""")


def test_scope_loop_body_has_its_own_locals() -> None:
    out = resolved("{% for i in l %}{% set x = i %}{% endfor %}{{ x }}")
    assert "set x@l_1_x = i@l_1_i" in out
    assert "set x@l_0_x = jinja.resolve(%context, 'x')" in out  # the loop's set does not leak


def test_scope_macro_sees_later_set_as_undefined_start() -> None:
    out = resolved("{% macro m() %}{{ x }}{% endmacro %}{% set x = 2 %}")
    assert "set x@l_0_x = jinja.undefined('x')" in out
    assert "out jinja.to_str(x@l_0_x)" in out  # read through the closure


def test_known_str_drops_to_str_and_merge_text_joins_literals() -> None:
    out = resolved("a{{ 'b' }}{{ x | title }}d", optimize_=True)
    assert out.splitlines()[1:] == ["text 'ab'", "out jinja_filters.do_title(x@l_0_x)", "text 'd'"]
    # a written ``~`` is written operand by operand (passes/concat.py): its constants join the text
    out = resolved("a{{ 'b' }}{{ 'c' ~ x }}d", optimize_=True)
    assert out.splitlines()[1:] == ["text 'abc'", "out jinja.to_str(x@l_0_x)", "text 'd'"]


def test_passes_are_pure() -> None:
    module = scope.resolve(parse("{% for x in y %}{{ x }}{% endfor %}"))
    before = dump(module)
    for step in pipeline.PASSES:
        step.run(module)
        assert dump(module) == before, step.name


def test_tests_on_folded_literals_compile_without_warnings() -> None:
    """``(1 + 2) is none``: Python folds ``1 + 2`` into a literal and warns about ``is`` with
    a literal (an error under ``-W error``, where it made a CompileError): such a test stays a
    call; the value is jinja2's (found as a warning in the deep property run's log)."""
    import sys
    import warnings
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from reference import ref_render
    from tmpl2py.compiler import compile_template
    from tmpl2py.compiler.api import clear_compile_cache

    for source in ["{{ ('a' + 'b') is none }}", "{{ (1 + 2) is false }}", "{{ (-1) is true }}"]:
        clear_compile_cache()
        with warnings.catch_warnings():
            warnings.simplefilter("error", SyntaxWarning)
            out = compile_template(source).render({})
        assert ("ok", out) == ref_render(source, {})


def test_select_list_fuses_a_selection_and_its_list() -> None:
    out = resolved("{{ m | selectattr('role', 'equalto', n) | list }}", optimize_=True)
    assert "jinja_filters.select_list(m@l_0_m, True, True, 'role', 'equalto', n@l_0_n)" in out
    assert "do_list" not in out and "do_selectattr" not in out
    out = resolved("{{ m | reject('odd', 1) | list }}{{ m | rejectattr(x) | list }}", optimize_=True)
    assert "select_list(m@l_0_m, False, False, 'odd', 1)" in out
    assert "select_list(m@l_0_m, False, True, x@l_0_x)" in out
    # string constants only: their test and getter prepared once, at import
    out = resolved("{{ m | selectattr('role', 'equalto', 'user') | list }}", optimize_=True)
    assert (
        "jinja_filters.select_list(m@l_0_m, once(jinja_filters.prepared_selection("
        "True, True, 'role', 'equalto', 'user')))"
    ) in out
    out = resolved("{{ m | reject('odd') | list }}", optimize_=True)
    assert "select_list(m@l_0_m, once(jinja_filters.prepared_selection(False, False, 'odd')))" in out
    # a keyword, a ``*args`` or an argument of ``list`` keeps the two filters
    _keep_general_path(
        (
            "{{ m | selectattr('role', value=1) | list }}",
            "{{ m | selectattr(*a) | list }}",
            "{{ m | select | list(1) }}",
        ),
        absent="select_list",
        present="do_list",
    )


def _keep_general_path(sources: tuple, absent: str, present: str) -> None:
    """Each of ``sources`` resolves without ``absent`` and with ``present`` (a rule's general path)."""
    for source in sources:
        out = resolved(source, optimize_=True)
        assert absent not in out and present in out, source


def test_const_slices_makes_a_constant_slice_once() -> None:
    out = resolved("{{ m[1:] }}{{ m[:-1] }}{{ m[a:] }}{{ m[::2] }}", optimize_=True)
    assert "jinja.subscript(m@l_0_m, once(builtins.slice(1, None, None)))" in out, out
    assert "once(builtins.slice(None, (-1), None))" in out and "once(builtins.slice(None, None, 2))" in out
    assert "jinja.subscript(m@l_0_m, builtins.slice(a@l_0_a, None, None))" in out  # a variable bound
    module = pipeline.run(parse("{{ m[1:] }}"), profile="hf")
    from tmpl2py.compiler.passes import const_slices

    assert dump(const_slices.run(module)) == dump(module)  # made once: running again changes nothing


def test_loop_last_counts_through_the_templates_own_calls() -> None:
    """A loop reading ``loop.last`` counts (``jinja.loop_last``) when its body calls only
    builtin methods and the template's macros that call no foreign code themselves."""
    pure = (
        "{% macro f(x) %}{{ x | trim }}{{ x.strip }}{% if x %}{{ f('') }}{% endif %}{% endmacro %}"
        "{% for m in l %}{{ f(m) }}{% if not loop.last %},{% endif %}{% endfor %}"
    )
    assert "(%_i1 == %_n1) if (%_n1 is not None)" in resolved(pure, optimize_=True)
    for foreign in (
        "{% macro f(x) %}{{ g(x) }}{% endmacro %}"  # a value of the context, called
        "{% for m in l %}{% if not loop.last %},{% endif %}{{ f(m) }}{% endfor %}",
        "{% macro f(x) %}{{ caller() }}{% endmacro %}"
        "{% for m in l %}{{ loop.last }}{% call f(m) %}c{% endcall %}{% endfor %}",
        "{% for m in l %}{{ loop.last }}{{ h(m) }}{% endfor %}",
        "{% for m in l %}{{ h(m) }}{{ loop.last }}{{ h(m) }}{% endfor %}",
        "{% for m in l %}{% if loop.last %}{{ h(m) }}{% endif %}{% endfor %}",
    ):
        out = resolved(foreign, optimize_=True)
        assert "%_n1" not in out and ".last" in out, foreign
    # foreign code only before the reads (in the iteration): the list's length when read
    for before in (
        "{% macro f(x) %}{{ g(x) }}{% endmacro %}"
        "{% for m in l %}{{ f(m) }}{% if not loop.last %},{% endif %}{% endfor %}",
        "{% macro f(x) %}{{ caller() }}{% endmacro %}"
        "{% for m in l %}{% call f(m) %}c{% endcall %}{{ loop.last }}{% endfor %}",
        "{% for m in l %}{{ h(m) }}{{ loop.last }}{% endfor %}",
        "{% for m in l %}{% if m %}{{ h(m) }}{% else %}{{ loop.last }}{% endif %}{% endfor %}",
    ):
        out = resolved(before, optimize_=True)
        assert "((%_i1 + 1) >= builtins.len(%l_1_loop)) if (%_n1 is not None)" in out, before


def test_loop_neighbours_read_by_the_counter() -> None:
    """``loop.previtem`` / ``loop.nextitem`` are the list's items by the counter behind
    ``loop_last``'s list test, where nothing can change the list: no filter, no foreign call,
    no function defined in the body; otherwise the loop object."""
    out = resolved(
        "{% for m in l %}{{ loop.previtem }}{{ loop.nextitem }}{% endfor %}", optimize_=True
    )
    assert "jinja.subscript(%l_1_loop, (%_i1 - 1)) if (%_i1 > 0)" in out, out
    assert "jinja.subscript(%l_1_loop, (%_i1 + 1)) if (%_i1 < %_n1)" in out, out
    assert "jinja.Undefined('there is no next item')" in out, out
    _keep_general_path(
        (
            "{% for m in l if m %}{{ loop.previtem }}{% endfor %}",
            "{% for m in l %}{{ h(m) }}{{ loop.nextitem }}{% endfor %}",
            "{% for m in l %}{% macro g() %}{{ loop.previtem }}{% endmacro %}{{ g() }}{% endfor %}",
            "{% for m in l %}{{ loop.previtem }}{{ loop.cycle(1, 2) }}{% endfor %}",
        ),
        absent="%_n1",
        present="item",
    )


def test_loop_last_over_items_counts_the_mappings_pairs() -> None:
    """A loop over ``mapping | items`` reading ``loop.last`` gets ``loop_items_last`` (the
    dict's length) where its body calls no foreign code; otherwise ``loop_last``'s loop object."""
    from tmpl2py.compiler import compile_template

    fast = "{% for k, v in x.p | items %}{{ k }}{% if not loop.last %},{% endif %}{% endfor %}"
    for bounded in (True, False):
        src = compile_template(fast, bounded=bounded).python_source
        assert "loop_items_last(" in src and "_mapping1 := " in src, src
    for general in (
        "{% for k, v in x | items %}{{ h(k) }}{{ loop.last }}{% endfor %}",
        "{% for k, v in x | items if v %}{{ loop.last }}{% endfor %}",
        "{% for k, v in x | items %}{{ loop.last }}{{ loop.previtem }}{% endfor %}",
        "{% for k, v in x | dictsort %}{{ loop.last }}{% endfor %}",
    ):
        assert "loop_items_last" not in compile_template(general).python_source, general
