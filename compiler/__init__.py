"""The compiler pipeline: template text -> frontend (Lark) -> IR -> passes -> emitter.

``api`` is the entry point (``compile_template``); ``jinja/`` and ``gotmpl/`` are the two
frontends on their shared base ``frontend`` (Lark bootstrap, token names, error translation),
``ir`` the one tree both lower to, ``passes/`` the IR -> IR passes in the order
``passes/pipeline.py`` lists them, ``emit`` the Python emitter (``unparse`` prints its ast
nodes), ``registry`` the runtime functions generated code may call, ``errors`` the one error
type with its stable codes, ``version`` the compiler version. docs/architecture.md draws it.
Tools built on this API live in the ``tmpl2py`` facade package, never here.
"""

from .api import CompiledTemplate, compile_template, generate
from .errors import CompileError
from .version import __version__

__all__ = ["CompileError", "CompiledTemplate", "compile_template", "generate", "__version__"]
