"""``{% include %}``, ``{% import %}``, ``{% from %}`` and ``{% extends %}`` in an environment
without a loader (transformers' chat-template environment has none).

jinja2 compiles these tags; running one fails inside ``Environment.get_template`` /
``select_template``, after the template expression has been evaluated:

=====================  ===========================================================
template expression    what running the tag raises
=====================  ===========================================================
a string, undefined    ``TypeError('no loader for this environment specified')``
an empty (falsy) value ``TemplatesNotFound`` (``include`` only; ``ignore missing``
                       swallows it and the tag renders nothing)
anything iterable      ``TypeError`` (no loader), from its first item
anything else          Python's ``TypeError`` of iterating it (``include`` only)
=====================  ===========================================================

``extends``, ``import`` and ``from`` always take the first row (jinja2 calls
``get_template`` on whatever the expression gives). Standard library only.
"""

from __future__ import annotations

from .core import TemplateError, Undefined
from .objects import make_macro

#: the wrap of a macro that returns ``macro_generator(...)`` (a name no pass optimises)
make_generator_macro = make_macro

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NO_LOADER = "no loader for this environment specified"


class TemplateNotFound(IOError, LookupError, TemplateError):
    """jinja2's ``TemplateNotFound`` (never raised for one name here: without a loader that is
    a ``TypeError``)."""

    def __init__(self, name: Any = None, message: Any = None) -> None:
        IOError.__init__(self, name)
        self._message = name if message is None else message
        self.name = name

    @property
    def message(self) -> Any:
        return self._message

    def __str__(self) -> str:
        return str(self._message)


class TemplatesNotFound(TemplateNotFound):
    """jinja2's ``TemplatesNotFound``: ``select_template`` of an empty list."""


def load_template(name: Any) -> Any:
    """``environment.get_template(name)`` without a loader (``extends``, ``import``, ``from``)."""
    raise TypeError(NO_LOADER)


def macro_generator(qualname: str) -> Any:
    """What a jinja2 macro whose body holds ``include ... without context`` returns: a
    generator object (jinja2 writes that include as ``yield from``), named as jinja2's
    function (``root.<locals>.macro``); its body never runs."""

    def gen() -> Any:
        return
        yield  # pragma: no cover - makes this a generator function

    gen.__qualname__ = qualname
    return gen()


def extends(name: Any) -> None:
    """``{% extends name %}``: ``get_template`` without a loader."""
    raise TypeError(NO_LOADER)


def include_template(name: Any, ignore_missing: bool = False) -> str:
    """``{% include name %}``: jinja2's ``get_or_select_template``; returns ``""`` only when
    ``ignore missing`` swallows the ``TemplatesNotFound`` of an empty list."""
    if isinstance(name, (str, Undefined)):
        raise TypeError(NO_LOADER)
    try:
        if not name:
            raise TemplatesNotFound(
                (), message="Tried to select from an empty list of templates."
            )
    except TemplateNotFound:
        if ignore_missing:
            return ""
        raise
    for _first in name:
        raise TypeError(NO_LOADER)
    raise TemplatesNotFound(name)  # pragma: no cover - a falsy-looking non-empty iterable


__all__ = [
    "NO_LOADER",
    "TemplateNotFound",
    "TemplatesNotFound",
    "extends",
    "macro_generator",
    "make_generator_macro",
    "include_template",
    "load_template",
]
