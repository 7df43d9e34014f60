"""Hypothesis strategies for the Go text/template dialect.

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

Named ``gostrategies`` (not ``strategies``): pytest puts several test folders on ``sys.path``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# ----------------------------------------------------------------------------- text

SPECIAL_TEXT = [
    "", " ", "\n", "\t", "\r\n", "{{", "}}", "{{ .X }}", "{%", "{#", "}", "{", "{{-", "-}}",
    "\"", "'", "`", "\\", "\\n", "\\\"", "\x00", "a\x00b", "😀", "👨‍👩‍👧", "مرحبا", "שָׁלוֹם",
    "\u202e", "\u200b", "\ufeff", "é", "e\u0301", "日本語", "<b>&amp;</b>", "<|im_end|>",
    "a\u2028b", "\x7f", "\x1b[0m", "%v", "%s%d", "null", "true", "0", "-1", "1e21", "<no value>",
    "[INST]", "</s>",
]
_CHARS = st.characters(blacklist_categories=("Cs",))


def text_values(max_size: int = 24) -> st.SearchStrategy[str]:
    """Strings from every character class (no lone surrogates)."""
    return st.one_of(
        st.sampled_from(SPECIAL_TEXT),
        st.text(_CHARS, max_size=max_size),
        st.lists(st.sampled_from(SPECIAL_TEXT), min_size=2, max_size=4).map("".join),
    )


# ----------------------------------------------------------------------------- JSON values


def _scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-10, 10),
        st.integers(-(2**63), 2**64),
        st.sampled_from([0.0, -0.0, 0.5, 1.5, -2.25, 1e21, 1e20, 1e-7, 123456789.0, 3.0, 2.5e-5]),
        st.floats(allow_nan=False, allow_infinity=False),
        text_values(12),
    )


PLAIN_KEYS = ["a", "b", "c", "l", "m", "n", "s", "x", "Role", "Content", "k", "é", "1"]


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    keys = st.one_of(st.sampled_from(PLAIN_KEYS), text_values(6))
    return st.recursive(
        _scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(keys, inner, max_size=4),
        ),
        max_leaves=max_leaves,
    )


def json_data() -> st.SearchStrategy[Any]:
    """Plain-profile data: mostly an object whose keys the templates refer to."""
    obj = st.fixed_dictionaries(
        {},
        optional={k: json_values() for k in PLAIN_KEYS},
    )
    nested = st.fixed_dictionaries({}, optional={k: st.one_of(json_values(), obj) for k in PLAIN_KEYS})
    return st.one_of(obj, nested, nested, json_values())


# ----------------------------------------------------------------------------- Ollama requests

ROLES = ["system", "user", "assistant", "tool", "user", "assistant", "User", "ASSISTANT",
         "developer", "function", "ipython", "", "model", "Tool", "系统"]
TOOL_NAMES = ["get_weather", "search", "f", "a.b", "", "名前", "calc"]


def _schema(depth: int = 0) -> st.SearchStrategy[dict]:
    types = st.one_of(
        st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null"]),
        st.lists(st.sampled_from(["string", "integer", "null", "number"]), min_size=1, max_size=3),
    )
    optional: dict = {
        "type": types,
        "description": text_values(10),
        "enum": st.lists(st.one_of(text_values(6), st.integers(-3, 3), st.none(), st.booleans()), max_size=3),
        "items": st.one_of(st.fixed_dictionaries({"type": st.sampled_from(["string", "integer"])}), json_values(3)),
    }
    if depth < 2:
        optional["properties"] = st.dictionaries(
            st.sampled_from(["a", "b", "q", "z", "city", "unit"]), st.deferred(lambda: _schema(depth + 1)), max_size=3
        )
        optional["anyOf"] = st.lists(st.deferred(lambda: _schema(depth + 1)), max_size=2)
    return st.fixed_dictionaries({}, optional=optional)


def tools() -> st.SearchStrategy[list]:
    params = st.fixed_dictionaries(
        {},
        optional={
            "type": st.just("object"),
            "required": st.lists(st.sampled_from(["a", "b", "city", "x"]), max_size=3),
            "properties": st.dictionaries(
                st.sampled_from(["city", "unit", "a", "b", "o", "Zed", "é"]), _schema(), max_size=4
            ),
            "$defs": json_values(3),
        },
    )
    function = st.fixed_dictionaries(
        {"name": st.sampled_from(TOOL_NAMES)},
        optional={"description": text_values(16), "parameters": params},
    )
    tool = st.fixed_dictionaries({"type": st.just("function"), "function": function},
                                 optional={"items": json_values(2)})
    return st.lists(tool, max_size=3)


def _arguments() -> st.SearchStrategy[dict]:
    return st.dictionaries(st.sampled_from(["city", "unit", "a", "b", "n", "o", "z", "é"]), json_values(6), max_size=4)


def _tool_call() -> st.SearchStrategy[dict]:
    function = st.fixed_dictionaries(
        {"name": st.sampled_from(TOOL_NAMES), "arguments": _arguments()},
        optional={"index": st.integers(0, 3)},
    )
    return st.fixed_dictionaries({"function": function}, optional={"id": st.sampled_from(["call_1", "c2", ""])})


@st.composite
def messages(draw: Any) -> dict:
    role = draw(st.sampled_from(ROLES))
    msg: dict = {"role": role, "content": draw(text_values())}
    if draw(st.integers(0, 4)) == 0:
        msg["thinking"] = draw(text_values(12))
    if role.lower() == "assistant" and draw(st.booleans()):
        msg["tool_calls"] = draw(st.lists(_tool_call(), min_size=1, max_size=3))
    if role.lower() == "tool" or draw(st.integers(0, 15)) == 0:
        if draw(st.integers(0, 3)):
            msg["tool_name"] = draw(st.sampled_from(TOOL_NAMES))
        if draw(st.integers(0, 3)) == 0:
            msg["tool_call_id"] = draw(st.sampled_from(["call_1", "c2"]))
    return msg


THINKS = [True, False, "high", "medium", "low"]


@st.composite
def requests(draw: Any, chaos: bool = False) -> dict:
    """An /api/chat request: messages, optional tools and think (images absent)."""
    req: dict = {"messages": draw(st.lists(messages(), max_size=6))}
    if draw(st.integers(0, 2)) == 0:
        req["tools"] = draw(tools())
    if draw(st.booleans()):
        req["think"] = draw(st.sampled_from(THINKS))
    if chaos and draw(st.integers(0, 4)) == 0:
        # input Ollama rejects, or odd but valid shapes
        kind = draw(st.integers(0, 7))
        if kind == 0:
            req["think"] = draw(st.sampled_from(["max", "", "HIGH", 1, None]))
        elif kind == 1 and req["messages"]:
            req["messages"][0]["role"] = draw(st.sampled_from([1, None, True]))
        elif kind == 2 and req["messages"]:
            req["messages"][0]["content"] = draw(st.sampled_from([None, 5, ["x"]]))
        elif kind == 3:
            req["tools"] = draw(st.sampled_from([None, [], [{}], [{"function": {}}]]))
        elif kind == 4:
            req["messages"] = draw(st.sampled_from([None, []]))
        elif kind == 5 and req["messages"]:
            req["messages"][0]["tool_calls"] = [{"function": {"name": "f", "arguments": None}}]
        elif kind == 6:
            req["tools"] = [{"type": "function", "function": {"name": "f", "parameters": {
                "type": "object", "properties": {"p": {"type": draw(st.sampled_from([None, 1, ["a", 1]]))}}}}}]
        elif kind == 7 and req["messages"]:
            req["messages"][0]["tool_calls"] = [{"function": {"name": "f", "arguments": draw(st.sampled_from(["{}", [1], 3]))}}]
    return req


# ----------------------------------------------------------------------------- templates

_STRAT_CACHE: dict = {}


def _pick(draw: Any, seq: Any) -> Any:
    """draw(st.sampled_from(seq)) with the strategy cached (generation speed)."""
    seq = tuple(seq)
    key = ("s", seq)
    strat = _STRAT_CACHE.get(key)
    if strat is None:
        strat = _STRAT_CACHE[key] = st.sampled_from(seq)
    return draw(strat)


def _int(draw: Any, bounds: tuple) -> int:
    strat = _STRAT_CACHE.get(bounds)
    if strat is None:
        strat = _STRAT_CACHE[bounds] = st.integers(*bounds)
    return draw(strat)


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


def _field(draw: Any, ctx: _Ctx) -> str:
    r = _int(draw, (0, 19))
    if r == 0:
        return _pick(draw, (ODD_FIELDS if ctx.profile == "ollama" else PLAIN_FIELDS))
    if r == 1 and ctx.profile == "ollama":
        top = LEGACY_TOP if ctx.mode == "legacy" else OLLAMA_TOP
        return "$" + _pick(draw, (top))
    if r == 2:
        return "."
    return _pick(draw, (ctx.fields()))


def _constant(draw: Any, small: bool = False) -> str:
    if small:
        return _pick(draw, (SMALL_INTS))
    pool = _int(draw, (0, 30))
    if pool < 8:
        return _pick(draw, (STRINGS))
    if pool < 11:
        return _pick(draw, (CHARS))
    if pool < 18:
        return _pick(draw, (INTS))
    if pool < 22:
        return _pick(draw, (FLOATS))
    if pool < 28:
        return _pick(draw, (["true", "false", "nil"]))
    return _pick(draw, (ODD_NUMBERS))


def _operand(draw: Any, ctx: _Ctx, depth: int, small: bool = False) -> str:
    r = _int(draw, (0, 9))
    if r < 4:
        return _field(draw, ctx)
    if r < 6:
        return _constant(draw, small)
    if r < 8 and len(ctx.vars) > 0:
        v = _pick(draw, (ctx.vars))
        if ctx.profile == "plain" and _int(draw, (0, 3)) == 0:
            v += _pick(draw, ([".a", ".b", ".x"]))
        return v
    if depth >= 2:
        return _field(draw, ctx)
    inner = _pipeline(draw, ctx, depth + 1, decl=False)
    suffix = ""
    if _int(draw, (0, 4)) == 0:
        suffix = _pick(draw, (ctx.fields()))
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


def _safe_command(draw: Any, ctx: _Ctx) -> str:
    if ctx.profile == "ollama" and ctx.mode == "messages" and _int(draw, (0, 1)):
        return _pick(draw, SAFE_OLLAMA.get(ctx.dot, SAFE_OLLAMA["top"]))
    if ctx.profile == "plain" and _int(draw, (0, 9)) == 0:
        return _pick(draw, SAFE_PLAIN)
    form = _pick(draw, SAFE_ANY)
    f = _pick(draw, ctx.vars) if _int(draw, (0, 4)) == 0 else _pick(draw, ctx.fields())
    g = _pick(draw, ctx.fields())
    return form.format(f=f, g=g)


def _command(draw: Any, ctx: _Ctx, depth: int, piped: bool = False) -> str:
    if not piped and _int(draw, (0, 9)) < 6:
        return _safe_command(draw, ctx)
    r = _int(draw, (0, 9))
    if r < 3 and not piped:
        return _operand(draw, ctx, depth)
    funcs = dict(BUILTINS)
    if ctx.profile == "ollama" or _int(draw, (0, 15)) == 0:
        funcs.update(OLLAMA_FUNCS)  # in plain: "function not defined" (both sides)
    if r < 5 and not piped:
        name = "printf"
        args = [_pick(draw, (FORMATS))] if _int(draw, (0, 9)) else []
        n = _int(draw, (0, 3))
    else:
        name = _pick(draw, (sorted(funcs)))
        lo, hi = funcs[name]
        if _int(draw, (0, 12)) == 0:  # wrong arity
            lo, hi = 0, hi + 1
        n = _int(draw, (lo, hi))
        if piped:
            n = max(0, n - 1)
        args = []
    args += [_operand(draw, ctx, depth) for _ in range(n)]
    return " ".join([name] + args)


def _pipeline(draw: Any, ctx: _Ctx, depth: int = 0, decl: bool = True, small: bool = False) -> str:
    if small and _int(draw, (0, 2)) == 0:
        cmd = _operand(draw, ctx, depth, small=True)
    else:
        cmd = _command(draw, ctx, depth)
    parts = [cmd]
    while _int(draw, (0, 5)) == 0 and len(parts) < 3:
        parts.append(_command(draw, ctx, depth, piped=True))
    return " | ".join(parts)


def _ws(draw: Any) -> str:
    return _pick(draw, ([" ", " ", "", "  ", "\n", "\t"]))


def _delims(draw: Any) -> tuple:
    r = _int(draw, (0, 9))
    left = "{{- " if r in (0, 1) else ("{{" + _ws(draw) if r != 2 else "{{ ")
    r = _int(draw, (0, 9))
    right = " -}}" if r in (0, 1) else (_ws(draw) + "}}")
    return left, right


def _act(draw: Any, body: str) -> str:
    left, right = _delims(draw)
    return left + body + right


def _text(draw: Any) -> str:
    t = draw(text_values(12))
    # a literal "{{" in text would start an action: keep text text (chaos adds stray ones)
    while "{{" in t:
        t = t.replace("{{", "{ {")
    return t


def _new_var(draw: Any) -> str:
    return _pick(draw, (["$x", "$y", "$i", "$v", "$k", "$_", "$é", "$x1"]))


def _items(draw: Any, ctx: _Ctx, depth: int) -> str:
    out = []
    vars_ = list(ctx.vars)
    for _ in range(_int(draw, ((1, 4), (0, 3), (0, 2), (0, 2))[min(depth, 3)])):
        c = ctx.child(vars_=tuple(vars_))
        r = _int(draw, (0, 23))
        if r < 4:
            out.append(_text(draw))
        elif r < 9:
            out.append(_act(draw, _pipeline(draw, c)))
        elif r < 10:
            out.append(_pick(draw, (["{{/* c */}}", "{{- /* c */ -}}", "{{/* multi\nline */}}",
                                             "{{- /* x */}}", "{{/* */ -}}", "{{/**/}}"])))
        elif r < 12:
            v = _new_var(draw)
            out.append(_act(draw, f"{v} := {_pipeline(draw, c)}"))
            vars_.append(v)
        elif r < 13:
            v = _pick(draw, (vars_)) if _int(draw, (0, 7)) else _new_var(draw)
            out.append(_act(draw, f"{v} = {_pipeline(draw, c)}"))
        elif r < 14 and ctx.in_range:
            kw = _pick(draw, (["break", "continue"]))
            if _int(draw, (0, 1)):
                out.append(_act(draw, f"if {_pipeline(draw, c, decl=False)}") + _act(draw, kw) + _act(draw, "end"))
            else:
                out.append(_act(draw, kw))
        elif r < 14:
            out.append(_text(draw))
        elif depth >= MAX_DEPTH:
            out.append(_act(draw, _pipeline(draw, c)))
        elif r < 17:
            out.append(_if(draw, c, depth))
        elif r < 20:
            out.append(_range(draw, c, depth))
        elif r < 22:
            out.append(_with(draw, c, depth))
        else:
            out.append(_template_call(draw, c))
    return "".join(out)


def _if(draw: Any, ctx: _Ctx, depth: int) -> str:
    cond = _pipeline(draw, ctx)
    decl_vars = ctx.vars
    if _int(draw, (0, 6)) == 0:
        v = _new_var(draw)
        cond = f"{v} := {cond}"
        decl_vars = ctx.vars + (v,)
    s = _act(draw, f"if {cond}") + _items(draw, ctx.child(vars_=decl_vars), depth + 1)
    for _ in range(_int(draw, (0, 2))):
        s += _act(draw, f"else if {_pipeline(draw, ctx)}") + _items(draw, ctx.child(vars_=decl_vars), depth + 1)
    if _int(draw, (0, 1)):
        s += _act(draw, "else") + _items(draw, ctx.child(vars_=decl_vars), depth + 1)
    return s + _act(draw, "end")


def _with(draw: Any, ctx: _Ctx, depth: int) -> str:
    arg = _pipeline(draw, ctx)
    vars_ = ctx.vars
    if _int(draw, (0, 3)) == 0:
        v = _new_var(draw)
        arg = f"{v} := {arg}"
        vars_ = vars_ + (v,)
    s = _act(draw, f"with {arg}") + _items(draw, ctx.child(vars_=vars_, dot="any"), depth + 1)
    for _ in range(_int(draw, (0, 1))):
        s += _act(draw, f"else with {_pipeline(draw, ctx)}") + _items(draw, ctx.child(vars_=vars_, dot="any"), depth + 1)
    if _int(draw, (0, 1)):
        s += _act(draw, "else") + _items(draw, ctx.child(vars_=vars_), depth + 1)
    return s + _act(draw, "end")


_COLLECTIONS = {
    "top": [(".Messages", "msg"), (".Tools", "tool"), ("$.Messages", "msg")],
    "msg": [(".ToolCalls", "call"), (".Images", "any"), (".Content", "any")],
    "call": [(".Function.Arguments", "any")],
    "tool": [(".Function.Parameters.Properties", "prop"), (".Function.Parameters.Required", "any")],
    "prop": [(".Properties", "prop"), (".Enum", "any"), (".AnyOf", "prop"), (".Type", "any")],
}


def _range(draw: Any, ctx: _Ctx, depth: int) -> str:
    r = _int(draw, (0, 9))
    if ctx.profile == "ollama" and r < 6:
        options = _COLLECTIONS.get(ctx.dot, []) + [("$.Messages", "msg"), ("$.Tools", "tool")]
        coll, elem = _pick(draw, (options))
        if ctx.mode == "legacy":
            coll, elem = _pick(draw, ([(".Prompt", "any"), (".System", "any"), ("3", "any")]))
    elif r < 7:
        coll, elem = _pick(draw, (SMALL_INTS + ["5"])), "any"
    else:
        coll, elem = _pipeline(draw, ctx, small=True), "any"
    form = _int(draw, (0, 5))
    vars_ = ctx.vars
    if form == 1:
        v = _new_var(draw)
        head = f"{v} := {coll}"
        vars_ += (v,)
    elif form == 2:
        head = f"$i, $v := {coll}"
        vars_ += ("$i", "$v")
    elif form == 3:
        existing = [v for v in ctx.vars if v != "$"]
        if len(existing) >= 2 and _int(draw, (0, 1)):
            head = f"{existing[0]}, {existing[1]} = {coll}"
        elif existing:
            head = f"{existing[0]} = {coll}"
        else:
            head = coll
    else:
        head = coll
    body = _items(draw, ctx.child(vars_=vars_, in_range=True, dot=elem), depth + 1)
    s = _act(draw, f"range {head}") + body
    if _int(draw, (0, 2)) == 0:
        s += _act(draw, "else") + _items(draw, ctx, depth + 1)
    return s + _act(draw, "end")


DEFINE_NAMES = ['"T"', '"U"', "`raw`", '"sub-tmpl"']


def _template_call(draw: Any, ctx: _Ctx) -> str:
    defined = getattr(ctx, "defined", ())
    name = _pick(draw, defined) if defined and _int(draw, (0, 7)) else _pick(draw, DEFINE_NAMES + ['"missing"'])
    if _int(draw, (0, 1)):
        return _act(draw, f"template {name}")
    return _act(draw, f"template {name} {_pipeline(draw, ctx, decl=False)}")


@st.composite
def templates(draw: Any, profile: str = "ollama", chaotic: bool = False) -> str:
    """Go template source. For the ollama profile, about a quarter are legacy
    Prompt/Response templates (no "messages" anywhere)."""
    mode = "legacy" if profile == "ollama" and _int(draw, (0, 3)) == 0 else "messages"
    ctx = _Ctx(profile, mode)
    parts = []
    defined = []
    for _ in range(_int(draw, (0, 2))):
        name = _pick(draw, (DEFINE_NAMES))
        if name in defined and _int(draw, (0, 3)):
            continue
        defined.append(name)
        body_ctx = ctx.child(dot="any", in_define=True)
        # no {{template}} inside definitions: no unbounded recursion
        body = _items_no_template(draw, body_ctx)
        parts.append(_act(draw, f"define {name}") + body + _act(draw, "end"))
    ctx.defined = tuple(defined)
    main = _items(draw, ctx, 0)
    if _int(draw, (0, 5)) == 0:
        name = _pick(draw, (['"B"', '"T"']))
        main += _act(draw, f"block {name} {_pipeline(draw, ctx, decl=False)}") + _items_no_template(
            draw, ctx.child(dot="any")) + _act(draw, "end")
    if mode == "messages" and profile == "ollama" and ".Messages" not in main and _int(draw, (0, 3)):
        main += _act(draw, "if false") + _act(draw, ".Messages") + _act(draw, "end")
    parts.insert(_int(draw, (0, len(parts))), main)
    src = "".join(parts)
    if mode == "legacy":
        src = src.replace("Messages", "Prompt")
    if chaotic:
        src = _mutate(draw, src)
    return src


def _items_no_template(draw: Any, ctx: _Ctx) -> str:
    s = _items(draw, ctx, 1)
    import re

    return re.sub(r"\{\{-? ?[ \t\n]*template[^}]*\}\}", "", s)


_STRAY = ["{{", "}}", "{{end}}", "{{else}}", "{{ if .X }}", "{{ range . }}", "(", ")", "|", "$", ":=", "=",
          "{{/*", "*/}}", '"', "`", "'", "-}}", "{{-", "{{break}}", "{{ define \"T\" }}", ",", ".", "\\"]


def _mutate(draw: Any, src: str) -> str:
    for _ in range(_int(draw, (0, 3))):
        op = _int(draw, (0, 3))
        i = _int(draw, (0, len(src)))
        if op == 0 and src:
            j = _int(draw, (i, min(len(src), i + 6)))
            src = src[:i] + src[j:]
        elif op == 1:
            src = src[:i] + _pick(draw, (_STRAY)) + src[i:]
        elif op == 2 and src:
            j = _int(draw, (i, min(len(src), i + 12)))
            src = src[:j] + src[i:j] + src[j:]
        else:
            src = src[:i] + draw(_CHARS) + src[i:]
    return src
