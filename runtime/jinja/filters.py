"""jinja2 3.1.6's builtin filters, tests and extra globals, as transformers' environment has them.
Long because it mirrors jinja2's filters.py and tests.py: one function per builtin, each
with jinja2's exact edge cases.

Standard library only. ``FILTERS`` / ``TESTS`` map every builtin name to a module-level
function (``do_<name>`` / ``test_<name>``) called as ``f(value, *args, **kwargs)``: jinja2's
environment/context arguments are dropped, attribute paths go through the sandboxed
:func:`runtime.jinja.getitem`, and ``tojson`` is transformers' override (plain ``json.dumps``,
no HTML escaping). ``Markup`` / ``escape`` port the part of markupsafe that changes printed
output in an environment without autoescape. ``EXTRA_GLOBALS`` holds ``lipsum``, ``cycler``
and ``joiner``.

Several functions carry jinja2's ``__qualname__`` (``sync_do_map``, ``select_or_reject``, ...)
so that printed generators and argument errors name the same function as jinja2's do.

What a filter does to an undefined value ``x`` and to ``None`` (checked against jinja2;
"lazy" means the error is raised when the returned generator is iterated)::

    filter                   undefined x                         None
    abs, round               TypeError (bad operand / __round__) TypeError
    attr                     UndefinedError                      undefined
    batch, slice             empty / n empty lists               TypeError (lazy)
    capitalize, lower,
    upper, title, trim,
    format, string,
    striptags, urlize,
    e, escape, safe,
    forceescape, urlencode   ''                                  'None' (cased by the filter)
    center(n)                n spaces                            'None' centred
    count, length            0                                   TypeError (no len)
    default, d               the default                         None (unless boolean=true)
    dictsort                 UndefinedError                      AttributeError
    filesizeformat, float,
    int, indent              UndefinedError                      TypeError; float 0.0, int 0
    first, last, random,
    min, max                 undefined (prints '')               TypeError
    groupby, list, sort      []                                  TypeError
    items                    empty                               TypeError "Can only get item
                                                                 pairs from a mapping." (lazy)
    join, sum                '', 0                               TypeError
    map, select, reject,
    selectattr, rejectattr   empty                               empty (falsy input is skipped)
    pprint                   'Undefined'                         'None'
    replace                  ''                                  'None' with replacements
    reverse                  empty iterator                      FilterArgumentError
    tojson                   TypeError (not JSON serializable)   'null'
    truncate                 the undefined itself (prints '')    TypeError (no len)
    unique                   empty                               TypeError (lazy)
    wordcount                0                                   1
    wordwrap, xmlattr        UndefinedError                      AttributeError
"""

from __future__ import annotations

import functools
import operator
from collections import abc, namedtuple
from itertools import chain, groupby, islice
from types import GeneratorType

from . import bounded
from .access import DICT_ATTRS, REFERENCE_PRIVATE, getattr_, getitem, private_attribute
from .core import TemplateRuntimeError, Undefined
from .markup import Markup, escape, soft_str
from ..limits import NODE, SHORT, charge, check_built, check_size, check_weight, hash_key, mod as limits_mod, weigh, weighed

# Imported where used, not here: json, re, string and numbers serve a few filters, and a
# server importing a generated module should not pay for them (nor typing: annotations only).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator, Optional

# ----------------------------------------------------------------------------- errors


class FilterArgumentError(TemplateRuntimeError):
    """jinja2.exceptions.FilterArgumentError: a filter was called with bad arguments."""


def _named(qualname: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a function jinja2's name, as it shows in TypeErrors and printed generators."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        func.__qualname__ = qualname
        return func

    return decorate


class _LazyRe:
    """A regular expression compiled on first use (compiling them all at import costs ms)."""

    __slots__ = ("_args", "_kwargs", "_compiled")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._args, self._kwargs = args, kwargs
        self._compiled: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            import re

            self._compiled = re.compile(*self._args, **self._kwargs)
        return getattr(self._compiled, name)


_ARITY_RE = _LazyRe(
    r"(?P<name>\S+)\(\) takes (?:from (?P<lo>\d+) to )?(?P<hi>\d+) positional arguments?"
    r" but (?P<n>\d+) (?:was|were) given"
)


def _arity_message(message: str) -> str:
    """Count jinja2's hidden environment/context argument in a "takes N ... given" message."""
    m = _ARITY_RE.fullmatch(message)
    if m is None:
        return message
    lo = f"from {int(m['lo']) + 1} to " if m["lo"] else ""
    return f"{m['name']}() takes {lo}{int(m['hi']) + 1} positional arguments but {int(m['n']) + 1} were given"


def _passes_env(func: Callable[..., Any]) -> Callable[..., Any]:
    """For filters jinja2 passes an environment or context: argument-count errors say so."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except TypeError as e:
            if e.__traceback__ is None or e.__traceback__.tb_next is not None:
                raise  # raised inside the filter, not by the call itself
            raise TypeError(_arity_message(str(e))) from None

    return wrapper


# ----------------------------------------------------------------------------- attribute paths


def ignore_case(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _prepare_attribute_parts(attr: Any) -> list:
    if attr is None:
        return []
    if isinstance(attr, str):
        return [int(x) if x.isdigit() else x for x in attr.split(".")]
    return [attr]


#: a getter of more attribute parts than this charges each item it reads (``limits.charge``,
#: a unit a part): the filters charge an item each, and a path of 50,000 parts read for each
#: of 100,000 items ran inside one C-level ``list``/``sorted``/``join``, never looked at
LONG_PATH = 64


def make_attrgetter(
    attribute: Any, postprocess: Optional[Callable[[Any], Any]] = None, default: Any = None
) -> Callable[[Any], Any]:
    """Look ``attribute`` (dotted path, integer parts as ints) up with the sandbox's getitem."""
    parts = _prepare_attribute_parts(attribute)
    if len(parts) == 1 and default is None and postprocess is None:
        return _one_part_getter(parts[0])
    long = len(parts) if len(parts) > LONG_PATH else 0

    def attrgetter(item: Any) -> Any:
        if long:
            charge(long)
        for part in parts:
            item = getitem(item, part)
            if default is not None and isinstance(item, Undefined):
                item = default
        if postprocess is not None:
            item = postprocess(item)
        return item

    return attrgetter


def _one_part_getter(part: Any) -> Callable[[Any], Any]:
    """``item[part]`` under the sandbox (``getitem``), a dict's key read inline when the
    name is no dict method (``selectattr("role", ...)``, ``map(attribute="name")``)."""
    if type(part) is str and part not in DICT_ATTRS:

        def key_getter(item: Any) -> Any:
            if type(item) is dict and part in item:
                return item[part]
            return getitem(item, part)

        return key_getter
    return lambda item: getitem(item, part)


def make_multi_attrgetter(
    attribute: Any, postprocess: Optional[Callable[[Any], Any]] = None
) -> Callable[[Any], list]:
    """Like make_attrgetter for a comma-separated list of paths; returns the list of values."""
    split = attribute.split(",") if isinstance(attribute, str) else [attribute]
    parts = [_prepare_attribute_parts(item) for item in split]
    count = sum(map(len, parts))
    long = count if count > LONG_PATH else 0

    def attrgetter(item: Any) -> list:
        if long:
            charge(long)  # (and the key ``sorted`` keeps per item is this long)
        items = [None] * len(parts)
        for i, attribute_part in enumerate(parts):
            item_i = item
            for part in attribute_part:
                item_i = getitem(item_i, part)
            if postprocess is not None:
                item_i = postprocess(item_i)
            items[i] = item_i
        return items

    return attrgetter


def _call_named(table: dict, kind: str, name: Any, value: Any, args: tuple, kwargs: dict) -> Any:
    """Environment.call_filter / call_test: look ``name`` up in FILTERS or TESTS and call it."""
    func = table.get(name)
    if func is None:
        msg = f"No {kind} named {name!r}."
        if isinstance(name, Undefined):
            try:
                name._fail_with_undefined_error()
            except Exception as e:
                msg = f"{msg} ({e}; did you forget to quote the callable name?)"
        raise TemplateRuntimeError(msg)
    return func(value, *args, **kwargs)


# ----------------------------------------------------------------------------- string filters


def do_upper(s: Any) -> str:
    return s.upper() if type(s) is str else soft_str(s).upper()


def do_lower(s: Any) -> str:
    return s.lower() if type(s) is str else soft_str(s).lower()


def do_capitalize(s: Any) -> str:
    return soft_str(s).capitalize()


_word_beginning_split_re = _LazyRe(r"([-\s({\[<]+)")


def do_title(s: Any) -> str:
    return "".join(
        [
            item[0].upper() + item[1:].lower()
            for item in _word_beginning_split_re.split(soft_str(s))
            if item
        ]
    )


def do_trim(value: Any, chars: Optional[str] = None) -> str:
    text = soft_str(value)
    if isinstance(chars, str):
        bounded.charge_strip(text, chars)  # the text x chars steps of a long ``chars``
    return text.strip(chars)


def do_center(value: Any, width: int = 80) -> str:
    bounded.guard_width(width, "center")
    return soft_str(value).center(width)


@_passes_env
def do_replace(s: Any, old: Any, new: Any, count: Optional[int] = None) -> str:
    if count is None:
        count = -1
    s, old, new = _text_of(s), str(old), str(new)
    bounded.guard_replace(s, old, new, count)
    return s.replace(old, new, count)


def do_format(value: Any, *args: Any, **kwargs: Any) -> str:
    if args and kwargs:
        raise FilterArgumentError("can't handle positional and keyword arguments at the same time")
    return limits_mod(soft_str(value), (kwargs or args))


_word_re = _LazyRe(r"\w+")


def do_wordcount(s: Any) -> int:
    return len(_word_re.findall(soft_str(s)))


def do_indent(s: Any, width: Any = 4, first: bool = False, blank: bool = False) -> str:
    bounded.guard_indent(s, width)
    indention = width if isinstance(width, str) else " " * width
    newline = "\n"
    if isinstance(s, Markup):
        indention = Markup(indention)
        newline = Markup(newline)
    s += newline  # this quirk is necessary for splitlines method
    if blank:
        rv = (newline + indention).join(s.splitlines())
    else:
        lines = s.splitlines()
        rv = lines.pop(0)
        if lines:
            rv += newline + newline.join(indention + line if line else line for line in lines)
    if first:
        rv = indention + rv
    return rv


@_passes_env
def do_truncate(
    s: Any,
    length: int = 255,
    killwords: bool = False,
    end: str = "...",
    leeway: Optional[int] = None,
) -> str:
    if leeway is None:
        leeway = 5  # policies["truncate.leeway"]
    assert length >= len(end), f"expected length >= {len(end)}, got {length}"
    assert leeway >= 0, f"expected leeway >= 0, got {leeway}"
    if len(s) <= length + leeway:
        return s
    if killwords:
        return s[: length - len(end)] + end
    result = s[: length - len(end)].rsplit(" ", 1)[0]
    return result + end


@_passes_env
def do_wordwrap(
    s: Any,
    width: int = 79,
    break_long_words: bool = True,
    wrapstring: Optional[str] = None,
    break_on_hyphens: bool = True,
) -> str:
    import textwrap  # imported on first use

    if wrapstring is None:
        wrapstring = "\n"  # environment.newline_sequence
    bounded.guard_wrap(s, width, wrapstring, break_long_words)
    return wrapstring.join(
        [
            wrapstring.join(
                textwrap.wrap(
                    line,
                    width=width,
                    expand_tabs=False,
                    replace_whitespace=False,
                    break_long_words=break_long_words,
                    break_on_hyphens=break_on_hyphens,
                )
            )
            for line in s.splitlines()
        ]
    )


def do_filesizeformat(value: Any, binary: bool = False) -> str:
    bytes = float(value)
    base = 1024 if binary else 1000
    prefixes = [
        ("KiB" if binary else "kB"),
        ("MiB" if binary else "MB"),
        ("GiB" if binary else "GB"),
        ("TiB" if binary else "TB"),
        ("PiB" if binary else "PB"),
        ("EiB" if binary else "EB"),
        ("ZiB" if binary else "ZB"),
        ("YiB" if binary else "YB"),
    ]
    if bytes == 1:
        return "1 Byte"
    if bytes < base:
        return f"{int(bytes)} Bytes"
    for i, prefix in enumerate(prefixes):
        unit = base ** (i + 2)
        if bytes < unit:
            return f"{base * bytes / unit:.1f} {prefix}"
    return f"{base * bytes / unit:.1f} {prefix}"


def do_pprint(value: Any) -> str:
    from pprint import pformat

    charge(weigh(value, {}) // 2)  # pprint lays out each item in Python (~20 us an item)

    return pformat(value)


# ----------------------------------------------------------------------------- HTML / URL filters


@_named("do_mark_safe")
def do_safe(value: Any) -> Markup:
    return Markup(value)


def do_forceescape(value: Any) -> Markup:
    if hasattr(value, "__html__"):
        value = value.__html__()
    return escape(_text_of(value))


def do_striptags(value: Any) -> str:
    if hasattr(value, "__html__"):
        value = value.__html__()
    return Markup(_text_of(value)).striptags()  # markupsafe 3.0.4's: linear


_attr_key_re = _LazyRe(r"(?a)[\s/>=]")  # re.ASCII


@_passes_env
def do_xmlattr(d: Any, autospace: bool = True) -> str:
    items = []
    for key, value in d.items():
        if value is None or isinstance(value, Undefined):
            continue
        if _attr_key_re.search(key) is not None:
            raise ValueError(f"Invalid character in attribute name: {key!r}")
        items.append(f'{escape(key)}="{escape(value)}"')
    rv = " ".join(items)
    if autospace and rv:
        rv = " " + rv
    return rv


def url_quote(obj: Any, charset: str = "utf-8", for_qs: bool = False) -> str:
    """jinja2.utils.url_quote."""
    if not isinstance(obj, bytes):
        if not isinstance(obj, str):
            obj = str(obj)
        obj = obj.encode(charset)
    safe = b"" if for_qs else b"/"
    from urllib.parse import quote_from_bytes

    rv = quote_from_bytes(obj, safe)
    if for_qs:
        rv = rv.replace("%20", "+")
    return rv


def do_urlencode(value: Any) -> str:
    if isinstance(value, str) or not isinstance(value, abc.Iterable):
        return url_quote(value)
    items = value.items() if isinstance(value, dict) else value
    return "&".join(f"{url_quote(k, for_qs=True)}={url_quote(v, for_qs=True)}" for k, v in items)


_http_re = _LazyRe(
    r"""
    ^
    (
        (https?://|www\.)  # scheme or www
        (([\w%-]+\.)+)?  # subdomain
        (
            [a-z]{2,63}  # basic tld
        |
            xn--[\w%]{2,59}  # idna tld
        )
    |
        ([\w%-]{2,63}\.)+  # basic domain
        (com|net|int|edu|gov|org|info|mil)  # basic tld
    |
        (https?://)  # scheme
        (
            (([\d]{1,3})(\.[\d]{1,3}){3})  # IPv4
        |
            (\[([\da-f]{0,4}:){2}([\da-f]{0,4}:?){1,6}])  # IPv6
        )
    )
    (?::[\d]{1,5})?  # port
    (?:[/?#]\S*)?  # path, query, and fragment
    $
    """,
    2 | 64,  # re.IGNORECASE | re.VERBOSE
)
_email_re = _LazyRe(r"^\S+@\w[\w.-]*\.\w+$")
_uri_scheme_re = _LazyRe(r"^([\w.+-]{2,}:(/){0,2})$")


def _trailing_punctuation(text: str) -> int:
    """The start of the longest end of ``text`` made of ``)``, ``>``, ``.``, ``,``, newlines
    and ``&gt;``: read from the end, each character decides its piece (only ``&gt;`` ends in
    ``;``), so the first start the regex's search would find is where this stops."""
    end = len(text)
    while end:
        if text[end - 1] in ")>.,\n":
            end -= 1
        elif text.endswith("&gt;", 0, end):
            end -= 4
        else:
            break
    return end


def _split_punctuation(word: str) -> tuple:
    """urlize: (leading punctuation, the candidate link, trailing punctuation)."""
    import re

    head, middle, tail = "", word, ""
    match = re.match(r"^([(<]|&lt;)+", middle)
    if match:
        head = match.group()
        middle = middle[match.end() :]
    if middle.endswith((")", ">", ".", ",", "\n", "&gt;")):
        # where ``re.search(r"([)>.,\n]|&gt;)+$", middle)`` starts (jinja2's), found from the
        # end in linear time: the search tries every start and backtracks from each, so a
        # run of dots not at the end took seconds (30,000 of them in a message: 17 s)
        start = _trailing_punctuation(middle)
        tail = middle[start:]
        middle = middle[:start]
    # Prefer balancing parentheses in URLs instead of ignoring a trailing character.
    for start_char, end_char in ("(", ")"), ("<", ">"), ("&lt;", "&gt;"):
        start_count = middle.count(start_char)
        if start_count <= middle.count(end_char):
            continue
        for _ in range(min(start_count, tail.count(end_char))):
            end_index = tail.index(end_char) + len(end_char)
            middle += tail[:end_index]
            tail = tail[end_index:]
    return head, middle, tail


def _urlize(
    text: Any,
    trim_url_limit: Optional[int],
    rel: Optional[str],
    target: Optional[str],
    extra_schemes: Iterable[str],
) -> str:
    """jinja2.utils.urlize."""

    def trim_url(x: str) -> str:
        if trim_url_limit is not None and len(x) > trim_url_limit:
            return f"{x[:trim_url_limit]}..."
        return x

    import re

    words = re.split(r"(\s+)", str(escape(text)))
    # the links (one a word at most) and the words' checks against the extra schemes, bounded
    # by the words it has split (whitespace of any kind, of the text it works on: red team s9h F2, F8)
    schemes = len(extra_schemes) if hasattr(extra_schemes, "__len__") else 0
    bounded.guard_urlize(words, target, rel, schemes)
    rel_attr = f' rel="{escape(rel)}"' if rel else ""
    target_attr = f' target="{escape(target)}"' if target else ""
    for i, word in enumerate(words):
        head, middle, tail = _split_punctuation(word)
        if _http_re.match(middle):
            href = middle if middle.startswith(("https://", "http://")) else f"https://{middle}"
            middle = f'<a href="{href}"{rel_attr}{target_attr}>{trim_url(middle)}</a>'
        elif middle.startswith("mailto:") and _email_re.match(middle[7:]):
            middle = f'<a href="{middle}">{middle[7:]}</a>'
        elif (
            "@" in middle
            and not middle.startswith("www.")
            and not middle.startswith("@")
            and ":" not in middle
            and _email_re.match(middle)
        ):
            middle = f'<a href="mailto:{middle}">{middle}</a>'
        elif extra_schemes is not None:
            for scheme in extra_schemes:
                if middle != scheme and middle.startswith(scheme):
                    middle = f'<a href="{middle}"{rel_attr}{target_attr}>{middle}</a>'
        words[i] = f"{head}{middle}{tail}"
    return "".join(words)


@_passes_env
def do_urlize(
    value: Any,
    trim_url_limit: Optional[int] = None,
    nofollow: bool = False,
    target: Optional[str] = None,
    rel: Optional[str] = None,
    extra_schemes: Optional[Iterable[str]] = None,
) -> str:
    rel_parts = set((rel or "").split())
    if nofollow:
        rel_parts.add("nofollow")
    rel_parts.update("noopener".split())  # policies["urlize.rel"]
    rel = " ".join(sorted(rel_parts)) or None
    if extra_schemes is None:
        extra_schemes = ()
    for scheme in extra_schemes:
        if _uri_scheme_re.fullmatch(scheme) is None:
            raise FilterArgumentError(f"{scheme!r} is not a valid URI scheme prefix.")
    return _urlize(value, trim_url_limit, rel, target, extra_schemes)


#: ``tojson``'s charge per character of a string: one unit per 64 (json's C encoder measured
#: at most 8 ns a character, on control characters, with or without ``ensure_ascii`` and
#: ``indent``; a unit per 16 refused 12 MB of tool results transformers encodes in 30 ms:
#: red team s8u F4); two units an item of a list or dict
_JSON_SHIFT = 6


@_named("_cached_compile_jinja_template.<locals>.tojson")
def do_tojson(
    x: Any,
    ensure_ascii: bool = False,
    indent: Any = None,
    separators: Any = None,
    sort_keys: bool = False,
) -> str:
    """transformers' override: plain ``json.dumps`` (no HTML escaping). The usual call (no
    options) goes to one encoder made once, as json.dumps would make it; a short ``str``
    (below what ``charge_input`` charges) to json's C string encoder, which is what
    ``json.dumps`` returns for a ``str`` (``JSONEncoder.encode``)."""
    if (
        type(x) is str
        and len(x) >> _JSON_SHIFT <= 8
        and ensure_ascii is False
        and indent is None
        and separators is None
        and sort_keys is False
    ):
        return (_JSON_STR or _json_str())(x)
    bounded.charge_input(x, 2, _JSON_SHIFT)  # its work grows with the input (limits.charge)
    if ensure_ascii is False and indent is None and separators is None and sort_keys is False:
        text = (_PLAIN_JSON or _plain_json())(x)
        if len(text) >= SHORT:  # (``_long_text``, inline: the usual call of this filter)
            check_built(len(text), "tojson")
        return text
    bounded.guard_json_indent(x, indent, separators)
    if (
        type(indent) is int
        and separators is None
        and type(ensure_ascii) is bool
        and type(sort_keys) is bool
    ):
        return _long_text(_indented_json(x, indent, ensure_ascii, sort_keys), "tojson")
    import json

    return _long_text(
        json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        ),
        "tojson",
    )


def _long_text(text: str, what: str) -> str:
    """``text``, made from a value: charged as built from 65,536 characters on
    (``limits.check_built``). Escaping makes a value's text longer than what it holds (JSON
    and ``repr`` double a backslash), so a text fed back (a recursive macro's argument, a
    namespace) would otherwise grow geometrically at the cost of its input alone."""
    if len(text) >= SHORT:
        check_built(len(text), what)
    return text


def _text_of(value: Any) -> str:
    """``str(value)``; a long text made from a value that is no string charged as built."""
    if isinstance(value, str):
        return str(value)
    return _long_text(str(value), "a value's text")


_PLAIN_JSON: Any = None
_JSON_STR: Any = None


def _json_str() -> Callable[[str], str]:
    """json's string encoder (C when the accelerator is there), imported on first use."""
    global _JSON_STR
    from json.encoder import encode_basestring

    _JSON_STR = encode_basestring
    return encode_basestring


def _plain_json() -> Callable[[Any], str]:
    """``json.dumps(x, ensure_ascii=False)``: the C encoder that json.dumps makes on every
    call, made once. It checks no cycles (that needs a fresh table per call); a cycle ends in
    RecursionError, and then json.dumps itself runs, to fail as it fails."""
    global _PLAIN_JSON
    import json
    from json.encoder import c_make_encoder, encode_basestring

    dumps = json.JSONEncoder(ensure_ascii=False).encode
    if c_make_encoder is None:  # a Python without the _json accelerator
        _PLAIN_JSON = dumps
        return dumps
    chunks = c_make_encoder(
        None, dumps.__self__.default, encode_basestring, None, ": ", ", ", False, False, True
    )

    def encode(x: Any) -> str:
        try:
            return "".join(chunks(x, 0))
        except RecursionError:
            return dumps(x)

    _PLAIN_JSON = encode
    return encode


class _NotPlainJSON(Exception):
    """A value ``_indented_json`` leaves to json.dumps (not one of the exact plain types)."""


def _indented_json(x: Any, indent: int, ensure_ascii: bool, sort: bool) -> str:
    """``json.dumps(x, indent=indent, ensure_ascii=..., sort_keys=...)`` without the
    generators of the pure-Python encoder json.dumps runs for ``indent``: the same text
    (``_make_iterencode``'s layout: ``[]``/``{}`` for an empty container, else a newline and
    the depth's indent after the opening and each ``,``, ``": "`` after a key, a newline and
    the outer indent before the closing; strings through json's C escaping, numbers through
    ``int.__repr__``/``float.__repr__``, ``NaN``/``Infinity``), written by one recursive
    function. Values of the exact types dict (string keys), list, tuple, str, int, float, bool
    and None only: anything else (subclasses, other keys, a cycle: RecursionError) is left
    to json.dumps, to come out or fail exactly as it does."""
    import json
    from json.encoder import encode_basestring, encode_basestring_ascii

    enc = encode_basestring_ascii if ensure_ascii else encode_basestring
    parts: list = []
    put = parts.append
    unit = " " * indent

    def value(o: Any, nl: str) -> None:
        t = type(o)
        if t is str:
            put(enc(o))
        elif o is None:
            put("null")
        elif o is True:
            put("true")
        elif o is False:
            put("false")
        elif t is int:
            put(int.__repr__(o))
        elif t is float:
            put(_float_json(o))
        elif t is dict:
            if not o:
                put("{}")
                return
            inner = nl + unit
            sep = "{" + inner
            for k, v in sorted(o.items()) if sort else o.items():
                if type(k) is not str:
                    raise _NotPlainJSON
                put(sep)
                put(enc(k))
                put(": ")
                value(v, inner)
                sep = "," + inner
            put(nl + "}")
        elif t is list or t is tuple:
            if not o:
                put("[]")
                return
            inner = nl + unit
            sep = "[" + inner
            for v in o:
                put(sep)
                value(v, inner)
                sep = "," + inner
            put(nl + "]")
        else:
            raise _NotPlainJSON

    try:
        value(x, "\n")
    except (_NotPlainJSON, RecursionError):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, sort_keys=sort)
    return "".join(parts)


def _float_json(o: float) -> str:
    """json's float text (``allow_nan``): ``float.__repr__``, or NaN / Infinity / -Infinity."""
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


_INF = float("inf")


# ----------------------------------------------------------------------------- numbers


do_abs = abs


def do_int(value: Any, default: int = 0, base: int = 10) -> int:
    try:
        if isinstance(value, str):
            made = int(value, base)
            if type(made) is int and made.bit_length() > 4096:  # (a power-of-two base is linear)
                check_size(made.bit_length() >> 2, "int")  # capped as a product is (s9h2 C)
            return made
        return int(value)
    except (TypeError, ValueError):
        # this quirk is necessary so that "42.23"|int gives 42.
        try:
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return default


def do_float(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def do_round(value: Any, precision: int = 0, method: str = "common") -> float:
    if method not in {"common", "ceil", "floor"}:
        raise FilterArgumentError("method must be common, ceil or floor")
    if isinstance(precision, int) and abs(precision) > 4096 and not (method == "common" and type(value) is float):
        # ``10 ** abs(precision)`` is computed (an integer's ``round``, ``ceil``/``floor``): refused
        # as the template's own power past ``Limits.value`` digits (red team s9h F7)
        check_size(abs(precision), "a rounding's power of ten")
    if type(value) is int and isinstance(precision, int) and precision < 0 and value.bit_length() > 4096:
        # a division of a long integer by ``10 ** -precision``: charged by both sizes' digits
        charge((value.bit_length() >> 5) * ((-precision * 7 >> 1) + 32 >> 5) >> 6)
    if method == "common":
        return round(value, precision)
    import math

    func = getattr(math, method)
    return func(value * (10**precision)) / (10**precision)


@_passes_env
@_named("sync_do_sum")
def do_sum(iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    bounded.charge_input(iterable, 1, 4)  # its work grows with the input (limits.charge)
    if type(start) is int and start.bit_length() > 4096 and hasattr(iterable, "__len__"):
        # each addition copies the long start (red team s9h2 C: 100,000 of 16M bits, 31 s)
        charge(len(iterable) * (start.bit_length() >> 13))
    if attribute is not None:
        iterable = map(make_attrgetter(attribute), iterable)
    total = sum(iterable, start)
    if isinstance(total, (list, tuple)):  # sum(start=[]) concatenates lists
        if len(total) > 65536:
            check_built(len(total), "sum")
        check_weight(total, "a sum of lists")  # start=l and [l]: l twice
    return total


# ----------------------------------------------------------------------------- values


def do_default(value: Any, default_value: Any = "", boolean: bool = False) -> Any:
    if isinstance(value, Undefined) or (boolean and not value):
        return default_value
    return value


do_d = do_default
do_count = do_length = len
do_e = do_escape = escape
do_string = soft_str


@_passes_env
def do_attr(obj: Any, name: str) -> Any:
    """``obj.name`` without the fallback to ``obj[name]`` (still sandboxed)."""
    from inspect import getattr_static  # imported on first use

    if isinstance(name, str) and name[:1] == "_" and type(obj) in REFERENCE_PRIVATE:
        return private_attribute(obj, name)  # as the sandbox answers on jinja2's own object
    try:
        getattr_static(obj, name)
    except AttributeError:
        if not hasattr(obj, name):
            return Undefined(obj=obj, name=name)
    return getattr_(obj, name)


# ----------------------------------------------------------------------------- sequences


@_passes_env
@_named("sync_do_first")
def do_first(seq: Any) -> Any:
    try:
        return next(iter(seq))
    except StopIteration:
        return Undefined("No first item, sequence was empty.")


@_passes_env
def do_last(seq: Any) -> Any:
    try:
        return next(iter(reversed(seq)))
    except StopIteration:
        return Undefined("No last item, sequence was empty.")


def _random() -> Any:
    import random  # imported on first use: most templates never need it

    return random


@_passes_env
def do_random(seq: Any) -> Any:
    try:
        return _random().choice(seq)
    except IndexError:
        return Undefined("No random item, sequence was empty.")


@_named("sync_do_list")
def do_list(value: Any) -> list:
    # an item a unit; a string's characters 16 a unit (8 ns a character measured, at most)
    bounded.charge_input(value, 1, 4)
    return list(value)


def do_reverse(value: Any) -> Any:
    if isinstance(value, str):
        return value[::-1]
    try:
        return reversed(value)
    except TypeError:
        try:
            rv = list(value)
            rv.reverse()
            return rv
        except TypeError as e:
            raise FilterArgumentError("argument must be iterable") from e


@_passes_env
@_named("sync_do_join")
def do_join(value: Any, d: Any = "", attribute: Any = None) -> str:
    bounded.charge_input(value, 1, 4)  # its work grows with the input (limits.charge)
    if attribute is not None:
        value = map(make_attrgetter(attribute), value)
    separator = str(d)
    if len(separator) > 64:  # a long separator: the result's size is checked first
        items = list(map(str, value))
        bounded.guard_join(items, separator)
        return separator.join(items)
    text = separator.join(map(str, value))
    if len(text) >= SHORT:  # doubling through a loop stops at the output limit
        check_built(len(text), "join")
    return text


def do_items(value: Any) -> Iterator[tuple]:
    size, depth = bounded.lazy_charge(value, 1, 4)  # its work grows with the input (limits.charge)
    return _item_pairs(value, size, depth)


@bounded.mark_lazy
@_named("do_items")
def _item_pairs(value: Any, _size: Any, _depth: int) -> Iterator[tuple]:
    if type(value) is not dict:  # a dict is a mapping (the ABC's check costs ~0.1 us)
        if isinstance(value, Undefined):
            return
        if not isinstance(value, abc.Mapping):
            raise TypeError("Can only get item pairs from a mapping.")
    yield from value.items()


def do_dictsort(
    value: Any, case_sensitive: bool = False, by: str = "key", reverse: bool = False
) -> list:
    bounded.charge_input(value, 1, 4)  # its work grows with the input (limits.charge)
    if by == "key":
        pos = 0
    elif by == "value":
        pos = 1
    else:
        raise FilterArgumentError('You can only sort by either "key" or "value"')

    def sort_func(item: tuple) -> Any:
        value = item[pos]
        return value if case_sensitive else ignore_case(value)

    return sorted(value.items(), key=sort_func, reverse=reverse)


@_passes_env
def do_sort(
    value: Any, reverse: bool = False, case_sensitive: bool = False, attribute: Any = None
) -> list:
    bounded.charge_input(value, 1, 2)  # its work grows with the input (limits.charge)
    key_func = make_multi_attrgetter(attribute, None if case_sensitive else ignore_case)
    return sorted(value, key=key_func, reverse=reverse)


@_passes_env
@_named("sync_do_unique")
def do_unique(value: Any, case_sensitive: bool = False, attribute: Any = None) -> Iterator[Any]:
    size, depth = bounded.lazy_charge(value, 1, 2)  # its work grows with the input (limits.charge)
    return _unique_items(value, case_sensitive, attribute, size, depth)


@bounded.mark_lazy
@_named("sync_do_unique")
def _unique_items(value: Any, case_sensitive: bool, attribute: Any, _size: Any, _depth: int) -> Iterator[Any]:
    getter = make_attrgetter(attribute, None if case_sensitive else ignore_case)
    seen = set()
    for item in _items_of(value):
        key = getter(item)
        if type(key) in _KEYED:
            key = hash_key(key)
        if key not in seen:
            seen.add(key)
            yield item


#: keys whose hash an input can choose (numbers past ``limits.HASH_SAFE``, tuples of them: a
#: template's ``range(0, n * p, p)``, or its input, can give 100,000 distinct ones of one
#: hash; a set of them is quadratic in one C-level step: 20,000 took 3.7 s, 100,000
#: minutes): ``unique`` keys them by ``limits.hash_key`` instead
_KEYED = frozenset({int, float, tuple, range})


def _min_or_max(value: Any, func: Callable[..., Any], case_sensitive: bool, attribute: Any) -> Any:
    it = iter(value)
    try:
        first = next(it)
    except StopIteration:
        return Undefined("No aggregated item, sequence was empty.")
    key_func = make_attrgetter(attribute, None if case_sensitive else ignore_case)
    return func(chain([first], it), key=key_func)


@_passes_env
def do_min(value: Any, case_sensitive: bool = False, attribute: Any = None) -> Any:
    bounded.charge_input(value, 1, 4)  # its work grows with the input (limits.charge)
    return _min_or_max(value, min, case_sensitive, attribute)


@_passes_env
def do_max(value: Any, case_sensitive: bool = False, attribute: Any = None) -> Any:
    bounded.charge_input(value, 1, 4)  # its work grows with the input (limits.charge)
    return _min_or_max(value, max, case_sensitive, attribute)


@_named("sync_do_slice")
def do_slice(value: Any, slices: int, fill_with: Any = None) -> Iterator[list]:
    bounded.guard_count(slices, "slice")
    seq = list(value)
    length = len(seq)
    items_per_slice = length // slices
    slices_with_extra = length % slices
    offset = 0
    for slice_number in range(slices):
        start = offset + slice_number * items_per_slice
        if slice_number < slices_with_extra:
            offset += 1
        end = offset + (slice_number + 1) * items_per_slice
        tmp = seq[start:end]
        if fill_with is not None and slice_number >= slices_with_extra:
            tmp.append(fill_with)
        yield tmp


def _weighed_slices(slice_filter: Callable[..., Iterator[list]]) -> Callable[..., Iterator[list]]:
    """``slice`` with a fill value: one fill per slice, what they weigh together checked."""

    @functools.wraps(slice_filter)
    def wrapper(value: Any, slices: int, fill_with: Any = None) -> Iterator[list]:
        made = slice_filter(value, slices, fill_with)
        return made if fill_with is None else weighed(made, "slice's fill")

    return wrapper


do_slice = _weighed_slices(do_slice)


def _items_of(value: Any) -> Any:
    """What a lazy filter's generator iterates for ``value``: a generator (another lazy
    filter's result) through ``islice``, whose C-level ``next`` counts the recursion (a
    generator's ``for`` over a generator does not, in CPython 3.11: a chain of 100,000
    ``batch`` generators, fed back through a namespace, overflowed the C stack when
    iterated); anything else as it is."""
    return islice(value, None) if type(value) is GeneratorType else value


def do_batch(value: Any, linecount: int, fill_with: Any = None) -> Iterator[list]:
    size, depth = bounded.lazy_charge(value, 1, 2)  # its work grows with the input (limits.charge)
    return _batch_items(value, linecount, fill_with, size, depth)


@bounded.mark_lazy
@_named("do_batch")
def _batch_items(value: Any, linecount: int, fill_with: Any, _size: Any, _depth: int) -> Iterator[list]:
    tmp: list = []
    for item in _items_of(value):
        if len(tmp) == linecount:
            yield tmp
            tmp = []
        tmp.append(item)
    if tmp:
        if fill_with is not None and len(tmp) < linecount:
            bounded.guard_count(linecount - len(tmp), "batch's fill")
            tmp += [fill_with] * (linecount - len(tmp))
            check_weight(tmp, "batch's fill")
        yield tmp


def _tuple_repr(self: tuple) -> str:
    # A function of its own, as jinja2's: pprint lays out a type whose __repr__ *is*
    # tuple.__repr__ as a tuple, and prints this one with repr().
    return tuple.__repr__(self)


# jinja2's is a typing.NamedTuple (which makes this same class) that prints like a plain tuple.
_GroupTuple = namedtuple("_GroupTuple", ("grouper", "list"), module="jinja2.filters")
_GroupTuple.__repr__ = _tuple_repr  # type: ignore[method-assign,assignment]
_GroupTuple.__str__ = _tuple_repr  # type: ignore[method-assign,assignment]


@_passes_env
@_named("sync_do_groupby")
def do_groupby(
    value: Any, attribute: Any, default: Any = None, case_sensitive: bool = False
) -> list:
    expr = make_attrgetter(attribute, None if case_sensitive else ignore_case, default)
    out = [_GroupTuple(key, list(values)) for key, values in groupby(sorted(value, key=expr), expr)]
    if not case_sensitive:
        # Return the real key from the first value instead of the lowercase key.
        output_expr = make_attrgetter(attribute, default=default)
        out = [_GroupTuple(output_expr(values[0]), values) for _, values in out]
    if any(not isinstance(group[0], (str, int, float)) and group[0] is not None for group in out):
        check_weight(out, "groupby")  # each group holds its key and items holding it again
    return out


# ----------------------------------------------------------------------------- map / select


def _prepare_map(args: tuple, kwargs: dict) -> Callable[[Any], Any]:
    if not args and "attribute" in kwargs:
        attribute = kwargs.pop("attribute")
        default = kwargs.pop("default", None)
        if kwargs:
            raise FilterArgumentError(f"Unexpected keyword argument {next(iter(kwargs))!r}")
        return make_attrgetter(attribute, default=default)
    try:
        name = args[0]
        args = args[1:]
    except LookupError:
        raise FilterArgumentError("map requires a filter argument") from None
    return lambda item: _call_named(FILTERS, "filter", name, item, args, kwargs)


def do_map(value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    size, depth = bounded.lazy_charge(value, 1, 2)  # its work grows with the input (limits.charge)
    return _map_items(value, args, kwargs, size, depth)


@bounded.mark_lazy
@_named("sync_do_map")
def _map_items(value: Any, args: tuple, kwargs: dict, _size: Any, _depth: int) -> Iterator[Any]:
    if value:
        # a filter's results, or an attribute's default, are values the input did not hold:
        # one default many times, or a long string per item, weigh what a list of them would
        making = bool(args) or kwargs.get("default") is not None
        func = _prepare_map(args, kwargs)
        if making:
            yield from weighed(map(func, value), "map")
            return
        for item in _items_of(value):
            yield func(item)


def _prepare_select_or_reject(
    args: tuple, kwargs: dict, modfunc: Callable[[Any], Any], lookup_attr: bool
) -> Callable[[Any], Any]:
    if lookup_attr:
        try:
            attr = args[0]
        except LookupError:
            raise FilterArgumentError("Missing parameter for attribute name") from None
        transfunc = make_attrgetter(attr)
        off = 1
    else:
        off = 0

        def transfunc(x: Any) -> Any:
            return x

    try:
        name = args[off]
        args = args[1 + off :]

        def func(item: Any) -> Any:
            return _call_named(TESTS, "test", name, item, args, kwargs)

    except LookupError:
        func = bool
    return lambda item: modfunc(func(transfunc(item)))


@bounded.mark_lazy
def select_or_reject(
    value: Any,
    args: tuple,
    kwargs: dict,
    modfunc: Callable[[Any], Any],
    lookup_attr: bool,
    _size: Any = None,
    _depth: int = 1,
) -> Iterator[Any]:
    if value:
        yield from _selected(value, args, kwargs, modfunc is _keep, lookup_attr)


def select_list(value: Any, keep: Any, lookup_attr: bool = False, *args: Any, **kwargs: Any) -> list:
    """``value | select(...) | list`` (``reject``, ``selectattr``, ``rejectattr``: ``keep``
    False for the two that reject, ``lookup_attr`` for the two that read an attribute), the
    compiler's fusion of the two filters: the list ``do_list`` makes of the filter's
    generator, built at once, with the same work charged, the same errors in the same order.
    ``keep`` may be what :func:`prepared_selection` made at import of constant arguments
    (then the only argument): ``selectattr(key, "equalto", value)`` compared inline."""
    if type(keep) is Selection:
        shift, key, other, get, keeps = keep
        bounded.charge_input(value, 1, shift)
        if not value:
            return []
        if keeps:
            return [
                item
                for item in value
                if (item[key] if type(item) is dict and key in item else get(item)) == other
            ]
        return [
            item
            for item in value
            if not (item[key] if type(item) is dict and key in item else get(item)) == other
        ]
    if type(keep) is SelectionArguments:
        return select_list(value, *keep)
    bounded.charge_input(value, 1, 4 if lookup_attr else 2)
    return [*_selected(value, args, kwargs, keep, lookup_attr)] if value else []


class Selection(tuple):
    """``(charge shift, key, compared value, attribute getter, keep)``: a fused selection's
    ``selectattr(key, "equalto", value)`` prepared once (:func:`prepared_selection`)."""

    __slots__ = ()


class SelectionArguments(tuple):
    """``(keep, lookup_attr, *args)``: a fused selection's constant arguments that take the
    general path (:func:`select_list` unpacks them)."""

    __slots__ = ()


def prepared_selection(keep: bool, lookup_attr: bool, *args: Any) -> tuple:
    """What the compiled module passes :func:`select_list` for a selection whose arguments
    are all constants, made when it is imported: a :class:`Selection` when the call is the
    usual ``selectattr``/``rejectattr`` of a dict key compared with ``equalto``/``==``/``eq``
    (short string arguments: no per-item charge for them, the test and the getter known
    now, as ``_direct_test`` finds them at each call), else the arguments as they are."""
    if _short_arguments(args, {}):
        fast = _direct_test(args, {}, lookup_attr, False)
        if fast is not None:
            test, get, test_args, key = fast
            if key is not None and test is operator.eq and len(test_args) == 1:
                return Selection((4 if lookup_attr else 2, key, test_args[0], get, keep))
    return SelectionArguments((keep, lookup_attr, *args))


def _selected(value: Any, args: tuple, kwargs: dict, keep: bool, lookup_attr: bool) -> Iterator[Any]:
    """The items of ``value`` that ``select_or_reject`` yields (``value`` is true). A long
    argument of the test (``select('in', long_list)``) is work per item, paid for as the
    filter starts (or item by item, for an input of unknown length)."""
    short = _short_arguments(args, kwargs)
    if not short:
        per_item = _argument_cost(args, kwargs)
        if per_item:
            if isinstance(value, _SIZED):
                charge(len(value) * per_item)
            else:
                value = _charged(value, per_item)
    fast = _direct_test(args, kwargs, lookup_attr, short)
    if fast is None:
        modfunc = _keep if keep else operator.not_
        return filter(_prepare_select_or_reject(args, kwargs, modfunc, lookup_attr), value)
    # the test and the lookup found once, not per item
    test, get, test_args, key = fast
    if key is not None and test is operator.eq and len(test_args) == 1 and not kwargs:
        # selectattr("role", "equalto", "user"): a dict's key read and compared inline
        other = test_args[0]
        if keep:
            return (
                item
                for item in value
                if (item[key] if type(item) is dict and key in item else get(item)) == other
            )
        return (
            item
            for item in value
            if not (item[key] if type(item) is dict and key in item else get(item)) == other
        )
    return (item for item in value if bool(test(get(item), *test_args, **kwargs)) is keep)


_SIZED = (str, list, tuple, dict, range)


def _argument_cost(args: tuple, kwargs: dict) -> int:
    """Units of work a test's call may take per item for its long arguments: a unit per 64
    characters or items of each argument longer than 4,096 (``in`` searches it, ``==``
    compares it), else 0."""
    cost = 0
    for a in (*args, *kwargs.values()):
        if isinstance(a, _SIZED) and len(a) > 4096:
            cost += len(a) >> 6
    return cost


def _charged(items: Any, per_item: int) -> Iterator[Any]:
    for item in _items_of(items):
        charge(per_item)
        yield item


#: ``_direct_test``'s answers for argument tuples of short strings only (a template's filter
#: calls repeat the same few; a string equals only a string, so no other constant shares a key)
_PREPARED: dict = {}
#: the most answers kept (past it the table starts afresh: a template cannot grow it), and
#: the longest argument kept in a key (the table outlives the render: a long string, the
#: conversation's own text, is not held by it)
PREPARED_MAX = 256
PREPARED_ARGUMENT = 64


def _short_arguments(args: tuple, kwargs: dict) -> bool:
    """No keywords, and every argument a string of at most ``PREPARED_ARGUMENT`` characters
    (the usual call: ``selectattr('role', 'equalto', 'user')``)."""
    if kwargs:
        return False
    for a in args:
        if type(a) is not str or len(a) > PREPARED_ARGUMENT:
            return False
    return True


def _direct_test(args: tuple, kwargs: dict, lookup_attr: bool, cacheable: bool) -> Optional[tuple]:
    """``(test, getter, test arguments, key)`` when the filter names a known test (and, for
    ``selectattr``/``rejectattr``, an attribute): what ``_prepare_select_or_reject``'s
    lambdas compute per item, looked up once (``key``: a one-part attribute no dict method
    is named, which a dict answers with its item, else None). None: the general path (no
    test named, an unknown one, which fails on the first item as jinja2 fails)."""
    if cacheable:  # (``_short_arguments``)
        found = _PREPARED.get((lookup_attr, args))
        if found is not None:
            return found
    off = 1 if lookup_attr else 0
    if len(args) <= off:
        return None
    test = TESTS.get(args[off]) if isinstance(args[off], str) else None
    if test is None:
        return None
    get = make_attrgetter(args[0]) if lookup_attr else _keep
    key = args[0] if lookup_attr and _dict_key(args[0]) else None
    found = (test, get, args[1 + off :], key)
    if cacheable:
        if len(_PREPARED) >= PREPARED_MAX:
            _PREPARED.clear()
        _PREPARED[lookup_attr, args] = found
    return found


def _dict_key(attribute: Any) -> bool:
    """Whether ``attribute`` is one part that a dict answers with its item when it has it
    (``getitem``: a name no dict method has, not a number)."""
    if type(attribute) is not str or attribute in DICT_ATTRS:
        return False
    parts = _prepare_attribute_parts(attribute)
    return len(parts) == 1 and type(parts[0]) is str


def _keep(x: Any) -> Any:
    return x


@_named("sync_do_select")
def do_select(value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    size, depth = bounded.lazy_charge(value, 1, 2)  # its work grows with the input (limits.charge)
    return select_or_reject(value, args, kwargs, _keep, False, size, depth)


@_named("sync_do_reject")
def do_reject(value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    size, depth = bounded.lazy_charge(value, 1, 2)  # its work grows with the input (limits.charge)
    return select_or_reject(value, args, kwargs, operator.not_, False, size, depth)


@_named("sync_do_selectattr")
def do_selectattr(value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    size, depth = bounded.lazy_charge(value, 1, 4)  # its work grows with the input (limits.charge)
    return select_or_reject(value, args, kwargs, _keep, True, size, depth)


@_named("sync_do_rejectattr")
def do_rejectattr(value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    size, depth = bounded.lazy_charge(value, 1, 4)  # its work grows with the input (limits.charge)
    return select_or_reject(value, args, kwargs, operator.not_, True, size, depth)


# ----------------------------------------------------------------------------- filter table

FILTERS: dict = {
    "abs": do_abs,
    "attr": do_attr,
    "batch": do_batch,
    "capitalize": do_capitalize,
    "center": do_center,
    "count": do_count,
    "d": do_d,
    "default": do_default,
    "dictsort": do_dictsort,
    "e": do_e,
    "escape": do_escape,
    "filesizeformat": do_filesizeformat,
    "first": do_first,
    "float": do_float,
    "forceescape": do_forceescape,
    "format": do_format,
    "groupby": do_groupby,
    "indent": do_indent,
    "int": do_int,
    "join": do_join,
    "last": do_last,
    "length": do_length,
    "list": do_list,
    "lower": do_lower,
    "items": do_items,
    "map": do_map,
    "min": do_min,
    "max": do_max,
    "pprint": do_pprint,
    "random": do_random,
    "reject": do_reject,
    "rejectattr": do_rejectattr,
    "replace": do_replace,
    "reverse": do_reverse,
    "round": do_round,
    "safe": do_safe,
    "select": do_select,
    "selectattr": do_selectattr,
    "slice": do_slice,
    "sort": do_sort,
    "string": do_string,
    "striptags": do_striptags,
    "sum": do_sum,
    "title": do_title,
    "trim": do_trim,
    "truncate": do_truncate,
    "unique": do_unique,
    "upper": do_upper,
    "urlencode": do_urlencode,
    "urlize": do_urlize,
    "wordcount": do_wordcount,
    "wordwrap": do_wordwrap,
    "xmlattr": do_xmlattr,
    "tojson": do_tojson,
}

# ----------------------------------------------------------------------------- tests


def test_odd(value: Any) -> bool:
    return value % 2 == 1


def test_even(value: Any) -> bool:
    return value % 2 == 0


def test_divisibleby(value: Any, num: Any) -> bool:
    return limits_mod(value, num) == 0  # (a division of long integers charged by its digits)


def test_defined(value: Any) -> bool:
    return not isinstance(value, Undefined)


def test_undefined(value: Any) -> bool:
    return isinstance(value, Undefined)


def test_filter(value: Any) -> bool:
    return value in FILTERS


def test_test(value: Any) -> bool:
    return value in TESTS


def test_none(value: Any) -> bool:
    return value is None


def test_boolean(value: Any) -> bool:
    return value is True or value is False


def test_false(value: Any) -> bool:
    return value is False


def test_true(value: Any) -> bool:
    return value is True


def test_integer(value: Any) -> bool:
    return isinstance(value, int) and value is not True and value is not False


def test_float(value: Any) -> bool:
    return isinstance(value, float)


def test_lower(value: Any) -> bool:
    return str(value).islower()


def test_upper(value: Any) -> bool:
    return str(value).isupper()


def test_string(value: Any) -> bool:
    return isinstance(value, str)


def test_mapping(value: Any) -> bool:
    return isinstance(value, abc.Mapping)


def test_number(value: Any) -> bool:
    from numbers import Number

    return isinstance(value, Number)


def test_sequence(value: Any) -> bool:
    try:
        len(value)
        value.__getitem__  # noqa: B018
    except Exception:
        return False
    return True


def test_sameas(value: Any, other: Any) -> bool:
    return value is other


def test_iterable(value: Any) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


def test_escaped(value: Any) -> bool:
    return hasattr(value, "__html__")


def test_in(value: Any, seq: Any) -> bool:
    return value in seq


test_callable = callable
test_eq = test_equalto = operator.eq
test_ne = operator.ne
test_gt = test_greaterthan = operator.gt
test_ge = operator.ge
test_lt = test_lessthan = operator.lt
test_le = operator.le

TESTS: dict = {
    "odd": test_odd,
    "even": test_even,
    "divisibleby": test_divisibleby,
    "defined": test_defined,
    "undefined": test_undefined,
    "filter": test_filter,
    "test": test_test,
    "none": test_none,
    "boolean": test_boolean,
    "false": test_false,
    "true": test_true,
    "integer": test_integer,
    "float": test_float,
    "lower": test_lower,
    "upper": test_upper,
    "string": test_string,
    "mapping": test_mapping,
    "number": test_number,
    "sequence": test_sequence,
    "iterable": test_iterable,
    "callable": test_callable,
    "sameas": test_sameas,
    "escaped": test_escaped,
    "in": test_in,
    "==": test_eq,
    "eq": test_eq,
    "equalto": test_equalto,
    "!=": test_ne,
    "ne": test_ne,
    ">": test_gt,
    "gt": test_gt,
    "greaterthan": test_greaterthan,
    "ge": test_ge,
    ">=": test_ge,
    "<": test_lt,
    "lt": test_lt,
    "lessthan": test_lessthan,
    "<=": test_le,
    "le": test_le,
}



# The filters whose work grows with their input pay for it (``bounded.per_item(weight, shift)``:
# about a unit per microsecond of work: ``weight`` per item, one per 2**shift characters).
# groupby: ~15 us an item (an attribute read, a sort key and a group per item, in Python).
# The string shifts are the worst per-character times measured over ten kinds of 1M-character
# text (English with tags and URLs; one-letter words, tags, URLs, e-mail addresses, non-ASCII,
# control characters, line breaks, one long word, "www." names), rounded up to a power of two:
# urlize 2.0 us (words) and wordwrap 1.2 us (line breaks): a unit a character; pprint 263 ns
# (line breaks): 4 characters; title 172 ns (words): 4; striptags 108 ns (tags), urlencode 71
# ns (non-ASCII): 8; wordcount 49 ns (e-mail addresses), indent 38 ns (line breaks): 16. (A
# unit a character for urlencode, 2 for title / striptags made a 0.5-1 MB message that the
# reference renders in 30-80 ms run out of fuel: red team s7h F8.)
do_groupby = FILTERS['groupby'] = bounded.per_item(16, 4)(do_groupby)
do_pprint = FILTERS['pprint'] = bounded.per_item(16, 2)(do_pprint)
do_urlize = FILTERS['urlize'] = bounded.per_item(2, 0, text=True)(do_urlize)
do_wordwrap = FILTERS['wordwrap'] = bounded.per_item(1, 0, text=True)(do_wordwrap)
do_title = FILTERS['title'] = bounded.per_item(1, 2, text=True)(do_title)
do_striptags = FILTERS['striptags'] = bounded.per_item(1, 3, text=True)(do_striptags)
do_indent = FILTERS['indent'] = bounded.per_item(1, 4, text=True)(do_indent)
do_xmlattr = FILTERS['xmlattr'] = bounded.per_item(2, 4)(do_xmlattr)
do_slice = FILTERS['slice'] = bounded.per_item(1, 2)(do_slice)
do_reverse = FILTERS['reverse'] = bounded.per_item(1, 4)(do_reverse)
do_urlencode = FILTERS['urlencode'] = bounded.per_item(1, 3, text=True)(do_urlencode)
do_wordcount = FILTERS['wordcount'] = bounded.per_item(1, 4, text=True)(do_wordcount)
do_format = FILTERS['format'] = bounded.per_item(1, 2)(do_format)
