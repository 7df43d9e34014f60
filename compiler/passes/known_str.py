"""Known strings: no ``to_str`` of a value already known to be a ``str``.

type knowledge. ``to_str(e)`` is dropped where ``e`` is known to be a ``str`` already
(string constants, ``~`` concatenation, ``+`` of two known strings, helpers whose result is
always a ``str``). Nothing that could raise is removed.

Keeps output byte-identical (pure IR -> IR).
"""

from __future__ import annotations

from typing import Any

from .. import ir
from .util import TO_STR_HELPERS, is_str, map_nodes


#: the class of the nodes ``run`` changes
_HELPER = frozenset({ir.Helper})


def run(module: ir.Module) -> ir.Module:
    """Invariant: no ``to_str`` is applied to an expression already known to be a str."""

    helper = ir.Helper

    def fold(node: Any) -> Any:
        if node.__class__ is helper and node.name in TO_STR_HELPERS and len(node.args) == 1:
            if is_str(node.args[0]):
                return node.args[0]
        return node

    return ir.replace(module, body=map_nodes(module.body, fold, classes=_HELPER))
