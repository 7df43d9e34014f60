"""Size guards and linear rewrites for the builtin filters (``filters.py`` calls these).

A guard computes, before a filter (or a growing ``str`` method: :func:`call_str_method`)
builds anything, the size its arguments would make
(``center(10**9)``, ``indent`` of many lines, ``batch(n, fill)``, ``slice(n)``, ``tojson``
with a huge indent, ``replace`` / ``join`` amplifying) and raises ``RenderLimitExceeded``
past ``Limits.value`` (``Limits.output`` for sizes that scale with the data). Guards look
only at arguments of the types the filter expects and below 4,096 they cost one compare;
anything else is left for the filter to fail on exactly as jinja2's does.
"""

from __future__ import annotations

import codecs
import functools
from operator import length_hint as _length_hint
from typing import Any, Callable

from ..limits import SHORT, RenderLimitExceeded, built_units, charge, check_built, check_size, current, weigh

#: sizes below this are never checked (one compare on the common path)
SMALL = 4096


def _is_int(value: Any) -> bool:
    return type(value) is int


def guard_width(width: Any, what: str) -> None:
    """A padding width (``center``, ``truncate``...): the result is at least that long."""
    if _is_int(width) and width > SMALL:
        check_size(width, what)


def guard_count(count: Any, what: str) -> None:
    """A number of pieces to make (``slice`` count, ``batch`` fill)."""
    if _is_int(count) and count > SMALL:
        check_size(count, what)


def guard_indent(s: Any, width: Any) -> None:
    """``indent``: each line gains the indentation (a width past ``Limits.value`` is refused
    outright)."""
    guard_width(width, "indent")
    if isinstance(width, str):
        pad = len(width)
    elif _is_int(width):
        pad = width
    else:
        return
    if pad > 16 and isinstance(s, str):  # (every line break ``splitlines`` splits at)
        _check_output(len(s) + pad * (_line_breaks(s) + 2), "indent")


def guard_wrap(s: Any, width: Any, wrapstring: Any, break_long_words: Any = True) -> None:
    """``wordwrap``: a wrap string between pieces of ``width`` characters; and a long word
    broken into pieces costs its length squared over the width (``textwrap`` cuts each piece
    off the rest of the word: a word of 400,000 characters at width 1 took 2.3 s), charged
    as it starts (a unit per 65,536 characters copied)."""
    if isinstance(width, (float, bool)) and width == width and abs(width) < 1 << 62:
        width = int(width)  # (textwrap takes any real width: a float's pieces are the int's, or more)
    if isinstance(s, str) and break_long_words and _is_int(width) and width > 0:
        if len(s) * len(s) // (width << 16) > 64:  # (the whole text as one word: a bound)
            longest = max(map(len, s.split()), default=0)
            charge(longest * longest // (width << 16))
    if isinstance(s, str) and isinstance(wrapstring, str) and len(wrapstring) > 1 and isinstance(width, int):
        pieces = len(s) // max(width, 1) + _line_breaks(s) + 1
        if pieces * len(wrapstring) > SMALL:
            _check_output(len(s) + pieces * len(wrapstring), "wordwrap")


def guard_replace(s: str, old: str, new: str, count: Any) -> None:
    """``replace``: every occurrence grows the text by ``len(new) - len(old)``."""
    grow = len(new) - len(old)
    if grow <= 0 or len(s) * grow <= SMALL:
        return
    found = len(s) + 1 if old == "" else s.count(old)
    if _is_int(count) and 0 <= count < found:
        found = count
    if found * grow > SMALL:
        _check_output(len(s) + found * grow, "replace")


def guard_join(items: list, separator: Any) -> None:
    """``join``: the separator between every two items."""
    if isinstance(separator, (str, bytes, bytearray)) and len(separator) * len(items) > SMALL:
        _check_output(len(separator) * len(items), "join")


def guard_json_indent(value: Any, indent: Any, separators: Any = None) -> None:
    """``tojson(indent=n, separators=(a, b))``: each line of the output carries ``depth * n``
    characters, and each item a separator (red team s9h F4: only the indent was counted)."""
    pad = len(indent) if isinstance(indent, str) else indent if _is_int(indent) else 0
    sep = 0
    if isinstance(separators, (tuple, list)) and len(separators) == 2:
        sep = sum(len(part) for part in separators if isinstance(part, str))
    if pad <= 16 and sep <= 16:
        return
    lines, depth = _json_shape(value)
    _check_output(lines * (depth * max(pad, 0) + sep), "tojson's indent" if sep <= 16 else "tojson's separators")


def _json_shape(value: Any) -> tuple[int, int]:
    """(lines, deepest nesting) of a JSON document laid out with an indent, counting a
    container held many times as often as json writes it: each container walked once (its
    lines and depth remembered by id), so shared data costs its size, not its expansion; a
    container inside itself is json's ``ValueError`` (it raises it too, at once)."""
    done: dict = {}  # id -> (lines, depth) of a container walked
    on_path: set = set()
    stack: list = [(value, False)]
    while stack:
        item, ready = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        key = id(item)
        if not ready:
            if key in done:
                continue
            if key in on_path:
                raise ValueError("Circular reference detected")
            on_path.add(key)
            stack.append((item, True))
            stack.extend((child, False) for child in children if isinstance(child, (dict, list, tuple)))
            continue
        on_path.discard(key)
        lines, depth = len(children), 1
        for child in children:
            shape = done.get(id(child)) if isinstance(child, (dict, list, tuple)) else None
            if shape is not None:
                lines += shape[0]
                depth = max(depth, shape[1] + 1)
        done[key] = (lines, depth)
    if not isinstance(value, (dict, list, tuple)):
        return 0, 1  # a scalar is printed without any indent
    lines, depth = done[id(value)]
    return lines, depth + 1


def _check_output(size: int, what: str) -> None:
    """A text about to be built in one step (a ``replace``, ``join``, ``indent``, ``wordwrap``,
    an ``expandtabs``...) of about ``size`` characters: charged as building it is
    (``limits.built_units``: past 1M characters at the output's rate, so the fuel stops a
    text of tens of millions before it is built, and no later step multiplies one of 100M:
    an ``upper`` of it took 1.6 GB); refused past ``Limits.output`` first."""
    cap = current().output
    if cap is not None and size > cap:
        raise RenderLimitExceeded(
            "output", f"{what} would build {size:,} characters (limit {cap:,})"
        )
    charge(built_units(size))




def per_item(
    weight: int = 1, shift: int = 4, text: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A filter whose work grows with its input: each call charges the render's fuel
    (``limits.charge``; a unit is about a microsecond of work) ``weight`` units per item of
    a list, tuple or dict, and a unit per ``2 ** shift`` characters of a string (a regex or
    a Python loop over them: shift 0-2; C-speed scans: 4), so a loop calling it is bounded
    by the fuel in time as well as in count. ``text``: the filter works on its input's text
    (``soft_str``: a container's repr, or its items quoted), so a container pays for that
    text too, as ``limits.weigh`` measures it (``[message.content]|urlize`` ran one 4 MB
    message through ``urlize`` for two units: 9 s; red team s8h F1). Inputs without a cheap
    length (generators) are charged by the filter that made them."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def charged(value: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(value, str):
                charge(len(value) >> shift)
            elif isinstance(value, _CONTAINERS):
                charge(len(value) * weight)
                if text:
                    charge(weigh(value, {}) >> shift)
            return fn(value, *args, **kwargs)

        return charged

    return wrap


#: inputs whose length is known without walking them: a ``range`` too (``range(100000)|sum``
#: walks 100,000 items in C; a generator is charged by the filter that made it)
_CONTAINERS = (list, tuple, dict, range, set, frozenset, type({}.keys()), type({}.values()), type({}.items()))


def charge_input(value: Any, weight: int, shift: int) -> None:
    """:func:`per_item`'s charge, called from inside a frequent filter (no wrapper frame);
    an input of a few items is left to the loop's own tick (``fuel.body_cost``)."""
    if type(value) is str:
        if len(value) >> shift > 8:
            charge(len(value) >> shift)
    elif isinstance(value, _CONTAINERS) and len(value) * weight > 8:
        charge(len(value) * weight)


#: the deepest chain of lazy filters (``map``, ``select``... of another's generator) a render
#: makes: consuming one resumes every level per item, in C-level recursion (a chain fed back
#: through a namespace, 100,000 deep, overflowed the C stack at some recursion limits)
LAZY_DEPTH = 256
#: the code objects of the lazy filters' generators (``mark_lazy``): their frames hold the
#: chain's ``_size`` and ``_depth``
_LAZY_CODES: set = set()
_GENERATOR = type((lambda: (yield))())


def mark_lazy(generator_function: Callable[..., Any]) -> Callable[..., Any]:
    """Register a lazy filter's generator function (its parameters include ``_size``, the
    item count of the sized value at the chain's start, and ``_depth``: :func:`lazy_charge`)."""
    _LAZY_CODES.add(generator_function.__code__)
    return generator_function


def lazy_charge(value: Any, weight: int, shift: int) -> tuple:
    """A lazy filter's charge as it is called: ``(size, depth)`` for the generator it makes.
    A sized input is charged as :func:`charge_input` charges it (its length, depth 1); the
    generator of another lazy filter (red team s8h F3: a chain of 100 ``map``s over 100,000
    items paid for its first level only, and ran 4 s inside one ``list``) is charged for the
    items at the chain's start, as each level walks them again, and refused past
    :data:`LAZY_DEPTH` levels before any is iterated. Any other iterable: unknown (None, 1)."""
    if type(value) is _GENERATOR and value.gi_code in _LAZY_CODES:
        frame = value.gi_frame
        if frame is None:  # run to its end: it yields nothing more
            return 0, 1
        found = frame.f_locals
        size, depth = found.get("_size"), found.get("_depth", 1)
        if depth >= LAZY_DEPTH:
            from ..limits import RenderDepthExceeded

            raise RenderDepthExceeded(
                f"a chain of more than {LAZY_DEPTH:,} lazy filters (map, select...) each over the last"
            )
        if size is not None and size * weight > 8:
            charge(size * weight)
        return size, depth + 1
    charge_input(value, weight, shift)
    if isinstance(value, (str, *_CONTAINERS)):
        return len(value), 1
    # an iterator that knows how many items it has left (``reversed`` of a list or a range:
    # red team s9h2 E), charged as a sized input; any other, unknown
    hint = _length_hint(value, -1)
    if hint < 0:
        return None, 1
    if hint * weight > 8:
        charge(hint * weight)
    return hint, 1


def guard_urlize(pieces: list, target: Any, rel: Any, schemes: int = 0) -> None:
    """``urlize`` of a text split into ``pieces`` (words and the whitespace between them):
    each link (at most a word each) carries the ``target`` and ``rel`` attributes and the URL
    twice; and each word is compared with every one of ``schemes`` extra schemes, in Python
    (a unit per 16 comparisons)."""
    words = (len(pieces) + 1) >> 1
    if schemes and words * schemes > 64:
        charge(words * schemes >> 4)
    extra = sum(len(a) for a in (target, rel) if isinstance(a, str))
    if extra > 16 and words * extra > SMALL:
        _check_output(3 * sum(map(len, pieces)) + words * (extra + 40), "urlize")


#: ``str`` methods whose result can be much longer than the string and their arguments (or,
#: ``encode``, cost far more than its length: :func:`charge_codec`), never called directly
#: by the compiled code (``compiler/passes/method_calls.py``)
GROWING_STR_METHODS = frozenset(
    "replace join center ljust rjust zfill expandtabs translate encode".split()
)

#: the text codecs CPython writes in Python with loops over the text per distinct character
#: (``encodings.punycode``; ``idna`` runs it per label): ``encode('punycode')`` of 1,000
#: distinct CJK characters takes 0.14 s, of 27,000 45 s, in one call
_SLOW_CODECS = frozenset({"punycode", "idna"})
_ASCII = frozenset(map(chr, range(128)))


def charge_codec(s: Any, name: str, args: tuple, kwargs: dict) -> None:
    """``s.encode(encoding)`` / ``s.decode(encoding)`` with a codec of :data:`_SLOW_CODECS`:
    charged before it runs (``limits.charge``: a unit a microsecond). Punycode's encoder scans
    the whole text once per distinct non-ASCII character, ~0.2 us a character a scan and ~1 us
    a character besides (measured: 9,000 characters of one kind 9.5 ms, of 100 kinds 0.2 s;
    ASCII only, 35 ns a character); a decode is linear, ~3 us a character, but ``idna``'s
    encodes its result again (6,000 distinct characters: 3.8 s), charged as that encode. Other codecs are C
    (``charmap``'s tables included): linear, as any C-level step over a text."""
    encoding = args[0] if args else kwargs.get("encoding", "utf-8")
    if not isinstance(encoding, str) or not isinstance(s, _TEXTS):
        return  # the method raises
    try:
        codec = codecs.lookup(encoding).name
    except LookupError:
        return  # the method raises
    if codec in _SLOW_CODECS and len(s) > 64:
        if name == "encode" and isinstance(s, str):
            chars = set(s)
            distinct = len(chars) - len(chars.intersection(_ASCII))  # those it scans for
            charge(len(s) * (distinct + 5) // 5 if distinct else len(s) >> 4)
        elif codec == "idna":  # it encodes what it decoded again, to check it: as an encode
            charge(len(s) * (len(s) + 5) // 5)  # of as many distinct characters (a bound)
        else:
            charge(len(s) * 3)


def call_str_method(method: Any, args: tuple, kwargs: dict) -> Any:
    """``method(*args, **kwargs)`` for a method of a ``str``, ``bytes`` or ``bytearray``
    (``access.call``; a ``Markup``'s too): a growing one's result size checked before it is
    built (padding widths against ``Limits.value``, sizes that scale with the text against
    ``Limits.output``, as the filters' guards), and any one's result after it is made, as a
    long string ``~`` builds is (``limits.check_built``: ``s.encode().hex()`` doubles a text,
    ``encode('utf-32')`` quadruples it; fed back through a loop, each step is refused past
    the cap from at most four times it)."""
    made = _str_method(method, args, kwargs)
    if isinstance(made, _TEXTS) and len(made) >= SHORT:
        check_built(len(made), f"a string's {method.__name__}()")
    return made


_TEXTS = (str, bytes, bytearray)


#: methods whose result is a list of pieces of the text: as many items as it has
#: separators, each a new object (60,000 of them from a 60,000-character text)
SPLITTING_STR_METHODS = frozenset({"split", "rsplit", "splitlines"})
#: methods that test each character of the text against each of their argument's
#: (``str.strip(chars)``: a text of n characters and m chars take n * m steps)
STRIPPING_STR_METHODS = frozenset({"strip", "lstrip", "rstrip"})
#: a split's items, or a strip's steps (text x chars), free of any charge
FREE_ITEMS = 4096
FREE_STEPS = 1 << 16


def charge_strip(text: Any, chars: Any) -> None:
    """A strip of ``text`` by ``chars`` (``str.strip(chars)``, the ``trim`` filter): each
    character of the text is looked for among the chars, ``len(text) * len(chars)`` steps,
    charged past :data:`FREE_STEPS` (~100,000 steps a microsecond)."""
    steps = len(text) * len(chars)
    if steps > FREE_STEPS:
        charge(steps // 100_000)


#: what ``splitlines`` breaks lines at (``\r\n`` is one break: counted twice, a bound)
_LINE_BREAKS = ("\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _line_breaks(s: str) -> int:
    """How many line breaks ``s.splitlines()`` splits at (at most: ``\r\n`` counts twice)."""
    return sum(map(s.count, _LINE_BREAKS))


def _pieces_bound(s: Any, name: str, args: tuple, kwargs: dict) -> int:
    """At most how many pieces a split of ``s`` makes, known before it makes them (a split of
    100M characters into 33M pieces took 2.4 GB before a charge after it could refuse it):
    by a separator, its count (C-level); at whitespace, one piece per two characters; lines,
    their breaks; ``maxsplit`` caps it. Arguments the method refuses give 1 (it raises)."""
    if name == "splitlines":
        if isinstance(s, str):
            return _line_breaks(s) + 1
        return s.count(b"\n") + s.count(b"\r") + 1
    sep = args[0] if args else kwargs.get("sep")
    maxsplit = args[1] if len(args) > 1 else kwargs.get("maxsplit", -1)
    if sep is None:
        pieces = len(s) // 2 + 1
    elif type(sep) is type(s) and sep:
        pieces = s.count(sep) + 1
    else:
        return 1
    if type(maxsplit) is int and maxsplit >= 0:
        pieces = min(pieces, maxsplit + 1)
    return pieces


def _str_method(method: Any, args: tuple, kwargs: dict) -> Any:
    s = method.__self__
    name = method.__name__
    if name == "encode" or name == "decode":
        charge_codec(s, name, args, kwargs)
        return method(*args, **kwargs)
    if name not in GROWING_STR_METHODS:
        if name in STRIPPING_STR_METHODS and args and isinstance(args[0], _TEXTS):
            charge_strip(s, args[0])
            return method(*args, **kwargs)
        if name in SPLITTING_STR_METHODS and len(s) > FREE_ITEMS:
            pieces = _pieces_bound(s, name, args, kwargs)
            if pieces > FREE_ITEMS:
                charge(pieces >> 3)  # the items it will make (memory): a unit per 8
        return method(*args, **kwargs)
    if name == "join" and len(args) == 1 and not kwargs:
        items = args[0] if isinstance(args[0], (list, tuple)) else list(args[0])
        guard_join(items, s)
        return method(items)
    if name == "replace" and 2 <= len(args) <= 3 and isinstance(args[0], _TEXTS) and isinstance(args[1], _TEXTS):
        guard_replace(s, args[0], args[1], args[2] if len(args) == 3 else -1)
    elif name in ("center", "ljust", "rjust", "zfill") and args:
        guard_width(args[0], name)
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        if _is_int(size) and size > 1:
            guard_width(size, name)
            if s.count("\t") * size > SMALL:
                _check_output(len(s) + s.count("\t") * size, name)
    elif name == "translate" and len(args) == 1 and isinstance(s, str):
        # a table is anything indexed by code point: a dict's values, a list's items (red team s9h F3)
        table = args[0]
        values = table.values() if isinstance(table, dict) else table if isinstance(table, (list, tuple)) else ()
        longest = max((len(v) for v in values if isinstance(v, str)), default=1)
        if longest > 1 and len(s) * longest > SMALL:
            _check_output(len(s) * longest, name)
    return method(*args, **kwargs)
