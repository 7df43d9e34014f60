"""A selection's list made at once: ``value | selectattr(...) | list`` is one call.

``select``, ``reject``, ``selectattr`` and ``rejectattr`` return a generator, and ``list``
consumes it whole at once: nothing runs between the two calls, so the pair is
``jinja_filters.select_list(value, keep, lookup_attr, *args)``, which builds the same list
with the same work charged and the same errors in the same order (the selection's
``if value:``, its test's lookup, then each item's test), without the generator, the second
filter's call and its charge (~0.5 us of a ~3 us render:
``{% set user_messages = messages | selectattr("role", "equalto", "user") | list %}``).

Guards: the selection's arguments are all positional, without ``*args`` (a keyword
argument could name one of the fused helper's own parameters, and jinja2's error for it
names the filter), and ``list`` has none (with one it raises as it is).

Keeps output byte-identical (pure IR -> IR). After the other passes (they know the two
filters); inspection and the prefix analysis read the unoptimised IR.
"""

from __future__ import annotations

from typing import Any

from .. import ir
from ..jinja.library import FILTER_FUNCS
from .util import has_node, map_nodes

LIST = FILTER_FUNCS["list"]
#: a selection's helper -> (keep: the items its test accepts, lookup_attr: it tests an attribute)
SELECTIONS = {
    FILTER_FUNCS["select"]: (True, False),
    FILTER_FUNCS["reject"]: (False, False),
    FILTER_FUNCS["selectattr"]: (True, True),
    FILTER_FUNCS["rejectattr"]: (False, True),
}
FUSED = "jinja_filters.select_list"
PREPARED = "jinja_filters.prepared_selection"


def _fusable(node: Any) -> bool:
    if not (isinstance(node, ir.Helper) and node.name == LIST and len(node.args) == 1):
        return False
    inner = node.args[0]
    return (
        not node.kwargs
        and isinstance(inner, ir.Helper)
        and inner.name in SELECTIONS
        and not inner.kwargs
        and not any(isinstance(a, ir.Starred) for a in inner.args)
    )


#: the classes of the nodes ``_fusable`` can hold of (``has_node``'s filter)
_WANTED = frozenset({ir.Helper})


def run(module: ir.Module) -> ir.Module:
    """Invariant: no ``list`` helper is applied directly to a selection helper with only
    positional arguments."""
    if not has_node(module.body, _fusable, _WANTED):
        return module

    def fuse(node: Any) -> Any:
        if not _fusable(node):
            return node
        inner = node.args[0]
        keep, lookup_attr = SELECTIONS[inner.name]
        value, *args = inner.args
        flags = (ir.Const(keep), ir.Const(lookup_attr))
        if all(isinstance(a, ir.Const) and type(a.value) is str for a in args):
            # constant arguments: prepared once, at import (the test and getter found then)
            prepared = ir.Hoisted(ir.Helper(PREPARED, (*flags, *args)), span=inner.span)
            return ir.Helper(FUSED, (value, prepared), span=inner.span)
        return ir.Helper(FUSED, (value, *flags, *args), span=inner.span)

    return ir.replace(module, body=map_nodes(module.body, fuse, classes=_WANTED))
