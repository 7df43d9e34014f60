"""Runtime support of segment renders: labels, the container registry, segments.
Long because the label format is shared by everything here: building and evaluating labels,
the registries that find loop items (Jinja's and Go's), the segment list and the profiles'
conversation entries around a segment render.

A compiled template's ``render_segments(context)`` (emitted by ``compiler.emit_segments``)
computes exactly the values ``render`` computes and, alongside, a *label* for each value:
which data paths of the context it depends on. Labels never reach template code.

A label is a pair ``(eq, deps)``:

- ``eq``: ``None``, or a path (a tuple of keys from the context: ``("messages", 3)``) whose
  value this value *is* (the same object); an attribute or item read with a constant key
  then narrows it (``("messages", 3, "content")``). A Go template's data is the value at the
  empty path (``ROOT``): its paths are Go's, ``("Messages", 3, "Content")``, the field names
  of Ollama's view types included;
- ``deps``: a frozenset of paths the value (or the choice of it) is a function of.

Path components are keys and indices, ``WILD`` (any index: an item of a list the label knows
only as a whole) and, last only, ``SHAPE`` (only the container's length and keys are read:
``loop.index`` depends on ``("messages", SHAPE)``). A path ``q`` *names* a path ``p`` when
one is a prefix of the other (``WILD`` matching any key); ``q + (SHAPE,)`` names ``p`` when
``p`` is a prefix of ``q``: replacing a value inside a list leaves its length alone.

Control flow is labelled too: ``pc`` is the union of the labels of the tests that decided
the current branch; it joins every assignment and is kept with every segment (``cond``).

While rendering, labels are built lazily, as small tuples naming an operation (``("n", label,
key)`` narrows, ``("j", a, b, ...)`` joins, ...: see ``evaluate``), which costs a tuple per
operation and keeps one label shared by every value it flows into (a namespace accumulating
over a conversation is one chain, not a set copied at every step). An ``Origin`` evaluates its
label when its ``paths``/``cond``/``source`` are first read, all origins of one render sharing
one memo. A loop item's path is found then too, by identity in the rendered data (the
registries below): read the origins before changing that data.
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple, Optional


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name


#: a path component matching any key (an item of a list known only as a whole)
WILD = _Marker("WILD")
#: the last component of a path whose container is read only for its length and keys
SHAPE = _Marker("SHAPE")

NODEPS: frozenset = frozenset()
EMPTY: tuple = (None, NODEPS)
#: the label of a value that may depend on anything in the context
TOP: tuple = (None, frozenset({(WILD,)}))
#: the label of a Go template's data (dot at the top): the value at the empty path
ROOT: tuple = ((), NODEPS)

#: segment kinds
TEMPLATE = "template"  # literal text of the template (a text run or a string literal)
DATA = "data"  # text that data flows into (``paths`` says which)
COMPUTED = "computed"  # neither: computed from literals and globals (``strftime_now()``)


class Origin(tuple):
    """Where a segment's text came from: its kind, the template line, the data paths its
    value depends on, the operations applied (filters, calls), the paths the control flow
    that emitted it depended on (``cond``), and ``source``: the path whose value the text is
    (``messages[2].content`` for ``{{ message.content | trim }}``), when there is one.

    ``paths``, ``cond``, ``source`` and ``kind`` are evaluated on first reading (kept in the
    render's memo). Underneath, a tuple ``(site, record, memo)``: the site ``(line, kind,
    ops)`` of the module's table, the write's record ``(site number, label, pc)``, the memo
    of the render's origins; made with ``tuple.__new__``, one per segment, as cheaply as
    Python makes an object. Read it through its properties."""

    __slots__ = ()

    def __new__(cls, site: tuple, record: tuple, memo: dict) -> "Origin":
        return tuple.__new__(cls, (site, record, memo))

    @property
    def line(self) -> int:
        return self[0][0]

    @property
    def ops(self) -> tuple:
        return self[0][2]

    def _resolve(self) -> tuple:
        site, record, memo = self
        found = memo.get(id(record))
        if found is None:
            label = evaluate(record[1], memo) if record[1] is not None else EMPTY
            paths = flat(label)
            kind = site[1]
            if kind == DATA and not paths:
                kind = COMPUTED
            cond = flat(evaluate(record[2], memo))
            found = memo[id(record)] = ((kind, paths, cond, label[0]), record)  # record kept
        return found[0]

    @property
    def kind(self) -> str:
        if self[0][1] == TEMPLATE:
            return TEMPLATE
        return self._resolve()[0]

    @property
    def paths(self) -> frozenset:
        return self._resolve()[1]

    @property
    def cond(self) -> frozenset:
        return self._resolve()[2]

    @property
    def source(self) -> Optional[tuple]:
        return self._resolve()[3]

    def _key(self) -> tuple:
        kind, paths, cond, source = self._resolve()
        return (kind, self.line, paths, self.ops, cond, source)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Origin) and self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._key())

    def __getnewargs__(self) -> tuple:  # (copy and pickle make it as __new__ takes it)
        return tuple(self)

    def __repr__(self) -> str:
        kind, paths, cond, source = self._resolve()
        return (
            f"Origin(kind={kind!r}, line={self.line}, paths={set(paths) or '{}'}, "
            f"ops={self.ops!r}, cond={set(cond) or '{}'}, source={source!r})"
        )

    def names(self, path: tuple) -> bool:
        """Whether replacing the value at ``path`` can change this segment's text."""
        return any(names(q, path) for q in self.paths)

    def decided_by(self, path: tuple) -> bool:
        """Whether the value at ``path`` can change whether this segment is emitted."""
        return any(names(q, path) for q in self.cond)


class Segment(NamedTuple):
    text: str
    origin: Origin


# ----------------------------------------------------------------------------- labels


def ctx(context: dict, name: str) -> tuple:
    """The label of the template name ``name`` read from the render context (a global or an
    absent name is no data)."""
    return ((name,), NODEPS) if name in context else EMPTY


def flat(label: tuple) -> frozenset:
    """Every path an evaluated label names."""
    eq, deps = label
    return deps | {eq} if eq is not None else deps


def _children(node: tuple) -> Iterable:
    tag = node[0]
    if tag == "j":
        return node[1:]
    if tag == "p":
        return (node[1], node[2])
    if tag == "q" or tag == "g":
        return (node[3], node[4])
    if tag == "c":
        out = [node[2]]
        for _, label, pc in node[1]:
            out.append(pc)
            if label is not None:
                out.append(label)
        return out
    return (node[1],)  # "n", "h", "s"


class _TooDeep(Exception):
    """A label chain deeper than ``_DEPTH``: evaluated bottom up instead (``evaluate``)."""


#: how deep ``evaluate`` recurses before it goes bottom up (far below Python's own limit)
_DEPTH = 200


def _value(child: tuple, memo: dict, depth: int) -> tuple:
    """``child``'s value: itself (evaluated), its memo entry, or combined now (one level
    deeper)."""
    if type(child[0]) is not str:
        return child
    found = memo.get(id(child))
    if found is not None:
        return found[0]
    if depth >= _DEPTH:
        raise _TooDeep
    return _combine(child, memo, depth + 1)


def _combine(node: tuple, memo: dict, depth: int) -> tuple:
    """``node``'s value from its children's (memoised under ``id(node)``, the node kept
    with it so that its id stays its own)."""
    tag = node[0]
    if tag == "n":  # value.key for a constant key
        base = node[1]
        if base[0] == "s":  # an item of a slice: some item of the sliced value
            eq, deps = _value(base[1], memo, depth)
            out = (eq + (WILD,), deps) if eq is not None else (None, deps)
        else:
            eq, deps = _value(base, memo, depth)
            out = (eq + (node[2],), deps) if eq is not None else (None, deps)
    elif tag == "j" or tag == "c":  # a value computed from these
        paths: set = set()
        for child in _children(node):
            eq, deps = _value(child, memo, depth)
            if deps:
                paths.update(deps)
            if eq is not None:
                paths.add(eq)
        out = (None, frozenset(paths)) if paths else EMPTY
    elif tag == "p":  # assigned (or left alone) under a decision
        eq, deps = _value(node[1], memo, depth)
        pc_eq, pc = _value(node[2], memo, depth)
        if pc_eq is not None:
            pc = pc | {pc_eq}
        out = (eq, deps) if not pc or pc <= deps else (eq, deps | pc)
    elif tag == "h":  # what a container's length and keys depend on
        base = node[1]  # (a slice's: the sliced value's, and the bounds joined beside)
        eq, deps = _value(base[1] if base[0] == "s" else base, memo, depth)
        out = (None, deps | {eq + (SHAPE,)}) if eq is not None else (None, deps)
    elif tag == "s":  # value[a:b]: a new value made of items at the value's path
        eq, deps = _value(node[1], memo, depth)
        out = (None, deps | {eq + (WILD,)}) if eq is not None else (None, deps)
    elif tag == "q" or tag == "g":  # a loop item: (tag, root, item, iterable, loop pc)
        key = (tag, id(node[1]))  # one registry of the root per render's origins
        found = memo.get(key)
        if found is None:
            found = memo[key] = (Registry if tag == "q" else GoRegistry)(node[1])
        iterable = node[3]
        # the items of a slice are the sliced value's: found in it, or some item of its path
        iterable = _value(iterable[1] if iterable[0] == "s" else iterable, memo, depth)
        out = _item(found.find(node[2]), iterable, flat(_value(node[4], memo, depth)))
    else:
        raise ValueError(f"not a label: {node!r}")
    memo[id(node)] = (out, node)
    return out


def _item(found: Any, iterable: tuple, pc: frozenset) -> tuple:
    """The label of a loop item: the context's container it is (found by identity), else an
    item of the iterable's path; chosen by the iterable's shape and the loop's ``pc``."""
    eq, deps = iterable
    choice = deps | pc
    if eq is not None:
        choice = choice | {eq + (SHAPE,)}
    if found is not None:
        if type(found) is tuple:
            return (found, choice)
        return (None, choice | found)  # one object at several paths
    if eq is not None:
        return (eq + (WILD,), choice)
    return (None, choice)


def evaluate(node: Any, memo: dict) -> tuple:
    """A lazy label's value ``(eq, deps)``. Nodes are tuples whose first item names the
    operation (``n`` narrow, ``j`` join, ``p`` under a decision, ``h`` shape, ``s`` slice,
    ``q``/``g`` loop item of a Jinja/Go render, ``c`` captured block); an evaluated label
    (first item ``None`` or a path) is its own value. ``memo`` (by node identity; the nodes
    outlive it) is shared by one render's origins. Recursive while shallow; a deeper chain
    (one can be as long as the conversation) is evaluated bottom up, children first."""
    if type(node[0]) is not str:
        return node
    found = memo.get(id(node))
    if found is not None:
        return found[0]
    try:
        return _combine(node, memo, 0)
    except _TooDeep:
        pass
    stack = [node]
    while stack:
        top = stack[-1]
        if id(top) in memo:
            stack.pop()
            continue
        pending = [c for c in _children(top) if type(c[0]) is str and id(c) not in memo]
        if pending:
            stack.extend(pending)
            continue
        _combine(top, memo, _DEPTH)  # (its children are known: no recursion)
        stack.pop()
    return memo[id(node)][0]


class Registry:
    """``id(container) -> path`` for the lists, tuples and dicts of the context (a frozenset
    of paths for one object reached at several), built per top-level name when first asked."""

    __slots__ = ("context", "paths", "roots")

    def __init__(self, context: dict) -> None:
        self.context = context
        self.paths: dict = {}
        self.roots: set = set()

    def find(self, item: Any, near: Optional[tuple] = None) -> Any:
        found = self.paths.get(id(item))
        if found is not None:
            return found
        cls = type(item)
        if cls is not dict and cls is not list and cls is not tuple:
            return None
        if near is not None and type(near[0]) is str:
            if near[0] in self.roots:
                return None
            self.add(near[0])
            return self.paths.get(id(item))
        for name in list(self.context):  # the top-level names, one at a time, until found
            if type(name) is str and name not in self.roots:
                self.add(name)
                found = self.paths.get(id(item))
                if found is not None:
                    return found
        return None

    def add(self, name: str) -> None:
        self.roots.add(name)
        if name not in self.context:
            return
        out = self.paths
        stack: list = [((name,), self.context[name])]
        pop, push = stack.pop, stack.append
        while stack:
            path, value = pop()
            cls = type(value)
            if cls is dict:
                items: Iterable = value.items()
            elif cls is list or cls is tuple:
                items = enumerate(value)
            else:
                continue
            key = id(value)
            seen = out.get(key)
            if seen is not None:
                out[key] = (seen if type(seen) is frozenset else frozenset({seen})) | {path}
                continue  # its items are registered already, under the first path
            out[key] = path
            for k, v in items:
                push((path + (k,), v))


def registry(context: dict) -> Registry:
    return Registry(context)


class GoRegistry(Registry):
    """``Registry`` for a Go template's data, whatever its type (the root is the empty
    path): maps and slices (Ollama's typed ones too) and the fields of structs (the view
    types: ``("Messages", 3)`` is the fourth message), all registered on the first ask. A
    struct made on demand (one with ``__getattr__``, a ``JsonTool``) is one value."""

    __slots__ = ()

    def find(self, item: Any, near: Optional[tuple] = None) -> Any:
        if not self.roots:
            self.roots.add(())
            self.add_go()
        return self.paths.get(id(item))

    def add_go(self) -> None:
        out = self.paths
        stack: list = [((), self.context)]
        pop, push = stack.pop, stack.append
        while stack:
            path, value = pop()
            if isinstance(value, dict):
                items: Iterable = value.items()
            elif isinstance(value, (list, tuple)):
                items = enumerate(value)
            else:
                fields = getattr(type(value), "go_fields", None)
                if fields is None:  # a scalar (its identity says nothing)
                    continue
                opaque = hasattr(type(value), "__getattr__")  # made on demand: not opened
                items = () if opaque else [(f[0], getattr(value, f[0])) for f in fields]
            key = id(value)
            seen = out.get(key)
            if seen is not None:
                out[key] = (seen if type(seen) is frozenset else frozenset({seen})) | {path}
                continue
            out[key] = path
            for k, v in items:
                push((path + (k,), v))


def go_registry(data: Any) -> GoRegistry:
    return GoRegistry(data)


# ----------------------------------------------------------------------------- paths


def _match(a: Any, b: Any) -> bool:
    return a is WILD or b is WILD or a == b


def names(q: tuple, p: tuple) -> bool:
    """Whether replacing the value at path ``p`` can change a value that depends on ``q``."""
    if q and q[-1] is SHAPE:  # only the container's shape: replaced only from above
        q = q[:-1]
        return len(p) <= len(q) and all(_match(a, b) for a, b in zip(p, q))
    return all(_match(a, b) for a, b in zip(p, q))


def format_path(path: tuple) -> str:
    """``messages[3].content``; ``WILD`` prints as ``[*]``, ``SHAPE`` as ``|length``."""
    out = str(path[0]) if path else ""
    for key in path[1:]:
        if key is WILD:
            out += "[*]"
        elif key is SHAPE:
            out += "|shape"
        elif type(key) is str and key.isidentifier():
            out += "." + key
        else:
            out += f"[{key!r}]"
    return out


# ----------------------------------------------------------------------------- segments


def finish(
    out: list, org: list, sites: tuple, context: Any = None, plain: Any = None
) -> "Segments":
    """The render's segments: ``out`` its texts, ``org`` one ``(site, label, pc)`` each, a
    site ``(line, kind, ops)`` of the module's table (empty texts are dropped).

    An output that is not a string fails ``render``'s final join; ``plain`` (the plain
    render) then raises its own error, which names the item's index in *its* list."""
    try:
        "".join(out)
    except TypeError:
        if plain is not None:
            plain(context)
        raise
    return Segments(out, org, sites, context)


class Segments(list):
    """A render's segments (a list of ``Segment``), made from the render's pieces when first
    used; ``context`` is the context rendered (``assistant_spans`` reads the messages' roles
    from it)."""

    def __init__(
        self, out: Any = (), org: Any = None, sites: tuple = (), context: Any = None
    ) -> None:
        super().__init__(() if org is not None else out)
        self.context = context
        self._pending = (out, org, sites) if org is not None else None

    def _made(self) -> "Segments":
        pending = self._pending
        if pending is not None:
            self._pending = None
            out, org, sites = pending
            memo: dict = {}
            append = super().append
            new = tuple.__new__  # (Segment's and Origin's own constructors, without a call)
            for text, record in zip(out, org):
                if text:
                    append(new(Segment, (text, new(Origin, (sites[record[0]], record, memo)))))
        return self

    def __len__(self) -> int:
        return super(Segments, self._made()).__len__()

    def __iter__(self) -> Any:
        return super(Segments, self._made()).__iter__()

    def __getitem__(self, index: Any) -> Any:
        return super(Segments, self._made()).__getitem__(index)

    def __eq__(self, other: object) -> bool:
        return super(Segments, self._made()).__eq__(other)

    def __repr__(self) -> str:
        return super(Segments, self._made()).__repr__()

    def append(self, item: Any) -> None:
        super(Segments, self._made()).append(item)

    def __reversed__(self) -> Any:
        return super(Segments, self._made()).__reversed__()

    __hash__ = None  # type: ignore[assignment]


def sorted_paths(paths: Iterable[tuple]) -> list:
    """Paths in a stable order (for display and JSON)."""
    return sorted(paths, key=lambda p: tuple((type(k).__name__, repr(k)) for k in p))


def cut(segments: list, length: int) -> list:
    """The segments of the first ``length`` characters (``continue_final_message``)."""
    out, used = Segments(), 0
    out.context = getattr(segments, "context", None)
    for seg in segments:
        if used >= length:
            break
        if used + len(seg.text) > length:
            seg = Segment(seg.text[: length - used], seg.origin)
        out.append(seg)
        used += len(seg.text)
    return out


def text_of(segments: Iterable[Segment]) -> str:
    return "".join(s.text for s in segments)


def merge_adjacent(segments: list) -> list:
    """Adjacent segments with equal origins joined (for display)."""
    out: list = []
    for seg in segments:
        if out and out[-1].origin == seg.origin:
            out[-1] = Segment(out[-1].text + seg.text, seg.origin)
        else:
            out.append(seg)
    return out


def describe(origin: Origin) -> str:
    """One line: ``data messages[1].content |trim (line 4)``."""
    if origin.kind == TEMPLATE:
        return f"template (line {origin.line})"
    ordered = sorted_paths(origin.paths)
    values = [format_path(p) for p in ordered if not (p and p[-1] is SHAPE)]
    shapes = [format_path(p) for p in ordered if p and p[-1] is SHAPE]
    parts = [origin.kind, ", ".join(values)]
    if shapes:
        parts.append("(via " + ", ".join(shapes) + ")")
    if origin.ops:
        parts.append(" ".join("|" + op for op in origin.ops))
    return " ".join(p for p in parts if p) + f" (line {origin.line})"


def plain_errors(render_segments: Any, draws: bool = False) -> Any:
    """A segment function whose errors are the plain render's (both dialects): when it raises,
    the plain render (``_PLAIN`` of its module) runs on the same data and raises its own,
    from the plain module's frames, where the compiler finds the template position (Jinja's
    table; Go's text, ``compiler/gotmpl/exec_errors``). The segment renderer computes the same
    values another way (a block's buffer, a generation span), so its error can differ in a
    detail the plain render has right (``sequence item 3`` against ``item 2``). A limit error
    stays the segment render's own (the limits count the same work, at other points); so does
    any error the plain render does not raise. ``draws``: the template draws from ``random``
    (its ``random`` filter, ``lipsum``): the plain render then runs from the generator state
    the segment render started from, so it draws the same items."""
    from .limits import RenderLimitExceeded

    namespace = render_segments.__globals__

    def run(context: Any) -> Any:
        if draws:
            import random

            state = random.getstate()
        try:
            return render_segments(context)
        except RenderLimitExceeded:
            raise
        except Exception:  # never swallowed: the plain render's error, or this one again
            plain = namespace.get("_PLAIN")
            if plain is not None:
                if draws:
                    random.setstate(state)
                plain(context)
            raise

    return run


def conversation_segments(template: Any, render_segments: Any, messages: Any, **options: Any) -> Any:
    """``template.render_conversation(..., segments=True)`` (``template``: the
    ``CompiledTemplate``, ``render_segments`` its segment function), the segments of exactly
    the profile's prompt:

    - ``hf``: transformers' ``render_jinja_template`` input handling around a segment render
      (cut as ``continue_final_message`` cuts it); with ``return_assistant_tokens_mask``
      ``(segments, spans)``;
    - ``ollama``: Ollama's ``Template.Execute`` (``runtime/go/ollama.conversation_entry``,
      Modelfile defaults included) with the segment render in place of ``render``: the
      messages mode's one render, or the legacy mode's renders one after the other (each
      turn's paths are of its own data: ``("Prompt",)``)."""
    if template.profile == "ollama":
        return _ollama_segments(template, render_segments, messages, options)
    from .jinja.hf import render_conversation

    if template.profile != "hf":
        raise TypeError(
            f"segments=True needs the hf or ollama profile (this one is {template.profile!r})"
        )
    source = template.source

    box: list = []

    def render(context: dict) -> str:
        box.append(render_segments(context))
        return text_of(box[-1])

    result = render_conversation(render, source, messages, **options)
    text, spans = result if isinstance(result, tuple) else (result, None)
    segments = cut(box[-1], len(text))
    return segments if spans is None else (segments, spans)


def _ollama_segments(template: Any, render_segments: Any, messages: Any, options: dict) -> Any:
    from .go import generate, ollama

    if "modelfile" in options:  # SYSTEM / MESSAGE defaults, as render_conversation applies them
        options = dict(options)
        messages = generate.chat_messages(messages, options.pop("modelfile"))
    box: list = []

    def render(data: Any) -> str:
        box.append(render_segments(data))
        return text_of(box[-1])

    entry = ollama.conversation_entry({**template.namespace, "render": render})
    entry(messages, **options)
    if len(box) == 1:
        return box[0]
    out = Segments()
    for segments in box:  # the legacy mode: one render per turn
        out.extend(segments)
    out.context = [getattr(s, "context", None) for s in box]
    return out
