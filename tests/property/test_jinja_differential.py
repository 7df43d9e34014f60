"""Property tests: compiled templates behave exactly like transformers' Jinja environment.

(a) ``test_render_matches_reference``: for a generated template and context,
    ``compile_template(src).render(ctx)`` equals
    ``_compile_jinja_template(src).render(**ctx)``, or both fail in the same category
    (``CompileError`` <-> a compile-time rejection; otherwise the same exception class name,
    and the same message for a ``TemplateError`` from ``raise_exception``).
(b) ``test_compile_is_deterministic``: compiling twice gives identical ``python_source``
    (or the same ``CompileError``).
(c) ``test_generated_source_compiles``: ``compile(t.python_source, ...)`` works, and the
    module imports nothing but ``runtime`` and the standard library.
(d) ``test_no_internal_crash``: with contexts of arbitrary JSON values, rendering never raises
    an exception the reference does not also raise (an AttributeError, NameError,
    AssertionError... from compiler/, runtime/ or the generated module is a bug).
(e) ``test_corpus_template``: every template of the shared corpus, on generated Hugging Face
    conversations, through ``render_conversation`` vs ``render_jinja_template``.

Profiles (``TMPL2PY_HYPOTHESIS_PROFILE=ci|deep``) and per-property budgets are in conftest.py.
With ``TMPL2PY_DIVERGENCE_LOG=path`` divergences are logged as JSON lines instead of failing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis")
pytest.importorskip("jinja2")
pytest.importorskip("transformers")

from hypothesis import given, note  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import differential as D  # noqa: E402
import harness as H  # noqa: E402
import strategies as S  # noqa: E402

from tmpl2py.compiler import CompileError, compile_template  # noqa: E402

profile = H.profile
_REPORTER = H.Reporter(D.signature, "context", "reference")
progress = _REPORTER.progress
report = _REPORTER.report


def _against_reference(prop: str, source: str, context: dict, problem_of: Any) -> None:
    """Render through the reference and ours; report ``problem_of(ref, ours)`` (not when the
    reference itself times out)."""
    progress(prop)
    ref = D.reference_render(source, context)
    if ref.kind == "timeout":
        return
    ours = D.ours_render(source, context)
    note(f"reference: {ref.short()}\nours: {ours.short()}")
    report(prop, problem_of(ref, ours), source, context, ref, ours)


# ----------------------------------------------------------------------------- (a)


@profile("render")
@given(source=S.templates(), context=S.contexts())
def test_render_matches_reference(source: str, context: dict) -> None:
    _against_reference("render", source, context, D.divergence)


# ----------------------------------------------------------------------------- (b)


def _compile(source: str) -> Any:
    try:
        return compile_template(source)
    except CompileError as e:
        return ("CompileError", e.code, e.message, e.line, e.column)


@profile("deterministic")
@given(source=S.templates())
def test_compile_is_deterministic(source: str) -> None:
    progress("deterministic")
    report("deterministic", H.compilations_differ(_compile(source), _compile(source)), source)


# ----------------------------------------------------------------------------- (c)


@profile("compiles")
@given(source=S.templates())
def test_generated_source_compiles(source: str) -> None:
    progress("compiles")
    tmpl = _compile(source)
    if isinstance(tmpl, tuple):
        return
    problem = H.generated_module_problem(tmpl.python_source)
    report("compiles", problem, source)


# ----------------------------------------------------------------------------- (d)


@profile("crash")
@given(source=S.templates(chaotic=True), context=S.contexts(chaos=True))
def test_no_internal_crash(source: str, context: dict) -> None:
    _against_reference("crash", source, context, D.internal_crash)


# ----------------------------------------------------------------------------- (e)


def _corpus() -> list:
    return H.corpus_params(D.CORPUS_TEMPLATES, "*.jinja")


@pytest.mark.parametrize("path", _corpus())
def test_corpus_template(path: Path) -> None:
    source = path.read_bytes().decode("utf-8")
    ours_tmpl = D.ours_compile(source)

    @profile("corpus")
    @given(call=S.hf_calls())
    def check(call: dict) -> None:
        progress("corpus")
        ref = D.reference_conversation(source, call)
        if ref.kind == "timeout":
            return
        ours = D.ours_conversation(source, call, compiled=ours_tmpl)
        note(f"reference: {ref.short()}\nours: {ours.short()}")
        report("corpus", D.divergence(ref, ours), source, call, ref, ours)

    check()
