"""Property tests of segment renders on generated Go templates (tests/segments_check.py
states the three properties), both profiles: for a template from ``gostrategies`` and its data
(``plain``: JSON data; ``ollama``: the data Ollama's ``Template.Execute`` renders for a
generated request, every turn of the legacy mode), (1) the segments join to ``render``'s
text (or fail alike), (2) every ``TEMPLATE`` segment is literal text of the template, (3)
replacing one scalar of the data (drawn from all of them) changes no segment that neither
names its path nor was emitted under a decision depending on it.

No Go needed: the reference is our own ``render`` (tested against Go elsewhere). Budgets:
conftest.py of this folder (``go_segments_plain`` + ``go_segments_ollama``: 2,000 examples
under ``ci``, 50,000 under ``deep``). With ``TMPL2PY_DIVERGENCE_LOG=path`` the examples
run are counted in ``path.progress.<pid>`` (harness.py; a failure still fails).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis")

from hypothesis import given, note  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import gostrategies as S  # noqa: E402
import harness as H  # noqa: E402
import segments_check as C  # noqa: E402

from tmpl2py.compiler import CompileError  # noqa: E402
from tmpl2py.runtime.go import execute as gotmpl  # noqa: E402

_COUNTS = H.Reporter(lambda ref, ours: "", "data", "go")  # (progress counts only)


@pytest.fixture(autouse=True, scope="module")
def frozen_clock():
    saved = gotmpl._NOW
    gotmpl.set_now("2024-07-26")
    yield
    gotmpl._NOW = saved


def _compiled(source: str, profile: str) -> Any:
    try:
        return C.compiled(source, "go", profile)
    except (CompileError, RecursionError):
        return None  # not a template we compile: the differential tests cover that


def _check(source: str, compiled: Any, context: Any, data: st.DataObject) -> None:
    render, render_segments, pieces, _ = compiled

    def one_path(paths: list) -> list:
        if not paths:
            return []
        chosen = paths[data.draw(st.integers(0, len(paths) - 1), label="path")]
        note(f"path={chosen[0]!r}")
        return [chosen]

    C.check_all(render, render_segments, pieces, source, context, one_path)


@H.profile("go_segments_plain")
@given(source=S.templates(profile="plain"), context=S.json_data(), data=st.data())
def test_plain_segment_properties(source: str, context: Any, data: st.DataObject) -> None:
    note(f"source={source!r}")
    _COUNTS.progress("go_segments_plain")
    compiled = _compiled(source, "plain")
    if compiled is not None:
        _check(source, compiled, context, data)


@H.profile("go_segments_ollama")
@given(source=S.templates(profile="ollama"), request=S.requests(), data=st.data())
def test_ollama_segment_properties(source: str, request: dict, data: st.DataObject) -> None:
    note(f"source={source!r}")
    _COUNTS.progress("go_segments_ollama")
    compiled = _compiled(source, "ollama")
    if compiled is None:
        return
    datas = C.go_datas(compiled[0], compiled[3], request)
    if datas:
        context = datas[data.draw(st.integers(0, len(datas) - 1), label="turn")]
        _check(source, compiled, context, data)
