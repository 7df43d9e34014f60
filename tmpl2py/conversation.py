"""Incremental conversations: ``session = t.conversation(**options)``, ``session.append(m)``.
Long because it holds the plans of both dialects (their IR shapes differ) and the session.

A session holds one conversation and the request options (``tools``, ``documents``,
``add_generation_prompt``, template keywords; Go: ``tools``, ``think``). ``append`` returns the
text the prompt gained; ``session.kept`` is how many characters of the previous prompt the new
one keeps (all of them, unless the template rewrites history); ``prompt()`` is the whole
prompt, always equal to ``t.render_conversation(session.messages, **options)``.

**When a render is incremental.** A template qualifies (:func:`plan`) when its IR has the
shape ``preamble; for message in M; postamble`` at the top level, where ``M`` is the messages
(Jinja: ``messages`` or a name the top level sets to ``messages`` / ``messages[c:]``; Go:
``range .Messages``, or ``range $i, $m := .Messages``) and

- the static pre-check (:func:`tmpl2py.prefix.scan`) finds nothing that looks at later
  messages or the clock (``loop.last``/``length``/``revindex``/``nextitem``, ``messages|length``,
  negative or computed look-ahead indexes, whole-list filters, namespace pre-passes,
  ``strftime_now``; Go: ``len (slice $.Messages $i)``, ``len .Messages``, ``index``/``slice``
  with computed indexes, ``currentDate``);
- Jinja: the loop carries no state from one message to the next: of its ``loop`` it reads
  only ``index``, ``index0`` and ``first``, writes no namespace, no macro writes one, no
  ``cycler``/``joiner``; Go: the variables declared before the range that it assigns (Ollama's
  ``$system``, set by a system message and printed by the next user turn) are *carried*: the
  session keeps their values after the messages rendered and starts the next iterations from
  them; the loop does not ``break``, has no filter or recursion, and no other loop runs over
  the messages;
- the preamble and postamble read messages only at constant indexes (``messages[c]``, Go:
  ``index .Messages c``); Go: the template reads its data only field by field (``.Tools``,
  ``$.System``: never ``$`` as a whole) and defines no templates.

Then the render is ``preamble + iteration(0) + ... + iteration(n-1) + postamble`` where each
iteration depends only on its message, its index, preamble state and the carried variables'
values before it (which it updates), and the preamble and postamble only on ``messages[c]`` —
fixed once the messages up to every such ``c`` are — and the carried values at the end. So
appending messages appends iterations: two extra functions are compiled from the same IR, one
that runs the preamble silently and then only the iterations of the last ``COUNT`` messages
(their index offset; Go: the carried variables set from the session's data first and
passed back, through Go's ``call``, at the end), one that runs the preamble silently and then
the postamble. Ollama
merges consecutive messages of one role (not tool) and joins every system message into
``.System``: an append that merges into the last message renders that message's step again;
one that adds a system message to a template reading ``.System`` is a full render.
Ollama's legacy Prompt/Response mode (a Go template that does not mention ``.Messages``)
renders the template once per turn, of that turn's data only: a finished turn never changes,
so an append renders the turns it finishes and the last turn again (:class:`_LegacyView`).
Otherwise each step is a full render, and ``session.reason`` says why.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

from .compiler import ir
from .prefix import (
    BREAKING, TOP, analysis_ir, assigned, common_prefix, go_data_field, hard_errors, range_vars,
    raw_ir, scan,
)  # fmt: skip

COUNT = "tmpl2py_suffix_count"
START = "tmpl2py_suffix_start"
STATE = "tmpl2py_state_"  # Go: the carried variables' values in, "..._out" them out
LOOP_ATTRS = ("index0", "index", "first")
_ACCESS = frozenset({"jinja.getattr_", "jinja.getitem"})
_GO_RANGE = frozenset({"gotmpl.range_pairs", "gotmpl.range_values"})


@dataclasses.dataclass(frozen=True)
class Plan:
    """The two render functions of an append-only template, and the first message index an
    append may change for them to apply (every constant index the preamble and postamble
    read lies before it)."""

    suffix: Callable[[dict], str]  # preamble silently, then iterations of the last COUNT items
    tail: Callable[[dict], str]  # preamble silently, then the postamble
    threshold: int
    reads_system: bool = False  # Go: the template reads .System (every system message)
    carried: int = 0  # Go: variables the range carries from one message to the next
    legacy: bool = False  # Go: Ollama's per-turn Prompt/Response mode (_LegacyView)


def _unset(context: dict) -> str:
    raise AssertionError("a legacy-mode plan renders through its session's view")


class NotIncremental(Exception):
    """Why a template cannot be rendered incrementally (the message becomes ``reason``)."""


# ----------------------------------------------------------------------------- the plan


def plan(template: Any) -> Plan:
    """The incremental plan of a compiled template; raises :class:`NotIncremental`."""
    kind = (template.dialect, template.profile)
    if kind not in (("jinja", "hf"), ("go", "ollama")):
        raise NotIncremental(
            "incremental rendering is implemented for Jinja templates with the hf profile and"
            " Go templates with the ollama profile; every step is a full render"
        )
    if any(name in template.source for name in (START, COUNT, STATE)):
        raise NotIncremental(f"the template uses a name of ours ({START!r}, {COUNT!r}, {STATE!r})")
    args = (template.source, template.dialect, template.name, template.profile)
    breaking = [f for f in scan(analysis_ir(*args)) if f.kind in BREAKING]
    if breaking:
        raise NotIncremental("; ".join(f.text() for f in breaking))
    module = raw_ir(*args)
    if template.dialect == "go":
        return _go_plan(module, template.name)
    check_state(module)
    pre, loop, post, names, threshold = _split(module.body)
    _check_body(loop, names)
    return Plan(
        _compile(module, _silence(pre) + _suffix_loop(loop), template.name, "suffix"),
        _compile(module, _silence(pre) + post, template.name, "tail"),
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
    _no_break(loop)
    own = _own_scope(loop.body)
    reads = [n for n in own if _loop_attr(n) is not None]
    bare = [n for n in own if isinstance(n, ir.Name) and n.name == "loop"]
    bad = [_loop_attr(n) for n in reads if _loop_attr(n) not in LOOP_ATTRS]
    if bad or len(bare) != len(reads):
        what = f"loop.{bad[0]}" if bad else "the loop object itself"
        raise NotIncremental(f"line {line}: the loop over messages reads {what}")


def _no_break(loop: ir.For) -> None:
    for n in _own_scope(loop.body):
        if isinstance(n, ir.Break):
            raise NotIncremental(f"line {n.span[0]}: the loop over messages can break")


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
    """Nodes of ``body`` in the loop's own scope: nested loops' bodies (their own ``loop``,
    their own ``break``) and macro bodies left out; a nested loop's list and filter kept."""
    out: list = []
    for n in ir.walk(body, stop=lambda n: isinstance(n, (ir.For, ir.FuncDef))):
        out.append(n)
        if isinstance(n, ir.For):
            out += ir.walk((n.iter, n.filter))
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


# ----------------------------------------------------------------------------- the Go plan


def _go_plan(module: ir.Module, name: str) -> Plan:
    """The plan of a Go template in Ollama's messages mode (see the module docstring)."""
    meta = dict(module.meta)
    if meta.get("GO_MODE", "messages") != "messages":
        if meta.get("GO_CUT_ERROR"):
            raise NotIncremental(f"Ollama cannot cut the template at .Response: {meta['GO_CUT_ERROR']}")
        return Plan(_unset, _unset, 0, legacy=True)  # the session's _LegacyView renders
    if meta.get("GO_TEMPLATES"):
        raise NotIncremental("the template defines templates (they may receive the data whole)")
    body = module.body
    k, lst = _go_loop(body)
    loop = body[k]
    own = range_vars(loop)
    outer = {i for i in assigned(loop.body) if i not in own} & set(assigned(body[:k] + body[k + 1 :]))
    carried = tuple(_go_var(loop.body, i) for i in sorted(outer))
    _no_break(loop)
    threshold = max(1, _go_constant_reads(body, loop, lst))
    reads_system = any(go_data_field(n) == "System" for n in ir.walk(body))
    pre = _silence(body[:k]) + _go_restore(carried)
    saved = ir.ExprStmt(ir.Helper("gotmpl.call", (ir.Const(None), _go_field(STATE + "out")) + carried))
    return Plan(
        _compile(module, pre + _go_suffix(loop, lst) + (saved,) * bool(carried), name, "suffix"),
        _compile(module, pre + body[k + 1 :], name, "tail"),
        threshold,
        reads_system,
        len(carried),
    )


def _go_var(body: Any, ident: str) -> ir.Name:
    return next(n for n in ir.walk(body) if isinstance(n, ir.Name) and n.ident == ident)


def _go_field(key: str) -> ir.Helper:
    """``$.key``: the private keys the session adds to the data (the template reads its
    data field by field only, so it never sees them)."""
    return ir.Helper("gotmpl.field", (ir.Name(".", TOP), ir.Const(key)))


def _go_restore(carried: tuple) -> tuple:
    """The carried variables set from the data when the session passes their values (the
    state after the messages already rendered); otherwise the preamble's own."""
    if not carried:
        return ()
    sets = tuple(ir.Assign(v, _go_field(f"{STATE}{k}")) for k, v in enumerate(carried))
    return (ir.If(_go_field(STATE + "given"), sets),)


def _go_messages(node: Any) -> bool:
    """``.Messages`` itself (at the top, or ``$.Messages``)."""
    return isinstance(node, ir.Helper) and node.name == "gotmpl.field" and go_data_field(node) == "Messages"


def _go_loop(body: tuple) -> tuple:
    """(the index of the top-level range over the messages, the node of its list). The
    lowering evaluates a range's list into its first variable just before the loop."""
    found = []
    for k, stmt in enumerate(body):
        if not (isinstance(stmt, ir.For) and isinstance(stmt.iter, ir.Helper)):
            continue
        if stmt.iter.name not in _GO_RANGE or not stmt.iter.args:
            continue
        lst = stmt.iter.args[0]
        targets = {n.ident for n in ir.walk(stmt.target) if isinstance(n, ir.Name)}
        if isinstance(lst, ir.Name) and lst.ident in targets:  # the lowering's `range $i, $m :=`
            held = [s.value for s in body[:k] if isinstance(s, ir.Assign)
                    and isinstance(s.target, ir.Name) and s.target.ident == lst.ident]  # fmt: skip
            outside = [i for i in assigned(body[:k] + body[k + 1 :]) if i == lst.ident]
            lst = held[-1] if len(held) == len(outside) == 1 else lst
        if _go_messages(lst):
            found.append((k, lst))
    if len(found) != 1:
        raise NotIncremental(
            f"the template does not have one top-level range over .Messages ({len(found)} found)"
        )
    return found[0]


def _go_constant_reads(body: tuple, loop: ir.For, lst: Any) -> int:
    """The first message index an append may change (every ``index .Messages c`` before it);
    raises unless the data is read field by field and the messages only as the range's list
    or ``index .Messages c`` outside the range."""
    inside = {id(n) for n in ir.walk(loop.body)}
    allowed = {id(lst)}
    needed = 0
    for n in ir.walk(body):
        if isinstance(n, ir.Helper) and n.name == "gotmpl.index" and len(n.args) >= 2:
            c = _nonneg(n.args[1])
            if _go_messages(n.args[0]) and c is not None and id(n) not in inside:
                allowed.add(id(n.args[0]))
                needed = max(needed, c + 1)
    for n in ir.walk(body):
        if go_data_field(n) == "Messages" and id(n) not in allowed:
            raise NotIncremental(
                f"line {n.span[0]}: .Messages is read other than as the range's list or at a"
                " constant index outside it"
            )
    fields = {id(n.args[0]) for n in ir.walk(body) if go_data_field(n) is not None}
    fields |= {id(s.target) for s in body if isinstance(s, ir.Assign) and isinstance(s.value, ir.Local)}
    for n in ir.walk(body):
        if isinstance(n, ir.Name) and n.ident == TOP and id(n) not in fields:
            at = f"line {n.span[0]}: " if n.span[0] else ""
            raise NotIncremental(f"{at}the template reads its data as a whole (`$` or `.`, not a field)")
    return needed


def _go_suffix(loop: ir.For, lst: Any) -> tuple:
    """``$start := len M - COUNT``, then the range over ``slice M $start`` with its index
    offset by ``$start`` (Go's range index is its first target)."""
    count = _go_field(COUNT)
    start = ir.Name("$" + START, "v_" + START)
    assign = ir.Assign(start, ir.BinOp("-", ir.Helper("gotmpl.length", (lst,)), count))
    it = dataclasses.replace(loop.iter, args=(ir.Helper("gotmpl.slice_", (lst, start)),) + loop.iter.args[1:])
    target, body = loop.target, loop.body
    names = [n for n in ir.walk(loop.target) if isinstance(n, ir.Name)]
    if isinstance(target, ir.Target) and len(names) == 2:
        index = names[0]
        fresh = ir.Name(index.name, index.ident + "_" + START)
        target = dataclasses.replace(target, names=(fresh,) + target.names[1:])
        body = (ir.Assign(index, ir.BinOp("+", fresh, start)),) + body
    return (assign, dataclasses.replace(loop, iter=it, target=target, body=body, else_=()))


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


def _compile(module: ir.Module, body: tuple, name: str, part: str) -> Callable[[dict], str]:
    """A render function of ``module`` with ``body`` (its meta kept: Go's mode, error sites)."""
    from .compiler.emit import emit
    from .compiler.passes import pipeline

    resolved = pipeline.run(dataclasses.replace(module, body=body), profile=module.profile or "hf")
    header = f"# tmpl2py incremental part {part!r} of {name!r}\n"
    source = emit(resolved, header, {"TEMPLATE_NAME": f"{name}:{part}"})
    namespace: dict = {"__name__": f"tmpl2py_incremental_{part}"}
    exec(compile(source, f"<tmpl2py:{name}:{part}>", "exec"), namespace)  # our own code
    return namespace["render"]


# ----------------------------------------------------------------------------- the session


class _JinjaView:
    """The messages as a Jinja template sees them (plain data, reasoning fields aliased)."""

    def __init__(self, template: Any, plan: Plan, options: dict) -> None:
        from .runtime.jinja import hf

        self.hf = hf
        self.options = options
        self.base: dict = {}
        self.chat: list = []
        self.mark = 0

    def shape(self, messages: list) -> list:
        new = [self.hf.plain_data(m) for m in messages]
        for m in new:
            if not isinstance(m, dict):
                raise TypeError(f"Chat messages should be dicts, but got {m!r}.")
        return new

    def reset(self, messages: list) -> None:
        """After a full render of ``messages`` (so the options are valid: their errors are
        the full render's to raise, at the append that meets them)."""
        self.base = self.base or self.hf.conversation_context([], **self.options)
        self.chat = self.hf.alias_reasoning(messages)

    def add(self, new: list) -> Optional[int]:
        """Take ``new`` in place; the first message index that changed (None: render all)."""
        self.mark = len(self.chat)
        self.chat.extend(self.hf.alias_reasoning(new))
        return self.mark

    def undo(self) -> None:
        del self.chat[self.mark :]

    def context(self) -> dict:
        return {**self.base, "messages": self.chat}


class _GoView:
    """The data of Ollama's messages mode, kept collated as messages arrive (a merge into
    the last message changes it; a system message changes ``.System``)."""

    def __init__(self, template: Any, plan: Plan, options: dict) -> None:
        from .runtime.go import ollama

        self.ollama = ollama
        self.options = options
        self.json_tools = bool(template.namespace.get("GO_TOOLS_JSON"))
        self.base: dict = {}
        self.reads_system = plan.reads_system
        self.chat: Any = []
        self.system: list = []
        self.mark: tuple = ()

    def shape(self, messages: list) -> list:
        return list(messages)

    def reset(self, messages: list) -> None:
        """After a full render of ``messages`` (as the Jinja view's)."""
        if not self.base:
            get = self.options.get
            self.base = self.ollama.template_values([], get("tools"), get("think"), self.json_tools)
        collated: list = []
        self.system = []
        self.ollama.collate_onto(collated, self.system, messages)
        self.chat = self.ollama.messages_value(collated)

    def add(self, new: list) -> Optional[int]:
        chat, system = self.chat, self.system
        n, last = len(chat), chat[-1]
        self.mark = (n, last, last.Content, len(system))
        self.ollama.collate_onto(chat, system, new)
        if self.reads_system and len(system) != self.mark[3]:
            return None
        return n - 1 if last.Content is not self.mark[2] else n

    def undo(self) -> None:
        n, last, content, systems = self.mark
        del self.chat[n:]
        last.Content = content
        del self.system[systems:]

    def context(self) -> dict:
        return {**self.base, "System": "\n\n".join(self.system), "Messages": self.chat}


class _LegacyView:
    """Ollama's legacy mode (a template that does not mention ``.Messages``): the prompt is
    one render of the template per turn, the last one cut at ``.Response``, each of the turn's
    own data (``ollama.legacy_turns``). A finished turn never changes, so an append renders
    the turns it finishes and the last turn again: the plan's functions are this view's."""

    def __init__(self, template: Any, plan: Plan, options: dict) -> None:
        from .runtime.go import ollama

        self.ollama = ollama
        self.render = template.namespace["render"]
        self.options = options
        self.chat: list = []
        self.start = 0  # the message the last turn starts at
        self.turns: list = []  # the turns the last append finished
        self.last: dict = {}
        self.mark: tuple = ()

    def shape(self, messages: list) -> list:
        return list(messages)

    def _turns(self, messages: list) -> tuple:
        think = self.ollama.think_values(self.options.get("think"))
        common = dict(zip(("Think", "ThinkLevel", "IsThinkSet"), think))
        return self.ollama.legacy_turns(messages, common)

    def reset(self, messages: list) -> None:
        self.chat = []
        self.ollama.collate_onto(self.chat, [], messages)
        _, self.last, self.start = self._turns(self.chat)
        self.turns = []

    def add(self, new: list) -> Optional[int]:
        chat, n = self.chat, len(self.chat)
        last = chat[-1] if chat else None
        self.mark = (n, last, last.Content if last else "", self.start)
        self.ollama.collate_onto(chat, [], new)
        self.turns, self.last, offset = self._turns(chat[self.start :])
        self.start += offset
        return n  # the finished turns stay: the pieces end there, the tail is the last turn

    def undo(self) -> None:
        n, last, content, self.start = self.mark
        del self.chat[n:]
        if last is not None:
            last.Content = content

    def context(self) -> dict:
        return {}

    def finished(self, context: dict) -> str:
        return "".join(self.render(turn) for turn in self.turns)

    def last_turn(self, context: dict) -> str:
        return self.render(self.ollama.CutRun(self.last))


class Conversation:
    """One conversation, rendered as it grows (see the module docstring)."""

    def __init__(self, template: Any, /, **options: Any) -> None:
        # (positional-only: a template variable named ``template`` is an option like any other)
        if template.profile not in ("hf", "ollama"):
            raise TypeError(f"profile {template.profile!r} has no conversation entry point")
        for key in ("continue_final_message", "return_assistant_tokens_mask"):
            if options.get(key):
                raise TypeError(f"a conversation session does not take {key}")
        self.template = template
        self.options = options
        self.messages: list = []  # as render_conversation receives them
        self.kept = 0
        self._prompt: Optional[str] = None
        # the render without the postamble in pieces: each the text of the messages from
        # its first index on (a merge into the last message renders its piece again)
        self._pieces: Optional[list] = None
        self._starts: list = []
        self._states: list = []  # Go: the carried variables at each piece's start (None: the preamble's)
        self._end: Optional[tuple] = None  # ... and after the last piece
        self._tail = ""
        self._length = 0  # of the pieces
        try:
            self._plan: Optional[Plan] = plan(template)
            self.reason: Optional[str] = None
        except NotIncremental as e:
            self._plan, self.reason = None, str(e)
        self._view: Any = None
        if self._plan is not None and self._plan.legacy:
            self._view = _LegacyView(template, self._plan, options)
            view = self._view
            self._plan = dataclasses.replace(self._plan, suffix=view.finished, tail=view.last_turn)
        elif self._plan is not None:
            view = _GoView if template.dialect == "go" else _JinjaView
            self._view = view(template, self._plan, options)

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
        """Add messages; return the new text. A render error leaves the session unchanged.
        Any error of the incremental path is the full render's to report: the session
        renders the whole conversation then, so the error (and its template position) is
        exactly the full render's; limit errors pass straight through."""
        if self._plan is None:
            return self._full(list(messages))
        new = self._view.shape(list(messages))
        if self._pieces is None:
            return self._full(new)
        view = self._view
        before = len(view.chat)
        try:
            start = view.add(new)
            if start is None or start < self._plan.threshold:
                view.undo()
                return self._full(new)
            return self._suffix(new, start, before)
        except hard_errors():
            view.undo()
            raise
        except Exception:  # noqa: BLE001 - reported by the full render below
            view.undo()
            return self._full(new)

    def _full(self, new: list) -> str:
        old = self.prompt() if self.messages else ""
        messages = self.messages + new
        prompt = self.template.render_conversation(messages, **self.options)
        self.messages = messages
        self._prompt, self._pieces = prompt, None
        plan = self._plan
        if plan is not None:
            self._view.reset(messages)
            if len(self._view.chat) >= plan.threshold:
                context = self._view.context()
                if plan.carried:  # the state after every message: the iterations once more
                    self._end = self._run(plan.suffix, {**context, COUNT: len(self._view.chat)}, None)[1]
                tail = self._run(plan.tail, context, self._end)[0]
                if prompt.endswith(tail):  # always, by construction; checked once per full render
                    head = prompt[: len(prompt) - len(tail)]
                    self._pieces, self._starts, self._states = [head], [0], [None]
                    self._tail, self._length = tail, len(head)
        self.kept = len(old) if prompt.startswith(old) else common_prefix(old, prompt)
        return prompt[self.kept :]

    def _run(self, function: Callable, context: dict, state: Optional[tuple]) -> tuple:
        """(the text, the carried variables after it) of a plan function, the carried
        variables starting from ``state`` (None: the preamble's own)."""
        if not self._plan or not self._plan.carried:
            return function(context), None
        box: list = [state]
        extra: dict = {STATE + "out": lambda *values: box.__setitem__(0, values)}
        if state is not None:
            extra[STATE + "given"] = True
            extra.update((f"{STATE}{k}", v) for k, v in enumerate(state))
        return function({**context, **extra}), box[0]

    def _suffix(self, new: list, start: int, before: int) -> str:
        """Render the messages from ``start`` on (from the start of its piece when an append
        changed a message the pieces hold: ``start < before``, the old count), and the tail."""
        assert self._plan is not None and self._pieces is not None
        pieces, starts = self._pieces, self._starts
        p = len(starts)  # the pieces end where the messages did: a new piece starts there
        if start < before:  # a merge changed message `start`: its piece renders again
            p -= 1
            while starts[p] > start:
                p -= 1
        first = starts[p] if p < len(starts) else start
        if first < self._plan.threshold:
            self._view.undo()
            return self._full(new)
        context = self._view.context()
        state = self._states[p] if p < len(starts) else self._end
        text, end = self._run(self._plan.suffix, {**context, COUNT: len(self._view.chat) - first}, state)
        tail = self._run(self._plan.tail, context, end)[0]
        self.messages.extend(new)
        dropped = "".join(pieces[p:])
        kept_length = self._length - len(dropped)
        old_rest = dropped + self._tail
        del pieces[p:], starts[p:], self._states[p:]
        pieces.append(text)
        starts.append(first)
        self._states.append(state)
        self._tail, self._prompt, self._end = tail, None, end
        grown = text + tail
        same = len(old_rest) if grown.startswith(old_rest) else common_prefix(old_rest, grown)
        self.kept = kept_length + same
        self._length = kept_length + len(text)
        return grown[same:]
