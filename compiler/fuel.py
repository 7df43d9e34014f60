"""The emitter's fuel counter: what generated code does to count its work (``runtime/limits``).

Every loop body starts with ``_fuel -= 1`` and every function the template defines (macro,
call block, recursive loop, Go ``define``) with ``_fuel -= CALL_COST``; only when the count
goes below zero does the code call ``refuel``, which lends the next chunk after checking the
render's limits (fuel, output, deadline) and makes the render's meter on its first call.
``_fuel`` and ``_m`` are locals of ``render``; nested functions share them (``nonlocal``), so
one counter counts the whole render, and renders that stay within their first chunk never
call the runtime at all. Modules without loops or functions carry none of this.

An iteration costs in proportion to the work its body does (:func:`body_cost`): one unit,
and one more per :data:`CALLS_PER_FUEL` runtime calls the body makes outside its own
nested loops and functions (which count for themselves), fixed at compile time: a body of
a hundred filter calls runs far fewer iterations on the same fuel as an empty one, at no
cost on the fast path (the constant is part of the one subtraction).
"""

from __future__ import annotations

from typing import Any

from tmpl2py.runtime.limits import CALL_COST, CHUNK

from . import ir

#: Runtime calls in a loop body that cost one more unit of fuel per iteration.
CALLS_PER_FUEL = 2
_CALLS = (ir.Helper, ir.CallValue, ir.CallFunc)


def body_cost(body: Any) -> int:
    """Fuel one iteration of ``body`` costs: 1, plus a unit per CALLS_PER_FUEL calls of the
    body itself (a nested loop's body and a function's pay at their own tick)."""
    calls = 0
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
            continue
        if not isinstance(node, ir.Node):
            continue
        if isinstance(node, _CALLS):
            calls += 1
        for field, value in ir.children(node):
            if isinstance(node, ir.For) and field in ("body", "else_"):
                continue  # the inner loop's tick pays for its body
            if isinstance(node, ir.FuncDef) and field == "body":
                continue
            stack.append(value)
    return 1 + calls // CALLS_PER_FUEL


class FuelEmitter:
    """Mixed into ``emit.Emitter``: the lines of the counter (``self.line``, ``helper_name``)."""

    fuel_enabled = True  # False: a module without the counter (``build.emitted(bounded=False)``)
    fuel_used = False
    fuel_functions = 0  # how many template functions enclose the code being emitted

    def fuel_tick(self, cost: int = 1) -> None:
        """At the top of a loop body (or, with CALL_COST, of a function)."""
        if not self.fuel_enabled:
            return
        self.fuel_used = True
        refuel = self.helper_name("limits.refuel")  # type: ignore[attr-defined]
        out = "" if self.fuel_functions else ", _out"
        self.line(f"_fuel -= {cost}")  # type: ignore[attr-defined]
        self.line("if _fuel < 0:")  # type: ignore[attr-defined]
        self.line(f"    _m, _fuel = {refuel}(_m{out})")  # type: ignore[attr-defined]

    def fuel_function_start(self) -> None:
        """First lines of a function the template defines: share render's counter, pay the call."""
        self.fuel_functions += 1
        if not self.fuel_enabled:
            return
        self.line("nonlocal _fuel, _m")  # type: ignore[attr-defined]
        self.fuel_tick(CALL_COST)

    def fuel_function_end(self) -> None:
        self.fuel_functions -= 1

    def fuel_prologue(self) -> list:
        """``render``'s first lines when the module counts fuel (it starts with one chunk)."""
        if "limits.make_tuple" in self.aliases:  # type: ignore[attr-defined]
            # the tuple helper keeps its depths in the meter: made up front
            refuel = self.helper_name("limits.refuel")  # type: ignore[attr-defined]
            return [f"    _m, _fuel = {refuel}(None, _out)"]
        if not self.fuel_used:
            return []
        return [f"    _fuel = {CHUNK}", "    _m = None"]
