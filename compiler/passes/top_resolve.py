"""Top-level start values share one undefined value per absent name.

The template's own start values use ``resolve_top``, which gives every absent name one
shared undefined value instead of building one per render. Only at the top level: there each
name is looked up once per render, so no template can tell the values apart (a macro's own
lookup still builds a fresh one, as jinja2 does).

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir


def run(module: ir.Module) -> ir.Module:
    if module.dialect != "jinja":
        return module

    def one(stmt: Any) -> Any:
        if (
            isinstance(stmt, ir.Assign)
            and isinstance(stmt.value, ir.Helper)
            and stmt.value.name == "jinja.resolve"
        ):
            return dataclasses.replace(
                stmt, value=dataclasses.replace(stmt.value, name="jinja.resolve_top")
            )
        return stmt

    return dataclasses.replace(module, body=tuple(one(s) for s in module.body))
