"""Segment renders against plain renders: what ``render_segments`` costs (issue 20's bound:
at most 3x ``render`` on the seed benchmarks).

Run ``python -m tmpl2py.bench.segments`` (``--quick`` for a short run). One process; for each
seed scenario (``bench/seeds.py``'s: the Jinja seeds on ``../shared/bench`` conversations, and
the Go templates on the same conversations in Ollama's shape) these are timed interleaved,
median us per call (``seeds.time_interleaved``, CPU time of this process: the machine is
shared, and time spent preempted is not the renderer's):

- ``render``: ``t.render(context)`` (Go: on data already shaped by Ollama's ``Template.Execute``
  steps, ``ollama.template_values``);
- ``segments``: ``t.render_segments(context)``, the segment renderer's call (its segment
  objects are made when the list is first used);
- ``listed``: the same and ``len()`` of the result (every ``Segment`` made);
- ``origins``: the same and every origin's ``paths`` and ``cond`` read (all labels evaluated).

Before timing, every segment render's text must equal ``render``'s (else exit status 1).
``--profile SCENARIO`` (e.g. ``001:plain-10``, ``go:chatml:plain-10``) runs cProfile over the
segment renders of one scenario.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from typing import Any, Callable

from . import seeds


def _origins(segments: Any) -> int:
    for s in segments:
        s.origin.paths, s.origin.cond
    return len(segments)


def _cases(only: str | None) -> list[tuple[str, Any, Any]]:
    """(label, compiled template, context) for every scenario (``only``: a label prefix)."""
    from tmpl2py.compiler import compile_template
    from tmpl2py.runtime.go import ollama

    out = []
    for sc in seeds.load_scenarios():
        out.append((f"{sc.short}:{sc.kind}-{sc.n}", compile_template(sc.source), sc.context))
    go_scenarios, _ = seeds.load_go_scenarios()
    for gs in go_scenarios:
        t = compile_template(gs.source, dialect="go", profile="ollama")
        json_tools = bool(t.namespace.get("GO_TOOLS_JSON"))
        request = gs.request
        data = ollama.template_values(request["messages"], request.get("tools"), None, json_tools)
        out.append((f"go:{gs.name}:{gs.kind}-{gs.n}", t, data))
    return [c for c in out if only is None or c[0].startswith(only)]


def contenders(t: Any, context: Any) -> dict[str, Callable[[], Any]]:
    render, segments = t.render, t.render_segments
    return {
        "render": lambda: render(context),
        "segments": lambda: segments(context),
        "listed": lambda: len(segments(context)),
        "origins": lambda: _origins(segments(context)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tmpl2py.bench.segments", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--quick", action="store_true", help="few rounds, short batches")
    ap.add_argument("--only", metavar="PREFIX", help="scenarios whose label starts so (001, go:)")
    ap.add_argument("--profile", metavar="SCENARIO", help="cProfile the segment render of one")
    ap.add_argument("--rounds", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    if args.profile:
        cases = _cases(args.profile)
        if not cases:
            print(f"no scenario {args.profile!r}")
            return 1
        _, t, context = cases[0]
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(2000):
            _origins(t.render_segments(context))
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
        return 0
    rounds = args.rounds or (7 if args.quick else 31)
    batch_ns = 1_000_000 if args.quick else 3_000_000
    print(f"segments vs render: {rounds} interleaved rounds, median us/call; ratio to render")
    print(f"{'scenario':<28} {'render':>9} {'segments':>16} {'listed':>16} {'origins':>16}")
    status = 0
    for label, t, context in _cases(args.only):
        want = t.render(context)
        if "".join(s.text for s in t.render_segments(context)) != want:
            print(f"{label}: segment text differs from render")
            status = 1
            continue
        us = seeds.time_interleaved(contenders(t, context), rounds, batch_ns, clock=time.process_time_ns)
        base = us["render"]
        cells = [f"{us[k]:9.1f} ({us[k] / base:4.1f}x)" for k in ("segments", "listed", "origins")]
        print(f"{label:<28} {base:9.1f} " + " ".join(f"{c:>16}" for c in cells))
    return status


if __name__ == "__main__":
    sys.exit(main())
