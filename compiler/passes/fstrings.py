"""``+`` chains of strings built at once, as an f-string.

``'<|im_start|>' + role + '\\n' + content + '<|im_end|>'`` copies its text once per ``+``
(four strings made, three thrown away); for operands that are exactly ``str`` the f-string
``f"<|im_start|>{role}\\n{content}<|im_end|>"`` is the same text, made once (Python's
``BUILD_STRING``; a part that is exactly a ``str`` is written as it is). So a chain of three
operands or more (after the rule below) becomes

    f"<|im_start|>{_s1}\\n{_s2}<|im_end|>"
    if type(_s1 := role) is str and type(_s2 := content) is str
    else '<|im_start|>' + _s1 + '\\n' + content + '<|im_end|>'

The guard evaluates the computed operands in the chain's order, each once, and stops at the
first that is not exactly a ``str``; the chain as written then runs with its first computed
operand kept (``_s1``): a ``Markup`` operand escapes, an undefined or a number raises, as
before. The operands after the first may have been evaluated by the guard already and are
evaluated again there, so each must be a pure read (:func:`_pure`: a variable, an item or an
attribute of one, a string filter of one, a type test...): the same value, no effect. Within
the guard each operand is evaluated where the chain evaluates it: after the operands before
it, which were ``str`` (so every ``+`` before it succeeded, with no effect).

Adjacent string constants of any ``+`` chain are joined first (``x + 'a' + 'b'`` is ``x +
'ab'``): when ``x`` is a ``str``, the same text; a ``Markup`` escapes each constant as it is
added, and escaping is done character by character, so joined or not it escapes the same;
anything else raises at the first ``+`` with either constant (the same error: it names the
operands' types).

A chain may run through the size guards' ``concat`` (a ``+`` of a string the runtime checks
as it is made: ``limits``): the f-string is then checked once, when made
(``limits.concatenated``, which the emitter leaves out where the input-loop analysis bounds
the text), and the chain as written keeps every check; such a chain has at most
``CHECKED_OPERANDS`` computed operands, so what the f-string makes before its check is at
most that many times the cap, as a sum the runtime does not check is.

Only the left spine of a chain is a chain (``a + (b + c)`` adds ``b + c`` first: it is an
operand, a chain of its own). Runs on the emitter's input, after the size guards
(``limits``): a ``+`` they checked is a helper call, an operand here; the ``+`` they left
plain build nothing the f-string does not. Never in a filtered loop's iterable or filter (a
generator: no ``:=`` there).

Keeps output byte-identical (pure IR -> IR).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from .. import ir
from . import list_items
from .typed_calls import STR_FILTERS
from .util import TO_STR_HELPERS, map_nodes, type_is, unary_helper

#: the fewest operands (after constants are joined) a chain needs to be written as an
#: f-string: with two, one ``+`` is cheaper than the type test
MIN_OPERANDS = 3

#: the size guards' ``+`` of a string (``passes/limits.py``), and its check of a made value
_CHECKED, _CHECKED_AFTER = "limits.concat", "limits.concatenated"
#: the most computed operands a chain through the size guards' ``concat`` may have: its text
#: is checked once, when made, so it may be this many times the cap before it is refused
#: (``input_loops.DEGREE_MAX``, the bound a sum the runtime does not check keeps)
CHECKED_OPERANDS = 4

#: helpers whose call with pure arguments is a pure read (the same value, no effect)
PURE_HELPERS = frozenset({
    "jinja.getitem", "jinja.getattr_", "builtins.type", "jinja.to_str", *STR_FILTERS,
    "jinja.subscript", "builtins.len",  # an item of a list by an int (``list_items``)
})
#: ``str`` methods a pure receiver may be given to (``typed_calls``' fast paths)
PURE_METHODS = frozenset({"strip", "lstrip", "rstrip", "upper", "lower", "capitalize", "title"})
_LEAVES = (ir.Const, ir.Name, ir.Local, ir.ContextGet, ir.Hoisted, ir.Ref)


def _pure(node: Any) -> bool:
    """``node`` evaluates to the same value every time, with no effect (an error aside)."""
    if isinstance(node, _LEAVES):
        return True
    if isinstance(node, ir.LoopAttr):
        return _pure(node.loop)
    if isinstance(node, ir.Helper):
        return node.name in PURE_HELPERS and not node.kwargs and all(_pure(a) for a in node.args)
    if isinstance(node, ir.CallValue):
        func = node.func
        return (
            isinstance(func, ir.LoopAttr)
            and func.attr in PURE_METHODS
            and not node.kwargs
            and _pure(func.loop)
            and all(isinstance(a, ir.Const) for a in node.args)
        )
    if isinstance(node, (ir.DictLookup, ir.CondExpr, ir.BoolOp, ir.Compare, ir.Not, ir.Bind, ir.UnaryOp)):
        return all(
            _pure(child) if isinstance(child, ir.Node) else all(map(_pure, _flat(child)))
            for _f, child in ir.children(node)
        )
    return False


def _flat(value: tuple) -> list:
    """The nodes of a child tuple (a ``Compare``'s ``ops`` holds ``(op, operand)`` pairs)."""
    out: list = []
    for item in value:
        if isinstance(item, tuple):
            out += [v for v in item if isinstance(v, ir.Node)]
        elif isinstance(item, ir.Node):
            out.append(item)
    return out


def _text(node: Any) -> bool:
    return isinstance(node, ir.Const) and type(node.value) is str


def _operands(node: ir.BinOp) -> list:
    """The operands of the ``+`` chain rooted at ``node`` (its left spine), in order."""
    right: list = []
    while isinstance(node, ir.BinOp) and node.op == "+":
        right.append(node.right)
        node = node.left
    right.append(node)
    return right[::-1]


def _linked_operands(node: Any) -> tuple[list, list]:
    """The operands of the chain rooted at ``node`` through plain ``+`` and the size guards'
    ``limits.concat`` of two operands too, and the link before each operand after the first
    (None: a plain ``+``; else the ``concat`` helper)."""
    right: list = []
    links: list = []
    while True:
        if isinstance(node, ir.BinOp) and node.op == "+":
            right.append(node.right)
            links.append(None)
            node = node.left
        elif isinstance(node, ir.Helper) and node.name == _CHECKED and len(node.args) == 2 and not node.kwargs:
            right.append(node.args[1])
            links.append(node)
            node = node.args[0]
        else:
            break
    right.append(node)
    return right[::-1], links[::-1]


def _joined(operands: list, links: list) -> tuple[list, list]:
    """Adjacent string constants joined across plain ``+`` links."""
    out, kept = [operands[0]], []
    for operand, link in zip(operands[1:], links):
        if link is None and _text(operand) and _text(out[-1]):
            out[-1] = ir.Const(out[-1].value + operand.value, span=out[-1].span)
        else:
            out.append(operand)
            kept.append(link)
    return out, kept


def _chain(operands: list, span: ir.Span, links: Any = None) -> ir.Expr:
    node = operands[0]
    for i, operand in enumerate(operands[1:]):
        link = links[i] if links else None
        if link is None:
            node = ir.BinOp("+", node, operand, span=span)
        else:
            node = ir.replace(link, args=(node, operand))
    return node


#: node classes with no child (a name, a constant, a text): no chain, nothing to rebuild
_NO_CHILDREN = frozenset(cls for cls in ir.NODE_CLASSES if not ir.child_fields(cls))


class _Rewriter:
    def __init__(self, post: Optional[Callable[[Any], Any]] = None) -> None:
        self.count = 0
        #: another pass's rewrite of one node, applied to every node of the input after its
        #: children (as ``map_nodes`` would): two passes, one traversal
        self.post = post
        #: the classes ``post`` is applied to: those named by its ``classes`` (the only ones
        #: it may change), else every node class
        self.posted = frozenset(getattr(post, "classes", ir.NODE_CLASSES)) if post else frozenset()

    def chain(self, node: ir.Expr, written: bool = False) -> ir.Expr:
        """``written``: the chain is what an ``Output`` prints (through ``to_str``): its
        f-string, of ``str`` operands only, is the sum of strings an ``Output`` writes as it
        is, which the size guards leave plain (``limits._written``): no check of it then."""
        operands, links = _linked_operands(node)
        checked = any(link is not None for link in links)
        if checked and sum(not isinstance(o, ir.Const) for o in operands) > CHECKED_OPERANDS:
            if not isinstance(node, ir.BinOp):  # a checked ``+`` itself: it stays, its operands not
                return ir.map_children(node, self.rewrite)
            operands = _operands(node)  # the plain ``+`` only: each check stays where it is
            links = [None] * (len(operands) - 1)
            checked = False
        operands, links = _joined([self.rewrite(o) for o in operands], links)
        computed = [i for i, o in enumerate(operands) if not isinstance(o, ir.Const)]
        if (
            len(operands) < MIN_OPERANDS
            or not computed
            or not all(_text(o) for o in operands if isinstance(o, ir.Const))
            or not all(_pure(operands[i]) for i in computed[1:])
        ):
            return _chain(operands, node.span, links)
        tests, parts = [], []
        kept = list(operands)
        for i, operand in enumerate(operands):
            if i not in computed:
                parts.append(operand)
                continue
            self.count += 1
            temp = f"_s{self.count}"
            tests.append(type_is(ir.Bind(temp, operand, span=operand.span), "builtins.str"))
            parts.append(ir.Local(temp))
            if i == computed[0]:
                kept[i] = ir.Local(temp)
        test = tests[0] if len(tests) == 1 else ir.BoolOp("and", tuple(tests))
        fast: ir.Expr = ir.Format(tuple(parts), span=node.span)
        if checked and not written:  # one size check of the whole text (``Emitter.x_Helper``)
            fast = ir.Helper(_CHECKED_AFTER, (fast,), span=node.span)
        return ir.CondExpr(test, fast, _chain(kept, node.span, links), span=node.span)

    def rewrite(self, node: Any) -> Any:
        cls = node.__class__
        if cls is tuple:
            return ir._map_tuple(node, self.rewrite) if node else node
        if cls in _NO_CHILDREN:
            return self.post(node) if cls in self.posted else node  # type: ignore[misc]
        if not isinstance(node, ir.Node):
            return ir.map_children(node, self.rewrite) if isinstance(node, tuple) else node
        post = self.post
        if cls is ir.For and node.filter is not None:
            # the iterable and the filter are a generator's: only the rest is rewritten
            body, else_ = self.rewrite(node.body), self.rewrite(node.else_)
            if post is not None:  # the other fields get the other pass alone
                node = ir.map_children(
                    ir.replace(node, body=(), else_=()), lambda n: map_nodes(n, post)
                )
                return post(ir.replace(node, body=body, else_=else_))
            return ir.replace(node, body=body, else_=else_)
        if (cls is ir.BinOp or cls is ir.Helper) and _is_chain(node):
            return self.chain(node)  # (it makes no node the other pass rewrites)
        if cls is ir.Output and _printed_chain(node.expr):
            text = node.expr
            made = self.chain(text.args[0], written=True)
            if isinstance(made, ir.CondExpr) and isinstance(made.body, ir.Format):
                # the f-string is a ``str``: only the chain as written is converted
                slow = ir.replace(text, args=(made.orelse,))
                printed: ir.Expr = ir.replace(made, orelse=slow)
            else:
                printed = ir.replace(text, args=(made,))
            node = ir.replace(node, expr=printed)
            return post(node) if cls in self.posted else node  # type: ignore[misc]
        node = (ir._MAPPERS.get(cls) or ir._mapper(cls))(node, self.rewrite)  # map_children's
        return post(node) if cls in self.posted else node  # type: ignore[misc]


def _is_chain(node: Any) -> bool:
    """A ``+``, plain or the size guards' (``limits.concat`` of two operands)."""
    return isinstance(node, ir.BinOp) and node.op == "+" or (
        isinstance(node, ir.Helper) and node.name == _CHECKED and len(node.args) == 2 and not node.kwargs
    )


def _printed_chain(expr: Any) -> bool:
    """``to_str(<chain>)``: what an ``Output`` prints when the chain may not be a ``str``."""
    return unary_helper(expr, TO_STR_HELPERS) and _is_chain(expr.args[0])


def run(module: ir.Module, post: Optional[Callable[[Any], Any]] = None) -> ir.Module:
    """Invariant: no plain ``+`` chain of three operands or more whose later computed
    operands are pure reads, and no two adjacent string constants in a ``+`` chain.
    ``post``: another pass's rewrite of a node, applied on the way (:class:`_Rewriter`)."""
    return ir.replace(module, body=_Rewriter(post).rewrite(module.body))


def with_list_items(module: ir.Module) -> ir.Module:
    """This pass and ``list_items`` in one traversal (the pipeline's step: both rebuilt the
    whole module)."""
    return run(module, list_items.folder(module))
