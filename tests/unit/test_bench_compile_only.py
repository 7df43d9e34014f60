"""``tmpl2py bench --corpus DIR --compile-only`` (``bench/corpus.py``): compile times alone,
of the templates both transformers and tmpl2py compile, no fixtures needed."""

from __future__ import annotations

import json
import subprocess
import sys


def test_compile_only_times_what_both_compile(tmp_path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "plain.jinja").write_text(
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}", encoding="utf-8"
    )
    (tmp_path / "t" / "broken.jinja").write_text("{% for m in messages %}", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "tmpl2py", "bench", "--corpus", str(tmp_path / "t"),
         "--compile-only", "--quick", "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=600, check=True,
    ).stdout
    assert "| plain |" in out and "broken" not in out
    assert "compile (warm process): geomean tmpl2py/jinja2 " in out
    result = json.loads((tmp_path / "r.json").read_text())
    assert set(result["compile"]["warm"]) == {str(tmp_path / "t" / "plain.jinja")}
    assert result["compile"]["cold"] == {}  # --quick: no cold processes


def test_fixtures_are_required_without_compile_only(tmp_path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "tmpl2py", "bench", "--corpus", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert p.returncode == 2 and "--fixtures is required" in p.stderr
