"""Bounded compile: caps on a template's size and block nesting, checked before the work.

A template past ``max_size`` characters is refused before it is parsed (code ``too-large``);
one whose blocks (``if``/``for``/macro/call/``set`` and filter blocks; Go's ``if``/
``range``/``with``/``define``) nest deeper than ``max_depth`` is refused before it is parsed
too, by a scan of its tags (code ``too-deep``, at the tag that goes one level too deep).
``None`` turns a cap off. Defaults: the largest template of the shared corpus has 40,609
characters and nests 9 blocks deep; real templates stay far below 500,000 and 64. With the
size cap on, a template also defines at most :data:`MAX_FUNCTIONS` functions (macros and
call blocks; Go ``define`` and ``block``: code ``too-large``, at the one past it), counted by
the same scan: each is a function nested in the render, which CPython compiles in time
quadratic in their number.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

from .errors import CompileError, position
from .names import MAX_DEPTH, MAX_FUNCTIONS, MAX_SIZE  # noqa: F401 - the caps' defaults, named here too


def check_size(source: str, max_size: Optional[int]) -> None:
    if max_size is not None and len(source) > max_size:
        raise CompileError(
            "too-large",
            f"the template has {len(source):,} characters, more than the {max_size:,} allowed"
            " (compile_template(..., max_size=...) raises the cap)",
        )


_JINJA_START = r"\{[%#]"
_JINJA_WORD = r"[-+]?\s*(\w*)"
_JINJA_OPEN = frozenset("if for macro call filter generation".split())
_FUNCTIONS = frozenset("macro call define block".split())  # (Go's ``define`` and ``block`` too)
_GO_START = r"\{\{-?\s*"
_GO_WORD = r"(if|range|with|define|block|end|else\s+if|else\s+with)\b"
_TOO_DEEP = "blocks nest more than {} deep (compile_template(..., max_depth=...) raises the cap)"


def check_depth(
    source: str, dialect: str, max_depth: Optional[int], max_functions: Optional[int] = None
) -> None:
    """Blocks nest at most ``max_depth`` deep, by one scan of the tags before any parsing
    (the parser and the lowering recurse per level; ``elif`` / ``else if`` is no level),
    and at most ``max_functions`` of them define a function. Linear: every search moves
    forward (an unclosed comment ends the scan)."""
    if max_depth is None and max_functions is None:
        return
    depth = 0
    functions = 0
    chains = [0]  # per open block: the ``elif`` / ``else if`` links of its chain so far
    scan = _jinja_tags if dialect == "jinja" else _go_tags
    for offset, step in scan(source):
        if step == _LINK:
            chains[-1] += 1
            if max_depth is not None and chains[-1] > MAX_CHAIN:
                raise CompileError("too-deep", _TOO_LONG.format(MAX_CHAIN), *position(source, offset))
            continue
        if step > 0:
            chains.append(0)
        elif len(chains) > 1:
            chains.pop()
        if step == _FUNCTION:
            functions += 1
            if max_functions is not None and functions > max_functions:
                raise CompileError(
                    "too-large",
                    f"the template defines more than {max_functions:,} functions (macros, call"
                    " blocks, Go templates)"
                    " (compile_template(..., max_size=None) lifts the cap)",
                    *position(source, offset),
                )
            step = 1
        depth += step
        if max_depth is not None and depth > max_depth:
            raise CompileError("too-deep", _TOO_DEEP.format(max_depth), *position(source, offset))
        depth = max(depth, 0)


#: a scan's step for a tag that opens a level and defines a function, and for a link of an
#: ``elif`` / ``else if`` chain (no level: the compile nests it, which ``MAX_CHAIN`` bounds)
_FUNCTION = 2
_LINK = 3
#: the longest ``elif`` / ``else if`` chain (the IR nests each link in the last, and the
#: compile recurses through them, about five frames a link, within Python's recursion limit:
#: never raised for a compile, as the limit is the process's, and a render in another thread
#: recursing in C under a raised limit can overflow its stack (red team s7h F2, F3); real
#: templates' longest chains have about 20 links)
MAX_CHAIN = 100
_TOO_LONG = "an elif chain has more than {} links (compile_template(..., max_depth=None) lifts the cap)"


def _jinja_tags(source: str) -> Iterator[tuple[int, int]]:
    """(offset, step) of each block tag: +1 / -1 for one that opens / closes a level,
    ``_FUNCTION`` for one that opens a level and defines a function, ``_LINK`` for an
    ``elif``."""
    start, name = re.compile(_JINJA_START), re.compile(_JINJA_WORD)  # re's cache: no cost at import
    pos = 0
    while (match := start.search(source, pos)) is not None:
        i = match.start()
        if source[i + 1] == "#":
            pos = source.find("#}", i + 2)
            if pos == -1:
                return
            continue
        word_match = name.match(source, i + 2)
        word, pos = word_match.group(1), word_match.end()
        if word == "raw":  # its content is text
            pos = source.find("endraw", pos)
            if pos == -1:
                return
        elif word.startswith("end"):
            yield i, -1
        elif word == "elif":
            yield i, _LINK
        elif word in _FUNCTIONS:
            yield i, _FUNCTION
        elif word in _JINJA_OPEN:
            yield i, 1
        elif word == "set":  # the block form has no "=" before the tag's end
            end = source.find("%}", pos, pos + 4096)
            if "=" not in source[pos : end if end != -1 else pos + 4096]:
                yield i, 1


def _go_tags(source: str) -> Iterator[tuple[int, int]]:
    """:func:`_jinja_tags` for Go's actions (``define`` / ``block`` define templates; an
    ``else if`` / ``else with`` is a link)."""
    start, keyword = re.compile(_GO_START), re.compile(_GO_WORD)
    pos = 0
    while (match := start.search(source, pos)) is not None:
        pos = match.end()
        if source.startswith("/*", pos):
            pos = source.find("*/", pos + 2)
            if pos == -1:
                return
            continue
        word = keyword.match(source, pos)
        if word is not None:
            kind = word.group(1)
            if kind.startswith("else"):
                yield match.start(), _LINK
                continue
            yield match.start(), -1 if kind == "end" else _FUNCTION if kind in _FUNCTIONS else 1


def check(
    source: str,
    dialect: str,
    name: Optional[str],
    max_size: Optional[int],
    max_depth: Optional[int],
) -> None:
    """The compile caps, checked before any parsing; the error carries the source."""
    try:
        check_size(source, max_size)
        check_depth(source, dialect, max_depth, MAX_FUNCTIONS if max_size is not None else None)
    except CompileError as e:
        raise e.with_source(source, name or "<template>") from None
