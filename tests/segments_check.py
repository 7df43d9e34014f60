"""The three properties of segment renders, as functions the tests share.

(1) ``check_concatenation``: the segments' texts join to exactly ``render``'s text, and a
    render that fails makes the segment render fail with the same exception and message.
(2) ``check_template_literals``: a ``TEMPLATE`` segment's text is literal text of the
    template: a piece of its source (after whitespace control) or of a string literal.
(3) ``check_metamorphic``: replacing the value at a data path with a fresh marker changes
    no segment that neither names that path (``origin.names``) nor was emitted under a
    decision that depends on it (``origin.decided_by``): the other segments, in order, have
    the same texts and origins.
"""

from __future__ import annotations

import copy
import random
import re
from functools import lru_cache
from typing import Any, Callable, Iterator

from tmpl2py.compiler import ir
from tmpl2py.compiler.api import parse
from tmpl2py.compiler.emit import emit
from tmpl2py.compiler.emit_segments import generate_segments
from tmpl2py.compiler.passes import pipeline
from tmpl2py.runtime.go import ollama
from tmpl2py.runtime.segments import TEMPLATE

MARKER = "\ue000marker{}\ue001"

#: an object's address in its repr (a bound method printed): a new object each render, so
#: two renders can only agree up to it (as tests/property/differential.py masks it)
_ADDRESS = re.compile(r" at 0x[0-9a-f]+", re.IGNORECASE)


def mask(text: Any) -> Any:
    return _ADDRESS.sub(" at 0x?", text) if isinstance(text, str) else text


@lru_cache(maxsize=256)
def compiled(source: str, dialect: str = "jinja", profile: str = "hf") -> tuple:
    """(render, render_segments, literal pieces, metadata) of a template, parsed once and
    without black (cheap); ``metadata``: the module constants the lowering made (Go's
    ``GO_MODE``, ...)."""
    parsed = parse(source, dialect, "<t>", profile)
    module = pipeline.run(parsed, profile=profile)
    plain: dict = {}
    exec(compile(emit(pipeline.before_emit(module), "", {}), "<plain>", "exec"), plain)
    segments: dict = {}
    text = generate_segments(source, dialect, profile, "<t>", final=module)
    exec(compile(text, "<segments>", "exec"), segments)
    segments["_PLAIN"] = plain["render"]
    metadata = dict(module.meta)
    return plain["render"], segments["render_segments"], literal_pieces(parsed), metadata


def outcome(fn: Callable, context: dict) -> tuple[str, Any]:
    """``fn(a copy of context)``'s result or error; the ``random`` filter's generator seeded
    first (renders are compared: each draws the same items)."""
    random.seed(1234)
    try:
        return "ok", fn(copy.deepcopy(context))
    except RecursionError:
        return "recursion", None
    except Exception as e:  # noqa: BLE001 (the outcome compared: any exception, by type and text)
        return "error", (type(e).__name__, str(e))


def check_concatenation(render: Callable, render_segments: Callable, context: dict) -> Any:
    """Property (1); returns the segments (None when the render fails)."""
    kind, plain = outcome(render, context)
    skind, segs = outcome(render_segments, context)
    if kind == "recursion" or skind == "recursion":
        return None
    assert kind == skind, (plain, segs)
    if kind == "error":
        assert (plain[0], mask(plain[1])) == (segs[0], mask(segs[1]))
        return None
    text = "".join(s.text for s in segs)
    assert mask(text) == mask(plain), (text, plain)
    return segs


def literal_pieces(module: ir.Module) -> list[str]:
    """The string constants and text runs of the template's IR (before any pass)."""
    out = []
    for n in ir.walk(module.body):
        if isinstance(n, ir.Const) and type(n.value) is str:
            out.append(n.value)
        elif isinstance(n, ir.Text):
            out.append(n.text)
    return out


def is_literal(text: str, source: str, pieces: list[str]) -> bool:
    """Whether ``text`` is made of pieces of the source and of string literals."""
    if text in source or any(text in p for p in pieces):
        return True
    sources = [source] + pieces
    reach = [False] * (len(text) + 1)
    reach[0] = True
    for i in range(len(text)):
        if not reach[i]:
            continue
        for j in range(len(text), i, -1):
            if reach[j]:
                continue
            if any(text[i:j] in s for s in sources):
                reach[j] = True
    return reach[-1]


def check_template_literals(segments: list, source: str, pieces: list) -> None:
    """Property (2)."""
    for seg in segments:
        if seg.origin.kind != TEMPLATE:
            continue
        if seg.text in source:
            continue
        assert is_literal(seg.text, source, pieces), (seg, source)


def _fields(value: Any) -> list:
    """A Go struct's fields (Ollama's view types; ``runtime.segments.GoRegistry`` walks the
    same ones: not a struct made on demand)."""
    fields = getattr(type(value), "go_fields", None)
    if not fields or hasattr(type(value), "__getattr__"):
        return []
    return [(f[0], getattr(value, f[0])) for f in fields]


def leaves(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """The data paths of a context's scalars (strings, numbers, booleans), below maps,
    lists and Go structs (their field names); of a legacy mode's last turn, its data's."""
    if isinstance(value, ollama.CutRun):
        yield from leaves(value.data, path)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, path + (k,))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from leaves(v, path + (i,))
    elif path and (isinstance(value, (str, bool)) or type(value) is int):
        yield path, value
    else:
        for k, v in _fields(value):
            yield from leaves(v, path + (k,))


def replaced(context: Any, path: tuple, value: Any) -> Any:
    if isinstance(context, ollama.CutRun):
        return ollama.CutRun(replaced(context.data, path, value))
    out = copy.deepcopy(context)
    obj = out
    for key in path[:-1]:
        obj = obj[key] if isinstance(obj, (dict, list, tuple)) else getattr(obj, key)
    if isinstance(obj, tuple):  # rebuild the tuple above it
        return replaced(context, path[:-1], obj[: path[-1]] + (value,) + obj[path[-1] + 1 :])
    if isinstance(obj, (dict, list)):
        obj[path[-1]] = value
    else:
        setattr(obj, path[-1], value)
    return out


def fresh(value: Any, n: int = 0) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    return MARKER.format(n)


def unaffected(segments: list, path: tuple) -> list:
    return [
        (mask(s.text), s.origin)
        for s in segments
        if not s.origin.names(path) and not s.origin.decided_by(path)
    ]


def check_metamorphic(
    render_segments: Callable, context: dict, segments: list, path: tuple, value: Any
) -> bool:
    """Property (3) for one path; False when the changed render fails (not compared)."""
    kind, changed = outcome(render_segments, replaced(context, path, value))
    if kind != "ok":
        return False
    before, after = unaffected(segments, path), unaffected(changed, path)
    if before != after:
        for i, (a, b) in enumerate(zip(before + [None], after + [None])):
            if a != b:
                raise AssertionError(f"path {path}: segment {i} differs: {a!r} != {b!r}")
    return True


def go_datas(render: Callable, metadata: dict, request: dict, now: str = "2024-07-26") -> list:
    """The data Ollama's ``Template.Execute`` renders for ``request`` (runtime/go/ollama's
    own shaping): the messages mode's one, or the legacy mode's turns (the last a
    ``CutRun``), as far as the renders got."""
    seen: list = []

    def capture(data: Any) -> str:
        seen.append(copy.deepcopy(data))
        return render(data)

    entry = ollama.conversation_entry({**metadata, "render": capture})
    try:
        entry(request.get("messages"), tools=request.get("tools"), think=request.get("think"),
              now=now)
    except Exception:  # noqa: BLE001 (a request or render error: the data seen so far)
        pass
    return seen


def check_all(render: Callable, render_segments: Callable, pieces: list, source: str,
              context: Any, paths: Callable[[list], list]) -> None:
    """(1), (2), and (3) on the leaves ``paths(all leaves)`` chooses."""
    segments = check_concatenation(render, render_segments, context)
    if segments is None:
        return
    check_template_literals(segments, source, pieces)
    for n, (path, value) in enumerate(paths(list(leaves(context)))):
        check_metamorphic(render_segments, context, segments, path, fresh(value, n))
