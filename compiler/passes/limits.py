"""The size guards (run by ``api.generate`` on the final IR, just before the emitter, so
inspection and pass tests see the template's own operators): operators that can build a huge
value from a small template go through a checking helper of ``runtime/limits``.

Invariant left: no ``BinOp`` ``*``, ``**`` or ``%`` whose operands are not both constants
(repetition ``'x' * n``, ``2 ** n``, ``'%*d' % (n, 1)``), no ``//`` of two numbers neither of
which is known small (a division of big integers is quadratic in their digits), no ``+`` of two computed values
(doubling through a loop or a macro: ``s + s``; ``s + 'literal'`` grows by a constant when the literal is short,
a ``+`` with an operand known to be a number builds no sequence, one with a string literal outside
loops and functions runs once per render, and a ``+`` chain an ``Output`` writes is never kept: these
stay plain ``+``), and no tuple literal holding a computed item other than a number (nesting tuples deeper
than hashing can recurse: ``ns.t = (ns.t,)``) remain plain Python; each is a
``Helper("limits.mul" | "limits.power" | "limits.mod" | "limits.floordiv" | "limits.add" |
"limits.make_tuple")`` computing the same value. List and dict literals holding two computed items or more become
``Helper("limits.built_value", (_built, literal))``: every container that can share a value
is weighed as it is built (``runtime/limits.py``, "weights": ``[l, l]`` doubles what printing
``l`` costs); one holding a single computed item (``[message]``) weighs that item plus its
text and is weighed by whatever holds it next. Constant operands are left alone when their
result is small (``'-' * 80``).
"""

from __future__ import annotations

import re
from typing import Any

from tmpl2py.runtime.limits import PRINTF_SPEC, repeats_a_name

from .. import ir
from .util import TO_STR_HELPERS, is_str

_GUARDED = {"*": "limits.mul", "**": "limits.power", "%": "limits.mod", "+": "limits.add", "//": "limits.floordiv"}

#: the render's registry of the containers it built (their weights, tuples' depths), passed
#: to the helpers that build containers (``runtime/limits.py``, "weights")
BUILT = ir.Local("_built")


def _guard(node: Any, counters: frozenset, looped: bool = True) -> Any:
    if isinstance(node, ir.BinOp) and node.op in _GUARDED:
        left_const = isinstance(node.left, ir.Const)
        right_const = isinstance(node.right, ir.Const)
        if node.op == "+" and (_short(node.left) or _short(node.right)):
            return node  # grows by a short literal's size (a loop of the fuel's length: 32 MB)
        if node.op == "+" and not looped and (_text(node.left) or _text(node.right)):
            return node  # runs once per render: grows a value by its literal once
        if node.op == "+" and (_number(node.left, counters) or _number(node.right, counters)):
            return node  # a number plus anything builds no sequence (or raises, as it would)
        if node.op == "+" and (is_str(node.left) or is_str(node.right)):
            return ir.Helper("limits.concat", (node.left, node.right))  # a str holds nothing
        if left_const and right_const and _small(node.op, node.left.value, node.right.value):
            return node
        if node.op == "%" and (_number(node.left, counters) or _plain_format(node.left)):
            return node  # not printf-style formatting, or a format without wide fields
        if node.op == "//" and (_small_number(node.left, counters) or _small_number(node.right, counters)):
            return node  # a division by (or of) a small number is linear in the other's digits
        if node.op in ("**", "%", "//"):
            return ir.Helper(_GUARDED[node.op], (node.left, node.right))
        right = node.right
        if node.op == "+" and isinstance(right, ir.ListLit) and len(right.items) == 1:
            if not isinstance(right.items[0], ir.Starred):  # ``l + [m]``: one more item
                return ir.Helper("limits.add_item", (BUILT, node.left, right.items[0]))
        return ir.Helper(_GUARDED[node.op], (BUILT, node.left, node.right))
    if isinstance(node, ir.TupleLit) and not all(_constant(i) or _number(i, counters) for i in node.items):
        # (a number nests nothing and weighs an item: ``('index', loop.index)`` stays plain)
        if any(isinstance(i, ir.Starred) for i in node.items):
            return node
        return ir.Helper("limits.make_tuple", (BUILT,) + node.items)
    if isinstance(node, (ir.ListLit, ir.DictLit)) and _shares(node, counters):
        return ir.Helper("limits.built_value", (BUILT, node))
    return node


def _constant(node: Any) -> bool:
    """Whether ``node``'s value is fixed by the template text (a constant, or a literal of
    constants: ``[('role', 'system')]``): what it weighs is its text's size."""
    return ir.literal_of(node, lambda leaf: isinstance(leaf, _PLAIN))


def _fixed(node: Any, counters: frozenset) -> bool:
    """Whether ``node``'s value holds no value the template computed but numbers: constants,
    numbers (``loop.index``) and literals of such (``('index', loop.index)``): what it weighs
    is its text's size and an item per number, however it is shared."""
    return ir.literal_of(node, lambda leaf: isinstance(leaf, _PLAIN) or _number(leaf, counters))


def _shares(node: Any, counters: frozenset = frozenset()) -> bool:
    """Whether a list or dict literal can hold what it holds more than once: it has two
    computed items or more (``[l, l]``), or a starred one. A literal with one computed item
    weighs that item plus its text (``[message]``, ``{'type': 'text', 'text': t}``): it
    multiplies nothing, so it is not weighed as it is built; whatever holds it next weighs
    it then (a container nobody registered is walked: ``runtime/limits.py``, "weights")."""
    if isinstance(node, ir.ListLit):
        computed = [item for item in node.items if not _fixed(item, counters)]
    else:
        computed = [part for pair in node.items for part in pair if not _fixed(part, counters)]
    return len(computed) > 1 or any(isinstance(item, ir.Starred) for item in computed)


#: ``loop`` attributes that are always ints
_NUMERIC_LOOP_ATTRS = ir.LOOP_SCALAR_ATTRS - {"first", "last"}
_NUMBER_OPS = frozenset({"+", "-", "*", "//", "%"})


def _small_number(node: Any, counters: frozenset) -> bool:
    """Whether ``node`` is an int of a few digits at most: a loop's counter, a numeric ``loop``
    attribute, a number constant of at most 64 bits."""
    if isinstance(node, ir.Const):
        return type(node.value) is float or (type(node.value) is int and node.value.bit_length() <= 64)
    return not isinstance(node, ir.BinOp) and _number(node, counters)


def _number(node: Any, counters: frozenset) -> bool:
    """Whether ``node`` is always an int or a float: a number constant, a loop's counter,
    a numeric ``loop`` attribute, or arithmetic on such (``loop.index0 % 2`` formats nothing)."""
    if isinstance(node, ir.Const):
        return type(node.value) in (int, float)
    if isinstance(node, ir.Local):
        return node.ident in counters
    if isinstance(node, ir.LoopAttr):
        return node.attr in _NUMERIC_LOOP_ATTRS and isinstance(node.loop, ir.Local)
    if isinstance(node, ir.BinOp) and node.op in _NUMBER_OPS:
        return _number(node.left, counters) and _number(node.right, counters)
    return False


#: a ``%r`` / ``%a`` field (flags, width, precision before the conversion): what it prints
#: of a string is longer than the string (quotes, a backslash per backslash); ``%%r`` is
#: matched too, which only sends a format to the checked path
_ESCAPING = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[ra]")


def _plain_format(node: Any) -> bool:
    """A constant format string whose fields take no ``*`` width, no width or precision past
    4,096 and no name twice (``%(a)s%(a)s``): what it builds is its own text and each of its
    arguments once (``'%s: %s' % (a, b)``)."""
    if not isinstance(node, ir.Const) or type(node.value) is not str:
        return False
    if repeats_a_name(node.value):  # '%(a)s%(a)s' prints one value twice
        return False
    if _ESCAPING.search(node.value):  # '%r' escapes its value: fed back, it grows each time
        return False
    for match in PRINTF_SPEC.finditer(node.value):
        for part in match.groups():
            if part == "*" or part and int(part) > 4096:
                return False
    return True


def _small(op: str, left: Any, right: Any) -> bool:
    """Constant operands whose result is small whatever the limits (``'-' * 80``, ``2 ** 8``)."""
    numbers = (int, float)
    if type(left) in numbers and type(right) in numbers:
        return op != "**" or (type(right) is int and right <= 64)
    if op == "*":
        seq, count = (left, right) if type(right) is int else (right, left)
        return type(count) is int and isinstance(seq, str) and len(seq) * count <= 4096
    return op == "%" and isinstance(left, str) and "*" not in left and not any(
        c.isdigit() for c in left
    )


#: operands whose length is fixed by the template text (``+ 'x'``, ``+ [item]``)
#: a literal operand of ``+`` this short leaves it plain (a longer one, added in a loop, would
#: grow a value by the loop's length x its size: 5,000,000 x 100 KB)
SHORT = 64


def _short(node: Any) -> bool:
    if isinstance(node, (ir.ListLit, ir.TupleLit)):  # of constants: ``l + [item]`` is weighed
        return len(node.items) <= SHORT and _constant(node)
    if isinstance(node, ir.Const):
        value = node.value
        return not isinstance(value, (str, bytes, list, tuple)) or len(value) <= SHORT
    return False

def _text(node: Any) -> bool:
    """A string literal of any length (``+`` of one outside loops and functions runs once
    per render: the value grows by the template's own text, once)."""
    return isinstance(node, ir.Const) and type(node.value) is str


#: tuple items that cannot be a tuple the template built
_PLAIN = (ir.Const, ir.Ref)


#: node classes with no child (a name, a constant, a text): no rule applies to them
_LEAVES = frozenset(cls for cls in ir.NODE_CLASSES if not ir.child_fields(cls))
#: the classes ``fn`` may rewrite (:func:`_guard`, and an ``Assign`` to a self-fed name):
#: every other node is only rebuilt around its children
_RULED = frozenset({ir.BinOp, ir.TupleLit, ir.ListLit, ir.DictLit, ir.Assign})
_RULED_OR_LOOP = _RULED | {ir.For}
#: the nodes inside which code may run many times per render
_LOOPING = (ir.For, ir.FuncDef)


def _map_guarded(node: Any, fn: Any, looped: bool = False) -> Any:
    """``node`` rebuilt bottom-up with ``fn(node, looped)`` applied to every IR node, except
    the ``+`` chains an ``Output`` writes (:func:`_written`); ``looped``: the node is inside a
    loop or a function the template defines (it may run many times per render; else once).
    ``fn`` is applied only where it can change a node (:data:`_RULED`), and a leaf is its
    own result: one dispatch on the class per node, no call for most."""
    return _mapper(fn, looped)(node)


def _mapper(fn: Any, looped: bool) -> Any:
    """The function :func:`_map_guarded` applies to each node under ``looped`` (the one for
    the children of a loop or a function, when not looped, made on first use)."""
    mappers, map_tuple, make_mapper = ir._MAPPERS, ir._map_tuple, ir._mapper
    leaves, ruled, output, node_class = _LEAVES, _RULED, ir.Output, ir.Node
    inner: list = []

    def go(n: Any) -> Any:
        cls = n.__class__
        if cls is tuple:
            return map_tuple(n, go) if n else n
        if cls in leaves:
            return n
        if cls is output:
            return ir.replace(n, expr=_written(n.expr, fn, False, looped))
        if not isinstance(n, node_class):
            return map_tuple(n, go) if isinstance(n, tuple) else n
        mapper = mappers.get(cls) or make_mapper(cls)
        if not looped and issubclass(cls, _LOOPING):
            if not inner:
                inner.append(_mapper(fn, True))
            n = mapper(n, inner[0])
        else:
            n = mapper(n, go)
        return fn(n, looped) if cls in ruled else n

    return go


def _written(expr: Any, fn: Any, converted: bool, looped: bool = True) -> Any:
    """The ``+`` chain an ``Output`` writes out directly: its value is never kept, and the
    output it adds to is bounded by the meter, so it stays plain ``+`` (unless the pass
    rewrote one of its operands, then it is guarded: the rule it always had). One it writes
    through a conversion to text (``{{ bos_token + system }}``: ``to_str(a + b)``) is never
    kept either, so it needs no weight (printing ``l + l`` costs what ``{{ l }}{{ l }}``
    does), but it keeps the size check (``limits.concat``: a long string is charged as it
    is built, also in a macro's buffer, which the meter does not read). The operands are
    guarded as anywhere else."""
    if isinstance(expr, ir.BinOp) and expr.op == "+":
        left = _written(expr.left, fn, converted, looped)
        right = _written(expr.right, fn, converted, looped)
        counters = getattr(fn, "counters", frozenset())
        once = not looped and (_text(expr.left) or _text(expr.right))
        number = _number(expr.left, counters) or _number(expr.right, counters)
        if converted and not (once or number):
            return ir.Helper("limits.concat", (left, right), span=expr.span)
        if converted:  # a literal added once per render (straight code), or a number
            return ir.replace(expr, left=left, right=right)
        if left is expr.left and right is expr.right:
            return expr
        # an operand this pass rewrote (``x * 3 + y``): guarded, as it always was
        return fn(ir.replace(expr, left=left, right=right), looped)
    if isinstance(expr, ir.Helper) and expr.name in TO_STR_HELPERS and len(expr.args) == 1:
        inner = expr.args[0]
        if isinstance(inner, ir.BinOp) and inner.op == "+" and not expr.kwargs:
            return ir.replace(expr, args=(_written(inner, fn, True, looped),))
    return _map_guarded(expr, fn, looped)


def _chain(node: Any) -> list:
    """The operands of a ``+`` chain (``a + b + c``: a, b, c), or ``[node]``."""
    if isinstance(node, ir.BinOp) and node.op == "+":
        return _chain(node.left) + _chain(node.right)
    return [node]


#: the nodes that read a name (by ``ident``)
_READS = frozenset({ir.Name, ir.Local, ir.CallFunc})


def _self_fed(body: tuple) -> frozenset:
    """Variables whose every read is an operand of a ``+`` chain that is the whole value of
    an assignment to that same variable (``{% set l = l + [m] %}``, ``l = l + l``; a loop's
    copy of an outer list that only the loop's own ``set`` reads): no value they hold is
    ever seen but by the next ``+`` into them, so none is printed, compared, passed on or
    held by a container, and those ``+`` need no weight, only the size check
    (``limits.concat``: doubling is still stopped by length). Any other read of the name
    anywhere (a print, a loop over it, a macro's, a copy into another name) keeps it out.

    The walk of ``body`` counts each ident's reads (a ``Name``, ``Local`` or ``CallFunc``)
    and, apart, those that are no read: an assignment's target names, and the self-operands
    of such a chain; a name is self-fed when all its reads are of the second kind."""
    fed: set = set()
    reads: dict = {}
    stores: dict = {}
    for node in ir.walk(body):
        cls = node.__class__
        if cls in _READS:
            reads[node.ident] = reads.get(node.ident, 0) + 1
        elif cls is ir.Assign:
            target = node.target
            if isinstance(target, ir.Name):
                not_read = [target]
                value = node.value
                if isinstance(value, ir.BinOp) and value.op == "+":
                    for operand in _chain(value):
                        if isinstance(operand, ir.Name) and operand.ident == target.ident != "":
                            fed.add(target.ident)
                            not_read.append(operand)
            elif isinstance(target, ir.Target):
                not_read = ir.walk(target)
            else:
                continue  # not a plain store: its parts count as reads
            for n in not_read:
                if n.__class__ in _READS:
                    stores[n.ident] = stores.get(n.ident, 0) + 1
    return frozenset(ident for ident in fed if reads[ident] == stores[ident])


def _unweighed(node: Any) -> Any:
    """A self-fed variable's ``+`` chain (guarded by then) with only the size checks."""
    if isinstance(node, ir.Helper) and node.name == "limits.add" and len(node.args) == 3:
        _, left, right = node.args
        return ir.Helper("limits.concat", (_unweighed(left), _unweighed(right)), span=node.span)
    if isinstance(node, ir.Helper) and node.name == "limits.add_item" and len(node.args) == 3:
        _, left, item = node.args
        return ir.Helper("limits.concat", (_unweighed(left), ir.ListLit((item,))), span=node.span)
    return node


def _feeds_itself(node: Any) -> bool:
    """An assignment of a ``+`` chain that reads its own target (``l = l + [m]``): what
    :func:`_self_fed` looks for (none: it has nothing to find)."""
    target, value = node.target, node.value
    if not (isinstance(target, ir.Name) and target.ident and isinstance(value, ir.BinOp)):
        return False
    return value.op == "+" and any(
        isinstance(operand, ir.Name) and operand.ident == target.ident for operand in _chain(value)
    )


def run(module: ir.Module) -> ir.Module:
    # one walk: the loops' counters, and whether a variable may feed itself (rare: only then
    # is _self_fed's walk of every read needed) or any node has a rule (else nothing changes)
    counted: set = set()
    feeds = ruled = False
    for n in ir.of_classes(ir.walk(module.body), _RULED_OR_LOOP):
        cls = n.__class__
        if cls in _RULED:
            ruled = True
            if cls is ir.Assign and not feeds:
                feeds = _feeds_itself(n)
        elif cls is ir.For and n.counter:
            counted.add(n.counter)
    if not ruled:
        return module
    counters = frozenset(counted)
    self_fed = _self_fed(module.body) if feeds else frozenset()

    def guard(node: Any, looped: bool) -> Any:
        target = node.target if isinstance(node, ir.Assign) else None
        if isinstance(target, ir.Name) and target.ident in self_fed:
            return ir.replace(node, value=_unweighed(node.value))
        return _guard(node, counters, looped)

    guard.counters = counters  # type: ignore[attr-defined]  # read by _written

    return ir.replace(module, body=_map_guarded(module.body, guard))
