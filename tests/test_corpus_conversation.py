"""The conversation entry point's options on the shared Jinja corpus, against live transformers.

Every template x fixture of ../shared/corpus/jinja goes through ``render_conversation`` and
transformers' ``render_jinja_template`` with:

- ``return_assistant_tokens_mask=True``: the same text and the same ``{% generation %}`` spans;
- ``continue_final_message``: ``True`` on the fixture as it is (its final message is often a
  user's); ``True``, alone and with the spans, on the fixture cut after its last assistant
  message (so most templates see an assistant message to continue); ``"reasoning_content"``,
  ``"thinking"`` (an alias transformers fills in) and ``"content"`` on the fixture cut after
  its last assistant message with reasoning.

Outcomes compare as in test_corpus_jinja: the same text, or the same exception type and message.
"""

from __future__ import annotations

import json
import re
from typing import Optional

import pytest

from tmpl2py_paths import SHARED
from reference import ours_conversation, ref_conversation, same_outcome

CORPUS = SHARED / "corpus" / "jinja"

#: variant id -> (where to cut the conversation, options). Cuts: "" keeps it as it is;
#: "assistant" ends it with its last assistant message; "reasoning" with its last assistant
#: message that carries reasoning (only the reasoning_content fixture has one).
CONTINUE_VARIANTS = {
    "as-is": ("", {"continue_final_message": True}),
    "assistant": ("assistant", {"continue_final_message": True}),
    "assistant-spans": (
        "assistant",
        {"continue_final_message": True, "return_assistant_tokens_mask": True},
    ),
    "reasoning_content": ("reasoning", {"continue_final_message": "reasoning_content"}),
    "thinking": ("reasoning", {"continue_final_message": "thinking"}),
    "reasoning-content": ("reasoning", {"continue_final_message": "content"}),
}


def _pairs() -> list:
    if not CORPUS.exists():
        return []
    fixtures = sorted(p.stem for p in (CORPUS / "fixtures").glob("*.json"))
    return [(t.stem, f) for t in sorted((CORPUS / "templates").glob("*.jinja")) for f in fixtures]


_SKIP = pytest.mark.skip(reason="../shared/corpus/jinja is absent: shared-corpus cases skipped")


def _span_cases() -> list:
    if not CORPUS.exists():
        return [pytest.param(None, None, marks=_SKIP)]
    return [pytest.param(t, f, id=f"{t}/{f}") for t, f in _pairs()]


def _continue_cases() -> list:
    if not CORPUS.exists():
        return [pytest.param(None, None, None, marks=_SKIP)]
    cases = []
    for stem, fixture in _pairs():
        context = _load(stem, fixture)[1]
        for variant, (cut, _) in CONTINUE_VARIANTS.items():
            if _cut(context, cut) is not None:  # a variant that applies to this fixture
                cases.append(pytest.param(stem, fixture, variant, id=f"{stem}/{fixture}/{variant}"))
    return cases


def _load(stem: str, fixture: str) -> tuple[str, dict]:
    source = (CORPUS / "templates" / f"{stem}.jinja").read_bytes().decode("utf-8")
    context = json.loads((CORPUS / "fixtures" / f"{fixture}.json").read_text(encoding="utf-8"))
    return source, context


def _cut(context: dict, cut: str) -> Optional[dict]:
    """The context with its conversation ended after the last message the cut asks for
    (None when it has no such message)."""
    if not cut:
        return context
    messages = context["messages"]
    wanted = [
        i
        for i, m in enumerate(messages)
        if m.get("role") == "assistant"
        and (
            cut == "assistant"
            or any(k in m for k in ("reasoning_content", "thinking", "reasoning"))
        )
    ]
    if not wanted:
        return None
    return {**context, "messages": messages[: wanted[-1] + 1]}


def _check(source: str, context: dict, **options) -> None:
    ref = ref_conversation(source, context, **options)
    ours = ours_conversation(source, context, **options)
    assert same_outcome(
        ours, ref
    ), f"\nexpected: {str(ref[1])[:2000]!r}\n     got: {str(ours[1])[:2000]!r}"


@pytest.mark.parametrize("stem,fixture", _span_cases())
def test_generation_spans(stem: str, fixture: str) -> None:
    source, context = _load(stem, fixture)
    _check(source, context, return_assistant_tokens_mask=True)


@pytest.mark.parametrize("stem,fixture,variant", _continue_cases())
def test_continue_final_message(stem: str, fixture: str, variant: str) -> None:
    source, context = _load(stem, fixture)
    cut, options = CONTINUE_VARIANTS[variant]
    _check(source, _cut(context, cut), **options)


def test_the_corpus_exercises_generation_spans() -> None:
    """At least one corpus template records spans (else the span test above proves little)."""
    if not CORPUS.exists():
        pytest.skip("../shared/corpus/jinja is absent: shared-corpus cases skipped")
    recorded = 0
    for stem, fixture in _pairs():
        source, context = _load(stem, fixture)
        if not re.search(r"\{%[-+]?\s*generation", source):
            continue
        outcome = ref_conversation(source, context, return_assistant_tokens_mask=True)
        if outcome[0] == "ok" and outcome[1][1]:
            recorded += 1
    assert recorded > 0
