"""Top-level start values share one undefined value per absent name.

The template's own start values use ``resolve_top``, which gives every absent name one
shared undefined value instead of building one per render. Only at the top level: there each
name is looked up once per render, so no template can tell the values apart (a macro's own
lookup still builds a fresh one, as jinja2 does).

Keeps output byte-identical (pure IR -> IR, Jinja modules after scope resolution).
"""

from __future__ import annotations


from .. import ir
from .util import map_start_values


def run(module: ir.Module) -> ir.Module:
    return map_start_values(
        module, "jinja.resolve", lambda call: ir.replace(call, name="jinja.resolve_top")
    )
