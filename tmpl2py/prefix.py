"""Prefix stability of chat templates: a static pre-check over the IR, a Hypothesis search.
Long because it holds both dialects' pre-checks (Jinja's and Go's IR differ) beside the
search and the report they explain.

**The property servers need** (prefix caching in vLLM, llama.cpp, Ollama): at each point where
the model is asked to reply (the message at index ``i`` is the assistant's reply to
``m[:i]``, and ``j`` is the next such point, or the end of the conversation)::

    P(i) = render(m[:i],   add_generation_prompt=True)    # the prompt the model answered
    R(i) = render(m[:i+1], add_generation_prompt=False)   # the reply as the template renders it
    P(j) = render(m[:j],   add_generation_prompt=True)    # the next request's prompt

and the template is *prefix-stable* for a conversation shape iff ``P(i)`` is a prefix of
``R(i)`` (the generation prompt is how the rendered reply starts: "generation-prompt" break)
and ``R(i)`` is a prefix of ``P(j)`` (nothing already sent is rewritten: "history" break),
for every such ``i`` of every conversation of that shape. ``P(j)`` is rendered one day later
than ``P(i)``/``R(i)`` (a template that prints today's date breaks the cache the next day).
For Go (Ollama) templates the generation prompt is implicit (``render`` is Ollama's
``Template.Execute`` of the messages and always ends with it), so ``R(i)`` does not exist:
stable iff ``P(i)`` is a prefix of ``P(j)`` (the reply then follows the cached prompt).

The **static pre-check** (:func:`scan`) names the constructs that can break this, with their
template lines; the **dynamic search** (:func:`check_shape`) looks for a counterexample with
Hypothesis (``find``: derandomised, shrinking to a minimal conversation). A shape whose every
generated conversation makes the template raise is reported ``rejected``.

``python -m tmpl2py.prefix_table`` writes the corpus table (docs/prefix.md).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from typing import Any, Callable, Iterable, Optional

from .compiler import ir

SHAPES = ("plain", "tools", "reasoning")
LOOP_END_ATTRS = frozenset({"last", "length", "revindex", "revindex0", "nextitem"})
KINDS = {
    "loop-end": "reads the end of a loop over messages (loop.last/length/revindex/nextitem;"
    " Go: whether a message is the last)",
    "messages-length": "reads the number of messages",
    "negative-index": "indexes messages from the end",
    "look-ahead": "reads a message by an index computed at render time (look-ahead)",
    "whole-list": "reads messages as a whole (last, reverse, sort, a reversed slice)",
    "namespace-prepass": "a loop over messages that prints nothing computes state (a namespace;"
    " Go: a variable) before the turns print",
    "carried-state": "a loop over messages writes state (a namespace; Go: a variable declared"
    " before it) that later turns read",
    "clock": "reads the clock (strftime_now)",
}
#: Kinds that can make a prefix change when a turn is appended (carried-state cannot:
#: it flows forward only); the session refuses to render incrementally with any of these.
BREAKING = frozenset(KINDS) - {"carried-state"}
_ACCESS = frozenset({"jinja.getitem", "jinja.getattr_", "jinja.subscript"})
_WHOLE = {"jinja_filters.do_last": "|last", "jinja_filters.do_reverse": "|reverse",
          "jinja_filters.do_sort": "|sort", "jinja_filters.do_dictsort": "|dictsort"}  # fmt: skip
_LENGTH = frozenset({"jinja_filters.do_count", "jinja_filters.do_length"})
_SAME_LIST = frozenset(
    "jinja_filters.do_" + f
    for f in ("list", "select", "reject", "selectattr", "rejectattr", "map", "unique", "batch")
)
DAY0 = datetime.datetime(2024, 7, 26, 12, 0, 0)
DAY1 = DAY0 + datetime.timedelta(days=1)


@dataclasses.dataclass(frozen=True)
class Finding:
    """One construct that can break prefix stability, at a template line."""

    kind: str
    line: int
    construct: str

    def text(self) -> str:
        return f"line {self.line}: {self.construct} ({KINDS[self.kind]})"


# ----------------------------------------------------------------------------- static pre-check


def scan(module: ir.Module) -> list[Finding]:
    """The stability findings of a scope-resolved Jinja IR module (``optimize=False``)."""
    if module.dialect != "jinja":
        return _scan_go(module)
    scanner = _Scanner(module.body)
    scanner.stmts(module.body, 0)
    return sorted(set(scanner.findings), key=lambda f: (f.line, f.kind, f.construct))


def _origins(body: Any) -> dict[str, str]:
    """ident -> context name, for idents loaded straight from the context."""
    out = {}
    for node in ir.walk(body):
        if isinstance(node, ir.Assign) and isinstance(node.target, ir.Name):
            v = node.value
            if (
                isinstance(v, ir.Helper)
                and v.name == "jinja.resolve"
                and len(v.args) == 2
                and isinstance(v.args[1], ir.Const)
            ):
                out[node.target.ident] = v.args[1].value
    return out


class _Base:
    """What both dialects' scanners share: the idents holding the messages (``is_list``,
    the dialect's), the findings, the walk through a statement's children."""

    lists: set
    findings: list

    def is_list(self, node: Any) -> bool:
        raise NotImplementedError

    def grow_lists(self, body: Any, exclude: frozenset = frozenset()) -> None:
        """Add every ident assigned a list of messages, aliases of aliases too (a fixpoint)."""
        changed = True
        while changed:
            changed = False
            for n in ir.walk(body):
                if (
                    isinstance(n, ir.Assign)
                    and isinstance(n.target, ir.Name)
                    and n.target.ident not in self.lists
                    and n.target.ident not in exclude
                    and self.is_list(n.value)
                ):
                    self.lists.add(n.target.ident)
                    changed = True

    def add(self, kind: str, line: int, construct: str) -> None:
        self.findings.append(Finding(kind, line, construct))

    def child_stmt(self, node: Any, line: int) -> None:
        raise NotImplementedError

    def helper(self, n: ir.Helper, line: int) -> None:
        raise NotImplementedError

    def children(self, node: Any, line: int) -> None:
        for _, value in ir.children(node):
            for child in value if isinstance(value, tuple) else (value,):
                if isinstance(child, ir.Stmt):
                    self.child_stmt(child, child.span[0] or line)
                elif isinstance(child, ir.Node):
                    self.expr(child, line)

    def expr(self, node: Any, line: int) -> None:
        for n in ir.walk(node):
            if isinstance(n, ir.Helper):
                self.helper(n, line)
            elif isinstance(n, ir.Capture):
                self.child_stmts(n.body, line)

    def child_stmts(self, body: Iterable[Any], line: int) -> None:
        for stmt in body:
            self.child_stmt(stmt, stmt.span[0] or line)


class _Scanner(_Base):
    """Follows which idents hold the message list (or a list derived from it) and which
    loops run over it, and records each risky read with the line of its statement."""

    def __init__(self, body: Any) -> None:
        origins = _origins(body)
        self.clock = {i for i, n in origins.items() if n == "strftime_now"}
        self.lists = {i for i, n in origins.items() if n == "messages"}
        self.loops: set[str] = set()  # loop idents of the enclosing loops over the messages
        self.findings: list[Finding] = []
        self.grow_lists(body)  # aliases: `set loop_messages = messages[1:]`, loop targets' lists

    def is_list(self, node: Any) -> bool:
        if isinstance(node, ir.Name):
            return node.ident in self.lists
        if isinstance(node, ir.Helper) and node.args:
            if node.name == "jinja.subscript" and _is_slice(node.args[1]):
                return self.is_list(node.args[0])
            if node.name in _SAME_LIST or node.name in _WHOLE:
                return self.is_list(node.args[0])
        return False

    def stmts(self, body: Iterable[Any], line: int) -> None:
        self.child_stmts(body, line)

    def child_stmt(self, node: Any, line: int) -> None:
        self.stmt(node, line)

    def stmt(self, node: Any, line: int) -> None:
        if isinstance(node, ir.For):
            self.expr(node.iter, line)
            saved = set(self.loops)  # loop idents are reused: the innermost loop decides
            if self.is_list(node.iter):
                self.loops.add(node.loop)
                self.namespace_writes(node, line)
            else:
                self.loops.discard(node.loop)
            if node.filter is not None:
                self.expr(node.filter, line)
            self.stmts(node.body, line)
            self.loops = saved
            self.stmts(node.else_, line)
            return
        self.children(node, line)

    def namespace_writes(self, loop: ir.For, line: int) -> None:
        writes = [
            n for n in ir.walk(loop.body) if isinstance(n, ir.Helper) and n.name == "jinja.ns_set"
        ]
        if not writes:
            return
        prints = any(isinstance(n, (ir.Text, ir.Output)) for n in ir.walk(loop.body))
        attrs = sorted({_const(w.args[1]) for w in writes if len(w.args) > 1})
        what = ", ".join(f"ns.{a}" for a in attrs)
        kind = "carried-state" if prints else "namespace-prepass"
        self.add(kind, line, f"for loop over messages setting {what}")

    def helper(self, n: ir.Helper, line: int) -> None:
        args = n.args
        if n.name in _ACCESS and len(args) == 2:
            obj, key = args
            if isinstance(obj, ir.Name) and obj.ident in self.loops and _const(key) in LOOP_END_ATTRS:
                self.add("loop-end", line, f"loop.{_const(key)}")
            elif self.is_list(obj):
                self.index(key, line)
        elif n.name in _LENGTH and args and self.is_list(args[0]):
            self.add("messages-length", line, "messages|length")
        elif n.name in _WHOLE and args and self.is_list(args[0]):
            self.add("whole-list", line, f"messages{_WHOLE[n.name]}")
        elif n.name == "jinja.call" and args and isinstance(args[0], ir.Name):
            if args[0].ident in self.clock:
                self.add("clock", line, "strftime_now(...)")

    def index(self, key: Any, line: int) -> None:
        value = _int_const(key)
        if value is not None:
            if value < 0:
                self.add("negative-index", line, f"messages[{value}]")
            return
        if isinstance(key, ir.Helper) and key.name == "builtins.slice":
            start, stop, step = (list(key.args) + [None] * 3)[:3]
            ints = [_int_const(a) if a is not None else None for a in (start, stop, step)]
            if any(v is not None and v < 0 for v in ints[:2]):
                self.add("negative-index", line, "messages[-n:]")
            elif ints[2] is not None and ints[2] < 0:
                self.add("whole-list", line, "messages[::-1]")
            return
        if isinstance(key, ir.Const) and isinstance(key.value, str):
            return  # a method or attribute of the list (e.g. messages.index)
        behind = isinstance(key, ir.BinOp) and key.op == "-" and _int_const(key.right) is not None
        if not behind:
            self.add("look-ahead", line, "messages[<computed index>]")


def _const(node: Any) -> Any:
    return node.value if isinstance(node, ir.Const) else None


def _int_const(node: Any) -> Optional[int]:
    if isinstance(node, ir.Const) and type(node.value) is int:
        return int(node.value)
    if isinstance(node, ir.UnaryOp) and node.op == "-":
        inner = _int_const(node.operand)
        return None if inner is None else -inner
    return None


def _is_slice(node: Any) -> bool:
    return isinstance(node, ir.Helper) and node.name == "builtins.slice"


def _scan_go(module: ir.Module) -> list[Finding]:
    """The findings of a Go (Ollama) template: see :class:`_GoScanner`."""
    scanner = _GoScanner(module.body)
    scanner.stmts(module.body, 0)
    return sorted(set(scanner.findings), key=lambda f: (f.line, f.kind, f.construct))


TOP = "dot"  # the ident of the template's data (``$``, and ``.`` outside range/with)
_GO_RANGE = frozenset({"gotmpl.range_pairs", "gotmpl.range_values"})
_GO_CLOCK = {"gotmpl.current_date": "currentDate", "gotmpl.yesterday_date": "yesterdayDate"}


def go_data_field(node: Any) -> Optional[str]:
    """``F`` when ``node`` reads ``$.F`` (``.F`` at the top, ``$.F.G...``: the first name)."""
    if (
        isinstance(node, ir.Helper)
        and len(node.args) >= 2
        and isinstance(node.args[0], ir.Name)
        and node.args[0].ident == TOP
        and isinstance(node.args[1], ir.Const)
    ):
        value = node.args[1].value
        if isinstance(value, tuple) and value and isinstance(value[0], str):
            return value[0]
        if isinstance(value, str):
            return value
    return None


def range_vars(loop: ir.For) -> set:
    """The idents a Go ``range`` declares: its targets, and ``$v`` of ``range $i, $v :=``
    (lowered as an assignment from the element at the top of the body)."""
    names = [n.ident for n in ir.walk(loop.target) if isinstance(n, ir.Name)]
    return set(names) | {
        s.target.ident
        for s in loop.body
        if isinstance(s, ir.Assign)
        and isinstance(s.target, ir.Name)
        and isinstance(s.value, ir.Name)
        and s.value.ident == names[-1]
    }


def assigned(node: Any) -> list:
    """The idents ``node`` assigns (``Assign`` of a plain name), once per assignment."""
    return [
        n.target.ident
        for n in ir.walk(node)
        if isinstance(n, ir.Assign) and isinstance(n.target, ir.Name)
    ]


class _GoScanner(_Base):
    """The Go side of the pre-check. Ollama's data has no arithmetic, so templates find the
    last message as ``eq (len (slice $.Messages $i)) 1`` ("loop-end"), or read
    ``len .Messages`` ("messages-length"), ``index .Messages <computed>`` / ``slice .Messages
    <computed>`` ("look-ahead"); a range over the messages that assigns a variable declared
    before it carries state ("carried-state"; "namespace-prepass" when it prints nothing);
    ``currentDate`` / ``yesterdayDate`` read the clock. A range's list may be held in a
    variable (``$m := .Messages``, ``slice .Messages 1``); the lowering evaluates a range's
    list into its first variable just before the loop, which the scanner follows too."""

    def __init__(self, body: Any) -> None:
        self.findings: list[Finding] = []
        self.loops: set[str] = set()  # index idents of the enclosing ranges over the messages
        self.targets = {n.ident for f in ir.walk(body) if isinstance(f, ir.For)
                        for n in ir.walk(f.target) if isinstance(n, ir.Name)}  # fmt: skip
        self.counts: dict = {}
        for ident in assigned(body):
            self.counts[ident] = self.counts.get(ident, 0) + 1
        self.lists: set[str] = set()
        self.grow_lists(body, frozenset(self.targets))

    def is_list(self, node: Any) -> bool:
        """The messages, or the messages from a constant index on."""
        if isinstance(node, ir.Name):
            return node.ident in self.lists
        if go_data_field(node) == "Messages" and node.name == "gotmpl.field":
            return True
        if isinstance(node, ir.Helper) and node.name == "gotmpl.slice_" and len(node.args) == 2:
            return self.is_list(node.args[0]) and _int_const(node.args[1]) is not None
        return False

    def stmts(self, body: Iterable[Any], line: int) -> None:
        held: set[str] = set()  # range variables holding the messages just before their range
        for stmt in body:
            here = stmt.span[0] or line
            if isinstance(stmt, ir.Assign) and isinstance(stmt.target, ir.Name):
                if stmt.target.ident in self.targets and self.is_list(stmt.value):
                    held.add(stmt.target.ident)
            if isinstance(stmt, ir.For):
                self.range(stmt, here, held)
            else:
                self.children(stmt, here)

    def child_stmt(self, node: Any, line: int) -> None:
        self.stmts((node,), line)

    def range(self, loop: ir.For, line: int, held: set) -> None:
        self.expr(loop.iter, line)
        it = loop.iter
        over = isinstance(it, ir.Helper) and it.name in _GO_RANGE and bool(it.args) and (
            self.is_list(it.args[0])
            or (isinstance(it.args[0], ir.Name) and it.args[0].ident in held)
        )  # fmt: skip
        saved = set(self.loops)
        if over:
            names = [n for n in ir.walk(loop.target) if isinstance(n, ir.Name)]
            if len(names) == 2:
                self.loops.add(names[0].ident)
            self.carried(loop, line)
        self.stmts(loop.body, line)
        self.loops = saved
        self.stmts(loop.else_, line)

    def carried(self, loop: ir.For, line: int) -> None:
        inside: dict = {}
        for ident in assigned(loop.body):
            inside[ident] = inside.get(ident, 0) + 1
        own = range_vars(loop)
        outer = sorted(i for i, k in inside.items() if self.counts[i] > k and i not in own)
        if outer:
            prints = any(isinstance(n, (ir.Text, ir.Output)) for n in ir.walk(loop.body))
            names = ", ".join(_go_name(loop.body, i) for i in outer)
            kind = "carried-state" if prints else "namespace-prepass"
            self.add(kind, line, f"range over .Messages assigning {names}")

    def helper(self, n: ir.Helper, line: int) -> None:
        args = n.args
        if n.name in _GO_CLOCK:
            self.add("clock", line, _GO_CLOCK[n.name])
        elif n.name == "gotmpl.length_path" and go_data_field(n) == "Messages":
            self.add("messages-length", line, "len .Messages")
        elif not args or not self.is_list(args[0]):
            return
        elif n.name == "gotmpl.length":
            self.add("messages-length", line, "len .Messages")
        elif n.name == "gotmpl.slice_length":
            index = args[1] if len(args) == 2 else None
            if isinstance(index, ir.Name) and index.ident in self.loops:
                self.add("loop-end", line, f"len (slice $.Messages {index.name}) (the last message)")
            else:
                self.add("messages-length", line, "len (slice .Messages ...)")
        elif n.name == "gotmpl.index":
            if any(_int_const(a) is None or _int_const(a) < 0 for a in args[1:2]):
                self.add("look-ahead", line, "index .Messages <computed index>")
        elif n.name == "gotmpl.slice_" and not self.is_list(n):
            self.add("look-ahead", line, "slice .Messages <computed index>")


def _go_name(body: Any, ident: str) -> str:
    for n in ir.walk(body):
        if isinstance(n, ir.Name) and n.ident == ident:
            return n.name
    return ident


# ----------------------------------------------------------------------------- conversations

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "the city"}},
            "required": ["city"],
        },
    },
}


#: What ``apply_chat_template`` passes from the tokenizer (Jinja templates print them).
SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}


def shape_options(shape: str, dialect: str) -> dict:
    """The request keys a shape renders with (besides the messages)."""
    if dialect == "go":
        return {"tools": [TOOL]} if shape == "tools" else {"think": True} if shape == "reasoning" else {}
    return {**SPECIAL_TOKENS, **({"tools": [TOOL]} if shape == "tools" else {})}


class _Turns:
    """The turns of a shape's conversations, in the dialect's request format."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.think_key = "thinking" if dialect == "go" else "reasoning_content"

    def plain(self, u: str, a: str) -> list:
        return [{"role": "user", "content": u}, {"role": "assistant", "content": a}]

    def reasoning(self, u: str, a: str, r: str) -> list:
        reply = {"role": "assistant", "content": a, self.think_key: r}
        return [{"role": "user", "content": u}, reply]

    def tool(self, u: str, city: str, result: str, a: str) -> list:
        call: dict = {"function": {"name": "get_weather", "arguments": {"city": city}}}
        if self.dialect == "jinja":
            call = {"id": "call_1", "type": "function", **call}
        tool_msg = {"role": "tool", "content": result, "tool_call_id": "call_1"}
        tool_msg["tool_name" if self.dialect == "go" else "name"] = "get_weather"
        return [
            {"role": "user", "content": u},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            tool_msg,
            {"role": "assistant", "content": a},
        ]

    @staticmethod
    def build(system: Optional[str], turns: list, last: str) -> list:
        head = [{"role": "system", "content": system}] if system is not None else []
        return head + [m for t in turns for m in t] + [{"role": "user", "content": last}]


def conversations(shape: str, dialect: str) -> Any:
    """A Hypothesis strategy: conversations of ``shape`` ending with a user message."""
    from hypothesis import strategies as st

    text = st.text(alphabet="ab \n", min_size=1, max_size=5)
    turns = _Turns(dialect)
    turn = st.builds(turns.plain, text, text)
    if shape == "reasoning":
        turn = st.builds(turns.reasoning, text, text, text)
    elif shape == "tools":
        turn = st.one_of(turn, st.builds(turns.tool, text, text, text, text))
    return st.builds(turns.build, st.none() | text, st.lists(turn, min_size=1, max_size=3), text)


def well_chosen(shape: str, dialect: str) -> list:
    """Conversations tried before the random search, smallest first: with and without a
    system message, one to three turns, each kind of turn first, in the middle and last,
    contents that differ per message and contents with spaces and newlines (what templates
    strip or test)."""
    turns = _Turns(dialect)
    kinds = {"plain": [turns.plain], "reasoning": [turns.reasoning],
             "tools": [turns.plain, turns.tool]}[shape]  # fmt: skip
    arity = {"plain": 2, "reasoning": 3, "tool": 4}

    def fill(turn: Callable, text: str) -> list:
        return turn(*[text] * arity[turn.__name__])

    out = []
    for system in (None, "s"):
        for first in kinds:
            for second in kinds:
                one, two, three = fill(first, "a"), fill(second, " b\n"), fill(first, "\nc ")
                out += [turns.build(system, [one], "u"), turns.build(system, [one, two], "v"),
                        turns.build(system, [one, two, three], "w")]  # fmt: skip
    unique = {json.dumps(c, sort_keys=True): c for c in out}
    return sorted(unique.values(), key=len)


# ----------------------------------------------------------------------------- dynamic search


@dataclasses.dataclass
class Break:
    """Where a conversation breaks the property: ``expected`` should start ``actual``."""

    step: int  # index of the assistant reply
    part: str  # "generation-prompt" | "history"
    position: int  # the first differing character of actual
    expected: str
    actual: str

    def excerpt(self, text: str) -> str:
        return text[max(0, self.position - 30) : self.position + 30]


def renderer(template: Any, shape: str) -> Callable[[list, bool, datetime.datetime], str]:
    """``render(messages, agp, day)`` through the template's conversation entry point."""
    options = shape_options(shape, template.dialect)
    if template.dialect == "go":

        def render_go(messages: list, agp: bool, day: datetime.datetime) -> str:
            return template.render_conversation(messages, now=day.date().isoformat(), **options)

        return render_go
    from .runtime.jinja import objects

    def render_jinja(messages: list, agp: bool, day: datetime.datetime) -> str:
        saved = objects.CLOCK[0]
        objects.CLOCK[0] = lambda: day
        try:
            return template.render_conversation(messages, add_generation_prompt=agp, **options)
        finally:
            objects.CLOCK[0] = saved

    return render_jinja


def first_break(
    render: Callable[[list, bool, datetime.datetime], str], messages: list, dialect: str = "jinja"
) -> Optional[Break]:
    """The first reply at which ``messages`` breaks the property (None: it holds). Go: no
    render without the generation prompt exists, so only ``P(i)`` prefix of ``P(j)``."""
    points = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    for n, i in enumerate(points):
        j = points[n + 1] if n + 1 < len(points) else len(messages)
        prompt = render(messages[:i], True, DAY0)
        reply = prompt
        if dialect != "go":
            reply = render(messages[: i + 1], False, DAY0)
            if not reply.startswith(prompt):
                return Break(i, "generation-prompt", common_prefix(prompt, reply), prompt, reply)
        following = render(messages[:j], True, DAY1)
        if not following.startswith(reply):
            return Break(i, "history", common_prefix(reply, following), reply, following)
    return None


def common_prefix(a: str, b: str) -> int:
    """The length of the common prefix (a binary search of C-speed comparisons: a Python loop
    over characters cost 45 ms on a rewritten 200-turn prompt)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.startswith(a[:mid]):
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclasses.dataclass
class ShapeResult:
    shape: str
    status: str  # "stable" | "unstable" | "rejected"
    examples: int  # conversations that rendered
    messages: Optional[list] = None  # the minimal counterexample
    options: Optional[dict] = None
    where: Optional[Break] = None
    blame: tuple = ()  # template lines whose text is printed at the difference
    error: str = ""  # rejected: the first error

    def summary(self) -> str:
        if self.status == "stable":
            return f"stable ({self.examples} conversations)"
        if self.status == "rejected":
            return f"rejected: every conversation raised ({self.error})"
        w = self.where
        assert w is not None
        return f"unstable: {w.part} break at reply {w.step}, char {w.position}"


def hard_errors() -> tuple:
    """The errors no search or session may take for a template's refusal (limits, memory)."""
    from .runtime.budget import RenderBudgetExceeded

    return (RenderBudgetExceeded, MemoryError)


def check_shape(
    template: Any, shape: str, max_examples: int = 200, seed: Optional[int] = None
) -> ShapeResult:
    """Search for a counterexample of ``shape``: the :func:`well_chosen` conversations, then
    Hypothesis ``find`` (shrinking; derandomised unless a ``seed`` is given; without the
    ``explain`` phase, which re-ran the template hundreds of times per counterexample to say
    which parts of it matter, for nothing the report prints). A well-chosen counterexample
    stands when the random search finds none."""
    import random

    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    render = renderer(template, shape)
    hard = hard_errors()
    seen = {"ok": 0, "error": ""}

    def breaks(messages: list) -> bool:
        try:
            found = first_break(render, messages, template.dialect)
        except hard:
            raise
        except Exception as e:  # noqa: BLE001 - a template refusing a conversation is no break
            seen["error"] = seen["error"] or f"{type(e).__name__}: {e}"
            return False
        seen["ok"] += 1
        return found is not None

    chosen = next((c for c in well_chosen(shape, template.dialect) if breaks(c)), None)
    config = settings(
        max_examples=max_examples,
        derandomize=seed is None,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[p for p in Phase if p.name != "explain"],
    )
    try:
        rng = None if seed is None else random.Random(seed)
        minimal = find(conversations(shape, template.dialect), breaks, settings=config, random=rng)
    except NoSuchExample:
        if chosen is None:
            status = "stable" if seen["ok"] else "rejected"
            return ShapeResult(shape, status, seen["ok"], error=str(seen["error"])[:160])
        minimal = chosen
    where = first_break(render, minimal, template.dialect)
    assert where is not None
    return ShapeResult(
        shape, "unstable", seen["ok"], minimal, shape_options(shape, template.dialect), where,
        blame_lines(template.ir, where),
    )  # fmt: skip


def blame_lines(module: ir.Module, where: Break) -> tuple:
    """Template lines whose literal text is printed across the first differing character
    (of either side): where the two renders part. A pointer, not a proof."""
    lines = set()
    for node in ir.walk(module.body):
        texts = []
        if isinstance(node, ir.Text):
            texts = [node.text]
        elif isinstance(node, ir.Output):
            texts = [c.value for c in ir.walk(node.expr) if isinstance(c, ir.Const) and isinstance(c.value, str)]
        for t in texts:
            if len(t.strip()) >= 2 and node.span[0] and _covers(t, where):
                lines.add(node.span[0])
    return tuple(sorted(lines)[:6])


def _covers(text: str, where: Break) -> bool:
    for s in (where.expected, where.actual):
        lo = max(0, where.position - len(text) + 1)
        at = s.find(text, lo, where.position + len(text))
        if at != -1 and at <= where.position:
            return True
    return False


# ----------------------------------------------------------------------------- report


@dataclasses.dataclass
class PrefixReport:
    name: str
    dialect: str
    findings: list
    shapes: list

    def stable(self, shape: str) -> Optional[bool]:
        for r in self.shapes:
            if r.shape == shape:
                return None if r.status == "rejected" else r.status == "stable"
        return None

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "dialect": self.dialect,
            "findings": [dataclasses.asdict(f) for f in self.findings],
            "shapes": [_shape_dict(r) for r in self.shapes],
        }


def _shape_dict(r: ShapeResult) -> dict:
    d = {"shape": r.shape, "status": r.status, "examples": r.examples, "summary": r.summary()}
    if r.where is not None:
        w = r.where
        d.update(
            messages=r.messages, options=r.options, step=w.step, part=w.part, position=w.position,
            expected=w.excerpt(w.expected), actual=w.excerpt(w.actual), lines=list(r.blame),
        )  # fmt: skip
    if r.error:
        d["error"] = r.error
    return d


def prefix_report(template: Any, shapes: Iterable[str] = SHAPES, max_examples: int = 200) -> PrefixReport:
    """The prefix report of a compiled template (``CompiledTemplate.prefix_report``)."""
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        raise ValueError(f"unknown shape(s) {unknown} (expected some of {', '.join(SHAPES)})")
    findings = scan(analysis_ir(template.source, template.dialect, template.name, template.profile))
    results = [check_shape(template, s, max_examples) for s in shapes]
    return PrefixReport(template.name, template.dialect, findings, results)


def raw_ir(source: str, dialect: str, name: str, profile: str) -> ir.Module:
    """The frontend's IR (names unresolved). Through the frontends, not ``compiler.api``,
    which delegates to this module (no import cycle)."""
    if dialect == "go":
        from .compiler.gotmpl.frontend import parse as parse_go

        return parse_go(source, name, profile=profile)
    from .compiler.jinja.frontend import parse as parse_jinja

    return parse_jinja(source, name)


def analysis_ir(source: str, dialect: str, name: str, profile: str) -> ir.Module:
    """The scope-resolved, unoptimised IR the static pre-check reads."""
    from .compiler.passes import pipeline

    raw = raw_ir(source, dialect, name, profile)
    return pipeline.run(raw, profile=profile, optimize=False, exact_undefined=False)


def format_text(report: PrefixReport) -> str:
    out = [f"prefix stability of {report.name} ({report.dialect})"]
    out.append("constructs that can break it:" if report.findings else "constructs: none found")
    out += [f"  {f.text()}" for f in report.findings]
    for r in report.shapes:
        out.append(f"{r.shape}: {r.summary()}")
        if r.where is not None:
            w = r.where
            out.append(f"  conversation: {json.dumps(r.messages, ensure_ascii=False)}")
            if r.options:
                out.append(f"  options: {json.dumps(r.options, ensure_ascii=False)}")
            out.append(f"  expected prefix near the break: {w.excerpt(w.expected)!r}")
            out.append(f"  rendered instead:               {w.excerpt(w.actual)!r}")
            if r.blame:
                out.append(f"  text printed at the break: line(s) {', '.join(map(str, r.blame))}")
    return "\n".join(out) + "\n"
