"""Work bounds every render runs under, on by default: fuel, sizes, depth, wall clock.
Long because every bound generated code calls lives here, in the one module a generated
module imports for them (a cache hit pays for each module it loads): the fuel meter, the size
guards of operators, and the weights of the containers a template builds.

A compiled template counts **fuel**: one unit per loop iteration and per call of a macro
(or Go ``define``) that calls others. Generated code keeps the count in a local int and
charges a loop for all its iterations as it starts (``_fuel -= length_hint(items)``: a
template's loops only ever walk a finite value, so the count is known before the first
iteration) and calls :func:`refuel` only when the local runs out, once every chunk (:data:`CHUNK`, each
twice the last up to :data:`CHUNK_MAX`) or at a loop longer than what is left (``compiler/fuel.py``); the per-render :class:`Meter` (made at the first refuel, from the limits a
``ContextVar`` holds: a render that stays within its first chunk never reads it) lends the
chunks and checks the output written so far and the wall-clock deadline there, never in a
thread. Writing output is charged as work (a unit, ``FUEL_PER_UNIT`` fuel, per ``OUTPUT_PER_UNIT`` characters, at
each refuel): what a heavy per-item helper costs (printing a float, a map, ``tojson``) grows
with what it writes, so a loop printing values pays for the printing; and output that grows
fast makes the chunks smaller, so it is checked every ``OUTPUT_PER_CHECK`` characters.
CPU time is work too: at each look (a refuel, a long loop's check) the meter charges the
render thread's CPU time since the meter was made where it is more than the fuel counted
(``FUEL_PER_CPU_US`` units a microsecond; ``time.thread_time``, read only there), so
an iteration whose work is hidden in one C-level step (a method scanning a long string, a
list searched, compared or printed, a sort) is paid for by the time it takes, whatever the
step; a render that never leaves its first chunk never reads the clock.
A render's end measures what no refuel looked at (:func:`settle`) before the final join,
when it refueled, charged, built a long value (:func:`mark`) or wrote many pieces, and
leaves its context's meter clear (the ``try`` around the render's body), so the next render
finds it clear without looking. Values a template
*builds* by amplification (``'x' * n``, padding and width arguments, ``batch``/``slice``
counts, ``tojson`` indent, Go ``range N`` and ``printf`` widths) are checked before they
are built, against ``Limits.value``. Depth: Python's recursion limit (1,000 frames) stops
runaway macros and the C-level recursion of printing, comparing and serialising deep data;
the entry points turn that RecursionError into :class:`RenderDepthExceeded`.

=============  ==============  ============================================================
limit          default         why this number
=============  ==============  ============================================================
``fuel``       5,000,000       a loop iteration costs one, a macro call CALL_COST, a unit of
                               work FUEL_PER_UNIT (about a microsecond: an item a heavy
                               helper walks, 32 characters of output or of a long string a
                               ``+`` builds), and CPU time past the count and CPU_FREE_US
                               as much per microsecond: at most ~0.5 s of work, and at most
                               16M characters written or built. The shared corpus needs
                               < 50,000 per render (checked: it renders alike with a
                               hundredth of each limit); templates that scan the
                               conversation once per message (quadratic) need 1.1-2.4
                               million for 1,000 tool-call messages, which they render in
                               36-100 ms (transformers: 0.13-1.8 s)
``output``     100,000,000     characters of output, and of a string that ``+``, ``~``,
                               ``join``, ``replace``... build; a 1M-token prompt is ~4M;
                               also the weight of any container the template builds (what
                               printing it would cost, each value it holds counted as often
                               as it holds it: the "weights" section below)
``value``      100,000         characters/items one amplifying operation may build (a
                               repetition, a padding width, a count); real templates repeat
                               ``'-' * 80`` or pad to 10; jinja2's sandbox caps ``range`` at
                               100,000 items alike
``depth``      Python's limit  recursion of macros / templates and deep data (RecursionError)
``budget``     None            seconds of wall clock (the second line; off by default)
=============  ==============  ============================================================

Every limit can be turned off with ``None``; ``Limits(fuel=None)`` keeps the other defaults.
"""

from __future__ import annotations

import re
import time
import weakref
from time import perf_counter as _perf_counter, thread_time as _thread_time
from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import chain, islice
from operator import is_, length_hint  # noqa: F401 - length_hint: generated code's loop charge (a C function)
from typing import Any, Iterator, Optional

#: Fuel lent to a function's local counter at a time (the deadline is read once per chunk).
CHUNK = 256
#: The fuel a render starts with in hand (``_fuel = FIRST_CHUNK`` in its prologue): a render
#: that stays within it makes no meter at all (a chat template's render of a few messages
#: with a dozen macro calls, 16 units each, used to pass 256 and pay for a meter). The limit
#: is exact past it; the output it writes is measured at the render's end (:func:`settle`).
FIRST_CHUNK = 4 * CHUNK
#: The largest chunk: each refuel lends twice the last (a long render refuels O(log) times,
#: not once per 256 iterations), up to this; fast-growing output shrinks it again.
CHUNK_MAX = 16 * CHUNK
#: A string or list that a ``+``, a ``~``, a ``join`` or a macro's joined output builds
#: shorter than this is built without a check (the inline fast path of generated code);
#: a longer one is charged (a unit per :data:`OUTPUT_PER_UNIT` characters) and capped. Many
#: short ones built in a loop are paid for by the loop's count and the CPU time it takes
#: (``Meter._timed``); doubling stops at the first step past this.
SHORT = 1 << 16
#: Fuel a macro (or Go template) call costs: a call does more work than an iteration.
CALL_COST = 16
#: Fuel a unit of work costs: about a microsecond (an item a heavy helper walks in Python,
#: ``OUTPUT_PER_UNIT`` characters written or built, ``charge``); a loop iteration costs one.
FUEL_PER_UNIT = 10
#: Characters of output (charged at each refuel) or of a value past :data:`LONG_BUILT` that
#: make a unit of work: writing and joining text runs at memory speed, and what makes the
#: characters is charged where it runs (a filter by its input, a container's printing by its
#: weight, CPU time at each look); at 32 a unit a prompt of 12M characters of tool results
#: (`tojson` of long-context files, 30 ms in transformers) ran out of fuel (red team s8u F4).
OUTPUT_PER_UNIT = 128
#: Characters (or items) a long ``+``, ``~``, ``join``, ``sum`` or Go ``printf`` builds that make
#: a unit of work: copying runs at memory speed (measured: 20 characters a nanosecond for a
#: 1M-character ASCII string, 6 for one of two-byte characters; 2-5 past the caches), not at
#: a printing helper's (``OUTPUT_PER_UNIT``); so a string built up message by message (``ns.p
#: = ns.p ~ m.content``, Ollama's ``$docs = print $docs ...``: each step copies what came
#: before, quadratic) pays for its copies as the time they take, at 4 characters a
#: nanosecond: 800 documents of 1 KB, 320M characters copied in ~0.1 s, cost 78,000 units (at
#: 1 a nanosecond, session 6's rate, they ran out of fuel: a shipped Granite template's
#: documents, red team s7p F8). A long string's first charge is still a chunk's worth:
#: ``SHORT`` is 16 units of this. A list's items are copied a quarter as fast (each item's
#: reference count is raised too). Past :data:`LONG_BUILT` (longer than any real prompt) a
#: value is charged at the printing rate again: one step can copy it many times over (``{{ s
#: + s + ... }}`` written out, a join of it, a filter), so the fuel, not only the output cap,
#: bounds how long it gets (about 64M characters: at the copying rate a 51M-character string
#: was cheap to make and 24 copies of it in one written chain took 1.2 GB).
BUILT_PER_UNIT = 4096
ITEMS_BUILT_PER_UNIT = BUILT_PER_UNIT >> 2
LONG_BUILT = 1 << 22


def built_units(size: int, text: bool = True) -> int:
    """The units of work building a value of ``size`` characters (``text``) or items is."""
    if size > LONG_BUILT:
        return size // OUTPUT_PER_UNIT
    return size // (BUILT_PER_UNIT if text else ITEMS_BUILT_PER_UNIT)
#: Output between two checks when it grows fast: the next chunk is made smaller to keep it so.
OUTPUT_PER_CHECK = 1 << 20
#: Fuel a microsecond of the render thread's CPU time costs, where the time is more than
#: the fuel counted (``Meter._timed``): the default fuel is half a second of work.
FUEL_PER_CPU_US = FUEL_PER_UNIT
#: CPU time a render may spend before any is charged (20 ms: a render's first-use costs, a
#: lazy import or a regex compiled, never decide a limit; time decides only heavy renders)
CPU_FREE_US = 20_000
_UNLIMITED = 1 << 200  # the pool of a render without a fuel limit: never runs dry


class RenderLimitExceeded(RuntimeError):
    """A render went past one of its limits (``.limit``: fuel, output, value, depth, budget).

    ``.where`` is the template position where it happened, ``NAME:LINE:COLUMN`` (1-based;
    Go: ``LINE:COLUMN``, as Go names no template file), filled in when the error leaves the
    render (``compiler/positions.py``, ``compiler/gotmpl/exec_errors.py``: the error path
    only), with ``.line`` and ``.column``; "" where no position is known. ``str()`` leads
    with it."""

    line: Optional[int] = None
    column: Optional[int] = None

    def __init__(self, limit: str, message: str, where: str = "") -> None:
        super().__init__(message)
        self.limit = limit
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message

    def locate(self, where: str, line: int, column: int) -> None:
        """Record the template position (once: the innermost one found first stays)."""
        if not self.where:
            self.where, self.line, self.column = where, line, column


class RenderDepthExceeded(RenderLimitExceeded, RecursionError):
    """Recursion (macros, recursive loops, deep data) went past Python's recursion limit.

    Also a ``RecursionError``: jinja2 lets that through for the same templates."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__("depth", message, where)


class Limits:
    """Per-render bounds; ``None`` turns one off. See the module table for the numbers.

    Immutable (``replace`` makes a changed copy). A plain class, not a dataclass: the
    standalone modules inline this file without registering it in ``sys.modules``."""

    __slots__ = ("fuel", "output", "value", "budget", "deadline")
    FIELDS = ("fuel", "output", "value", "budget", "deadline")

    def __init__(
        self,
        fuel: Optional[int] = 5_000_000,
        output: Optional[int] = 100_000_000,
        value: Optional[int] = 100_000,
        budget: Optional[float] = None,
        deadline: Optional[float] = None,
    ) -> None:
        for name, given in zip(self.FIELDS, (fuel, output, value, budget, deadline)):
            object.__setattr__(self, name, given)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Limits are immutable: use replace()")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Limits) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.FIELDS)
        return f"Limits({inner})"

    def _values(self) -> tuple:
        return tuple(getattr(self, n) for n in self.FIELDS)

    def replace(self, **changes: Any) -> "Limits":
        unknown = set(changes) - set(self.FIELDS)
        if unknown:
            raise TypeError(f"unknown limits: {', '.join(sorted(unknown))}")
        return Limits(**{**dict(zip(self.FIELDS, self._values())), **changes})

    def started(self) -> "Limits":
        """These limits for a render starting now: ``budget`` becomes a deadline."""
        if self.budget is None:
            return self
        if self.budget <= 0:
            _budget_exhausted(self.budget, before=True)
        return self.replace(deadline=time.monotonic() + self.budget)


DEFAULT_LIMITS = Limits()
#: No bound at all (what the engines themselves do).
UNLIMITED = Limits(fuel=None, output=None, value=None, budget=None)

_current: ContextVar[Limits] = ContextVar("tmpl2py_limits", default=DEFAULT_LIMITS)


def coerce(limits: Any) -> Limits:
    """``limits=`` as callers pass it: a Limits, a dict of fields, or None (no limits)."""
    if limits is None:
        return UNLIMITED
    if isinstance(limits, Limits):
        return limits
    if isinstance(limits, dict):
        return DEFAULT_LIMITS.replace(**limits)
    raise TypeError(f"limits must be a Limits, a dict or None, not {type(limits).__name__}")


@contextmanager
def using(limits: Limits) -> Iterator[None]:
    """Renders in this block (this thread / task) run under ``limits``."""
    token = _current.set(limits)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> Limits:
    """The limits in force. Inside a render its callers are the size guards of operations
    about to build a long value (``runtime/jinja/bounded.py``, past 4,096 characters), so
    the render is marked as holding one (:func:`mark`): its end measures its output."""
    mark()
    return _current.get()


def mark() -> None:
    """This render holds a long value (a guard let one be built): its end measures the
    output it wrote (:func:`settle`), which a long value printed many times could make huge
    within the first chunk of fuel. Owing nothing, as an early charge's int would."""
    if _long.get() is None:
        _long.set(True)
        holding.append(None)
    if _live.get() is None:  # the render's end looks (at ``live()``) and measures
        _set_live(0)


class Meter:
    """One render's account, made at its first refuel (renders that never run out of their
    first chunk never make one): the fuel not yet lent, the top-level output seen so far,
    the deadline."""

    __slots__ = (
        "fuel", "limits", "deadline", "out", "seen", "size", "lend", "clock", "wall", "start", "timed", "__weakref__"
    )

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.lend = CHUNK
        self.out: Optional[list] = None
        self.seen = 0
        self.size = 0
        self.deadline = limits.deadline
        # the render started with its first chunk in hand (``_fuel = FIRST_CHUNK``)
        self.fuel = _UNLIMITED if limits.fuel is None else limits.fuel - FIRST_CHUNK
        # CPU time is work too (:meth:`_timed`): the thread's clock and the pool, at the start
        self.clock = _thread_time() if limits.fuel is not None else None
        self.wall = _perf_counter()  # the wall clock (cheap) at the last reading of the CPU's
        self.start = self.fuel
        self.timed = 0  # fuel charged for time so far

    def take(self, owed: int = 0) -> int:
        """Lend the next chunk, after taking what the counter ``owed`` (it ran below zero by
        that much: a loop charged for all its iterations; below zero: fuel it held, given
        back) and checking the pool, the output and the deadline.

        Writing output is work too (printing a value costs in proportion to the characters
        it makes: ``tojson``, a Go ``%v`` of a float or a map), so the output written since
        the last chunk is charged, one unit per :data:`OUTPUT_PER_UNIT` characters; and
        when it grows fast the next chunk is smaller, so the output cap is checked at least
        every :data:`OUTPUT_PER_CHECK` characters (plus one iteration's worth).

        Each chunk is twice the last, up to :data:`CHUNK_MAX`, and never more than the pool
        holds (the limit is exact: a render is stopped when it has used more than its fuel,
        not when a whole chunk no longer fits)."""
        lend = self.lend
        if self.out is not None:
            grown = self._grown()
            self.fuel -= grown * FUEL_PER_UNIT // OUTPUT_PER_UNIT
            if grown > OUTPUT_PER_CHECK:
                lend = max(1, CHUNK * OUTPUT_PER_CHECK // grown)
                self.lend = CHUNK
            elif lend < CHUNK_MAX:
                self.lend = lend * 2
        elif lend < CHUNK_MAX:
            self.lend = lend * 2
        self.fuel -= owed
        if self.clock is not None and self._timed():
            lend = min(lend, CHUNK // 4)  # slow work: the next look comes sooner
            self.lend = CHUNK
        if self.fuel < 0:
            self._exhausted()
        if lend > self.fuel:
            lend = self.fuel
        self.fuel -= lend
        if self.deadline is not None and time.monotonic() > self.deadline:
            _budget_exhausted(self.limits.budget)
        return lend

    def check(self) -> bool:
        """A long loop's check every chunk of its iterations (they were paid for as it
        started): the output written since the last look is charged and capped, then the
        pool and the deadline checked, as at a refuel, with nothing lent. True when CPU time
        was charged (the iterations are slower than their count)."""
        if self.out is not None:
            self.fuel -= self._grown() * FUEL_PER_UNIT // OUTPUT_PER_UNIT
        slow = self.clock is not None and self._timed()
        if self.fuel < 0:
            self._exhausted()
        if self.deadline is not None and time.monotonic() > self.deadline:
            _budget_exhausted(self.limits.budget)
        return slow

    def _timed(self) -> bool:
        """Charge the CPU time this thread has spent in the render since its meter was made,
        :data:`FUEL_PER_CPU_US` units a microsecond, where it is more than the fuel the
        render counted plus :data:`CPU_FREE_US` (a render that needs less CPU time than
        that is stopped by its count alone, exactly); so the work an
        iteration hides in one C-level step (a method scanning a long string, a list
        searched, compared or printed, a sort) is paid for by the time it takes, and a loop
        paid for as it started has its time credited. The thread's CPU clock (a system call)
        is read only when a millisecond of wall time (``perf_counter``: cheap) has passed
        since the last reading. True when more time was charged."""
        wall = _perf_counter()
        if wall - self.wall < 0.001:  # under a millisecond since the last reading: less CPU
            return False
        self.wall = wall
        spent = int((_thread_time() - self.clock) * (1_000_000 * FUEL_PER_CPU_US))
        counted = self.start - self.fuel - self.timed
        due = spent - counted - CPU_FREE_US * FUEL_PER_CPU_US - self.timed
        if due <= 0:
            return False
        self.timed += due
        self.fuel -= due
        return True

    def _exhausted(self) -> None:
        self.fuel = 0
        clear()  # this render is over: later renders' work is not charged to it
        raise RenderLimitExceeded(
            "fuel",
            f"the render used more than its {self.limits.fuel:,} units of fuel: loop iterations"
            f" (one each), macro calls ({CALL_COST}) and work ({FUEL_PER_UNIT} a microsecond:"
            f" an item of a filter's input, {OUTPUT_PER_UNIT} characters of output, CPU time)",
        )

    def _grown(self) -> int:
        """Characters written to the top-level output since the last look (and the output
        cap checked on the total)."""
        out = self.out
        end = len(out)  # type: ignore[arg-type]
        if end <= self.seen:
            return 0
        grown = sum(map(len, out[self.seen : end]))  # type: ignore[index]
        self.seen = end
        self.size += grown
        cap = self.limits.output
        if cap is not None and self.size > cap:
            raise RenderLimitExceeded("output", f"the render's output passed {cap:,} characters")
        return grown


def refuel(meter: Optional[Meter], out: Optional[list] = None, fuel: int = 0) -> tuple:
    """Generated code's call when its fuel counter runs out: ``(meter, fuel)``.

    ``meter`` is the render's (None before its first refuel); ``out`` its top-level output
    list when the call comes from ``render`` itself (a macro's own buffer is not passed);
    ``fuel`` the counter's value: below zero by what it owes, or what it still holds (a look
    at the meter mid-chunk, ``if active and live() is not None``, which a template's straight
    code makes every few dozen statements, inside a loop too): given back to the pool before
    the next chunk is lent, so a look costs no fuel (dropping it made each look spend up to a
    chunk: a 1,500-message conversation ran out of fuel by its looks alone)."""
    if meter is None:
        early = _live.get()  # a meter :func:`charge` made, or the units it owes, for this render's early work
        meter = early if type(early) is Meter else Meter(_current.get())
        if type(early) is int:
            meter.fuel -= early  # take() below refuses what the pool cannot pay
        _set_live(weakref.ref(meter))
    if out is not None and meter.out is None:
        meter.out = out
    return meter, meter.take(-fuel)


def refuel_loop(
    meter: Optional[Meter], out: Optional[list], fuel: int, items: Any, cost: int, write: Any = None
) -> tuple:
    """A loop's charge ran the counter out, or the render holds a long value (:data:`holding`):
    ``(meter, fuel, items)``, as :func:`refuel`, and the items to iterate. A loop longer than a chunk gets them through :func:`_checked`, so
    the output it writes, the pool and the deadline are still looked at every chunk of its
    iterations (a loop of 100,000 iterations, each printing a new 100 KB string, is stopped
    at the output cap, not after building 10 GB). ``write``: a function's writer (its
    buffer's ``append``), whose buffer is measured the same way (render's is ``out``)."""
    lazy = False
    if fuel < -(LAZY >> 1):  # charged ``LAZY`` as it started: what it measured has no length
        fuel += LAZY * cost
        count = length_hint(items, -1)
        if count >= 0:  # (its measure had none, its items have: None's pairs, ``()``)
            fuel -= count * cost
        else:  # a lazy filter's generator: counted as it runs
            lazy = True
    held = _long.get()
    if fuel >= 0 and held is None and not lazy:
        return meter, fuel, items  # (another thread's render holds a long value)
    meter, fuel = refuel(meter, out, fuel)
    # render's own output is measured before it is joined (``settle``), a function's is not
    # (its join comes first): a function's loop is looked at every chunk of its fuel, the
    # render's every largest chunk (the output a look finds is references, and a string an
    # iteration builds is a short one, at most ``SHORT`` characters, or paid for); a render
    # holding a long value (:data:`holding`), from its first iterations on
    every = max(1, (CHUNK if out is None else CHUNK_MAX) // cost)
    if lazy or length_hint(items) > (1 if held is not None else min(every, LOOKED_LOOP)):
        buffer = getattr(write, "__self__", None) if out is None else None
        items = _checked(meter, items, every, buffer if type(buffer) is list else None, lazy and cost)
    return meter, fuel, items


def not_run(count: int, index: int) -> int:
    """The iterations a loop left by a ``break`` at its ``index``-th (0-based) did not run, of
    the ``count`` it was charged as it started (a lazy loop's, ``LAZY``, was given back and
    its items counted as they came: none): given back to the counter, so a search that stops
    at its first match costs what it ran (a look-ahead per message was charged n**2 / 2)."""
    return count - index - 1 if count < LAZY >> 1 else 0


#: what a loop over items of no length (a lazy filter's generator: ``select``, ``map``...)
#: is charged as it starts: compiled code charges ``length_hint(items, LAZY) * cost``, which
#: runs the counter out, so :func:`refuel_loop` gives it back and counts the items as they
#: come, looking at the meter after 1, 4, 16... of them (red team s7h F6: charged nothing,
#: such a loop never looked at the meter: a 1.5 KB template ran over 120 s)
LAZY = 1 << 40


#: a loop past the fuel in hand longer than this is looked at as it runs, even when a chunk
#: pays for all of it: its iterations may each hide C-level work (a search of a long
#: string), which the CPU time charged at the looks stops (4,000 iterations scanning 3 MB
#: each ran 16 s unlooked); the looks come after 1, 5, 21, 85... iterations (``_checked``)
LOOKED_LOOP = 128


def _checked(
    meter: Meter, items: Any, every: int, buffer: Optional[list], per_item: int = 0
) -> Iterator[Any]:
    """``items``, with a look at the meter every ``every`` iterations; the first looks come
    sooner (after 1, 4, 16... iterations: the cost of an iteration is not known yet), and
    while the CPU time is more than the count (slow iterations) each look comes after a
    quarter of the last one's iterations, so slow work is looked at about as often in time.

    The items come in pieces (slices of a sequence, ``islice`` runs of any other iterable)
    chained in C: the loop resumes Python code once per look, not once per iteration (a
    generator step per item cost long loops ~40%). Iterating slices of a list is iterating
    the list: a template cannot change a value while it loops over it (the sandbox refuses
    mutating methods), and a lazy iterable is still pulled one item at a time. ``per_item``:
    what each iteration costs, charged at each look (a loop over items of no length, which
    was not charged as it started)."""
    return _chain_pieces(_pieces(meter, items, every, buffer, per_item))


_chain_pieces = chain.from_iterable
#: sequences whose slices iterate as they do (cheaper than ``islice`` runs)
_SLICED = (list, tuple, str, range)


def _pieces(
    meter: Meter, items: Any, every: int, buffer: Optional[list], per_item: int = 0
) -> Iterator[Any]:
    step = 1
    # the buffer's growth while the loop runs (what it held as the loop started was measured
    # where it was written, or is bounded as the render's end bounds it; summing it at every
    # long loop's start cost a macro called per message, writing into the render's own output
    # of hundreds of pieces, ~5 us a loop: seed 000's 100-message render, 6%)
    seen = len(buffer) if buffer is not None else 0
    size = 0
    cap = meter.limits.output
    sliced = type(items) in _SLICED
    if sliced:
        start, stop = 0, len(items)
    else:
        items = iter(items)
    while True:
        if sliced:
            if start >= stop:
                return
            yield items[start : start + step]
            start += step
        else:
            for first in items:  # the next item, pulled as the loop asks for it
                yield (first,)
                break
            else:
                return
            if step > 1:
                yield islice(items, step - 1)
        # ``step`` iterations ran: look
        if per_item:
            meter.fuel -= step * per_item
        if buffer is not None:  # a function's own output, charged and capped as render's
            end = len(buffer)
            grown = sum(map(len, buffer[seen:end]))
            seen, size = end, size + grown
            meter.fuel -= grown * FUEL_PER_UNIT // OUTPUT_PER_UNIT
            if cap is not None and size > cap:
                raise RenderLimitExceeded("output", f"a macro's output passed {cap:,} characters")
        step = max(1, step // 4) if meter.check() else min(every, step * 4)


def counted_range(count: int) -> Iterator[int]:
    """``range(count)`` that pays for its iterations as they run, a block at a time (one
    fuel an iteration; each block is a heavy charge, so it looks at the CPU time too): Go's
    ``{{range N}}`` over a number, whose count the template's data may decide, in a loop
    that was not charged as it started (a loop that was pays twice: at most two an
    iteration). Iterated in C within a block."""
    return _chain_pieces(_counted_blocks(count))


def _counted_blocks(count: int) -> Iterator[range]:
    """Blocks of at most ``CHUNK * FUEL_PER_UNIT`` iterations, each paid as it starts by a
    charge of ``CHUNK`` units: a heavy one, which looks at the CPU time. The first blocks are
    shorter (1, 4, 16... iterations: the cost of an iteration is not known yet), and a block
    that took more than a millisecond makes the next a quarter as long, so slow iterations
    (each hiding C-level work: a 10 MB input encoded) are looked at about as often in time
    (at 2,560 iterations a block, 55 s ran before the first look). A short block overpays
    (at most six of them in a row: ~15,000 fuel)."""
    most = CHUNK * FUEL_PER_UNIT
    start, step = 0, 1
    while start < count:
        charge(CHUNK)
        began = _perf_counter()
        yield range(start, min(count, start + step))
        start += step
        step = max(1, step >> 2) if _perf_counter() - began > 0.001 else min(most, step << 2)


#: The meter of the render running in this thread / task, for :func:`charge`: a weak
#: reference (the render's frame owns its meter, so a finished render's meter is gone), or
#: what charges before the render's first refuel owe (an int, which that refuel takes), or
#: the meter itself, made by such a charge past the pool (which refuses it).
#: Every render ends by clearing it (:data:`begin`, in the ``except`` around its body, or
#: :func:`settle`), so work is never charged to another render's account.
_live: ContextVar[Any] = ContextVar("tmpl2py_meter", default=None)
live = _live.get
#: One entry for each thread or task whose ``_live`` is set (appended as a render sets it,
#: popped as it clears it): while it is empty no render anywhere holds a meter, an early
#: charge or a mark, so generated code's looks (``if active and live() is not None``) cost
#: the truth of a global list (a context variable's read cost ~400 machine instructions, a
#: few percent of a small render's bounds). Only :func:`_set_live` and :func:`clear` change
#: ``_live`` to or from None. A context copied while its render runs (a render never
#: copies one) would share its entry: the count is of renders, as each clears its own.
active: list = []


def _set_live(value: Any) -> None:
    """This context's ``_live`` becomes ``value`` (not None), counted in :data:`active`."""
    if _live.get() is None:
        active.append(None)
    _live.set(value)


def clear() -> None:
    """Leave this context's meter clear (a render's end by an error; generated Go code's
    ``except``), and its mark of a long value (:func:`mark`, which sets the meter too)."""
    if _live.get() is not None:
        _live.set(None)
        if active:
            active.pop()
        if _long.get() is not None:
            _long.set(None)
            if holding:
                holding.pop()


#: ``limits=`` not passed to a render (the keyword's default: the template's own limits):
#: ``...``, a builtin, so a generated module's signature names no import (a standalone
#: module defines its render before it binds the runtime's names)
NOT_GIVEN: Any = ...


def too_deep() -> RenderDepthExceeded:
    """The depth limit's error, for a RecursionError that reached a Jinja render's end."""
    return RenderDepthExceeded(
        "template recursion is too deep: a macro, recursive loop or template calls itself"
        " (or data the template built nests) deeper than Python's recursion limit allows"
    )


def render_failed(error: BaseException) -> None:
    """A generated Jinja render's ``except`` (every exit by an error, which it raises on
    after this returns): its context's meter left clear (:data:`begin`), and a
    RecursionError that is no limit's error raised as the depth limit's
    (:class:`RenderDepthExceeded`, itself a RecursionError). The module of a compiled
    template binds its own (``CompiledTemplate._render_failed``), which also positions the
    error in the template."""
    if active:
        clear()
    if isinstance(error, RecursionError) and not isinstance(error, RenderLimitExceeded):
        raise too_deep() from None


def render_entry(render: Any, context: Any, budget: Any, limits: Any) -> str:
    """A generated Jinja render called without a context (``{}``), with a ``budget`` or with
    ``limits``: ``render(context)`` under those limits (a module used on its own; the module
    of a compiled template binds ``CompiledTemplate.render``'s general way instead)."""
    if context is None:
        context = {}
    chosen = DEFAULT_LIMITS if limits is NOT_GIVEN else coerce(limits)
    if budget is not None:
        chosen = chosen.replace(budget=budget)
    if chosen is DEFAULT_LIMITS:  # what the generated code reads by default
        return render(context)
    with using(chosen.started()):
        return within_output(render(context), chosen)


def within_output(result: Any, limits: Limits) -> Any:
    """``result`` (a render's text, or a tuple starting with it) refused past
    ``limits.output``: a render under limits other than the defaults. Its end measures its
    output only where a bound does not show it under the default cap (:func:`settle`: at
    most ``SETTLE_PIECES`` pieces of :data:`UNMARKED` characters), which a smaller cap
    does not make: so a render under a cap of its own is measured here too, once its text
    is made (one ``len``)."""
    cap = limits.output
    text = result[0] if type(result) is tuple and result else result
    if cap is not None and type(text) is str and len(text) > cap:
        raise RenderLimitExceeded("output", f"the render's output passed {cap:,} characters")
    return result


#: the longest string a render makes without marking itself (:func:`mark`: a value the
#: guards let past 65,536 characters or weight marks it; escaping can make its printed text
#: up to 6 times longer: ``tojson`` of control characters, HTML escapes)
UNMARKED = 1 << 19
#: set (True) while the render holds a long value a guard let be built (:func:`mark`)
_long: ContextVar[Any] = ContextVar("tmpl2py_long", default=None)
#: one entry per context whose render holds a long value (:func:`mark`; popped as it ends):
#: generated code's loops look at the meter as they start while it is not empty
#: (``if _fuel < 0 or holding:``), and such a render's loops are looked at from their first
#: iterations (:func:`refuel_loop`): one iteration can then hide a C-level step over the
#: long value (a search of 100M characters, a list of a million items compared: 26 ms), so
#: a loop of 1,000 that its first chunk of fuel pays for ran 26 s unlooked
holding: list = []


def settle(meter: Optional[Meter], out: list) -> None:
    """The end of a render that refueled, charged, built a long value or wrote many pieces
    (generated code's last lines): the context's meter cleared, and the output the meter
    has not looked at yet checked against the cap, before the render joins it. Without
    this a loop within one chunk, or straight prints, each printing a long string, would
    make the join allocate it all (256 prints of a 100M-character string: 25 GB), as
    nothing looks at the output before.

    Measuring is skipped when a bound shows it under the cap: a render that built no long
    value (no :func:`mark`) printed strings of at most :data:`UNMARKED` characters, or
    ``BUILT_PER_UNIT`` characters per unit it was charged (a concatenation is charged by its size,
    a filter by its input), so ``len(out)`` pieces of that are enough. Past that the pieces
    are summed (~20 ns a piece) before anything is joined: a piece may also be an input
    value of any length, which no bound of the render's own covers (joining first, to measure
    one string, made 300 prints of a 10 MB message a 3 GB join)."""
    early = _live.get()
    if early is not None:
        _live.set(None)
        if active:
            active.pop()
    marked = _long.get()
    if marked is not None:
        _long.set(None)
        if holding:
            holding.pop()
    cap = (meter.limits if meter is not None else _current.get()).output
    if cap is None:
        return
    if meter is not None and meter.out is out:
        meter._grown()  # what was written since its last look: refused past the cap
        return
    if marked is None and meter is None:
        longest = UNMARKED + (BUILT_PER_UNIT * early // FUEL_PER_UNIT if type(early) is int else 0)
        if len(out) * longest <= cap:
            return
    if sum(map(len, out)) > cap:
        raise RenderLimitExceeded("output", f"the render's output passed {cap:,} characters")


def charge(units: int) -> None:
    """A heavy helper's work: ``units`` units of work (about one per item it walks in
    Python, a microsecond), :data:`FUEL_PER_UNIT` fuel each.

    The loop counter pays for an iteration; a helper whose work grows with its input
    (``max``, ``unique``, ``map`` over a list; Go's printing of a map) pays for the rest
    here, so a loop calling it ends within the fuel's time too. Charged to the render's
    meter; before the render has one (its first refuel), a charge of more than a few units
    makes it (work of a few units is left to the first chunk's slack). What is owed before
    the render has a meter is kept as an int (the first refuel takes it), until it passes
    what the pool holds: then the meter is made and refuses it, as it would have at once.
    A charge of a chunk or more (a sort, a filter over a long input) makes the meter at
    once, and each such charge looks at the CPU time (``Meter._timed``): a loop too short to
    be checked as it runs, each iteration sorting 100,000 items, is stopped by the time
    its charges took."""
    if units < 64:
        if units <= 0:
            return
        if not active:
            return  # work of a few units is left to the first chunk's slack
        live = _live.get()
        if live is None:
            return
    else:
        live = _live.get()
    units *= FUEL_PER_UNIT
    if live is None or type(live) is int:
        owed = units if live is None else live + units
        limits = _current.get()
        if limits.fuel is None or (owed <= limits.fuel - FIRST_CHUNK and units < CHUNK * FUEL_PER_UNIT):
            _set_live(owed)  # the meter made now would still hold fuel - CHUNK - owed >= 0
            return
        live = Meter(limits)  # past the pool, or heavy work: its clock starts now
        live.fuel -= owed - units
        _set_live(live)
    meter = live if type(live) is Meter else live()
    if meter is not None:
        meter.fuel -= units
        if units >= CHUNK * FUEL_PER_UNIT and meter.clock is not None:
            meter._timed()  # heavy work: the time it takes may be more than its units
        if meter.fuel < 0:
            meter._exhausted()


class RenderBudgetExceeded(RenderLimitExceeded):
    """The render took longer than the wall-clock budget the caller set."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__("budget", message, where)


def _budget_exhausted(budget: Any, before: bool = False) -> None:
    if before:
        raise RenderBudgetExceeded(f"render budget of {budget} s exhausted before the render started")
    raise RenderBudgetExceeded(f"render exceeded its budget of {budget} s")


# ----------------------------------------------------------------------------- value sizes


def value_cap() -> Optional[int]:
    return _current.get().value


def check_size(size: int, what: str) -> None:
    """Refuse to build a value of ``size`` characters/items past ``Limits.value``."""
    if size > 65536:
        mark()
    cap = _current.get().value
    if cap is not None and size > cap:
        raise RenderLimitExceeded(
            "value", f"{what} would build {size:,} characters or items (limit {cap:,})"
        )


def check_making(size: int, what: str) -> None:
    """A text being made of pieces (Go's ``printf``) has reached ``size`` characters: refused
    past ``Limits.output`` before its pieces are joined."""
    cap = _current.get().output
    if cap is not None and size > cap:
        raise RenderLimitExceeded("output", f"{what} would build more than {cap:,} characters")


#: numbers of at least this size hash to their value modulo 2**61 - 1 (CPython's rule for
#: ints and floats): a template or its input can give 100,000 distinct ones of one hash
HASH_SAFE = 1 << 61


def hash_key(key: Any) -> Any:
    """A key equal to ``key``'s equals only, whose hash no input chooses, for a number past
    :data:`HASH_SAFE` or a tuple holding one (at any depth: a tuple's hash is made of its
    items', so tuples of numbers of one hash have one hash too); ``key`` itself otherwise.
    Numbers become their bytes (an int and the float of the same value alike; infinities
    and NaN as they are), hashed with the randomised hash."""
    kind = type(key)
    if kind is int or kind is float:
        if -HASH_SAFE < key < HASH_SAFE:
            return key
        if kind is float:
            if key != key or key in (float("inf"), float("-inf")):
                return key
            key = int(key)
        bits = key.bit_length()
        if bits > LONG_INT_BITS:  # its bytes are made and hashed: work as long as the number
            charge(bits >> 13)  # (red team s9h2 D: 100,000 keys of 393,000 bits, 9 s)
        return (_BIG, key.to_bytes((bits + 8) // 8, "little", signed=True))
    if kind is tuple:
        keys = tuple(map(hash_key, key))
        return key if all(map(is_, keys, key)) else (_BIG, keys)
    if kind is range:  # hashed as (length, start, step): equal when those that matter are
        n = len(key)
        start = hash_key(key.start) if n else None
        step = hash_key(key.step) if n > 1 else None
        if start is (key.start if n else None) and step is (key.step if n > 1 else None):
            return key
        return (_BIG, range, n, start, step)
    return key


#: marks a key :func:`hash_key` made (no value of the template is this object)
_BIG = object()


def charge_hashing(keys: Any) -> list:
    """``keys`` (a list of them) about to be hashed into a dict (``dict.fromkeys``, ``dict``
    of pairs): numbers of one hash, or tuples of them, make each insertion probe every
    earlier one (quadratic in one C-level step: 20,000 took 1.9 s, 100,000 minutes), so
    their probes are charged first, about 100 a microsecond: distinct keys counted per hash
    (by :func:`hash_key`, whose hashes no input chooses). Other keys hash with the
    randomised hash (strings), or are few of one hash (small numbers)."""
    items = keys if type(keys) is list else list(keys)
    distinct: dict = {}
    for key in items:
        kind = type(key)
        if kind is tuple or kind is range or (
            (kind is int or kind is float) and not -HASH_SAFE < key < HASH_SAFE
        ):
            safe = hash_key(key)
            if safe is not key:
                distinct.setdefault(hash(key), set()).add(safe)
    if distinct:
        worst = max(map(len, distinct.values()))
        if worst > ONE_HASH:
            raise RenderLimitExceeded(
                "value", f"a dict of {worst:,} keys of one hash (numbers a template or its input chose)"
            )
        probes = sum(len(d) * len(d) for d in distinct.values()) >> 1
        if probes > 1 << 16:
            charge(probes // 100)
    return items


#: the most keys of one hash a dict the template builds may hold: each lookup of one probes
#: them all (the build is charged, the lookups are not: 10,000 of them, each through 10,000
#: keys, took 3.6 s); real data has none past ``HASH_SAFE``
ONE_HASH = 1024


def check_iterations(count: int) -> None:
    """A loop of ``count`` iterations that the fuel cannot pay for fails before it starts."""
    fuel = _current.get().fuel
    if fuel is not None and count > fuel:
        raise RenderLimitExceeded(
            "fuel", f"a loop of {count:,} iterations: more than the {fuel:,} the render may run"
        )


def check_built(size: int, what: str) -> None:
    """A value just built from others (``~``, ``join``, ``sum``) is at most ``Limits.output``
    long: checked after the fact, which is enough to stop doubling, as the next step would
    start from at most the cap. Building it was work, as a long ``+`` is (``_check_concat``):
    a unit per :data:`BUILT_PER_UNIT` characters or items (callers check only from :data:`SHORT`)."""
    text = what != "sum"  # sum(start=[]) builds a list: ten times ``value`` items
    charge(built_units(size, text))
    if size > 65536:  # a long string exists: the render's end measures its output
        mark()
    limits = _current.get()
    cap = limits.output if text else _times(limits.value, 10)
    if cap is not None and size > cap:
        raise RenderLimitExceeded(
            "output" if text else "value",
            f"{what} built {size:,} characters or items (limit {cap:,})",
        )


def check_text(size: int) -> None:
    """A value's text of ``size`` characters (``str()`` of a list or dict, through a filter
    that reads its argument as text: ``|string``, ``|upper``...), refused past a sixteenth
    of ``Limits.output``: escaping makes a container's text longer than what it holds
    (``repr`` doubles a backslash), so ``[s]|string`` fed back through a loop grows
    geometrically; stopped here, the steps before built at most twice that. Raises only,
    never charges (the filters that call it leave the meter alone: ``quiet.QUIET_HELPERS``);
    no real template prints a container of millions of characters through a filter."""
    cap = _current.get().output
    if cap is not None and size > cap >> 4:
        raise RenderLimitExceeded(
            "output", f"a value's text has {size:,} characters (limit {cap >> 4:,}: a sixteenth of the output's)"
        )


#: Tuples the template builds nest at most this deep (hashing a tuple recurses in C without
#: a check: ~100,000 levels overflow the stack; printing and comparing stop at 1,000).
MAX_TUPLE_DEPTH = 10_000
#: a printf-style field: its width (group 1) and precision (group 2), digits or ``*``
#: (``PRINTF_SPEC``, the compiled pattern, is made on first use: not at every import)
_PRINTF_FIELD = r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?"
_printf_spec: Optional["re.Pattern[str]"] = None


def __getattr__(name: str) -> Any:
    if name == "PRINTF_SPEC":
        return _printf_pattern()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _printf_pattern() -> "re.Pattern[str]":
    global _printf_spec
    if _printf_spec is None:
        _printf_spec = re.compile(_PRINTF_FIELD)
    return _printf_spec


def _is_count(value: Any) -> bool:
    return type(value) is int or type(value) is bool


#: what ``*`` by a count repeats: its length is bounded (and a list's or a tuple's weight)
_REPEATED = (str, bytes, bytearray, list, tuple)


def mul(built: dict, left: Any, right: Any) -> Any:
    """``left * right`` with repetition of a string (or bytes), list or tuple bounded by
    ``Limits.value`` (its length) and, for a list or tuple, by what its items weigh
    (:func:`weigh`: ``[s] * n`` repeats one long string ``n`` times); and a product of two
    integers of more than ``4 * Limits.value`` bits refused, as :func:`power` refuses one
    (``ns.n = ns.n * ns.n`` doubles the bits each time: one C-level multiplication of
    numbers of millions of digits takes seconds, beyond the fuel's reach)."""
    if _is_count(right) and isinstance(left, _REPEATED):
        seq, count = left, right
    elif _is_count(left) and isinstance(right, _REPEATED):
        seq, count = right, left
    else:
        if _is_count(left) and _is_count(right):
            bits = abs(left).bit_length() + abs(right).bit_length()
            if bits > 256:
                check_size(bits // 4, "a product")
                _charge_digits(left, right, 8192)
        return left * right
    if count > 1:
        if len(seq) * count > 4096:
            check_size(len(seq) * count, "a repetition")
        if not isinstance(seq, (str, bytes, bytearray)):
            made = left * right
            _register(built, made, NODE + count * (weigh(seq, built) - NODE), "a repetition")
            return made
    return left * right


def power(base: Any, exponent: Any) -> Any:
    """``base ** exponent``: an integer result of more than ``4 * Limits.value`` bits is refused
    (``10 ** 10 ** 9`` would compute for minutes)."""
    if _is_count(base) and _is_count(exponent) and exponent > 64 and abs(base) > 1:
        check_size(exponent * abs(base).bit_length() // 4, "a power")
    return base**exponent


def _charge_digits(left: Any, right: Any, per_unit: int) -> None:
    """An operation on two integers of more than 4,096 bits each: CPython divides them digit
    by digit of each (quadratic: a 400,000-bit number by a 200,000-bit one takes 0.26 s),
    and multiplies them in about as many steps over a hundred; ``per_unit`` products of
    their 32-bit digit counts make a unit of work (a microsecond)."""
    if type(left) is int and type(right) is int:
        a, b = left.bit_length(), right.bit_length()
        if a > 4096 and b > 4096:
            charge((a >> 5) * (b >> 5) // per_unit)


def floordiv(left: Any, right: Any) -> Any:
    """``left // right``, a division of two integers charged by their digits (``_charge_digits``)."""
    _charge_digits(left, right, 256)
    return left // right


def mod(left: Any, right: Any) -> Any:
    """``left % right``: printf-style widths and precisions (``'%*d'``, ``'%999999999s'``) are
    bounded by ``Limits.value`` before Python pads; a name used by several fields
    (``%(a)s%(a)s``), which prints one value many times, by what that would weigh (any other
    field prints each value once: what holds them was weighed when built)."""
    if isinstance(left, str) and "%" in left:
        stars = iter(right if type(right) is tuple else (right,))
        for match in _printf_pattern().finditer(left):
            for part in match.groups():
                if part == "*":
                    width = next(stars, 0)
                    if _is_count(width) and abs(width) > 4096:
                        check_size(abs(width), "a format width")
                elif part and len(part) > 3 and int(part) > 4096:
                    check_size(int(part), "a format width")
        if "%(" in left and repeats_a_name(left):  # '%(a)s%(a)s' prints a value twice
            _check_weight(left.count("%(") * weigh(right, {}), "a format")
    else:
        _charge_digits(left, right, 256)  # a remainder of big integers: a division
    made = left % right
    if type(made) is str and len(made) >= SHORT:  # ``%r`` escapes: ``'%r' % (s,)`` doubles
        check_built(len(made), "a format")
    return made


def repeats_a_name(fmt: str) -> bool:
    """Whether a printf-style format names one field twice (``%(a)s%(a)s``)."""
    if "%(" not in fmt:
        return False
    names = re.findall(r"%\(([^)]*)\)", fmt)
    return len(names) != len(set(names))


def add(built: dict, left: Any, right: Any) -> Any:
    """``left + right`` of two computed values: a concatenation past the cap (``output`` for
    strings, ten times ``value`` for lists) is refused before it is built (doubling a string
    through a loop or a macro); a list or tuple's is registered with its weight (``l + l``
    doubles what printing it costs: :func:`weigh`)."""
    if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
        size = len(left) + len(right)
        if size >= SHORT:
            _check_concat(left, size)
        if type(left) is not str and type(right) is not str:
            made = left + right
            known = built.get(id(left))
            weight = known[1] if known is not None and known[0] is left else weigh(left, built)
            known = built.get(id(right))
            weight += known[1] if known is not None and known[0] is right else weigh(right, built)
            return _concatenated(built, made, weight - NODE)
    return left + right


def add_item(built: dict, left: Any, item: Any) -> Any:
    """``left + [item]`` (a list grown by one computed item: ``ns.l = ns.l + [m]``), the value
    and weight :func:`add` gives it, without weighing the one-item list: the result weighs
    what ``left`` weighs plus what ``item`` does. Anything but an exact list on the left
    goes to :func:`add`."""
    if type(left) is not list:
        return add(built, left, [item])
    if len(left) >= SHORT - 1:
        _check_concat(left, len(left) + 1)
    made = left + [item]
    known = built.get(id(left))
    weight = known[1] if known is not None and known[0] is left else weigh(left, built)
    weight += NODE + len(item) if type(item) is str else weigh(item, built)
    return _concatenated(built, made, weight)


def _concatenated(built: dict, made: Any, weight: int) -> Any:
    """``made``, a list or tuple a ``+`` built, of ``weight``: refused past the limit, and
    remembered (the next ``+`` of a loop reads its weight)."""
    if weight > _LIGHT:
        _check_weight(weight, "a concatenation")
    _remember(built, made, weight)
    return made


def added(built: dict, left: Any, right: Any, made: Any) -> Any:
    """:func:`add`'s check after the fact: ``made`` is ``left + right``, which the inline fast
    path built already (``_r if type(_r := a + b) is str and len(_r) < SHORT else
    added(_built, a, b, _r)``, ``compiler/emit.py``) and found not to be a short ``str``.
    Checking after building is enough: both operands were checked when they were built (or
    came in with the context), so ``made`` is at most twice the cap, and it is refused
    before anything keeps it; a list or tuple is weighed and remembered as :func:`add` does."""
    if type(made) is str:
        if len(made) >= SHORT:
            _check_concat(made, len(made))
        return made
    if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
        size = len(left) + len(right)
        if size >= SHORT:
            _check_concat(left, size)
        if type(left) is not str and type(right) is not str:
            known = built.get(id(left))
            weight = known[1] if known is not None and known[0] is left else weigh(left, built)
            known = built.get(id(right))
            weight += known[1] if known is not None and known[0] is right else weigh(right, built)
            return _concatenated(built, made, weight - NODE)
    return made


def concatenated(made: Any) -> Any:
    """:func:`concat`'s check after the fact: ``made``, the ``+`` the inline fast path built
    (``_r if length_hint(_r := a + b) < SHORT else concatenated(_r)``), charged and refused
    past the cap as :func:`concat` would have before building it (each operand was bounded
    when it was built, so ``made`` is at most twice the cap)."""
    size = length_hint(made)
    if size >= SHORT and isinstance(made, (str, list, tuple)):
        _check_concat(made, size)
    return made


def concat(left: Any, right: Any) -> Any:
    """``left + right`` that needs no weight, only :func:`add`'s size check: one operand is
    a ``str`` (the result is a string, or the ``+`` raises), or the result is kept only by a
    variable that nothing reads but the next ``+`` into it (``compiler/passes/limits.py``):
    no container ever holds it, so nothing can print its paths."""
    if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
        size = len(left) + len(right)
        if size >= SHORT:
            _check_concat(left, size)
    return left + right


def _check_concat(left: Any, size: int) -> None:
    """A concatenation of ``size`` characters or items from :data:`SHORT` on: building it is work (a
    loop adding 100 KB each time), and it is refused past the cap (``output`` for strings,
    ten times ``value`` for lists), before it is built: a unit per :data:`BUILT_PER_UNIT`
    characters (:data:`ITEMS_BUILT_PER_UNIT` items; past :data:`LONG_BUILT`, per
    :data:`OUTPUT_PER_UNIT`)."""
    charge(built_units(size, isinstance(left, str)))
    mark()  # a long value: the render's end measures its output, its loops are looked at
    limits = _current.get()
    cap = limits.output if isinstance(left, str) else _times(limits.value, 10)
    if cap is not None and size > cap:
        raise RenderLimitExceeded(
            "output" if isinstance(left, str) else "value",
            f"a concatenation would build {size:,} characters or items (limit {cap:,})",
        )


def _times(value: Optional[int], factor: int) -> Optional[int]:
    return None if value is None else value * factor


def make_tuple(built: dict, *items: Any) -> tuple:
    """A tuple literal with computed items, refused past MAX_TUPLE_DEPTH levels of nesting
    and past the weight limit (:func:`weigh`); both are kept in ``built``, the render's
    registry, so this is O(items)."""
    made = tuple(items)
    depth = 0
    weight = NODE
    for item in items:
        kind = type(item)
        if kind is str:
            weight += NODE + len(item)
        elif kind is int or kind is float or kind is bool or item is None:
            weight += NODE
        else:
            weight += weigh(item, built)
            if kind is tuple:
                depth = max(depth, _tuple_depth(item, built))
    depth += 1
    if depth > MAX_TUPLE_DEPTH:
        raise RenderDepthExceeded(f"a tuple the template built nests more than {MAX_TUPLE_DEPTH:,} deep")
    if weight > _LIGHT:
        _check_weight(weight, "a tuple")
    if depth > 1 or weight > _LIGHT:  # a tuple of short strings and numbers is weighed again
        _remember(built, made, weight, depth)
    return made


#: the deep tuples measured by :func:`nested` (more than ``_NESTINGS_KEPT`` levels: only what
#: a loop nested; a shallow one is measured again, in a few steps): id -> (tuple, its depth);
#: held, so an id stays its tuple's (a namespace fed back by a loop meets its last value
#: next); at most ``_NESTINGS_KEPT``, cleared at once when full (one C call: threads share it)
_NESTINGS: dict = {}
_NESTINGS_KEPT = 64


def nested(value: Any) -> Any:
    """``value``, stored where a loop can feed it back (a namespace attribute), refused when
    it is a tuple nesting more than :data:`MAX_TUPLE_DEPTH` tuples deep: pairs of ``items()``
    or ``dictsort`` hold a value of the template, so ``ns.x = ({'a': ns.x}|dictsort)[0]``
    nests one level an iteration, and hashing such a tuple (``ns.x in {}``, a dict's key)
    recurses in C without any check: 100,000 levels crash the process. Measured through the
    tuples alone, from the depths of the last few measured (one level an iteration costs one
    step), and charged by the tuples it walks. A list or dict is looked through for the
    tuples it holds (``ns.l = [({'a': ns.l[0]}|dictsort)[0]]`` nests the pairs as well):
    :func:`_held_tuples`."""
    if isinstance(value, tuple):
        _nesting(value)
    elif type(value) is list or type(value) is dict:
        _held_tuples(value)
    elif isinstance(value, str) and len(value) >= SHORT:  # (a Markup too)
        _kept_text(value)
    return value


#: long strings :func:`nested` charged lately: id -> length (not the strings: none is held;
#: an id reused by another string of the same length skips one charge), cleared when full
_TEXTS: dict = {}


def _kept_text(text: str) -> None:
    """A long string a namespace keeps is charged as built (:func:`check_built`), once per
    string: a filter can make a text from a value longer than the value (``[s]|tojson``,
    ``|replace``, ``|striptags`` of a list escape what it holds), and fed back through a
    namespace such a text grows geometrically; charged here whichever filter made it."""
    if _TEXTS.get(id(text)) == len(text):
        return
    check_built(len(text), "a text a namespace keeps")
    if len(_TEXTS) >= 64:
        _TEXTS.clear()
    _TEXTS[id(text)] = len(text)


def _held_tuples(value: Any) -> None:
    """The tuples ``value`` (a list or dict) holds, through lists and dicts (a dict's keys
    too: a key is hashed as it is put in), each measured by :func:`_nesting`; containers of
    strings and numbers alone are passed over in C. Charged by the items it looks at."""
    stack = [value]
    seen = {id(value)}
    steps = 0  # items looked at in Python (those passed over in C: a sixteenth each)
    while stack:
        held = stack.pop()
        items = (*held.keys(), *held.values()) if type(held) is dict else held
        if set(map(type, items)) <= _LEAVES:
            steps += len(items) >> 4
            continue
        steps += len(items)
        for item in items:
            kind = type(item)
            if kind is tuple:
                _nesting(item)
            elif (kind is list or kind is dict) and id(item) not in seen:
                seen.add(id(item))
                stack.append(item)
    if steps > 4096:
        charge(steps // 64)


def _nesting(value: tuple) -> int:
    known = _NESTINGS.get(id(value))
    if known is not None and known[0] is value:
        return known[1]
    depth = 1
    steps = 0
    stack = [(value, 1)]
    while stack:
        t, level = stack.pop()
        for item in t:
            if isinstance(item, tuple):
                steps += 1
                seen = _NESTINGS.get(id(item))
                inner = level + seen[1] if seen is not None and seen[0] is item else 0
                if inner:
                    depth = max(depth, inner)
                else:
                    depth = max(depth, level + 1)
                    stack.append((item, level + 1))
                if depth > MAX_TUPLE_DEPTH:
                    raise RenderDepthExceeded(f"a value the template keeps nests more than {MAX_TUPLE_DEPTH:,} tuples deep")
    if steps > 64:
        charge(steps // 64)
    if depth > _NESTINGS_KEPT:
        if len(_NESTINGS) >= _NESTINGS_KEPT:
            _NESTINGS.clear()
        _NESTINGS[id(value)] = (value, depth)
    return depth


def _tuple_depth(value: tuple, built: dict) -> int:
    known = built.get(id(value))
    if known is not None and known[0] is value and known[2]:
        return known[2]
    # a tuple the template did not build itself (``items()`` pairs, data): walk it once
    depth = 1 + max((_tuple_depth(v, built) for v in value if type(v) is tuple), default=0)
    _remember(built, value, weigh(value, built), depth)
    return depth


# ----------------------------------------------------------------------------- weights
#
# A template can build, in a few steps, a value far larger than the memory it takes: a
# container holding one value several times (``[l, l]``, ``l + l``, ``[s] * n``,
# ``dict.fromkeys(range(n), s)``) shares it, and doing that again on the result doubles it
# again. Forty steps make a list of a few dozen objects that prints to a terabyte, and
# printing, serialising, comparing or hashing it walks every path through it in C, beyond
# the fuel's reach. So every container the template builds is *weighed* as it is built: its
# weight is what printing it would cost, counted as if each path through it were its own
# copy (``NODE`` per item, the length of each string), and a container heavier than
# ``Limits.output`` is refused then, before anything walks it. Containers that share
# nothing weigh what they hold: the check only ever stops the sharing kind.
#
# Weights are kept in ``built``, the render's registry (``_built``, a local of ``render``:
# id -> (container, weight, tuple depth); holding the container keeps its id unique), so
# weighing a container built from others costs O(its items). A container the template did
# not build (the context's data, a filter's result) is walked once, iteratively, leaves in
# C. The registry keeps the last ``_KEEP`` containers it was given (a loop that grows a list
# by ``l + [m]`` makes a new list each time: keeping them all would hold n^2 items); one
# that fell out is walked again when met again. A namespace is not walked (it changes after
# it is built): printing one charges what its attributes weigh
# (``jinja.objects.Namespace.__repr__``).

#: what one item of a container weighs beyond its strings' characters: printing an item
#: costs ~20 ns a character and ~1.5 us an item, so ``Limits.output`` (100,000,000) allows
#: about a million items (~1.5 s to print) or 100 MB of text
NODE = 64
#: how many containers the registry remembers (the oldest fall out first)
_KEEP = 256
#: a literal of strings and numbers lighter than this is not remembered (it is weighed
#: again, in C, where it is met again) nor checked (every limit is far above it)
_LIGHT = 4096
_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
_DESCEND = (list, tuple, dict, set, frozenset, *_VIEWS)
#: the exact types of values that hold nothing (a JSON document's leaves)
_LEAVES = frozenset({str, int, float, bool, type(None)})


#: an integer longer than this (in bits) weighs its size too (:func:`weigh`): each is a value
#: of its own, so 100,000 of them made in one call (``range(b, b + 100000)|list``, a ``map`` of
#: ``abs`` over ``[n] * 100000``) held 2.5 GB as ``NODE`` each (red team s9h2 A)
LONG_INT_BITS = 4096


def _int_weight(value: int) -> int:
    bits = value.bit_length()
    return NODE + (bits >> 3 if bits > LONG_INT_BITS else 0)


def _ints_weight(items: Any) -> int:
    """What the ``int`` items of ``items`` weigh beyond ``NODE`` each (their bytes, when long)."""
    bits = [b for b in map(int.bit_length, [v for v in items if type(v) is int]) if b > LONG_INT_BITS]
    return sum(bits) >> 3 if bits else 0


def weigh(value: Any, built: dict) -> int:
    """What printing ``value`` would cost, in characters (see the section's comment)."""
    kind = type(value)
    if kind is str:
        return NODE + len(value)
    if kind is int:
        return _int_weight(value)
    if kind is dict or kind is list or kind is tuple:
        known = built.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        if kind is not dict and len(value) > 8:  # strings and numbers: in C, not kept
            kinds = set(map(type, value))
            if kinds <= _LEAVES:
                weight = NODE * (1 + len(value))
                if int in kinds:
                    weight += _ints_weight(value)
                if str not in kinds:
                    return weight
                if len(kinds) == 1:
                    return weight + sum(map(len, value))
                return weight + sum(len(v) for v in value if type(v) is str)
        quick = _tree(value, [64], built)  # the usual case: a message, a list of strings
        return quick if quick is not None else _walk(value, built)
    if issubclass(kind, str):  # by type: isinstance asks a namespace its __class__, slowly
        return NODE + len(value)
    if not issubclass(kind, _DESCEND):
        return NODE  # a number, None, an object that prints as itself
    known = built.get(id(value))
    if known is not None and known[0] is value:
        return known[1]
    return _walk(value, built)  # a subclass, a set, a dict view: the general walk


def _remember(built: dict, made: Any, weight: int, depth: int = 0) -> None:
    built[id(made)] = (made, weight, depth)
    if len(built) > _KEEP:
        del built[next(iter(built))]


def _flat(items: Any) -> Optional[int]:
    """What ``items`` weigh when none of them holds anything (in C for JSON's leaves), else
    None."""
    kinds = set(map(type, items))
    if kinds <= _LEAVES:
        weight = NODE * len(items)
        if int in kinds:
            weight += _ints_weight(items)
        if str not in kinds:
            return weight
        if len(kinds) == 1:
            return weight + sum(map(len, items))
        return weight + sum(len(item) for item in items if type(item) is str)
    if any(issubclass(kind, _DESCEND) for kind in kinds):
        return None
    return NODE * len(items) + sum(len(item) for item in items if issubclass(type(item), str))


def _flat_node(node: Any) -> Optional[int]:
    if isinstance(node, dict):
        keys = _flat(node.keys())
        if keys is None:
            return None
        values = _flat(node.values())
        return None if values is None else NODE + keys + values
    flat = _flat(node)
    return None if flat is None else NODE + flat


def _items(value: Any) -> Any:
    if isinstance(value, dict):
        return (*value.keys(), *value.values())
    return value


def _tree(node: Any, budget: list, built: dict) -> Optional[int]:
    """The weight of ``node`` when it is a small tree of dicts (string keys), lists and
    tuples over leaves (JSON's, and any value that holds no container: a namespace, a str
    subclass, weighed as :func:`_walk` weighs them; a message, its content parts, a tool:
    the usual case, in few steps), else None; ``budget`` (a one-item list) counts the containers it may look at.
    The containers inside it that hold others are remembered in ``built`` (a tool's schema
    is met again, part by part, by a template that walks it). One Python step per item: a
    message's containers hold a few items each, where C's ``set(map(...))`` costs more to
    set up than it saves."""
    budget[0] -= 1
    if budget[0] < 0:
        return None
    kind = type(node)
    if kind is dict:
        weight = NODE + 2 * NODE * len(node)
        for key in node:
            if type(key) is not str:
                return None
            weight += len(key)
        items: Any = node.values()
    elif kind is list or kind is tuple:
        weight = NODE + NODE * len(node)
        items = node
    else:
        return None
    holds = False
    for item in items:
        kind = type(item)
        if kind is str:
            weight += len(item)
        elif kind is int:
            weight += _int_weight(item) - NODE
        elif kind is dict or kind is list or kind is tuple:
            known = built.get(id(item))
            if known is not None and known[0] is item:
                weight += known[1] - NODE
            else:
                inner = _tree(item, budget, built)
                if inner is None:
                    return None
                weight += inner - NODE  # the item's own NODE is counted above
            holds = True
        elif kind not in _LEAVES:  # weighed as :func:`_walk` weighs it
            if issubclass(kind, str):
                weight += len(item)
            elif issubclass(kind, _DESCEND):
                return None  # a container subclass, a set, a view: the general walk
            # else an object that prints as itself (a namespace): NODE, counted above
    if holds:
        _remember(built, node, weight)
    return weight




def _walk(root: Any, built: dict) -> int:
    """The weight of a container nobody weighed yet: children first, each container once (a
    container met again, or on the path to itself, takes its weight from ``found``); a
    child held many times is looked at once and counted as often (``[l] * n``)."""
    found: dict[int, int] = {}
    stack = [(root, False)]
    on_path: set[int] = set()
    while stack:
        node, ready = stack.pop()
        key = id(node)
        if not ready:
            if key in found or key in on_path:
                continue
            flat = _flat_node(node) if node is not root else None
            if flat is not None:
                found[key] = flat
                _remember(built, node, flat)
                continue
            on_path.add(key)
            stack.append((node, True))
            items = _items(node)
            for child in dict(zip(map(id, items), items)).values():  # each object once
                if issubclass(type(child), _DESCEND):
                    known = built.get(id(child))
                    if (known is None or known[0] is not child) and id(child) not in found:
                        stack.append((child, False))
            continue
        on_path.discard(key)
        items = _items(node)
        distinct = dict(zip(map(id, items), items))
        counts = Counter(map(id, items)) if len(distinct) < len(items) else None
        weight = NODE
        for child_id, child in distinct.items():
            kind = type(child)
            if issubclass(kind, str):
                one = NODE + len(child)
            elif kind is int:
                one = _int_weight(child)
            elif issubclass(kind, _DESCEND):
                known = built.get(child_id)
                if known is not None and known[0] is child:
                    one = known[1]
                else:
                    one = found.get(child_id, NODE)  # NODE: a cycle (prints as [...])
            else:
                one = NODE
            weight += one * counts[child_id] if counts is not None else one
        found[key] = weight
        _remember(built, node, weight)
    return found[id(root)]


def check_total(weight: int, what: str) -> None:
    """A value about to be made, of ``weight`` (what :func:`weigh` would find), refused past
    the output limit (and marked past 65,536) before it is made."""
    _check_weight(weight, what)


def _check_weight(weight: int, what: str) -> None:
    if weight > 65536:  # printing it makes a long string: the render's end measures its output
        mark()
    cap = _current.get().output
    if cap is not None and weight > cap:
        raise RenderLimitExceeded(
            "output",
            f"{what} would build a value costing {weight:,} characters to print (each value it"
            f" holds counted as often as it holds it; limit {cap:,})",
        )


def _register(built: dict, made: Any, weight: int, what: str) -> None:
    _check_weight(weight, what)
    _remember(built, made, weight)


def built_value(built: dict, made: Any) -> Any:
    """A list or dict literal with computed items, ``made``: weighed, refused past the
    limit, remembered unless light (see the section's comment)."""
    items = made.values() if type(made) is dict else made
    kinds = set(map(type, items))
    if kinds <= _LEAVES:  # the usual literal: strings and numbers, weighed in C
        weight = NODE * (1 + len(made))
        if str in kinds:
            weight += sum(map(len, items)) if len(kinds) == 1 else sum(len(v) for v in items if type(v) is str)
        if type(made) is dict:
            weight += NODE * len(made) + sum(len(k) for k in made if isinstance(k, str))
        if weight <= _LIGHT:
            return made  # light: weighed again, as quickly, wherever it is met again
    else:  # holding containers: remembered, so what holds it next weighs it at once
        weight = NODE
        for item in _items(made):
            known = built.get(id(item))
            weight += known[1] if known is not None and known[0] is item else weigh(item, built)
    if weight > _LIGHT:
        _check_weight(weight, "a list" if type(made) is list else "a dict")
    built[id(made)] = (made, weight, 0)
    if len(built) > _KEEP:
        del built[next(iter(built))]
    return made



def weighed(items: Any, what: str) -> Iterator[Any]:
    """``items`` (a runtime function's results, one by one) with what they weigh together
    checked as they come: a consumer that keeps them all (``list``, ``join``) would hold
    that much (``map``'s default, or a filter making a long string, per item)."""
    memo: dict = {}
    total = NODE
    cap = _current.get().output
    for item in items:
        total += weigh(item, memo)
        if cap is not None and total > cap:
            _check_weight(total, what)
        yield item


def check_weight(value: Any, what: str) -> Any:
    """``value``, a container a runtime function built holding values it was given more than
    once (``dict.fromkeys``, ``batch``'s fill, ``map``'s default...), weighed with a fresh
    registry and refused past the limit."""
    if not isinstance(value, str):
        _check_weight(weigh(value, {}), what)
    return value


def checked_weight(value: Any, what: str) -> int:
    """What ``value`` weighs (a fresh registry), refused past the limit."""
    weight = weigh(value, {})
    _check_weight(weight, what)
    return weight
