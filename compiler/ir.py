"""The intermediate representation shared by both dialects; long because it holds every node
class and ``node``, which gives them their dataclass methods cheaply.

A small tree of frozen, slotted dataclasses. Statements produce output or change
variables; expressions compute values. Dialect semantics are not encoded here:
the frontends lower dialect operations to ``Helper(name, args)`` calls, which the
emitter turns into calls of ``runtime`` functions named in ``compiler.registry``.

Every node carries a ``span`` (line, column) that does not take part in equality,
so passes can compare trees structurally.

Names: ``Name.ident`` is the Python identifier a variable lives in. Frontends
leave it empty; the scope pass (``compiler.passes.scope``) fills it in.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import field
from itertools import compress
from operator import attrgetter, is_not
from typing import Any, Callable, Iterator, List, Optional, Tuple

Span = Tuple[int, int]
NOSPAN: Span = (0, 0)


def _span() -> Any:
    return field(default=NOSPAN, compare=False, repr=False)


class Node:
    __slots__ = ()


# ----------------------------------------------------------------------------- node classes

#: the classes ``node`` made, whose methods ``_build_methods`` has yet to write
_PENDING: list = []

#: ``__dataclass_params__`` of a frozen dataclass (``@dataclass`` subclasses of a node read it)
_FROZEN_PARAMS = dataclasses.dataclass(frozen=True)(type("Frozen", (), {})).__dataclass_params__  # type: ignore[attr-defined]


def node(cls: type) -> type:
    """``@dataclass(frozen=True, slots=True)`` for the IR's classes, at a fraction of its import
    cost (dataclasses runs six ``exec``s, an ``inspect.signature`` and a class rebuild per
    class; this module has ~35): the class is rebuilt once with ``__slots__``, and the
    methods of every class are written by one ``exec`` (``_build_methods``, at the end of the
    module). What it makes behaves as the dataclass would: ``__init__`` (positional or by
    keyword, with the defaults), frozen (``FrozenInstanceError``), ``__eq__`` / ``__hash__``
    over the fields with ``compare``, ``__repr__`` over those with ``repr``, ``__match_args__``
    and ``__dataclass_fields__`` (so ``dataclasses.replace`` and ``fields`` work)."""
    own = cls.__dict__
    fields: dict = {}
    for name, annotation in own.get("__annotations__", {}).items():
        default = own.get(name, dataclasses.MISSING)
        f = default if isinstance(default, dataclasses.Field) else field(default=default)
        f.name, f.type, f.kw_only = name, annotation, False  # as dataclass resolves them
        f._field_type = dataclasses._FIELD  # type: ignore[attr-defined] # what fields() lists
        fields[name] = f
    body = {k: v for k, v in own.items() if k not in fields and k not in ("__dict__", "__weakref__")}
    body["__slots__"] = tuple(fields)
    body["__dataclass_fields__"] = fields
    body["__dataclass_params__"] = _FROZEN_PARAMS
    body["__match_args__"] = tuple(fields)
    new = type(cls)(cls.__name__, cls.__bases__, body)
    new.__qualname__ = cls.__qualname__
    _PENDING.append(new)
    return new


def replace(node: Any, /, **changes: Any) -> Any:
    """``dataclasses.replace(node, **changes)`` for an IR node, at half its cost: the class's
    own ``__replace__`` (``methods_source``: each field by position, the given or the kept)."""
    return node.__replace__(**changes)


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list:
    """Pickling and copying (a frozen slotted dataclass's ``__getstate__``)."""
    return [getattr(self, f) for f in self.__slots__]


def _setstate(self: Any, state: list) -> None:
    for f, value in zip(self.__slots__, state):
        object.__setattr__(self, f, value)


def methods_source(classes: list) -> str:
    """The source of ``__init__``, ``__eq__``, ``__hash__``, ``__repr__``, ``__replace__`` and
    the ``map_children`` mapper of each class (``init3``, ``eq3``, ... for ``classes[3]``),
    made from the classes' own field names and literal defaults (this module's text, never a
    template's). The functions read ``C3`` (the class), ``KINDS`` and ``_set`` as globals;
    ``_KEEP``, the default of each parameter of a ``__replace__`` (the field keeps its value),
    is the source's own."""
    lines: list = ["_KEEP = object()"]
    for i, cls in enumerate(classes):
        fields = cls.__dataclass_fields__
        params = []
        for name, f in fields.items():
            if f.default is dataclasses.MISSING:
                params.append(name)
            else:
                assert type(f.default) in (str, int, bool, tuple, type(None)), (cls, name)
                params.append(f"{name}={f.default!r}")
        lines.append(f"def init{i}(self, {', '.join(params)}):")
        lines += [f"    _set(self, {name!r}, {name})" for name in fields] or ["    pass"]
        compared = [name for name, f in fields.items() if f.compare]
        mine = "".join(f"self.{n}, " for n in compared)
        theirs = "".join(f"other.{n}, " for n in compared)
        lines.append(f"def eq{i}(self, other):")
        lines.append("    if other.__class__ is self.__class__:")
        lines.append(f"        return ({mine}) == ({theirs})")
        lines.append("    return NotImplemented")
        lines.append(f"def hash{i}(self):")
        lines.append(f"    return hash(({mine}))")
        shown = ", ".join(f"{n}={{self.{n}!r}}" for n, f in fields.items() if f.repr)
        lines.append(f"def repr{i}(self):")
        lines.append(f"    return f'{{self.__class__.__qualname__}}({shown})'")
        kept = "".join(f", {n}=_KEEP" for n in fields)
        lines.append(f"def replace{i}(self{kept}):")
        given = ", ".join(f"self.{n} if {n} is _KEEP else {n}" for n in fields)
        lines.append(f"    return C{i}({given})")
        lines += mapper_lines(cls, f"mapper{i}", f"C{i}")
    return "\n".join(lines) + "\n"


def mapper_lines(cls: type, name: str, cls_name: str) -> list:
    """The source of ``map_children`` for one node class, as function ``name`` building
    ``cls_name`` again: each child field read, ``fn`` applied to the sub-nodes and tuples,
    the node rebuilt (every field by keyword) only when one changed."""
    child = _child_fields(cls)
    lines = [f"def {name}(node, fn):"]
    for f in child:
        lines.append(f"    o_{f} = node.{f}")
        lines.append(f"    n_{f} = fn(o_{f}) if isinstance(o_{f}, KINDS) else o_{f}")
    unchanged = " and ".join(f"n_{f} is o_{f}" for f in child) or "True"
    lines.append(f"    if {unchanged}:")
    lines.append("        return node")
    rebuilt = ", ".join(
        f"{f}=n_{f}" if f in child else f"{f}=node.{f}" for f in cls.__dataclass_fields__
    )
    lines.append(f"    return {cls_name}({rebuilt})")
    return lines


def methods_key(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def methods_module() -> str:
    """The text of ``ir_methods.py``: ``methods_source`` of ``NODE_CLASSES`` and its key."""
    source = methods_source(list(NODE_CLASSES))
    return (
        '"""The IR classes\' methods (``ir.methods_source``); long because it is generated,\n'
        "ahead of time, so that Python's bytecode cache keeps it compiled. Do not edit; regenerate with\n"
        '``TMPL2PY_UPDATE_TABLES=1 pytest tests/unit/test_ir_methods.py``."""\n'
        "# fmt: off\n"
        "# flake8: noqa\n\n"
        f"METHODS_SHA256 = {methods_key(source)!r}\n\n\n" + source
    )


def _build_methods() -> None:
    """Give every pending class its methods: from ``ir_methods`` (the same source, written
    ahead of time so Python's bytecode cache keeps it compiled) when its key matches, else
    (this module edited since) from the source compiled now. Regenerate ``ir_methods.py``
    with ``TMPL2PY_UPDATE_TABLES=1 pytest tests/unit/test_ir_methods.py``."""
    from . import ir_methods

    source = methods_source(_PENDING)
    if getattr(ir_methods, "METHODS_SHA256", None) == methods_key(source):
        namespace = vars(ir_methods)
    else:
        namespace = {}
        exec(compile(source, __name__ + ".methods_source", "exec"), namespace)  # noqa: S102
    namespace.update({f"C{i}": cls for i, cls in enumerate(_PENDING)})
    namespace.update(KINDS=(Node, tuple), _set=object.__setattr__)
    methods = ("init", "__init__"), ("eq", "__eq__"), ("hash", "__hash__"), ("repr", "__repr__"), ("replace", "__replace__")
    for i, cls in enumerate(_PENDING):
        for method, name in methods:
            fn = namespace[f"{method}{i}"]
            fn.__name__, fn.__qualname__ = name, f"{cls.__qualname__}.{name}"
            setattr(cls, name, fn)
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
        cls.__getstate__, cls.__setstate__ = _getstate, _setstate
        _MAPPERS[cls] = namespace[f"mapper{i}"]
    _PENDING.clear()


# ----------------------------------------------------------------------------- expressions


class Expr(Node):
    __slots__ = ()


@node
class Const(Expr):
    """A Python constant: str, int, float, bool or None (tuples of constants too)."""

    value: Any
    span: Span = _span()


@node
class Name(Expr):
    """A variable read. ``ident`` is filled in by the scope pass; ``kind`` is ``"str"`` where
    the read is known to give a string (``passes/str_locals.py``)."""

    name: str
    ident: str = ""
    span: Span = _span()
    kind: str = ""


@node
class Local(Expr):
    """A read of a compiler-made local (loop objects, temporaries): never a template name."""

    ident: str
    span: Span = _span()




@node
class Starred(Expr):
    """``*value`` as the last positional argument of a call (``Helper``, ``CallValue``): its
    items are passed as further positional arguments. Only ever an argument, never a value."""

    value: Expr
    span: Span = _span()


@node
class Helper(Expr):
    """A call of a runtime primitive, ``runtime.<module>.<function>``, named ``module.function``.

    ``args`` may end with a ``Starred``; ``kwargs`` may end with ``(None, mapping)``, which
    passes the mapping's items as further keyword arguments (Python's ``**mapping``)."""

    name: str
    args: Tuple[Expr, ...] = ()
    kwargs: Tuple[Tuple[Optional[str], Expr], ...] = ()
    span: Span = _span()


@node
class ContextGet(Expr):
    """A template's start value read from the render's context (``context.get(name,
    default)``): the context's item, else the environment's global of that name, else one
    undefined value that every render shares for it (``jinja.resolve_top``'s answer)."""

    name: str
    span: Span = _span()


@node
class Hoisted(Expr):
    """``value`` (a helper call with constant arguments) evaluated once, when the module is
    imported: every evaluation shares that one value (only where nobody can tell)."""

    value: Expr
    span: Span = _span()


@node
class Ref(Expr):
    """A runtime value itself, named like a ``Helper`` but not called (a class for
    ``isinstance``)."""

    name: str
    span: Span = _span()


@node
class BinOp(Expr):
    """A Python binary operator applied directly: ``+ - * / // % **``."""

    op: str
    left: Expr
    right: Expr
    span: Span = _span()


@node
class UnaryOp(Expr):
    """``-x`` / ``+x`` applied directly."""

    op: str
    operand: Expr
    span: Span = _span()


@node
class Compare(Expr):
    """A (chained) Python comparison: ``==, !=, <, <=, >, >=, in, not in, is, is not``."""

    left: Expr
    ops: Tuple[Tuple[str, Expr], ...]
    span: Span = _span()


@node
class BoolOp(Expr):
    """Python's ``and`` / ``or``: short-circuit, returns an operand."""

    op: str
    values: Tuple[Expr, ...]
    span: Span = _span()


@node
class Not(Expr):
    operand: Expr
    span: Span = _span()


@node
class CondExpr(Expr):
    """``body if test else orelse``; ``orelse`` None means the dialect's default (a Helper)."""

    test: Expr
    body: Expr
    orelse: Expr
    span: Span = _span()


@node
class ListLit(Expr):
    items: Tuple[Expr, ...]
    span: Span = _span()


@node
class TupleLit(Expr):
    items: Tuple[Expr, ...]
    span: Span = _span()


@node
class DictLit(Expr):
    items: Tuple[Tuple[Expr, Expr], ...]
    span: Span = _span()


@node
class CallValue(Expr):
    """Call a compiled function value (macro or closure) directly: ``func(*args, **kwargs)``
    (``Starred`` / ``(None, mapping)`` arguments as in ``Helper``)."""

    func: Expr
    args: Tuple[Expr, ...] = ()
    kwargs: Tuple[Tuple[Optional[str], Expr], ...] = ()
    span: Span = _span()


@node
class CallFunc(Expr):
    """Call the raw function of the ``FuncDef`` bound to ``ident`` with every parameter by
    position (a pass proved the binding and the argument count); evaluates to a ``str``."""

    ident: str
    args: Tuple[Expr, ...] = ()
    span: Span = _span()


@node
class DictLookup(Expr):
    """A lookup specialised for ``obj`` being exactly a ``dict`` (``fallback``, the general
    lookup, handles every other value and gives the same result for such a dict). ``obj`` is
    evaluated more than once, so it must be a plain variable read. ``mode``:

    - ``item``: the value, ``obj[key] if type(obj) is dict and key in obj else fallback``;
    - ``truth``: only the value's truth is used, ``obj.get(key) if ... else fallback``;
    - ``defined``: whether the value is defined (``fallback`` is that test on the general
      lookup), ``key in obj and not isinstance(obj[key], Undefined) if ... else fallback``.

    Kept values (the ``cse`` pass): ``flag`` names a local keeping ``type(obj) is dict``,
    which this read sets (``sets_flag``, a number naming the read) or reads in place of the
    test; ``cache`` names a local keeping the value, set by this read (``(cache := obj[key])
    if <dict test> and key in obj else (cache := fallback)``; in ``truth`` mode ``(cache :=
    obj.get(key)) if <dict test> else (cache := fallback)``; not in ``defined`` mode) or,
    when ``again``, read: ``cache if flag else fallback`` (``defined``: whether ``cache`` is
    defined).

    ``bind``: for a lookup on an expression (``tool.function.name``), the expression; ``obj``
    is then a compiler ``Local`` that the dict test binds to it (``type(obj := bind) is
    dict``), so it is evaluated once; ``fallback`` reads the same local.
    """

    obj: Expr
    key: Expr
    mode: str
    fallback: Expr
    span: Span = _span()
    cache: str = ""
    flag: str = ""
    sets_flag: int = 0
    again: bool = False
    bind: Optional[Expr] = None


@node
class LoopAttr(Expr):
    """A plain Python attribute read (``loop.last`` of the loop object a ``For`` made; the Go
    lowering's guarded reads of Ollama's view fields, ``.Role``), no sandbox in between."""

    loop: Expr
    attr: str
    span: Span = _span()


#: the fields of a Jinja loop object that are numbers or truths (they depend only on the
#: iterable's length; ``first`` and ``last`` are the truths)
LOOP_SCALAR_ATTRS = frozenset(
    {"index", "index0", "revindex", "revindex0", "first", "last", "length", "depth", "depth0"}
)


@node
class Bind(Expr):
    """``value``, kept in the compiler local ``temp`` as it is computed (Python's ``temp :=
    value``), for an expression that reads it again through ``Local(temp)`` later in its
    own evaluation order (a type-directed fast path: ``temp.strip() if type(Bind) is str
    else do_trim(temp)``). Each ``temp`` is bound by one ``Bind`` in the module."""

    temp: str
    value: Expr
    span: Span = _span()


@node
class Format(Expr):
    """A ``str`` made of ``parts`` in order, at once (Python's f-string): a string ``Const``
    is its text, any other part a variable read known to hold exactly a ``str`` there
    (``passes/fstrings.py``), written as it is."""

    parts: Tuple[Expr, ...]
    span: Span = _span()


@node
class Capture(Expr):
    """Render ``body`` into a fresh buffer and evaluate to the joined string."""

    body: Tuple["Stmt", ...]
    span: Span = _span()


# ----------------------------------------------------------------------------- statements


class Stmt(Node):
    __slots__ = ()


@node
class Text(Stmt):
    """Literal output text (whitespace control already applied)."""

    text: str
    span: Span = _span()


@node
class Output(Stmt):
    """Append the value of ``expr``, which must evaluate to a ``str``."""

    expr: Expr
    span: Span = _span()


@node
class If(Stmt):
    test: Expr
    body: Tuple[Stmt, ...]
    orelse: Tuple[Stmt, ...] = ()
    span: Span = _span()


@node
class Target(Node):
    """An assignment target: a name, or a tuple of targets (unpacking)."""

    names: Tuple[Any, ...]  # each item a Name or a nested Target
    span: Span = _span()


@node
class Assign(Stmt):
    """``target = value``. ``target`` is a Name or a Target (tuple unpacking)."""

    target: Any
    value: Expr
    span: Span = _span()


@node
class ExprStmt(Stmt):
    """Evaluate ``expr`` for its effect (raises, attribute stores through helpers)."""

    expr: Expr
    span: Span = _span()


@node
class For(Stmt):
    """A loop over ``iter``.

    ``loop`` names the local that holds the loop-info object when the body reads it
    (``""`` otherwise); ``loop_helper`` is the runtime helper that builds it and
    ``iter_helper`` the one that prepares the iterable (dialect semantics).
    ``else_`` runs when the body ran zero times. ``recursive`` loops compile to a
    local function that the body can call through the loop object.
    """

    target: Any
    iter: Expr
    body: Tuple[Stmt, ...]
    else_: Tuple[Stmt, ...] = ()
    filter: Optional[Expr] = None
    loop: str = ""
    loop_helper: str = ""
    recursive: bool = False
    # jinja2 counts an iteration only once its body completes (break/continue do not mark it);
    # Go runs ``else`` only when there was no item at all.
    else_counts_completed: bool = False
    # a local that counts iterations from 0 (``enumerate``), when the body only needs that
    # and not the loop object
    counter: str = ""
    # with ``counter`` and ``loop``: a local holding the last index when the iterable is a
    # list or tuple (``loop.last`` is then a comparison), else None (the loop object answers)
    last: str = ""
    span: Span = _span()


@node
class Break(Stmt):
    span: Span = _span()


@node
class Continue(Stmt):
    span: Span = _span()


@node
class Param(Node):
    name: Name
    default: Optional[Expr] = None


@node
class FuncDef(Stmt):
    """Define a local function (a Jinja macro or call-block caller, a Go template).

    The function takes ``params`` positionally (absent ones arrive as the runtime's
    MISSING and are replaced by their default, or by ``missing_helper(name)``), renders
    ``body`` into its own buffer and returns the joined string. ``ident`` is the
    local the function is bound to; ``wrap`` (a helper name, may be empty) wraps the
    raw function into the value templates see (argument binding rules).
    """

    ident: str
    name: str
    params: Tuple[Param, ...]
    body: Tuple[Stmt, ...]
    wrap: str = ""
    wrap_args: Tuple[Expr, ...] = ()
    missing_helper: str = ""
    prologue: Tuple[Stmt, ...] = ()  # runs before defaults are filled in
    implicit: int = 0  # the last ``implicit`` params are always passed (never MISSING)
    bind: bool = True  # False when every use calls the raw function (``CallFunc``) directly
    # True when every such call's result is output at once: the function then takes the
    # caller's writer as its first argument and appends to it (no buffer of its own)
    into: bool = False
    span: Span = _span()


@node
class Return(Stmt):
    value: Expr
    span: Span = _span()


@node
class Scoped(Stmt):
    """A block with its own variable scope but no function boundary (entry loads only).

    ``bindings`` (Jinja's ``{% with a = x %}``): assignments whose values are read in the
    enclosing scope and whose targets are names of the new scope, made before ``body``."""

    body: Tuple[Stmt, ...]
    span: Span = _span()
    bindings: Tuple["Assign", ...] = ()


@node
class Module(Node):
    """A whole template: the entry function's body plus metadata."""

    body: Tuple[Stmt, ...]
    dialect: str
    profile: str
    meta: Tuple[Tuple[str, Any], ...] = ()


# ----------------------------------------------------------------------------- traversal


#: annotations of fields that hold a plain value, never a node or a tuple: no traversal looks
#: at them (every node class's ``str`` / ``int`` / ``bool`` fields: names, modes, flags)
_SCALAR_ANNOTATIONS = frozenset({"str", "int", "bool"})


class _FieldTable(dict):
    """class -> its child fields, filled on first use (``dict.__getitem__`` otherwise)."""

    def __missing__(self, cls: type) -> Tuple[str, ...]:
        fields = self[cls] = tuple(
            name
            for name, f in cls.__dataclass_fields__.items()
            if name != "span" and f.type not in _SCALAR_ANNOTATIONS
        )
        return fields


_CHILD_FIELDS = _FieldTable()

#: ``_child_fields(cls)``: the fields of ``cls`` that may hold a sub-node or a tuple, all but
#: the span and those annotated ``str``, ``int`` or ``bool``, in field order
_child_fields = _CHILD_FIELDS.__getitem__

child_fields = _child_fields  # public: the passes that pick fields by name


def children(node: Any) -> Iterator[Tuple[str, Any]]:
    """(field, value) of each child field of ``node`` (sub-nodes and tuples; spans excluded)."""
    for f in _child_fields(type(node)):
        value = getattr(node, f)
        if isinstance(value, (Node, tuple)):
            yield f, value


def map_children(node: Any, fn: Callable[[Any], Any]) -> Any:
    """``node`` with ``fn`` applied to each child (each item of a tuple); the same object when
    nothing changed. Every pass rebuilds trees through here, so each node class gets its own
    mapper, written once (``_mapper``): no field loop, no ``dataclasses.replace``."""
    if type(node) is tuple:
        return _map_tuple(node, fn)
    mapper = _MAPPERS.get(type(node))
    if mapper is None:
        mapper = _mapper(type(node))
    return mapper(node, fn)


def _map_tuple(node: tuple, fn: Callable[[Any], Any]) -> tuple:
    if not node:
        return node
    items = [fn(n) for n in node]
    if any(map(is_not, items, node)):
        return tuple(items)
    return node


def _unchanged(node: Any, fn: Callable[[Any], Any]) -> Any:
    return node


_MAPPERS: dict = {}


def _mapper(cls: type) -> Callable[[Any, Callable[[Any], Any]], Any]:
    """``map_children`` for one class: for a node class, a function reading each child field,
    applying ``fn`` to the sub-nodes and tuples, and building the node again only when one
    changed (every field by keyword, as ``dataclasses.replace`` does); tuples map their
    items; any other value is its own result. The source is made from the class's own field
    names (identifiers of this module), never from template text."""
    if issubclass(cls, tuple):
        return _MAPPERS.setdefault(cls, _map_tuple)
    if not (issubclass(cls, Node) and hasattr(cls, "__dataclass_fields__")):
        return _MAPPERS.setdefault(cls, _unchanged)
    lines = mapper_lines(cls, "mapper", "cls")
    namespace: dict = {"KINDS": (Node, tuple), "cls": cls}
    exec("\n".join(lines), namespace)  # noqa: S102 - our own field names only
    return _MAPPERS.setdefault(cls, namespace["mapper"])


def literal_of(node: Any, leaf: Callable[[Any], bool]) -> bool:
    """``leaf(node)``, or ``node`` is a list, tuple or dict literal whose items (keys and
    values) all are, recursively: a value of literals of such leaves."""
    if isinstance(node, (ListLit, TupleLit)):
        return all(literal_of(item, leaf) for item in node.items)
    if isinstance(node, DictLit):
        return all(literal_of(k, leaf) and literal_of(v, leaf) for k, v in node.items)
    return leaf(node)


def walk(node: Any, stop: Optional[Callable[[Any], bool]] = None) -> List[Any]:
    """Every node under ``node`` (itself included), parents before children, children in
    field order (an explicit stack: templates nest deeper than Python's recursion likes). A
    node for which ``stop(node)`` is true is listed but its children are not (a scope
    boundary). A list made at once, each value dispatched on its class by one dict lookup:
    passes walk whole modules a few dozen times a compile, and a generator's resumption and
    two ``isinstance`` per value cost as much as the rest of the walk.

    A whole walk (no ``stop``) of a large tree is remembered (:data:`_WALKS`): the nodes are
    frozen, so a tree's walk never changes, and the passes and the emitter walk the same
    module again where the one before them changed nothing (a quarter of the nodes a compile
    walks). So is each statement's own walk (:data:`_STMT_WALKS`): a pass rebuilds only the
    statements over what it changed, so the next walk of the module copies the walks of the
    statements it left as they were (half the nodes of the other walks) and walks the rest.
    The list is shared: callers read it, never change it."""
    if stop is not None:
        return _walk_until(node, stop)
    known = _WALKS.get(id(node))
    if known is not None and known[0] is node:
        return known[1]
    found: List[Any] = []
    add, copy = found.append, found.extend
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    pushers, stmts = _PUSHERS, _STMT_WALKS
    while stack:
        n = pop()
        kind, get = pushers.get(n.__class__) or _pusher(n.__class__)
        if kind is _MANY:
            add(n)
            extend(get(n))
        elif kind is _SEQ:
            extend(reversed(n))
        elif kind is _ONE:
            add(n)
            push(get(n))
        elif kind is _LEAF:
            add(n)
        elif kind is _PLAIN:
            pass
        elif kind is _END:  # the end of a statement's nodes: remember them
            stmts[id(n.stmt)] = (n.stmt, found, n.start, len(found))
        else:  # a statement with children (``_STMT_ONE`` / ``_STMT_MANY``)
            known = stmts.get(id(n))
            if known is not None and known[0] is n:
                copy(known[1][known[2] : known[3]])
                continue
            push(_End(n, len(found)))
            add(n)
            if kind is _STMT_MANY:
                extend(get(n))
            else:
                push(get(n))
    if len(found) >= _WALK_KEPT_FROM:
        if len(_WALKS) >= _WALKS_KEPT:
            _WALKS.clear()  # one C call: threads compiling at once share the table
        _WALKS[id(node)] = (node, found)
    if len(stmts) >= _STMT_WALKS_KEPT:
        stmts.clear()
    return found


def of_classes(nodes: List[Any], classes: frozenset) -> Iterator[Any]:
    """The nodes of ``nodes`` (a walk) whose class is one of ``classes``, in order: the class
    test made in C (``itertools.compress``), a fraction of a Python loop's per node, for the
    scans that look at a few kinds of node (IR node classes have no subclasses)."""
    return compress(nodes, map(classes.__contains__, map(type, nodes)))


def _walk_until(node: Any, stop: Callable[[Any], bool]) -> List[Any]:
    """``walk(node, stop)``: nothing remembered (a walk cut at scope boundaries)."""
    found: List[Any] = []
    add = found.append
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    pushers = _PUSHERS
    while stack:
        n = pop()
        kind, get = pushers.get(n.__class__) or _pusher(n.__class__)
        if kind < _ONE:  # a tuple's items are stacked, a plain value dropped
            if kind:
                extend(reversed(n))
            continue
        add(n)
        if stop(n):
            continue
        if kind is _MANY or kind is _STMT_MANY:
            extend(get(n))
        elif kind is _ONE or kind is _STMT_ONE:
            push(get(n))
    return found


class _End:
    """Stacked under a statement's children by ``walk``: when popped, the nodes listed since
    ``start`` are the statement's own walk."""

    __slots__ = ("stmt", "start")

    def __init__(self, stmt: Any, start: int) -> None:
        self.stmt, self.start = stmt, start


#: whole walks of trees of at least ``_WALK_KEPT_FROM`` nodes: id -> (the tree, its walk);
#: the tree is held, so its id stays its own; at most ``_WALKS_KEPT``, cleared at once when
#: full, and by :func:`forget_walks` when a compile ends (no tree outlives its compile)
_WALKS: dict = {}
_WALKS_KEPT = 32
_WALK_KEPT_FROM = 64

#: the walks of the statements (of the classes in :data:`_REMEMBERED`) met in whole walks:
#: id -> (the statement, the whole walk it was met in, its first index there, the index after
#: its last: no copy made); as ``_WALKS``, the statement held; cleared when
#: ``_STMT_WALKS_KEPT`` are kept
_STMT_WALKS: dict = {}
_STMT_WALKS_KEPT = 50_000


def remembered_walk(node: Any) -> Optional[List[Any]]:
    """``walk(node)`` when it is remembered (:data:`_WALKS`), else None (nothing is walked)."""
    known = _WALKS.get(id(node))
    return known[1] if known is not None and known[0] is node else None


def forget_walks() -> None:
    """Drop the remembered walks (a compile's end: the trees they hold are garbage then)."""
    _WALKS.clear()
    _STMT_WALKS.clear()


def has(node: Any, wanted: Callable[[Any], bool]) -> bool:
    """Whether ``wanted(n)`` holds for some node ``n`` of ``walk(node)``: the same order,
    stopping at the first (no list made: ``walk``'s loop, kept apart as it is the compile's
    innermost, where a callback per node would cost as much as the walk). A statement whose
    walk is remembered is scanned in that list."""
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    pushers, stmts = _PUSHERS, _STMT_WALKS
    while stack:
        n = pop()
        kind, get = pushers.get(n.__class__) or _pusher(n.__class__)
        if kind < _ONE:
            if kind:
                extend(reversed(n))
            continue
        if kind > _LEAF:  # a statement with children
            known = stmts.get(id(n))
            if known is not None and known[0] is n:
                if any(map(wanted, known[1][known[2] : known[3]])):
                    return True
                continue
        if wanted(n):
            return True
        if kind is _MANY or kind is _STMT_MANY:
            extend(get(n))
        elif kind is _ONE or kind is _STMT_ONE:
            push(get(n))
    return False


def walk_own(stmt: Any) -> List[Any]:
    """``walk(stmt)`` that lists each statement nested under ``stmt`` but not its children:
    ``stmt``'s own expressions and targets, and its sub-statements as wholes (for tables kept
    per statement, merged from the sub-statements' own)."""
    return walk(stmt, lambda n: n is not stmt and isinstance(n, Stmt))


#: per class, how ``walk`` treats a value of it: ``(kind, getter)``, the kind one of
#: ``_PLAIN`` (neither a node nor a tuple: dropped), ``_SEQ`` (a tuple: its items stacked),
#: ``_ONE`` (a node with one child field: the getter of its value), ``_MANY`` (a node with
#: several: the getter of their values, last first) or ``_LEAF`` (a node without children);
#: ``_STMT_ONE`` and ``_STMT_MANY`` are ``_ONE`` and ``_MANY`` for a statement (whose walk
#: ``walk`` remembers), ``_END`` the marker of a statement's end (:class:`_End`)
_PUSHERS: dict = {}
_PLAIN, _SEQ, _ONE, _MANY, _LEAF, _STMT_ONE, _STMT_MANY, _END = 0, 1, 2, 3, 4, 5, 6, 7


def _pusher(cls: type) -> tuple:
    """``_PUSHERS[cls]``, made on first use."""
    if issubclass(cls, tuple):
        pusher: tuple = (_SEQ, None)
    elif cls is _End:
        pusher = (_END, None)
    elif not issubclass(cls, Node):
        pusher = (_PLAIN, None)
    else:
        fields = _child_fields(cls)[::-1]
        stmt = cls in _REMEMBERED
        if len(fields) > 1:
            pusher = (_STMT_MANY if stmt else _MANY, attrgetter(*fields))
        elif fields:
            pusher = (_STMT_ONE if stmt else _ONE, attrgetter(fields[0]))
        else:
            pusher = (_LEAF, None)
    return _PUSHERS.setdefault(cls, pusher)


#: every class ``node`` made, in the order ``methods_source`` numbers them
NODE_CLASSES: Tuple[type, ...] = tuple(_PENDING)

#: the statements whose own walks ``walk`` remembers (:data:`_STMT_WALKS`): those holding
#: blocks (remembering the simple ones too measured no faster)
_REMEMBERED = frozenset({If, For, FuncDef, Scoped})
_build_methods()

#: The render function's own output list, as a ``Local``: for helpers that need the position
#: of the top-level output (``{% generation %}`` spans). Nested functions (macros, call and
#: recursive-loop bodies) see it too; the emitter defines it only in modules that read it.
TOP_OUTPUT = Local("_top")
