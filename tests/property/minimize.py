#!/usr/bin/env python3
"""Minimise divergences logged by the property tests (``TMPL2PY_DIVERGENCE_LOG``).

Usage::

    python tests/property/minimize.py LOG.jsonl [--out DIR] [--per-signature N]

For each distinct signature (how the two outcomes differ, and where ours raised), the
smallest logged case is reduced: template segments and characters are deleted (delta
debugging) and the context is pruned (keys dropped, values simplified) while the case keeps
the same signature. The result is printed, and with ``--out`` written as a regression case
file (JSON context, a line ``---``, the template source).

Not a test: a tool for triage. It imports the same helpers as the property tests.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import differential as D  # noqa: E402
import harness as H  # noqa: E402

_GENERATED_LINE = re.compile(r"(<tmpl2py:[^>]*>+):\d+")


def case_signature(source: str, context: Any, conversation: bool = False) -> Optional[str]:
    """The divergence signature of a case, or None when both sides agree."""
    if conversation:
        ref = D.reference_conversation(source, context)
        if ref.kind == "timeout":
            return None
        ours = D.ours_conversation(source, context, compiled=D.ours_compile_cached(source))
    else:
        ref = D.reference_render(source, context)
        if ref.kind == "timeout":
            return None
        ours = D.ours_render(source, context, compiled=D.ours_compile_cached(source))
    if D.divergence(ref, ours) is None:
        return None
    return _GENERATED_LINE.sub(r"\1", D.signature(ref, ours))


_SEGMENT = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}|[^{]+|\{", re.S)


def minimise_source(source: str, ok: Callable[[str], bool]) -> str:
    source = H.reduce_source(source, ok, _SEGMENT, allow_empty=False)
    # then a few rewrites that make expressions simpler
    for pattern, repl in [(r"\(\s*([\w.'\"]+)\s*\)", r"\1"), (r"[ \t]{2,}", " ")]:
        candidate = re.sub(pattern, repl, source)
        if candidate != source and ok(candidate):
            source = candidate
    return source


_SIMPLE_VALUES: list = [None, "", 0, "a", 1, [], {}, True]


def minimise_value(value: Any, ok: Callable[[Any], bool]) -> Any:
    for simple in _SIMPLE_VALUES:
        if type(simple) is type(value) and simple == value:
            return value
        if ok(simple):
            return simple
    if isinstance(value, list):
        items = list(value)
        i = 0
        while i < len(items):
            candidate = items[:i] + items[i + 1:]
            if ok(candidate):
                items = candidate
            else:
                items[i] = minimise_value(items[i], lambda v, i=i: ok(items[:i] + [v] + items[i + 1:]))
                i += 1
        return items
    if isinstance(value, dict):
        out = dict(value)
        for key in list(out):
            candidate = {k: v for k, v in out.items() if k != key}
            if ok(candidate):
                out = candidate
            else:
                out[key] = minimise_value(out[key], lambda v, key=key: ok({**out, key: v}))
        return out
    if isinstance(value, str) and len(value) > 1:
        chars = H.ddmin(list(value), lambda cs: ok("".join(cs)), allow_empty=False)
        return "".join(chars)
    return value


def minimise(source: str, context: Any, conversation: bool = False) -> tuple:
    target = case_signature(source, context, conversation)
    if target is None:
        return source, context, None
    if conversation:
        # Keep the call's shape: prune inside the messages and the other arguments.
        context = minimise_value(context, lambda c: isinstance(c, dict) and "messages" in c
                                 and isinstance(c["messages"], list)
                                 and case_signature(source, c, True) == target)
        return source, context, target
    context = minimise_value(context, lambda c: isinstance(c, dict) and case_signature(source, c) == target)
    source = minimise_source(source, lambda s: case_signature(s, context) == target)
    context = minimise_value(context, lambda c: isinstance(c, dict) and case_signature(source, c) == target)
    return source, context, target


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--per-signature", type=int, default=1)
    ap.add_argument("--property", action="append")
    args = ap.parse_args()
    groups: dict = {}
    for line in open(args.log, encoding="utf-8"):
        rec = json.loads(line)
        if args.property and rec["property"] not in args.property:
            continue
        key = (rec["property"] == "corpus", _GENERATED_LINE.sub(r"\1", rec["signature"]))
        groups.setdefault(key, []).append(rec)
    for n, ((conversation, sig), recs) in enumerate(sorted(groups.items())):
        recs.sort(key=lambda r: len(r["template"]) + len(json.dumps(r["context"])))
        print(f"=== [{n}] {sig} ({len(recs)} cases, property {recs[0]['property']})", flush=True)
        for rec in recs[: args.per_signature]:
            src, ctx, target = minimise(rec["template"], rec["context"], conversation)
            if target is None:
                print("   (no longer diverges)")
                continue
            ref = (D.reference_conversation(src, ctx) if conversation else D.reference_render(src, ctx))
            ours = (D.ours_conversation(src, ctx) if conversation else D.ours_render(src, ctx))
            print("   template:", repr(src) if not conversation else f"<corpus template, {len(src)} chars>")
            print("   context: ", json.dumps(ctx, ensure_ascii=False)[:2000])
            print("   reference:", ref.short()[:500])
            print("   ours:     ", ours.short()[:500], flush=True)
            if args.out and not conversation:
                H.write_case(args.out / f"case{n:03d}.txt", ctx, src)


if __name__ == "__main__":
    main()
