"""``{% block %}`` in a template that extends nothing (the only kind without a loader).

jinja2 renders such a block in place and also makes it callable as ``self.NAME()``; a block
reads the names of the template's context (the render's variables and what the top level has
set so far), a ``scoped`` one also the locals where it sits. The compiler gives each block one
function; reads of names the block does not set go through :func:`block_name`, so a top-level
name that is not assigned *yet* is the context's, as in jinja2 (a macro would see undefined).

================================  =============================================
``self.NAME`` / ``self['NAME']``   a :class:`BlockReference`; unknown name: undefined
``self.NAME()``                    the block's text (its function, called)
``super()``, ``self.NAME.super``   undefined "there is no parent block called 'NAME'."
``{% block NAME required %}``      rendered in place: ``TemplateRuntimeError``
================================  =============================================
"""

from __future__ import annotations

from functools import partial

from .access import resolve
from .core import MISSING, TemplateRuntimeError, Undefined
from .objects import TemplateReference

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable


class BlockReference:
    """jinja2.runtime.BlockReference of a template without a parent: one block."""

    __module__ = "jinja2.runtime"

    def __init__(self, name: str, func: Callable[[], str]) -> None:
        self.name = name
        self._func = func

    @property
    def super(self) -> Undefined:
        return no_parent_block(self.name)

    def __call__(self) -> str:
        return self._func()


def template_reference(blocks: dict) -> TemplateReference:
    """``self`` of a template with blocks (name -> the block's function); each ``self.NAME``
    is a new reference, as in jinja2."""
    return TemplateReference({name: partial(BlockReference, name, f) for name, f in blocks.items()})


def no_parent_block(name: str) -> Undefined:
    """``super()`` in block ``name``: there is no parent template."""
    return Undefined(f"there is no parent block called {name!r}.", name="super")


def required_block(name: str) -> str:
    """A required block rendered in place, with no child template to fill it."""
    raise TemplateRuntimeError(f"Required block {name!r} not found")


def block_name(value: Any, context: dict, name: str) -> Any:
    """A name a block reads: a name's start value (not assigned yet in the enclosing scope)
    is looked up in the render's context instead."""
    if value is MISSING or (
        type(value) is Undefined
        and value._undefined_name == name
        and value._undefined_obj is MISSING
        and value._undefined_hint is None
    ):
        return resolve(context, name)
    return value


__all__ = [
    "BlockReference",
    "block_name",
    "no_parent_block",
    "required_block",
    "template_reference",
]
