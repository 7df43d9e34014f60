"""Imported before Lark (by each dialect package and ``lark_tables``): Lark's optional
dependencies ``regex`` and ``interegular`` as stand-ins that import the real module on first
use.

Lark imports both at its own import when they are installed (~30 ms of a cold process,
``python -X importtime``) and uses them only while building a grammar (``regex`` for
Unicode categories, ``interegular`` for the terminal collision check, which
``tests/unit/test_lark_tables.py`` runs) or with ``Lark(regex=True)``; a compile loads its
parsers from prebuilt tables (``lark_tables``) and needs neither. Lark's own view is
unchanged (``has_interegular``, ``_has_regex`` are what they would be), and anyone else in
the process who uses either module gets the real one, imported then.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

#: the modules Lark imports if installed and a compile never uses
LAZY = ("regex", "interegular")


class _LazyModule(types.ModuleType):
    """Stands in ``sys.modules`` for a module not imported yet; the first read of an
    attribute it lacks imports the real module (which then takes its place in
    ``sys.modules``) and copies the real module's names in, so whoever holds the stand-in
    sees the real module's attributes."""

    def __getattr__(self, attr: str) -> Any:
        real = self.__dict__.get("_lazy_real")
        if real is None:
            name = self.__name__
            if sys.modules.get(name) is self:
                sys.modules.pop(name, None)
            real = importlib.import_module(name)
            self.__dict__.update(real.__dict__)
            self.__dict__["_lazy_real"] = real
        return getattr(real, attr)


def _import_lazily(name: str) -> None:
    """Make ``import name`` give a ``_LazyModule`` (unless the module is imported already or
    is not installed): Lark imports ``regex`` and ``interegular`` when they are installed
    (~30 ms of a cold process) but uses them only to build a grammar (``regex`` for Unicode
    categories, ``interegular`` for the collision check) or with ``Lark(regex=True)``,
    which then import them for real. ``importlib.util.LazyLoader`` does not do: the import
    system reads ``__spec__`` of a module found in ``sys.modules``, which would load it."""
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return
    if spec is None:
        return
    module = _LazyModule(name)
    # the real module's spec, so ``importlib.util.find_spec(name)`` (which reads it from
    # ``sys.modules``) answers as before; no ``__path__``: a submodule's import reads the
    # package's, which loads the package first
    module.__spec__ = spec
    sys.modules[name] = module


for _name in LAZY:
    _import_lazily(_name)
