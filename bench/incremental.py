"""Incremental conversations against full renders: the per-turn cost over a 200-turn chat.

``python -m tmpl2py.bench.incremental [--turns 200] [--repeat 5] [--shared DIR]``

For each template a session (``t.conversation(add_generation_prompt=True)``) takes a system
message, then per turn a user message and the assistant's reply (``session.extend``); the
full render of the same conversation (``t.render_conversation``) at that turn is timed beside
it. Before timing, every turn's session prompt is checked equal to the full render (a
difference is an error, exit status 1). Reported: the best (smallest) time of one turn in
microseconds at turns 1, 10, 50, 100 and the last, over ``--repeat`` runs (the minimum, as
``timeit`` advises: on a loaded machine a millisecond render is often preempted, and the
median then measures the scheduler; the garbage collector is off while timing). Templates: the
project's ``examples/seed001_qwen.jinja`` and, from ``../shared/corpus`` when present, a few
corpus templates that qualify for incremental rendering and one that does not.
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
OPTIONS = {"add_generation_prompt": True, "bos_token": "<s>", "eos_token": "</s>"}
MARKS = (1, 10, 50, 100)


def conversation(turns: int) -> list:
    out = [{"role": "system", "content": "You are a helpful assistant."}]
    for k in range(turns):
        out.append({"role": "user", "content": f"Question {k}: what is {k} * 3?"})
        out.append({"role": "assistant", "content": f"{k} * 3 = {k * 3}."})
    return out


def check(t: Any, convo: list) -> None:
    session = t.conversation(**OPTIONS)
    session.append(convo[0])
    for k in range(1, len(convo), 2):
        session.extend(convo[k : k + 2])
        if session.prompt() != t.render_conversation(convo[: k + 2], **OPTIONS):
            raise SystemExit(f"{t.name}: the session differs from the full render at turn {k // 2 + 1}")


def one_run(t: Any, convo: list) -> tuple[list, list]:
    """Per-turn seconds: (session step, full render of the conversation so far)."""
    session = t.conversation(**OPTIONS)
    session.append(convo[0])
    steps, fulls = [], []
    clock = time.perf_counter
    for k in range(1, len(convo), 2):
        new = convo[k : k + 2]
        t0 = clock()
        session.extend(new)
        t1 = clock()
        t.render_conversation(convo[: k + 2], **OPTIONS)
        t2 = clock()
        steps.append(t1 - t0)
        fulls.append(t2 - t1)
    return steps, fulls


def measure(t: Any, turns: int, repeat: int) -> dict:
    convo = conversation(turns)
    check(t, convo)
    runs = []
    gc.disable()
    try:
        for _ in range(repeat):
            runs.append(one_run(t, convo))
    finally:
        gc.enable()
    marks = [m for m in MARKS if m < turns] + [turns]
    row = {}
    for m in marks:
        row[m] = (
            min(r[0][m - 1] for r in runs) * 1e6,
            min(r[1][m - 1] for r in runs) * 1e6,
        )
    return row


def templates(shared: Path) -> list:
    from tmpl2py import compile_template

    out = [compile_template((ROOT / "examples" / "seed001_qwen.jinja").read_text(), name="seed001_qwen")]
    folder = shared / "corpus" / "jinja" / "templates"
    if folder.is_dir():
        for name in SHARED_TEMPLATES:
            out.append(compile_template((folder / f"{name}.jinja").read_text(), name=name))
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
        session = t.conversation(**OPTIONS)
        how = "incremental" if session.incremental else f"full render ({session.reason[:70]}...)"
        row = measure(t, args.turns, args.repeat)
        print(f"{t.name}: session {how}")
        print("  turn   session step us   full render us")
        for m, (step, full) in row.items():
            print(f"  {m:>4}   {step:>15.1f}   {full:>14.1f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
