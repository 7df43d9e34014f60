"""Run one Go template through tmpl2py and through the Go reference, and compare outcomes.

The reference is tests/goref (Go's own text/template with Ollama's setup), reached through
``tests/goref_client.py``. An :class:`Outcome` is one of

* ``ok``       the rendered text;
* ``parse``    rejected when parsing (Go's parse error) / our ``CompileError``;
* ``exec``     failed while executing (Go's exec error) / our ``runtime.gotmpl.ExecError``;
  the whole messages are compared, Go's prefix included (``template: :LINE:COL: executing
  "NAME" at <NODE>: ``), except for the kinds listed in :data:`SUFFIX_ONLY`;
* ``request``  input Ollama rejects (JSON binding, think value) / our ``ValueError`` /
  ``TypeError`` (``runtime.ollama.RequestError`` is a ValueError);
* ``internal`` ours only: any other exception (a bug of the compiler, the runtime or the
  generated module);
* ``timeout``  ours only: the render did not finish within :data:`TIMEOUT_S`.

Pointer addresses Go prints (``0xc000012345``) are masked on both sides before comparing.

Named ``godiff`` (not ``differential``): pytest puts several test folders on ``sys.path``.
"""

from __future__ import annotations

import copy
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from tmpl2py_paths import ROOT, SHARED  # noqa: F401  (puts ROOT on sys.path)

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # tests/property: the harness
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import goref_client  # noqa: E402
import harness as H  # noqa: E402
from harness import Outcome, Timeout  # noqa: E402,F401  (the dialect's names for them)
from tmpl2py.compiler import CompileError, compile_template  # noqa: E402
from tmpl2py.runtime.go.execute import ExecError  # noqa: E402

NOW = "2024-07-26"
TIMEOUT_S = H.TIMEOUT_S
CORPUS = SHARED / "corpus" / "gotmpl"

# TMPL2PY_GO_FAST_COMPILE=1 (or TMPL2PY_FAST_COMPILE=1, both dialects): skip black when
# compiling (harness.skip_black_from_env). Only for long exploratory runs, where black costs
# ~80% of a compile. Never set in ci.
H.skip_black_from_env("TMPL2PY_GO_FAST_COMPILE", "TMPL2PY_FAST_COMPILE")


def go_available() -> bool:
    return goref_client.go_available()


def reference() -> goref_client.GoReference:
    return goref_client.get_reference()


# ----------------------------------------------------------------------------- reference


def _ref_outcome(ans: tuple) -> Outcome:
    ok, text = ans
    if ok:
        return Outcome("ok", text)
    kind, _, msg = text.partition(": ")
    if kind not in ("parse", "exec", "request"):
        kind, msg = "exec", text
    return Outcome(kind, msg)


def reference_plain(source: str, data: Any) -> Outcome:
    return _ref_outcome(reference().plain(source, data))


def reference_ollama(source: str, request: dict) -> Outcome:
    return _ref_outcome(reference().ollama(source, request, now=NOW))


# ----------------------------------------------------------------------------- ours


def _internal(e: BaseException) -> Outcome:
    return Outcome("internal", f"{type(e).__name__}: {H.message_of(e)}", where=H.where(e))


def _compile_failure(e: BaseException) -> Outcome:
    if isinstance(e, CompileError):
        return Outcome("parse", e.message)
    return _internal(e)  # a crash of the compiler itself


def ours_compile(source: str, profile: str) -> Any:
    """Our compiled template, or an Outcome when compiling fails."""
    return H.attempt(
        lambda: compile_template(source, dialect="go", profile=profile), _compile_failure
    )


@lru_cache(maxsize=64)
def ours_compile_cached(source: str, profile: str) -> Any:
    return ours_compile(source, profile)


def _run(fn: Any, request_errors: bool) -> Outcome:
    def failure(e: BaseException) -> Outcome:
        if isinstance(e, ExecError):
            return Outcome("exec", str(e))
        if request_errors and isinstance(e, (ValueError, TypeError)):
            return Outcome("request", str(e), where=H.where(e))
        return _internal(e)

    return H.rendered(fn, failure)


def ours_plain(source: str, data: Any, compiled: Any = None) -> Outcome:
    tmpl = ours_compile(source, "plain") if compiled is None else compiled
    if isinstance(tmpl, Outcome):
        return tmpl
    data = copy.deepcopy(data)
    return _run(lambda: tmpl.render(data), False)


def ours_ollama(source: str, request: dict, compiled: Any = None) -> Outcome:
    tmpl = ours_compile(source, "ollama") if compiled is None else compiled
    if isinstance(tmpl, Outcome):
        return tmpl
    req = copy.deepcopy(request)
    return _run(
        lambda: tmpl.render_conversation(
            req.get("messages"), tools=req.get("tools"), think=req.get("think"), now=NOW
        ),
        True,
    )


def outcomes(profile: str, source: str, data: Any, compiled: Any = None) -> tuple:
    """(Go's outcome, ours) for one case: ``data`` for ``plain``, a request for ``ollama``."""
    if profile == "plain":
        return reference_plain(source, data), ours_plain(source, data, compiled)
    return reference_ollama(source, data), ours_ollama(source, data, compiled)


def reference_generate(source: str, request: dict, modelfile: Optional[dict] = None) -> Outcome:
    """Ollama's /api/generate prompt (tests/goref op "generate"); a ``template`` key of the
    request replaces ``source``, as Ollama uses the request's template."""
    return _ref_outcome(reference().generate(source, request, now=NOW, modelfile=modelfile))


def reference_chat(source: str, request: dict, modelfile: Optional[dict] = None) -> Outcome:
    return _ref_outcome(reference().ollama(source, request, now=NOW, modelfile=modelfile))


_GENERATE_KEYS = ("suffix", "system", "images", "think", "raw", "context")


def ours_generate(source: str, request: dict, modelfile: Optional[dict] = None) -> Outcome:
    """``render_generate`` of ``source`` (or of the request's own ``template``)."""
    req = copy.deepcopy(request)
    in_request = bool(req.get("template"))
    tmpl = ours_compile_cached(req["template"] if in_request else source, "ollama")
    if isinstance(tmpl, Outcome):
        return tmpl
    options = {k: req[k] for k in _GENERATE_KEYS if k in req}
    if in_request:
        options["template_in_request"] = True
    mf = copy.deepcopy(modelfile)
    return _run(
        lambda: tmpl.render_generate(req.get("prompt"), modelfile=mf, now=NOW, **options), True
    )


def ours_chat(source: str, request: dict, modelfile: Optional[dict] = None) -> Outcome:
    """``render_conversation`` with the Modelfile defaults (``modelfile=``)."""
    tmpl = ours_compile_cached(source, "ollama")
    if isinstance(tmpl, Outcome):
        return tmpl
    req, mf = copy.deepcopy(request), copy.deepcopy(modelfile)
    return _run(
        lambda: tmpl.render_conversation(
            req.get("messages"), tools=req.get("tools"), think=req.get("think"), now=NOW,
            modelfile=mf,
        ),
        True,
    )


# ----------------------------------------------------------------------------- comparison

# Pointer addresses as fmt prints them. %v / %p / %#x give 0x + hex (any address); the
# integer verbs print the bare number: the reference is built with a fixed heap base
# (goref_client.GOEXPERIMENTS), so its addresses are 0xc000000000..0xc0ffffffff, like the
# one ours prints (0xc000010000), and only that range is masked in these forms:
# %x c0xxxxxxxx, %X C0XXXXXXXX, %d 824633720832..828928688127, %o 140[0-3]xxxxxxxxxx,
# %b 11000000 + 32 bits. Such a number may follow an escape that ends in a digit or a hex
# letter (urlquery "%28", js "\u0026"), which is why an escape counts as a boundary.
_AFTER = r"(?:(?<![0-9A-Za-z])|(?<=%[0-9A-F]{2})|(?<=\\u[0-9A-F]{4})|(?<=\\x[0-9a-f]{2}))"
_ADDRESS = re.compile(
    r"0[xX][0-9a-fA-F]{6,16}"
    + "|"
    + _AFTER
    + r"(?:c0[0-9a-f]{8}|C0[0-9A-F]{8}|82[4-8][0-9]{9}|140[0-3][0-7]{10}|11000000[01]{32})"
    + r"(?![0-9A-Za-z])"
)


def mask(text: str) -> str:
    """``text`` with every pointer address replaced by ``0x?`` (see _ADDRESS)."""

    def one(m: re.Match) -> str:
        s = m.group()
        if s[0] == "8" and not 824633720832 <= int(s) <= 828928688127:
            return s  # a decimal number outside the address range: not masked
        return "0x?"

    return _ADDRESS.sub(one, text)


def divergence(ref: Outcome, ours: Outcome) -> Optional[str]:
    """None when the outcomes agree, else a description of how they differ."""
    if ours.kind == "timeout" and ref.kind != "ok":
        return None  # ours is slow on an input Go rejects: not a divergence of the result
    if ref.kind != ours.kind:
        return f"go {ref.short()}\n  ours {ours.short()}"
    if ref.kind == "ok" and mask(ref.value) != mask(ours.value):
        return f"output differs:\n  go   {ref.value!r}\n  ours {ours.value!r}"
    if ref.kind == "exec" and not exec_messages_agree(ref.value, ours.value):
        return f"exec message differs:\n  go   {ref.value!r}\n  ours {ours.value!r}"
    return None


# Go execution errors whose prefix ("template: :LINE:COL: executing "NAME" at <NODE>: ")
# ours does not reproduce: for these only, ours (without a prefix) must be Go's message
# suffix. Each entry: a pattern of Go's message after the prefix, and why.
_AND_OR = (
    "a range over (or a field of) a pipeline ending in and / or with arguments: Go reports"
    " the last operand and / or evaluated, which depends on the values"
    " (nodes.last_evaluated gives None)"
)
SUFFIX_ONLY: tuple = (
    (re.compile(r"range can't iterate over "), _AND_OR),
    (re.compile(r"can't use .* to iterate over more than one variable"), _AND_OR),
    (re.compile(r"can't evaluate field |nil pointer evaluating "), _AND_OR),
    (
        re.compile(r"exceeded maximum template depth \(100000\)$"),
        "Python's stack ends long before Go's depth of 100,000 (api._too_deep): the"
        " {{template}} call Go fails at is the one 100,000 calls deep, not modelled",
    ),
)


def exec_messages_agree(go: str, ours: str) -> bool:
    """Go's whole error text equals ours; or ours is the bare message of a SUFFIX_ONLY kind."""
    go, ours = mask(go), mask(ours)
    if go == ours:
        return True
    if not ours or ours.startswith("template: ") or not go.endswith(ours):
        return False
    return any(pattern.match(ours) for pattern, _why in SUFFIX_ONLY)


def internal_crash(ref: Outcome, ours: Outcome) -> Optional[str]:
    """Ours raised something that is not CompileError / ExecError / a request error."""
    if ours.kind == "internal":
        return f"internal error: {ours.short()}\n  go {ref.short()}"
    if ours.kind == "timeout" and ref.kind == "ok":
        return f"ours timed out; go {ref.short()}"
    if ours.kind == "request" and ref.kind != "request":
        return f"ours raised {ours.short()} on a request Go accepts; go {ref.short()}"
    return None


_GO_POS = re.compile(r"template: [^:]*:\d+(:\d+)?: ")


def signature(ref: Outcome, ours: Outcome) -> str:
    """A coarse key grouping divergences by likely cause."""
    if ref.kind == ours.kind == "ok":
        return "output"
    if ref.kind == ours.kind == "exec":
        return "exec-message"
    s = f"{ref.kind} -> {ours.kind}"
    if ours.kind == "internal":
        s += f" {ours.value.split(':')[0]} @ {ours.where}"
    return s
