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

#: Each public name -> the module that defines it (imported on first use: a generated module
#: imports ``tmpl2py.runtime``, which must not pull in the compiler, Lark or the loaders).
_EXPORTS = {
    "ChatTemplate": "loader",
    "CompileError": "compiler",
    "CompiledTemplate": "compiler",
    "SourceError": "sources",
    "compile_template": "compiler",
    "generate": "compiler",
    "load": "loader",
    "__version__": "compiler.version",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    """The facade's names, imported from their modules on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tmpl2py' has no attribute {name!r}")
    import gc
    import importlib

    # the collector paused while the modules load (a few thousand objects that live as long
    # as the process: collecting among them is ~10% of a cache hit), left as found
    paused = gc.isenabled()
    gc.disable()
    try:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    finally:
        if paused:
            gc.enable()
    globals()[name] = value
    return value
