"""Loops over the input, which need no charge: :class:`InputLoops` (used by ``fuel.FuelEmitter``).
The module is long because the analysis is one piece (see its last paragraph).

A loop that runs at most once per render (in no loop body, in no function the template
defines) over a part of the input (``messages``, ``message.tool_calls``, a slice or a
selection of one) makes as many iterations as the input has items: the caller's data, not
the template, decides its length, as it does for every renderer. When its body is also
*light*, each iteration's work is bounded by the input too (every value the body prints,
compares or converts is a part of the input or a constant; the functions of the template it
calls pay for each call, or are leaves whose body is light with the parts passed to them; a
nested loop or a guarded operation pays for itself), so the loop needs no charge: the
render's end still measures the output it wrote (``limits.settle``). That saves the charge
(~60 ns a loop) on the commonest loop of a chat template.

A *part* (:meth:`InputLoops.part`) is a value whose size is bounded by the input's and the
template's: the context, a constant, an item, attribute, slice or selection of a part, a
``+`` of parts, a linear method of one. A name is a part when every binding of it gives one,
computed as a least fixpoint, so a value fed by itself through anything that can grow it
(``x = x ~ x`` in a loop) is never a part, while one fed back through a slice or a
selection (``messages = messages[1:]``), which only shrinks, stays one (:func:`_shrinks`).

Each part has a *degree* (:meth:`InputLoops.degree`): how many times the input's and the
template's size it can be. A ``+`` adds its operands' degrees and nothing else does, and no
part is past :data:`DEGREE_MAX`; so a chain of sums (``a1 = a0 + a0``, ``a2 = a1 + a1``)
stops being parts at its third link, and doubling cannot hide in them.

The same notion spares a ``+`` its weighing, or every check when its sum is a part itself:
``FuelEmitter.fuel_parts``.

It is one piece: the parts' fixpoint, the degrees, the
loop bodies' lightness and the calls into leaf functions read one another, and splitting
them would pass their state (the names' degrees, the loop items, the Bind temps) through
every call.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from . import ir

_FOR = frozenset({ir.For})

#: the classes of the nodes ``_scan`` looks at
_SCANNED = frozenset({ir.Bind, ir.Assign, ir.For, ir.FuncDef, ir.DictLookup})


#: helpers whose value is a part of their first argument or of the same order of size as
#: their arguments together (an item, an attribute, a slice, a string conversion, a
#: selection or reordering of items, a JSON text), at a cost linear in those sizes
_PARTS = frozenset({
    "jinja.getattr_", "jinja.getitem", "jinja.subscript", "builtins.slice", "jinja.to_str",
    "jinja.concat", "builtins.type", "builtins.isinstance", "jinja.undefined",
    "jinja.cond_undefined", "jinja_filters.select_list",
    "limits.concatenated",  # a text checked as it is made (``passes/fstrings.py``): itself
    "limits.nested",  # a value a namespace keeps, its tuples' nesting measured: itself
    *(f"jinja_filters.do_{f}" for f in (
        "trim", "upper", "lower", "capitalize", "string", "d", "default", "selectattr",
        "rejectattr", "select", "reject", "reverse", "list", "sort", "unique", "dictsort",
        "items", "first", "last", "safe", "count", "length", "tojson", "join", "int", "float",
    )),
    # Go: a field or an element's field (or its text), an item, the items a range visits
    # (``range_values`` of a number charges its count itself), the context's data view
    "gotmpl.field", "gotmpl.field_of_elem", "gotmpl.field_path", "gotmpl.print_field",
    "gotmpl.print_field_of_elem", "gotmpl.print_field_path", "gotmpl.range_values",
    "gotmpl.range_pairs", "gotmpl.index", "gotmpl.to_str", "gotmpl.to_json", "gotmpl.eq",
    "gotmpl.ne", "gotmpl.slice_length", "ollama.cut_data", "ollama.is_cut_run",
    *(f"jinja_filters.test_{t}" for t in (
        "mapping", "iterable", "sequence", "boolean", "number", "integer", "float", "string",
        "none", "defined", "undefined",
    )),
})
#: helpers that store a reference (namespace attributes): their value is None
_STORES = frozenset({"jinja.ns_set", "jinja.ns_store", "jinja.ns_check"})
#: the ``+`` of two values, with the render's registry first (``limits.concat``: without):
#: their sizes add up (``InputLoops.degree``)
_SUMS = frozenset({"limits.add", "limits.add_item", "limits.concat"})
#: ``len`` (``|length``, ``|count``): a number, in O(1)
_LENGTHS = frozenset({"jinja_filters.do_length", "jinja_filters.do_count", "builtins.len"})
#: comparisons (a number compared with anything takes O(1), or raises a TypeError)
_ORDERS = frozenset({"<", "<=", ">", ">=", "==", "!="})
#: the largest part, in units of the input's and the template's size together: a ``+`` of
#: parts the runtime does not check is at most this many times the input
DEGREE_MAX = 4
#: methods of a built-in ``str`` / ``dict`` (called directly: ``LoopAttr``) whose value is
#: no larger than the receiver and its arguments, at a linear cost
_LINEAR_METHODS = frozenset({
    "strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "split", "splitlines",
    "startswith", "endswith", "items", "keys", "values", "get",
})
#: a literal loops over at most this many items without a charge (longer: the template's
#: size, not the input's, would decide the count)
_SHORT_LITERAL = 1024


class InputLoops:
    """Which top-level loops of ``module`` run over a part of the input with a light body
    (:meth:`unmetered`). ``derived`` names are those every binding of which gives a part of
    the input or a constant (:meth:`_fixpoint`)."""

    def __init__(self, module: ir.Module, closed: Callable[[Any], bool]) -> None:
        """``closed``: whether a function (its ``FuncDef``) pays nothing as it starts
        (``fuel.closed_functions``): one that does pays for each call of it."""
        self.derived: dict = {}  # name -> degree (:meth:`degree`)
        binds, funcs, self.loop_objects, self.bound = _scan(module)
        #: loop counters and last indexes: numbers
        self.numbers = {
            ident for node in ir.of_classes(ir.walk(module), _FOR)
            for ident in (node.counter, node.last) if ident
        }
        #: values the render assigns at most once (in no loop body, in no function), and
        #: values a loop body assigns at most once an iteration to a name the iteration set
        #: before from something else (:func:`_once_an_iteration`): each grows a fresh value once
        self.once = {id(stmt.value) for stmt in _straight(module.body) if isinstance(stmt, ir.Assign)}
        for node in ir.of_classes(ir.walk(module), _FOR):
            self.once |= _once_an_iteration(node.body)
        #: functions whose every call pays as it starts (``CALL_COST``): the ones that are
        #: not closed (a closed one's calls are paid by its callers' loops, which this loop is not)
        self.paying = {f.ident for f in funcs if not closed(f)}
        #: closed functions ("leaves": their calls pay nothing): light when called with parts
        self.leaves = {f.ident: f for f in funcs if f.ident not in self.paying}
        self.judging: set = set()  # Bind temps whose value is being judged (no cycle)
        self.itemwise = False  # judging a loop's body: parts are pieces of its items
        #: judging a top-level loop's body: its counter and last-index locals and its loop
        #: object (a test of them can hold in one iteration only), and the names that are
        #: parts outside it
        self.single: Optional[tuple] = None
        #: the values a top-level loop's body binds in a branch of one iteration, and the
        #: names that are parts outside the loop (its fixpoint judges them as straight code)
        self.single_values: tuple = (frozenset(), {})
        self.derived = self._fixpoint(binds, {"context": 1})  # Go's data: Local("context")
        #: names every binding of which is a short constant (``{% set c = '' %}``): parts
        #: of any size, item-sized too
        values: dict = {}
        for ident, value in binds:
            values.setdefault(ident, []).append(value)
        self.constants = {i for i, vs in values.items() if all(_short_constant(v) for v in vs)}

    def _fixpoint(self, binds: list, known: dict) -> dict:
        """The names of ``binds`` (``(ident, value)``; value None: not a part) every binding
        of which gives a part, by their degrees (:meth:`degree`), with ``known`` names parts
        too. The least fixpoint (by a worklist: a name found to be one sends back the names
        whose bindings read it), so a name is a part only through a chain of bindings that
        starts at the input or a constant: a value fed by itself (``x = x + x`` in a loop)
        never is, whatever its operation."""
        outer = self.derived
        self.derived = dict(known)
        values: dict = {}
        for ident, value in binds:
            values.setdefault(ident, []).append(value)
        readers: dict = {}
        fed: set = set()  # ids of the values that read their own name
        for ident, group in values.items():
            for value in group:
                for node in ir.walk(value) if value is not None else ():
                    if isinstance(node, (ir.Name, ir.Local)):
                        readers.setdefault(node.ident, set()).add(ident)
                        if node.ident == ident:
                            fed.add(id(value))
        work = list(values)
        while work:
            ident = work.pop()
            if ident in self.derived:
                continue
            degree = self._binds_degree(ident, values[ident], fed)
            if degree is not None:
                self.derived[ident] = degree
                work.extend(readers.get(ident, ()))
        found, self.derived = self.derived, outer
        return found

    def _binds_degree(self, ident: str, group: list, fed: set) -> Optional[int]:
        """The degree of a name bound to each value of ``group`` (None: one gives no part).
        A value that reads ``ident`` itself (``fed``) only through operations that take a
        part of their operand (``messages = messages[1:]``, a selection, a choice between
        values) adds nothing of its own: it gives a part of what another binding gave, or of
        its other operands. One the render makes once that reads ``ident`` once
        (``messages = [system] + messages``) adds what it adds, once. So the name's degree
        is the largest its other bindings give, plus each such growth."""
        if any(value is None for value in group):
            return None
        base = [self._bound_degree(v) for v in group if id(v) not in fed]
        if None in base:
            return None
        start = max(max(base, default=1), 1)  # a name holds a unit at least (``a0 + a0``)
        if len(base) == len(group):
            return start
        grown = 0
        shrunk = start
        self.derived[ident] = start
        try:
            for value in group:
                if id(value) not in fed:
                    continue
                shrinks = _shrinks(value, ident)
                if not shrinks and not (id(value) in self.once and _once_grown(value, ident)):
                    return None
                degree = self._bound_degree(value)
                if degree is None:
                    return None
                if shrinks:
                    shrunk = max(shrunk, degree)
                else:
                    grown += max(0, degree - start)
        finally:
            del self.derived[ident]
        return shrunk + grown if shrunk + grown <= DEGREE_MAX else None

    def feeds(self, node: ir.For, items: frozenset) -> bool:
        """Whether loop ``node`` walks the input once a render: at the top level over a part
        (``items`` empty), or, in such loops, over a part of one of their items (``items``:
        their targets; ``for c in m.tool_calls`` in ``for m in messages``): all its
        iterations together are then as many as the input has items, not the product of the
        loops' lengths."""
        iterable = node.iter
        if isinstance(iterable, ir.Const) and isinstance(iterable.value, (str, list, tuple, dict)):
            if len(iterable.value) > _SHORT_LITERAL:
                return False
        elif isinstance(iterable, (ir.ListLit, ir.TupleLit)) and len(iterable.items) > _SHORT_LITERAL:
            return False
        if items and not self._rooted(iterable, items):
            return False
        outer = self.derived
        self.derived = outer | dict.fromkeys(items, 1)
        try:
            return self.part(iterable)
        finally:
            self.derived = outer

    def unmetered(self, node: ir.For, items: frozenset = frozenset()) -> bool:
        """Whether loop ``node`` needs no charge: it walks the input once a render
        (:meth:`feeds`, ``items`` the targets of the loops it is in) and its body is light.
        Its body's names are judged by the bindings in the body (a loop's target and the
        names it sets reach no read outside it: the scope pass names them apart), so a loop
        target that is also a macro's parameter elsewhere is still a part here."""
        if not self.feeds(node, items):
            return False
        inner = [(ident, ir.Const(0)) for ident in target_idents(node.target)]
        inner += _scan(node.body)[0]
        outer, once, itemwise = self.derived, self.once, self.itemwise
        self.once = once | _once_an_iteration(node.body)
        # in the body, a part is a piece of the loops' items (or a constant): what an
        # iteration prints, compares, converts or builds is then as long as its item, so all
        # iterations together do work and make text in proportion to the input; a value of
        # the whole input (``tools``, a join of every message) used once an iteration would
        # be the input's size times the number of items, so it is not one here
        self.itemwise = True
        single, single_values = self.single, self.single_values
        # a top-level loop's first or last iteration runs once a render: what it does under
        # such a test is straight code (the whole input's values are parts there); a name it
        # sets there holds that value in that iteration only (each iteration starts from the
        # value outside the loop, as jinja2's do)
        self.single = (node.counter, node.last, node.loop, {}) if not items else None
        self.single_values = (self._single_values(node.body), outer) if not items else (frozenset(), {})
        self.derived = {}
        self.derived = self._fixpoint(inner, dict.fromkeys(set(items) | self.constants, 1))
        if self.single is not None:
            self.single = (*self.single[:3], outer | self.derived)
        try:
            return (node.filter is None or self.cheap(node.filter)) and self.light(node.body)
        finally:
            self.derived, self.once, self.itemwise = outer, once, itemwise
            self.single, self.single_values = single, single_values

    def _single_values(self, body: tuple) -> frozenset:
        """The ids of the values ``body`` (a top-level loop's) assigns under a test that
        holds in one iteration (:meth:`_one_iteration`), in the body's own statements."""
        found: set = set()
        for stmt in body:
            if isinstance(stmt, ir.If):
                if self._one_iteration(stmt.test):
                    found.update(id(n.value) for n in ir.walk(stmt.body) if isinstance(n, ir.Assign))
                else:
                    found |= self._single_values(stmt.body) | self._single_values(stmt.orelse)
        return frozenset(found)

    def _bound_degree(self, value: Any) -> Optional[int]:
        """A binding's degree, judged as straight code when a top-level loop's body makes
        it in a branch of one iteration (:attr:`single_values`)."""
        values, outer = self.single_values
        if id(value) not in values or not self.itemwise:
            return self.degree(value)
        saved = self.derived, self.itemwise, self.single
        self.derived, self.itemwise, self.single = outer | self.derived, False, None
        try:
            return self.degree(value)
        finally:
            self.derived, self.itemwise, self.single = saved

    def _rooted(self, e: Any, items: frozenset) -> bool:
        """``e`` is a piece of one of ``items`` (an item, attribute, slice, selection, a
        piece of a string method, a choice between such pieces)."""
        followed: set = set()  # Bind temps read through (each once: no cycle)
        while True:
            if isinstance(e, (ir.Name, ir.Local)):
                if e.ident in items:
                    return True
                if isinstance(e, ir.Local) and e.ident in self.bound and e.ident not in followed:
                    followed.add(e.ident)
                    e = self.bound[e.ident]
                    continue
                return False
            if isinstance(e, ir.Bind):
                e = e.value
            elif isinstance(e, ir.DictLookup):
                e = e.bind if e.bind is not None else e.obj
            elif isinstance(e, ir.Helper) and e.name in _SUBS and e.args:
                e = e.args[0]
            elif isinstance(e, ir.CondExpr):
                return self._rooted(e.body, items) and self._rooted(e.orelse, items)
            else:
                call = _method_call(e)
                if call is None or call[1] not in _KEEPING:
                    return False
                e = call[0]

    def part(self, e: Any) -> bool:
        """``e``'s value is a part of the input or of the template (or a number or truth
        made from such parts), computed at a cost linear in their sizes: it has a degree."""
        return self.degree(e) is not None

    def degree(self, e: Any) -> Optional[int]:
        """How many times the input's and the template's size ``e``'s value can be, when it
        is a part (None when it is not). A ``+`` adds its operands' degrees, which no other
        operation does: an item, a slice, a selection, a linear method or a choice is as
        large as the largest of its operands, and what the runtime checks as it builds it
        (``~``, a filter, a macro's or a block's text) is refused past the output limit and
        paid for. A constant is 0 (the template's own, once an evaluation), a name 1 at
        least. No part is larger than :data:`DEGREE_MAX`, so a chain of sums the runtime
        does not check (``a1 = a0 + a0``, ``a2 = a1 + a1``...: ``fuel_parts``) stops at the
        first that would be: each sum is bounded by the input, never by 2 to the power of
        the template's length."""
        if isinstance(e, (ir.Const, ir.Ref)):
            return 0
        if isinstance(e, ir.ContextGet):
            return None if self.itemwise else 1  # the input's value: no item's piece
        if isinstance(e, ir.Local) and e.ident in self.bound:
            if e.ident in self.judging:
                return None
            self.judging.add(e.ident)
            try:
                return self.degree(self.bound[e.ident])
            finally:
                self.judging.discard(e.ident)
        if isinstance(e, (ir.Name, ir.Local)):
            return self.derived.get(e.ident)
        if isinstance(e, (ir.Bind, ir.Hoisted)):
            return self.degree(e.value)
        if isinstance(e, ir.DictLookup):
            obj = e.bind if e.bind is not None else e.obj
            return None if self.degree(e.key) is None else self._largest((obj, e.fallback))
        call = _method_call(e)
        if call is not None:  # a built-in method of a part (``s.strip()``, ``d.items()``)
            receiver, name, args = call
            return self._largest((receiver, *args)) if _linear(name, args) else None
        if isinstance(e, ir.Helper) and e.name in _LENGTHS and len(e.args) == 1 and not e.kwargs:
            return 0 if self.cheap(e.args[0]) else None  # ``len``: a number, in O(1)
        if isinstance(e, ir.Helper) and e.name == "builtins.slice" and not e.kwargs:
            # its bounds are numbers or None (anything else raises as the slice is taken):
            # whatever they are, the slice is a piece of what it is taken from
            return 0 if all(self.cheap(a) for a in e.args) else None
        if isinstance(e, ir.Helper) and e.name in _SUMS and not e.kwargs:
            return self._sum(e.args[1:] if e.name != "limits.concat" else e.args)
        if isinstance(e, ir.Helper):
            if e.name not in _PARTS or not all(isinstance(v, ir.Const) for _, v in e.kwargs):
                return None  # (a constant keyword: ``indent=4``)
            return self._largest(e.args)
        if isinstance(e, ir.BinOp):  # one the limits pass left unguarded (``passes/limits.py``)
            return self._sum((e.left, e.right)) if e.op == "+" else self._largest((e.left, e.right))
        if isinstance(e, ir.Format):  # a ``+`` chain's parts, joined (``passes/fstrings.py``)
            return self._sum(e.parts)
        if isinstance(e, ir.UnaryOp):
            return self.degree(e.operand)
        if isinstance(e, ir.BoolOp):
            return self._largest(e.values)
        if isinstance(e, (ir.ListLit, ir.TupleLit)):
            return self._sum(e.items)  # printed, it prints each item
        if isinstance(e, ir.DictLit):
            return self._sum([v for item in e.items for v in item])
        if isinstance(e, ir.CondExpr):
            if not self.cheap(e.test):
                return None
            if self._one_iteration(e.test):
                body = self._single(lambda: self.degree(e.body))
                orelse = self.degree(e.orelse)
                return None if body is None or orelse is None else max(body, orelse)
            return self._largest((e.body, e.orelse))
        if isinstance(e, (ir.Compare, ir.Not)):
            return 0 if self.cheap(e) else None  # a truth
        if isinstance(e, ir.LoopAttr):  # a loop object's field, a built-in's method
            loop = e.loop
            if isinstance(loop, (ir.Name, ir.Local)) and loop.ident in self.loop_objects:
                return 0
            return self.degree(loop)
        if isinstance(e, ir.Capture):  # its text is checked as it is joined
            return 1 if self.light(e.body) else None
        if isinstance(e, ir.CallFunc):  # a leaf macro's text, made of parts (checked too)
            return 1 if e.ident in self.leaves and self._light_call(e) else None
        return None

    def _largest(self, operands: Any) -> Optional[int]:
        """The largest degree of ``operands`` (None if one is no part)."""
        largest = 0
        for operand in operands:
            degree = self.degree(operand)
            if degree is None:
                return None
            largest = max(largest, degree)
        return largest

    def _sum(self, operands: Any) -> Optional[int]:
        """The degree of what holds or joins ``operands``: their degrees added, None past
        :data:`DEGREE_MAX`."""
        total = 0
        for operand in operands:
            degree = self.degree(operand)
            if degree is None:
                return None
            total += degree
            if total > DEGREE_MAX:
                return None
        return total

    def _number(self, e: Any) -> bool:
        """``e`` is a number: a numeric constant, a loop's counter or last index, a length,
        or arithmetic of such numbers."""
        if isinstance(e, ir.Const):
            return type(e.value) in (int, float)
        if isinstance(e, (ir.Name, ir.Local)):
            return e.ident in self.numbers
        if isinstance(e, ir.BinOp) and e.op in ("+", "-", "*", "//", "%"):
            return self._number(e.left) and self._number(e.right)
        if isinstance(e, ir.UnaryOp):
            return self._number(e.operand)
        return isinstance(e, ir.Helper) and e.name in _LENGTHS and len(e.args) == 1 and self.cheap(e.args[0])

    def _one_iteration(self, test: Any) -> bool:
        """``test`` holds in one iteration at most of the top-level loop being judged: its
        first (``loop.first``, ``loop.index0 == 0``) or its last (``loop.last``)."""
        if self.single is None:
            return False
        counter, last, loop = self.single[:3]
        if isinstance(test, ir.BoolOp) and test.op == "and":
            return any(self._one_iteration(v) for v in test.values)
        if isinstance(test, ir.CondExpr):  # ``_i == _n if _n is not None else loop.last``
            return self._one_iteration(test.body) and self._one_iteration(test.orelse)
        if isinstance(test, ir.LoopAttr) and test.attr in ("first", "last"):
            return isinstance(test.loop, (ir.Name, ir.Local)) and bool(loop) and test.loop.ident == loop
        if isinstance(test, ir.Compare) and len(test.ops) == 1 and test.ops[0][0] == "==":
            sides = {_ident(test.left), _ident(test.ops[0][1])}
            zero = any(isinstance(v, ir.Const) and type(v.value) is int and v.value == 0 for v in (test.left, test.ops[0][1]))
            return bool(counter) and counter in sides and (zero or bool(last) and last in sides)
        return False

    def _single(self, judge: Callable[[], Any]) -> Any:
        """``judge()`` as in straight code: the branch of a top-level loop's body that runs
        in one iteration (:meth:`_one_iteration`) may use the whole input's values (they
        are parts, not only the items' pieces), once a render."""
        assert self.single is not None
        saved = self.derived, self.itemwise, self.single
        self.derived, self.itemwise, self.single = self.single[3], False, None
        try:
            return judge()
        finally:
            self.derived, self.itemwise, self.single = saved

    def cheap(self, e: Any) -> bool:
        """``e`` costs O(the sizes of the input and the template) whatever the values it
        reads hold (a truth, an identity test, a comparison with a constant, a read)."""
        if isinstance(e, (ir.Name, ir.Local, ir.ContextGet)):
            return True  # a read; its value is used only where that costs O(1)
        if isinstance(e, ir.Helper) and e.name in _LENGTHS and len(e.args) == 1 and not e.kwargs:
            return self.cheap(e.args[0])  # ``len``, in O(1)
        if isinstance(e, ir.BinOp) and e.op in ("+", "-"):  # a count moved by a constant
            number = [isinstance(v, ir.Const) and type(v.value) in (int, float) for v in (e.left, e.right)]
            if any(number):
                return self.cheap(e.left) and self.cheap(e.right)
        if isinstance(e, ir.CallFunc):
            if e.ident in self.paying:  # its work is counted: each call pays as it starts
                return all(self.cheap(a) for a in e.args)
            return self._light_call(e)
        if isinstance(e, ir.Not):
            return self.cheap(e.operand)
        if isinstance(e, ir.BoolOp):
            return all(self.cheap(v) for v in e.values)
        if isinstance(e, ir.CondExpr):
            return self.cheap(e.test) and self.cheap(e.body) and self.cheap(e.orelse)
        if isinstance(e, ir.DictLookup):
            obj = e.bind if e.bind is not None else e.obj
            return self.cheap(obj) and self.part(e.key) and self.cheap(e.fallback)
        if isinstance(e, ir.Bind):
            return self.cheap(e.value)
        if isinstance(e, ir.Helper) and e.name in ("jinja.getattr_", "jinja.getitem"):
            return not e.kwargs and self.cheap(e.args[0]) and all(self.part(a) for a in e.args[1:])
        if isinstance(e, ir.Helper) and e.name == "jinja.subscript" and len(e.args) == 2 and not e.kwargs:
            # an item read by a number or a name (``messages[loop.index0 - 1]``, inline): O(1)
            # (a slice, a copy as long as what it takes, is a part but not cheap)
            key = e.args[1]
            return self.cheap(e.args[0]) and (self._number(key) or isinstance(key, ir.Const) and type(key.value) is str)
        if isinstance(e, ir.Helper) and (e.name in ("builtins.type", "builtins.isinstance") or e.name.startswith("jinja_filters.test_")):
            return not e.kwargs and all(self.cheap(a) for a in e.args)  # a type test
        if isinstance(e, ir.Compare):
            operands = [e.left, *(v for _, v in e.ops)]
            for (op, right), left in zip(e.ops, operands):
                if op in ("is", "is not") and self.cheap(left) and self.cheap(right):
                    continue
                if op in ("==", "!=") and (_scalar(left) and self.cheap(right) or _scalar(right) and self.cheap(left)):
                    continue  # a comparison with a number or a short string stops early
                if op in ("==", "!=") and (self.part(left) and self.cheap(right) or self.part(right) and self.cheap(left)):
                    continue  # equality walks no more than the smaller side: O(the part)
                if op in _ORDERS and (self._number(left) and self.cheap(right) or self._number(right) and self.cheap(left)):
                    continue  # a number compared with anything: O(1) (or a TypeError)
                if not (self.part(left) and self.part(right)):
                    return False
            return True
        return self.part(e)

    def _light_call(self, e: ir.CallFunc) -> bool:
        """A call of a closed function (it pays nothing as it starts) with parts for
        arguments, whose body is light with its parameters taken as those parts: it does
        this loop's kind of work, once a call. The closed functions it calls are judged the
        same way (they call one another without a cycle, in a tree of bounded cost:
        ``fuel.closed_functions``)."""
        func = self.leaves.get(e.ident)
        if func is None or len(e.args) > len(func.params) or not all(self.part(a) for a in e.args):
            return False
        if not all(p.default is None or isinstance(p.default, ir.Const) for p in func.params[len(e.args):]):
            return False  # a default computed in the call (not judged here)
        params = [(i, ir.Const(0)) for p in func.params for i in target_idents(p.name)]
        inner = params + [(i, v) for i, v in _scan((func.prologue, func.body))[0] if i not in self.derived]
        outer = self.derived
        self.derived = self._fixpoint(inner, outer)
        try:
            return self.light(func.prologue) and self.light(func.body)
        finally:
            self.derived = outer

    def printed_call(self, e: Any) -> bool:
        """``e`` prints what a call of a value the context holds gives (an environment
        global, ``raise_exception``, or the caller's function; never a function of the
        template, whose names are not parts), with arguments that are parts: the callee's
        work is the caller's (a global bounds its own), and what it returns is printed.
        (Its value is no part: ``range(n)`` is not iterated without a charge.)"""
        if isinstance(e, ir.Helper) and e.name == "jinja.to_str" and len(e.args) == 1:
            e = e.args[0]
        if isinstance(e, ir.CallFunc):  # a macro's text: its joined output is checked
            return self.cheap(e)
        return (
            isinstance(e, ir.Helper)
            and e.name == "jinja.call"
            and not e.kwargs
            and bool(e.args)
            and isinstance(e.args[0], (ir.Name, ir.ContextGet))
            and all(self.part(a) for a in e.args[1:])
        )

    def light(self, body: Any) -> bool:
        """Every statement of ``body`` is light (see the section's comment); a nested loop
        counts for itself (only its items are computed here)."""
        for stmt in body:
            if isinstance(stmt, ir.Text) or isinstance(stmt, (ir.Break, ir.Continue)):
                continue
            if isinstance(stmt, ir.Output):
                ok = self.part(stmt.expr) or self.printed_call(stmt.expr)
            elif isinstance(stmt, ir.If):
                body = self._single(lambda: self.light(stmt.body)) if self._one_iteration(stmt.test) else None
                ok = self.cheap(stmt.test) and (self.light(stmt.body) if body is None else body) and self.light(stmt.orelse)
            elif isinstance(stmt, ir.Assign):
                ok = self.cheap(stmt.value)
            elif isinstance(stmt, ir.ExprStmt):
                e = stmt.expr
                ok = (
                    isinstance(e, ir.Helper) and e.name in _STORES and not e.kwargs
                    and all(self.cheap(a) for a in e.args)
                ) or self.part(e) or isinstance(e, ir.CallFunc) and self.cheap(e)
            elif isinstance(stmt, ir.For):  # its body pays at its own start; its else runs here
                ok = not stmt.recursive and self.cheap(stmt.iter) and self.light(stmt.else_)
            elif isinstance(stmt, ir.Scoped):
                ok = all(self.cheap(b.value) for b in stmt.bindings) and self.light(stmt.body)
            else:
                ok = False
            if not ok:
                return False
        return True


def _straight(body: Any) -> Any:
    """The statements of ``body`` that run at most once a render: not in a loop body, not
    in a function (through ``if`` branches and ``with`` blocks)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ir.If):
            yield from _straight(stmt.body)
            yield from _straight(stmt.orelse)
        elif isinstance(stmt, ir.Scoped):
            yield from _straight(stmt.bindings)
            yield from _straight(stmt.body)


def _once_an_iteration(body: tuple) -> set:
    """Values ``body`` assigns at most once an iteration to a name it assigned before in the
    same iteration, unconditionally, from something else (``{% set c = m.content %}`` then,
    under an ``if``, ``{% set c = bos + c %}``): the later binding reads that iteration's
    value, not the last iteration's, so it grows it once, not once an iteration."""
    killed: set = set()
    found: set = set()
    for stmt in body:
        for inner in _straight((stmt,)):
            if isinstance(inner, ir.Assign):
                names = target_idents(inner.target)
                if any(name in killed for name in names):
                    found.add(id(inner.value))
        if isinstance(stmt, ir.Assign):
            reads = {n.ident for n in ir.walk(stmt.value) if isinstance(n, (ir.Name, ir.Local))}
            killed.update(name for name in target_idents(stmt.target) if name not in reads)
    return found


def _once_grown(value: Any, ident: str) -> bool:
    """``value`` reads ``ident`` once (what it adds to it is no copy of it)."""
    return sum(1 for n in ir.walk(value) if isinstance(n, (ir.Name, ir.Local)) and n.ident == ident) == 1


def _scan(root: Any) -> tuple:
    """One walk of ``root``: ``(ident, value)`` of every binding at or under it (an
    ``Assign``'s value, a loop target's items; ``Const(0)`` for a loop's counter and length,
    None for a loop object, a function and its parameters: never parts), the functions, the
    loop objects' names, and each ``Bind``'s value by its temp (one Bind a temp: a read of
    the temp is a part when the value is, judged where it is read)."""
    binds: list = []
    funcs: list = []
    loops: set = set()
    bound: dict = {}
    for node in ir.of_classes(ir.walk(root), _SCANNED):
        if isinstance(node, ir.Bind):
            bound[node.temp] = node.value
        elif isinstance(node, ir.Assign):
            binds += [(ident, node.value) for ident in target_idents(node.target)]
        elif isinstance(node, ir.For):
            binds += [(ident, node.iter) for ident in target_idents(node.target)]  # its items
            binds += [(ident, ir.Const(0)) for ident in (node.counter, node.last) if ident]
            if node.loop:
                binds.append((node.loop, None))
                loops.add(node.loop)
        elif isinstance(node, ir.FuncDef):
            funcs.append(node)
            binds.append((node.ident, None))
            binds += [(ident, None) for p in node.params for ident in target_idents(p.name)]
        elif isinstance(node, ir.DictLookup):  # its locals: the object, its truth, the item
            if node.bind is not None and isinstance(node.obj, ir.Local):
                binds.append((node.obj.ident, node.bind))
            obj = node.bind if node.bind is not None else node.obj
            if node.cache:
                binds.append((node.cache, obj))  # an item of the object
            if node.flag:
                binds.append((node.flag, ir.Const(True)))
    return binds, funcs, loops, bound


#: helpers whose value is a part of their first argument (an item, an attribute, a slice, a
#: selection, a reordering): what a name fed back through them holds never grows
_SUBS = frozenset({
    "jinja.getattr_", "jinja.getitem", "jinja.subscript", "gotmpl.field", "gotmpl.field_of_elem",
    "gotmpl.field_path", "gotmpl.index", "jinja_filters.select_list",
    *(f"jinja_filters.do_{f}" for f in (
        "selectattr", "rejectattr", "select", "reject", "reverse", "list", "sort", "unique",
        "dictsort", "items", "first", "last", "d", "default",
    )),
})


#: methods whose value is a piece of the receiver or a copy as long (``x = x.strip()``)
_KEEPING = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "split", "splitlines"})


def _number(e: Any) -> bool:
    return isinstance(e, ir.Const) and type(e.value) in (int, float)


def _ident(e: Any) -> Optional[str]:
    return e.ident if isinstance(e, (ir.Name, ir.Local)) else None


def _shrinks(value: Any, ident: str) -> bool:
    """No read of ``ident`` in ``value`` reaches what ``value`` gives through an operation
    that can make it longer: each reaches it only through items, attributes, slices,
    selections, choices (``x if t else y``, ``a or b``), pieces (``split``, ``strip``) or a
    count moved by a constant, or not at all (a test, a key, a comparison's operand)."""
    temps: dict = {}  # a Bind's temp: the worst way one of its reads reaches the value
    while True:  # a Bind's value reaches the value where its temp's reads do
        seen = dict(temps)
        grows = _flows(value, ident, temps)
        if temps == seen:
            return not grows


#: how a read reaches a value's result: not at all, as a part of it, or through growth
_NONE, _SUB, _GROW = 0, 1, 2


def _flows(value: Any, ident: str, temps: dict) -> bool:
    """One pass of :func:`_shrinks`: True when a read of ``ident`` reaches ``value``'s
    result through a growing operation (``temps`` gathers how each Bind temp's reads do)."""
    grows = False
    stack = [(value, _SUB)]
    while stack:
        node, mode = stack.pop()
        if isinstance(node, tuple):
            stack.extend((item, mode) for item in node)
            continue
        if not isinstance(node, ir.Node):
            continue
        if isinstance(node, (ir.Name, ir.Local)):
            if node.ident == ident and mode == _GROW:
                grows = True
            if isinstance(node, ir.Local):
                temps[node.ident] = max(temps.get(node.ident, _NONE), mode)
            continue
        if isinstance(node, ir.Bind):  # its value reaches the result here and where its temp is read
            stack.append((node.value, max(mode, temps.get(node.temp, _NONE))))
            continue
        call = _method_call(node)
        if call is not None and call[1] in _KEEPING:  # a piece or a recased copy of the receiver
            stack.append((call[0], mode))
            stack.extend((a, _NONE) for a in call[2])
            continue
        if isinstance(node, ir.BinOp) and node.op in ("+", "-") and _number(node.right):
            stack.append((node.left, mode))  # a count moved by a constant: as long as it was
            continue
        if isinstance(node, ir.Helper) and node.name in _SUBS:
            first, rest = (node.args[0], node.args[1:]) if node.args else ((), ())
            keep = node.name in ("jinja_filters.do_d", "jinja_filters.do_default")  # a choice
            stack.append((first, mode))
            stack.extend((a, mode if keep else _NONE) for a in rest)
            stack.extend((v, _NONE) for _, v in node.kwargs)
            continue
        if isinstance(node, ir.DictLookup):
            stack += [(node.obj, mode), (node.bind, mode), (node.fallback, mode), (node.key, _NONE)]
            continue
        if isinstance(node, ir.CondExpr):
            stack += [(node.test, _NONE), (node.body, mode), (node.orelse, mode)]
            continue
        if isinstance(node, ir.BoolOp):
            stack.append((node.values, mode))
            continue
        if isinstance(node, (ir.Compare, ir.Not)) or isinstance(node, ir.Helper) and (
            node.name in ("builtins.type", "builtins.isinstance") or node.name.startswith("jinja_filters.test_")
        ):
            stack.extend((child, _NONE) for _, child in ir.children(node))  # a truth
            continue
        inner = _NONE if mode == _NONE else _GROW  # anything else may make it longer
        stack.extend((child, inner) for _, child in ir.children(node))
    return grows


def target_idents(target: Any) -> list:
    if isinstance(target, ir.Name):
        return [target.ident]
    if isinstance(target, ir.Target):
        return [i for t in target.names for i in target_idents(t)]
    return []


def _method_call(e: Any) -> Optional[tuple]:
    """``(receiver, method name, arguments)`` of a call of a method read from a value, with
    positional arguments only: a built-in's called directly (``LoopAttr``, after a type
    test) or any value's through the sandbox (``jinja.call`` of ``getattr_``, or of the
    dict-or-attribute read of it)."""
    if isinstance(e, ir.CallValue) and isinstance(e.func, ir.LoopAttr) and not e.kwargs:
        return e.func.loop, e.func.attr, e.args
    if isinstance(e, ir.Helper) and e.name == "jinja.call" and e.args and not e.kwargs:
        read = e.args[0]
        if isinstance(read, ir.DictLookup) and read.mode == "item":
            receiver, key = (read.bind if read.bind is not None else read.obj), read.key
        elif isinstance(read, ir.Helper) and read.name == "jinja.getattr_" and len(read.args) == 2:
            receiver, key = read.args
        else:
            return None
        if isinstance(key, ir.Const) and type(key.value) is str:
            return receiver, key.value, e.args[1:]
    return None


def _linear(name: str, args: tuple) -> bool:
    """A method whose value is no larger than its receiver and arguments: the linear ones,
    and a ``replace`` of a constant by one no longer."""
    if name in _LINEAR_METHODS:
        return True
    if name == "replace" and len(args) == 2 and all(isinstance(a, ir.Const) for a in args):
        old, new = (a.value for a in args)
        return type(old) is str and type(new) is str and 0 < len(new) <= len(old) or new == ""
    return False


def _operands(e: Any) -> Any:
    return e.values if isinstance(e, ir.BoolOp) else e.items


def _short_constant(e: Any) -> bool:
    """A constant no longer than a short string (a number, a truth, None)."""
    if not isinstance(e, ir.Const):
        return False
    v = e.value
    return v is None or type(v) in (int, float, bool) or type(v) is str and len(v) <= 256


def _scalar(e: Any) -> bool:
    """A constant that compares in O(1): a number, a truth, None, a short string."""
    if not isinstance(e, ir.Const):
        return False
    v = e.value
    return v is None or type(v) in (int, float, bool) or (type(v) is str and len(v) <= 256)
