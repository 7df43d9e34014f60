"""The shared Jinja corpus: every template x fixture, against transformers' recorded output.

Expected outputs were made by transformers 5.24 / jinja2 3.1.6 (../shared/corpus/jinja/README.md);
an ``.error`` file holds ``<ExceptionType>: <message>`` and we must fail alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tmpl2py_paths import SHARED
from reference import same_outcome
from reference import ours_conversation

CORPUS = SHARED / "corpus" / "jinja"


def _cases() -> list:
    if not CORPUS.exists():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="../shared/corpus/jinja is absent"))]
    fixtures = sorted(p.stem for p in (CORPUS / "fixtures").glob("*.json"))
    return [
        pytest.param(t.stem, f, id=f"{t.stem}/{f}")
        for t in sorted((CORPUS / "templates").glob("*.jinja"))
        for f in fixtures
    ]


_COMPILED: dict = {}


def _expected(stem: str, fixture: str) -> tuple[str, str]:
    base = CORPUS / "expected" / stem / fixture
    ok = base.with_suffix(".txt")
    if ok.exists():
        return ("ok", ok.read_text(encoding="utf-8"))
    return ("err", base.with_suffix(".error").read_text(encoding="utf-8"))


@pytest.mark.parametrize("stem,fixture", _cases())
def test_corpus_case(stem: str, fixture: str) -> None:
    source = (CORPUS / "templates" / f"{stem}.jinja").read_bytes().decode("utf-8")
    context = json.loads((CORPUS / "fixtures" / f"{fixture}.json").read_text(encoding="utf-8"))
    ours = ours_conversation(source, context)
    expected = _expected(stem, fixture)
    assert same_outcome(ours, expected), f"\nexpected: {expected[1][:2000]!r}\n     got: {ours[1][:2000]!r}"
