#!/usr/bin/env python3
"""Minimise divergences logged by the Go property tests (``TMPL2PY_DIVERGENCE_LOG``).

Usage::

    python tests/property/go/gominimize.py LOG.jsonl [--out DIR] [--per-signature N]

For each distinct signature the smallest logged cases are reduced (template segments, then
characters, deleted by delta debugging; data pruned) while the case keeps diverging with the
same signature. The results are printed, and with ``--out`` written as regression case files
(``{"profile": ..., "data"|"request": ...}``, a line ``---``, the template).

Not a test: a triage tool.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE.parent))

import godiff as G  # noqa: E402
import harness as H  # noqa: E402


def case_signature(profile: str, source: str, data: Any) -> Optional[str]:
    ref, ours = G.outcomes(profile, source, data)
    if G.internal_crash(ref, ours) is None and G.divergence(ref, ours) is None:
        return None
    return G.signature(ref, ours)


_SEGMENT = re.compile(r"\{\{.*?\}\}|[^{]+|\{", re.S)


def _simplify_data(data: Any, keep: Callable[[Any], bool]) -> Any:
    """Drop keys / list items and simplify values while keep(data) holds."""
    changed = True
    while changed:
        changed = False
        for path, candidate in list(_variants(data)):
            if keep(candidate):
                data, changed = candidate, True
                break
    return data


def _variants(value: Any, path: tuple = ()) -> Any:
    if isinstance(value, dict):
        for k in list(value):
            smaller = {kk: vv for kk, vv in value.items() if kk != k}
            yield path, smaller
        for k, v in value.items():
            for p, sub in _variants(v, path + (k,)):
                yield p, {**value, k: sub}
    elif isinstance(value, list):
        for i in range(len(value)):
            yield path, value[:i] + value[i + 1:]
        for i, v in enumerate(value):
            for p, sub in _variants(v, path + (i,)):
                yield p, value[:i] + [sub] + value[i + 1:]
    elif isinstance(value, str) and len(value) > 1:
        yield path, value[: len(value) // 2]
        yield path, "x"
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value not in (0, 1):
        yield path, 1


def minimise(profile: str, source: str, data: Any) -> tuple:
    sig = case_signature(profile, source, data)
    if sig is None:
        return source, data, None

    def keep_src(s: str) -> bool:
        try:
            return case_signature(profile, s, data) == sig
        except Exception:  # noqa: BLE001
            return False

    source = H.reduce_source(source, keep_src, _SEGMENT)

    def keep_data(d: Any) -> bool:
        try:
            return case_signature(profile, source, d) == sig
        except Exception:  # noqa: BLE001
            return False

    data = _simplify_data(data, keep_data)
    # once more on the template, with the smaller data
    source = "".join(H.ddmin(list(source), lambda chars: keep_src("".join(chars))))
    return source, data, sig


def write_case(folder: Path, name: str, profile: str, source: str, data: Any) -> Path:
    key = "data" if profile == "plain" else "request"
    return H.write_case(folder / f"{name}.txt", {"profile": profile, key: data}, source)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--out")
    ap.add_argument("--per-signature", type=int, default=1)
    args = ap.parse_args()
    by_sig: dict = {}
    for line in open(args.log, encoding="utf-8"):
        rec = json.loads(line)
        by_sig.setdefault(rec["signature"], []).append(rec)
    for sig, recs in sorted(by_sig.items()):
        recs.sort(key=lambda r: len(r["template"]) + len(json.dumps(r["data"])))
        for i, rec in enumerate(recs[: args.per_signature]):
            source, data, new_sig = minimise(rec["profile"], rec["template"], rec["data"])
            print(f"=== {sig} ({len(recs)} logged) -> {new_sig}")
            print(f"profile: {rec['profile']}\ntemplate: {source!r}\ndata: {json.dumps(data, ensure_ascii=False)}")
            ref, ours = G.outcomes(rec["profile"], source, data)
            print(f"go:   {ref.short()}\nours: {ours.short()}\n")
            if args.out and new_sig:
                slug = re.sub(r"[^a-z0-9]+", "-", sig.lower()).strip("-")[:40]
                write_case(Path(args.out), f"{slug}-{i}", rec["profile"], source, data)


if __name__ == "__main__":
    main()
