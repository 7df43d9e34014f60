"""Conversation sessions (tmpl2py.conversation): at every step the session's prompt equals a
full render of the same conversation (Hypothesis), errors included; appends render only the
new messages where the template qualifies, and say why not where it does not.

Shared-corpus templates are read from ../shared (or $TMPL2PY_SHARED); they skip without it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import reference  # noqa: F401  (skips without transformers)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tmpl2py_paths import SHARED
from transformers.utils import chat_template_utils as ctu  # noqa: E402

from tmpl2py import compile_template
from tmpl2py.prefix import conversations, shape_options

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


@pytest.mark.parametrize("name", ["llama3-instruct", "mistral-instruct", "gemma3-instruct"])
def test_go_sessions_fall_back_to_full_renders(name):
    t = compile_template(_corpus(name, GOTMPL, ".gotmpl"), "go", name=name)

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(st.sampled_from(["plain", "tools", "reasoning"]), st.data())
    def check(shape, data):
        messages = data.draw(conversations(shape, "go"))
        session, _ = run_steps(t, messages, shape_options(shape, "go"))
        assert not session.incremental and "Jinja" in session.reason

    check()
