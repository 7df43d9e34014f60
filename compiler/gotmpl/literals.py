"""Go literals as text/template reads them: strconv's Unquote, UnquoteChar, ParseInt,
ParseUint and ParseFloat (base 0, underscores, octal/hex/binary prefixes, hex floats),
and ``NumberNode``'s typing rules (parse.newNumber, exec.idealConstant).

Go strings are bytes; a ``\\xff`` escape that is not valid UTF-8 is kept as the surrogate
``\\udcff`` (Python's ``surrogateescape``), as everywhere in tmpl2py.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any


class LiteralError(ValueError):
    """The literal is malformed; the message is Go's."""


# ----------------------------------------------------------------------------- strings

_SIMPLE_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}
_HEX = "0123456789abcdefABCDEF"


def _unquote_char(s: str, i: int, quote: str) -> tuple[int | None, str | None, int]:
    """strconv.UnquoteChar at ``s[i]``: (byte value, None) or (None, char), next index."""
    c = s[i]
    if c != "\\":
        if c == quote and quote in "'\"":
            raise LiteralError("invalid syntax")
        return None, c, i + 1
    if i + 1 >= len(s):
        raise LiteralError("invalid syntax")
    c = s[i + 1]
    i += 2
    if c in _SIMPLE_ESCAPES:
        return None, chr(_SIMPLE_ESCAPES[c]), i
    if c in "xuU":
        n = {"x": 2, "u": 4, "U": 8}[c]
        digits = s[i : i + n]
        if len(digits) < n or any(d not in _HEX for d in digits):
            raise LiteralError("invalid syntax")
        v = int(digits, 16)
        if c == "x":
            return v, None, i + n  # a byte
        if v > 0x10FFFF or 0xD800 <= v < 0xE000:
            raise LiteralError("invalid syntax")
        return None, chr(v), i + n
    if c in "01234567":
        digits = s[i - 1 : i + 2]
        if len(digits) < 3 or any(d not in "01234567" for d in digits):
            raise LiteralError("invalid syntax")
        v = int(digits, 8)
        if v > 255:
            raise LiteralError("invalid syntax")
        return v, None, i + 2
    if c in "'\"":
        if c != quote:
            raise LiteralError("invalid syntax")
        return None, c, i
    raise LiteralError("invalid syntax")


def unquote(token: str) -> str:
    """strconv.Unquote of a "..." or `...` literal."""
    if token.startswith("`"):
        return token[1:-1].replace("\r", "")
    body = token[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        byte, char, i = _unquote_char(body, i, '"')
        if byte is not None:
            out.append(byte)
        else:
            out += char.encode("utf-8", "surrogateescape")
    return out.decode("utf-8", "surrogateescape")


def unquote_char_constant(token: str) -> int:
    """The rune value of a character constant like ``'a'`` or ``'\\n'``."""
    body = token[1:]
    byte, char, i = _unquote_char(body, 0, "'")
    if body[i:] != "'":
        raise LiteralError(f"malformed character constant: {token}")
    return byte if byte is not None else ord(char)


def go_quote(s: str) -> str:
    """strconv.Quote (for error messages)."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif 0xDC80 <= o <= 0xDCFF:  # a raw byte that is not UTF-8
            out.append(f"\\x{o - 0xDC00:02x}")
        elif o < 0x80 and ch.isprintable():
            out.append(ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(ch)])
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif unicodedata.category(ch)[0] in "LMNPS" or ch == " ":
            out.append(ch)
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


# ----------------------------------------------------------------------------- numbers


def _underscore_ok(s: str) -> bool:
    """strconv.underscoreOK: underscores only between digits or after a base prefix."""
    saw = "^"
    i = 0
    if s[:1] in ("+", "-"):
        s = s[1:]
    hexa = False
    if len(s) >= 2 and s[0] == "0" and s[1].lower() in "box":
        i = 2
        saw = "0"
        hexa = s[1].lower() == "x"
    while i < len(s):
        c = s[i]
        if "0" <= c <= "9" or (hexa and "a" <= c.lower() <= "f"):
            saw = "0"
        elif c == "_":
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
        i += 1
    return saw != "_"


def parse_uint(s: str) -> int | None:
    """strconv.ParseUint(s, 0, 64), or None when it fails."""
    if not s:
        return None
    s0 = s
    base = 10
    if s[0] == "0":
        if len(s) >= 3 and s[1] in "bB":
            base, s = 2, s[2:]
        elif len(s) >= 3 and s[1] in "oO":
            base, s = 8, s[2:]
        elif len(s) >= 3 and s[1] in "xX":
            base, s = 16, s[2:]
        else:
            base, s = 8, s[1:]
    n = 0
    underscores = False
    for c in s:
        if c == "_":
            underscores = True
            continue
        if "0" <= c <= "9":
            d = ord(c) - 48
        elif "a" <= c.lower() <= "z":
            d = ord(c.lower()) - 87
        else:
            return None
        if d >= base:
            return None
        n = n * base + d
        if n >= 1 << 64:
            return None
    if underscores and not _underscore_ok(s0):
        return None
    return n


def parse_int(s: str) -> int | None:
    """strconv.ParseInt(s, 0, 64), or None when it fails."""
    if not s:
        return None
    neg = s[0] == "-"
    body = s[1:] if s[0] in "+-" else s
    un = parse_uint(body)
    if un is None:
        return None
    if (not neg and un >= 1 << 63) or (neg and un > 1 << 63):
        return None
    return -un if neg else un


def parse_float(s: str) -> float | None:
    """strconv.ParseFloat(s, 64), or None when it fails (syntax or range)."""
    if not s:
        return None
    sign = ""
    body = s
    if body[0] in "+-":
        sign, body = body[0], body[1:]
    if "_" in body:
        if not _underscore_ok(body):
            return None
        body = body.replace("_", "")
    try:
        if body[:2].lower() == "0x":
            if "p" not in body.lower():
                return None
            value = float.fromhex(sign + body)
        else:
            if not body or body[0] not in "0123456789.":
                return None
            if any(c not in "0123456789.eE+-" for c in body):
                return None
            value = float(sign + body)
    except (ValueError, OverflowError):
        return None
    if value in (float("inf"), float("-inf")):
        return None
    return value


_BODY = (
    r"(?:0[xX][0-9a-fA-F_]*(?:\.[0-9a-fA-F_]*)?(?:[pP][+-]?[0-9_]*)?|0[oObB][0-9_]*(?:\.[0-9_]*)?"
    r"|(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9_]*)?)"
)
#: Go's scanNumber, with the second half of a complex constant ("1+2i") as group 2.
NUMBER_RE = re.compile(rf"([+-]?{_BODY}i?)([+-]{_BODY}i)?")


def parse_number(text: str, is_char: bool = False) -> tuple[str, Any]:
    """Type a number constant as Go does when nothing else gives the type.

    Returns (kind, value) with kind "int", "float", "complex" or "overflow" (Go's exec-time
    "%s overflows int"). Raises LiteralError with Go's parse-time message.
    """
    if is_char:
        return "int", unquote_char_constant(text)
    m = NUMBER_RE.fullmatch(text)
    if m is not None and m.group(2):
        re_part, im_part = parse_float(m.group(1)), parse_float(m.group(2)[:-1])
        if re_part is None or im_part is None:
            raise LiteralError("expected integer")
        return "complex", complex(re_part, im_part)
    if text.endswith("i"):
        f = parse_float(text[:-1])
        if f is not None:
            return "complex", complex(0, f)
    u = parse_uint(text)
    i = parse_int(text)
    is_uint = u is not None or i == 0
    is_int = i is not None
    f: float | None = None
    if is_int:
        f = float(i)  # type: ignore[arg-type]
    elif u is not None:
        f = float(u)
    else:
        f = parse_float(text)
        if f is not None:
            if not any(c in text for c in ".eEpP"):
                raise LiteralError(f"integer overflow: {go_quote(text)}")
            if f == int(f) and -(2**63) <= f < 2**63:
                is_int, i = True, int(f)
            if f == int(f) and 0 <= f < 2**64:
                is_uint = True
    if f is None and not is_int and not is_uint:
        raise LiteralError(f"illegal number syntax: {go_quote(text)}")
    is_hex_int = (
        len(text) > 2 and text[0] == "0" and text[1] in "xX" and not any(c in text for c in "pP")
    )
    if f is not None and not is_hex_int and any(c in text for c in ".eEpP"):
        return "float", f
    if is_int:
        return "int", i
    return "overflow", text
