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
- ``tmpl2py.bench`` (folder ``bench/``): the benchmark harness behind ``tmpl2py bench``.
"""

__all__ = ["CompileError", "CompiledTemplate", "compile_template", "generate", "__version__"]


def __getattr__(name: str) -> object:
    """The facade's names, imported from the compiler on first use: a generated module
    imports ``tmpl2py.runtime``, which must not pull in the compiler (Lark, the passes)."""
    if name in __all__:
        from . import compiler

        return getattr(compiler, name)
    raise AttributeError(f"module 'tmpl2py' has no attribute {name!r}")
