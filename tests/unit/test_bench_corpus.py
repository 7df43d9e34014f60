"""The corpus benchmark (``tmpl2py bench --corpus``) on a tiny corpus of our own."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("transformers")

from tmpl2py.bench import corpus  # noqa: E402

TEMPLATES = {
    "plain": "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}",
    "fails": "{{ raise_exception('no') }}",  # transformers raises: no case
    "broken": "{% if %}",  # transformers cannot parse it: no case
}
FIXTURES = {
    "two": {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]},
    "tools": {"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]},
}


@pytest.fixture()
def tiny(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "f").mkdir()
    for name, text in TEMPLATES.items():
        (tmp_path / "t" / f"{name}.jinja").write_text(text, encoding="utf-8")
    for name, data in FIXTURES.items():
        (tmp_path / "f" / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    return tmp_path


def test_cases_are_what_transformers_renders(tiny) -> None:
    corpus._freeze_clocks()
    cases = corpus.load_cases(tiny / "t", tiny / "f")
    assert sorted(c.label for c in cases) == ["plain / tools", "plain / two"]
    assert all(c.context["tools"] is None or c.fixture == "tools" for c in cases)


def test_cli_prints_table_slowest_and_summary(tiny) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tmpl2py", "bench", "--corpus", str(tiny / "t"), "--fixtures",
         str(tiny / "f"), "--quick", "--clock", "cpu", "--json", str(tiny / "r.json")],
        capture_output=True, text=True, timeout=600, check=True,
    ).stdout
    assert "| plain | 2 |" in out
    assert "slowest 2 cases" in out and "plain / two" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("corpus: 2 cases; tmpl2py vs transformers geomean ")
    assert "compile (warm process)" in out
    result = json.loads((tiny / "r.json").read_text())
    assert result["summary"]["cases"] == 2
    assert set(result["compile"]["warm"]) == {str(tiny / "t" / "plain.jinja")}
    for case in result["cases"]:
        assert {"tmpl2py", "transformers"} <= set(case["us"])


def test_summary_and_geomean() -> None:
    a, b = corpus.Case("a", "x", "", {}), corpus.Case("b", "y", "", {})
    a.us = {"tmpl2py": 1.0, "transformers": 20.0, "minijinja": 4.0}
    b.us = {"tmpl2py": 2.0, "transformers": 10.0}
    s = corpus.summary([a, b])
    assert s["geomean_vs_transformers"] == pytest.approx(10.0)
    assert s["min_vs_transformers"] == 5.0 and s["min_vs_transformers_case"] == "b / y"
    assert s["geomean_vs_minijinja"] == pytest.approx(4.0)
    assert s["under_2x_transformers"] == 0 and s["slower_than_minijinja"] == 0


def test_bounds_cost_is_timed_in_pairs(tiny) -> None:
    """``--bounds-cost`` times each case's bounded module against its unbounded build, back
    to back, and reports both that and the round-robin medians' ratio."""
    out = subprocess.run(
        [sys.executable, "-m", "tmpl2py", "bench", "--corpus", str(tiny / "t"), "--fixtures",
         str(tiny / "f"), "--quick", "--clock", "cpu", "--skip-compile", "--bounds-cost",
         "--json", str(tiny / "r.json")],
        capture_output=True, text=True, timeout=600, check=True,
    ).stdout
    line = next(l for l in out.splitlines() if l.startswith("default work bounds cost"))
    assert "timed in pairs, 2 cases" in line and "from the round-robin medians" in line
    result = json.loads((tiny / "r.json").read_text())
    for case in result["cases"]:
        assert 0.2 < case["bounds"] < 5  # a ratio of two timings of near-identical code
        assert "unbounded" in case["us"]
