"""Optimised and unoptimised compilation render the same bytes (the passes only change speed)."""

from __future__ import annotations

import json

import pytest

from tmpl2py.compiler import compile_template
from tmpl2py_paths import ROOT, SHARED
from test_cases import CASES, load_case

CORPUS = SHARED / "corpus" / "jinja"


def _outcome(template, render):
    try:
        return ("ok", render(template))
    except Exception as e:  # noqa: BLE001
        return ("err", f"{type(e).__name__}: {e}")


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_cases_same_with_and_without_passes(path) -> None:
    context, source = load_case(path)
    try:
        fast, slow = compile_template(source), compile_template(source, optimize=False)
    except Exception:  # noqa: BLE001 - compile errors are covered elsewhere
        return
    assert _outcome(fast, lambda t: t.render(context)) == _outcome(slow, lambda t: t.render(context))


def test_corpus_same_with_and_without_passes() -> None:
    if not CORPUS.exists():
        pytest.skip("../shared/corpus/jinja is absent")
    fixtures = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((CORPUS / "fixtures").glob("*.json"))]
    for path in sorted((CORPUS / "templates").glob("*.jinja")):
        source = path.read_bytes().decode("utf-8")
        try:
            fast, slow = compile_template(source), compile_template(source, optimize=False)
        except Exception:  # noqa: BLE001
            continue
        for fx in fixtures:
            ctx = dict(fx)
            msgs = ctx.pop("messages")
            assert _outcome(fast, lambda t: t.render_conversation(msgs, **ctx)) == _outcome(
                slow, lambda t: t.render_conversation(msgs, **ctx)
            ), path.stem
