"""Smoke test of the benchmark harness (no timing assertions).

Each run is a fresh interpreter, as a benchmark should be: timings, GC settings and the
patched clocks of other tests must not leak into it (or it into them)."""

from __future__ import annotations

import json
import subprocess
import sys

import goref_client
from tmpl2py_paths import ROOT, SHARED


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tmpl2py.bench.seeds", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )


def test_bench_quick_runs_and_prints_table(tmp_path):
    md = tmp_path / "bench.md"
    js = tmp_path / "bench.json"
    run = _bench("--quick", "--rounds", "1", "--markdown", str(md), "--json", str(js))
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "scenario" in out and "tmpl2py us" in out and "tmpl2py/hand" in out
    assert "targets:" in out
    assert md.read_text().startswith("| scenario |")
    data = json.loads(js.read_text())
    assert "results" in data
    assert "[MET] Go: " in out or "[MISSED] Go: " in out or "[n/a] Go: " in out
    if goref_client.go_available() and (SHARED / "corpus" / "gotmpl" / "templates").is_dir():
        assert "go:chatml plain-10" in out and "tmpl2py/go" in out
        assert {r["scenario"] for r in data["go_results"]} >= {"go:chatml plain-10", "go:llama3-instruct plain-100"}
        assert "| go:chatml plain-10 |" in md.read_text()
    else:
        assert "NOTE: Go templates skipped" in out and data["go_skipped"]


def test_bench_profile_mode():
    run = _bench("--profile", "001:plain-10", "--profile-renders", "20")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "tottime" in run.stdout


def test_bench_profile_mode_go():
    if not (SHARED / "corpus" / "gotmpl" / "templates").is_dir():
        import pytest

        pytest.skip("../shared/corpus/gotmpl not found")
    run = _bench("--profile", "go:chatml:plain-10", "--profile-renders", "20")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "render_conversation" in run.stdout and "tottime" in run.stdout


def test_the_bounds_cost_is_the_paired_timing_with_the_medians_beside_it() -> None:
    from tmpl2py.bench.seeds import bounds_cost_summary

    results = [
        {"scenario": "a", "bounds": 1.21, "us": {"tmpl2py": 2.0, "unbounded": 1.0}},
        {"scenario": "b", "bounds": 1.0, "us": {"tmpl2py": 1.0, "unbounded": 1.0}},
        {"scenario": "go", "bounds": None, "us": {"tmpl2py": 1.0}},  # not measured: left out
    ]
    summary = bounds_cost_summary(results)
    assert abs(summary["geomean"] - 1.1) < 1e-9 and summary["worst"] == "a"
    assert "timed in pairs, 2 scenarios" in summary["line"] and "+10.0%" in summary["line"]
    assert "from the round-robin medians +41.4%" in summary["line"]
