"""The pass pipeline: which passes run, in which order, for which dialect.

``PASSES`` lists every optimising pass in the order it runs, one module each (the module's
docstring states the fact the pass rests on and its guard). To add a pass: write
``passes/<name>.py`` with a ``run(module) -> module`` and add one ``Step`` here.
``BEFORE_EMIT`` lists the passes only the emitter's input gets, after the IR is final (so
inspection and pass tests see the template's own operators): the size guards, then what
rewrites the operators they left plain (``fstrings``, which folds the lookups of
``list_items`` on the way): the segment module keeps both out.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from .. import ir
from . import (
    concat,
    const_slices,
    context_gets,
    cse,
    dict_items,
    direct_calls,
    direct_output,
    drop_dead_inits,
    fstrings,
    inline_tests,
    known_str,
    limits,
    loop_counters,
    merge_text,
    method_calls,
    ns_scalars,
    scope,
    select_list,
    str_locals,
    top_resolve,
    typed_calls,
)


class Step(NamedTuple):
    """One pass in the pipeline. ``shared_undefined``: runs only when absent names may share
    one undefined value (the template cannot tell them apart: ``scope.uses_identity``).
    ``bound``: a ``BEFORE_EMIT`` step of the work bounds (left out of an unbounded module);
    the other ``BEFORE_EMIT`` steps optimise (left out when ``optimize`` is False).
    ``folds``: the pass modules whose rewrite ``run`` applies on its way (one traversal)."""

    name: str
    run: Callable[[ir.Module], ir.Module]
    shared_undefined: bool = False
    bound: bool = False
    folds: tuple = ()


PASSES: tuple[Step, ...] = (
    Step("concat", concat.run),
    Step("direct_calls", direct_calls.run),
    Step("direct_output", direct_output.run),
    Step("top_resolve", top_resolve.run),
    Step("method_calls", method_calls.run),  # before dict_items: it reads the general call
    Step("dict_items", dict_items.run),
    Step("loop_counters", loop_counters.run),
    Step("ns_scalars", ns_scalars.run),
    Step("drop_dead_inits", drop_dead_inits.run),
    Step("inline_tests", inline_tests.run),
    Step("str_locals", str_locals.run),  # before known_str: marks the reads it trusts
    Step("known_str", known_str.run),
    Step("merge_text", merge_text.run),
    Step("cse", cse.run, shared_undefined=True),  # a kept lookup shares an absent key's undefined
    Step("typed_calls", typed_calls.run),  # after cse: it moves reads into branches
    Step("select_list", select_list.run),
    Step("const_slices", const_slices.run),
    Step("context_gets", context_gets.run),  # last: the others know ``resolve_top``
    Step("nested_context_gets", context_gets.run_nested, shared_undefined=True),
)

#: Run by ``before_emit`` on the final IR, in this order: the size guards (whatever
#: ``optimize`` says, unless the module is unbounded), then the optimisations of what they
#: left (whether bounded or not, when optimising).
BEFORE_EMIT: tuple[Step, ...] = (
    Step("limits", limits.run, bound=True),
    # after limits (it rewrites the ``+`` they left plain); list items by ints are folded
    # on the way (``list_items``: one traversal for both)
    Step("fstrings", fstrings.with_list_items, folds=("list_items",)),
)


def before_emit(
    module: ir.Module, bounded: bool = True, optimize: bool = True, skip: frozenset = frozenset()
) -> ir.Module:
    """The module the emitter writes: the final IR with the ``BEFORE_EMIT`` passes applied
    (the bounds' when ``bounded``, the others when ``optimize``; none named in ``skip``)."""
    for step in BEFORE_EMIT:
        if step.name in skip:
            continue
        if bounded if step.bound else optimize:
            module = step.run(module)
    return module


def run(
    module: ir.Module, profile: str, optimize: bool = True, exact_undefined: Optional[bool] = None
) -> ir.Module:
    """``exact_undefined``: give every read of an absent name its own undefined value, as
    jinja2 does (default: only in templates that can tell, ``scope.uses_identity``)."""
    if module.dialect == "jinja":
        from ..jinja.lowering import check_loop_controls, check_loop_stores, check_unknown_names

        check_unknown_names(module.body)
        check_loop_controls(module.body, in_loop=False)
        check_loop_stores(module.body)
        if exact_undefined is None:
            exact_undefined = scope.uses_identity(module)
        module = scope.resolve(module, exact_undefined)
    if optimize:
        for step in PASSES:
            if not (step.shared_undefined and exact_undefined):
                module = step.run(module)
    return module
