"""The names a compiled template goes by: its dialects and profiles, the file name its code is
compiled under, the forms of its name that fit a comment line and an identifier.

Kept apart from the pipeline (``build``) and from the compiled object (``compiled``) because
both use them, and a template loaded from the cache must not import the pipeline.
"""

from __future__ import annotations

DIALECTS = ("jinja", "go")
#: the compile caps' defaults (``bounds`` checks them; here so that a cache hit, which passed
#: them when its entry was built, imports no part of the compile)
MAX_SIZE: "int | None" = 500_000
MAX_DEPTH: "int | None" = 64
#: the most functions (macros, call blocks; Go ``define`` / ``block``) a template may define
#: while the size cap is on: each is a function nested in ``render``, and CPython compiles a
#: function holding n nested functions in time quadratic in n (13,000 one-line macros took
#: 38 s); the corpus's templates define at most a few dozen
MAX_FUNCTIONS = 2_000
#: each dialect's profiles, the default first
PROFILES = {"jinja": ("hf", "plain"), "go": ("ollama", "plain")}


def default_profile(dialect: str) -> str:
    """The profile a dialect compiles with when none is named ("" for an unknown dialect)."""
    return PROFILES.get(dialect, ("",))[0]


def sha256_hex(data: "str | bytes") -> str:
    """The SHA-256 of ``data`` (text as UTF-8, lone surrogates kept), in hex: the source hash
    of generated modules' headers. The standard library's own SHA-256 where Python has it
    (importing hashlib loads OpenSSL, ~5 ms); imported on first use (a cache hit hashes
    nothing with it)."""
    try:
        from _sha256 import sha256  # Python <= 3.11
    except ImportError:  # pragma: no cover - depends on the Python version
        try:
            from _sha2 import sha256  # Python >= 3.12
        except ImportError:
            from hashlib import sha256
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return sha256(data).hexdigest()


def module_filename(name: str, text: str) -> str:
    """The file name a generated module's code is compiled under (and ``linecache`` knows)."""
    digest = sha256_hex(text)[:12]
    return f"<tmpl2py:{name}:{digest}>"


def header_safe(name: str) -> str:
    """A template name for a comment line: printable ASCII only, no newlines."""
    return "".join(c if 32 <= ord(c) < 127 else "?" for c in name)[:200]


def safe_ident(name: str) -> str:
    """A template name as a Python identifier (the generated module's ``__name__`` part)."""
    return "".join(c if c.isalnum() and c.isascii() else "_" for c in name) or "template"
