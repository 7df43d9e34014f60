"""The compiler pipeline: template text -> frontend (Lark) -> IR -> passes -> emitter.

``api`` is the entry point (``compile_template``), ``build`` the pipeline it runs and
``compiled`` the object it returns (a module from the cache needs only that one: importing
this package imports no pipeline); ``jinja/`` and ``gotmpl/`` are the two
frontends on their shared base ``frontend`` (Lark bootstrap, token names, error translation),
``ir`` the one tree both lower to, ``passes/`` the IR -> IR passes in the order
``passes/pipeline.py`` lists them, ``emit`` the Python emitter (``unparse`` prints its ast
nodes), ``registry`` the runtime functions generated code may call, ``errors`` the one error
type with its stable codes, ``version`` the compiler version. docs/architecture.md draws it.
Tools built on this API live in the ``tmpl2py`` facade package, never here.
"""

from typing import Any

from .api import CompiledTemplate, compile_template
from .errors import CompileError
from .version import __version__

__all__ = ["CompileError", "CompiledTemplate", "compile_template", "generate", "__version__"]


def __getattr__(name: str) -> Any:
    """``generate`` (and the package's submodules) on first use: the pipeline is imported
    only when a module must be made."""
    if name == "generate":
        from .build import generate

        return generate
    import importlib

    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
