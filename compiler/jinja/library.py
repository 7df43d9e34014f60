"""The filters and tests of transformers' environment, as runtime helper names.

Built from ``runtime.jinja_filters`` (the compiler may import the runtime; never the
reverse): ``FILTER_FUNCS["trim"] == "jinja_filters.do_trim"``. transformers replaces
``tojson``; the runtime module already holds that version.
"""

from __future__ import annotations

import types as _types

from tmpl2py.runtime.jinja import filters as _lib

from .. import registry


def _helper_for(func: object) -> str:
    """The helper name of a runtime function: its public module-level name."""
    names = sorted(
        (n for n, v in vars(_lib).items() if v is func and not n.startswith("_")),
        key=lambda n: (not n.startswith(("do_", "test_")), n),
    )
    if names:
        return f"jinja_filters.{names[0]}"
    name = getattr(func, "__name__", "")
    if name in registry.BUILTINS:
        return f"builtins.{name}"
    raise RuntimeError(f"tmpl2py.runtime.jinja.filters exposes {func!r} under no public name")


FILTER_FUNCS: dict[str, str] = {name: _helper_for(f) for name, f in sorted(_lib.FILTERS.items())}
TEST_FUNCS: dict[str, str] = {name: _helper_for(f) for name, f in sorted(_lib.TESTS.items())}

#: How CPython names (in argument errors raised by the caller, e.g. ``X() argument after **
#: must be a mapping``) the function the reference calls for each filter and test helper.
_REFERENCE_NAMES = {
    "filter:d": "jinja2.filters.do_default",
    "filter:e": "markupsafe.escape",
    "filter:escape": "markupsafe.escape",
    "filter:safe": "jinja2.filters.do_mark_safe",
    "filter:string": "markupsafe.soft_str",
    "filter:tojson": "transformers.utils.chat_template_utils._cached_compile_jinja_template.<locals>.tojson",
}


def _function_str(func: object) -> str:
    """CPython's ``_PyObject_FunctionStr``: ``module.qualname``, without ``builtins.``."""
    qualname = getattr(func, "__qualname__", "")
    module = getattr(func, "__module__", None)
    return f"{module}.{qualname}" if module and module != "builtins" else qualname


def _reference_name(kind: str, name: str, func: object) -> str:
    if not isinstance(func, _types.FunctionType):  # a builtin: the same object as jinja2's
        return _function_str(func)
    prefix = "jinja2.filters.do_" if kind == "filter" else "jinja2.tests.test_"
    return _REFERENCE_NAMES.get(f"{kind}:{name}", prefix + name)


FILTER_REFERENCE_NAMES: dict[str, str] = {
    name: _reference_name("filter", name, f) for name, f in sorted(_lib.FILTERS.items())
}
TEST_REFERENCE_NAMES: dict[str, str] = {
    name: _reference_name("test", name, f) for name, f in sorted(_lib.TESTS.items())
}


def _by_helper() -> dict[str, str]:
    out: dict[str, str] = {}
    for funcs, names in (
        (FILTER_FUNCS, FILTER_REFERENCE_NAMES),
        (TEST_FUNCS, TEST_REFERENCE_NAMES),
    ):
        for name, helper in funcs.items():
            assert out.setdefault(helper, names[name]) == names[name], helper
    return out


#: ``REFERENCE_NAMES["jinja_filters.do_join"] == "jinja2.filters.do_join"``
REFERENCE_NAMES: dict[str, str] = _by_helper()
