"""runtime.ollama: request shaping (collation, think, view types) and Template.Execute's
messages and legacy modes, on compiled templates."""

from __future__ import annotations

import datetime

import pytest

from tmpl2py.runtime.go import execute as g
from tmpl2py.runtime.go import ollama


def compile_go(source: str, profile: str):
    """compile_template for dialect "go", forwarding the profile to the Go frontend until
    compiler.api does it itself (compiler/gotmpl/NEEDS.md)."""
    import inspect
    from unittest import mock

    from tmpl2py.compiler import api
    from tmpl2py.compiler.gotmpl import parse

    if "profile" in inspect.signature(api.parse).parameters:
        return api.compile_template(source, dialect="go", profile=profile)
    with mock.patch.object(
        api, "parse", lambda s, dialect="go", name=None: parse(s, name, profile=profile)
    ):
        return api.compile_template(source, dialect="go", profile=profile)


REQUEST = {
    "messages": [
        {"role": "system", "content": "S1"},
        {"role": "System", "content": "S2"},
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "function": {
                        "name": "f",
                        "arguments": {"z": 1, "a": {"y": [1, 2], "b": "<x>"}},
                    },
                }
            ],
        },
        {"role": "tool", "content": "t1"},
        {"role": "tool", "content": "t2"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "z": {"type": ["string", "null"], "description": "zz"},
                        "a": {
                            "type": "object",
                            "properties": {"q": {"type": "string"}, "p": {"type": "integer"}},
                        },
                    },
                },
            },
        }
    ],
}


def test_collation_and_system():
    values = ollama.template_values(REQUEST["messages"])
    assert values["System"] == "S1\n\nS2"
    roles = [(m.Role, m.Content) for m in values["Messages"]]
    assert roles == [
        ("system", "S1\n\nS2"),
        ("user", "a\n\nb"),
        ("assistant", ""),
        ("tool", "t1"),
        ("tool", "t2"),
    ]


@pytest.mark.parametrize(
    "think,expected",
    [
        (None, (False, "", False)),
        (True, (True, "medium", True)),
        (False, (False, "", True)),
        ("low", (True, "low", True)),
    ],
)
def test_think_values(think, expected):
    values = ollama.template_values([], think=think)
    assert (values["Think"], values["ThinkLevel"], values["IsThinkSet"]) == expected


def test_bad_think_value():
    with pytest.raises(ollama.RequestError, match="invalid think value"):
        ollama.template_values([], think="max")


def test_view_types_print_like_ollama():
    values = ollama.template_values(REQUEST["messages"], REQUEST["tools"])
    call = values["Messages"][2].ToolCalls[0]
    assert g.to_str(call.Function.Arguments) == '{"a":{"b":"\\u003cx\\u003e","y":[1,2]},"z":1}'
    assert g.to_str(values["Tools"]) == (
        '[{"type":"function","function":{"name":"f","description":"","parameters":'
        '{"type":"object","properties":{"a":{"type":"object","properties":'
        '{"q":{"type":"string"},"p":{"type":"integer"}}},'
        '"z":{"type":["string","null"],"description":"zz"}}}}}]'
    )
    props = values["Tools"][0].Function.Parameters.Properties
    assert g.to_str(g.field(props["z"], "Type")) == "[string null]"
    assert g.to_typescript_type(props["z"]) == "string | null"
    assert g.to_typescript_type(props["a"]) == "Record<string, any>"
    assert g.to_typescript_type("x") == "any"
    assert g.to_str(values["Messages"][1]) == "{user a\n\nb  [] []  }"
    assert g.go_type(values["Messages"][1]) == "*main.templateMessage"
    assert g.to_str(ollama.template_values([])["Tools"]) == "null"


def test_unknown_field_of_a_view_type():
    values = ollama.template_values(REQUEST["messages"])
    with pytest.raises(
        g.ExecError, match=r"can't evaluate field role in type \*main.templateMessage"
    ):
        g.field_of_elem(values["Messages"][0], "role")


CHATML = (
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n"
    "{{ end }}<|im_start|>assistant\n"
)


def test_messages_mode():
    t = compile_go("{{ .System }}|" + CHATML, "ollama")
    out = t.render_conversation(
        [
            {"role": "system", "content": "S"},
            {"role": "user", "content": "a"},
            {"role": "user", "content": "b"},
        ]
    )
    assert out == (
        "S|<|im_start|>system\nS<|im_end|>\n<|im_start|>user\na\n\nb<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


LEGACY_REQUEST = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "u1"},
    {"role": "assistant", "content": "a1"},
    {"role": "user", "content": "u2"},
]


def test_legacy_mode_runs_per_turn_and_cuts_the_last():
    t = compile_go(
        "{{ if .System }}<s>{{ .System }}</s>{{ end }}[{{ .Prompt }}]{{ .Response }}END", "ollama"
    )
    assert t.render_conversation(LEGACY_REQUEST) == "<s>sys</s>[u1]a1END[u2]"
    t = compile_go("<{{ .Prompt }}>", "ollama")  # {{ .Response }} appended
    assert t.render_conversation(LEGACY_REQUEST) == "<u1>a1<u2>"


def test_legacy_cut_runs_without_funcs():
    t = compile_go("{{ .Prompt }}{{ .Response }}{{ currentDate }}", "ollama")
    assert t.render_conversation([{"role": "user", "content": "x"}]) == "x"
    t = compile_go("{{ currentDate }}{{ .Prompt }}{{ .Response }}", "ollama")
    with pytest.raises(g.ExecError, match='"currentDate" is not a defined function'):
        t.render_conversation([{"role": "user", "content": "x"}])


def test_legacy_cut_panic():
    t = compile_go("{{ if .Prompt }}{{ .Response }}{{ else }}x{{ end }}", "ollama")
    with pytest.raises(g.ExecError, match="panic: interface conversion"):
        t.render_conversation([{"role": "user", "content": "hi"}])


def test_now_option_freezes_current_date():
    t = compile_go(
        "{{ currentDate }} {{ yesterdayDate }}{{ if false }}{{ .Messages }}{{ end }}", "ollama"
    )
    assert t.render_conversation([], now="2024-07-26") == "2024-07-26 2024-07-25"
    # the clock is frozen for that render only; a date object and a str subclass work too
    assert g._NOW is None
    today = datetime.date.today()
    want = f"{today.isoformat()} {(today - datetime.timedelta(days=1)).isoformat()}"
    assert t.render_conversation([]) == want
    assert t.render_conversation([], now=datetime.date(2020, 3, 1)) == "2020-03-01 2020-02-29"

    class Day(str):
        pass

    assert t.render_conversation([], now=Day("2021-01-01")) == "2021-01-01 2020-12-31"
    with pytest.raises(ValueError):
        t.render_conversation([], now="not a date")
    assert g._NOW is None
    # the legacy (Prompt/Response) mode takes it too
    legacy = compile_go("{{ .System }}|{{ .Prompt }}", "ollama")
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    assert legacy.render_conversation(msgs, now="2024-07-26") == "s|q"
    assert g._NOW is None


def test_go_semantics_of_the_view_types():
    """Cases the Go property tests found (tests/regressions/go), checked against tests/goref."""
    msg = [{"role": "user", "content": "hi"}]

    def run(source, messages=msg, tools=None):
        return compile_go(source, "ollama").render_conversation(messages, tools=tools)

    # a request without messages: .Messages is a nil slice
    assert run("{{ json .Messages }}|{{ .Messages }}", []) == "null|[]"
    # fmt's bad verb of a pointer inside a slice prints the pointed-to struct
    element = "*main.templateMessage=&{user hi  [] []  }"
    assert run('{{ printf "%s" .Messages }}') == f"[%!s({element})]"
    assert run('{{ printf "%#v" .Messages }}') == (
        "[]*main.templateMessage{(*main.templateMessage)(0xc000010000)}"
    )
    with pytest.raises(g.ExecError, match=r"non-comparable type \[%!s\(\*main"):
        run("{{ eq .Messages .Messages }}")
    # len / index / slice report the type behind the pointer
    for source, message in [
        ("{{ range .Messages }}{{ slice . 0 }}{{ end }}", "can't slice item of type main.templ"),
        ("{{ range .Messages }}{{ index . 0 }}{{ end }}", "can't index item of type main.templ"),
        ("{{ range .Messages }}{{ len . }}{{ end }}", "len of type main.templateMessage"),
    ]:
        with pytest.raises(g.ExecError, match=message):
            run(source)
    # an "items" of interface type is omitted only when absent (nil), not when empty
    tools = [{"type": "function", "items": [], "function": {"name": "f"}}]
    assert run("{{ .Tools }}{{ .Messages }}", tools=tools).startswith(
        '[{"type":"function","items":[],'
    )


def test_the_conversation_entry_takes_every_way_of_calling():
    from tmpl2py.runtime.budget import RenderBudgetExceeded

    t = compile_go("{{ range .Messages }}{{ .Role }}:{{ .Content }};{{ end }}", "ollama")
    msgs = [{"role": "user", "content": "hi"}]
    want = "user:hi;"
    assert t.render_conversation(msgs) == want
    assert t.render_conversation(messages=msgs) == want
    assert t.render_conversation(msgs, None, None, None) == want
    assert t.render_conversation(msgs, tools=None, model="m", options={}) == want  # ignored
    assert t.render_conversation(msgs, budget=5.0) == want
    assert t.render_conversation(msgs, think=True, budget=5.0, model="m") == want
    slow = compile_go(
        "{{ range $i, $_ := .Messages }}{{ range $.Messages }}{{ range $.Messages }}"
        "{{ end }}{{ end }}{{ end }}",
        "ollama",
    )
    with pytest.raises(RenderBudgetExceeded):
        turns = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
        # (collate merges no turn; the default fuel would stop it before the budget)
        slow.render_conversation(turns * 1000, budget=0.05, limits={"fuel": None})
    # a template that recurses without end: Go's error, on both ways
    deep = compile_go(
        '{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}{{ .Messages }}',
        "ollama",
    )
    for options in ({}, {"budget": 30.0}):
        with pytest.raises(g.ExecError, match="exceeded maximum template depth"):
            deep.render_conversation(msgs, **options)


def test_a_tool_call_index_past_python_s_digit_limit_is_a_request_error() -> None:
    """A Python caller's index of more than 4,300 digits: its message could not be written
    (``int -> str`` refuses), a bare ValueError (red team s8h F5); a RequestError now."""
    from tmpl2py.compiler import compile_template

    t = compile_template("{{ range .Messages }}{{ .ToolCalls }}{{ end }}", dialect="go", profile="ollama")
    call = {"function": {"index": 10**5000, "name": "f"}}
    with pytest.raises(ollama.RequestError, match="cannot unmarshal number of 16,610 bits"):
        t.render_conversation([{"role": "assistant", "content": "", "tool_calls": [call]}])
