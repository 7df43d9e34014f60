"""The ``str_locals`` pass: a read of a variable that every assignment reaching it gave a
string is known to be a string (its print needs no ``str()``), through branches, loops (a
later iteration may assign something else), captured blocks, macros that read the variable
later, recursive loops, loop controls and ``with`` blocks.

Every case renders through ``compile_template`` and through transformers' environment with
values of several kinds (a wrong mark prints an int without ``str()``, which fails the join);
the IR tests check which reads are marked.
"""

from __future__ import annotations

import pytest

from reference import ours_render, ref_render, same_outcome
from tmpl2py.compiler import compile_template, ir

CONTEXTS = [
    {"x": " text ", "y": True, "ms": ["a", 5, None], "tree": [{"v": 1, "c": [{"v": "z", "c": []}]}]},
    {"x": 5, "y": True, "ms": [1, 2], "tree": [{"v": "s", "c": []}]},
    {"x": None, "y": False, "ms": [], "tree": []},
    {"x": ["l"], "y": False, "ms": [0, "b"], "tree": [{"v": 2.5, "c": [{"v": 3, "c": []}]}]},
]

TEMPLATES = [
    # joins: known on both branches, or not
    "{% set s = 'a' + x|trim %}{% if y %}{% set s = s + 'b' %}{% endif %}{{ s }}|{{ s|trim }}|{{ s ~ 1 }}",
    "{% set s = 'a' %}{% if y %}{% set s = x %}{% endif %}{{ s }}",
    "{% set s = x %}{% if y %}{% set s = 'a' %}{% else %}{% set s = 'b' ~ x %}{% endif %}{{ s }}",
    # loops: an iteration may assign what the next one reads
    "{% set ns = namespace(s='') %}{% for m in ms %}{{ ns.s }}|{% set ns.s = m %}{% endfor %}{{ ns.s }}",
    "{% set s = 'a' %}{% for m in ms %}{{ s }}{% set s = m %}{{ s }}{% endfor %}{{ s }}",
    "{% for m in ms %}{% set s = 'a' %}{% if m %}{% set s = m %}{% endif %}{{ s }}{% endfor %}",
    "{% for m in ms %}{% set s = 'k' %}{% if m == 5 %}{% break %}{% endif %}{% set s = m %}{{ s }}"
    "{% endfor %}",
    "{% for m in ms %}{% if m == 1 %}{% continue %}{% endif %}{% set t = m ~ '' %}{{ t }}{% endfor %}",
    "{% set s = 'a' %}{% for m in ms if m != s %}{{ s }}{{ m }}{% else %}{{ s }}{% endfor %}",
    "{% set s = 'a' %}{% for m in ms %}{% for n in ms %}{% set s = n %}{% endfor %}{{ s }}{% endfor %}",
    # a captured block runs before its statement and binds its own names
    "{% set s = 'a' %}{% set t %}{{ s }}{% set s = x %}{{ s }}{% endset %}{{ s }}{{ t }}{{ t ~ s }}",
    # a macro reads the variable when it is called, not where it is defined
    "{% set s = 'a' %}{% macro f() %}{{ s }}{% endmacro %}{% set s = x %}{{ f() }}",
    "{% macro f(p) %}{% set q = 'v' ~ p %}{{ q }}{% set q = p %}{{ q }}{% endmacro %}{{ f(x) }}",
    "{% macro c() %}{{ caller() }}{% endmacro %}{% set s = 'a' %}{% call c() %}{{ s }}{% endcall %}",
    # a recursive loop's body is a function, called again for the children
    "{% set s = 'q' %}{% for it in tree recursive %}{{ s }}{% set s = it.v %}{{ s }}{{ loop(it.c) }}"
    "{% endfor %}{{ s }}",
    "{% with s = 'a' %}{{ s }}{% set s = x %}{{ s }}{% endwith %}",
]


@pytest.mark.parametrize("source", TEMPLATES)
@pytest.mark.parametrize("context", range(len(CONTEXTS)))
def test_renders_like_transformers(source: str, context: int) -> None:
    ctx = CONTEXTS[context]
    ours, ref = ours_render(source, ctx), ref_render(source, ctx)
    assert same_outcome(ours, ref), (source, ctx, ours, ref)


def _marked(source: str) -> list[str]:
    module = compile_template(source).ir
    return [n.ident for n in ir.walk(module) if isinstance(n, ir.Name) and n.kind == "str"]


def test_a_string_kept_through_both_branches_is_known_and_printed_directly() -> None:
    source = TEMPLATES[0]
    assert _marked(source).count("l_0_s") >= 3  # the if's own read, and the three after it
    assert "str(l_0_s)" not in compile_template(source).python_source


def test_a_branch_that_assigns_anything_else_is_not_known() -> None:
    assert _marked(TEMPLATES[1]) == []
    assert "str(l_0_s)" in compile_template(TEMPLATES[1]).python_source


def test_a_loop_body_knows_only_what_no_iteration_changes() -> None:
    # the read before the inner loop's assignment, in the second outer iteration, sees n
    assert "l_1_s" not in _marked(TEMPLATES[9])
    # a name each iteration sets to a string before reading it is known
    assert "l_1_t" in _marked(TEMPLATES[7])


def test_functions_start_knowing_nothing() -> None:
    marks = _marked(TEMPLATES[11])
    assert marks.count("l_0_s") == 0  # read in the macro, which runs after the reassignment
    assert "l_1_q" in _marked(TEMPLATES[12])  # the macro's own string, before it changes


def test_a_value_carried_to_the_next_iteration_is_rechecked() -> None:
    """Jinja loop bodies start their own names afresh each iteration, so a local carried from
    one iteration to the next comes only from other passes' IR: the analysis must still see
    that the second iteration reads what the first assigned (a fixpoint over the body)."""
    from tmpl2py.compiler.passes import str_locals

    def name(ident: str) -> ir.Name:
        return ir.Name(name=ident, ident=ident)

    loop = ir.For(
        target=name("m"),
        iter=name("ms"),
        body=(
            ir.Output(ir.Helper("jinja.to_str", (name("s"),))),
            ir.Assign(target=name("t"), value=ir.Const("x")),
            ir.Assign(target=name("s"), value=name("t")),  # still a string: t was one
            ir.Output(ir.Helper("jinja.to_str", (name("u"),))),
            ir.Assign(target=name("u"), value=name("m")),  # not one from the 2nd iteration
        ),
    )
    start = (
        ir.Assign(target=name("s"), value=ir.Const("a")),
        ir.Assign(target=name("u"), value=ir.Const("b")),
    )
    module = ir.Module(body=start + (loop,), dialect="jinja", profile="hf")
    marked = [
        n.ident for n in ir.walk(str_locals.run(module)) if isinstance(n, ir.Name) and n.kind == "str"
    ]
    assert "u" not in marked
    assert marked.count("s") == 1 and marked.count("t") == 1
