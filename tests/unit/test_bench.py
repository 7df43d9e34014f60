"""Smoke test of the benchmark harness (no timing assertions).

Each run is a fresh interpreter, as a benchmark should be: timings, GC settings and the
patched clocks of other tests must not leak into it (or it into them)."""

from __future__ import annotations

import subprocess
import sys

from tmpl2py_paths import ROOT


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compiler.bench", *args],
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
    assert '"results"' in js.read_text()


def test_bench_profile_mode():
    run = _bench("--profile", "001:plain-10", "--profile-renders", "20")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "tottime" in run.stdout
