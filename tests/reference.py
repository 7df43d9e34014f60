"""The Jinja reference: transformers' own chat-template environment (a test extra).

``outcome_*`` return ("ok", text) or ("err", "<ExceptionType>: <message>") so results
from both sides compare with ``same_outcome``.
"""

from __future__ import annotations

import copy
import datetime
import re
from typing import Any

import pytest

transformers = pytest.importorskip("transformers", reason="transformers (test extra) is not installed")
from transformers.utils import chat_template_utils as ctu  # noqa: E402

FROZEN = datetime.datetime(2024, 7, 26, 12, 0, 0)


class _FrozenDatetime(datetime.datetime):
    @classmethod
    def now(cls, tz=None):  # type: ignore[override]
        return FROZEN if tz is None else FROZEN.replace(tzinfo=tz)


ctu.datetime = _FrozenDatetime  # strftime_now() looks the name up at call time

#: What a CompileError corresponds to on the reference side (jinja2's own syntax and
#: assertion errors, and Python's SyntaxError for code jinja2 generates but Python refuses).
SYNTAX_ERRORS = {"TemplateSyntaxError", "TemplateAssertionError", "SyntaxError"}


def _describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def ref_render(source: str, context: dict) -> tuple[str, str]:
    try:
        template = ctu._compile_jinja_template(source)
    except Exception as e:  # noqa: BLE001
        return ("err", _describe(e))
    try:
        return ("ok", template.render(**context))
    except Exception as e:  # noqa: BLE001
        return ("err", _describe(e))


def ref_conversation(source: str, fixture: dict, **options: Any) -> tuple[str, Any]:
    """``render_jinja_template`` for one conversation; ``options`` (``continue_final_message``,
    ``return_assistant_tokens_mask``) are added to the fixture's keywords. With
    ``return_assistant_tokens_mask`` the value is ``(text, spans)``, the conversation's
    entries of the two lists transformers returns."""
    ctx = {**copy.deepcopy(fixture), **options}
    messages = ctx.pop("messages")
    tools = ctx.pop("tools", None)
    documents = ctx.pop("documents", None)
    agp = ctx.pop("add_generation_prompt", False)
    try:
        out, spans = ctu.render_jinja_template(
            conversations=[messages], tools=tools, documents=documents, chat_template=source,
            add_generation_prompt=agp, **ctx,
        )
        if options.get("return_assistant_tokens_mask"):
            return ("ok", (out[0], spans[0]))
        return ("ok", out[0])
    except Exception as e:  # noqa: BLE001
        return ("err", _describe(e))


_COMPILED: dict = {}


def compile_cached(source: str, **kw: Any) -> Any:
    """compile_template, memoised per (source, options): many cases share a template."""
    from tmpl2py.compiler import compile_template

    key = (source, tuple(sorted(kw.items())))
    if key not in _COMPILED:
        _COMPILED[key] = compile_template(source, **kw)
    return _COMPILED[key]


def ours_render(source: str, context: dict, **kw: Any) -> tuple[str, str]:
    from tmpl2py.compiler import CompileError

    try:
        template = compile_cached(source, **kw)
    except CompileError as e:
        return ("err", f"CompileError: {e.message}")
    try:
        return ("ok", template.render(context))
    except Exception as e:  # noqa: BLE001
        return ("err", _describe(e))


def ours_conversation(source: str, fixture: dict, **options: Any) -> tuple[str, Any]:
    from tmpl2py.compiler import CompileError

    try:
        template = compile_cached(source)
    except CompileError as e:
        return ("err", f"CompileError: {e.message}")
    ctx = {**copy.deepcopy(fixture), **options}
    messages = ctx.pop("messages")
    try:
        return ("ok", template.render_conversation(messages, **ctx))
    except Exception as e:  # noqa: BLE001
        return ("err", _describe(e))


_JOIN_INDEX = re.compile(r"^sequence item \d+: ")


def same_outcome(ours: tuple[str, str], ref: tuple[str, str]) -> bool:
    """Equal output; or both failed alike: a CompileError where the reference fails to
    compile (the syntax category: parser messages are our own), otherwise the same exception
    type and message (so ``raise_exception`` messages are equal). The item number in
    ``"".join``'s TypeError depends on how output is chunked, and is not compared."""
    if ours[0] != ref[0]:
        return False
    if ours[0] == "ok":
        return ours[1] == ref[1]
    ours_type, _, ours_msg = ours[1].partition(": ")
    ref_type, _, ref_msg = ref[1].partition(": ")
    if ours_type == "CompileError":
        return ref_type in SYNTAX_ERRORS
    if ours_type == ref_type == "TypeError":
        ours_msg, ref_msg = _JOIN_INDEX.sub("", ours_msg), _JOIN_INDEX.sub("", ref_msg)
    return ours_type == ref_type and ours_msg == ref_msg
