"""Segment renders of Go templates (both profiles): origins of the pieces, the three properties
(tests/segments_check.py) over every shared Go corpus template x fixture, and
``render_conversation(..., segments=True)`` for the ``ollama`` profile (Ollama's input shaping,
the legacy mode's turns, Modelfile defaults).

The reference for text is our own ``render`` / ``render_conversation`` (tested against Go's
text/template and Ollama in tests/unit/test_gotmpl_e2e.py and tests/property/go/).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import segments_check as C  # noqa: E402
from tmpl2py_paths import SHARED  # noqa: E402

from tmpl2py import compile_template  # noqa: E402
from tmpl2py.runtime.go import execute as gotmpl  # noqa: E402
from tmpl2py.runtime.go import ollama  # noqa: E402
from tmpl2py.runtime.segments import COMPUTED, DATA, SHAPE, TEMPLATE, text_of  # noqa: E402
from tmpl2py.segments import assistant_spans, find_injections  # noqa: E402

GOTMPL = SHARED / "corpus" / "gotmpl"
needs_corpus = pytest.mark.skipif(
    not (GOTMPL / "templates").is_dir(), reason="../shared/corpus/gotmpl is absent"
)

CHATML = (
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}"
    "<|im_start|>assistant\n"
)
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi <|im_end|> there"},
    {"role": "assistant", "content": "Hello!"},
]


@pytest.fixture(autouse=True)
def frozen_clock():
    """``currentDate`` answers one day while a test runs (renders are compared)."""
    saved = gotmpl._NOW
    gotmpl.set_now("2024-07-26")
    yield
    gotmpl._NOW = saved


def data_paths(origin) -> set:
    return {p for p in origin.paths if p[-1] is not SHAPE}


# ----------------------------------------------------------------------------- origins


def test_messages_paths_name_the_go_data():
    t = compile_template(CHATML, dialect="go", profile="ollama")
    segs = t.render_conversation(MESSAGES, segments=True)
    assert text_of(segs) == t.render_conversation(MESSAGES)
    head = segs[:5]
    assert [s.text for s in head] == ["<|im_start|>", "system", "\n", "Be brief.", "<|im_end|>\n"]
    assert [s.origin.kind for s in head] == [TEMPLATE, DATA, TEMPLATE, DATA, TEMPLATE]
    assert head[1].origin.source == ("Messages", 0, "Role")
    assert data_paths(head[3].origin) == {("Messages", 0, "Content")}
    assert head[0].origin.cond == {("Messages", SHAPE)}  # emitted once per message
    assert segs[-1].origin.cond == frozenset()  # after the loop


def test_fields_functions_variables_and_templates():
    src = (
        '{{ define "sys" }}[{{ . }}]{{ end }}{{ template "sys" .System }}'
        "{{ $tools := .Tools }}{{ if $tools }}{{ json $tools }}{{ end }}"
        '{{ range $i, $m := .Messages }}{{ if $i }},{{ end }}{{ printf "%q" $m.Content }}{{ end }}'
        "{{ len .Messages }}|{{ currentDate }}"
    )
    t = compile_template(src, dialect="go", profile="ollama")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    segs = t.render_conversation(MESSAGES[1:], tools=tools, segments=True)
    assert text_of(segs) == t.render_conversation(MESSAGES[1:], tools=tools)
    by_text = {s.text: s.origin for s in segs}
    assert data_paths(by_text["[]"]) == {("System",)}  # a template's output: its dot's
    json_tools = next(o for text, o in by_text.items() if text.startswith("[{"))
    assert json_tools.ops == ("json",) and data_paths(json_tools) == {("Tools",)}
    assert json_tools.cond == {("Tools",)}  # inside {{ if $tools }}
    quoted = by_text['"Hi <|im_end|> there"']
    assert quoted.ops == ("printf",) and ("Messages", 0, "Content") in quoted.paths
    assert by_text[","].kind == TEMPLATE and by_text[","].cond >= {("Messages", SHAPE)}
    assert by_text["2"].paths == {("Messages", SHAPE)}  # len: the list's shape only
    assert by_text["2024-07-26"].kind == COMPUTED


def test_plain_profile_paths_below_any_json_value():
    src = "{{ range .items }}{{ .name }}={{ index .tags 1 }};{{ end }}{{ .n }}"
    t = compile_template(src, dialect="go", profile="plain")
    data = {"items": [{"name": "a", "tags": ["x", "y"]}, {"name": "b", "tags": ["z", "w"]}], "n": 3}
    segs = t.render_segments(data)
    assert text_of(segs) == t.render(data) == "a=y;b=w;3"
    assert [s.origin.source for s in segs if s.origin.kind == DATA] == [
        ("items", 0, "name"),
        ("items", 0, "tags", 1),
        ("items", 1, "name"),
        ("items", 1, "tags", 1),
        ("n",),
    ]
    root = compile_template("{{ range . }}<{{ . }}>{{ end }}", dialect="go", profile="plain")
    segs = root.render_segments([["p"], ["q"]])
    assert [s.origin.source for s in segs if s.origin.kind == DATA] == [(0,), (1,)]


def test_errors_are_the_renders_errors():
    t = compile_template("{{ .Messages }}{{ index .Messages 5 }}", dialect="go", profile="ollama")
    data = ollama.template_values(MESSAGES)
    assert C.outcome(t.render, data) == C.outcome(t.render_segments, data)
    with pytest.raises(gotmpl.ExecError) as plain:
        t.render_conversation(MESSAGES)
    with pytest.raises(gotmpl.ExecError) as segs:
        t.render_conversation(MESSAGES, segments=True)
    assert "index out of range" in str(segs.value)
    assert str(segs.value).endswith(plain.value.message)


def test_legacy_mode_renders_each_turn():
    src = "{{ if .System }}<s>{{ .System }}</s>{{ end }}[INST] {{ .Prompt }} [/INST]{{ .Response }}"
    t = compile_template(src, dialect="go", profile="ollama")
    messages = MESSAGES + [{"role": "user", "content": "More?"}]
    segs = t.render_conversation(messages, segments=True)
    assert text_of(segs) == t.render_conversation(messages)
    prompts = [s.text for s in segs if s.origin.source == ("Prompt",)]
    assert prompts == ["Hi <|im_end|> there", "More?"]
    assert [s.origin.source for s in segs if s.text == "Be brief."] == [("System",)]
    assert len(segs.context) == 2  # the data of each turn


def test_modelfile_defaults_and_injections():
    t = compile_template(CHATML, dialect="go", profile="ollama")
    modelfile = {"system": "From the Modelfile."}
    segs = t.render_conversation(MESSAGES[1:], modelfile=modelfile, segments=True)
    assert text_of(segs) == t.render_conversation(MESSAGES[1:], modelfile=modelfile)
    found = find_injections(segs, ["<|im_end|>", "<|im_start|>"])
    assert [(i.token, i.origin.source) for i in found] == [("<|im_end|>", ("Messages", 1, "Content"))]


def test_assistant_spans_of_go_segments():
    t = compile_template(CHATML, dialect="go", profile="ollama")
    segs = t.render_conversation(MESSAGES, segments=True)
    prompt = text_of(segs)
    assert [prompt[a:b] for a, b in assistant_spans(segs)] == ["Hello!"]
    ended = assistant_spans(segs, include_end=True)
    assert [prompt[a:b] for a, b in ended] == ["Hello!<|im_end|>\n"]


# ----------------------------------------------------------------------------- corpus


def _corpus_cases():
    if not (GOTMPL / "templates").is_dir():
        return []
    return [
        pytest.param(t, f, id=f"{t.stem}-{f.stem}")
        for t in sorted((GOTMPL / "templates").glob("*.gotmpl"))
        for f in sorted((GOTMPL / "fixtures").glob("*.json"))
    ]


def _source(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "surrogateescape")


@needs_corpus
@pytest.mark.parametrize("template_path, fixture", _corpus_cases())
def test_corpus_properties(template_path: Path, fixture: Path):
    """(1), (2) and (3) (on up to 12 paths) for every data the template renders for the
    fixture's request (one, or one per turn of the legacy mode), and the conversation's
    segments join to ``render_conversation``'s prompt."""
    source = _source(template_path)
    render, render_segments, pieces, metadata = C.compiled(source, "go", "ollama")
    request = json.loads(fixture.read_text(encoding="utf-8"))
    datas = C.go_datas(render, metadata, request)
    for data in datas:
        C.check_all(render, render_segments, pieces, source, data, _twelve)
    t = _template(source)
    call = dict(tools=request.get("tools"), think=request.get("think"), now="2024-07-26")
    want = C.outcome(lambda m: t.render_conversation(m, **call), request.get("messages"))
    got = C.outcome(
        lambda m: text_of(t.render_conversation(m, segments=True, **call)), request.get("messages")
    )
    assert want == got


def _twelve(paths: list) -> list:
    step = max(1, len(paths) // 12)
    return paths[::step][:12]


_TEMPLATES: dict = {}


def _template(source: str):
    if source not in _TEMPLATES:
        _TEMPLATES[source] = compile_template(source, dialect="go", profile="ollama")
    return _TEMPLATES[source]


def test_deepcopied_data_renders_alike():
    """The properties compare renders of copies of the data (copy.deepcopy of the views)."""
    t = compile_template(CHATML, dialect="go", profile="ollama")
    data = ollama.template_values(MESSAGES, think=True)
    assert t.render(copy.deepcopy(data)) == t.render(data)


def test_cli_render_segments_of_a_go_conversation(tmp_path, capsys):
    from tmpl2py.cli import main

    template = tmp_path / "t.gotmpl"
    template.write_text(CHATML, encoding="utf-8")
    context = tmp_path / "c.json"
    context.write_text(json.dumps({"messages": MESSAGES}), encoding="utf-8")
    assert main(["render", str(template), "--context", str(context), "--segments", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    t = compile_template(CHATML, dialect="go", profile="ollama")
    assert "".join(r["text"] for r in records) == t.render_conversation(MESSAGES)
    content = next(r for r in records if r["text"] == "Hello!")
    assert content["kind"] == "data" and ["Messages", 2, "Content"] in content["paths"]
    generate = tmp_path / "g.json"
    generate.write_text(json.dumps({"prompt": "Hi"}), encoding="utf-8")
    assert main(["render", str(template), "--context", str(generate), "--segments"]) == 2
