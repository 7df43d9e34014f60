"""Frontend unit tests: grammar health, whitespace control and lowering to IR."""

from __future__ import annotations

from lark import Lark

from tmpl2py.compiler import ir
from tmpl2py.compiler.jinja.frontend import normalize_source, parse


def test_grammar_has_no_conflicts() -> None:
    # strict=True fails on any shift/reduce conflict and on colliding terminals.
    Lark.open("../compiler/jinja/grammar.lark", rel_to=__file__.replace("unit/", ""), parser="lalr",
              lexer="contextual", strict=True)


def texts(source: str) -> list[str]:
    """Every literal text of the template, in source order (nested blocks included)."""
    out: list[str] = []

    def walk(body: tuple) -> None:
        for n in body:
            if isinstance(n, ir.Text):
                out.append(n.text)
            elif isinstance(n, ir.If):
                walk(n.body)
                walk(n.orelse)

    walk(parse(source).body)
    return out


def test_trim_blocks_removes_first_newline_after_block() -> None:
    assert texts("{% if x %}\nA{% endif %}\nB") == ["A", "B"]


def test_lstrip_blocks_strips_indentation_before_block_only() -> None:
    assert texts("a\n    {% if x %}b{% endif %}") == ["a\n", "b"]
    assert texts("a\n    {{ x }}") == ["a\n    "]  # never before {{ }}


def test_plus_disables_lstrip_and_minus_strips_everything() -> None:
    assert texts("a\n  {%+ if x %}b{% endif %}") == ["a\n  ", "b"]
    assert texts("a \n\t {%- if x %}b{% endif %}") == ["a", "b"]
    assert texts("{% if x -%} \n\n b{% endif %}") == ["b"]


def test_newlines_are_normalized_and_one_trailing_newline_dropped() -> None:
    assert normalize_source("a\r\nb\rc\n") == "a\nb\nc"


def test_backslash_newline_in_string_literal_is_dropped() -> None:
    out = parse("{{ 'Paris.\\\nYour' }}").body[0]
    assert isinstance(out, ir.Output)
    assert out.expr.args[0] == ir.Const("Paris.Your")  # type: ignore[attr-defined]


def test_attribute_access_lowers_to_sandboxed_helper() -> None:
    out = parse("{{ m.role }}").body[0]
    assert out == ir.Output(ir.Helper("jinja.to_str", (ir.Helper("jinja.getattr_", (ir.Name("m"), ir.Const("role"))),)))


def test_loop_object_only_when_used() -> None:
    plain = parse("{% for x in y %}{{ x }}{% endfor %}").body[0]
    used = parse("{% for x in y %}{{ loop.index }}{% endfor %}").body[0]
    assert isinstance(plain, ir.For) and plain.loop == ""
    assert isinstance(used, ir.For) and used.loop == "loop"


NS_BLOCK_SETS = [
    "{% set ns = namespace() %}{% set ns.s %}x{{ 1 }}{% endset %}{{ ns.s }}",
    "{% set ns = namespace() %}{% set ns.s | upper | trim %} x{{ 1 }} {% endset %}[{{ ns.s }}]",
    "{% set ns = namespace(s=1) %}{% for i in range(3) %}{% set ns.s %}{{ ns.s }}+{{ i }}{% endset %}{% endfor %}{{ ns.s }}",
    "{% set x = 1 %}{% set x.s %}a{% endset %}",  # no namespace check: the int's TypeError
    "{% set d = {} %}{% set d.k %}v{% endset %}{{ d }}",  # an item of anything else
    "{% set ns.s %}a{% endset %}",  # undefined
]


def test_a_block_set_of_a_namespace_attribute_renders_as_jinja2() -> None:
    """``{% set ns.attr %}...{% endset %}``: jinja2 stores the block's text (filtered) with
    ``ns[attr] = value``, without the namespace check of the ``=`` form."""
    import pytest  # noqa: F401 - (the reference helpers below)

    from reference import ours_render, ref_render, same_outcome

    for source in NS_BLOCK_SETS:
        assert same_outcome(ours_render(source, {}), ref_render(source, {})), source


TUPLES_WITHOUT_PARENTHESES = [
    "{{ 1, 2 }}|{{ 1, }}|{{ 'a', x }}|{{ x if y else 2, 3 }}",
    "{% if 1, 2 %}y{% endif %}{% if 0, %}z{% endif %}{% if 0 %}a{% elif 1, %}b{% endif %}",
    "{% if x, %}{{ x, }}{% endif %}",
]


def test_a_print_and_an_if_test_parse_a_tuple_as_jinja2() -> None:
    """jinja2 parses a print's expression and an ``if`` / ``elif`` test with ``parse_tuple``:
    ``{{ a, b }}`` prints the tuple, ``{% if a, %}`` tests a one-item tuple (always true)."""
    from reference import ours_render, ref_render, same_outcome

    for source in TUPLES_WITHOUT_PARENTHESES:
        for ctx in ({}, {"x": 5, "y": False}):
            assert same_outcome(ours_render(source, ctx), ref_render(source, ctx)), source


CONSTANT_SLICES = [
    "{{ 'abcd'[1:3] }}|{{ [1, 2, 3][1:] }}|{{ (1, 2)[1:] }}|{{ [1, 2][-1:] }}",
    "{{ 5[1:2] }}", "{{ none[1:2] }}", "{{ 5.5[:1] }}", "{{ {'a': 1}[1:] }}", "{{ (-5)[1:] }}",
    "{{ -5[1:] }}", "{% set y = 5[1:] %}{{ y }}", "{{ x ~ 5[1:] }}", "{{ 'ab'[x:] }}",
]


def test_constants_sliced_by_constants_render_as_jinja2(recwarn) -> None:
    """jinja2 prints a constant sliced by constants as its compiler evaluates it (through the
    sandbox's getitem: ``{{ 5[1:2] }}`` is empty) and subscripts anywhere else (a TypeError);
    the generated code has no literal subscript for Python to warn about."""
    import warnings

    from reference import ours_render, ref_render, same_outcome

    for source in CONSTANT_SLICES:
        with warnings.catch_warnings():
            warnings.simplefilter("error", SyntaxWarning)
            ours = ours_render(source, {"x": 1})
        assert same_outcome(ours, ref_render(source, {"x": 1})), source
