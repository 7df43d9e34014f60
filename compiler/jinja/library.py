"""The filters and tests of transformers' environment, as runtime helper names.

Built from ``runtime.jinja_filters`` (the compiler may import the runtime; never the
reverse): ``FILTER_FUNCS["trim"] == "jinja_filters.do_trim"``. transformers replaces
``tojson``; the runtime module already holds that version.
"""

from __future__ import annotations

from runtime import jinja_filters as _lib

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
    raise RuntimeError(f"runtime.jinja_filters exposes {func!r} under no public name")


FILTER_FUNCS: dict[str, str] = {name: _helper_for(f) for name, f in sorted(_lib.FILTERS.items())}
TEST_FUNCS: dict[str, str] = {name: _helper_for(f) for name, f in sorted(_lib.TESTS.items())}
