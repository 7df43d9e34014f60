"""Corpus benchmark: every template x fixture of a Jinja corpus, tmpl2py against transformers
and minijinja, and compile time against transformers' ``_compile_jinja_template``.

``tmpl2py bench --corpus TEMPLATES_DIR --fixtures FIXTURES_DIR`` (or
``python -m tmpl2py.bench.corpus ...``). A case is a template and a fixture (a conversation
context, as ../shared/corpus/jinja/README.md describes) that transformers renders. Its context
is what ``render_jinja_template`` passes (``hf.conversation_context``), and the contenders are
``CompiledTemplate.render(context)``, the render of transformers' compiled template with the
same context (clock frozen on both sides) and minijinja (``pycompat``, transformers' ``tojson``,
``raise_exception``, ``strftime_now``). tmpl2py's output must equal transformers' (else the
case is reported as a mismatch and not timed); minijinja is timed where it renders at all.
Timing: ``seeds.time_interleaved`` (round-robin, batches with the collector off, medians);
``--clock cpu`` times batches by the process's CPU time, which a busy machine disturbs less.

Compile time: each template compiled in memory (caches cleared) and by
``_cached_compile_jinja_template`` (the function behind transformers' lru_cache) in one fresh
process, best of ``--compile-repeats``; then, for the largest templates, the first compile of
a cold process on each side, best of three: tmpl2py's with its import, jinja2's without
(transformers imports it) and, reported beside it, with ``import jinja2`` timed too (both
sides then count their engine's import; transformers' own import is never timed). ``--compile-only`` measures
only that, for every template both compile (no render is checked or timed).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

from .seeds import time_bounds, time_interleaved

FROZEN = datetime.datetime(2024, 7, 26, 12, 0, 0)


class Case:
    def __init__(self, template: str, fixture: str, source: str, context: dict):
        self.template, self.fixture = template, fixture
        self.source, self.context = source, context
        self.us: dict[str, float] = {}  # medians
        self.min_us: dict[str, float] = {}  # fastest samples
        self.bounds: Optional[float] = None  # paired: bounded / unbounded (``--bounds-cost``)
        self.note = ""

    @property
    def label(self) -> str:
        return f"{self.template} / {self.fixture}"

    def ratio(self, other: str) -> Optional[float]:
        a, b = self.us.get(other), self.us.get("tmpl2py")
        return a / b if a and b else None


# --------------------------------------------------------------------------------------------
# contenders
# --------------------------------------------------------------------------------------------
def _freeze_clocks() -> None:
    from transformers.utils import chat_template_utils as ctu

    from tmpl2py.runtime.jinja import objects

    class _Frozen(datetime.datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[override]
            return FROZEN if tz is None else FROZEN.replace(tzinfo=tz)

    ctu.datetime = _Frozen  # strftime_now() looks the name up at call time
    objects.CLOCK[0] = lambda: FROZEN


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raise_exception(message):
    raise Exception(message)  # noqa: TRY002 - minijinja reports any exception as its error


def _minijinja_env(source: str) -> Any:
    import minijinja

    env = minijinja.Environment(
        templates={"t": source}, trim_blocks=True, lstrip_blocks=True, pycompat=True
    )
    env.add_filter("tojson", _tojson)
    env.add_function("raise_exception", _raise_exception)
    env.add_function("strftime_now", lambda fmt: FROZEN.strftime(fmt))
    return env


def contenders(case: Case, bounds_cost: bool = False) -> dict[str, Callable[[], str]]:
    """The callables to time for a case: tmpl2py and transformers always, minijinja where it
    renders (its output may differ from the reference: it is timed, and noted); with
    ``bounds_cost``, also tmpl2py compiled without its work bounds (``bounded=False``: no
    fuel counter, no size guards in the code): what the default bounds cost."""
    from transformers.utils.chat_template_utils import _compile_jinja_template

    from tmpl2py.compiler import compile_template

    ctx = case.context
    ours = compile_template(case.source, name=case.template).render
    theirs = _compile_jinja_template(case.source).render
    fns: dict[str, Callable[[], str]] = {
        "tmpl2py": lambda: ours(ctx),
        "transformers": lambda: theirs(**ctx),
    }
    if bounds_cost:
        # the same call path as tmpl2py's (the default limits' fast path): only the code differs
        unbounded = compile_template(case.source, name=case.template, bounded=False).render
        if unbounded(ctx) != ours(ctx):
            raise RuntimeError(f"{case.label}: the unbounded module renders differently")
        fns["unbounded"] = lambda: unbounded(ctx)
    try:
        menv = _minijinja_env(case.source)
        mini_out = menv.render_template("t", **ctx)
    except ImportError:
        case.note = "minijinja not installed"
    except Exception as e:  # noqa: BLE001 - minijinja's refusal only leaves it out
        case.note = f"minijinja fails: {type(e).__name__}"
    else:
        fns["minijinja"] = lambda: menv.render_template("t", **ctx)
        if mini_out != fns["transformers"]():
            case.note = "minijinja output differs"
    return fns


# --------------------------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------------------------
def load_cases(templates: Path, fixtures: Path, only: Optional[str] = None) -> list[Case]:
    """Every template x fixture that transformers renders (and whose output tmpl2py matches:
    a mismatch is reported and the case dropped)."""
    from transformers.utils.chat_template_utils import _compile_jinja_template

    from tmpl2py.compiler import CompileError, compile_template
    from tmpl2py.runtime.jinja.hf import conversation_context

    cases = []
    fixture_data = {p.stem: json.loads(p.read_text()) for p in sorted(fixtures.glob("*.json"))}
    for path in sorted(templates.glob("*.jinja")):
        if only and only not in path.stem:
            continue
        source = path.read_text(encoding="utf-8")
        try:
            reference = _compile_jinja_template(source)
        except Exception:  # noqa: BLE001 - the reference cannot parse it: no case
            continue
        try:
            ours = compile_template(source, name=path.stem)
        except CompileError as e:
            print(f"MISMATCH {path.stem}: transformers parses it, tmpl2py refuses: {e}")
            continue
        for stem, fixture in fixture_data.items():
            fx = json.loads(json.dumps(fixture))
            try:
                ctx = conversation_context(
                    fx.pop("messages"), fx.pop("tools", None), fx.pop("documents", None),
                    fx.pop("add_generation_prompt", False), **fx,
                )
                expected = reference.render(**ctx)
            except Exception:  # noqa: BLE001 - transformers raises: not a render case
                continue
            if ours.render(ctx) != expected:
                print(f"MISMATCH {path.stem} / {stem}: outputs differ (not timed)")
                continue
            cases.append(Case(path.stem, stem, source, ctx))
    return cases


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------
def geomean(values: list[float]) -> Optional[float]:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def _x(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.2f}x"


def per_template_rows(cases: list[Case]) -> list[list[str]]:
    by_template: dict[str, list[Case]] = {}
    for c in cases:
        by_template.setdefault(c.template, []).append(c)
    rows = []
    for name, cs in sorted(by_template.items()):
        tf = [c.ratio("transformers") for c in cs]
        mj = [c.ratio("minijinja") for c in cs if c.ratio("minijinja")]
        rows.append([
            name, str(len(cs)),
            f"{statistics.median(c.us['tmpl2py'] for c in cs):.1f}",
            _x(geomean(tf)), _x(min(tf)), _x(geomean(mj)), _x(min(mj) if mj else None),
        ])
    return rows


def summary(cases: list[Case]) -> dict[str, Any]:
    tf = [(c.ratio("transformers"), c) for c in cases]
    mj = [(c.ratio("minijinja"), c) for c in cases if c.ratio("minijinja")]
    lo_tf = min(tf, key=lambda t: t[0])
    lo_mj = min(mj, key=lambda t: t[0]) if mj else (None, None)
    return {
        "cases": len(cases),
        "geomean_vs_transformers": geomean([r for r, _ in tf]),
        "geomean_vs_minijinja": geomean([r for r, _ in mj]),
        "min_vs_transformers": lo_tf[0],
        "min_vs_transformers_case": lo_tf[1].label,
        "min_vs_minijinja": lo_mj[0],
        "min_vs_minijinja_case": lo_mj[1].label if lo_mj[1] else None,
        "under_2x_transformers": sum(1 for r, _ in tf if r < 2),
        "slower_than_minijinja": sum(1 for r, _ in mj if r < 1),
    }




def bounds_cost_line(cases: list[Case]) -> str:
    """What the default work bounds cost: tmpl2py's time over the unbounded module's, from
    the paired timing (``seeds.time_bounds``), and from the round-robin medians for comparison."""
    costs = [(c.bounds, c) for c in cases if c.bounds]
    if not costs:
        return "bounds cost: not measured"
    worst = max(costs, key=lambda t: t[0])
    mean = geomean([r for r, _ in costs]) or 1.0
    medians = geomean([c.us["tmpl2py"] / c.us["unbounded"] for c in cases if c.us.get("unbounded")])
    return (
        f"default work bounds cost (tmpl2py / unbounded, timed in pairs, {len(costs)} cases): geomean"
        f" {(mean - 1) * 100:+.1f}%, worst {(worst[0] - 1) * 100:+.1f}% ({worst[1].label});"
        f" from the round-robin medians {((medians or 1.0) - 1) * 100:+.1f}%"
    )


def summary_line(s: dict[str, Any]) -> str:
    return (
        f"corpus: {s['cases']} cases; tmpl2py vs transformers geomean {_x(s['geomean_vs_transformers'])}"
        f" (min {_x(s['min_vs_transformers'])}, {s['min_vs_transformers_case']});"
        f" vs minijinja geomean {_x(s['geomean_vs_minijinja'])}"
        f" (min {_x(s['min_vs_minijinja'])}, {s['min_vs_minijinja_case']});"
        f" {s['under_2x_transformers']} under 2x transformers,"
        f" {s['slower_than_minijinja']} slower than minijinja"
    )


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# compile time (fresh processes)
# --------------------------------------------------------------------------------------------
_WARM_SNIPPET = r"""
import json, sys, time
from transformers.utils.chat_template_utils import _cached_compile_jinja_template
from tmpl2py.compiler import CompileError, compile_template
from tmpl2py.compiler.api import clear_compile_cache
paths, repeats = json.loads(sys.argv[1]), int(sys.argv[2])
compile_template("{{ x }}"); _cached_compile_jinja_template("{{ x }}")  # parsers made once
out = {}
for p in paths:
    src = open(p, encoding="utf-8").read()
    ours = theirs = float("inf")
    for _ in range(repeats):
        clear_compile_cache()
        t0 = time.process_time(); compile_template(src); ours = min(ours, time.process_time() - t0)
        t0 = time.process_time(); _cached_compile_jinja_template(src)
        theirs = min(theirs, time.process_time() - t0)
    out[p] = [ours * 1e3, theirs * 1e3]
print(json.dumps(out))
"""

_COLD_OURS = r"""
import sys, time
t0 = time.process_time()
from tmpl2py.compiler import compile_template
compile_template(open(sys.argv[1], encoding="utf-8").read())
print((time.process_time() - t0) * 1e3)
"""

_COLD_THEIRS = r"""
import sys, time
t0 = time.process_time()
import jinja2, jinja2.sandbox  # the engine's import (tmpl2py's import is timed on its side)
imported = time.process_time() - t0
from transformers.utils import chat_template_utils as ctu  # transformers' own import: not timed
src = open(sys.argv[1], encoding="utf-8").read()
t0 = time.process_time()
ctu._cached_compile_jinja_template(src)
print((time.process_time() - t0) * 1e3, imported * 1e3)
"""


def _run(code: str, *args: str) -> str:
    p = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=900
    )
    if p.returncode:
        raise RuntimeError((p.stderr.strip().splitlines() or ["?"])[-1])
    return p.stdout.strip().splitlines()[-1]


def compile_times(paths: list[Path], repeats: int, cold: int) -> dict[str, Any]:
    """ms of CPU time: in one fresh process per template (warm parsers), and cold processes
    for the ``cold`` largest templates (best of 3 each side)."""
    warm = json.loads(_run(_WARM_SNIPPET, json.dumps([str(p) for p in paths]), str(repeats)))
    cold_rows = {}
    for p in sorted(paths, key=lambda p: p.stat().st_size, reverse=True)[:cold]:
        ours = min(float(_run(_COLD_OURS, str(p))) for _ in range(3))
        runs = [[float(v) for v in _run(_COLD_THEIRS, str(p)).split()] for _ in range(3)]
        theirs = min(compiled for compiled, _ in runs)
        cold_rows[str(p)] = [ours, theirs, min(imported for _, imported in runs)]
    return {"warm": warm, "cold": cold_rows}


def compile_report(times: dict[str, Any]) -> str:
    rows = []
    for p, (ours, theirs) in sorted(times["warm"].items(), key=lambda kv: -kv[1][0]):
        rows.append([Path(p).stem, f"{Path(p).stat().st_size}", f"{ours:.1f}", f"{theirs:.1f}",
                     _x(ours / theirs if theirs else None)])
    text = markdown(["template", "bytes", "tmpl2py ms", "jinja2 ms", "tmpl2py/jinja2"], rows)
    ratios = [o / t for o, t in times["warm"].values() if t]
    text += (f"\n\ncompile (warm process): geomean tmpl2py/jinja2 {_x(geomean(ratios))},"
             f" max {_x(max(ratios) if ratios else None)}")
    for p, (ours, theirs, *imported) in times["cold"].items():
        text += (f"\ncompile (cold process) {Path(p).stem}: tmpl2py {ours:.0f} ms (its import"
                 f" included), jinja2 {theirs:.0f} ms ({_x(ours / theirs)})")
        if imported:  # the same with jinja2's own import on its side too
            both = theirs + imported[0]
            text += f"; jinja2 with its import {both:.0f} ms ({_x(ours / both)})"
    return text


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------
def compilable(templates: Path, only: Optional[str] = None) -> list[Path]:
    """The templates both transformers' environment and tmpl2py compile (``--compile-only``)."""
    from transformers.utils.chat_template_utils import _compile_jinja_template

    from tmpl2py.compiler import compile_template

    paths = []
    for path in sorted(templates.glob("*.jinja")):
        if only and only not in path.stem:
            continue
        source = path.read_text(encoding="utf-8")
        try:
            _compile_jinja_template(source)
            compile_template(source, name=path.stem)
        except Exception:  # noqa: BLE001 - either side refuses it: not timed
            continue
        paths.append(path)
    return paths


def run_compile_only(args: argparse.Namespace) -> dict[str, Any]:
    paths = compilable(Path(args.corpus), args.only)
    if not paths:
        raise SystemExit("no template that both transformers and tmpl2py compile")
    repeats = args.compile_repeats or (1 if args.quick else 3)
    times = compile_times(paths, repeats, 0 if args.quick else 3)
    print(compile_report(times))
    return {"compile": times}


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.compile_only:
        return run_compile_only(args)
    _freeze_clocks()
    cases = load_cases(Path(args.corpus), Path(args.fixtures), args.only)
    if not cases:
        raise SystemExit("no case: no template x fixture that transformers renders")
    rounds = args.rounds or (3 if args.quick else 7)
    batch_ns = 1_000_000 if args.quick else 4_000_000
    clock = time.process_time_ns if args.clock == "cpu" else time.perf_counter_ns
    for i, case in enumerate(cases):
        stats: dict = {}
        fns = contenders(case, args.bounds_cost)
        case.us = time_interleaved(fns, rounds, batch_ns, stats, clock)
        case.min_us = {name: st["min_us"] for name, st in stats.items()}
        if args.bounds_cost:
            case.bounds = time_bounds(fns["tmpl2py"], fns["unbounded"], batch_ns, clock)
        if args.progress:
            print(f"[{i + 1}/{len(cases)}] {case.label}", file=sys.stderr)
    header = ["template", "cases", "tmpl2py us (median)", "transformers/tmpl2py geomean",
              "min", "minijinja/tmpl2py geomean", "min"]
    print(markdown(header, per_template_rows(cases)))
    print()
    slow = sorted(cases, key=lambda c: c.ratio("transformers"))[: args.slowest]
    print(f"slowest {len(slow)} cases (transformers/tmpl2py, minijinja/tmpl2py):")
    for c in slow:
        print(f"  {c.label}: {_x(c.ratio('transformers'))}, {_x(c.ratio('minijinja'))}"
              f" ({c.us['tmpl2py']:.1f} us){'  [' + c.note + ']' if c.note else ''}")
    vs_mini = sorted((c for c in cases if c.ratio("minijinja")), key=lambda c: c.ratio("minijinja"))
    print(f"closest to minijinja: " + ", ".join(
        f"{c.label} {_x(c.ratio('minijinja'))}" for c in vs_mini[: args.slowest]))
    s = summary(cases)
    result: dict[str, Any] = {"summary": s, "cases": [
        {"template": c.template, "fixture": c.fixture, "us": c.us, "min_us": c.min_us,
         "bounds": c.bounds, "note": c.note} for c in cases]}
    if not args.skip_compile:
        paths = sorted({Path(args.corpus) / f"{c.template}.jinja" for c in cases})
        repeats = args.compile_repeats or (1 if args.quick else 3)
        times = compile_times(paths, repeats, 0 if args.quick else 3)
        print()
        print(compile_report(times))
        result["compile"] = times
    print()
    if args.bounds_cost:
        result["bounds_cost"] = bounds_cost_line(cases)
        print(result["bounds_cost"])
    print(summary_line(s))
    return result


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="tmpl2py bench --corpus", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, metavar="TEMPLATES_DIR")
    ap.add_argument("--fixtures", metavar="FIXTURES_DIR",
                    help="the fixtures (required unless --compile-only)")
    ap.add_argument("--quick", action="store_true", help="3 rounds of 1 ms batches, no cold compile")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="time batches by wall clock (default) or by this process's CPU time"
                    " (steadier on a busy machine)")
    ap.add_argument("--only", metavar="TEXT", help="only templates whose name contains TEXT")
    ap.add_argument("--slowest", type=int, default=5, help="how many slowest cases to list")
    ap.add_argument("--skip-compile", action="store_true", help="leave out compile times")
    ap.add_argument("--compile-only", action="store_true",
                    help="only compile times, of every template both sides compile")
    ap.add_argument("--compile-repeats", type=int, default=None, metavar="N",
                    help="warm compiles per template, best taken (default 3; 1 with --quick)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument("--progress", action="store_true", help="one line per case on stderr")
    ap.add_argument("--bounds-cost", action="store_true",
                    help="also time each template compiled without its work bounds")
    args = ap.parse_args(argv)
    if not args.compile_only and not args.fixtures:
        ap.error("--fixtures is required (unless --compile-only)")
    result = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
