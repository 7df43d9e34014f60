"""The pass pipeline: which passes run, in which order, for which dialect."""

from __future__ import annotations

from .. import ir
from . import optimize as optimize_passes
from . import scope, specialize


def run(module: ir.Module, profile: str, optimize: bool = True) -> ir.Module:
    if module.dialect == "jinja":
        from ..jinja.lowering import check_loop_controls, check_unknown_names

        check_unknown_names(module.body)
        check_loop_controls(module.body, in_loop=False)
        module = scope.resolve(module)
    if optimize:
        module = specialize.batch_top_resolve(optimize_passes.run(specialize.run(module)))
    return module
