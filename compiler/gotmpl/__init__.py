"""The Go text/template dialect (Ollama's semantics): ``parse(source) -> ir.Module``."""

from .. import lark_import  # noqa: F401 - before Lark is imported (see there)
from .frontend import parse, parse_tree  # noqa: E402

__all__ = ["parse", "parse_tree"]
