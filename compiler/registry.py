"""The runtime primitives the emitter may call.

A ``Helper("mod.fn")`` in the IR names the public function ``fn`` of the runtime module that
``RUNTIME_MODULES[mod]`` names (``jinja`` is the package ``runtime/jinja/``, whose namespace
gathers its core, objects and access modules; ``gotmpl`` is ``runtime/go/execute.py``);
``builtins.fn`` names a Python builtin. Nothing else can be called from generated code.
A test checks that every helper the frontends emit resolves here.
"""

from __future__ import annotations

import builtins
import importlib
from types import ModuleType

#: The IR's helper namespaces -> the runtime modules generated code imports from.
RUNTIME_MODULES = {
    "jinja": "tmpl2py.runtime.jinja",
    "jinja_filters": "tmpl2py.runtime.jinja.filters",
    "jinja_autoescape": "tmpl2py.runtime.jinja.autoescape",
    "gotmpl": "tmpl2py.runtime.go.execute",
    "ollama": "tmpl2py.runtime.go.ollama",
    "limits": "tmpl2py.runtime.limits",
}

#: Builtins generated code may call directly.
BUILTINS = frozenset(
    {"slice", "str", "len", "isinstance", "list", "dict", "tuple", "type", "enumerate", "iter"}
)


class UnknownHelper(KeyError):
    pass


def _module(name: str) -> ModuleType:
    if name not in RUNTIME_MODULES:
        raise UnknownHelper(name)
    return importlib.import_module(RUNTIME_MODULES[name])


def resolve(helper: str) -> tuple[str, str]:
    """``"jinja.getattr_"`` -> (``"tmpl2py.runtime.jinja"``, ``"getattr_"``); ``("", "str")`` for builtins.

    A runtime attribute that *is* a builtin (``to_str = str``) resolves to the builtin,
    so generated code calls it without a global lookup through the runtime module.
    """
    mod, _, fn = helper.partition(".")
    if mod == "builtins":
        if fn not in BUILTINS:
            raise UnknownHelper(helper)
        return ("", fn)
    module = _module(mod)
    if fn.startswith("_") or not hasattr(module, fn):
        raise UnknownHelper(helper)
    value = getattr(module, fn)
    name = getattr(value, "__name__", None)
    if name and getattr(builtins, name, None) is value and name in BUILTINS:
        return ("", name)
    return (RUNTIME_MODULES[mod], fn)


def value(helper: str) -> object:
    """The Python object a helper names (for passes that fold constants)."""
    module, fn = resolve(helper)
    if not module:
        return getattr(builtins, fn)
    return getattr(importlib.import_module(module), fn)
