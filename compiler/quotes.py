"""Black's string-quote normalisation for the literals the emitter writes, without importing
black (importing it costs a compile ~0.3-0.7 s in a cold process; black itself runs only
where a module file is written).

``normalize_string_quotes`` is black's function of that name (``black/strings.py``, black
26.x, MIT licence), kept to what the emitter feeds it: ``repr()`` of a ``str``, which has no
prefix. ``tests/unit/test_quotes.py`` checks it against black's own on many strings.
"""

from __future__ import annotations

import re

_UNESCAPED = {q: re.compile(rf"(([^\\]|^)(\\\\)*){q}") for q in ('"', "'")}
_ESCAPED = {q: re.compile(rf"([^\\]|^)\\((?:\\\\)*){q}") for q in ('"', "'")}


def _sub_twice(regex: re.Pattern, replacement: str, original: str) -> str:
    """Replace ``regex`` with ``replacement`` twice on ``original`` (for overlapping
    matches, as black does)."""
    return regex.sub(replacement, regex.sub(replacement, original))


def normalize_string_quotes(s: str) -> str:
    """Prefer double quotes but only if it doesn't cause more escaping (``s``: the ``repr``
    of a ``str``: quoted with ``'`` or ``"``, no prefix, no triple quotes)."""
    if s[0] == '"':
        orig_quote, new_quote = '"', "'"
    else:
        orig_quote, new_quote = "'", '"'
    body = s[1:-1]
    new_body = _sub_twice(_ESCAPED[new_quote], rf"\1\2{new_quote}", body)
    if body != new_body:
        body = new_body
        s = f"{orig_quote}{body}{orig_quote}"
    new_body = _sub_twice(_ESCAPED[orig_quote], rf"\1\2{orig_quote}", new_body)
    new_body = _sub_twice(_UNESCAPED[new_quote], rf"\1\\{new_quote}", new_body)
    orig_escape_count = body.count("\\")
    new_escape_count = new_body.count("\\")
    if new_escape_count > orig_escape_count:
        return s  # Do not introduce more escaping
    if new_escape_count == orig_escape_count and orig_quote == '"':
        return s  # Prefer double quotes
    return f"{new_quote}{new_body}{new_quote}"
