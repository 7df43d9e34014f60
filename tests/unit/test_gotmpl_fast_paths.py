"""Fast paths of the Go runtime agree with the general ones: marshal's (json_text: JSON
written directly) with the exact encoder value by value, and with Go's encoding/json on
Ollama's view types; slice_length with len of slice."""

from __future__ import annotations

import pytest

from tmpl2py.runtime.go import ollama
from tmpl2py.runtime.go.fmt import (
    GoMap,
    GoNil,
    GoSlice,
    GoString,
    GoUint8,
    JSONError,
    _marshal_exact,
    marshal,
)

ODD_FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 1e-4, 9.99e-5, 1e-5, 1e-6, 1e-7, 123456.789, 1e15 + 0.5,
    1e16, 1e20, 1e21, 2.0**53, 2.0**53 - 1, -(2.0**53), 2.0**60, 1.5e300, 5e-324,
    float("nan"), float("inf"), float("-inf"),
]  # fmt: skip

ODD_STRINGS = [
    "", "plain", "<a href='x'>&amp;</a>", "\u2028\u2029", "\x00\x01\x08\x0c\x1f\x7f",
    'q"uo\\te', "\t\n\r", "é 東京 🙂", "bad \udcff byte", "lone \ud800", "\ufffd",
]  # fmt: skip


def _outcome(fn, value):
    try:
        return fn(value)
    except JSONError as e:
        return f"JSONError: {e}"


def _values():
    yield from ODD_FLOATS
    yield from ODD_STRINGS
    yield from [None, True, False, 0, 7, -3, 2**70, GoUint8(200), 1 + 2j, b"bytes"]
    yield [ODD_FLOATS[:5], ODD_STRINGS, {}, []]
    yield {s: i for i, s in enumerate(ODD_STRINGS[:-3])}
    yield {"é": 1.0, "\udc80": 2.0, "z": 3.0}  # invalid UTF-8 sorts by its byte
    yield {1: "a", 2: "b"}
    yield {1: "a", "b": 2}
    yield {True: 1}
    yield {"n": [1.0, -0.0, 1e-7]}
    yield (1.0, 2.0)
    yield GoSlice(["a"])
    nil = GoSlice()
    nil.nil = True
    yield [nil, GoMap(), GoNil("*T"), GoString("s")]
    m = GoMap({"b": 1.0, "a": 2.0})
    m.nil = True
    yield m


@pytest.mark.parametrize("value", list(_values()), ids=repr)
def test_fast_path_agrees_with_the_exact_encoder(value):
    assert _outcome(marshal, value) == _outcome(_marshal_exact, value)


TOOL = {
    "type": "function",
    "items": {"b": [1, 2.5, -0.0], "a": "<x>"},
    "function": {
        "name": "f<&>",
        "description": "d\u2028",
        "parameters": {
            "type": "object",
            "$defs": {"x": {"y": 1e21, "z": 1e-7}},
            "required": ["b", "a"],
            "properties": {
                "z": {"type": ["string", "null"], "enum": ["a", 1, 2.5, None, True]},
                "é": {"type": "array", "items": {"type": "string", "format": "&"}},
                "a": {
                    "anyOf": [{"type": "string"}, {"type": "integer", "description": ""}],
                    "properties": {"q": {"type": "string"}, "b": {}},
                },
                "n": None,
                "big": {"type": "number", "enum": [2**60, 1e16, 123456789.125]},
            },
        },
    },
}


def _view_values():
    tools = [ollama._tool(TOOL), ollama._tool({}), ollama._tool({"function": {"parameters": {}}})]
    yield ollama._slice(tools, "main.templateTools", cls=ollama.TemplateTools)
    yield from tools
    call = {"function": {"name": "f", "arguments": {"b": [1, {"y": "<"}], "a": None}}}
    yield ollama._tool_call(call)
    yield ollama._message({"role": "assistant", "tool_calls": [call], "images": ["aGk="]})
    yield ollama._zero_property()


@pytest.mark.parametrize("value", list(_view_values()), ids=lambda v: type(v).__name__)
def test_fast_path_agrees_on_the_view_types(value):
    assert _outcome(marshal, value) == _outcome(_marshal_exact, value)


def test_tools_json_like_go():
    goref_client = pytest.importorskip("goref_client")
    if not goref_client.go_available():
        pytest.skip("`go` is not available")
    from tmpl2py.compiler import compile_template

    src = (
        "{{ json .Tools }}\n{{ range .Tools }}{{ json . }}\n"
        "{{ range $k, $p := .Function.Parameters.Properties }}{{ $k }}={{ json $p }};{{ end }}\n"
        "{{ .Function.Parameters.Properties }}\n{{ end }}"
        "{{ range .Messages }}{{ range .ToolCalls }}{{ .Function.Arguments }}|{{ json . }}\n"
        "{{ end }}{{ end }}"
    )
    request = {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [
                    {"function": {"name": "f", "arguments": {"b": [1, -0.0, 1e-7], "a": "<é>"}}}
                ],
            }
        ],
        "tools": [TOOL, {"type": "function", "function": {"name": "g"}}],
    }
    ok, want = goref_client.get_reference().ollama(src, request)
    assert ok, want
    got = compile_template(src, dialect="go", profile="ollama").render_conversation(
        request["messages"], tools=request["tools"], now="2024-07-26"
    )
    assert got == want


# ----------------------------------------------------------------------------- len (slice x i)


def _slice_outcome(fn):
    from tmpl2py.runtime.go.execute import ExecError

    try:
        return fn()
    except ExecError as e:
        return f"ExecError: {e}"


@pytest.mark.parametrize(
    "item",
    [
        None,
        [],
        [1.0, 2.0, 3.0],
        ollama._NIL_MESSAGES,
        ollama._NIL_TOOLS,
        "héllo",
        (1, 2),
        GoNil("*T"),
        5,
    ],
    ids=repr,
)
@pytest.mark.parametrize(
    "indexes",
    [(), (0,), (1,), (3,), (4,), (-1,), (True,), (1.0,), (None,), (1, 2), (2, 1), (0, 1, 2)],
)
def test_slice_length_is_len_of_slice(item, indexes):
    from tmpl2py.runtime.go import execute as g

    assert _slice_outcome(lambda: g.slice_length(item, *indexes)) == _slice_outcome(
        lambda: g.length(g.slice_(item, *indexes))
    )


# ----------------------------------------------------------------------------- message field reads


def test_message_fields_read_directly_only_from_messages():
    from tmpl2py.compiler import compile_template

    src = '{{ range .Messages }}{{ .Role }}|{{ .Content }}|{{ if eq .Role "user" }}u{{ end }};{{ end }}'
    t = compile_template(src, dialect="go", profile="ollama")
    assert "TemplateMessage" in t.python_source  # the direct reads are there
    message = ollama._message({"role": "USER", "content": "hi"})
    data = {"Messages": [{"Role": "x", "Content": 1.5}, message, {"Role": "user"}]}
    assert t.render(data) == "x|1.5|;user|hi|u;user|<no value>|u;"
    # eq of a direct read and a string compares them directly; eq itself otherwise
    assert '.Role == "user"' in t.python_source
    from tmpl2py.runtime.go.execute import ExecError

    with pytest.raises(ExecError, match="incompatible types for comparison"):
        t.render({"Messages": [{"Role": 1.5, "Content": ""}]})


class _Text(str):
    def __str__(self):
        return "other"


def test_message_strings_are_exactly_str():
    message = ollama._message({"role": "user", "content": _Text("data"), "thinking": _Text("t")})
    assert type(message.Content) is str and message.Content == "data"
    assert type(message.Thinking) is str and message.Thinking == "t"


VIEW_READS = (
    "{{ range .Tools }}{{ .Type }} {{ .Function.Name }}|{{ .Function.Parameters.Properties }}|"
    "{{ range $k, $p := .Function.Parameters.Properties }}{{ $k }}={{ $p.Type }}/{{ $p.Description }},"
    "{{ end }};{{ end }}"
    "{{ range .Messages }}{{ range .ToolCalls }}{{ .ID }}{{ .Function.Name }}{{ .Function.Arguments }}"
    "{{ end }}{{ end }}"
)


def test_view_field_chains_read_directly_only_from_views():
    from tmpl2py.compiler import compile_template
    from tmpl2py.runtime.go.execute import ExecError

    t = compile_template(VIEW_READS, dialect="go", profile="ollama")
    assert "TemplateTool" in t.python_source
    # printed chains ending on a Stringer are read directly too, printed through to_str
    assert "to_str(v_p_" in t.python_source and ".Function.Arguments)" in t.python_source
    data = {
        "Tools": [
            {
                "Type": 1.0,
                "Function": {"Name": "n", "Parameters": {"Properties": {"a": {"Type": "t"}}}},
            }
        ],
        "Messages": [{"ToolCalls": [{"ID": "i", "Function": {"Name": "f", "Arguments": None}}]}],
    }
    assert t.render(data) == "1 n|map[a:map[Type:t]]|a=t/<no value>,;if<no value>"
    with pytest.raises(ExecError, match=r"nil pointer evaluating interface \{\}\.Type"):
        t.render({"Tools": [None]})


def test_view_field_chains_like_go():
    goref_client = pytest.importorskip("goref_client")
    if not goref_client.go_available():
        pytest.skip("`go` is not available")
    from tmpl2py.compiler import compile_template

    request = {
        "messages": [
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f"}}]},
            {"role": "assistant", "tool_calls": [{"function": {"arguments": {"b": 1, "a": "<"}}}]},
        ],
        "tools": [TOOL, {"type": "function", "function": {"name": "g"}}, {}],
    }
    ok, want = goref_client.get_reference().ollama(VIEW_READS, request)
    assert ok, want
    got = compile_template(VIEW_READS, dialect="go", profile="ollama").render_conversation(
        request["messages"], tools=request["tools"], now="2024-07-26"
    )
    assert got == want


def test_eq_of_a_length_and_an_int_is_a_plain_comparison():
    from tmpl2py.compiler import compile_template
    from tmpl2py.runtime.go.execute import ExecError

    t = compile_template(
        "{{ eq (len .X) 2 }}{{ 2 | eq (len .X) }}{{ eq (len (slice .X 1)) 1 }}",
        dialect="go",
        profile="plain",
    )
    assert "eq(" not in t.python_source
    assert t.render({"X": [1, 2]}) == "truetruetrue"
    assert t.render({"X": "ab"}) == "truetruetrue"
    with pytest.raises(ExecError, match="error calling len"):
        t.render({})
    u = compile_template("{{ eq (len .X) 2.0 }}", dialect="go", profile="plain")
    with pytest.raises(ExecError, match="incompatible types for comparison: int and float64"):
        u.render({"X": [1, 2]})
