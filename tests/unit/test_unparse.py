"""compiler/unparse.py: the hook into CPython's unparser, its fallback, and the emitter's
loop-filter generator (built as ``ast`` nodes)."""

from __future__ import annotations

import ast

import pytest

from tmpl2py.compiler import unparse as unparse_mod
from tmpl2py.compiler.api import format_module, parse
from tmpl2py.compiler.emit import MODULE_HEADER, emit
from tmpl2py.compiler.passes import pipeline
from tmpl2py_paths import ROOT
from reference import compile_cached, ref_render, ours_render, same_outcome

TRICKY = ["it's", '"', "'\"", "a\nb", "\\", "\u2028", "é", "", "'''", '"""', "\x00", "{x}"]

TEMPLATES = [
    "{% for a, b in xs if a > b %}{{ a }}-{{ loop.index }}{% else %}none{% endfor %}",
    "{% for (a,) in xs if a %}{{ a }}{{ loop.last }}{% endfor %}",
    "{% for x in xs if x.n is defined %}{{ x.n }}{% if loop.last %}.{% endif %}{% endfor %}",
    "{% for x in xs if x.n recursive %}[{{ x.n }}{{ loop(x.kids) }}]{% endfor %}",
    "{{ \"it's\" }}{{ 'say \"hi\"' }}{{ '\\n' }}{% set d = {'k': \"v'\"} %}{{ d.k }}",
]


def _module_text(source: str) -> str:
    module = pipeline.run(parse(source, "jinja"), profile="hf")
    header = MODULE_HEADER.format(
        version="t", source="t", sha256="0", dialect="jinja", profile="hf"
    )
    return emit(module, header, {"TEMPLATE_NAME": "t"})


@pytest.mark.parametrize("value", TRICKY)
def test_hooked_unparse_quotes_strings_as_black_does(value: str) -> None:
    if unparse_mod.UNPARSER is None:
        pytest.skip("this Python's unparser offers no hook: the fallback is tested below")
    import black

    node = ast.Tuple([ast.Constant(value), ast.Constant(1)], ast.Load())
    hooked = unparse_mod.unparse(node)
    normalised = black.format_str(ast.unparse(node), mode=black.Mode(line_length=100))
    assert (
        black.format_str(hooked, mode=black.Mode(string_normalization=False, line_length=100))
        == normalised
    )
    assert ast.literal_eval(hooked) == (value, 1)


def _example_sources() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.jinja"))]


@pytest.mark.parametrize("source", TEMPLATES + _example_sources())
def test_fallback_formats_to_the_same_module(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the hook (plain ``ast.unparse``, black normalising strings) the formatted module
    is the same text as with it."""
    hooked = format_module(_module_text(source), strings_quoted=unparse_mod.QUOTES_STRINGS)
    monkeypatch.setattr(unparse_mod, "UNPARSER", None)
    plain = format_module(_module_text(source), strings_quoted=False)
    assert plain == hooked


def test_loop_filter_is_a_generator_over_one_item_bindings() -> None:
    source = compile_cached(TEMPLATES[0]).python_source
    gens = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.GeneratorExp)]
    assert len(gens) == 1 and len(gens[0].generators) == 2
    bind = gens[0].generators[1]
    assert isinstance(bind.target, ast.Tuple) and len(bind.iter.elts) == 1 and bind.ifs


CONTEXTS = [
    {"xs": [[2, 1], [1, 2], [3, 0]]},
    {"xs": []},
    {"xs": [[1], [0], [5]]},
    {"xs": [{"n": 1, "kids": [{"n": 2, "kids": []}, {"n": 0}]}, {"x": 3}, {"n": 4, "kids": []}]},
    {"xs": [[1, 2, 3]]},  # unpacking fails inside the filter: the same error as jinja2
]


@pytest.mark.parametrize("source", TEMPLATES)
@pytest.mark.parametrize("context", CONTEXTS)
def test_filtered_loops_render_like_jinja2(source: str, context: dict) -> None:
    ours = ours_render(source, context)
    ref = ref_render(source, context)
    assert same_outcome(ours, ref), (ours, ref)
