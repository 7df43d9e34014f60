"""tmpl2py: compile LLM chat templates into plain Python render functions.

Jinja2 as Hugging Face transformers renders it, Go text/template as Ollama renders it. This
package is the facade users import; the installed distribution maps the project's folders
under it:

- ``tmpl2py.compiler`` (folder ``compiler/``): the pipeline, template text -> IR -> passes ->
  Python module;
- ``tmpl2py.runtime`` (folder ``runtime/``): the standard-library-only functions generated
  modules call, one package per dialect;
- this folder: the tools built on the compiler's API (the command line, ``inspect``, multi-
  template ``sources``, ``--standalone`` modules);
- ``tmpl2py.load(path)``: a model folder or template file in, a :class:`ChatTemplate` out,
  whose ``apply_chat_template`` is transformers' (``tokenize=False``); compiled modules are
  kept across processes by ``tmpl2py.cache``;
- ``tmpl2py.bench`` (folder ``bench/``): the benchmark harness behind ``tmpl2py bench``.
"""

from .compiler import CompileError, CompiledTemplate, __version__, compile_template, generate
from .load import ChatTemplate, load
from .sources import SourceError

__all__ = [
    "ChatTemplate",
    "CompileError",
    "CompiledTemplate",
    "SourceError",
    "compile_template",
    "generate",
    "load",
    "__version__",
]
