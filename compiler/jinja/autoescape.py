"""``{% autoescape %}`` blocks: the body compiled with jinja2's autoescape rules.

The grammar lowers the tag to an :class:`AutoescapeBlock` (a node of the lowering only);
:func:`apply_autoescape` then rewrites each one top-down (an inner block wins) into a
``Scoped`` body (jinja2 wraps it in a ``Scope``) using the helpers of
``runtime/jinja/autoescape.py``. A constant value picks one version; any other value is
evaluated when the block runs (jinja2's "volatile" mode) and picks the escaping version or the
plain one; under a volatile block ``~`` stays a plain join (jinja2 tests a run-time ``volatile``
flag there that is never set). Block functions are compiled outside every region (jinja2
compiles them with the template's own setting), and a call block's output is written as it
is (jinja2 does not escape it).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Tuple

from .. import ir
from .library import FILTER_FUNCS
from .library import REFERENCE_NAMES as LIBRARY_NAMES

H = ir.Helper

#: Filters with an ``eval_ctx.autoescape`` branch -> their autoescape version.
_FILTERS = {
    FILTER_FUNCS["join"]: "jinja_autoescape.join_autoescape",
    FILTER_FUNCS["replace"]: "jinja_autoescape.replace_autoescape",
    FILTER_FUNCS["xmlattr"]: "jinja_autoescape.xmlattr_autoescape",
    FILTER_FUNCS["urlize"]: "jinja_autoescape.urlize_autoescape",
}
_FILTER_HELPERS = frozenset(FILTER_FUNCS.values())
#: an autoescape version -> the name of jinja2's function it stands for (error messages)
REFERENCE_NAMES = {escaping: LIBRARY_NAMES[plain] for plain, escaping in _FILTERS.items()}

#: (escaping on, under a volatile block) of a region
OFF = (False, False)


@dataclass(frozen=True, slots=True)
class AutoescapeBlock(ir.Stmt):
    """``{% autoescape value %}body{% endautoescape %}`` until :func:`apply_autoescape`."""

    value: ir.Expr
    body: Tuple[ir.Stmt, ...]
    span: ir.Span = ir.NOSPAN


def apply_autoescape(body: tuple) -> tuple:
    """``body`` with every :class:`AutoescapeBlock` compiled (see the module docstring)."""
    if not any(isinstance(n, AutoescapeBlock) for n in ir.walk(body)):
        return body
    return _walk(body, OFF)


def _walk(node: Any, mode: tuple) -> Any:
    if isinstance(node, tuple):
        return tuple(_walk(n, mode) for n in node)
    if not isinstance(node, ir.Node):
        return node
    if isinstance(node, AutoescapeBlock):
        return _region(node, mode)
    if isinstance(node, ir.FuncDef) and node.ident.startswith("blk_"):
        mode = OFF  # a block's function: the template's own setting
    if not mode[0]:
        return ir.map_children(node, lambda n: _walk(n, mode))
    return _escaping(node, mode)


def _region(node: AutoescapeBlock, mode: tuple) -> ir.Stmt:
    volatile = mode[1]
    if isinstance(node.value, ir.Const):
        inner = (bool(node.value.value), volatile)
        return ir.Scoped(_walk(node.body, inner), span=node.span)
    on = ir.Scoped(_walk(node.body, (True, True)), span=node.span)
    off = ir.Scoped(_walk(node.body, (False, True)), span=node.span)
    return ir.If(node.value, (on,), (off,), span=node.span)


def _escaping(node: Any, mode: tuple) -> Any:
    rewritten = ir.map_children(node, lambda n: _walk(n, mode))
    if isinstance(rewritten, ir.Helper) and rewritten.name == "jinja.concat":
        if mode[1] or all(_foldable(a) for a in rewritten.args):
            return rewritten  # volatile: a plain join; constants: jinja2 folds them to a str
        return dataclasses.replace(rewritten, name="jinja_autoescape.markup_concat")
    if isinstance(rewritten, ir.Output) and _is_print(node):
        value = rewritten.expr.args[0]  # type: ignore[attr-defined]
        return dataclasses.replace(rewritten, expr=H("jinja_autoescape.escape_output", (value,)))
    if isinstance(rewritten, ir.Capture):
        return H("jinja_autoescape.markup_capture", (rewritten,))
    if isinstance(rewritten, ir.Assign) and _set_block_with_filters(rewritten.value):
        return dataclasses.replace(rewritten, value=H("jinja_autoescape.markup_capture", (rewritten.value,)))
    if isinstance(rewritten, ir.FuncDef) and rewritten.wrap == "jinja.make_macro":
        return dataclasses.replace(rewritten, wrap="jinja_autoescape.make_markup_macro")
    if isinstance(rewritten, ir.Helper) and rewritten.name in _FILTERS:
        return dataclasses.replace(rewritten, name=_FILTERS[rewritten.name])
    return rewritten


def _is_print(node: Any) -> bool:
    """``{{ x }}`` (not a call block's output, which jinja2 writes as it is)."""
    expr = node.expr
    if not (isinstance(expr, ir.Helper) and expr.name == "jinja.to_str" and len(expr.args) == 1):
        return False
    call = expr.args[0]
    return not (
        isinstance(call, ir.Helper)
        and call.name == "jinja.call"
        and any(k == "caller" and isinstance(v, ir.Local) for k, v in call.kwargs)
    )


def _foldable(node: Any) -> bool:
    """Whether jinja2's optimizer turns ``node`` into a constant (literals, filters of them)."""
    if isinstance(node, ir.Const):
        return True
    if isinstance(node, ir.Helper) and node.name in _FILTER_HELPERS and not node.kwargs:
        return all(_foldable(a) for a in node.args)
    return False


def _set_block_with_filters(value: Any) -> bool:
    """A set block's value with filters (``Markup`` again around the filtered text)."""
    if isinstance(value, ir.Capture) or not isinstance(value, ir.Helper):
        return False
    node = value
    while isinstance(node, ir.Helper) and node.args:
        if node.name == "jinja_autoescape.markup_capture":
            return True
        node = node.args[2] if node.name == "jinja.no_filter" and len(node.args) > 2 else node.args[0]
    return False
