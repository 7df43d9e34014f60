"""docs/support.md is complete and true: every filter and test of the runtime has a row,
and every case file a row names exists and passes (tests/test_cases.py runs them)."""

from __future__ import annotations

import re

from tmpl2py.runtime.jinja.filters import FILTERS, TESTS
from tmpl2py_paths import ROOT

TABLE = (ROOT / "docs" / "support.md").read_text(encoding="utf-8")
CASES = {p.name for p in (ROOT / "tests" / "corpus" / "cases").glob("*.txt")}


def test_every_filter_and_test_has_a_row() -> None:
    rows = set(re.findall(r"^\| `([^`]+)` \|", TABLE, flags=re.M))
    assert set(FILTERS) <= rows
    assert set(TESTS) <= rows


def test_every_named_case_file_exists() -> None:
    for name in re.findall(r"`([\w.-]+\.txt)`", TABLE):
        assert name in CASES, name
    for pattern in re.findall(r"`(err_\w+)_\*\.txt`", TABLE):
        assert any(c.startswith(pattern + "_") for c in CASES), pattern
