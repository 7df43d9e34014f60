"""Inside ``{% autoescape true %}``: what jinja2 compiles differently there.

transformers' environment has autoescape off; an ``autoescape`` block turns it on for its
body (a constant value at compile time; any other value is evaluated when the block runs).
There, jinja2 writes:

=========================  ==========================================================
``{{ x }}``                ``escape(x)`` (a ``Markup`` value, ``|safe``, prints as is)
``a ~ b``                  ``markup_join``: as ``str`` unless an operand is ``Markup``,
                           then the others are escaped (constants are folded first: no)
``{% set x %}``, filters   the captured text is ``Markup``
a macro defined there      returns ``Markup``
``join``, ``replace``,     their ``eval_ctx.autoescape`` branch (escaping, ``Markup``)
``xmlattr``, ``urlize``
=========================  ==========================================================

Known difference: jinja2 also sets the flag for the render's run time inside the block, which
filters read when they run; a macro defined outside the block and called inside it therefore
escapes in jinja2's ``join``/``replace`` and not here. Standard library only.
"""

from __future__ import annotations

from itertools import chain

from .filters import do_urlize, do_xmlattr, make_attrgetter
from .markup import Markup, escape, soft_str
from .objects import Macro

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional

escape_output = escape


def markup_concat(*values: Any) -> Any:
    """jinja2.utils.markup_join (``~`` with autoescape on)."""
    buf = []
    iterator = map(soft_str, values)
    for arg in iterator:
        buf.append(arg)
        if hasattr(arg, "__html__"):
            return Markup("").join(chain(buf, iterator))
    return "".join(buf)


def markup_capture(text: Any) -> Markup:
    """A captured body (set block, filter block) with autoescape on."""
    return Markup(text)


class MarkupMacro(Macro):
    """A macro defined with autoescape on: its text is ``Markup``."""


    def __call__(self, *args: Any, **kwargs: Any) -> Markup:  # type: ignore[override]
        return Markup(Macro.__call__(self, *args, **kwargs))


MarkupMacro.__name__ = MarkupMacro.__qualname__ = "Macro"  # prints as <Macro 'name'>


def make_markup_macro(
    func: Any, name: str, arguments: tuple, catch_kwargs: bool, catch_varargs: bool, caller: bool
) -> Macro:
    return MarkupMacro(func, name, arguments, catch_kwargs, catch_varargs, caller)


def join_autoescape(value: Any, d: Any = "", attribute: Any = None) -> str:
    """``do_join`` with ``eval_ctx.autoescape``."""
    if attribute is not None:
        value = map(make_attrgetter(attribute), value)
    if not hasattr(d, "__html__"):
        value = list(value)
        do_escape = False
        for idx, item in enumerate(value):
            if hasattr(item, "__html__"):
                do_escape = True
            else:
                value[idx] = str(item)
        return (escape(d) if do_escape else str(d)).join(value)
    return soft_str(d).join(map(soft_str, value))


def replace_autoescape(s: Any, old: Any, new: Any, count: Optional[int] = None) -> str:
    """``do_replace`` with ``eval_ctx.autoescape``."""
    if count is None:
        count = -1
    if hasattr(old, "__html__") or hasattr(new, "__html__") and not hasattr(s, "__html__"):
        s = escape(s)
    else:
        s = soft_str(s)
    return s.replace(soft_str(old), soft_str(new), count)


def xmlattr_autoescape(d: Any, autospace: bool = True) -> Markup:
    return Markup(do_xmlattr(d, autospace))


def urlize_autoescape(*args: Any, **kwargs: Any) -> Markup:
    return Markup(do_urlize(*args, **kwargs))


# a wrong call's TypeError names jinja2's function ("do_replace() missing 2 required ..."), as
# the plain filters' does (urlize's comes from do_urlize itself)
for _version, _name in (
    (join_autoescape, "sync_do_join"),  # jinja2's join is the async variant of sync_do_join
    (replace_autoescape, "do_replace"),
    (xmlattr_autoescape, "do_xmlattr"),
):
    _version.__name__ = _version.__qualname__ = _name


__all__ = [
    "escape_output",
    "join_autoescape",
    "make_markup_macro",
    "markup_capture",
    "markup_concat",
    "replace_autoescape",
    "urlize_autoescape",
    "xmlattr_autoescape",
]
