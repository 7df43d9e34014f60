"""tmpl2py: compile LLM chat templates (Jinja2 as transformers renders them, Go
text/template as Ollama renders them) into plain Python render functions."""

__version__ = "0.1.0"

from .errors import CompileError  # noqa: E402
from .api import CompiledTemplate, compile_template, generate  # noqa: E402

__all__ = ["CompileError", "CompiledTemplate", "compile_template", "generate", "__version__"]
