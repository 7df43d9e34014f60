"""The pass pipeline: which passes run, in which order, for which dialect."""

from __future__ import annotations

from typing import Optional

from .. import ir
from . import optimize as optimize_passes
from . import cse, scope, specialize


def run(
    module: ir.Module, profile: str, optimize: bool = True, exact_undefined: Optional[bool] = None
) -> ir.Module:
    """``exact_undefined``: give every read of an absent name its own undefined value, as
    jinja2 does (default: only in templates that can tell, ``scope.uses_identity``)."""
    if module.dialect == "jinja":
        from ..jinja.lowering import check_loop_controls, check_unknown_names

        check_unknown_names(module.body)
        check_loop_controls(module.body, in_loop=False)
        if exact_undefined is None:
            exact_undefined = scope.uses_identity(module)
        module = scope.resolve(module, exact_undefined)
    if optimize:
        module = optimize_passes.run(specialize.run(module))
        if not exact_undefined:  # a kept lookup shares an absent key's undefined: see cse
            module = cse.run(module)
        module = specialize.context_gets(module)
    return module
