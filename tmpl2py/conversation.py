"""Incremental conversations: ``session = t.conversation(**options)``, ``session.append(m)``.

A session holds one conversation and the request options (``tools``, ``documents``,
``add_generation_prompt``, template keywords; Go: ``tools``, ``think``). ``append`` returns the
text the prompt gained; ``session.kept`` is how many characters of the previous prompt the new
one keeps (all of them, unless the template rewrites history); ``prompt()`` is the whole
prompt, always equal to ``t.render_conversation(session.messages, **options)``.

**When a render is incremental.** A Jinja template qualifies (:func:`plan`) when its IR has
the shape ``preamble; for message in M; postamble`` at the top level, where

- ``M`` is ``messages`` or a name the top level sets to ``messages`` / ``messages[c:]``;
- the static pre-check (:func:`tmpl2py.prefix.scan`) finds nothing that looks at later
  messages or the clock (``loop.last``/``length``/``revindex``/``nextitem``, ``messages|length``,
  negative or computed look-ahead indexes, whole-list filters, namespace pre-passes,
  ``strftime_now``);
- the loop body reads of its ``loop`` only ``index``, ``index0`` and ``first``, writes no
  namespace, does not ``break``, has no ``else``/filter/recursion, and no other loop runs over
  the messages; no macro writes a namespace; no ``cycler``/``joiner`` (state across turns);
- the preamble and postamble read messages only at constant indexes ``messages[c]``.

Then the render is ``preamble + iteration(0) + ... + iteration(n-1) + postamble`` where each
iteration depends only on its message, its index and preamble state (Jinja's loop-body ``set``
does not survive an iteration), and the preamble and postamble only on ``messages[c]`` for the
constant ``c`` — fixed once ``n`` exceeds every such ``c``. So appending messages appends
iterations: two extra functions are compiled from the same IR, one that runs the preamble
silently and then only the new iterations (their ``loop.index`` offset), one that runs the
preamble silently and then the postamble. Otherwise (and always for Go) each step is a full
render, and ``session.reason`` says why.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

from .compiler import ir

START = "tmpl2py_suffix_start"
COUNT = "tmpl2py_suffix_count"
LOOP_ATTRS = ("index0", "index", "first")
_ACCESS = frozenset({"jinja.getattr_", "jinja.getitem"})


@dataclasses.dataclass(frozen=True)
class Plan:
    """The two render functions of an append-only template, and from which message count on
    they apply (every constant index the preamble and postamble read exists)."""

    suffix: Callable[[dict], str]  # preamble silently, then iterations of the last COUNT items
    tail: Callable[[dict], str]  # preamble silently, then the postamble
    threshold: int


class NotIncremental(Exception):
    """Why a template cannot be rendered incrementally (the message becomes ``reason``)."""


# ----------------------------------------------------------------------------- the plan


def plan(template: Any) -> Plan:
    """The incremental plan of a compiled template; raises :class:`NotIncremental`."""
    from .prefix import BREAKING, analysis_ir, raw_ir, scan

    if template.dialect != "jinja" or template.profile != "hf":
        raise NotIncremental(
            "incremental rendering is implemented for Jinja templates with the hf profile;"
            " every step is a full render"
        )
    if START in template.source or COUNT in template.source:
        raise NotIncremental(f"the template uses the name {START!r} or {COUNT!r}")
    args = (template.source, template.dialect, template.name, template.profile)
    breaking = [f for f in scan(analysis_ir(*args)) if f.kind in BREAKING]
    if breaking:
        raise NotIncremental("; ".join(f.text() for f in breaking))
    module = raw_ir(*args)
    check_state(module)
    pre, loop, post, names, threshold = _split(module.body)
    _check_body(loop, names)
    suffix_body = _silence(pre) + _suffix_loop(loop)
    tail_body = _silence(pre) + post
    return Plan(
        _compile(dataclasses.replace(module, body=suffix_body), template.name, "suffix"),
        _compile(dataclasses.replace(module, body=tail_body), template.name, "tail"),
        threshold,
    )


def _split(body: tuple) -> tuple:
    """(preamble, the loop over messages, postamble, message-list names, threshold)."""
    names = {"messages"}
    starts = [1]
    for stmt in _top_level(body):
        if isinstance(stmt, ir.Assign) and isinstance(stmt.target, ir.Name):
            start = _alias_start(stmt.value, names)
            if start is not None:
                names.add(stmt.target.name)
                starts.append(start)
    loops = [
        i
        for i, s in enumerate(body)
        if isinstance(s, ir.For) and isinstance(s.iter, ir.Name) and s.iter.name in names
    ]
    all_loops = [n for n in ir.walk(body) if isinstance(n, ir.For) and _reads(n.iter, names)]
    if len(loops) != 1 or len(all_loops) != 1:
        raise NotIncremental(
            "the template does not have one top-level loop over the messages"
            f" ({len(all_loops)} loop(s) read them)"
        )
    k = loops[0]
    pre, loop, post = body[:k], body[k], body[k + 1 :]
    for part in (pre, post):
        starts.append(_constant_reads(part, names))
    for n in ir.walk(body):
        if isinstance(n, ir.FuncDef) and _reads(n.body, names):
            raise NotIncremental(f"line {n.span[0]}: a macro reads the messages")
    return pre, loop, post, names, max(starts)


def _top_level(body: tuple) -> list:
    """Statements at the top level, through ``if`` branches (not loops or macros)."""
    out = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ir.If):
            out += _top_level(stmt.body) + _top_level(stmt.orelse)
    return out


def _alias_start(value: Any, names: set) -> Optional[int]:
    """``messages`` -> 0, ``messages[c:]`` -> c, anything else None."""
    if isinstance(value, ir.Name) and value.name in names:
        return 0
    if (
        isinstance(value, ir.Helper)
        and value.name == "jinja.subscript"
        and isinstance(value.args[0], ir.Name)
        and value.args[0].name in names
        and isinstance(value.args[1], ir.Helper)
        and value.args[1].name == "builtins.slice"
    ):
        start, stop, step = value.args[1].args
        if _nonneg(start) is not None and _is_none(stop) and _is_none(step):
            return _nonneg(start)
    return None


def _nonneg(node: Any) -> Optional[int]:
    if isinstance(node, ir.Const) and type(node.value) is int and node.value >= 0:
        return int(node.value)
    return None


def _is_none(node: Any) -> bool:
    return isinstance(node, ir.Const) and node.value is None


def _reads(node: Any, names: set) -> bool:
    return any(isinstance(n, ir.Name) and n.name in names for n in ir.walk(node))


def _constant_reads(part: tuple, names: set) -> int:
    """The smallest message count at which every read of ``part`` exists; raises unless the
    messages are read only as ``messages[c]`` (and ``set`` as an alias)."""
    allowed: set[int] = set()  # ids of Name nodes read in an allowed way
    needed = 0
    for n in ir.walk(part):
        if isinstance(n, ir.Assign) and _alias_start(n.value, names) is not None:
            allowed |= {id(x) for x in ir.walk(n.value) if isinstance(x, ir.Name)}
            allowed |= {id(x) for x in ir.walk(n.target) if isinstance(x, ir.Name)}
        elif isinstance(n, ir.Helper) and n.name in _ACCESS and isinstance(n.args[0], ir.Name):
            if n.args[0].name in names and _nonneg(n.args[1]) is not None:
                allowed.add(id(n.args[0]))
                needed = max(needed, _nonneg(n.args[1]) + 1)
    for n in ir.walk(part):
        if isinstance(n, ir.Name) and n.name in names and id(n) not in allowed:
            raise NotIncremental(
                f"line {n.span[0]}: outside the loop, {n.name!r} is read other than"
                " at a constant index"
            )
    return needed


def _check_body(loop: ir.For, names: set) -> None:
    line = loop.span[0]
    if loop.recursive or loop.filter is not None or loop.else_:
        raise NotIncremental(f"line {line}: the loop over messages is recursive, filtered or has an else")
    for n in ir.walk(loop.body):
        if isinstance(n, ir.For) and _reads(n.iter, names):
            raise NotIncremental(f"line {n.span[0]}: a loop over the messages inside the loop")
        if isinstance(n, ir.Helper) and n.name == "jinja.ns_set":
            raise NotIncremental(f"line {n.span[0]}: the loop over messages writes a namespace")
    for n in _own_scope(loop.body):
        if isinstance(n, ir.Break):
            raise NotIncremental(f"line {n.span[0]}: the loop over messages can break")
    reads = [n for n in _own_scope(loop.body) if _loop_attr(n) is not None]
    bare = [n for n in _own_scope(loop.body) if isinstance(n, ir.Name) and n.name == "loop"]
    bad = [_loop_attr(n) for n in reads if _loop_attr(n) not in LOOP_ATTRS]
    if bad or len(bare) != len(reads):
        what = f"loop.{bad[0]}" if bad else "the loop object itself"
        raise NotIncremental(f"line {line}: the loop over messages reads {what}")


def check_state(module: ir.Module) -> None:
    """Template-wide state that survives iterations: namespaces written in macros, cyclers."""
    for n in ir.walk(module.body):
        if isinstance(n, ir.FuncDef) and any(
            isinstance(x, ir.Helper) and x.name == "jinja.ns_set" for x in ir.walk(n.body)
        ):
            raise NotIncremental(f"line {n.span[0]}: a macro writes a namespace")
        if isinstance(n, ir.Name) and n.name in ("cycler", "joiner"):
            raise NotIncremental(f"line {n.span[0]}: {n.name}() keeps state across turns")


def _own_scope(body: tuple) -> list:
    """Nodes of ``body`` in the loop's own scope: nested loops' bodies (their own ``loop``)
    and macro bodies left out."""
    out: list = []
    stack: list = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(n)
            continue
        if not isinstance(n, ir.Node):
            continue
        out.append(n)
        if isinstance(n, ir.For):
            stack += [n.iter, n.filter] if n.filter is not None else [n.iter]
            continue
        if isinstance(n, ir.FuncDef):
            continue
        stack += [v for _, v in ir.children(n)]
    return out


def _loop_attr(n: Any) -> Optional[str]:
    if (
        isinstance(n, ir.Helper)
        and n.name in _ACCESS
        and isinstance(n.args[0], ir.Name)
        and n.args[0].name == "loop"
        and isinstance(n.args[1], ir.Const)
    ):
        return str(n.args[1].value)
    return None


# ----------------------------------------------------------------------------- the transform


def _silence(body: tuple) -> tuple:
    """``body`` printing nothing, every expression still evaluated (errors stay errors)."""
    out = []
    for s in body:
        if isinstance(s, ir.Text):
            continue
        if isinstance(s, ir.Output):
            out.append(ir.ExprStmt(s.expr, span=s.span))
        elif isinstance(s, ir.If):
            out.append(dataclasses.replace(s, body=_silence(s.body), orelse=_silence(s.orelse)))
        elif isinstance(s, ir.For):
            out.append(dataclasses.replace(s, body=_silence(s.body), else_=_silence(s.else_)))
        elif isinstance(s, ir.Scoped):
            out.append(dataclasses.replace(s, body=_silence(s.body)))
        else:
            out.append(s)
    return tuple(out)


def _suffix_loop(loop: ir.For) -> tuple:
    """``set START = M|length - COUNT``, then ``for ... in M[START:]`` with ``loop.index0``,
    ``loop.index`` and ``loop.first`` offset by START (nodes parsed from Jinja text)."""
    from .compiler.jinja.frontend import parse

    assert isinstance(loop.iter, ir.Name)
    it = loop.iter.name
    snippet = parse(
        f"{{% set {START} = ({it}|length) - {COUNT} %}}{{% for _ in {it}[{START}:] %}}"
        f"{{{{ loop.index0 + {START} }}}}{{{{ loop.index + {START} }}}}"
        f"{{{{ (loop.index0 + {START}) == 0 }}}}{{% endfor %}}"
    ).body
    assign, model = snippet[0], snippet[1]
    offsets = dict(zip(LOOP_ATTRS, (o.expr.args[0] for o in model.body)))

    def offset(n: Any) -> Any:
        attr = _loop_attr(n)
        if attr is not None:
            return offsets[attr]
        if isinstance(n, ir.For):  # a nested loop: its body has its own `loop`
            return dataclasses.replace(n, iter=offset(n.iter))
        if isinstance(n, ir.FuncDef):
            return n
        return ir.map_children(n, offset)

    body = tuple(offset(s) for s in loop.body)
    return (assign, dataclasses.replace(loop, iter=model.iter, body=body))


def _compile(module: ir.Module, name: str, part: str) -> Callable[[dict], str]:
    from .compiler.emit import emit
    from .compiler.passes import pipeline

    resolved = pipeline.run(module, profile="hf")
    header = f"# tmpl2py incremental part {part!r} of {name!r}\n"
    source = emit(resolved, header, {"TEMPLATE_NAME": f"{name}:{part}"})
    namespace: dict = {"__name__": f"tmpl2py_incremental_{part}"}
    exec(compile(source, f"<tmpl2py:{name}:{part}>", "exec"), namespace)  # our own code
    return namespace["render"]


# ----------------------------------------------------------------------------- the session


class Conversation:
    """One conversation, rendered as it grows (see the module docstring)."""

    def __init__(self, template: Any, **options: Any) -> None:
        if template.profile not in ("hf", "ollama"):
            raise TypeError(f"profile {template.profile!r} has no conversation entry point")
        for key in ("continue_final_message", "return_assistant_tokens_mask"):
            if options.get(key):
                raise TypeError(f"a conversation session does not take {key}")
        self.template = template
        self.options = options
        self.messages: list = []  # as render_conversation receives them (plain data)
        self.kept = 0
        self._prompt: Optional[str] = None
        self._pieces: Optional[list] = None  # the render without the postamble, in pieces
        self._tail = ""
        self._length = 0  # of the pieces
        try:
            self._plan: Optional[Plan] = plan(template)
            self.reason: Optional[str] = None
        except NotIncremental as e:
            self._plan, self.reason = None, str(e)
        self._base: dict = {}
        if self._plan is not None:
            from .runtime.jinja import hf

            self._alias = hf.alias_reasoning
            self._plain = hf.plain_data
            self._base = hf.conversation_context([], **options)
            self._chat: list = []  # the messages as the template sees them (aliased)

    @property
    def incremental(self) -> bool:
        """Whether appends render only the new messages (see ``reason`` when not)."""
        return self._plan is not None

    def prompt(self) -> str:
        """The whole prompt: ``render_conversation(self.messages, **options)``."""
        if self._prompt is None:
            if self._pieces is not None:
                self._prompt = "".join(self._pieces) + self._tail
            else:
                self._prompt = self.template.render_conversation(self.messages, **self.options)
        return self._prompt

    def append(self, message: Any) -> str:
        """Add one message; return the new text (the prompt from character ``kept`` on)."""
        return self.extend([message])

    def extend(self, messages: Any) -> str:
        """Add messages; return the new text. A render error leaves the session unchanged."""
        if self._plan is None:
            return self._full(list(messages))
        new = [self._plain(m) for m in messages]
        for m in new:
            if not isinstance(m, dict):
                raise TypeError(f"Chat messages should be dicts, but got {m!r}.")
        if self._pieces is None or len(self.messages) < self._plan.threshold:
            return self._full(new)
        return self._suffix(new)

    def _full(self, new: list) -> str:
        old = self.prompt() if self.messages else ""
        messages = self.messages + [self._plain(m) if self._plan else m for m in new]
        prompt = self.template.render_conversation(messages, **self.options)
        self.messages = messages
        self._prompt, self._pieces = prompt, None
        if self._plan is not None:
            self._chat = self._alias(messages)
            if len(messages) >= self._plan.threshold:
                tail = self._plan.tail({**self._base, "messages": self._chat})
                if prompt.endswith(tail):  # always, by construction; checked once per full render
                    head = prompt[: len(prompt) - len(tail)]
                    self._pieces, self._tail, self._length = [head], tail, len(head)
        self.kept = len(old) if prompt.startswith(old) else _common(old, prompt)
        return prompt[self.kept :]

    def _suffix(self, new: list) -> str:
        assert self._plan is not None and self._pieces is not None
        chat, count = self._chat, len(new)
        chat.extend(self._alias(new))  # in place: a step costs the new messages only
        context = {**self._base, "messages": chat}
        try:
            text = self._plan.suffix({**context, COUNT: count})
            tail = self._plan.tail(context)
        except BaseException:
            del chat[-count:]
            raise
        self.messages.extend(new)
        self._pieces.append(text)
        old_tail, self._tail, self._prompt = self._tail, tail, None
        grown = text + tail
        same = len(old_tail) if grown.startswith(old_tail) else _common(old_tail, grown)
        self.kept = self._length + same
        self._length += len(text)
        return grown[same:]


def _common(a: str, b: str) -> int:
    """The length of the common prefix (a binary search of C-speed comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.startswith(a[:mid]):
            lo = mid
        else:
            hi = mid - 1
    return lo
