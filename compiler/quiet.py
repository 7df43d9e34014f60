"""Quiet renders: a render that leaves the context's meter as it found it, so its end need
not look at the meter (``active and live()`` in generated code; ``fuel.FuelEmitter``). Such a
render calls only helpers that never charge, mark or make a meter (:data:`QUIET_HELPERS`,
read against their runtime source by ``tests/unit/test_quiet_helpers.py``), methods that make
nothing longer than their receiver (:data:`QUIET_METHODS`), the environment's quiet globals,
and the helpers quiet by their arguments (:data:`_QUIET_WHEN`: a strip or ``trim`` of a few
constant characters, never of long ones, which are charged text x chars).
"""

from __future__ import annotations

from typing import Any, Optional

from tmpl2py.runtime.jinja.bounded import SPLITTING_STR_METHODS, STRIPPING_STR_METHODS

from . import ir
from .passes.util import bindings

#: helpers that never charge, mark or make the render's meter (``limits.charge``,
#: ``limits.mark``, ``refuel``: the context's ``_live`` and ``_long``), nor give the template an
#: object whose methods do (``tests/unit/test_quiet_helpers.py`` reads each one's source, and
#: what it calls, in the runtime): a render that calls only these, the counter's own refuels
#: (whose meter it holds in ``_m``) and :data:`QUIET_GLOBALS` leaves the context's meter as it
#: found it, so its end does not look at it (``active and live()``)
QUIET_HELPERS = frozenset({
    "jinja.getitem", "jinja.getattr_", "jinja.subscript", "jinja.start_values", "jinja.to_str",
    "jinja.Undefined", "jinja.loop_last", "jinja.loop_items_last", "jinja.loop_context", "jinja.undefined",
    "jinja.cond_undefined", "jinja.resolve_top", "jinja.strftime_now",
    "jinja_filters.do_string", "jinja_filters.do_upper",
    "jinja_filters.do_lower", "jinja_filters.do_capitalize", "jinja_filters.do_first",
    "jinja_filters.do_last", "jinja_filters.do_d", "jinja_filters.do_default",
    *(f"jinja_filters.test_{t}" for t in (
        "mapping", "iterable", "sequence", "boolean", "number", "integer", "float", "string",
        "none", "defined", "undefined", "true", "false", "odd", "even", "lower", "upper",
    )),
    *(f"builtins.{b}" for b in (
        "slice", "str", "len", "isinstance", "type", "enumerate", "dict", "list", "tuple", "iter",
    )),
    "limits.length_hint", "limits.LAZY", "limits.not_run", "limits.refuel", "limits.refuel_loop", "limits.holding",
    "limits.active", "limits.clear", "limits.live", "limits.settle",  # the end's own
})
#: a Jinja render's own entry and exit (``limits.render_entry``, ``render_failed``): run
#: only when a call passes other limits (the render then runs under them) or when the render
#: ends by an error (which clears the meter): a return never runs them
ENTRY_HELPERS = frozenset({"limits.render_entry", "limits.render_failed"})
#: environment globals a quiet render may call (``jinja.call`` of a name the template never
#: binds): ``raise_exception`` raises, ``strftime_now`` formats the clock. A value the caller
#: passes in the context under such a name is the caller's own code: it is trusted not to
#: charge a render's meter outside a render (tmpl2py's helpers, called directly, would)
QUIET_GLOBALS = frozenset({"raise_exception", "strftime_now"})
#: methods a quiet render may call on any value (``message.content.strip()``'s general way,
#: ``call(getattr_(x, "strip"))``): the builtin ``str`` / ``dict`` / ``list`` methods that make
#: nothing longer than their receiver (none of ``bounded.GROWING_STR_METHODS``, nor
#: ``format``, whose sandboxed wrapper charges); the objects a quiet render can hold are the
#: caller's data, plain values and undefined ones, which have no others of these names
QUIET_METHODS = frozenset(
    "strip lstrip rstrip split rsplit splitlines startswith endswith lower upper title "
    "capitalize casefold swapcase count find rfind index rindex isalnum isalpha isascii "
    "isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle isupper "
    "partition rpartition removeprefix removesuffix items keys values get copy".split()
)


def quiet(module: ir.Module, helpers: Any) -> bool:
    """Whether a render of ``module``, which calls ``helpers`` (the emitter's helper names),
    leaves the context's meter as it found it: each helper is in :data:`QUIET_HELPERS`, and
    each value it calls is a method of :data:`QUIET_METHODS` or the start value of a name in
    :data:`QUIET_GLOBALS` that the template never binds."""
    if not all(h in QUIET_HELPERS or h in ENTRY_HELPERS or h in _QUIET_WHEN for h in helpers):
        return False
    if not any(h in _QUIET_WHEN for h in helpers):
        return True
    bound: Optional[dict] = None
    helper = ir.Helper
    for node in ir.walk(module):  # (remembered: ``Emitter.module`` walked it)
        if node.__class__ is not helper or node.name not in _QUIET_WHEN:
            continue
        if node.name == "jinja_filters.do_trim":
            if not _short_chars(node.args[1:], node.kwargs):
                return False
            continue
        callee = node.args[0] if node.args else None
        if _quiet_method(callee, node.args[1:], node.kwargs):
            continue
        if not (isinstance(callee, ir.Name) and callee.name in QUIET_GLOBALS):
            return False
        if bound is None:  # each ident's binders (``util.assignments``'s, in the module's
            # walk, remembered: ``fuel.closed_functions`` walked it)
            bound = {}
            for ident, why in bindings(module):
                bound.setdefault(ident, []).append(why)
        for why in bound.get(callee.ident, ()):
            if not (isinstance(why, ir.Assign) and why.value == ir.ContextGet(callee.name)):
                return False
    return True


def _quiet_method(callee: Any, args: tuple = (), kwargs: tuple = ()) -> bool:
    """A method of :data:`QUIET_METHODS` read from a value (the sandbox's read, or a dict's
    key read inline that falls back to it), called with ``args``: a split charges the pieces
    of a long text (``bounded.SPLITTING_STR_METHODS``), a strip its text x chars unless its
    chars are a few constant characters."""
    if isinstance(callee, ir.DictLookup):
        callee = callee.fallback
    if not (
        isinstance(callee, ir.Helper)
        and callee.name in ("jinja.getattr_", "jinja.getitem")
        and len(callee.args) == 2
        and isinstance(callee.args[1], ir.Const)
        and type(callee.args[1].value) is str
        and callee.args[1].value in QUIET_METHODS
    ):
        return False
    name = callee.args[1].value
    if name in SPLITTING_STR_METHODS:
        return False
    if name in STRIPPING_STR_METHODS:
        return _short_chars(args, kwargs)
    return True


#: helpers quiet by their arguments: a value called (``jinja.call``: :func:`_quiet_method`, a
#: quiet global) and the ``trim`` filter (its chars: :func:`_short_chars`)
_QUIET_WHEN = frozenset({"jinja.call", "jinja_filters.do_trim"})


def _short_chars(args: tuple, kwargs: tuple) -> bool:
    """A strip's arguments (after its text) are none or a few constant characters: it is
    charged nothing (``bounded.charge_strip``)."""
    return not kwargs and all(
        isinstance(a, ir.Const) and type(a.value) is str and len(a.value) <= 16 for a in args
    )
