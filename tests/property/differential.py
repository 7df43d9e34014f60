"""Run one template through tmpl2py and through the reference, and compare the outcomes.

The reference is transformers' own chat-template environment:
``transformers.utils.chat_template_utils._compile_jinja_template(source).render(**context)``
for ``render`` and ``render_jinja_template(...)[0][0]`` for ``render_conversation``.

Both clocks are frozen at 2024-07-26 12:00 (``strftime_now``) when this module is imported,
and ``random`` is reseeded before every render on both sides (the ``random`` filter).

An :class:`Outcome` is one of

* ``ok``            the rendered text;
* ``compile-error`` the template is rejected at compile time (our ``CompileError``; the
  reference's ``TemplateSyntaxError`` / ``TemplateAssertionError``, or the rare ``SyntaxError``
  of a template whose generated Python jinja2 cannot compile);
* ``error``         an exception at render time (or any other exception at compile time),
  compared by class *name*; the message too for a plain ``TemplateError``
  (``raise_exception``);
* ``timeout``       the render did not finish within :data:`TIMEOUT_S`.

Object addresses (``at 0x7f...``) are masked before texts are compared.
"""

from __future__ import annotations

import copy
import datetime as _dt
import random
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
for _p in (ROOT, Path(__file__).resolve().parent):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import jinja2  # noqa: E402,F401
from transformers.utils import chat_template_utils as ctu  # noqa: E402

import harness as H  # noqa: E402
import tmpl2py.runtime.jinja as rt_jinja  # noqa: E402
from harness import Outcome, Timeout  # noqa: E402,F401  (the dialect's names for them)
from tmpl2py.compiler import CompileError, compile_template  # noqa: E402

# TMPL2PY_FAST_COMPILE=1: skip black when compiling (harness.skip_black_from_env), as
# TMPL2PY_GO_FAST_COMPILE does for the Go properties. Only for long exploratory runs: a
# template black would refuse to lay out is then not seen failing. Never set in ci.
H.skip_black_from_env("TMPL2PY_FAST_COMPILE")

SHARED = Path(__file__).resolve().parents[3] / "shared"
CORPUS_TEMPLATES = SHARED / "corpus" / "jinja" / "templates"

FROZEN_DATE = _dt.datetime(2024, 7, 26, 12, 0, 0)
TIMEOUT_S = H.TIMEOUT_S


class _FrozenDatetime(_dt.datetime):
    @classmethod
    def now(cls, tz: Any = None) -> "_dt.datetime":  # type: ignore[override]
        return FROZEN_DATE if tz is None else FROZEN_DATE.replace(tzinfo=tz)


def freeze_clocks() -> None:
    """``strftime_now()`` returns 2024-07-26 12:00 on both sides."""
    ctu.datetime = _FrozenDatetime  # the reference looks the name up at call time
    rt_jinja.CLOCK[0] = lambda: _dt.datetime(2024, 7, 26, 12, 0, 0)


freeze_clocks()

try:  # build the Lark parser now, not inside the first example's deadline
    compile_template("{{ x }}")
except CompileError:  # pragma: no cover (a broken compiler shows up in the tests themselves)
    pass


# repr of a generator/function: " at 0x7f...", also after |upper or |title (" AT 0X7F...")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+", re.IGNORECASE)


def mask(text: str) -> str:
    return _ADDRESS.sub(" at 0x?", text)


def _error(kind: str, exc: BaseException, ours: bool) -> Outcome:
    return Outcome(kind, _type_name(exc), H.message_of(exc), H.where(exc) if ours else "")


def _type_name(exc: BaseException) -> str:
    """The exception's type as the comparison sees it. Our depth limit's error
    (``RenderDepthExceeded``) is a ``RecursionError``: jinja2 lets Python's through where
    ours stops first, so the two count as one type."""
    from tmpl2py.runtime.limits import RenderDepthExceeded

    return "RecursionError" if isinstance(exc, RenderDepthExceeded) else type(exc).__name__


def _ref_error(kind: str) -> Any:
    return lambda e: _error(kind, e, False)


def _our_error(e: BaseException) -> Outcome:
    return _error("error", e, True)


# ----------------------------------------------------------------------------- reference


@lru_cache(maxsize=256)
def _reference_template(source: str) -> Any:
    return ctu._compile_jinja_template(source)


def reference_compile(source: str) -> Any:
    """The reference template, or an Outcome when it does not compile: TemplateSyntaxError /
    TemplateAssertionError, and the odd template whose generated Python jinja2 itself cannot
    compile (SyntaxError), are rejected at compile time."""
    return H.attempt(lambda: _reference_template(source), _ref_error("compile-error"))


def reference_render(source: str, context: dict) -> Outcome:
    tmpl = reference_compile(source)
    if isinstance(tmpl, Outcome):
        return tmpl
    context = copy.deepcopy(context)
    random.seed(1234)
    return H.rendered(lambda: tmpl.render(**context), _ref_error("error"))


def reference_conversation(source: str, call: dict) -> Outcome:
    """``render_jinja_template(conversations=[messages], ...)[0][0]``."""
    tmpl = reference_compile(source)
    if isinstance(tmpl, Outcome):
        return tmpl
    call = copy.deepcopy(call)
    messages = call.pop("messages")
    tools = call.pop("tools", None)
    documents = call.pop("documents", None)
    agp = call.pop("add_generation_prompt", False)
    random.seed(1234)

    def render() -> str:
        out, _ = ctu.render_jinja_template(
            conversations=[messages], tools=tools, documents=documents, chat_template=source,
            add_generation_prompt=agp, **call,
        )
        return out[0]

    return H.rendered(render, _ref_error("error"))


# ----------------------------------------------------------------------------- ours


def _compile_failure(e: BaseException) -> Outcome:
    if isinstance(e, CompileError):
        out = _error("compile-error", e, True)
        out.value = f"CompileError[{e.code}]"
        out.message = e.message
        return out
    return _our_error(e)  # a crash of the compiler itself


def ours_compile(source: str) -> Any:
    """Our compiled template, or an Outcome when compiling fails."""
    return H.attempt(lambda: compile_template(source), _compile_failure)


@lru_cache(maxsize=128)
def ours_compile_cached(source: str) -> Any:
    return ours_compile(source)


def ours_render(source: str, context: dict, compiled: Any = None) -> Outcome:
    tmpl = ours_compile(source) if compiled is None else compiled
    if isinstance(tmpl, Outcome):
        return tmpl
    context = copy.deepcopy(context)
    random.seed(1234)
    return H.rendered(lambda: tmpl.render(context), _our_error)


def ours_conversation(source: str, call: dict, compiled: Any = None) -> Outcome:
    tmpl = ours_compile(source) if compiled is None else compiled
    if isinstance(tmpl, Outcome):
        return tmpl
    call = copy.deepcopy(call)
    messages = call.pop("messages")
    random.seed(1234)
    return H.rendered(lambda: tmpl.render_conversation(messages, **call), _our_error)


# ----------------------------------------------------------------------------- comparison


def divergence(ref: Outcome, ours: Outcome) -> Optional[str]:
    """None when the outcomes agree, else a one-line description of how they differ."""
    if ref.kind != ours.kind:
        return f"reference {ref.short()} / ours {ours.short()}"
    if ref.kind == "ok":
        if mask(ref.value) != mask(ours.value):
            return f"output differs:\n  reference {ref.value!r}\n  ours      {ours.value!r}"
        return None
    if ref.kind == "error":
        if ref.value != ours.value:
            return f"exception differs: reference {ref.short()} / ours {ours.short()}"
        if ref.value == "TemplateError" and mask(ref.message) != mask(ours.message):
            return f"raise_exception message differs: reference {ref.message!r} / ours {ours.message!r}"
    return None


def signature(ref: Outcome, ours: Outcome) -> str:
    """A coarse key grouping divergences by likely cause (for triage and minimisation)."""
    if ref.kind == ours.kind == "ok":
        return "output"
    r = ref.value if ref.kind != "ok" else "ok"
    o = ours.value if ours.kind != "ok" else "ok"
    return f"{ref.kind}:{r} -> {ours.kind}:{o}" + (f" @ {ours.where}" if ours.where else "")


def internal_crash(ref: Outcome, ours: Outcome) -> Optional[str]:
    """Property (d): ours raised an exception the reference does not raise (same class name).

    Any such exception comes from our own code (compiler, runtime or generated module):
    either a crash (AttributeError, NameError, AssertionError, ...) or an error category
    the reference does not have at this point.
    """
    if ours.kind == "error" and not (ref.kind == "error" and ref.value == ours.value):
        return f"ours raised {ours.short()}; reference {ref.short()}"
    if ours.kind == "timeout" and ref.kind != "timeout":
        return f"ours timed out; reference {ref.short()}"
    return None
