"""Runtime support of segment renders: labels, the container registry, segments.

A compiled template's ``render_segments(context)`` (emitted by ``compiler.emit_segments``)
computes exactly the values ``render`` computes and, alongside, a *label* for each value:
which data paths of the context it depends on. Labels never reach template code.

A label is a pair ``(eq, deps)``:

- ``eq``: ``None``, or a path (a tuple of keys from the context: ``("messages", 3)``) whose
  value this value *is* (the same object); an attribute or item read with a constant key
  then narrows it (``("messages", 3, "content")``);
- ``deps``: a frozenset of paths the value (or the choice of it) is a function of.

Path components are keys and indices, ``WILD`` (any index: an item of a list the label knows
only as a whole) and, last only, ``SHAPE`` (only the container's length and keys are read:
``loop.index`` depends on ``("messages", SHAPE)``). A path ``q`` *names* a path ``p`` when
one is a prefix of the other (``WILD`` matching any key); ``q + (SHAPE,)`` names ``p`` when
``p`` is a prefix of ``q``: replacing a value inside a list leaves its length alone.

Control flow is labelled too: ``pc`` is the union of the labels of the tests that decided
the current branch; it joins every assignment and is kept with every segment (``cond``).
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

#: segment kinds
TEMPLATE = "template"  # literal text of the template (a text run or a string literal)
DATA = "data"  # text that data flows into (``paths`` says which)
COMPUTED = "computed"  # neither: computed from literals and globals (``strftime_now()``)


class Origin(NamedTuple):
    """Where a segment's text came from: its kind, the template line, the data paths its
    value depends on, the operations applied (filters, calls), the paths the control flow
    that emitted it depended on (``cond``), and ``source``: the path whose value the text is
    (``messages[2].content`` for ``{{ message.content | trim }}``), when there is one."""

    kind: str
    line: int
    paths: frozenset = NODEPS
    ops: tuple = ()
    cond: frozenset = NODEPS
    #: the one path whose value the text is (before ``ops``), when there is one
    source: Optional[tuple] = None

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


def narrow(label: tuple, key: Any) -> tuple:
    """``value.key`` / ``value[key]`` for a constant key (not a method name: see the emitter)."""
    eq = label[0]
    if eq is None:
        return label
    return (eq + (key,), label[1])


def join(*labels: tuple) -> tuple:
    """A value computed from values with these labels."""
    deps = set()
    for eq, more in labels:
        if eq is not None:
            deps.add(eq)
        deps.update(more)
    return (None, frozenset(deps)) if deps else EMPTY


def flat(label: tuple) -> frozenset:
    """Every path a label names, as a set (for ``pc``)."""
    eq, deps = label
    return deps | {eq} if eq is not None else deps


def with_pc(label: tuple, pc: frozenset) -> tuple:
    """A value assigned under control flow ``pc``."""
    if not pc:
        return label
    return (label[0], label[1] | pc)


def upgrade(label: tuple, pc: frozenset) -> tuple:
    """A variable that some branch not taken (or a loop that ran fewer times) would have
    assigned: its value now also depends on that decision."""
    if not pc:
        return label
    return (label[0], label[1] | pc)


def shape(label: tuple) -> frozenset:
    """What the number and choice of a container's items depends on."""
    eq, deps = label
    return deps | {eq + (SHAPE,)} if eq is not None else deps


def item_label(iterable: tuple, item: Any, registry: "Registry", pc: frozenset) -> tuple:
    """The label of a loop item: the context's container it is (found by identity), else an
    item of the iterable's path; chosen by the iterable's shape and the loop's ``pc``."""
    eq, deps = iterable
    choice = deps | pc
    if eq is not None:
        choice = choice | {eq + (SHAPE,)}
    found = registry.find(item, eq)
    if found is not None:
        if type(found) is tuple:
            return (found, choice)
        return (None, choice | found)  # one object at several paths
    if eq is not None:
        return (eq + (WILD,), choice)
    return (None, choice)


class Registry:
    """``id(container) -> path`` for the lists, tuples and dicts of the context (a frozenset
    of paths for one object reached at several), built per top-level name when first asked."""

    __slots__ = ("context", "paths", "roots")

    def __init__(self, context: dict) -> None:
        self.context = context
        self.paths: dict = {}
        self.roots: set = set()

    def find(self, item: Any, near: Optional[tuple]) -> Any:
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
        else:  # an item of a computed list: it may come from anywhere
            for name in list(self.context):
                if type(name) is str and name not in self.roots:
                    self.add(name)
        return self.paths.get(id(item))

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
    segments = Segments()
    segments.context = context
    append = segments.append
    cache: dict = {}
    for text, entry in zip(out, org):
        if not text:
            continue
        origin = cache.get(entry)
        if origin is None:
            origin = cache[entry] = _origin(sites, *entry)
        append(Segment(text, origin))
    return segments


def _origin(sites: tuple, site: int, label: Optional[tuple], pc: frozenset) -> Origin:
    line, kind, ops = sites[site]
    paths = flat(label) if label is not None else NODEPS
    if kind == DATA and not paths:
        kind = COMPUTED
    source = label[0] if label is not None else None
    return Origin(kind, line, paths, ops, pc, source)


class Segments(list):
    """A render's segments; ``context`` is the context rendered (``assistant_spans`` reads
    the messages' roles from it)."""

    context: Any = None


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


def slice_of(label: tuple) -> tuple:
    """``value[a:b]``: a list made of items of the value's path."""
    eq = label[0]
    if eq is None:
        return label
    return (eq + (WILD,), label[1])


def capture_label(org: list, pc: frozenset) -> tuple:
    """The label of a captured block's text (``{% set x %}...``, a filter block): everything
    its outputs depend on and every decision that shaped it."""
    deps = set(pc)
    for _, label, inner in org:
        if label is not None:
            deps.update(flat(label))
        deps.update(inner)
    return (None, frozenset(deps)) if deps else EMPTY


def conversation_segments(render_segments: Any, source: str, messages: Any, **options: Any) -> Any:
    """transformers' ``render_jinja_template`` input handling around a segment render (the
    ``hf`` profile's ``render_conversation(..., segments=True)``): the segments of exactly its
    prompt (cut as ``continue_final_message`` cuts it), with ``return_assistant_tokens_mask``
    ``(segments, spans)``."""
    from .jinja.hf import render_conversation

    box: list = []

    def render(context: dict) -> str:
        box.append(render_segments(context))
        return text_of(box[-1])

    result = render_conversation(render, source, messages, **options)
    text, spans = result if isinstance(result, tuple) else (result, None)
    segments = cut(box[-1], len(text))
    return segments if spans is None else (segments, spans)


def flat_of(*labels: tuple) -> frozenset:
    """Every path some of the labels names (``flat`` of their join)."""
    if len(labels) == 1:
        eq, deps = labels[0]
        return deps | {eq} if eq is not None else deps
    out = set()
    for eq, deps in labels:
        if eq is not None:
            out.add(eq)
        out.update(deps)
    return frozenset(out)
