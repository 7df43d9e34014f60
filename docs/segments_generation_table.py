"""Print the docs table comparing ``assistant_spans`` with ``{% generation %}`` spans.

For every shared-corpus template that has a ``{% generation %}`` tag and every fixture, it
renders the conversation with ``return_assistant_tokens_mask=True`` (transformers' spans, as
tmpl2py reproduces them) and with ``segments=True``, and compares the spans' characters with
``assistant_spans(segments)`` and ``assistant_spans(segments, include_end=True)``.

    python docs/segments_generation_table.py [path/to/shared]   # default: ../shared
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tmpl2py import compile_template
from tmpl2py.segments import assistant_spans


def chars(spans: list) -> set:
    return {i for a, b in spans for i in range(a, b)}


def compare(generation: list, ours: list) -> str:
    g, o = chars(generation), chars(ours)
    if g == o:
        return "equal"
    if not g:
        return "no generation text"
    if g <= o:
        return f"ours covers it (+{len(o - g)} chars)"
    if o <= g:
        return f"ours inside it (-{len(g - o)} chars)"
    return f"differ (-{len(g - o)} / +{len(o - g)} chars)"


def rows(shared: Path) -> list:
    corpus = shared / "corpus" / "jinja"
    out = []
    for path in sorted((corpus / "templates").glob("*.jinja")):
        source = path.read_text(encoding="utf-8")
        if "generation" not in source or "endgeneration" not in source:
            continue
        t = compile_template(source)
        for fixture in sorted((corpus / "fixtures").glob("*.json")):
            call = json.loads(fixture.read_text(encoding="utf-8"))
            messages = call.pop("messages")
            try:
                prompt, generation = t.render_conversation(
                    messages, return_assistant_tokens_mask=True, **call
                )
                segments = t.render_conversation(messages, segments=True, **call)
            except Exception as e:  # noqa: BLE001 (a fixture the template rejects: shown as such)
                out.append((path.stem, fixture.stem, f"render fails: {type(e).__name__}", "", ""))
                continue
            plain = assistant_spans(segments)
            ended = assistant_spans(segments, include_end=True)
            out.append(
                (
                    path.stem,
                    fixture.stem,
                    str(len(generation)),
                    compare(generation, plain),
                    compare(generation, ended),
                )
            )
    return out


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared"
    print("| template | fixture | generation spans | `assistant_spans` | `include_end=True` |")
    print("|---|---|---|---|---|")
    for row in rows(shared):
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
