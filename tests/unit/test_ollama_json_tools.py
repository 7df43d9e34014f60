"""Tools a template only marshals (``GO_TOOLS_JSON``, ``ollama.JsonTool``): the compiler's
analysis of the template, and the runtime's JSON written straight from the request, which
must be what marshalling the view (``ollama._tool``) writes, errors included. The same
templates against the Go reference: tests/property/go/test_go_differential.py."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tmpl2py.compiler import compile_template
from tmpl2py.runtime.go import ollama
from tmpl2py.runtime.go.fmt import _marshal_exact, format_value, marshal

# ----------------------------------------------------------------------------- the analysis

ANALYSIS = {
    # only marshalled: truth, len, json, printed .Tools (its String is its JSON)
    "{{ range .Tools }}{{ json . }}{{ end }}": True,
    "{{ if .Tools }}{{ range $i, $t := $.Tools }}{{ if $i }},{{ end }}{{ json $t }}{{ end }}"
    "{{ end }}": True,
    "{{ json .Tools }}{{ .Tools }}{{ len .Tools }}": True,
    "{{ with $ }}{{ range .Tools }}{{ json . }}{{ end }}{{ end }}": True,
    "{{ range .Messages }}{{ .Tools }}{{ end }}{{ json $.Tools }}": True,
    "{{ if or .Tools .System }}x{{ end }}{{ if not .Tools }}y{{ end }}": True,
    "{{ .Tools | json }}{{ range .Tools }}{{ . | json }}{{ end }}": True,
    # anything that sees more of a tool
    "{{ range .Tools }}{{ .Function.Name }}{{ end }}": False,
    "{{ range .Tools }}{{ . }}{{ end }}": False,
    "{{ range .Tools }}{{ . | print }}{{ end }}": False,
    "{{ range .Tools }}{{ json .Function }}{{ end }}": False,
    "{{ range $t := .Tools }}{{ $t.Type }}{{ end }}": False,
    "{{ $t := .Tools }}{{ json $t }}": False,
    "{{ index .Tools 0 }}": False,
    "{{ print .Tools }}": False,
    "{{ or .Tools .System }}": False,
    "{{ range . }}{{ . }}{{ end }}{{ .Tools }}": False,
    "{{ json . }}{{ .Tools }}": False,
    "{{ with $ }}{{ range .Tools }}{{ .Type }}{{ end }}{{ end }}": False,
    "{{ with .Tools }}{{ json . }}{{ end }}": False,
    '{{ define "x" }}{{ json . }}{{ end }}{{ range .Tools }}{{ template "x" . }}{{ end }}': False,
    # no tools, or the legacy mode: nothing to say
    "{{ .System }}": False,
}


@pytest.mark.parametrize("source", list(ANALYSIS))
def test_which_templates_only_marshal_their_tools(source):
    text = source if "Messages" in source or "Prompt" in source else source + "{{ .Messages }}"
    if source == "{{ .System }}":
        text = source  # the legacy mode
    t = compile_template(text, dialect="go", profile="ollama")
    assert (t.namespace.get("GO_TOOLS_JSON") is True) is ANALYSIS[source]


# ----------------------------------------------------------------------------- the runtime

TEXTS = ["", "x", "get_weather", "a<b>&c", "é", "日本語", "\u2028", "\ud800", '"q"\\', "\x00\n"]
SCALARS = [None, 1, 1.5, True, [], {}, ["a"]]


def _text_or_odd(draw, odd: int = 12):
    if draw(st.integers(0, odd)) == 0:
        return draw(st.sampled_from(SCALARS))
    return draw(st.sampled_from(TEXTS))


@st.composite
def _property(draw, depth: int = 0):
    p: dict = {}
    if draw(st.integers(0, 12)):
        p["type"] = (
            draw(st.sampled_from(["string", "integer", "", "x<y"]))
            if draw(st.integers(0, 10))
            else draw(st.sampled_from([None, ["string", "null"], 1, ["a"]]))
        )
    if draw(st.booleans()):
        p["description"] = _text_or_odd(draw)
    if draw(st.integers(0, 2)) == 0:
        p["enum"] = (
            [_text_or_odd(draw, 20) for _ in range(draw(st.integers(0, 3)))]
            if draw(st.integers(0, 8))
            else draw(st.sampled_from([None, "ab", ("a",)]))
        )
    if draw(st.integers(0, 3)) == 0:
        p["items"] = draw(
            st.sampled_from([{"type": "string"}, {"type": 1}, {}, {"b": "x", "a": "<"}, [1], None])
        )
    if draw(st.integers(0, 8)) == 0:
        p["default"] = 1  # (unknown keys: ignored)
    if depth == 0 and draw(st.integers(0, 10)) == 0:
        p["properties"] = {"n": draw(_property(1))}
    if depth == 0 and draw(st.integers(0, 12)) == 0:
        p["anyOf"] = draw(st.sampled_from([[], [{"type": "string"}]]))
    return p if draw(st.integers(0, 30)) else draw(st.sampled_from([None, "x", []]))


@st.composite
def raw_tools(draw):
    params: dict = {"type": "object" if draw(st.integers(0, 12)) else _text_or_odd(draw, 2)}
    if draw(st.integers(0, 6)):
        keys = draw(st.lists(st.sampled_from(["city", "unit", "a", "b", "é", "Z", ""]), max_size=4))
        params["properties"] = {k: draw(_property()) for k in keys}
        if draw(st.integers(0, 15)) == 0:
            params["properties"] = draw(st.sampled_from([None, [], {1: {"type": "string"}}]))
    if draw(st.booleans()):
        params["required"] = (
            [_text_or_odd(draw, 15) for _ in range(draw(st.integers(0, 3)))]
            if draw(st.integers(0, 10))
            else draw(st.sampled_from([None, "a", [1]]))
        )
    if draw(st.integers(0, 15)) == 0:
        params["$defs"] = {"x": 1}
    function: dict = {"name": _text_or_odd(draw), "description": _text_or_odd(draw)}
    if draw(st.integers(0, 20)):
        function["parameters"] = params
    if draw(st.integers(0, 20)) == 0:
        del function["description"]
    tool: dict = {"type": "function" if draw(st.integers(0, 15)) else _text_or_odd(draw, 2)}
    if draw(st.integers(0, 25)):
        tool["function"] = function
    if draw(st.integers(0, 15)) == 0:
        tool["items"] = {"a": 1}
    return tool if draw(st.integers(0, 40)) else draw(st.sampled_from([None, [], "x", {}]))


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - compared, type and message
        return (type(e).__name__, str(e))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=raw_tools())
def test_a_json_tool_is_its_view_marshalled(raw):
    view = _outcome(ollama._tool, raw)
    fast = _outcome(ollama.json_tool, raw)
    assert fast[0] == view[0]
    if view[0] != "ok":
        assert fast == view  # the view's errors, as they are
        return
    view, fast = view[1], fast[1]
    assert _outcome(marshal, fast) == _outcome(marshal, view)
    assert _outcome(_marshal_exact, fast) == _outcome(_marshal_exact, view)
    tools, view_tools = ollama.TemplateTools([fast, fast]), ollama.TemplateTools([view, view])
    assert _outcome(marshal, tools) == _outcome(marshal, view_tools)
    assert _outcome(tools.String) == _outcome(view_tools.String)
    # anything else still sees the view (the compiler does not let a template do this)
    assert _outcome(format_value, fast) == _outcome(format_value, view)
    assert _outcome(lambda: fast.Function.Name) == _outcome(lambda: view.Function.Name)


def test_the_usual_tool_takes_the_fast_way():
    raw = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather <now> & later",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {
                    "unit": {"type": "string", "enum": ["c", "f"]},
                    "city": {"type": "string", "description": "城市"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    }
    tool = ollama.json_tool(raw)
    assert type(tool) is ollama.JsonTool and tool.view is None
    assert marshal(tool) == marshal(ollama._tool(raw))
    assert tool.view is None  # marshalled without the view
    assert "\\u003cnow\\u003e \\u0026" in marshal(tool)
    # odd shapes take the view's way
    assert type(ollama.json_tool({**raw, "items": {"a": 1.5}})) is ollama.TemplateTool
    with pytest.raises(ollama.RequestError):
        ollama.json_tool({"type": 1, "function": raw["function"]})


def test_a_json_only_template_renders_as_with_views():
    source = (
        "{{ if .Tools }}{{ range $i, $t := .Tools }}{{ if $i }}|{{ end }}{{ json $t }}{{ end }}"
        "{{ json $.Tools }}{{ .Tools }}{{ len .Tools }}{{ end }}{{ range .Messages }}"
        "{{ .Content }}{{ end }}"
    )
    t = compile_template(source, dialect="go", profile="ollama")
    assert t.namespace["GO_TOOLS_JSON"] is True
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "description": "d<",
                "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
        },
        {
            "type": "function",
            "function": {"name": "g", "description": "\ud800", "parameters": {"type": "object"}},
        },
        {
            "type": "function",
            "function": {
                "name": "h",
                "description": "",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "number", "enum": [1, 2]}},
                },
            },
        },
    ]
    msgs = [{"role": "user", "content": "hi"}]
    got = t.render_conversation(msgs, tools=tools)
    values = ollama.template_values(msgs, tools)  # views only
    assert got == t.render(values)
    assert [type(x) for x in ollama.template_values(msgs, tools, json_tools=True)["Tools"]] == [
        ollama.JsonTool,
        ollama.JsonTool,
        ollama.TemplateTool,
    ]
