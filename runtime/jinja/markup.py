"""The part of markupsafe that changes printed output without autoescape: ``Markup``,
``escape``, ``soft_str``. Standard library only, and the runtime's limits (a long text
made from a value is checked)."""

from __future__ import annotations

import functools

from ..limits import check_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, List, Optional

# ----------------------------------------------------------------------------- markupsafe


def _escape_inner(s: str) -> str:
    return (
        s.replace("&", "&amp;")
        .replace(">", "&gt;")
        .replace("<", "&lt;")
        .replace("'", "&#39;")
        .replace('"', "&#34;")
    )


def escape(s: Any, /) -> "Markup":
    """markupsafe.escape: ``& < > ' "`` become entities; ``__html__`` values are kept."""
    if type(s) is str:
        return Markup(_escape_inner(s))
    if hasattr(s, "__html__"):
        return Markup(s.__html__())
    text = _escape_inner(str(s))
    if len(text) >= 65536:  # a container's text, escaped: bounded as ``soft_str`` bounds it
        check_text(len(text))
    return Markup(text)


def soft_str(s: Any, /) -> str:
    """markupsafe.soft_str: ``str(s)`` unless ``s`` already is a string (Markup stays Markup).
    A long text made from a value is bounded (``limits.check_text``): a container's text
    escapes what it holds (``repr`` doubles a backslash, makes ten characters of an
    unprintable one), so ``[s]|string`` fed back through a loop grows geometrically past
    what weighing the container showed."""
    if not isinstance(s, str):
        text = str(s)
        if len(text) >= 65536:
            check_text(len(text))
        return text
    return s


class Markup(str):
    """markupsafe.Markup: a str whose operations escape their plain-str operands."""

    __slots__ = ()
    __module__ = "markupsafe"  # error messages name it 'markupsafe.Markup object'

    def __new__(cls, object: Any = "", encoding: Optional[str] = None, errors: str = "strict"):
        if hasattr(object, "__html__"):
            object = object.__html__()
        if encoding is None:
            made = super().__new__(cls, object)
            if len(made) >= 65536 and not isinstance(object, str):  # a value's text (``|safe``)
                check_text(len(made))
            return made
        return super().__new__(cls, object, encoding, errors)

    def __html__(self, /) -> "Markup":
        return self

    def __add__(self, value: Any, /) -> "Markup":
        if isinstance(value, str) or hasattr(value, "__html__"):
            return self.__class__(super().__add__(self.escape(value)))
        return NotImplemented

    def __radd__(self, value: Any, /) -> "Markup":
        if isinstance(value, str) or hasattr(value, "__html__"):
            return self.escape(value).__add__(self)
        return NotImplemented

    def __mul__(self, value: Any, /) -> "Markup":
        return self.__class__(super().__mul__(value))

    __rmul__ = __mul__

    def __mod__(self, value: Any, /) -> "Markup":
        if isinstance(value, tuple):
            value = tuple(_MarkupEscapeHelper(x, self.escape) for x in value)
        elif hasattr(type(value), "__getitem__") and not isinstance(value, str):
            value = _MarkupEscapeHelper(value, self.escape)
        else:
            value = (_MarkupEscapeHelper(value, self.escape),)
        return self.__class__(super().__mod__(value))

    def __repr__(self, /) -> str:
        return f"{self.__class__.__name__}({super().__repr__()})"

    def join(self, iterable: Iterable[Any], /) -> "Markup":
        return self.__class__(super().join(map(self.escape, iterable)))

    def split(self, /, sep: Optional[str] = None, maxsplit: Any = -1) -> List["Markup"]:
        return [self.__class__(v) for v in super().split(sep, maxsplit)]

    def rsplit(self, /, sep: Optional[str] = None, maxsplit: Any = -1) -> List["Markup"]:
        return [self.__class__(v) for v in super().rsplit(sep, maxsplit)]

    def splitlines(self, /, keepends: bool = False) -> List["Markup"]:
        return [self.__class__(v) for v in super().splitlines(keepends)]

    def unescape(self, /) -> str:
        from html import unescape

        return unescape(str(self))

    def striptags(self, /) -> str:
        """markupsafe 3.0.4's: one left-to-right scan (linear), a comment or tag cut at each
        ``<`` until one is unclosed; then spaces collapsed and entities unescaped."""
        return self.__class__(" ".join(strip_tags(str(self)).split())).unescape()

    @classmethod
    def escape(cls, s: Any, /) -> "Markup":
        rv = escape(s)
        if rv.__class__ is not cls:
            return cls(rv)
        return rv

    def __getitem__(self, key: Any, /) -> "Markup":
        return self.__class__(super().__getitem__(key))

    def replace(self, old: str, new: str, count: Any = -1, /) -> "Markup":
        return self.__class__(super().replace(old, self.escape(new), count))

    def ljust(self, width: Any, fillchar: str = " ", /) -> "Markup":
        return self.__class__(super().ljust(width, self.escape(fillchar)))

    def rjust(self, width: Any, fillchar: str = " ", /) -> "Markup":
        return self.__class__(super().rjust(width, self.escape(fillchar)))

    def center(self, width: Any, fillchar: str = " ", /) -> "Markup":
        return self.__class__(super().center(width, self.escape(fillchar)))

    def partition(self, sep: str, /) -> tuple:
        return tuple(self.__class__(v) for v in super().partition(sep))

    def rpartition(self, sep: str, /) -> tuple:
        return tuple(self.__class__(v) for v in super().rpartition(sep))

    def format(self, *args: Any, **kwargs: Any) -> "Markup":
        return self.__class__(_escape_formatter()(self.escape).vformat(self, args, kwargs))

    def format_map(self, mapping: Any, /) -> "Markup":
        return self.__class__(_escape_formatter()(self.escape).vformat(self, (), mapping))

    def __html_format__(self, format_spec: str, /) -> "Markup":
        if format_spec:
            raise ValueError("Unsupported format specification for Markup.")
        return self


def _markup_wrapping(name: str) -> Callable[..., "Markup"]:
    """A str method that returns Markup (arguments are not escaped)."""
    method = getattr(str, name)

    def wrapped(self: Markup, *args: Any) -> Markup:
        return self.__class__(method(self, *args))

    wrapped.__name__ = wrapped.__qualname__ = name
    return wrapped


for _name in (
    "capitalize title lower upper lstrip rstrip strip translate expandtabs swapcase"
    " zfill casefold removeprefix removesuffix"
).split():
    setattr(Markup, _name, _markup_wrapping(_name))
del _name


@functools.cache
def _escape_formatter() -> type:
    """Markup.format's formatter class (made on first use: string imports re)."""
    import string

    class _EscapeFormatter(string.Formatter):
        def __init__(self, escape: Callable[[Any], Markup]) -> None:
            self.escape = escape
            super().__init__()

        def format_field(self, value: Any, format_spec: str) -> str:
            if hasattr(value, "__html_format__"):
                rv = value.__html_format__(format_spec)
            elif hasattr(value, "__html__"):
                if format_spec:
                    raise ValueError(
                        f"Format specifier {format_spec} given, but {type(value)} does not"
                        " define __html_format__. A class that defines __html__ must define"
                        " __html_format__ to work with format specifiers."
                    )
                rv = value.__html__()
            else:
                rv = super().format_field(value, str(format_spec))
            return str(self.escape(rv))

    return _EscapeFormatter


class _MarkupEscapeHelper:
    """Wraps one ``Markup % args`` argument so that ``%s`` / ``%r`` escape it."""

    __slots__ = ("obj", "escape")

    def __init__(self, obj: Any, escape: Callable[[Any], Markup]) -> None:
        self.obj = obj
        self.escape = escape

    def __getitem__(self, key: Any, /) -> "_MarkupEscapeHelper":
        return self.__class__(self.obj[key], self.escape)

    def __str__(self, /) -> str:
        return str(self.escape(self.obj))

    def __repr__(self, /) -> str:
        return str(self.escape(repr(self.obj)))

    def __int__(self, /) -> int:
        return int(self.obj)

    def __float__(self, /) -> float:
        return float(self.obj)


def strip_tags(value: str) -> str:
    """``value`` without its comments and tags, as markupsafe 3.0.4's ``striptags`` cuts them."""
    parts = []
    pos = 0
    while (start := value.find("<", pos)) != -1:
        if value.startswith("<!--", start):
            end = value.find("-->", start + 4)
            if end == -1:  # unclosed
                break
            end += 3
        else:
            end = value.find(">", start)
            if end == -1:  # unclosed
                break
            end += 1
        parts.append(value[pos:start])
        pos = end
    if pos > 0:
        parts.append(value[pos:])
        value = "".join(parts)
    return value
