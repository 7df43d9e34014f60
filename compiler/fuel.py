"""The emitter's fuel counter: what generated code does to count its work (``runtime/limits``).

A loop is charged for all its iterations as it starts: ``_fuel -= length_hint(items) * cost``
(a template's loops only walk finite values, lists, dicts, strings, ranges, so the count is
known before the first iteration; a filter's lazy result has no length, and the filter
paid for its input when it was called: ``limits.charge``). A function the template defines
(macro, call block, recursive loop, Go ``define``) that is not closed starts with ``_fuel -=
CALL_COST`` (a tree of calls can be exponential in the template's size without any loop); a
closed function's calls are paid by its callers (the loop bodies that call it, at
:func:`body_cost`; straight-line code runs once): :func:`closed_functions`. Only when the count goes below zero does
the code call ``refuel``, which takes what the counter owes, lends the next chunk after
checking the render's limits (fuel, output, deadline) and makes the render's meter on its
first call; a loop longer than a chunk iterates checked items (``limits.refuel_loop``), so
the output is still looked at every chunk of work, as a counter ticking per iteration would.
``_fuel`` and ``_m`` are locals of ``render``; nested functions share them (``nonlocal``), so
one counter counts the whole render, and renders that stay within their first chunk never
call the runtime for it (their end reads the context's meter once: :meth:`FuelEmitter.fuel_epilogue`).
Modules without loops or functions carry none of the counter.

Why at the start and not per iteration: a counter tick is ~190 machine instructions
(callgrind, CPython 3.11: ``-=``, a compare, a branch), a few percent of a typical chat
template's iteration; charged at the start, a loop of n iterations pays once. A loop that
breaks early has paid for the rest (the bound errs on the safe side).

An iteration costs in proportion to the work its body does (:func:`body_cost`): one unit,
and one more per :data:`CALLS_PER_FUEL` runtime calls the body makes outside its own
nested loops and functions (which count for themselves), fixed at compile time: a body of
a hundred filter calls runs far fewer iterations on the same fuel as an empty one.
"""

from __future__ import annotations

from typing import Any, Optional

from tmpl2py.runtime.limits import CALL_COST, FIRST_CHUNK

from . import ir
from .fuel_counts import CALLS_PER_FUEL, count_calls as _calls, iter_own_nodes as _iter_own_nodes
from .fuel_counts import own_calls, own_nodes as _own_nodes
from .input_loops import DEGREE_MAX, InputLoops, target_idents
from .quiet import quiet


def body_cost(body: Any, leaves: Optional[dict] = None) -> int:
    """Fuel one iteration of ``body`` costs: 1, plus a unit per CALLS_PER_FUEL calls of the
    body itself (a nested loop's body and a function's pay at their own charge), plus, for
    each call of a closed function (``leaves``: its ident -> what a call of it costs), that
    cost: a closed function pays nothing as it starts, so a loop calling one pays for its work.
    Of an ``if``'s branches (and a conditional expression's) only one runs: the costlier
    counts (a chat template's loop body is a dispatch on the message's role, each branch a
    few calls; their sum charged a 100-message render ten times its work)."""
    return 1 + _calls(body, leaves or {}) // CALLS_PER_FUEL


#: the most one iteration of a loop with no counter may cost (:func:`body_cost`): a body
#: of about a thousand runtime calls, so a loop over the input with a light body still does
#: work in proportion to the input, not to the input times a template-sized body (a closed
#: macro of thousands of statements called once an item); also the largest call tree of a
#: closed function that calls closed functions
UNMETERED_COST = 256


#: helpers that take the render's registry of built containers (``_built``, made in the
#: prologue when the module calls one)
BUILDERS = ("limits.make_tuple", "limits.built_value", "limits.add", "limits.added", "limits.add_item", "limits.mul")


def closed_functions(module: ir.Module) -> dict:
    """The functions of ``module`` that pay nothing as they start, with what a call of one
    costs (:func:`body_cost`, the costs of the closed functions it calls included): its
    callers' loop bodies pay that for each call, as for a leaf. A function is closed when
    nothing calls it but the code that names it (no value holds it: its name is never read,
    so no ``caller``, namespace or argument can reach it), it is in no cycle of such calls,
    and a call of it, with the closed functions it calls, costs at most
    :data:`UNMETERED_COST` (a chain of functions each calling the next twice is exponential
    in the template's length, and straight code runs a function once a call site without a
    loop to pay: past that, each pays for itself). A call runs the parameters' defaults, the
    prologue and the body (:func:`own_code`). What else it calls pays for itself: a function
    a value holds pays as it starts, a value's method or the caller's function is theirs. So
    every cycle of calls, and every call tree larger than a loop body's, still pays at each
    call of a function that is not closed."""
    nodes = ir.walk(module)  # (the emitter walked it first: ``Emitter.module``)
    funcs = {node.ident: node for node in nodes if node.__class__ is ir.FuncDef}
    if not funcs:
        return {}
    values = {node.ident for node in nodes if node.__class__ is ir.Name or node.__class__ is ir.Local}
    callees = {
        ident: {node.ident for node in _own_nodes(own_code(f)) if isinstance(node, ir.CallFunc)}
        for ident, f in funcs.items()
    }
    closed: dict = {}
    state: dict = {}  # ident -> "open" while its callees are judged, then "done" or "cycle"
    # ("cycle": on a cycle of calls by name, or calling a function that is: it pays)

    def judge(ident: str) -> None:
        state[ident] = "open"
        cyclic = False
        for callee in callees[ident]:
            if callee not in funcs:
                continue
            if state.get(callee) == "open":
                cyclic = True  # a cycle: every function on it pays (none is judged closed)
                continue
            if callee not in state:
                judge(callee)
            if state[callee] == "cycle":
                cyclic = True
        state[ident] = "cycle" if cyclic else "done"
        if cyclic or ident in values:
            return
        cost = body_cost(own_code(funcs[ident]), closed)
        if cost <= UNMETERED_COST:
            closed[ident] = cost

    for ident in funcs:
        if ident not in state:
            judge(ident)
    return closed


def own_code(f: ir.FuncDef) -> tuple:
    """What a call of function ``f`` runs: its parameters' defaults (evaluated in the call),
    its prologue and its body."""
    return (tuple(p.default for p in f.params if p.default is not None), f.prologue, f.body)


#: what a loop in render's straight code (in no loop body, no function: it starts at most
#: once a render) may run uncounted: a loop of at most ``ONCE_FREE // cost`` items only
#: compares its count with that (``if length_hint(items, LAZY) > 64 or holding:``), it
#: subtracts nothing from the counter (the subtraction and its test were most of what the
#: bounds cost a small render); the first :data:`ONCE_LOOPS` such loops of a template, so
#: at most ``ONCE_FREE * ONCE_LOOPS`` units a render go uncounted (a few dozen microseconds)
ONCE_FREE = 256
ONCE_LOOPS = 4


#: calls render's straight code makes between two charges of what they cost
#: (:meth:`FuelEmitter.fuel_statement`): 64 units of work
STRAIGHT_OWED = 64 * CALLS_PER_FUEL


def _has_loop(body: Any) -> bool:
    return any(isinstance(node, ir.For) for node in _iter_own_nodes(body))


#: statements of straight code (in a function's or the render's own blocks) between two
#: looks at the context's meter where a long value exists (:meth:`FuelEmitter.fuel_look`)
STRAIGHT_LOOK = 64


def _long(body: Any) -> bool:
    """``body`` holds :data:`STRAIGHT_LOOK` statements or more (outside its functions): its
    straight code looks at the meter as it runs (and so shares render's counter)."""
    count = 0
    for node in _iter_own_nodes(body):
        if isinstance(node, ir.Stmt):
            count += 1
            if count >= STRAIGHT_LOOK:
                return True
    return False


#: pieces of output past which a render's end measures it even unmarked: this many pieces
#: of the longest string a render makes unmarked (``limits.UNMARKED``) stay near the cap
SETTLE_PIECES = 256


class FuelEmitter:
    """Mixed into ``emit.Emitter``: the lines of the counter (``self.line``, ``helper_name``)."""

    fuel_enabled = True  # False: a module without the counter (``build.emitted(bounded=False)``)
    fuel_used = False
    fuel_functions = 0  # how many template functions enclose the code being emitted
    fuel_loops = 0  # how many loop bodies enclose it
    #: the targets of the loops around it that walk the input once (None: one does not)
    fuel_items: Optional[frozenset] = frozenset()
    fuel_module: Optional[ir.Module] = None  # the module being emitted (bounded)
    fuel_inputs: Optional["InputLoops"] = None  # its top-level input loops, once asked
    fuel_leaf_costs: Optional[dict] = None  # its closed functions' costs, once asked
    fuel_body_costs: Optional[dict] = None  # id(loop body) -> (body, its cost)
    fuel_straight = 0  # statements written since the last look (:meth:`fuel_statement`)
    fuel_owed = 0  # calls render's straight code made since its last charge, in this block
    fuel_branches = 0  # the most a block of the statement being written still owes
    fuel_once = 0  # loops of render's straight code given their first items (``ONCE_LOOPS``)

    def fuel_tick(self, cost: Any = 1, items: str = "", unit: int = 1) -> None:
        """Pay ``cost`` (a constant, or the source of a count): a call; with ``items`` (a
        plain name), a loop's start (``unit``: one iteration's cost)."""
        if not self.fuel_enabled:
            return
        self.fuel_used = True
        out = "None" if self.fuel_functions else "_out"
        self.line(f"_fuel -= {cost}")  # type: ignore[attr-defined]
        if items:  # a loop is looked at as it starts in a render holding a long value
            holding = self.helper_name("limits.holding")  # type: ignore[attr-defined]
            self.line(f"if _fuel < 0 or {holding}:")  # type: ignore[attr-defined]
        else:
            self.line("if _fuel < 0:")  # type: ignore[attr-defined]
        if items:
            again = self.helper_name("limits.refuel_loop")  # type: ignore[attr-defined]
            write = f", {self.writer}" if self.fuel_functions else ""  # type: ignore[attr-defined]
            self.line(f"    _m, _fuel, {items} = {again}(_m, {out}, _fuel, {items}, {unit}{write})")  # type: ignore[attr-defined]
        else:
            refuel = self.helper_name("limits.refuel")  # type: ignore[attr-defined]
            self.line(f"    _m, _fuel = {refuel}(_m, {out}, _fuel)")  # type: ignore[attr-defined]

    def fuel_unmetered(self, node: ir.For) -> bool:
        """A loop that needs no charge: in no function, walking the input once a render (at
        the top level over a part of it, or over a part of an item of such loops it is in),
        with a light body (:class:`InputLoops`)."""
        if self.fuel_functions or self.fuel_items is None or self.fuel_module is None:
            return False
        if self._body_cost(node.body) > UNMETERED_COST:
            return False
        return self._inputs().unmetered(node, self.fuel_items)

    def fuel_enter(self, node: ir.For) -> Optional[frozenset]:
        """Before loop ``node``'s body: the loops it is in, for :meth:`fuel_unmetered` (the
        targets of the loops that walk the input once, or None once one does not); returns
        what :meth:`fuel_exit` restores."""
        saved = self.fuel_items
        self.fuel_loops += 1
        if saved is not None and not self.fuel_functions and self.fuel_module is not None:
            if self._inputs().feeds(node, saved):
                self.fuel_items = saved | frozenset(target_idents(node.target))
                return saved
        self.fuel_items = None
        return saved

    def fuel_exit(self, saved: Optional[frozenset]) -> None:
        self.fuel_loops -= 1
        self.fuel_items = saved

    def _leaf_costs(self) -> dict:
        """What a call of each closed function of the module costs (:func:`closed_functions`)."""
        if self.fuel_leaf_costs is None:
            self.fuel_leaf_costs = closed_functions(self.fuel_module) if self.fuel_module is not None else {}
        return self.fuel_leaf_costs

    def _body_cost(self, body: tuple) -> int:
        """:func:`body_cost` of a loop's body, with the module's closed functions, once a body
        (a loop's is asked as it is judged unmetered and as it is charged)."""
        if self.fuel_body_costs is None:
            self.fuel_body_costs = {}
        known = self.fuel_body_costs.get(id(body))
        if known is not None and known[0] is body:
            return known[1]
        cost = body_cost(body, self._leaf_costs())
        self.fuel_body_costs[id(body)] = (body, cost)
        return cost

    def fuel_closed(self, node: ir.FuncDef) -> bool:
        """Function ``node`` pays nothing as it starts (its callers' loops pay for it)."""
        return node.ident in self._leaf_costs()

    def _inputs(self) -> InputLoops:
        if self.fuel_inputs is None:
            closed = self._leaf_costs()
            self.fuel_inputs = InputLoops(self.fuel_module, lambda f: f.ident in closed)  # type: ignore[arg-type]
        return self.fuel_inputs

    def fuel_parts(self, left: Any, right: Any) -> int:
        """How many of a ``+``'s operands are parts of the input or constants
        (:class:`InputLoops`; no name fed by itself is one). With one, the sum needs no
        weight (``limits.add``), only the size check of ``limits.concat``: what it prints is
        what the other operand prints, checked when it was made, plus the input's part; left
        unregistered, it is weighed in full by whatever multiplies it later (``[s, s]``,
        ``s + s``: ``runtime/limits.py``, a container nobody registered is walked). With two
        whose sum is a part too (``InputLoops.degree``: no more than ``DEGREE_MAX`` times the
        input and the template, however many sums fed it), no check (2)."""
        if self.fuel_module is None:
            return 0
        inputs = self._inputs()
        degrees = inputs.degree(left), inputs.degree(right)
        if None in degrees:
            return 0 if degrees == (None, None) else 1
        return 2 if sum(degrees) <= DEGREE_MAX else 1

    def fuel_loop_start(self, items: str, body: Any, measure: str = "", counted: str = "") -> int:
        """Before a loop over ``items`` (the source of a plain name, which a loop longer than
        the fuel in hand rebinds to checked items): all its iterations, as many as
        ``length_hint(items, LAZY)`` (``measure``: a value with as many items as the loop
        has, where its items have no length of their own: the mapping of ``x|items``, Go's
        ``range $i, $v := x``). Items of no length (a lazy filter's generator) charge
        ``limits.LAZY``: the counter runs out, and ``refuel_loop`` counts them as they come.
        ``counted``: a name to keep the count in (a loop a break may leave gives back what it
        did not run). Returns an iteration's cost."""
        if not self.fuel_enabled:
            return 0
        hint = self.helper_name("limits.length_hint")  # type: ignore[attr-defined]
        lazy = self.helper_name("limits.LAZY")  # type: ignore[attr-defined]
        cost = self._body_cost(body)
        count = f"{hint}({measure or items}, {lazy})"
        once = not (self.fuel_functions or self.fuel_loops or counted) and self.fuel_once < ONCE_LOOPS
        if once and cost <= ONCE_FREE:  # it starts once a render: its first items run uncounted
            self.fuel_once += 1
            holding = self.helper_name("limits.holding")  # type: ignore[attr-defined]
            self.line(f"if {count} > {ONCE_FREE // cost} or {holding}:")  # type: ignore[attr-defined]
            self.indent += 1  # type: ignore[attr-defined]
            self.fuel_tick(count + (f" * {cost}" if cost > 1 else ""), items, cost)
            self.indent -= 1  # type: ignore[attr-defined]
            return cost
        if counted:
            self.line(f"{counted} = {count}")  # type: ignore[attr-defined]
            count = counted
        self.fuel_tick(count + (f" * {cost}" if cost > 1 else ""), items, cost)
        return cost

    def fuel_function_start(self, body: Any, leaf: bool, own: bool = True) -> None:
        """First lines of a function the template defines: share render's counter (when its
        code counts: loops, or calls paid here), pay the call unless it is a ``leaf``:
        ``CALL_COST``, or its ``own`` body's cost when that is more (a body of thousands of
        calls pays for them; the loops in it pay for themselves)."""
        self.fuel_functions += 1
        self.fuel_straight_saved.append(self.fuel_straight)
        self.fuel_straight = 0
        if not self.fuel_enabled:
            return
        if not leaf or _has_loop(body) or _long(body):
            self.line("nonlocal _fuel, _m")  # type: ignore[attr-defined]
            self.fuel_used = True  # (render must define them, though its own code count nothing)
        if not leaf:
            self.fuel_tick(max(CALL_COST, body_cost(body, self._leaf_costs())) if own else CALL_COST)

    def fuel_function_end(self) -> None:
        self.fuel_functions -= 1
        self.fuel_straight = self.fuel_straight_saved.pop()

    def fuel_block_start(self) -> int:
        """A block starts: its straight code's calls are owed apart (returns the enclosing
        block's, for :meth:`fuel_block_end`)."""
        owed, self.fuel_owed = self.fuel_owed, 0
        return owed

    def fuel_block_end(self, owed: int) -> None:
        """A block ends: what it still owes (less than a charge) is owed by the statement it
        is a branch of, as the most any of that statement's blocks owes (one of them runs),
        so no path runs calls a charge never counts (a charge is written where a count passes
        :data:`STRAIGHT_OWED`, which may be a branch that does not run)."""
        self.fuel_branches = max(self.fuel_branches, self.fuel_owed)
        self.fuel_owed = owed

    def fuel_inner_start(self) -> int:
        branches, self.fuel_branches = self.fuel_branches, 0
        return branches

    def fuel_inner_end(self, branches: int) -> int:
        inner, self.fuel_branches = self.fuel_branches, branches
        return inner

    def fuel_statement(self, stmt: Any = None, inner: int = 0) -> None:
        """After each statement the emitter writes: every :data:`STRAIGHT_LOOK` statements of
        a function's (or render's) own code, a look (:meth:`fuel_look`); and in render's
        straight code (in no loop body, no function), what its statements cost
        (:func:`own_calls`: the closed functions they call included) is paid every
        :data:`STRAIGHT_OWED` calls. Straight code runs once a render, but a template of
        thousands of statements, each calling a closed macro or a method on a long string,
        would otherwise run uncounted (and its CPU time unlooked) for seconds."""
        self.fuel_straight += 1
        if not self.fuel_enabled:
            return
        if stmt is not None and not self.fuel_functions and not self.fuel_loops:
            self.fuel_owed += own_calls(stmt, self._leaf_costs()) + inner
            if self.fuel_owed >= STRAIGHT_OWED:
                self.fuel_tick(self.fuel_owed // CALLS_PER_FUEL)
                self.fuel_owed = 0
        if self.fuel_straight >= STRAIGHT_LOOK:
            self.fuel_straight = 0
            self.fuel_look()

    def fuel_look(self) -> None:
        """``if live() is not None: refuel``: straight code (no loop, no call that pays) costs
        no fuel, but where the render holds a long value (``limits.mark``: the context's
        meter is set) each statement may hide C-level work on it (2,000 searches of a 3 MB
        string took 8 s): the meter then looks at the CPU time every STRAIGHT_LOOK
        statements, which stops such a render within about the fuel's time. Otherwise one
        read of the context (a render with a long value is rare; the look costs nothing else)."""
        self.fuel_used = True
        refuel = self.helper_name("limits.refuel")  # type: ignore[attr-defined]
        out = "None" if self.fuel_functions else "_out"
        self.line(f"if {self._live_test()}:")  # type: ignore[attr-defined]
        self.line(f"    _m, _fuel = {refuel}(_m, {out}, _fuel)")  # type: ignore[attr-defined]

    def fuel_prologue(self) -> list:
        """``render``'s first lines when the module is bounded: its registry of built
        containers when it builds any, and the counter (one chunk in hand) when the module
        counts fuel. The context's meter is found clear: every render clears it as it ends
        (:meth:`fuel_epilogue`), so nothing is read from it here."""
        aliases = self.aliases  # type: ignore[attr-defined]
        tuples = ["    _built = {}"] if any(h in aliases for h in BUILDERS) else []
        if not self.fuel_enabled or not self.fuel_used:
            return tuples
        return [f"    _fuel = {FIRST_CHUNK}", "    _m = None"] + tuples

    def fuel_try(self, module: ir.Module) -> bool:
        """Open the ``try`` the render's body runs in (bounded modules, and every Jinja render,
        whose ``except`` positions its errors): see :meth:`fuel_epilogue`. Returns whether it
        did (the body is then one level deeper)."""
        if not self.fuel_enabled and not self.entry:  # type: ignore[attr-defined]
            return False
        if self.fuel_enabled:
            self.fuel_module = module  # its InputLoops are made at its first top-level loop
            self.fuel_once = 0
        self.line("try:")  # type: ignore[attr-defined]
        self.indent += 1  # type: ignore[attr-defined]
        return True

    def fuel_epilogue(self, body_start: int, body: tuple = ()) -> None:
        """Close the render's ``try``: a render that ends, by an error or by returning, leaves
        its context's meter clear (``limits.clear()``, only when something is there: a
        refuel or an early charge made it), so the next render finds it clear without looking
        (a ``try`` costs nothing in CPython 3.11 until it catches). A render that returns and
        refueled or charged has the output it wrote since the meter last looked checked
        (``limits.settle``): a loop within one chunk, or straight prints, each printing a long
        string, is refused before the final join allocates it all. A render that neither
        refueled nor charged nor built a long value (``limits.mark``) printed strings of at
        most ``limits.UNMARKED`` characters, so unless it wrote more than
        :data:`SETTLE_PIECES` pieces its output is near the cap at most without measuring it.

        A Jinja render (its own entry point: ``self.entry``) checks its output inside the
        ``try``, whose ``except`` is ``limits.render_failed`` (the meter cleared, the error
        positioned by the compiled template); an unbounded one has that ``try`` and, as it
        returns, clears what a runtime helper it called charged or marked (a long ``~``, a
        ``tojson`` of many items: left set, the next render in its thread started owing it,
        and every loop of the process looked at its meter)."""
        entry = self.entry  # type: ignore[attr-defined]
        if entry and self.fuel_enabled:
            self._settle_check(body)
        elif entry:  # unbounded: what a runtime helper charged or marked is left clear
            self.fuel_clear()
        if len(self.lines) == body_start:  # type: ignore[attr-defined]
            self.line("pass")  # type: ignore[attr-defined]
        self.indent -= 1  # type: ignore[attr-defined]
        if entry:
            failed = self.helper_name("limits.render_failed")  # type: ignore[attr-defined]
            self.line("except BaseException as _e:  # any exit by an error: re-raised")  # type: ignore[attr-defined]
            self.line(f"    {failed}(_e)")  # type: ignore[attr-defined]
            self.line("    raise")  # type: ignore[attr-defined]
            return
        self.line("except:  # any exit by an error (a bare except names nothing: re-raised)")  # type: ignore[attr-defined]
        self.indent += 1  # type: ignore[attr-defined]
        self.fuel_clear()
        self.line("raise")  # type: ignore[attr-defined]
        self.indent -= 1  # type: ignore[attr-defined]
        self._settle_check(body)

    def fuel_clear(self) -> None:
        """``if active: clear()``: the context's meter left clear (whatever a refuel, a charge
        or a mark of a runtime helper set), read only when some render anywhere has one."""
        self.line(f"if {self.helper_name('limits.active')}:")  # type: ignore[attr-defined]
        self.line(f"    {self.helper_name('limits.clear')}()")  # type: ignore[attr-defined]

    def _live_test(self) -> str:
        """The test that this context's meter is set (a refuel, a charge or a mark of a
        helper): ``limits.active`` first, a global list that is empty while no render
        anywhere has one (the context variable is read only when some render has)."""
        active = self.helper_name("limits.active")  # type: ignore[attr-defined]
        return f"{active} and {self.helper_name('limits.live')}() is not None"  # type: ignore[attr-defined]

    def _settle_check(self, body: tuple) -> None:
        """``if <output may be long or the meter was touched>: settle(meter, _out)``, placed
        (for an error it raises) at the template's last statement."""
        spans = [getattr(stmt, "span", None) for stmt in body]
        last = next((span for span in reversed(spans) if span and span[0]), None)
        saved = self.span  # type: ignore[attr-defined]
        if last is not None:
            self.span = last  # type: ignore[attr-defined]
        settle = self.helper_name("limits.settle")  # type: ignore[attr-defined]
        meter = "_m" if self.fuel_used else "None"
        # touched: a refuel made the meter (``_m``; a meter is the context's, so ``active``
        # holds an entry for it until the render clears it), or a helper charged or marked
        # (``live()``); either way ``active`` is not empty, and is tested first (a global)
        touched = []
        if self.fuel_used:
            touched.append("_m is not None")
        module = self.fuel_module
        if module is None or not quiet(module, self.aliases):  # type: ignore[attr-defined]
            touched.append(f"{self.helper_name('limits.live')}() is not None")  # type: ignore[attr-defined]
        test = f"len(_out) > {SETTLE_PIECES}"
        if touched:
            either = touched[0] if len(touched) == 1 else f"({' or '.join(touched)})"
            test += f" or {self.helper_name('limits.active')} and {either}"  # type: ignore[attr-defined]
        self.line(f"if {test}:")  # type: ignore[attr-defined]
        self.line(f"    {settle}({meter}, _out)")  # type: ignore[attr-defined]
        self.span = saved  # type: ignore[attr-defined]
