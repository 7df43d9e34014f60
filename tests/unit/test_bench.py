"""Smoke test of the benchmark harness (no timing assertions)."""

from __future__ import annotations

from compiler import bench


def test_bench_quick_runs_and_prints_table(capsys, tmp_path):
    md = tmp_path / "bench.md"
    js = tmp_path / "bench.json"
    rc = bench.main(["--quick", "--rounds", "1", "--markdown", str(md), "--json", str(js)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "scenario" in out and "tmpl2py us" in out and "tmpl2py/hand" in out
    assert "targets:" in out
    assert md.read_text().startswith("| scenario |")
    assert '"results"' in js.read_text()


def test_bench_profile_mode(capsys):
    rc = bench.main(["--profile", "001:plain-10", "--profile-renders", "20"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "tottime" in out
