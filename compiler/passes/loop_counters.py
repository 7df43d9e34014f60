"""Loop counters: ``loop.index`` from ``enumerate`` instead of a loop object.

a loop that only reads ``loop.index``/``index0``/``first`` uses ``enumerate`` and no loop
object.

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from .. import ir
from .drop_dead_inits import map_stmts
from .util import calls_foreign_code, map_nodes

_COUNTER_ATTRS = frozenset({"index", "index0", "first"})
#: neighbours a loop over a list or tuple reads from the list by its counter (``_around``)
_AROUND_ATTRS = frozenset({"previtem", "nextitem"})
_FUNCDEF = frozenset({ir.FuncDef})


def run(module: ir.Module) -> ir.Module:
    """A loop whose body only reads ``loop.index``, ``loop.index0`` or ``loop.first`` counts
    with ``enumerate`` instead of building a loop object (those need no look-ahead, so the
    iterable is consumed exactly as before). One that also reads ``loop.last`` counts too,
    and over a list or tuple compares the counter with the last index (``jinja.loop_last``);
    any other iterable still gets its loop object for ``last``. Not when the body may call
    foreign code (which could change the list while it is iterated: the sandbox refuses
    every mutating method to the template itself); a builtin method called directly (the
    sandbox's safe ones, ``method_calls``) and the template's own functions that call no
    foreign code themselves (``_pure_functions``) are no foreign code. ``loop.previtem`` and
    ``loop.nextitem`` are the list's items by the counter (``_around``: no filter, no foreign
    call at all, no function defined in the body), jinja2's undefined values at the ends."""
    if module.dialect != "jinja":
        return module
    nodes = ir.walk(module.body)  # (remembered for ``_pure_functions``)
    kinds = set(map(type, nodes))
    if ir.For not in kinds or not any(_counted(n) for n in nodes if n.__class__ is ir.For):
        return module
    pure = _pure_functions(module)

    def foreign(n: Any) -> bool:
        return calls_foreign_code(n) and not _own_call(n, pure)

    def uses(node: ir.For) -> tuple:
        """(whether the loop's body and filter read its loop object only for counters and
        ``last``, whether ``last``): one walk, each read of the object's ident counted against
        the attribute reads on it (each holds one such read)."""
        ident, names, attrs, last, around = node.loop, 0, 0, False, False
        for n in ir.walk((node.body, node.filter)):
            cls = n.__class__
            if cls is ir.LoopAttr:
                if n.loop.__class__ is ir.Name and n.loop.ident == ident:
                    attrs += 1
                    if n.attr == "last":
                        last = True
                    elif n.attr in _AROUND_ATTRS:
                        around = True
                    elif n.attr not in _COUNTER_ATTRS:
                        return False, last, around
            elif (cls is ir.Name or cls is ir.Local) and n.ident == ident:
                names += 1
        return names == attrs, last, around

    def fold(node: Any) -> Any:
        if not _counted(node):
            return node
        ok = uses(node)  # only counters, ``last`` and neighbours; ``last`` read; neighbours
        if not ok[0]:
            return node
        if ok[2] and not _around(node, foreign):
            return node
        # foreign code in the body: ``last`` compares the counter with the list's length as it
        # is when read, if no foreign call can follow a read in the same iteration
        live = ok[1] and any(foreign(n) for n in ir.walk(node.body))
        if live and not _reads_after_calls(node.body, node.loop, foreign):
            return node
        counter = "_i" + node.loop.split("_")[1]
        i = ir.Local(counter)
        last = ir.Local("_n" + node.loop.split("_")[1]) if ok[1] or ok[2] else None
        items = ir.Local(node.loop)  # the list itself where ``last`` is not None

        def attr(n: Any) -> Any:
            if (
                isinstance(n, ir.LoopAttr)
                and isinstance(n.loop, ir.Name)
                and n.loop.ident == node.loop
            ):
                if n.attr == "index0":
                    return i
                if n.attr == "index":
                    return ir.BinOp("+", i, ir.Const(1), span=n.span)
                if n.attr == "last" and last is not None:
                    if live:  # the list's length now: what the look-ahead would find
                        size = ir.Helper("builtins.len", (ir.Local(node.loop),))
                        compare = ir.Compare(ir.BinOp("+", i, ir.Const(1)), ((">=", size),))
                    else:
                        compare = ir.Compare(i, (("==", last),))
                    return ir.CondExpr(
                        ir.Compare(last, (("is not", ir.Const(None)),)), compare, n, span=n.span
                    )
                if n.attr in _AROUND_ATTRS and last is not None:
                    if n.attr == "previtem":
                        near = ir.Compare(i, ((">", ir.Const(0)),))
                        at, hint = ir.BinOp("-", i, ir.Const(1)), "there is no previous item"
                    else:
                        near = ir.Compare(i, (("<", last),))
                        at, hint = ir.BinOp("+", i, ir.Const(1)), "there is no next item"
                    item = ir.CondExpr(
                        near,
                        ir.Helper("jinja.subscript", (items, at)),
                        ir.Helper("jinja.Undefined", (ir.Const(hint),)),
                    )
                    return ir.CondExpr(
                        ir.Compare(last, (("is not", ir.Const(None)),)), item, n, span=n.span
                    )
                return ir.Compare(i, (("==", ir.Const(0)),), span=n.span)
            return n

        if last is not None:
            helper = node.loop_helper
            if ok[1] and not ok[2] and not live and node.filter is None and _items_of(node.iter):
                helper = "jinja.loop_items_last"  # its mapping's length counts its pairs
            return ir.replace(
                node,
                body=map_nodes(node.body, attr),
                counter=counter,
                last=last.ident,
                loop_helper=helper,
            )
        return ir.replace(
            node, body=map_nodes(node.body, attr), loop="", loop_helper="", counter=counter
        )

    # only loops change: without a ``Capture`` they are all statements of statements' blocks
    if ir.Capture in kinds:
        return ir.replace(module, body=map_nodes(module.body, fold))
    return ir.replace(module, body=map_stmts(module.body, fold))


def _items_of(iterable: Any) -> bool:
    """``iterable`` is ``mapping | items`` (``do_items``: a generator of the mapping's pairs,
    ``len(mapping)`` of them for a dict nothing changes while the loop runs; the loop's body
    calls no foreign code, which alone could, ``run``)."""
    return (
        isinstance(iterable, ir.Helper)
        and iterable.name == "jinja_filters.do_items"
        and len(iterable.args) == 1
        and not iterable.kwargs
        and not isinstance(iterable.args[0], ir.Starred)
    )


def _around(node: ir.For, foreign: Callable[[Any], bool]) -> bool:
    """Whether a loop reading ``loop.previtem`` / ``loop.nextitem`` may read them from its list
    by the counter (``items[i - 1]``, ``items[i + 1]``; the undefined values jinja2 gives at
    the ends): the loop has no filter (its items are the list's) and its body calls no foreign
    code and defines no function (nothing can change the list while it is iterated, so its
    neighbours are what jinja2's loop object kept and looks ahead for)."""
    if node.filter is not None:
        return False
    return not any(
        foreign(n) or n.__class__ is ir.FuncDef for n in ir.walk(node.body)
    )


def _reads_last(node: Any, loop: str) -> bool:
    return any(
        n.__class__ is ir.LoopAttr
        and n.attr == "last"
        and n.loop.__class__ is ir.Name
        and n.loop.ident == loop
        for n in ir.walk(node)
    )


def _reads_after_calls(body: tuple, loop: str, foreign: Callable[[Any], bool]) -> bool:
    """No foreign call of ``body`` (a loop's) can run after a read of its ``loop.last`` in
    the same iteration, nor between two such reads: jinja2's loop object looks the next item
    up when ``last`` is first read and keeps it (a list changed after that read still yields
    the item it found), while a list's iterator reads the list when it steps. Before the first
    read both see the list as it is then: ``last`` is ``index0 + 1 >= len(list)`` there. An
    ``if`` whose test reads nothing is judged branch by branch (one runs); any other statement
    holding a read ends what may call foreign code; a function defined in the body that reads
    it is refused (it runs when called)."""

    def calls(node: Any) -> bool:
        return any(foreign(n) for n in ir.walk(node))

    for n in ir.walk(body):
        if n.__class__ is ir.FuncDef and _reads_last(n, loop):
            return False

    def clean(stmts: tuple) -> Optional[bool]:
        """None if a foreign call may follow a read; else whether ``stmts`` may read."""
        seen = False
        for s in stmts:
            if seen:
                if calls(s):
                    return None
                continue
            if not _reads_last(s, loop):
                continue
            if s.__class__ is ir.If and not _reads_last(s.test, loop):
                if clean(s.body) is None or clean(s.orelse) is None:
                    return None
            elif calls(s):
                return None
            seen = True
        return seen

    return clean(body) is not None


def _counted(node: Any) -> bool:
    """A loop that may count instead of building its loop object (what ``run`` changes)."""
    return isinstance(node, ir.For) and bool(node.loop) and not node.recursive


def _own_call(node: Any, pure: frozenset) -> bool:
    """A call of the runtime's builtin method read directly (``s.strip()``, ``loop.cycle``)
    or of one of ``pure``, the template's functions that call no foreign code."""
    if isinstance(node, ir.CallValue):
        return isinstance(node.func, ir.LoopAttr)
    return isinstance(node, ir.CallFunc) and node.ident in pure


def _pure_functions(module: ir.Module) -> frozenset:
    """The idents of the template's functions whose bodies call nothing but builtin methods
    and such functions (the greatest set: a function calling itself is pure if nothing else
    it calls is foreign); one bound twice is not. Each body is walked once and impurity is
    passed back along the calls (linear in the template)."""
    defs: dict = {}
    for node in ir.of_classes(ir.walk(module.body), _FUNCDEF):
        defs[node.ident] = None if node.ident in defs else node
    callers: dict = {}
    impure = [ident for ident, node in defs.items() if node is None]
    for ident, node in defs.items():
        if node is None:
            continue
        for n in ir.walk((node.prologue, node.params, node.body)):
            if isinstance(n, ir.CallFunc) and n.ident in defs:
                callers.setdefault(n.ident, []).append(ident)
            elif calls_foreign_code(n) and not _own_call(n, frozenset()):
                impure.append(ident)
                break
    pure = set(defs)
    while impure:
        ident = impure.pop()
        if ident in pure:
            pure.discard(ident)
            impure.extend(callers.get(ident, ()))
    return frozenset(pure)
