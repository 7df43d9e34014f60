"""The Go text/template dialect (Ollama's semantics): ``parse(source) -> ir.Module``."""

from .frontend import parse, parse_tree

__all__ = ["parse", "parse_tree"]
