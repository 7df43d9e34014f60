"""Regression cases found by the property tests (tests/property), one file per case.

``jinja/<name>.txt``: a JSON context object on the first line(s), a line ``---``, then the
template source (exact bytes, up to the end of the file). Each case is rendered by tmpl2py
(``compile_template(src).render(ctx)``) and by transformers' environment
(``_compile_jinja_template(src).render(**ctx)``); the outcomes must agree: the same text, or
both rejected at compile time, or the same exception class name (and message, for
``raise_exception``).

A context of the form ``{"__conversation__": {"messages": [...], "tools": ..., ...}}`` is a
``render_conversation`` case instead (vs ``render_jinja_template``).

Cases that still diverge are listed in ``KNOWN_DIVERGENCES`` and marked ``xfail(strict=True)``:
remove a name from the set when the fix lands (the strict xfail fails as soon as it passes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jinja2")
pytest.importorskip("transformers")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "property"))

import differential as D  # noqa: E402
import harness as H  # noqa: E402

#: Case files that currently diverge (see the report of the property-test issue).
KNOWN_DIVERGENCES: set[str] = set()


def load_case(path: Path) -> tuple:
    return H.read_case(path)


def _cases(folder: str) -> list:
    return H.case_params(HERE / folder, KNOWN_DIVERGENCES)


def test_known_divergences_exist() -> None:
    names = {p.name for p in (HERE / "jinja").glob("*.txt")}
    assert (
        KNOWN_DIVERGENCES <= names
    ), f"stale names in KNOWN_DIVERGENCES: {KNOWN_DIVERGENCES - names}"


@pytest.mark.parametrize("path", _cases("jinja"))
def test_jinja_regression(path: Path) -> None:
    context, source = load_case(path)
    if isinstance(context, dict) and set(context) == {"__conversation__"}:
        call = context["__conversation__"]
        ref = D.reference_conversation(source, call)
        ours = D.ours_conversation(source, call)
    else:
        ref = D.reference_render(source, context)
        ours = D.ours_render(source, context)
    problem = D.divergence(ref, ours)
    assert problem is None, f"{path.name}: {problem}\n--- template ---\n{source}"
