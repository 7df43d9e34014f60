"""compiler.inspect: variables, fields, roles, capabilities and raises read off the IR."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tmpl2py_paths import ROOT, SHARED

from tmpl2py.compiler import CompileError, compile_template
from tmpl2py.cli import main
from tmpl2py.inspect import CAPABILITIES, format_json, format_text, inspect_template

QWEN = (ROOT / "examples" / "seed001_qwen.jinja").read_text(encoding="utf-8")
COMMAND = (ROOT / "examples" / "seed000_command.jinja").read_text(encoding="utf-8")


def _d(source: str, dialect: str = "jinja") -> dict:
    return inspect_template(source, dialect, "t").as_dict()


def test_qwen_seed() -> None:
    d = _d(QWEN)
    assert d["required"] == ["messages"]
    assert d["optional"] == ["add_generation_prompt", "tools"]
    assert d["message_fields"] == ["content", "role", "tool_calls"]
    assert "messages[].tool_calls[].function.arguments" in d["fields"]
    assert d["roles"] == ["assistant", "system", "tool", "user"]
    caps = {c: bool(v) for c, v in d["capabilities"].items()}
    assert caps == {
        "system_role": True,
        "tools": True,
        "tool_calls": True,
        "tool_results": True,
        "reasoning": False,
        "documents": False,
        "generation_prompt": True,
        "content_parts": False,
        "generation_spans": False,
    }
    assert d["raises"] == []


def test_command_seed() -> None:
    d = _d(COMMAND)
    assert {"messages", "bos_token"} <= set(d["required"])
    # `set x = x | default(...)` and `x is defined` guards make these optional
    assert {"skip_thinking", "convert_first_system_msg", "enable_thinking", "documents"} <= set(d["optional"])
    assert {"reasoning_content", "tool_call_id", "tool_calls"} <= set(d["message_fields"])
    assert {"system", "user", "assistant", "tool", "chatbot"} <= set(d["roles"])  # through `| lower`
    assert d["capabilities"]["reasoning"] and d["capabilities"]["documents"]
    assert "namespace" in d["globals"]


def test_guards_decide_required_or_optional() -> None:
    src = (
        "{% if a is defined %}{{ a.x }}{% endif %}"  # guarded by `is defined`
        "{{ b | default('') }}"  # default
        "{% if c %}{% for i in c %}{{ i }}{% endfor %}{% endif %}"  # `if c` guard
        "{{ d }}"  # printed outside any guard
        "{% if e and e.y %}{% endif %}"  # `and` guards its right side
        "{{ f.z if f else '' }}"  # conditional expression
        "{% if g is not defined %}{% set g = 1 %}{% endif %}{{ g }}"  # read after a set
        "{% if h == 'x' %}{% endif %}"  # a bare comparison
        "{% for m in messages if m.role != 'system' %}{% endfor %}"
        "{% set k = 3 %}{{ k }}"  # set before read: not a variable
    )
    d = _d(src)
    assert d["required"] == ["d", "messages"]
    assert d["optional"] == ["a", "b", "c", "e", "f", "g", "h"]
    assert "k" not in d["variables"]
    assert d["roles"] == ["system"]


def test_raise_messages_keep_constant_parts() -> None:
    src = (
        "{% for message in messages %}"
        "{% if message['role'] not in ['user', 'assistant'] %}"
        "{{ raise_exception('Role ' ~ message['role'] ~ ' is not supported at ' + loop.index|string) }}"
        "{% endif %}{% endfor %}\n"
        "{% if messages|length == 0 %}{{ raise_exception('empty!') }}{% endif %}\n"
        "{% if x %}{{ y | nosuchfilter }}{% endif %}"
    )
    d = _d(src)
    assert [(r["line"], r["message"], r["kind"]) for r in d["raises"]] == [
        (1, "Role {...} is not supported at {...}", "raise_exception"),
        (2, "empty!", "raise_exception"),
        (3, "No filter named 'nosuchfilter' found.", "unknown-filter"),
    ]
    assert "raise_exception" in d["globals"] and "raise_exception" not in d["variables"]


def test_fields_follow_sets_slices_filters_and_get() -> None:
    src = (
        "{% set loop_messages = messages[1:] %}{% set system = messages[0] %}{{ system['content'] }}"
        "{% for m in loop_messages | reverse %}{{ m.get('reasoning_content') }}"
        "{% for part in m.content %}{% if part.type == 'image' %}{{ part.image_url.url }}{% endif %}{% endfor %}"
        "{% endfor %}"
        "{{ (messages | selectattr('role', 'equalto', 'developer') | first).content }}"
        "{% for t in tools %}{{ t.function.name | tojson }}{% endfor %}"
        "{% generation %}x{% endgeneration %}{{ documents[0].title }}"
    )
    d = _d(src)
    assert d["message_fields"] == ["content", "reasoning_content", "role"]
    assert {"messages[].content[].image_url.url", "tools[].function.name", "documents[].title"} <= set(d["fields"])
    assert "developer" in d["roles"]
    caps = d["capabilities"]
    assert caps["system_role"] == ["handles role 'developer'"]
    assert caps["reasoning"] == ["reads message field reasoning_content"]
    assert caps["content_parts"] == ["compares a content type to 'image'", "reads parts of message content"]
    assert caps["generation_spans"] and caps["documents"] and caps["tools"]
    assert not caps["generation_prompt"]


def test_text_and_json_formats() -> None:
    report = inspect_template(QWEN, "jinja", "qwen")
    text = format_text(report)
    assert text.startswith("template: qwen (jinja)")
    assert "messages               required" in text
    assert "message fields: content, role, tool_calls" in text
    assert "generation prompt  yes  reads add_generation_prompt" in text
    doc = json.loads(format_json(report))
    assert list(doc["capabilities"]) == list(CAPABILITIES)
    assert doc["variables"]["tools"] == {"required": False, "lines": [1, 7, 20, 22]}


def test_cli_inspect_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = ROOT / "examples" / "seed001_qwen.jinja"
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "variables:" in out and "can raise:" in out
    assert main(["inspect", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["name"] == "default" and doc["required"] == ["messages"] and doc["origin"] == str(path)

    config = tmp_path / "tokenizer_config.json"
    config.write_text(
        json.dumps(
            {
                "chat_template": [
                    {"name": "default", "template": "{{ messages[0].content }}"},
                    {"name": "rag", "template": "{{ documents }}{{ raise_exception('no docs') }}"},
                ],
                "eos_token": "</s>",
            }
        ),
        encoding="utf-8",
    )
    assert main(["inspect", str(config), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in doc["templates"]] == ["default", "rag"]
    assert doc["templates"][1]["raises"][0]["message"] == "no docs"
    assert doc["templates"][0]["special_tokens"] == {"eos_token": "</s>"}
    assert main(["inspect", str(config), "--name", "rag"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[rag]\n") and "line 1: no docs" in out


def test_cli_inspect_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% if x %}", encoding="utf-8")
    assert main(["inspect", str(bad)]) == 3
    assert "unclosed-block" in capsys.readouterr().err
    assert main(["inspect", str(tmp_path / "missing.jinja")]) == 2
    with pytest.raises(CompileError):
        inspect_template("{{ x | nosuch }}")


@pytest.mark.skipif(not (SHARED / "corpus" / "jinja" / "templates").exists(), reason="../shared is absent")
def test_every_shared_template_inspects() -> None:
    for path in sorted((SHARED / "corpus" / "jinja" / "templates").glob("*.jinja")):
        source = path.read_bytes().decode("utf-8")
        try:
            compile_template(source)
        except CompileError:
            continue
        d = inspect_template(source, "jinja", path.name).as_dict()
        assert "messages" in d["variables"], path.name
        assert d["message_fields"], path.name


# ----------------------------------------------------------------------------- Go


def _go_or_skip() -> None:
    try:
        compile_template("{{ .Prompt }}", dialect="go")
    except Exception as e:  # noqa: BLE001 - the Go frontend is being written elsewhere
        pytest.skip(f"the Go frontend does not compile yet: {e}")


def test_go_template(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _go_or_skip()
    src = (
        "{{ if .System }}<|system|>{{ .System }}{{ end }}"
        "{{ if .Tools }}{{ range .Tools }}{{ .Function.Name }}{{ end }}{{ end }}"
        "{{ range .Messages }}{{ if eq .Role \"user\" }}U: {{ .Content }}{{ else if eq .Role \"tool\" }}"
        "T: {{ .Content }}{{ end }}{{ range .ToolCalls }}{{ .Function.Name }}{{ end }}{{ .Thinking }}{{ end }}"
    )
    d = _d(src, "go")
    assert set(d["variables"]) == {"System", "Tools", "Messages"}
    assert d["required"] == []
    assert {"content", "role", "tool_calls", "thinking"} <= set(d["message_fields"])
    assert d["roles"] == ["tool", "user"]
    caps = d["capabilities"]
    assert caps["system_role"] and caps["tools"] and caps["tool_calls"] and caps["tool_results"] and caps["reasoning"]
    assert d["mode"] == "messages"

    modelfile = tmp_path / "Modelfile"
    modelfile.write_text('FROM x\nTEMPLATE """' + src + '"""\nPARAMETER stop "<|end|>"\n', encoding="utf-8")
    assert main(["inspect", str(modelfile)]) == 0
    out = capsys.readouterr().out
    assert "messages mode" in out and "stop (Modelfile): '<|end|>'" in out
