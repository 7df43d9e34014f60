"""Hypothesis strategies for the Go text/template dialect.
Long because one generator covers every action, function and data shape of the Go dialect
and Ollama's requests.

* :func:`requests`    Ollama /api/chat-shaped requests (messages of every role, tool calls with
  object arguments, tool results, thinking, tools with nested parameters, ``think``);
* :func:`json_data`   JSON data for the ``plain`` profile (keys the generated templates use);
* :func:`templates`   Go template SOURCE from a grammar of the dialect's constructs: text,
  actions, comments, trim markers, pipelines, parenthesised pipelines, variables
  (declare/assign), if/else if/else, range in every form (maps, ints, else, break/continue),
  with/else with, define/template/block, field chains, constants of every kind, the builtins
  and (ollama profile) Ollama's functions. Nesting is bounded.

``chaotic=True`` additionally mutates the source (deletes/duplicates spans, inserts stray
delimiters and keywords) to reach parse errors and odd corners.

Every generator is a plain function of a ``Dice`` (tests/tmpl2py_dice.py): few Hypothesis
draws per example for many choices.

Named ``gostrategies`` (not ``strategies``): pytest puts several test folders on ``sys.path``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

if str(Path(__file__).resolve().parents[2]) not in sys.path:  # tests/: tmpl2py_dice
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tmpl2py_dice import Dice, generator, json_tree, unwrapped  # noqa: E402

# Generators are plain functions of a Dice ``g`` (tests/tmpl2py_dice.py: few Hypothesis draws
# for many choices); the public strategies wrap them.

# ----------------------------------------------------------------------------- text

SPECIAL_TEXT = [
    "", " ", "\n", "\t", "\r\n", "{{", "}}", "{{ .X }}", "{%", "{#", "}", "{", "{{-", "-}}",
    "\"", "'", "`", "\\", "\\n", "\\\"", "\x00", "a\x00b", "😀", "👨‍👩‍👧", "مرحبا", "שָׁלוֹם",
    "\u202e", "\u200b", "\ufeff", "é", "e\u0301", "日本語", "<b>&amp;</b>", "<|im_end|>",
    "a\u2028b", "\x7f", "\x1b[0m", "%v", "%s%d", "null", "true", "0", "-1", "1e21", "<no value>",
    "[INST]", "</s>",
]
_CHARS = st.characters(blacklist_categories=("Cs",))
_ANY_TEXT: dict = {}


def _text_value(g: Dice, max_size: int = 24) -> str:
    """A special text, any code points (one draw), or 2 to 4 special texts joined (a third each)."""
    k = g.roll(3)
    if k == 0:
        return g.pick(SPECIAL_TEXT)
    if k == 2:
        return "".join([g.pick(SPECIAL_TEXT) for _ in range(g.int(2, 4))])
    strat = _ANY_TEXT.get(max_size)
    if strat is None:
        strat = _ANY_TEXT[max_size] = unwrapped(st.text(_CHARS, max_size=max_size))
    return g.draw(strat)


def text_values(max_size: int = 24) -> st.SearchStrategy[str]:
    """Strings from every character class (no lone surrogates)."""
    return generator(_text_value, max_size)


# ----------------------------------------------------------------------------- JSON values

_WIDE_INTS = unwrapped(st.integers(-(2**63), 2**64))
_ANY_FLOATS = unwrapped(st.floats(allow_nan=False, allow_infinity=False))
NICE_FLOATS = (0.0, -0.0, 0.5, 1.5, -2.25, 1e21, 1e20, 1e-7, 123456789.0, 3.0, 2.5e-5)


def _scalar(g: Dice) -> Any:
    """None, a bool, a small or a 64-bit-wide integer, a chosen or any float, or a text
    (about one time in seven each; text is the likeliest, as the three kinds of text_values)."""
    k = g.roll(9)
    if k == 0:
        return None
    if k == 1:
        return g.roll(2) == 1
    if k == 2:
        return g.int(-10, 10)
    if k == 3:
        return g.draw(_WIDE_INTS)
    if k == 4:
        return g.pick(NICE_FLOATS)
    if k == 5:
        return g.draw(_ANY_FLOATS)
    return _text_value(g, 12)


PLAIN_KEYS = ["a", "b", "c", "l", "m", "n", "s", "x", "Role", "Content", "k", "é", "1"]


def _key(g: Dice) -> str:
    return g.pick(PLAIN_KEYS) if g.roll(4) == 0 else _text_value(g, 6)


def _json_value(g: Dice, max_leaves: int = 12) -> Any:
    """Nested JSON (tmpl2py_dice.json_tree) of the scalars above, keys PLAIN_KEYS or any text."""
    return json_tree(g, _scalar, _key, max_leaves)


_JSON_VALUES: dict = {}


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    strat = _JSON_VALUES.get(max_leaves)
    if strat is None:
        strat = _JSON_VALUES[max_leaves] = generator(_json_value, max_leaves)
    return strat


def _plain_object(g: Dice) -> dict:
    """An object with some of PLAIN_KEYS (in a random order)."""
    return g.optional({k: _json_value for k in PLAIN_KEYS})


def _nested_value(g: Dice) -> Any:
    return _json_value(g) if g.roll(2) else _plain_object(g)


def _plain_nested(g: Dice) -> dict:
    return g.optional({k: _nested_value for k in PLAIN_KEYS})


def _json_data(g: Dice) -> Any:
    k = g.roll(4)
    if k == 0:
        return _plain_object(g)
    if k < 3:
        return _plain_nested(g)
    return _json_value(g)


def json_data() -> st.SearchStrategy[Any]:
    """Plain-profile data: mostly an object whose keys the templates refer to."""
    return generator(_json_data)


# ----------------------------------------------------------------------------- Ollama requests

ROLES = ["system", "user", "assistant", "tool", "user", "assistant", "User", "ASSISTANT",
         "developer", "function", "ipython", "", "model", "Tool", "系统", "İNFOΣ"]
TOOL_NAMES = ["get_weather", "search", "f", "a.b", "", "名前", "calc"]
SCHEMA_TYPES = ["string", "integer", "number", "boolean", "array", "object", "null"]


def _schema(g: Dice, depth: int = 0) -> dict:
    """A JSON schema of a tool parameter (nested properties and anyOf down to depth 2)."""
    fields: dict = {
        "type": lambda g: g.pick(SCHEMA_TYPES) if g.roll(2) else [
            g.pick(("string", "integer", "null", "number")) for _ in range(g.int(1, 3))],
        "description": lambda g: _text_value(g, 10),
        "enum": lambda g: [_enum_value(g) for _ in range(g.int(0, 3))],
        "items": lambda g: {"type": g.pick(("string", "integer"))} if g.roll(2) else _json_value(g, 3),
    }
    if depth < 2:
        fields["properties"] = lambda g: {
            g.pick(("a", "b", "q", "z", "city", "unit")): _schema(g, depth + 1) for _ in range(g.int(0, 3))}
        fields["anyOf"] = lambda g: [_schema(g, depth + 1) for _ in range(g.int(0, 2))]
    return g.optional(fields)


def _enum_value(g: Dice) -> Any:
    k = g.roll(6)  # a text (the three kinds of text_values), an int, None or a bool
    return _text_value(g, 6) if k < 3 else g.int(-3, 3) if k == 3 else None if k == 4 else g.roll(2) == 1


def _parameters(g: Dice) -> dict:
    return g.optional({
        "type": lambda g: "object",
        "required": lambda g: [g.pick(("a", "b", "city", "x")) for _ in range(g.int(0, 3))],
        "properties": lambda g: {
            g.pick(("city", "unit", "a", "b", "o", "Zed", "é")): _schema(g) for _ in range(g.int(0, 4))},
        "$defs": lambda g: _json_value(g, 3),
    })


def _tool(g: Dice) -> dict:
    function = g.optional(
        {"description": lambda g: _text_value(g, 16), "parameters": _parameters},
        required={"name": lambda g: g.pick(TOOL_NAMES)},
    )
    return g.optional({"items": lambda g: _json_value(g, 2)},
                      required={"type": lambda g: "function", "function": lambda g: function})


def _usual_tool(g: Dice) -> dict:
    """A tool of the usual shape (string fields, properties with a type and maybe a
    description, an enum of strings or string items): the JSON fast way's input."""
    texts = lambda g, n: _text_value(g, n)  # noqa: E731
    props = {}
    for _ in range(g.int(0, 4)):
        prop: dict = {"type": g.pick(SCHEMA_TYPES)}
        if g.roll(2):
            prop["description"] = texts(g, 10)
        if g.roll(3) == 0:
            prop["enum"] = [texts(g, 6) for _ in range(g.int(0, 3))]
        if g.roll(4) == 0:
            prop["items"] = {"type": g.pick(("string", "integer"))}
        props[g.pick(("city", "unit", "a", "b", "o", "Zed", "é", ""))] = prop
    params: dict = {"type": "object", "properties": props}
    if g.roll(2):
        params["required"] = [g.pick(("a", "b", "city", "x")) for _ in range(g.int(0, 3))]
    return {"type": "function", "function": {
        "name": g.pick(TOOL_NAMES), "description": texts(g, 16), "parameters": params}}


def usual_tools() -> st.SearchStrategy[dict]:
    return generator(_usual_tool)


def _tools(g: Dice) -> list:
    return [_tool(g) for _ in range(g.int(0, 3))]


def tools() -> st.SearchStrategy[list]:
    return generator(_tools)


def _arguments(g: Dice) -> dict:
    keys = ("city", "unit", "a", "b", "n", "o", "z", "é")
    return {g.pick(keys): _json_value(g, 6) for _ in range(g.int(0, 4))}


def _tool_call(g: Dice) -> dict:
    function = g.optional({"index": lambda g: g.int(0, 3)},
                          required={"name": lambda g: g.pick(TOOL_NAMES), "arguments": _arguments})
    return g.optional({"id": lambda g: g.pick(("call_1", "c2", ""))},
                      required={"function": lambda g: function})


def _message(g: Dice) -> dict:
    role = g.pick(ROLES)
    msg: dict = {"role": role, "content": _text_value(g)}
    if g.roll(5) == 0:
        msg["thinking"] = _text_value(g, 12)
    if role.lower() == "assistant" and g.roll(2):
        msg["tool_calls"] = [_tool_call(g) for _ in range(g.int(1, 3))]
    if role.lower() == "tool" or g.roll(16) == 0:
        if g.roll(4):
            msg["tool_name"] = g.pick(TOOL_NAMES)
        if g.roll(4) == 0:
            msg["tool_call_id"] = g.pick(("call_1", "c2"))
    return msg


def _fresh_message(g: Dice) -> dict:
    g.new_block()
    return _message(g)


def messages() -> st.SearchStrategy[dict]:
    return generator(_message)


THINKS = [True, False, "high", "medium", "low"]


def _request(g: Dice, chaos: bool = False) -> dict:
    req: dict = {"messages": [_fresh_message(g) for _ in range(g.int(0, 6))]}
    if g.roll(3) == 0:
        req["tools"] = _tools(g)
    if g.roll(2):
        req["think"] = g.pick(THINKS)
    if chaos and g.roll(5) == 0:
        # input Ollama rejects, or odd but valid shapes
        kind = g.int(0, 7)
        if kind == 0:
            req["think"] = g.pick(["max", "", "HIGH", 1, None])
        elif kind == 1 and req["messages"]:
            req["messages"][0]["role"] = g.pick([1, None, True])
        elif kind == 2 and req["messages"]:
            req["messages"][0]["content"] = g.pick([None, 5, ["x"]])
        elif kind == 3:
            req["tools"] = g.pick([None, [], [{}], [{"function": {}}]])
        elif kind == 4:
            req["messages"] = g.pick([None, []])
        elif kind == 5 and req["messages"]:
            req["messages"][0]["tool_calls"] = [{"function": {"name": "f", "arguments": None}}]
        elif kind == 6:
            req["tools"] = [{"type": "function", "function": {"name": "f", "parameters": {
                "type": "object", "properties": {"p": {"type": g.pick([None, 1, ["a", 1]])}}}}}]
        elif kind == 7 and req["messages"]:
            arguments = g.pick(["{}", [1], 3])
            req["messages"][0]["tool_calls"] = [{"function": {"name": "f", "arguments": arguments}}]
    return req


_REQUESTS = {chaos: generator(_request, chaos) for chaos in (False, True)}


def requests(chaos: bool = False) -> st.SearchStrategy[dict]:
    """An /api/chat request: messages, optional tools and think (images absent)."""
    return _REQUESTS[chaos]


# ----------------------------------------------------------------------------- /api/generate

IMAGES = ["aGVsbG8=", "", "AA==", "/w==", "d29ybGQh"]
PROMPTS = ["Why?", "def f(x):\n    ", "[img] and [img]", "<|im_start|>", "", "a\n\nb", "%v {{ .X }}"]


def _modelfile(g: Dice) -> dict:
    out: dict = {}
    if g.roll(2):
        out["system"] = g.pick(["Be brief.", "", "Sys\n\nline"])
    if g.roll(2):
        out["messages"] = [
            {"role": g.pick(["user", "assistant", "system", "USER"]), "content": _text_value(g, 8)}
            for _ in range(g.int(0, 3))
        ]
    return out


def _generate_request(g: Dice) -> tuple:
    req: dict = {"prompt": g.pick(PROMPTS) if g.roll(2) else _text_value(g)}
    if g.roll(2):
        req["suffix"] = g.pick(["", "return x", "\n}", "<SUF>"]) if g.roll(2) else _text_value(g, 8)
    if g.roll(3) == 0:
        req["system"] = g.pick(["", "You are terse.", "S\nS"])
    if g.roll(3) == 0:
        req["images"] = [g.pick(IMAGES) for _ in range(g.int(1, 3))]
    if g.roll(2):
        req["think"] = g.pick(THINKS)
    if g.roll(8) == 0:
        req["raw"] = True
    modelfile = _modelfile(g) if g.roll(2) else None
    return req, modelfile


_GENERATE = generator(_generate_request)


def generate_requests() -> st.SearchStrategy[tuple]:
    """An /api/generate request (prompt, suffix, system, images, think, raw) and the model's
    Modelfile defaults (``{"system", "messages"}``) or None."""
    return _GENERATE


# ----------------------------------------------------------------------------- view types

VERBS = ["%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%T", "%t", "%6.2v", "%-4v"]
#: what to print inside ``range .Tools`` / ``range .Messages`` / ``range .ToolCalls``
VIEW_PATHS = {
    "tools": ["$", "$.Tools", ".", ".Function", ".Function.Parameters", ".Function.Parameters.Properties",
              ".Function.Parameters.Required", ".Function.Parameters.Defs", ".Items", ".Type",
              ".Function.Description"],
    "properties": [".", ".Type", ".Enum", ".Items", ".AnyOf", ".Properties", ".Description"],
    "messages": ["$.Messages", ".", ".Images", ".ToolCalls", ".Thinking", ".ToolName"],
    "calls": [".", ".Function", ".Function.Arguments", ".Function.Index", ".ID"],
}


def _form(g: Dice, expr: str) -> str:
    kind = g.int(0, 4)
    if kind == 0:
        return f"{{{{ {expr} }}}}"
    if kind == 1:
        return f"{{{{ print {expr} }}}}"
    if kind == 2:
        return f"{{{{ json {expr} }}}}"
    return f'{{{{ printf "{g.pick(VERBS)}" {expr} }}}}'


def _prints(g: Dice, kind: str) -> str:
    return "|".join(_form(g, g.pick(VIEW_PATHS[kind])) for _ in range(g.int(1, 3)))


def _view_template(g: Dice) -> str:
    parts = ["{{ $m := .Messages }}"]
    if g.roll(2):
        inner = _prints(g, "tools")
        if g.roll(2):
            inner += "{{ range $k, $p := .Function.Parameters.Properties }}" + _prints(g, "properties") + "{{ end }}"
        parts.append("{{ range .Tools }}" + inner + ";{{ end }}")
    if g.roll(3):
        inner = _prints(g, "messages")
        if g.roll(2):
            inner += "{{ range .ToolCalls }}" + _prints(g, "calls") + "{{ end }}"
        parts.append("{{ range .Messages }}" + inner + ";{{ end }}")
    if g.roll(3) == 0:
        parts.append(_form(g, g.pick([".", ".Think", ".ThinkLevel", ".IsThinkSet", ".System"])))
    return "\n".join(parts)


_VIEWS = generator(_view_template)


def view_templates() -> st.SearchStrategy[str]:
    """A messages-mode template printing the view types Ollama's templates see (tools,
    functions, parameters, properties, messages, images, tool calls, arguments, think values,
    the data map), each with ``{{ X }}``, ``print``, ``json`` or ``printf`` in a verb."""
    return _VIEWS


def _with_images(g: Dice, request: dict) -> dict:
    for msg in request.get("messages") or []:
        if isinstance(msg, dict) and g.roll(4) == 0:
            msg["images"] = [g.pick(IMAGES) for _ in range(g.int(1, 2))]
    return request


_IMAGE_REQUESTS = generator(lambda g: _with_images(g, _request(g)))


def requests_with_images() -> st.SearchStrategy[dict]:
    """:func:`requests` with images on some messages."""
    return _IMAGE_REQUESTS


# ----------------------------------------------------------------------------- templates


def _pick(g: Dice, seq: Any) -> Any:
    return g.pick(seq)


def _int(g: Dice, bounds: tuple) -> int:
    return g.int(*bounds)


# fields by the kind of dot they make sense on (others are tried too: errors are compared)
OLLAMA_TOP = [".Messages", ".Tools", ".System", ".Response", ".Think", ".ThinkLevel", ".IsThinkSet"]
LEGACY_TOP = [".System", ".Prompt", ".Response", ".Think", ".ThinkLevel", ".IsThinkSet"]
MSG_FIELDS = [".Role", ".Content", ".Thinking", ".ToolCalls", ".ToolName", ".ToolCallID", ".Images"]
CALL_FIELDS = [".ID", ".Function", ".Function.Name", ".Function.Arguments", ".Function.Index",
               ".Function.Arguments.city", ".Function.Arguments.a", ".Function.Arguments.o.z"]
TOOL_FIELDS = [".Type", ".Function", ".Function.Name", ".Function.Description", ".Function.Parameters",
               ".Function.Parameters.Type", ".Function.Parameters.Required",
               ".Function.Parameters.Properties", ".Function.Parameters.Properties.city",
               ".Function.Parameters.Properties.city.Type", ".Items", ".Function.Parameters.Defs"]
PROP_FIELDS = [".Type", ".Description", ".Enum", ".Properties", ".Items", ".AnyOf", ".ToTypeScriptType"]
ODD_FIELDS = [".Foo", ".role", ".Messages.Role", ".Content.X", ".X.Y.Z"]
PLAIN_FIELDS = [".a", ".b", ".c", ".l", ".m", ".n", ".s", ".x", ".Role", ".Content", ".k",
                ".a.b", ".m.k", ".m.a", ".l.x", ".x.y.z", ".missing", ".é"]

STRINGS = ['"x"', '""', '"user"', '"assistant"', '"system"', '"tool"', '"a b"', '"\\n"', '"\\t\\"q\\""',
           '"\\x41\\u00e9\\U0001F600"', '"\\101"', '"é😀"', '"{{"', '"%v"', '"<&>"', "`raw\\n`", "``",
           "`a\"b`", '"\\a\\b\\f\\v\\\\"', '"city"', '"a"', '"k"', '"\\u200f"']
CHARS = ["'a'", "'\\n'", "'\\x41'", "'\\u00e9'", "'é'", "'\\''", "'😀'", "'\\\\'", "'\\101'", "' '"]
INTS = ["0", "1", "2", "3", "-1", "42", "0x1F", "0X1f", "0o17", "0O17", "017", "0b101", "0B1",
        "1_000", "0x_1F", "-0", "+3", "9223372036854775807", "-9223372036854775808"]
FLOATS = ["1.5", "-2.5e3", "1e21", "1e20", "0x1p-2", "1.0", "0.1", "1E3", "2.", "1_0.5", "6.02e23",
          "1e-7", "100000.0"]
ODD_NUMBERS = ["1i", "2+3i", "08", "1__2", "0x", ".5", "1e", "18446744073709551616", "0x1.8p1", "'ab'"]
SMALL_INTS = ["0", "1", "2", "3", "-1"]

FORMATS = ['"%v"', '"%s"', '"%d"', '"%q"', '"%x"', '"%X"', '"%5.2f"', '"%T"', '"%+v"', '"%#v"', '"%-4s|"',
           '"%t"', '"%c"', '"%%"', '"%e"', '"%g"', '"%08.3f"', '"%[1]v"', '"%!"', '"%v %v"', '"%s=%d"',
           '"%6.2v"', '"%U"', '"%o"', '"%b"', '"<%v|%v|%v>"', '"% x"', '"%+q"', '"%#q"', '"%*d"', '"%.3s"']

BUILTINS = {  # name: (min args, max args)
    "and": (1, 3), "or": (1, 3), "not": (1, 1), "len": (1, 1), "index": (1, 3), "slice": (1, 4),
    "eq": (2, 3), "ne": (2, 2), "lt": (2, 2), "le": (2, 2), "gt": (2, 2), "ge": (2, 2),
    "print": (0, 3), "println": (0, 3), "html": (1, 2), "js": (1, 2), "urlquery": (1, 2),
    "call": (1, 2),
}
OLLAMA_FUNCS = {"json": (1, 1), "currentDate": (0, 1), "yesterdayDate": (0, 1), "toTypeScriptType": (1, 1)}

MAX_DEPTH = 3


class _Ctx:
    """What the generator knows at one point of the template."""

    def __init__(self, profile: str, mode: str, vars_: tuple = ("$",), in_range: bool = False,
                 dot: str = "top", in_define: bool = False):
        self.profile, self.mode = profile, mode
        self.vars, self.in_range, self.dot, self.in_define = vars_, in_range, dot, in_define

    def child(self, **kw: Any) -> "_Ctx":
        c = _Ctx(self.profile, self.mode, self.vars, self.in_range, self.dot, self.in_define)
        c.defined = getattr(self, "defined", ())
        for k, v in kw.items():
            setattr(c, k, v)
        return c

    def fields(self) -> list:
        if self.profile == "plain":
            return PLAIN_FIELDS
        top = LEGACY_TOP if self.mode == "legacy" else OLLAMA_TOP
        return {"top": top, "msg": MSG_FIELDS, "call": CALL_FIELDS, "tool": TOOL_FIELDS,
                "prop": PROP_FIELDS}.get(self.dot, top)


def _field(g: Dice, ctx: _Ctx) -> str:
    r = _int(g, (0, 19))
    if r == 0:
        return _pick(g, (ODD_FIELDS if ctx.profile == "ollama" else PLAIN_FIELDS))
    if r == 1 and ctx.profile == "ollama":
        top = LEGACY_TOP if ctx.mode == "legacy" else OLLAMA_TOP
        return "$" + _pick(g, (top))
    if r == 2:
        return "."
    return _pick(g, (ctx.fields()))


def _constant(g: Dice, small: bool = False) -> str:
    if small:
        return _pick(g, (SMALL_INTS))
    pool = _int(g, (0, 30))
    if pool < 8:
        return _pick(g, (STRINGS))
    if pool < 11:
        return _pick(g, (CHARS))
    if pool < 18:
        return _pick(g, (INTS))
    if pool < 22:
        return _pick(g, (FLOATS))
    if pool < 28:
        return _pick(g, (["true", "false", "nil"]))
    return _pick(g, (ODD_NUMBERS))


def _operand(g: Dice, ctx: _Ctx, depth: int, small: bool = False) -> str:
    r = _int(g, (0, 9))
    if r < 4:
        return _field(g, ctx)
    if r < 6:
        return _constant(g, small)
    if r < 8 and len(ctx.vars) > 0:
        v = _pick(g, (ctx.vars))
        if ctx.profile == "plain" and _int(g, (0, 3)) == 0:
            v += _pick(g, ([".a", ".b", ".x"]))
        return v
    if depth >= 2:
        return _field(g, ctx)
    inner = _pipeline(g, ctx, depth + 1, decl=False)
    suffix = ""
    if _int(g, (0, 4)) == 0:
        suffix = _pick(g, (ctx.fields()))
        if suffix == ".":
            suffix = ""
    return f"({inner}){suffix}"


SAFE_ANY = ["{f}", "{f}", "print {f}", 'printf "%v" {f}', "not {f}", "and {f} {g}", "or {f} {g}",
            "html {f}", "js {f}", "urlquery {f}", "print {f} {g}", 'printf "%v|%v" {f} {g}', "println {f}"]
SAFE_OLLAMA = {
    "top": ["len .Messages", "len .Tools", "json .Tools", "json .Messages", ".System", "currentDate",
            'eq .ThinkLevel "high"', "json .Think", "yesterdayDate", "slice .Messages 0 0", "index .Messages 0"],
    "msg": ['eq .Role "user"', 'eq .Role "assistant" "tool"', 'ne .Role "system"', "len .ToolCalls",
            "len .Content", "json .Content", ".Content", ".Role", "$.System", "json .", "."],
    "call": [".Function.Name", "json .Function.Arguments", ".Function.Arguments", ".Function.Index",
             "index .Function.Arguments \"city\"", "len .Function.Arguments", "."],
    "tool": [".Function.Name", "json .Function.Parameters", ".Function.Parameters.Properties", "json .",
             ".Function.Parameters.Required", "len .Function.Parameters.Properties", "."],
    "prop": [".Type", ".Description", "toTypeScriptType .", ".Enum", "json .", ".Properties", "."],
}
SAFE_PLAIN = ["len .s", "index .m \"k\"", 'eq .s "x"', "lt 1 2", "json .a"]


def _safe_command(g: Dice, ctx: _Ctx) -> str:
    if ctx.profile == "ollama" and ctx.mode == "messages" and _int(g, (0, 1)):
        return _pick(g, SAFE_OLLAMA.get(ctx.dot, SAFE_OLLAMA["top"]))
    if ctx.profile == "plain" and _int(g, (0, 9)) == 0:
        return _pick(g, SAFE_PLAIN)
    form = _pick(g, SAFE_ANY)
    f = _pick(g, ctx.vars) if _int(g, (0, 4)) == 0 else _pick(g, ctx.fields())
    other = _pick(g, ctx.fields())
    return form.format(f=f, g=other)


def _command(g: Dice, ctx: _Ctx, depth: int, piped: bool = False) -> str:
    if not piped and _int(g, (0, 9)) < 6:
        return _safe_command(g, ctx)
    r = _int(g, (0, 9))
    if r < 3 and not piped:
        return _operand(g, ctx, depth)
    funcs = dict(BUILTINS)
    if ctx.profile == "ollama" or _int(g, (0, 15)) == 0:
        funcs.update(OLLAMA_FUNCS)  # in plain: "function not defined" (both sides)
    if r < 5 and not piped:
        name = "printf"
        args = [_pick(g, (FORMATS))] if _int(g, (0, 9)) else []
        n = _int(g, (0, 3))
    else:
        name = _pick(g, (sorted(funcs)))
        lo, hi = funcs[name]
        if _int(g, (0, 12)) == 0:  # wrong arity
            lo, hi = 0, hi + 1
        n = _int(g, (lo, hi))
        if piped:
            n = max(0, n - 1)
        args = []
    args += [_operand(g, ctx, depth) for _ in range(n)]
    return " ".join([name] + args)


def _pipeline(g: Dice, ctx: _Ctx, depth: int = 0, decl: bool = True, small: bool = False) -> str:
    if small and _int(g, (0, 2)) == 0:
        cmd = _operand(g, ctx, depth, small=True)
    else:
        cmd = _command(g, ctx, depth)
    parts = [cmd]
    while _int(g, (0, 5)) == 0 and len(parts) < 3:
        parts.append(_command(g, ctx, depth, piped=True))
    return " | ".join(parts)


def _ws(g: Dice) -> str:
    return _pick(g, ([" ", " ", "", "  ", "\n", "\t"]))


def _delims(g: Dice) -> tuple:
    r = _int(g, (0, 9))
    left = "{{- " if r in (0, 1) else ("{{" + _ws(g) if r != 2 else "{{ ")
    r = _int(g, (0, 9))
    right = " -}}" if r in (0, 1) else (_ws(g) + "}}")
    return left, right


def _act(g: Dice, body: str) -> str:
    left, right = _delims(g)
    return left + body + right


def _text(g: Dice) -> str:
    t = _text_value(g, 12)
    # a literal "{{" in text would start an action: keep text text (chaos adds stray ones)
    while "{{" in t:
        t = t.replace("{{", "{ {")
    return t


def _new_var(g: Dice) -> str:
    return _pick(g, (["$x", "$y", "$i", "$v", "$k", "$_", "$é", "$x1"]))


def _items(g: Dice, ctx: _Ctx, depth: int) -> str:
    out = []
    vars_ = list(ctx.vars)
    for _ in range(_int(g, ((1, 4), (0, 3), (0, 2), (0, 2))[min(depth, 3)])):
        c = ctx.child(vars_=tuple(vars_))
        g.new_block()
        r = _int(g, (0, 23))
        if r < 4:
            out.append(_text(g))
        elif r < 9:
            out.append(_act(g, _pipeline(g, c)))
        elif r < 10:
            out.append(_pick(g, (["{{/* c */}}", "{{- /* c */ -}}", "{{/* multi\nline */}}",
                                             "{{- /* x */}}", "{{/* */ -}}", "{{/**/}}"])))
        elif r < 12:
            v = _new_var(g)
            out.append(_act(g, f"{v} := {_pipeline(g, c)}"))
            vars_.append(v)
        elif r < 13:
            v = _pick(g, (vars_)) if _int(g, (0, 7)) else _new_var(g)
            out.append(_act(g, f"{v} = {_pipeline(g, c)}"))
        elif r < 14 and ctx.in_range:
            kw = _pick(g, (["break", "continue"]))
            if _int(g, (0, 1)):
                out.append(_act(g, f"if {_pipeline(g, c, decl=False)}") + _act(g, kw) + _act(g, "end"))
            else:
                out.append(_act(g, kw))
        elif r < 14:
            out.append(_text(g))
        elif depth >= MAX_DEPTH:
            out.append(_act(g, _pipeline(g, c)))
        elif r < 17:
            out.append(_if(g, c, depth))
        elif r < 20:
            out.append(_range(g, c, depth))
        elif r < 22:
            out.append(_with(g, c, depth))
        else:
            out.append(_template_call(g, c))
    return "".join(out)


def _if(g: Dice, ctx: _Ctx, depth: int) -> str:
    cond = _pipeline(g, ctx)
    decl_vars = ctx.vars
    if _int(g, (0, 6)) == 0:
        v = _new_var(g)
        cond = f"{v} := {cond}"
        decl_vars = ctx.vars + (v,)
    s = _act(g, f"if {cond}") + _items(g, ctx.child(vars_=decl_vars), depth + 1)
    for _ in range(_int(g, (0, 2))):
        s += _act(g, f"else if {_pipeline(g, ctx)}") + _items(g, ctx.child(vars_=decl_vars), depth + 1)
    if _int(g, (0, 1)):
        s += _act(g, "else") + _items(g, ctx.child(vars_=decl_vars), depth + 1)
    return s + _act(g, "end")


def _with(g: Dice, ctx: _Ctx, depth: int) -> str:
    arg = _pipeline(g, ctx)
    vars_ = ctx.vars
    if _int(g, (0, 3)) == 0:
        v = _new_var(g)
        arg = f"{v} := {arg}"
        vars_ = vars_ + (v,)
    s = _act(g, f"with {arg}") + _items(g, ctx.child(vars_=vars_, dot="any"), depth + 1)
    for _ in range(_int(g, (0, 1))):
        s += _act(g, f"else with {_pipeline(g, ctx)}") + _items(g, ctx.child(vars_=vars_, dot="any"), depth + 1)
    if _int(g, (0, 1)):
        s += _act(g, "else") + _items(g, ctx.child(vars_=vars_), depth + 1)
    return s + _act(g, "end")


_COLLECTIONS = {
    "top": [(".Messages", "msg"), (".Tools", "tool"), ("$.Messages", "msg")],
    "msg": [(".ToolCalls", "call"), (".Images", "any"), (".Content", "any")],
    "call": [(".Function.Arguments", "any")],
    "tool": [(".Function.Parameters.Properties", "prop"), (".Function.Parameters.Required", "any")],
    "prop": [(".Properties", "prop"), (".Enum", "any"), (".AnyOf", "prop"), (".Type", "any")],
}


def _range(g: Dice, ctx: _Ctx, depth: int) -> str:
    r = _int(g, (0, 9))
    if ctx.profile == "ollama" and r < 6:
        options = _COLLECTIONS.get(ctx.dot, []) + [("$.Messages", "msg"), ("$.Tools", "tool")]
        coll, elem = _pick(g, (options))
        if ctx.mode == "legacy":
            coll, elem = _pick(g, ([(".Prompt", "any"), (".System", "any"), ("3", "any")]))
    elif r < 7:
        coll, elem = _pick(g, (SMALL_INTS + ["5"])), "any"
    else:
        coll, elem = _pipeline(g, ctx, small=True), "any"
    form = _int(g, (0, 5))
    vars_ = ctx.vars
    if form == 1:
        v = _new_var(g)
        head = f"{v} := {coll}"
        vars_ += (v,)
    elif form == 2:
        head = f"$i, $v := {coll}"
        vars_ += ("$i", "$v")
    elif form == 3:
        existing = [v for v in ctx.vars if v != "$"]
        if len(existing) >= 2 and _int(g, (0, 1)):
            head = f"{existing[0]}, {existing[1]} = {coll}"
        elif existing:
            head = f"{existing[0]} = {coll}"
        else:
            head = coll
    else:
        head = coll
    body = _items(g, ctx.child(vars_=vars_, in_range=True, dot=elem), depth + 1)
    s = _act(g, f"range {head}") + body
    if _int(g, (0, 2)) == 0:
        s += _act(g, "else") + _items(g, ctx, depth + 1)
    return s + _act(g, "end")


DEFINE_NAMES = ['"T"', '"U"', "`raw`", '"sub-tmpl"']


def _template_call(g: Dice, ctx: _Ctx) -> str:
    defined = getattr(ctx, "defined", ())
    name = _pick(g, defined) if defined and _int(g, (0, 7)) else _pick(g, DEFINE_NAMES + ['"missing"'])
    if _int(g, (0, 1)):
        return _act(g, f"template {name}")
    return _act(g, f"template {name} {_pipeline(g, ctx, decl=False)}")


def templates(profile: str = "ollama", chaotic: bool = False) -> st.SearchStrategy[str]:
    """Go template source. For the ollama profile, about a quarter are legacy
    Prompt/Response templates (no "messages" anywhere)."""
    return _TEMPLATES[(profile, chaotic)]


def _template(g: Dice, profile: str = "ollama", chaotic: bool = False) -> str:
    mode = "legacy" if profile == "ollama" and _int(g, (0, 3)) == 0 else "messages"
    ctx = _Ctx(profile, mode)
    parts = []
    defined = []
    for _ in range(_int(g, (0, 2))):
        name = _pick(g, (DEFINE_NAMES))
        if name in defined and _int(g, (0, 3)):
            continue
        defined.append(name)
        body_ctx = ctx.child(dot="any", in_define=True)
        # no {{template}} inside definitions: no unbounded recursion
        body = _items_no_template(g, body_ctx)
        parts.append(_act(g, f"define {name}") + body + _act(g, "end"))
    ctx.defined = tuple(defined)
    main = _items(g, ctx, 0)
    if _int(g, (0, 5)) == 0:
        name = _pick(g, (['"B"', '"T"']))
        main += _act(g, f"block {name} {_pipeline(g, ctx, decl=False)}") + _items_no_template(
            g, ctx.child(dot="any")) + _act(g, "end")
    if mode == "messages" and profile == "ollama" and ".Messages" not in main and _int(g, (0, 3)):
        main += _act(g, "if false") + _act(g, ".Messages") + _act(g, "end")
    parts.insert(_int(g, (0, len(parts))), main)
    src = "".join(parts)
    if mode == "legacy":
        src = src.replace("Messages", "Prompt")
    if chaotic:
        src = _mutate(g, src)
    return src


def _items_no_template(g: Dice, ctx: _Ctx) -> str:
    s = _items(g, ctx, 1)
    import re

    return re.sub(r"\{\{-? ?[ \t\n]*template[^}]*\}\}", "", s)


_STRAY = ["{{", "}}", "{{end}}", "{{else}}", "{{ if .X }}", "{{ range . }}", "(", ")", "|", "$", ":=", "=",
          "{{/*", "*/}}", '"', "`", "'", "-}}", "{{-", "{{break}}", "{{ define \"T\" }}", ",", ".", "\\"]


def _mutate(g: Dice, src: str) -> str:
    for _ in range(_int(g, (0, 3))):
        op = _int(g, (0, 3))
        i = _int(g, (0, len(src)))
        if op == 0 and src:
            j = _int(g, (i, min(len(src), i + 6)))
            src = src[:i] + src[j:]
        elif op == 1:
            src = src[:i] + _pick(g, (_STRAY)) + src[i:]
        elif op == 2 and src:
            j = _int(g, (i, min(len(src), i + 12)))
            src = src[:j] + src[i:j] + src[j:]
        else:
            src = src[:i] + g.draw(_ONE_CHAR) + src[i:]
    return src


_ONE_CHAR = unwrapped(_CHARS)
_TEMPLATES = {(p, c): generator(_template, p, c) for p in ("plain", "ollama") for c in (False, True)}
