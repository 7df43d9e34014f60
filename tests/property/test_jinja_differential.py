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

import ast
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

pytest.importorskip("hypothesis")
pytest.importorskip("jinja2")
pytest.importorskip("transformers")

from hypothesis import given, note, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import differential as D  # noqa: E402
import strategies as S  # noqa: E402

from tmpl2py.compiler import CompileError, compile_template  # noqa: E402

PROFILE = os.environ.get("TMPL2PY_HYPOTHESIS_PROFILE", "ci")
if PROFILE not in ("ci", "deep"):
    PROFILE = "ci"
LOG = os.environ.get("TMPL2PY_DIVERGENCE_LOG")


def profile(prop: str) -> settings:
    return settings(settings.get_profile(f"{PROFILE}.{prop}"))


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


_PROGRESS: dict = {}


def progress(prop: str) -> None:
    """In logging mode, count examples per property in ``<log>.progress`` (for long runs)."""
    if not LOG:
        return
    _PROGRESS[prop] = _PROGRESS.get(prop, 0) + 1
    if _PROGRESS[prop] % 100 == 0:
        with open(f"{LOG}.progress.{os.getpid()}", "w", encoding="utf-8") as fh:
            json.dump(_PROGRESS, fh)


def report(prop: str, problem: Optional[str], source: str, context: Any = None,
           ref: Optional[D.Outcome] = None, ours: Optional[D.Outcome] = None) -> None:
    """Fail with a readable report, or (in logging mode) append the case to the log."""
    if problem is None:
        return
    if LOG:
        record = {
            "property": prop,
            "signature": D.signature(ref, ours) if ref and ours else problem.split("\n")[0][:200],
            "problem": problem,
            "template": source,
            "context": _jsonable(context),
            "reference": ref.short() if ref else None,
            "ours": ours.short() if ours else None,
        }
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        return
    ctx = json.dumps(context, ensure_ascii=False, default=repr, indent=1) if context is not None else ""
    pytest.fail(f"{problem}\n--- template ---\n{source}\n--- context ---\n{ctx}", pytrace=False)


# ----------------------------------------------------------------------------- (a)


@profile("render")
@given(source=S.templates(), context=S.contexts())
def test_render_matches_reference(source: str, context: dict) -> None:
    progress("render")
    ref = D.reference_render(source, context)
    if ref.kind == "timeout":
        return
    ours = D.ours_render(source, context)
    note(f"reference: {ref.short()}\nours: {ours.short()}")
    report("render", D.divergence(ref, ours), source, context, ref, ours)


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
    first, second = _compile(source), _compile(source)
    if isinstance(first, tuple) or isinstance(second, tuple):
        problem = None if first == second else f"compile outcomes differ: {first!r} / {second!r}"
    elif first.python_source != second.python_source:
        import difflib

        diff = "\n".join(difflib.unified_diff(
            first.python_source.splitlines(), second.python_source.splitlines(), lineterm="", n=1))
        problem = f"python_source differs between two compilations:\n{diff}"
    else:
        problem = None
    report("deterministic", problem, source)


# ----------------------------------------------------------------------------- (c)


def _allowed_import(module: str) -> bool:
    top = module.split(".")[0]
    return module.startswith("tmpl2py.runtime.") or top == "__future__" or top in sys.stdlib_module_names


@profile("compiles")
@given(source=S.templates())
def test_generated_source_compiles(source: str) -> None:
    progress("compiles")
    tmpl = _compile(source)
    if isinstance(tmpl, tuple):
        return
    problem = None
    try:
        code = compile(tmpl.python_source, "<generated>", "exec")
        assert code is not None
        tree = ast.parse(tmpl.python_source)
    except SyntaxError as e:
        problem = f"the generated module does not compile: {e}"
    else:
        bad = [
            name
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
            if not _allowed_import(name)
        ]
        render_fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "render"]
        if bad:
            problem = f"the generated module imports {bad}"
        elif len(render_fns) != 1:
            problem = "the generated module has no top-level render() function"
    report("compiles", problem, source)


# ----------------------------------------------------------------------------- (d)


@profile("crash")
@given(source=S.templates(chaotic=True), context=S.contexts(chaos=True))
def test_no_internal_crash(source: str, context: dict) -> None:
    progress("crash")
    ref = D.reference_render(source, context)
    if ref.kind == "timeout":
        return
    ours = D.ours_render(source, context)
    note(f"reference: {ref.short()}\nours: {ours.short()}")
    report("crash", D.internal_crash(ref, ours), source, context, ref, ours)


# ----------------------------------------------------------------------------- (e)


def _corpus() -> list:
    if not D.CORPUS_TEMPLATES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(
            reason=f"shared corpus not found at {D.CORPUS_TEMPLATES}"), id="no-shared-corpus")]
    return [pytest.param(p, id=p.stem) for p in sorted(D.CORPUS_TEMPLATES.glob("*.jinja"))]


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
