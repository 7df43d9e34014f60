"""The compiler's version, written into every generated module's header and metadata."""

__version__ = "0.2.0"
