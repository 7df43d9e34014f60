"""What the fuel counter (``fuel.py``) counts over the IR: the runtime calls on a tree's
costliest path (:func:`count_calls`), the calls a statement makes itself (:func:`own_calls`),
the nodes of a body outside the functions it defines (:func:`own_nodes`). Each walks with a
stack and a table, per node class, of what to do with it and the getter of its child fields
(as ``ir.walk`` does): the emitter asks them of every loop body, function and top-level
statement of a bounded module, about one more walk of the module a compile.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from . import ir

#: Runtime calls in a loop body that cost one more unit of fuel per iteration. A call the
#: costliest path names may not run (most are a dict read's fallback, taken for other
#: objects): four make a unit, ~0.1 us of a chat template's loop (a 100-message render of
#: seed 000 counted 1,600 for 64 us of work at two, and made a meter). The count of a
#: chunk is work bounded by a few milliseconds whatever the calls are (a unit is at most
#: four of them); work past the count is charged by its CPU time at the next look.
CALLS_PER_FUEL = 4
_CALLS = (ir.Helper, ir.CallValue, ir.CallFunc)


def _weight(node: Any, leaves: dict) -> int:
    """The runtime calls node ``node`` itself makes: one for a call, a closed function's
    call counting its tree's (``leaves``), none for any other node."""
    if not isinstance(node, _CALLS):
        return 0
    if isinstance(node, ir.CallFunc) and node.ident in leaves:
        return 1 + leaves[node.ident] * CALLS_PER_FUEL
    return 1


def count_calls(node: Any, leaves: dict) -> int:
    """The runtime calls ``node`` makes on its costliest path (a closed function's call
    counting its tree's), outside the bodies of the loops and functions in it: the calls
    of the nodes under it (a stack, as ``ir.walk``'s), an ``if``'s (and a conditional
    expression's) costlier branch counted by a call of its own."""
    calls = 0
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    kinds = _CALL_KINDS
    while stack:
        n = pop()
        kind, many, get = kinds.get(n.__class__) or _call_kind(n.__class__)
        if kind is _K_SEQ:
            extend(n)
            continue
        if kind is _K_NONE:  # not a node, or a function: its code pays for itself
            continue
        if kind is _K_BRANCH:  # ``if`` / conditional expression: the costlier branch
            push(n.test)
            calls += max(count_calls(n.body, leaves), count_calls(n.orelse, leaves))
            continue
        if kind is _K_FOR:  # its items, filter and ``else`` (run once) here; its body pays
            # at its own start
            extend((n.iter, n.filter, n.else_))
            continue
        if kind is _K_CALLFUNC:
            calls += 1 + leaves[n.ident] * CALLS_PER_FUEL if n.ident in leaves else 1
        else:
            calls += kind  # 1 for a call, 0 for any other node
        if many:
            extend(get(n))
        elif get is not None:
            push(get(n))
    return calls


# ``count_calls``'s treatment of a value by its class (``_CALL_KINDS``: ``(kind, many, getter)``,
# the getter of the node's child fields: their values, a tuple of them when ``many``):
# nothing (not a node, or a function: its code pays for itself), a tuple's items, the
# costlier branch, a loop's own parts, a call of a function by name; or the node's own calls
# (0 or 1, :func:`_weight`) and its children's
_K_NONE, _K_SEQ, _K_BRANCH, _K_FOR, _K_CALLFUNC = "none", "seq", "branch", "for", "callfunc"
_CALL_KINDS: dict = {}


def _fields_getter(fields: tuple) -> tuple:
    """``(many, getter)`` of a node class's child ``fields`` (as ``ir.walk``'s pushers)."""
    if len(fields) > 1:
        return True, attrgetter(*fields)
    if fields:
        return False, attrgetter(fields[0])
    return False, None


def _call_kind(cls: type) -> tuple:
    if issubclass(cls, tuple):
        kind: Any = _K_SEQ
    elif not issubclass(cls, ir.Node) or issubclass(cls, ir.FuncDef):
        kind = _K_NONE
    elif issubclass(cls, (ir.If, ir.CondExpr)):
        kind = _K_BRANCH
    elif issubclass(cls, ir.For):
        kind = _K_FOR
    elif issubclass(cls, ir.CallFunc):
        kind = _K_CALLFUNC
    else:
        kind = 1 if issubclass(cls, _CALLS) else 0
    fields = ir.child_fields(cls) if issubclass(cls, ir.Node) else ()
    return _CALL_KINDS.setdefault(cls, (kind, *_fields_getter(fields)))


def own_calls(stmt: Any, leaves: dict) -> int:
    """The runtime calls statement ``stmt`` makes itself (its expressions; the statements
    nested in it count for themselves), a closed function's call counting its tree's:
    ``_weight`` of each node of ``ir.walk_own`` of the statement (and of a ``Scoped``'s
    bindings), walked here without listing them."""
    calls = 0
    kinds = _OWN_KINDS
    for root in [stmt, *stmt.bindings] if stmt.__class__ is ir.Scoped else (stmt,):
        # the statement's own fields (a statement is no call); any statement under it is not
        # walked into
        stack = [getattr(root, field) for field in ir.child_fields(root.__class__)]
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            node = pop()
            kind, many, get = kinds.get(node.__class__) or _own_kind(node.__class__)
            if kind is _K_SEQ:
                extend(node)
                continue
            if kind is _K_NONE or kind is _K_STMT:
                continue
            if kind is _K_CALLFUNC:
                calls += 1 + leaves[node.ident] * CALLS_PER_FUEL if node.ident in leaves else 1
            else:
                calls += kind
            if many:
                extend(get(node))
            elif get is not None:
                push(get(node))
    return calls


_K_STMT = "stmt"
#: ``own_calls``'s treatment of a value by its class: ``(kind, many, getter)``
_OWN_KINDS: dict = {}


def _own_kind(cls: type) -> tuple:
    if issubclass(cls, tuple):
        kind: Any = _K_SEQ
    elif not issubclass(cls, ir.Node):
        kind = _K_NONE
    elif issubclass(cls, ir.Stmt):
        kind = _K_STMT
    elif issubclass(cls, ir.CallFunc):
        kind = _K_CALLFUNC
    else:
        kind = 1 if issubclass(cls, _CALLS) else 0
    fields = ir.child_fields(cls) if issubclass(cls, ir.Node) else ()
    return _OWN_KINDS.setdefault(cls, (kind, *_fields_getter(fields)))


def iter_own_nodes(body: Any) -> Any:
    """``own_nodes``, one at a time (for the searches that stop at the first they need)."""
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
            continue
        if not isinstance(node, ir.Node):
            continue
        yield node
        for field, value in ir.children(node):
            if isinstance(node, ir.FuncDef) and field == "body":
                continue
            stack.append(value)


def own_nodes(body: Any) -> list:
    """The nodes of ``body`` outside the functions it defines (a function's own node is
    listed, its parameters and prologue too, not its body)."""
    found: list = []
    add = found.append
    stack = [body]
    pop, push, extend = stack.pop, stack.append, stack.extend
    kinds = _OWN_NODE_KINDS
    while stack:
        node = pop()
        kind, many, get = kinds.get(node.__class__) or _own_node_kind(node.__class__)
        if kind is _K_SEQ:
            extend(node)
        elif kind is not _K_NONE:
            add(node)
            if many:
                extend(get(node))
            elif get is not None:
                push(get(node))
    return found


#: ``own_nodes``'s treatment of a value by its class: ``(kind, many, getter)``: a tuple's
#: items, nothing (not a node), or the node and its fields to walk (a function's without its
#: body)
_OWN_NODE_KINDS: dict = {}


def _own_node_kind(cls: type) -> tuple:
    if issubclass(cls, tuple):
        return _OWN_NODE_KINDS.setdefault(cls, (_K_SEQ, False, None))
    if not issubclass(cls, ir.Node):
        return _OWN_NODE_KINDS.setdefault(cls, (_K_NONE, False, None))
    fields = ir.child_fields(cls)
    if issubclass(cls, ir.FuncDef):
        fields = tuple(f for f in fields if f != "body")
    return _OWN_NODE_KINDS.setdefault(cls, ("node", *_fields_getter(fields)))
