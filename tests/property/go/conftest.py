"""Hypothesis budgets of the Go property tests (the ``ci`` / ``deep`` scheme of
tests/property/conftest.py, which registers the base profiles and is loaded first).

``TMPL2PY_HYPOTHESIS_PROFILE`` = ``ci`` (default: derandomized; the Go properties take
well under three minutes on two cores) or ``deep`` (randomized, 20,000 examples per property).
``TMPL2PY_HYPOTHESIS_SCALE`` multiplies the budgets; ``TMPL2PY_HYPOTHESIS_EXAMPLES=
"go_plain=5000,go_corpus=100"`` sets single ones. ``go_corpus`` is per corpus template.

For long runs, ``TMPL2PY_GO_FAST_COMPILE=1`` (or ``TMPL2PY_FAST_COMPILE=1``, both dialects)
skips black inside the compiler (see godiff.py)
and ``TMPL2PY_DIVERGENCE_LOG=path`` logs divergences as JSON lines instead of failing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parents[1]):  # this folder (godiff, gostrategies) and tests/ (goref_client)
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import tmpl2py_paths  # noqa: E402,F401  (puts the checkout root on sys.path)

from harness import register_budgets  # noqa: E402

_SCALE = float(os.environ.get("TMPL2PY_HYPOTHESIS_SCALE", "1"))

GO_BUDGETS = {
    "ci": {"go_plain": 250, "go_ollama": 250, "go_crash": 150, "go_deterministic": 40,
           "go_compiles": 40, "go_corpus": 10, "go_json_tools": 150, "go_generate": 150,
           "go_views": 150, "go_segments_plain": 1_000, "go_segments_ollama": 1_000},
    "deep": {"go_plain": 20_000, "go_ollama": 20_000, "go_crash": 20_000,
             "go_deterministic": 20_000, "go_compiles": 20_000, "go_corpus": 1_000,
             "go_json_tools": 20_000, "go_generate": 20_000, "go_views": 20_000,
             "go_segments_plain": 25_000, "go_segments_ollama": 25_000},
}
register_budgets(GO_BUDGETS, _SCALE)
