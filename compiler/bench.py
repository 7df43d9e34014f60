"""Render benchmark: tmpl2py against transformers, jinja2, minijinja and hand-written Python.

Run ``python -m compiler.bench`` (add ``--quick`` for a short run). Everything runs in ONE process;
the contenders of a scenario are timed interleaved (round-robin, rotating the start each round),
each sample being a batch of renders timed with ``time.perf_counter_ns``; we report the median
per-render time in microseconds. The garbage collector is disabled while a batch runs (as
``timeit`` does). Before any timing each contender's output is compared with tmpl2py's: a
contender that differs is marked ``MISMATCH`` and not timed.

Inputs come from ``../shared/bench`` (``inputs.py``: the 12 seed scenarios; ``handwritten.py``:
the hand-written limit). Without it we fall back to the project's examples/ with a small
generated conversation (no hand-written contenders then).

``--profile 000[:tools-100]`` runs cProfile over 2,000 tmpl2py renders of one scenario and
prints the top 25 functions by tottime.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import statistics
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BENCH_DIR = SHARED / "bench"
CORPUS_DIR = SHARED / "corpus" / "jinja" / "templates"

MISMATCH = "MISMATCH"
CONTENDERS = ("tmpl2py", "transformers", "jinja2", "minijinja", "hand", "hand_literal")
LABELS = {
    "tmpl2py": "tmpl2py",
    "transformers": "transformers",
    "jinja2": "jinja2",
    "minijinja": "minijinja",
    "hand": "hand",
    "hand_literal": "hand(lit)",
}


# --------------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------------
def _load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


class Scenario:
    def __init__(self, seed: str, kind: str, n: int, source: str, context: dict, hand: dict):
        self.seed, self.kind, self.n = seed, kind, n
        self.source, self.context = source, context
        self.hand = hand  # contender name -> callable(**ctx)

    @property
    def short(self) -> str:
        return self.seed.split("_", 1)[0]

    @property
    def label(self) -> str:
        return f"{self.short} {self.kind}-{self.n}"


def _fallback_messages(n: int) -> list[dict]:
    msgs = [{"role": "system", "content": "You are a helpful assistant."}]
    i = 0
    while len(msgs) < n:
        i += 1
        msgs.append({"role": "user", "content": f"Question {i}: what is {i} + {i}? Answer briefly, please."})
        msgs.append({"role": "assistant", "content": f"The answer to question {i} is {2 * i}. Anything else?"})
    return msgs[:n]


def load_scenarios() -> list[Scenario]:
    if BENCH_DIR.is_dir():
        inputs = _load_module("tmpl2py_bench_inputs", BENCH_DIR / "inputs.py")
        hw = _load_module("tmpl2py_bench_handwritten", BENCH_DIR / "handwritten.py")
        out = []
        for seed, kind, n in inputs.scenarios():
            hand: dict[str, Callable[..., str]] = {}
            if seed.startswith("000"):
                hand["hand_literal"] = lambda _f=hw.render_000, **c: _f(**c, _literal=True)
                hand["hand"] = hw.render_000
            elif seed.startswith("001"):
                hand["hand"] = hw.render_001
            out.append(Scenario(seed, kind, n, inputs.load_template(seed), inputs.make_context(seed, n, kind), hand))
        return out
    print(f"NOTE: {BENCH_DIR} not found: benchmarking examples/*.jinja with a small generated "
          "conversation (no hand-written contenders, no seed scenarios).")
    out = []
    for seed, fname in (("000_command", "seed000_command.jinja"), ("001_qwen", "seed001_qwen.jinja")):
        src = (ROOT / "examples" / fname).read_text()
        for n in (2, 10):
            ctx = {"messages": _fallback_messages(n), "tools": None, "documents": None,
                   "add_generation_prompt": True, "bos_token": "<BOS_TOKEN>", "eos_token": "<EOS>"}
            out.append(Scenario(seed, "plain", n, src, ctx, {}))
    return out


# --------------------------------------------------------------------------------------------
# contenders
# --------------------------------------------------------------------------------------------
def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers' override of Jinja's tojson (no HTML escaping)
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise_exception(message):
    raise RuntimeError(message)


def _strftime_now(fmt):
    import datetime

    return datetime.datetime.now().strftime(fmt)


def make_contenders(sc: Scenario) -> tuple[dict[str, Callable[[], str]], dict[str, str]]:
    """name -> zero-argument render callable; and name -> reason for contenders left out."""
    from compiler import compile_template

    ctx = sc.context
    fns: dict[str, Callable[[], str]] = {}
    skipped: dict[str, str] = {}

    t = compile_template(sc.source)
    render = t.render
    fns["tmpl2py"] = lambda: render(ctx)

    try:
        from transformers.utils.chat_template_utils import render_jinja_template

        extra = {k: v for k, v in ctx.items() if k not in ("messages", "tools", "documents", "add_generation_prompt")}
        msgs, tools, docs, agp, src = ctx["messages"], ctx.get("tools"), ctx.get("documents"), ctx.get("add_generation_prompt", False), sc.source

        def _tf() -> str:
            rendered, _ = render_jinja_template(conversations=[msgs], tools=tools, documents=docs,
                                                chat_template=src, add_generation_prompt=agp, **extra)
            return rendered[0]

        fns["transformers"] = _tf
    except Exception as e:  # noqa: BLE001 - optional contender
        skipped["transformers"] = f"not importable ({type(e).__name__})"

    try:
        import jinja2
        import jinja2.ext

        env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise_exception
        env.globals["strftime_now"] = _strftime_now
        jt = env.from_string(sc.source)
        fns["jinja2"] = lambda: jt.render(**ctx)
    except Exception as e:  # noqa: BLE001
        skipped["jinja2"] = f"{type(e).__name__}: {e}"[:80]

    try:
        import minijinja

        menv = minijinja.Environment(templates={"t": sc.source})
        for attr in ("trim_blocks", "lstrip_blocks"):
            if hasattr(menv, attr):
                setattr(menv, attr, True)
        menv.add_filter("tojson", _tojson)
        menv.add_function("raise_exception", _raise_exception)
        menv.add_function("strftime_now", _strftime_now)
        fns["minijinja"] = lambda: menv.render_template("t", **ctx)
    except ImportError:
        skipped["minijinja"] = "not installed"
    except Exception as e:  # noqa: BLE001
        skipped["minijinja"] = f"{type(e).__name__}: {e}"[:80]

    for name, f in sc.hand.items():
        fns[name] = lambda _f=f: _f(**ctx)
    return fns, skipped


# --------------------------------------------------------------------------------------------
# timing
# --------------------------------------------------------------------------------------------
def _batch_ns(fn: Callable[[], str], inner: int) -> int:
    gcold = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        for _ in range(inner):
            fn()
        return time.perf_counter_ns() - t0
    finally:
        if gcold:
            gc.enable()


def time_interleaved(fns: dict[str, Callable[[], str]], rounds: int, batch_ns: int,
                     stats: dict | None = None) -> dict[str, float]:
    """Median µs per call for each callable, sampled round-robin (min/max/inner into ``stats``)."""
    names = list(fns)
    inner: dict[str, int] = {}
    for name in names:  # calibrate (also a warm-up)
        fns[name]()
        one = max(_batch_ns(fns[name], 1), 1)
        inner[name] = max(1, min(100_000, batch_ns // one))
    samples: dict[str, list[float]] = {n: [] for n in names}
    gc.collect()
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            samples[name].append(_batch_ns(fns[name], inner[name]) / inner[name] / 1000.0)
    if stats is not None:
        for n, s in samples.items():
            stats[n] = {"min_us": min(s), "max_us": max(s), "inner": inner[n], "samples": len(s)}
    return {n: statistics.median(s) for n, s in samples.items()}


# --------------------------------------------------------------------------------------------
# table
# --------------------------------------------------------------------------------------------
def _ratio(a: Any, b: Any) -> float | None:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        return a / b
    return None


def _fmt_us(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return f"{v:.1f}" if v < 1000 else f"{v:.0f}"


def _fmt_ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def build_rows(results: list[dict]) -> tuple[list[str], list[list[str]]]:
    present = [c for c in CONTENDERS if any(c in r["us"] for r in results)]
    header = ["scenario"] + [LABELS[c] + " us" for c in present] + [
        "tmpl2py/hand", "transformers/tmpl2py", "jinja2/tmpl2py", "minijinja/tmpl2py"]
    rows = []
    for r in results:
        us = r["us"]
        row = [r["scenario"]] + [_fmt_us(us.get(c)) for c in present]
        row += [_fmt_ratio(r["ratios"].get(k)) for k in ("tmpl2py/hand", "transformers/tmpl2py",
                                                          "jinja2/tmpl2py", "minijinja/tmpl2py")]
        rows.append(row)
    return header, rows


def format_text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def format_markdown_table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def summarize(results: list[dict]) -> dict:
    hand = [r["ratios"]["tmpl2py/hand"] for r in results if r["ratios"].get("tmpl2py/hand") is not None]
    mini = [r["ratios"].get("minijinja/tmpl2py") for r in results]
    tf10 = [r["ratios"].get("transformers/tmpl2py") for r in results if r["n"] == 10]
    s: dict[str, Any] = {}
    if hand:
        s["geomean_tmpl2py_over_hand"] = math.exp(sum(math.log(x) for x in hand) / len(hand))
        s["max_tmpl2py_over_hand"] = max(hand)
        s["max_scenario"] = max((r for r in results if r["ratios"].get("tmpl2py/hand") is not None),
                                key=lambda r: r["ratios"]["tmpl2py/hand"])["scenario"]
    targets: dict[str, bool | None] = {}
    targets["geomean tmpl2py/hand <= 1.25"] = (s["geomean_tmpl2py_over_hand"] <= 1.25) if hand else None
    targets["no scenario tmpl2py/hand > 2x"] = (s["max_tmpl2py_over_hand"] <= 2.0) if hand else None
    known = [m for m in mini if m is not None]
    targets["faster than minijinja everywhere"] = (all(m > 1.0 for m in known) and len(known) == len(mini)) if known else None
    known_tf = [t for t in tf10 if t is not None]
    targets[">= 10x faster than transformers on 10-message scenarios"] = (
        (all(t >= 10.0 for t in known_tf) and len(known_tf) == len(tf10)) if known_tf else None)
    s["targets"] = targets
    return s


# --------------------------------------------------------------------------------------------
# import / compile time
# --------------------------------------------------------------------------------------------
_IMPORT_SNIPPET = r"""
import sys, time, importlib.util
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter_ns()
import runtime.jinja, runtime.jinja_filters
t1 = time.perf_counter_ns()
spec = importlib.util.spec_from_file_location("gen_mod", sys.argv[2])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
t2 = time.perf_counter_ns()
print(t1 - t0, t2 - t1)
"""


def measure_import(path: Path, repeats: int) -> dict | None:
    """Best-of-N fresh-interpreter import time (µs) of the runtime and of one generated module."""
    if not path.exists():
        return None
    best_rt, best_mod = math.inf, math.inf
    # As a deployed package imports: with bytecode caches (PYTHONDONTWRITEBYTECODE would make
    # every run compile the runtime's source again).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for i in range(repeats + 1):  # the first run may write bytecode caches: discarded
        p = subprocess.run([sys.executable, "-c", _IMPORT_SNIPPET, str(ROOT), str(path)],
                           capture_output=True, text=True, timeout=60, check=False, env=env)
        if p.returncode != 0:
            return {"error": (p.stderr.strip().splitlines() or ["?"])[-1]}
        rt, mod = (int(x) for x in p.stdout.split())
        if i:
            best_rt, best_mod = min(best_rt, rt), min(best_mod, mod)
    return {"runtime_us": best_rt / 1000, "module_us": best_mod / 1000, "total_us": (best_rt + best_mod) / 1000}


def measure_compile_largest(repeats: int) -> dict | None:
    if not CORPUS_DIR.is_dir():
        return None
    files = sorted(CORPUS_DIR.glob("*.jinja"), key=lambda p: p.stat().st_size, reverse=True)
    if not files:
        return None
    from compiler import compile_template
    from compiler.api import _generate

    path = files[0]
    src = path.read_text()
    best = math.inf
    try:
        for _ in range(repeats):
            _generate.cache_clear()  # compilation is memoised per process: time a real one
            t0 = time.perf_counter_ns()
            compile_template(src, name=path.name)
            best = min(best, time.perf_counter_ns() - t0)
    except Exception as e:  # noqa: BLE001
        return {"template": path.name, "bytes": len(src.encode()), "error": f"{type(e).__name__}: {e}"[:120]}
    return {"template": path.name, "bytes": len(src.encode()), "ms": best / 1e6}


# --------------------------------------------------------------------------------------------
# profile mode
# --------------------------------------------------------------------------------------------
def run_profile(spec: str, scenarios: list[Scenario], renders: int) -> int:
    import cProfile
    import pstats

    seed_part, _, rest = spec.partition(":")
    want = rest or "tools-100"
    matches = [s for s in scenarios if (s.seed == seed_part or s.short == seed_part)
               and f"{s.kind}-{s.n}" == want]
    if not matches:
        avail = ", ".join(f"{s.short}:{s.kind}-{s.n}" for s in scenarios)
        print(f"--profile {spec!r}: no such scenario (available: {avail})", file=sys.stderr)
        return 2
    sc = matches[0]
    from compiler import compile_template

    render, ctx = compile_template(sc.source).render, sc.context
    render(ctx)
    print(f"profile: tmpl2py {sc.label}, {renders} renders")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(renders):
        render(ctx)
    prof.disable()
    pstats.Stats(prof, stream=sys.stdout).strip_dirs().sort_stats("tottime").print_stats(25)
    return 0


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m compiler.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few rounds, short batches")
    ap.add_argument("--markdown", metavar="FILE", help="write the table as markdown")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument("--profile", metavar="TEMPLATE",
                    help="cProfile tmpl2py on one scenario: SEED[:KIND-N], e.g. 000:tools-100")
    ap.add_argument("--profile-renders", type=int, default=2000, help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--only", metavar="SEED", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))

    scenarios = load_scenarios()
    if args.only:
        scenarios = [s for s in scenarios if args.only in (s.seed, s.short)]
    if args.profile:
        return run_profile(args.profile, scenarios, args.profile_renders)

    rounds = args.rounds if args.rounds is not None else (7 if args.quick else 41)
    batch_ns = 1_000_000 if args.quick else 4_000_000
    print(f"tmpl2py render benchmark: {len(scenarios)} scenarios, {rounds} interleaved rounds, "
          f"~{batch_ns / 1e6:.0f} ms batches, median us/render (python {sys.version.split()[0]})")

    status = 0
    results: list[dict] = []
    notes: list[str] = []
    for sc in scenarios:
        try:
            fns, skipped = make_contenders(sc)
        except Exception as e:  # noqa: BLE001 - tmpl2py itself failed to compile
            notes.append(f"{sc.label}: tmpl2py compile failed: {type(e).__name__}: {e}")
            status = 1
            continue
        try:
            ref = fns["tmpl2py"]()
        except Exception as e:  # noqa: BLE001
            notes.append(f"{sc.label}: tmpl2py render failed: {type(e).__name__}: {e}")
            status = 1
            continue
        us: dict[str, Any] = {}
        timed: dict[str, Callable[[], str]] = {}
        for name, fn in fns.items():
            try:
                out = fn()
            except Exception as e:  # noqa: BLE001
                us[name] = "ERROR"
                notes.append(f"{sc.label}: {name} raised {type(e).__name__}: {str(e)[:100]}")
                continue
            if out != ref:
                us[name] = MISMATCH
                i = next((k for k, (a, b) in enumerate(zip(out, ref)) if a != b), min(len(out), len(ref)))
                notes.append(f"{sc.label}: {name} output differs from tmpl2py at char {i} "
                             f"(theirs {out[i:i + 30]!r}, ours {ref[i:i + 30]!r})")
                continue
            timed[name] = fn
        for name, why in skipped.items():
            notes.append(f"{sc.label}: {name} skipped: {why}")
        stats: dict[str, dict] = {}
        us.update(time_interleaved(timed, rounds, batch_ns, stats))
        hand_key = "hand_literal" if "hand_literal" in us else "hand"
        ratios = {
            "tmpl2py/hand": _ratio(us.get("tmpl2py"), us.get(hand_key)),
            "transformers/tmpl2py": _ratio(us.get("transformers"), us.get("tmpl2py")),
            "jinja2/tmpl2py": _ratio(us.get("jinja2"), us.get("tmpl2py")),
            "minijinja/tmpl2py": _ratio(us.get("minijinja"), us.get("tmpl2py")),
        }
        results.append({"scenario": sc.label, "seed": sc.seed, "kind": sc.kind, "n": sc.n,
                        "out_chars": len(ref), "us": us, "ratios": ratios, "stats": stats})
        print(f"  {sc.label}: " + ", ".join(f"{LABELS[k]}={_fmt_us(v)}" for k, v in us.items()), flush=True)

    header, rows = build_rows(results)
    print()
    print(format_text_table(header, rows))
    summary = summarize(results)
    print()
    if "geomean_tmpl2py_over_hand" in summary:
        print(f"geomean tmpl2py/hand-written: {summary['geomean_tmpl2py_over_hand']:.3f}x over "
              f"{sum(1 for r in results if r['ratios'].get('tmpl2py/hand') is not None)} scenarios "
              f"(000 against the _literal=True variant); max {summary['max_tmpl2py_over_hand']:.2f}x "
              f"({summary['max_scenario']})")
    best = [_ratio(r["stats"].get("tmpl2py", {}).get("min_us"),
                   r["stats"].get("hand_literal", r["stats"].get("hand", {})).get("min_us")) for r in results]
    best = [b for b in best if b is not None]
    if best:  # fastest samples: less sensitive to other processes on a loaded machine
        gm = math.exp(sum(math.log(x) for x in best) / len(best))
        summary["geomean_best_tmpl2py_over_hand"] = gm
        print(f"  (same from each contender's fastest sample instead of its median: geomean {gm:.3f}x, "
              f"max {max(best):.2f}x)")
    print("targets:")
    for name, ok in summary["targets"].items():
        print(f"  [{'n/a' if ok is None else ('MET' if ok else 'MISSED')}] {name}")

    imp = measure_import(ROOT / "generated" / "seed000_command.py", repeats=3 if args.quick else 9)
    if imp is not None:
        if "error" in imp:
            print(f"import generated/seed000_command.py: failed: {imp['error']}")
        else:
            print(f"import generated/seed000_command.py (fresh interpreter, best of N): runtime "
                  f"{imp['runtime_us'] / 1000:.2f} ms + module {imp['module_us'] / 1000:.2f} ms = "
                  f"{imp['total_us'] / 1000:.2f} ms")
    comp = measure_compile_largest(repeats=1 if args.quick else 3)
    if comp is not None:
        if "error" in comp:
            print(f"compile largest corpus template {comp['template']} ({comp['bytes']} B): failed: {comp['error']}")
        else:
            print(f"compile largest corpus template {comp['template']} ({comp['bytes']} B): {comp['ms']:.0f} ms "
                  f"(best of {1 if args.quick else 3})")
    if notes:
        print("notes:")
        for n in notes:
            print("  " + n)

    if args.markdown:
        md = [format_markdown_table(header, rows), ""]
        if "geomean_tmpl2py_over_hand" in summary:
            md.append(f"geomean tmpl2py/hand-written: **{summary['geomean_tmpl2py_over_hand']:.3f}x**, "
                      f"max {summary['max_tmpl2py_over_hand']:.2f}x ({summary['max_scenario']})")
            md.append("")
        for name, ok in summary["targets"].items():
            md.append(f"- {'n/a' if ok is None else ('met' if ok else '**missed**')}: {name}")
        Path(args.markdown).write_text("\n".join(md) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": rounds, "results": results, "summary": summary,
                                               "import": imp, "compile_largest": comp, "notes": notes},
                                              indent=2, ensure_ascii=False) + "\n")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
