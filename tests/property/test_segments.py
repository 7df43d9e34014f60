"""Property tests of segment renders on generated templates (tests/segments_check.py states
the three properties): for a template and context from ``strategies.py``, (1) the segments
join to ``render``'s text (or fail alike), (2) every ``TEMPLATE`` segment is literal text of
the template, (3) replacing one scalar of the context (drawn from all of them) changes no
segment that neither names its path nor was emitted under a decision depending on it.

Budgets: 2,000 examples under the ``ci`` profile, 50,000 under ``deep``
(``TMPL2PY_HYPOTHESIS_PROFILE``; ``TMPL2PY_HYPOTHESIS_SCALE`` scales them). With
``TMPL2PY_DIVERGENCE_LOG=path`` the examples run are counted in ``path.progress.<pid>``
(harness.py; a failure still fails).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")

from hypothesis import given, note, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness as H  # noqa: E402
import strategies as S  # noqa: E402
import segments_check as C  # noqa: E402

from tmpl2py.compiler import CompileError  # noqa: E402

PROFILE = os.environ.get("TMPL2PY_HYPOTHESIS_PROFILE", "ci")
SCALE = float(os.environ.get("TMPL2PY_HYPOTHESIS_SCALE", "1"))
EXAMPLES = {"ci": 2_000, "deep": 50_000}.get(PROFILE, 2_000)
BASE = settings.get_profile(PROFILE if PROFILE in ("ci", "deep") else "ci")
_COUNTS = H.Reporter(lambda ref, ours: "", "context", "reference")  # (progress counts only)


@settings(BASE, max_examples=max(1, int(EXAMPLES * SCALE)))
@given(S.templates(depth=3), S.contexts(), st.data())
def test_segment_properties(source: str, context: dict, data: st.DataObject) -> None:
    note(f"source={source!r}")
    _COUNTS.progress("jinja_segments")
    try:
        render, render_segments, pieces, _ = C.compiled(source)
    except (CompileError, RecursionError, SyntaxError):
        return  # not a template we compile: the differential tests cover that
    segments = C.check_concatenation(render, render_segments, context)
    if segments is None:
        return
    C.check_template_literals(segments, source, pieces)
    paths = list(C.leaves(context))
    if not paths:
        return
    path, value = paths[data.draw(st.integers(0, len(paths) - 1), label="path")]
    note(f"path={path!r}")
    C.check_metamorphic(render_segments, context, segments, path, C.fresh(value))
