"""Helpers the passes share (public: every pass module imports them by name).

Tree rebuilding (``map_nodes``), what a scope's start value is (``is_init``), what is
known to be a ``str`` (``is_str``), which statements bind a name (``assignments``), whether a
tuple is a block of statements (``is_block``), and what calls code the template does not show
(``calls_foreign_code``). Nothing here rewrites a module by itself.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from .. import ir

#: Helpers whose result is always exactly a ``str`` (never a subclass that prints otherwise).
STR_HELPERS = frozenset(
    {
        "jinja.concat",
        "jinja_filters.do_tojson",
        "jinja_filters.do_trim",
        "jinja_filters.do_upper",
        "jinja_filters.do_lower",
        "jinja_filters.do_replace",
        "jinja_filters.do_join",
        "jinja_filters.do_title",
        "jinja_filters.do_capitalize",
        "jinja_filters.do_string",
        "jinja_filters.do_center",
        "jinja_filters.do_indent",
        "builtins.str",
    }
)

#: Helpers that convert to str for printing (the dialect's print rule) and are identity on str.
TO_STR_HELPERS = frozenset({"jinja.to_str"})


#: the node classes that hold no node: without child fields, and ``Const`` (its value a
#: Python constant): a rewrite returns such a node as it is unless it changes that class
LEAVES = frozenset(cls for cls in ir.NODE_CLASSES if not ir.child_fields(cls)) | {ir.Const}


def is_str(expr: Any) -> bool:
    if isinstance(expr, ir.Const):
        return type(expr.value) is str
    if isinstance(expr, ir.Helper):
        return expr.name in STR_HELPERS or expr.name in TO_STR_HELPERS
    if isinstance(expr, ir.BinOp) and expr.op == "+":
        # str + anything is a str or raises (a str subclass result prints the same)
        return is_str(expr.left) or is_str(expr.right)
    if isinstance(expr, ir.CondExpr):
        return is_str(expr.body) and is_str(expr.orelse)
    if isinstance(expr, (ir.CallFunc, ir.Capture)):  # a macro's / a block's joined buffer
        return True
    if isinstance(expr, ir.Name):  # a variable every reaching assignment gave a str
        return expr.kind == "str"
    return False


def unary_helper(node: Any, names: Any) -> bool:
    """``node`` is a call of a helper named in ``names`` with one positional argument."""
    return isinstance(node, ir.Helper) and node.name in names and len(node.args) == 1 and not node.kwargs


def type_is(value: Any, cls: str, op: str = "is") -> ir.Expr:
    """``type(value) is cls`` (``op``: ``is`` or ``is not``): an exact type test, ``cls`` a
    helper name (``builtins.str``, ``jinja.Undefined``)."""
    return ir.Compare(ir.Helper("builtins.type", (value,)), ((op, ir.Ref(cls)),))


def map_nodes(node: Any, fn: Any, blocks: Any = None, classes: Optional[frozenset] = None) -> Any:
    """Rebuild ``node`` bottom-up, applying ``fn`` to every IR node (``ir.map_children`` at
    each level: a node whose children ``fn`` left alone is passed to ``fn`` itself), and
    ``blocks``, when given, to every block (a tuple of statements) once its statements are.
    ``classes``, when given, holds every class of node ``fn`` may change: the others are only
    rebuilt around their children (``fn`` is not called), and those holding no node
    (``LEAVES``) are returned at once."""
    mappers, tuples, unchanged, mapper_of = ir._MAPPERS, ir._map_tuple, ir._unchanged, ir._mapper
    kept = frozenset() if classes is None else LEAVES - classes

    def go(n: Any) -> Any:
        cls = n.__class__
        if cls is tuple:
            if blocks is None:
                return tuples(n, go)
            new = tuples(n, go)
            return blocks(new) if is_block(new) else new
        if cls in kept:
            return n
        mapper = mappers.get(cls) or mapper_of(cls)
        if mapper is unchanged:  # a plain value (a name, an operator in a tuple)
            return n
        if mapper is tuples:  # a tuple of a subclass: its items, as a tuple's
            new = tuples(n, go)
            return blocks(new) if blocks is not None and is_block(new) else new
        if classes is not None and cls not in classes:
            return mapper(n, go)
        return fn(mapper(n, go))

    return go(node)


def has_node(node: Any, wanted: Any, classes: Optional[frozenset] = None) -> bool:
    """Whether some node at or under ``node`` is ``wanted``: a pass whose rewrite changes only
    such nodes (and leaves every other node whose children it left alone as it is) returns
    the module as it is when none is, without rebuilding the tree.

    ``classes``, when given, holds every class a ``wanted`` node can be of (IR node classes
    have no subclasses): the tree's whole walk is filtered by class in C (``itertools.compress``)
    and ``wanted`` asked of those only; the walk is remembered for the passes after this one
    (``ir.walk``). Without it, a tree whose whole walk is remembered (the pass before changed
    nothing) is scanned in that list, a tenth of a walk's cost; any other is walked, stopping
    at the first."""
    if classes is not None:
        return any(map(wanted, ir.of_classes(ir.walk(node), classes)))
    known = ir.remembered_walk(node)
    if known is not None:
        return any(map(wanted, known))
    return ir.has(node, wanted)


#: Start values a scope gives its names (see passes/scope.py): side-effect free lookups.
INIT_HELPERS = frozenset(
    {
        "jinja.undefined",
        "jinja.resolve",
        "jinja.resolve_top",
        "jinja.resolve_missing",
        "jinja.unset",
    }
)


def is_init(stmt: Any) -> bool:
    return (
        isinstance(stmt, ir.Assign)
        and isinstance(stmt.target, ir.Name)
        and isinstance(stmt.value, ir.Helper)
        and stmt.value.name in INIT_HELPERS
    )


def assignments(module: ir.Module, memo: Optional[dict] = None) -> dict[str, list]:
    """Every statement or construct that binds each ident, anywhere in the module (in walk
    order). ``memo`` keeps each statement's own table across calls (``ns_scalars`` asks again every round).
    """
    out: dict[str, list] = {}
    memo = {} if memo is None else memo
    for stmt in module.body:
        for ident, whys in _binds_under(stmt, memo).items():
            out.setdefault(ident, []).extend(whys)
    return out


def bindings_of(module: ir.Module, ident: str, memo: dict) -> list:
    """``assignments(module, memo).get(ident, [])``, without the table of every other ident."""
    out: list = []
    for stmt in module.body:
        out.extend(_binds_under(stmt, memo).get(ident, ()))
    return out


def _binds_under(stmt: ir.Stmt, memo: dict) -> dict[str, list]:
    """The bindings at or under ``stmt`` by ident, in walk order; each nested statement's
    table memoised (by identity, the memo holding the statement)."""
    hit = memo.get(("binds", id(stmt)))
    if hit is not None:
        return hit[1]
    out: dict[str, list] = {}
    for node in ir.walk_own(stmt):
        if node is not stmt and isinstance(node, ir.Stmt):
            for ident, whys in _binds_under(node, memo).items():
                out.setdefault(ident, []).extend(whys)
        else:
            for ident, why in own_bindings(node):
                out.setdefault(ident, []).append(why)
    memo[("binds", id(stmt))] = (stmt, out)
    return out


def own_bindings(node: Any) -> list:
    """``(ident, binder)`` of each name ``node`` itself binds, in order: an ``Assign``'s
    target names, a ``For``'s target names and loop object, a ``FuncDef``'s own name (the
    binder: the node) and parameters (the binder: each ``Param``)."""
    out: list = []

    def bind(target: Any, why: Any) -> None:
        if isinstance(target, ir.Name):
            out.append((target.ident, why))
        elif isinstance(target, ir.Target):
            for t in target.names:
                bind(t, why)

    if isinstance(node, ir.Assign):
        bind(node.target, node)
    elif isinstance(node, ir.For):
        bind(node.target, node)
        if node.loop:
            out.append((node.loop, node))
    elif isinstance(node, ir.FuncDef):
        out.append((node.ident, node))
        for p in node.params:
            bind(p.name, p)
    return out


def bindings(node: Any) -> Iterator[tuple]:
    """``own_bindings`` of every node at or under ``node`` (nested functions included)."""
    for n in ir.of_classes(ir.walk(node), _BINDERS):
        yield from own_bindings(n)


#: the classes of the nodes that bind names (``own_bindings``)
_BINDERS = frozenset({ir.Assign, ir.For, ir.FuncDef})


def reads_top_output(node: Any) -> bool:
    """Whether ``ir.TOP_OUTPUT`` (the render's own output list) is read under ``node``."""
    return any(isinstance(n, ir.Local) and n == ir.TOP_OUTPUT for n in ir.walk(node))


def is_block(value: Any) -> bool:
    """A tuple of statements (a body), as opposed to a tuple of expressions."""
    return isinstance(value, tuple) and bool(value) and isinstance(value[0], ir.Stmt)


def calls_foreign_code(node: Any) -> bool:
    """A call of code the template does not show (a macro, a value called)."""
    return isinstance(node, (ir.CallValue, ir.CallFunc)) or (
        isinstance(node, ir.Helper) and node.name == "jinja.call"
    )


def map_start_values(module: ir.Module, helper: str, value: Any) -> ir.Module:
    """``module`` with each top-level start value ``x = <helper>(...)`` of a Jinja module
    given ``value(call)`` instead (the template's own scope: no nested statement)."""
    if module.dialect != "jinja":
        return module

    def one(stmt: Any) -> Any:
        if (
            isinstance(stmt, ir.Assign)
            and isinstance(stmt.value, ir.Helper)
            and stmt.value.name == helper
        ):
            new = value(stmt.value)
            return stmt if new is None else ir.replace(stmt, value=new)
        return stmt

    return ir.replace(module, body=tuple(one(s) for s in module.body))


def _makes_namespace(value: Any) -> bool:
    """``value`` is a ``namespace(...)`` call, as lowered (``jinja.call`` of the name) or as
    ``typed_calls`` writes it (``new_namespace(...) if namespace is Namespace else <that
    call>``)."""
    if isinstance(value, ir.CondExpr):
        return _makes_namespace(value.body) and _makes_namespace(value.orelse)
    if isinstance(value, ir.Helper):
        if value.name == "jinja.new_namespace":
            return True
        return (
            value.name == "jinja.call"
            and bool(value.args)
            and isinstance(value.args[0], ir.Name)
            and value.args[0].name == "namespace"
        )
    return False


def namespace_vars(body: Any, binds: Optional[list] = None) -> frozenset:
    """The idents every binding of which (under ``body``, nested functions included) is an
    assignment of a ``namespace(...)`` call, of another such ident (a scope's copy of an outer
    one), or a scope's start value (``is_init``), and one at least a call: their values are
    namespaces, whenever the template's ``namespace`` is the environment's (the render context
    may bind that name to anything: a reader must still test the type). The ``None`` that
    ``ns_scalars`` binds a namespace it keeps in locals to (the object never read on that
    path) is neither (an ident names a macro's variable in every macro). ``binds``: the
    ``bindings(body)`` when the caller has them."""
    if binds is None:
        binds = list(bindings(body))
    made: set = set()
    other: set = set()
    copies: dict = {}
    for ident, binder in binds:
        if not isinstance(binder, ir.Assign) or is_init(binder):
            if not isinstance(binder, ir.Assign):
                other.add(ident)
            continue
        value = binder.value
        if _makes_namespace(value):
            made.add(ident)
        elif isinstance(value, ir.Name):
            copies.setdefault(ident, set()).add(value.ident)
        elif not (isinstance(value, ir.Const) and value.value is None):
            other.add(ident)
    found = (made | set(copies)) - other
    while True:  # the greatest set: a copy of an ident outside it is not a namespace
        out = {i for i in found if not copies.get(i, set()) <= found}
        if not out:
            return frozenset(i for i in found if i in made or copies.get(i))
        found -= out
