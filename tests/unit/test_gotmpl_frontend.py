"""The Go frontend: grammar, trim markers, Go's parse-time checks, lowering to IR, and
Ollama's parse-tree walks (Vars, the legacy-mode cut)."""

from __future__ import annotations

import logging

import pytest
from tmpl2py_paths import SHARED

from tmpl2py.compiler import ir
from tmpl2py.compiler.errors import CompileError
from tmpl2py.compiler.gotmpl import nodes as n
from tmpl2py.compiler.gotmpl.frontend import parse, parse_tree
from tmpl2py.compiler.gotmpl.literals import LiteralError, parse_number, unquote

GOTMPL = SHARED / "corpus" / "gotmpl"


def _walk(node):
    """Every IR node under ``node`` (statements and expressions)."""
    yield node
    for name in getattr(node, "__dataclass_fields__", {}):
        value = getattr(node, name)
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            if isinstance(item, tuple):
                for sub in item:
                    if isinstance(sub, ir.Node):
                        yield from _walk(sub)
            elif isinstance(item, ir.Node):
                yield from _walk(item)


def _texts(module: ir.Module) -> list[str]:
    return [node.text for node in _walk_body(module.body) if isinstance(node, ir.Text)]


def _walk_body(body):
    for stmt in body:
        yield from _walk(stmt)


# ----------------------------------------------------------------------------- grammar


def test_grammar_has_no_conflicts(caplog):
    from lark import Lark

    with caplog.at_level(logging.DEBUG, logger="lark"):
        Lark.open(
            "../../compiler/gotmpl/grammar.lark",
            rel_to=__file__,
            parser="lalr",
            lexer="contextual",
            propagate_positions=True,
            debug=True,
        )
    assert not [r for r in caplog.records if "conflict" in r.getMessage().lower()]


@pytest.mark.skipif(not (GOTMPL / "templates").is_dir(), reason="shared corpus not found")
@pytest.mark.parametrize(
    "path",
    sorted((GOTMPL / "templates").glob("*.gotmpl")) if (GOTMPL / "templates").is_dir() else [],
    ids=lambda p: p.stem,
)
def test_corpus_templates_parse(path):
    module = parse(path.read_text(encoding="utf-8"))
    assert module.dialect == "go"
    assert dict(module.meta)["GO_MODE"] == "messages"
    for node in _walk_body(module.body):
        if isinstance(node, ir.Name):
            assert node.ident, node


@pytest.mark.skipif(not (SHARED / "seeds").is_dir(), reason="shared seeds not found")
def test_seed_002_fragment_is_unexpected_end():
    [seed] = sorted((SHARED / "seeds").glob("002_*.txt"))
    with pytest.raises(CompileError) as info:
        parse(seed.read_text(encoding="utf-8"))
    assert info.value.message == "unexpected {{end}}"
    assert info.value.code == "unknown-tag"
    assert info.value.line > 1


# ----------------------------------------------------------------------------- text and trim markers


@pytest.mark.parametrize(
    "source,texts",
    [
        ("a  {{- .X -}}  b", ["a", "b"]),
        ("a {{-3}} b", ["a ", " b"]),  # "{{-3}}" is the number -3, no trim
        ("a\n\t {{- /* c */ -}} \n b", ["ab"]),
        ("a {{/* c */}} b", ["a ", " b"]),
        ("x\r\n{{- .X }}", ["x"]),
        ("{{ .X -}}\n\n  ", []),
    ],
)
def test_trim_markers(source, texts):
    module = parse(source, profile="plain")
    got = [t for t in _texts(module)]
    assert "".join(got) == "".join(texts)


def test_constants_print_as_text():
    module = parse('{{ "a" }}{{ 3 }}', profile="plain")
    outputs = [s for s in module.body if isinstance(s, (ir.Text, ir.Output))]
    assert outputs[0] == ir.Text("a")


# ----------------------------------------------------------------------------- parse-time errors (Go's messages)


@pytest.mark.parametrize(
    "source,code,message",
    [
        ("{{ end }}", "unknown-tag", "unexpected {{end}}"),
        ("{{ else }}", "unknown-tag", "unexpected {{else}}"),
        ("{{ if .X }}", "unclosed-block", "unexpected EOF"),
        ("{{ $x }}", "undefined-variable", 'undefined variable "$x"'),
        ("{{ foo 1 }}", "unknown-function", 'function "foo" not defined'),
        ("{{ break }}", "bad-loop-control", "{{break}} outside {{range}}"),
        (
            "{{ range .L }}{{ else }}{{ continue }}{{ end }}",
            "bad-loop-control",
            "{{continue}} outside {{range}}",
        ),
        ("{{ $x, $y := 1 }}", "syntax", "too many declarations in command"),
        ('{{ 1 | "s" }}', "syntax", "non executable command in pipeline stage 2"),
        ('{{ "a".X }}', "syntax", 'unexpected . after term "\\"a\\""'),
        ("{{ 08 }}", "syntax", 'integer overflow: "08"'),
        ("{{ print(1) }}", "syntax", 'unexpected "(" in operand'),
        ("{{ $x=1 }}", "syntax", "bad character U+003D '='"),
        ("{{/* x */ }}", "syntax", "comment ends before closing delimiter"),
        ("{{ /* x */ }}", "syntax", 'unexpected "/" in command'),
        (
            '{{ define "a" }}x{{ end }}{{ define "a" }}y{{ end }}',
            "syntax",
            'template: multiple definition of template "a"',
        ),
        ("{{ print end }}", "syntax", "unexpected <end> in operand"),
    ],
)
def test_parse_errors(source, code, message):
    with pytest.raises(CompileError) as info:
        parse(source, profile="plain")
    assert (info.value.code, info.value.message) == (code, message)


def test_ollama_funcs_exist_only_in_the_ollama_profile():
    parse("{{ json . }}{{ currentDate }}", profile="ollama")
    with pytest.raises(CompileError, match='function "json" not defined'):
        parse("{{ json . }}", profile="plain")


def test_error_position_and_excerpt():
    with pytest.raises(CompileError) as info:
        parse("line one\n  {{ nope }}", name="t.gotmpl", profile="plain")
    err = info.value
    assert (err.line, err.column) == (2, 6)
    assert str(err).startswith('t.gotmpl:2:6: function "nope" not defined')


def test_variables_declared_before_their_pipeline_runs_parse():
    # Go's parser adds the variable before reading the pipeline: this parses (and fails at run time)
    parse("{{ $x := $x }}", profile="plain")


# ----------------------------------------------------------------------------- literals


@pytest.mark.parametrize(
    "text,expected",
    [
        ("3", ("int", 3)),
        ("-3", ("int", -3)),
        ("1.0", ("float", 1.0)),
        ("1e3", ("float", 1000.0)),
        ("0x10", ("int", 16)),
        ("0x1p-2", ("float", 0.25)),
        ("1_000", ("int", 1000)),
        ("010", ("int", 8)),
        ("0o17", ("int", 15)),
        ("0b101", ("int", 5)),
        (".5", ("float", 0.5)),
        ("2i", ("complex", 2j)),
        ("1+2i", ("complex", 1 + 2j)),
        ("18446744073709551615", ("overflow", "18446744073709551615")),
    ],
)
def test_numbers(text, expected):
    assert parse_number(text) == expected


@pytest.mark.parametrize("text", ["08", "99999999999999999999", "1__0", "0x"])
def test_bad_numbers(text):
    with pytest.raises(LiteralError):
        parse_number(text)


def test_strings_and_chars():
    assert unquote(r'"a\x41\u00e9\n"') == "aAé\n"
    assert unquote(r'"\xff"') == "\udcff"  # not UTF-8: kept as Go's byte
    assert unquote("`a\\n\r`") == "a\\n"
    assert parse_number("'a'", is_char=True) == ("int", 97)
    with pytest.raises(LiteralError):
        unquote(r'"\q"')


# ----------------------------------------------------------------------------- lowering


def test_variables_get_python_identifiers_and_scoping():
    module = parse(
        "{{ $x := 1 }}{{ if true }}{{ $x := 2 }}{{ $x }}{{ end }}{{ $x }}", profile="plain"
    )
    assigns = [
        s for s in _walk_body(module.body) if isinstance(s, ir.Assign) and s.target.name == "$x"
    ]
    assert len({a.target.ident for a in assigns}) == 2
    outputs = [
        s.expr.args[0]
        for s in _walk_body(module.body)
        if isinstance(s, ir.Output) and isinstance(s.expr.args[0], ir.Name)
    ]
    assert [o.ident for o in outputs] == [assigns[1].target.ident, assigns[0].target.ident]


def test_else_branch_does_not_see_then_branch_declarations():
    module = parse("{{ if .A }}{{ $y := 1 }}{{ else }}{{ $y }}{{ end }}", profile="plain")
    fails = [
        h for h in _walk_body(module.body) if isinstance(h, ir.Helper) and h.name == "gotmpl.fail"
    ]
    assert fails and fails[0].args[0] == ir.Const("undefined variable: $y")


def test_and_or_lower_to_short_circuit_boolops():
    module = parse("{{ and .A .B }}{{ or .A .B }}", profile="plain")
    ops = [b.op for b in _walk_body(module.body) if isinstance(b, ir.BoolOp)]
    assert ops == ["and", "or"]


def test_wrong_arity_is_a_run_time_error():
    module = parse("{{ if false }}{{ len }}{{ end }}", profile="plain")
    fails = [
        h for h in _walk_body(module.body) if isinstance(h, ir.Helper) and h.name == "gotmpl.fail"
    ]
    assert fails[0].args[0] == ir.Const("wrong number of args for len: want 1 got 0")


def test_define_and_template_become_local_functions():
    module = parse('{{ define "T" }}<{{ . }}>{{ end }}{{ template "T" .X }}', profile="plain")
    funcs = [s for s in module.body if isinstance(s, ir.FuncDef)]
    assert [f.name for f in funcs] == ["T"]
    calls = [c for c in _walk_body(module.body) if isinstance(c, ir.CallValue)]
    assert calls[0].func == ir.Local(funcs[0].ident)


def test_plain_profile_converts_json_numbers():
    module = parse("{{ . }}", profile="plain")
    first = module.body[0]
    assert isinstance(first, ir.Assign) and first.value == ir.Helper(
        "gotmpl.plain_data", (ir.Local("context"),)
    )


# ----------------------------------------------------------------------------- Ollama: Vars, Response, cut


def test_identifiers_and_mode():
    meta = dict(parse("{{ range .Messages }}{{ .Content }}{{ end }}").meta)
    assert meta["GO_MODE"] == "messages"
    assert "content" in meta["GO_IDENTIFIERS"]
    meta = dict(parse("{{ $.messages }}").meta)
    assert meta["GO_MODE"] == "messages"
    meta = dict(parse("{{ .Prompt }}").meta)
    assert meta["GO_MODE"] == "legacy"


def test_response_is_appended_when_neither_messages_nor_response_is_mentioned():
    module = parse("<{{ .Prompt }}>")
    fields = [
        h.args[1]
        for h in _walk_body(module.body)
        if isinstance(h, ir.Helper) and h.name in ("gotmpl.field", "gotmpl.print_field")
    ]
    assert ir.Const("Response") in fields
    module = parse("<{{ .Prompt }}>{{ .Response }}")
    fields = [
        h.args[1]
        for h in _walk_body(module.body)
        if isinstance(h, ir.Helper) and h.name in ("gotmpl.field", "gotmpl.print_field")
    ]
    assert (
        fields.count(ir.Const("Response")) == 2
    )  # the main tree and the cut tree, nothing appended


def test_cut_after_response():
    tree = parse_tree("a{{ .Prompt }}b{{ print .Response .System }}c{{ if .X }}d{{ end }}").root
    cut = n.cut_after_response(tree)
    assert str(cut) == "a{{.Prompt}}b{{print .Response}}"
    # a branch whose body holds .Response and that has an else: Ollama's deleteNode panics
    tree = parse_tree("{{ if .Prompt }}{{ .Response }}{{ else }}x{{ end }}").root
    with pytest.raises(n.CutPanic):
        n.cut_after_response(tree)
    assert dict(parse("{{ if .Prompt }}{{ .Response }}{{ else }}x{{ end }}").meta)["GO_CUT_ERROR"]


def test_template_without_pipeline_is_refused_by_ollama():
    with pytest.raises(CompileError, match="undefined template specified"):
        parse('{{ template "x" }}')
    parse('{{ template "x" }}', profile="plain")  # plain text/template: an exec error later


def test_every_helper_the_go_frontend_emits_resolves():
    from tmpl2py.compiler import registry
    from tmpl2py.compiler.gotmpl.lower import _SIGNATURES

    names = {sig.helper for sig in _SIGNATURES.values() if sig.helper}
    sources = [
        "{{ .A }}{{ .A.B }}{{ range .L }}{{ .X }}{{ .X 1 }}{{ end }}{{ range $i, $v := .M }}{{ end }}",
        "{{ printf .S }}{{ currentDate 1 }}{{ len }}{{ .Prompt }}",
    ]
    for source in sources:
        module = parse(source)
        names |= {h.name for h in _walk_body(module.body) if isinstance(h, ir.Helper)}
    names |= {h.name for h in _walk_body(parse("{{ . }}", profile="plain").body) if isinstance(h, ir.Helper)}
    assert "ollama.is_cut_run" in names and "gotmpl.plain_data" in names
    for name in sorted(names):
        registry.resolve(name)
