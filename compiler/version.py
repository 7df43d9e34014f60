"""The compiler's version, written into every generated module's header and metadata."""

__version__ = "0.1.0"
