"""Incremental conversations against full renders: the per-turn cost over a 200-turn chat.

``python -m tmpl2py.bench.incremental [--turns 200] [--repeat 5] [--shared DIR]``

For each template a session (``t.conversation(**options)``) takes a system message, then per
turn a user message and the assistant's reply (``session.extend``). Before timing, every
turn's session prompt is checked equal to the full render of the same conversation (a
difference is an error, exit status 1). Reported per turn 1, 10, 50, 100 and the last:

- **session step** and **full render** of the conversation so far, in microseconds: the best
  (smallest) time over ``--repeat`` runs (the minimum, as ``timeit`` advises: on a loaded
  machine the median measures the scheduler), the garbage collector off while timing. The
  two are timed in separate passes over the conversation, the passes alternating run by run
  in one process: timing a session step right after a full render of the whole history
  measured that render's footprint (its evicted caches, its garbage) in the step — the drift
  of the old table's chatml row, 24 us at turn 10 to 71 us at turn 200;
- **calls**: the Python function calls (and C calls) one session step makes, counted with
  ``sys.setprofile``: a deterministic measure of its work, flat exactly when the step does
  not grow with the history.

Templates: the project's ``examples/seed001_qwen.jinja`` and, from ``../shared/corpus`` when
present, a few Jinja corpus templates that qualify for incremental rendering and one that does
not, and three Go (Ollama) templates that qualify (one carrying a variable) and one that does not.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED_TEMPLATES = ("chujiezheng__chatml", "chujiezheng__phi-3", "llamacpp__moonshotai-Kimi-K2",
                    "chujiezheng__qwen2.5-instruct")  # fmt: skip
SHARED_GO = ("llama3-instruct", "chatml", "vicuna", "gemma3-instruct")  # vicuna: carries $system
JINJA_OPTIONS = {"add_generation_prompt": True, "bos_token": "<s>", "eos_token": "</s>"}
MARKS = (1, 10, 50, 100)


def conversation(turns: int) -> list:
    out = [{"role": "system", "content": "You are a helpful assistant."}]
    for k in range(turns):
        out.append({"role": "user", "content": f"Question {k}: what is {k} * 3?"})
        out.append({"role": "assistant", "content": f"{k} * 3 = {k * 3}."})
    return out


def options(t: Any) -> dict:
    return {} if t.dialect == "go" else JINJA_OPTIONS


def check(t: Any, convo: list) -> None:
    session = t.conversation(**options(t))
    session.append(convo[0])
    for k in range(1, len(convo), 2):
        session.extend(convo[k : k + 2])
        if session.prompt() != t.render_conversation(convo[: k + 2], **options(t)):
            raise SystemExit(f"{t.name}: the session differs from the full render at turn {k // 2 + 1}")


def session_pass(t: Any, convo: list) -> list:
    """Seconds of each turn's session step."""
    session = t.conversation(**options(t))
    session.append(convo[0])
    clock, out = time.perf_counter, []
    for k in range(1, len(convo), 2):
        new = convo[k : k + 2]
        t0 = clock()
        session.extend(new)
        out.append(clock() - t0)
    return out


def full_pass(t: Any, convo: list) -> list:
    """Seconds of each turn's full render of the conversation so far."""
    clock, out, opts = time.perf_counter, [], options(t)
    for k in range(1, len(convo), 2):
        so_far = convo[: k + 2]
        t0 = clock()
        t.render_conversation(so_far, **opts)
        out.append(clock() - t0)
    return out


def step_calls(t: Any, convo: list) -> list:
    """The profile events (Python and C calls) of each turn's session step."""
    session = t.conversation(**options(t))
    session.append(convo[0])
    count = [0]

    def profile(frame: Any, event: str, arg: Any) -> None:
        count[0] += 1

    out = []
    for k in range(1, len(convo), 2):
        count[0] = 0
        sys.setprofile(profile)
        try:
            session.extend(convo[k : k + 2])
        finally:
            sys.setprofile(None)
        out.append(count[0])
    return out


def measure(t: Any, turns: int, repeat: int) -> dict:
    convo = conversation(turns)
    check(t, convo)
    steps, fulls = [], []
    gc.disable()
    try:
        for _ in range(repeat):
            steps.append(session_pass(t, convo))
            fulls.append(full_pass(t, convo))
    finally:
        gc.enable()
    calls = step_calls(t, convo)
    marks = [m for m in MARKS if m < turns] + [turns]
    return {
        m: (min(r[m - 1] for r in steps) * 1e6, min(r[m - 1] for r in fulls) * 1e6, calls[m - 1])
        for m in marks
    }


def templates(shared: Path) -> list:
    from tmpl2py import compile_template

    out = [compile_template((ROOT / "examples" / "seed001_qwen.jinja").read_text(), name="seed001_qwen")]
    folder = shared / "corpus" / "jinja" / "templates"
    go_folder = shared / "corpus" / "gotmpl" / "templates"
    if folder.is_dir() and go_folder.is_dir():
        for name in SHARED_TEMPLATES:
            out.append(compile_template((folder / f"{name}.jinja").read_text(), name=name))
        for name in SHARED_GO:
            out.append(compile_template((go_folder / f"{name}.gotmpl").read_text(), "go", name=name))
    else:
        print(f"note: {folder} not found: only the project's example", file=sys.stderr)
    return out


def main(argv: Any = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tmpl2py.bench.incremental")
    p.add_argument("--turns", type=int, default=200)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = p.parse_args(argv)
    for t in templates(Path(args.shared)):
        session = t.conversation(**options(t))
        how = "incremental" if session.incremental else f"full render ({session.reason[:70]}...)"
        row = measure(t, args.turns, args.repeat)
        print(f"{t.name} ({t.dialect}): session {how}")
        print("  turn   session step us   full render us   step calls")
        for m, (step, full, calls) in row.items():
            print(f"  {m:>4}   {step:>15.1f}   {full:>14.1f}   {calls:>10}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
