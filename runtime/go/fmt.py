"""Go values in Python, and Go's ``fmt`` printing and ``encoding/json`` marshalling of them.
Long because Go's fmt verbs and flags and encoding/json are one coupled printing model: each
verb must print every kind of Go value.

Standard library only. The value model (shared with ``runtime.gotmpl`` and the Ollama
view types in ``runtime.ollama``)::

    Python value            Go type (as %T and error messages name it)
    None                    untyped nil (an invalid reflect.Value / nil interface)
    bool                    bool
    int                     int            (GoUint8: uint8, what ``index`` of a string gives)
    float                   float64
    complex                 complex128
    str                     string         (bytes that are not UTF-8: surrogateescape)
    GoString                string held in a string slot ([]string): not an interface
    list                    []interface {}
    dict                    map[string]interface {}
    GoStruct subclass       its ``go_type`` (``*T`` when ``go_pointer``)
    GoSlice / GoMap         a named or typed slice / map (``go_type``), possibly nil
    GoBytes                 a []byte type
    GoNil(type)             a typed nil pointer

Python truthiness of every value above is Go's ``isTrue``. A class with a ``String``
method is a ``fmt.Stringer``; one with ``MarshalJSON`` marshals itself.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import struct
import unicodedata
from typing import Any, ClassVar

from ..limits import OUTPUT_PER_UNIT, SHORT, charge, check_built, check_making, check_size

# ----------------------------------------------------------------------------- value model


class GoStruct:
    """A Go struct value (or pointer to one, when ``go_pointer``). Fields are attributes
    named as in Go; ``go_fields`` lists them in declaration order with their types."""

    __slots__ = ()
    go_type: ClassVar[str] = "struct {}"
    go_pointer: ClassVar[bool] = False
    go_fields: ClassVar[tuple] = ()  # ((name, go type, json name or None, omitempty), ...)
    go_field_types: ClassVar[dict] = {}  # name -> go type, derived from go_fields

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.go_field_types = {f[0]: f[1] for f in cls.go_fields}

    def __bool__(self) -> bool:
        return True


class GoSlice(list):
    """A typed Go slice; ``nil`` tells a nil slice from an empty one."""

    go_type = "[]interface {}"
    nil = False


class GoMap(dict):
    """A typed Go map; ``go_zero`` makes the element type's zero value (missing keys)."""

    go_type = "map[string]interface {}"
    go_elem_type = "interface {}"
    nil = False

    @staticmethod
    def go_zero() -> Any:
        return None


class GoBytes(bytes):
    go_type = "[]uint8"


class GoString(str):
    """A string read from a typed []string (a range element or ``index`` of it). A plain
    str may have come out of an interface slot ([]any, map[string]any); this one cannot,
    which error messages naming the static type tell apart."""

    __slots__ = ()
    go_type = "string"


class GoUint8(int):
    """A Go uint8 (``index`` of a string yields bytes)."""

    go_type = "uint8"


class GoNil:
    """A typed nil pointer: prints ``<nil>``, is false."""

    __slots__ = ("go_type",)

    def __init__(self, go_type: str) -> None:
        self.go_type = go_type

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoNil) and other.go_type == self.go_type

    def __hash__(self) -> int:
        return hash(self.go_type)


def go_type(v: Any) -> str:
    """The Go type name of a value (``reflect.Type.String``)."""
    if v is None:
        return "<nil>"
    t = type(v)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "float64"
    if t is str:
        return "string"
    if t is list:
        return "[]interface {}"
    if t is dict:
        return "map[string]interface {}"
    if t is complex:
        return "complex128"
    name = getattr(v, "go_type", None)
    if isinstance(v, GoStruct) and v.go_pointer:
        return "*" + v.go_type
    if name is not None:
        return name
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "[]interface {}"
    if isinstance(v, dict):
        return "map[string]interface {}"
    return type(v).__name__


def kind(v: Any) -> str:
    """reflect.Kind of a value: bool int uint float complex string slice map struct ptr invalid."""
    if v is None:
        return "invalid"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, GoUint8):
        return "uint"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, complex):
        return "complex"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple, bytes)):
        return "slice"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, GoStruct):
        return "ptr" if v.go_pointer else "struct"
    if isinstance(v, GoNil):
        return "ptr"
    return "struct"


def is_stringer(v: Any) -> bool:
    return hasattr(type(v), "String") and not isinstance(v, GoNil)


# ----------------------------------------------------------------------------- strings and bytes


def to_bytes(s: str) -> bytes:
    """A Go string's bytes: the UTF-8 of the text, a byte a JSON decoder could not decode
    kept as the one byte it was (``surrogateescape``); a lone surrogate of any other value
    (text that never was bytes: a ``\\ud800`` escape) as its three bytes, never an error.
    A long text's encoding is charged (a unit per 1,024 characters, about its time): Go's
    ``len``, ``index``, ``slice`` and comparisons of a string take O(1) in Go but encode it
    here, once a call, so a loop over them on a 10 MB input ran 10 ms an iteration unpaid."""
    if len(s) > SHORT:
        charge(len(s) >> 10)
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass")


def from_bytes(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


#: Code points unicode.IsPrint accepts that Python 3.10's unicodedata (Unicode 13.0.0)
#: does not know as printable: Go 1.27's tables are Unicode 17.0.0. (first, last) ranges,
#: every code point inside printable in Go; a later Python knows some of them already
#: (none of Unicode 13 to 15.1 calls printable what Go does not). Made by listing every
#: rune with unicode.IsPrint(r) && !<this module's category test>, merging neighbours;
#: tests/unit/test_gotmpl_runtime.py checks all of Unicode against the Go toolchain.
# fmt: off
_GO_PRINT_EXTRA = (
    (0x61D, 0x61D), (0x870, 0x88F), (0x897, 0x8D2), (0xC3C, 0xC3C), (0xC5C, 0xC5D), (0xCDC, 0xCDD),
    (0xCF3, 0xCF3), (0xECE, 0xECE), (0x170D, 0x1715), (0x171F, 0x171F), (0x180F, 0x180F),
    (0x1AC1, 0x1ADD), (0x1AE0, 0x1AEB), (0x1B4C, 0x1B4C), (0x1B4E, 0x1B7F), (0x1C89, 0x1C8A),
    (0x1DFA, 0x1DFA), (0x20C0, 0x20C1), (0x2427, 0x2429), (0x2B96, 0x2C5F), (0x2E53, 0x2E5D),
    (0x2FFC, 0x2FFF), (0x31E4, 0x31E5), (0x31EF, 0x31EF), (0x9FFD, 0x9FFF), (0xA7C0, 0xA7DC),
    (0xA7F1, 0xA7F4), (0xFBC2, 0xFDCF), (0xFDFE, 0xFDFF), (0x10570, 0x1057A), (0x1057C, 0x1058A),
    (0x1058C, 0x10592), (0x10594, 0x10595), (0x10597, 0x105A1), (0x105A3, 0x105B1),
    (0x105B3, 0x105B9), (0x105BB, 0x105BC), (0x105C0, 0x105F3), (0x10780, 0x10785),
    (0x10787, 0x107B0), (0x107B2, 0x107BA), (0x10940, 0x10959), (0x10D40, 0x10D65),
    (0x10D69, 0x10D85), (0x10D8E, 0x10D8F), (0x10EC2, 0x10EC7), (0x10ED0, 0x10ED8),
    (0x10EFA, 0x10EFF), (0x10F70, 0x10F89), (0x11070, 0x11075), (0x110C2, 0x110C2),
    (0x1123F, 0x11241), (0x11380, 0x11389), (0x1138B, 0x1138B), (0x1138E, 0x1138E),
    (0x11390, 0x113B5), (0x113B7, 0x113C0), (0x113C2, 0x113C2), (0x113C5, 0x113C5),
    (0x113C7, 0x113CA), (0x113CC, 0x113D5), (0x113D7, 0x113D8), (0x113E1, 0x113E2),
    (0x116B9, 0x116B9), (0x116D0, 0x116E3), (0x11740, 0x11746), (0x11AB0, 0x11ABF),
    (0x11B00, 0x11B09), (0x11B60, 0x11B67), (0x11BC0, 0x11BE1), (0x11BF0, 0x11BF9),
    (0x11DB0, 0x11DDB), (0x11DE0, 0x11DE9), (0x11F00, 0x11F10), (0x11F12, 0x11F3A),
    (0x11F3E, 0x11F5A), (0x12F90, 0x12FF2), (0x1342F, 0x1342F), (0x13440, 0x13455),
    (0x13460, 0x143FA), (0x16100, 0x16139), (0x16A70, 0x16ABE), (0x16AC0, 0x16AC9),
    (0x16D40, 0x16D79), (0x16EA0, 0x16EB8), (0x16EBB, 0x16ED3), (0x16FF2, 0x16FF6),
    (0x187F8, 0x187FF), (0x18CFF, 0x18D1E), (0x18D80, 0x18DF2), (0x1AFF0, 0x1AFF3),
    (0x1AFF5, 0x1AFFB), (0x1AFFD, 0x1AFFE), (0x1B11F, 0x1B122), (0x1B132, 0x1B132),
    (0x1B155, 0x1B155), (0x1CC00, 0x1CCFC), (0x1CD00, 0x1CEB3), (0x1CEBA, 0x1CED0),
    (0x1CEE0, 0x1CEF0), (0x1CF00, 0x1CF2D), (0x1CF30, 0x1CF46), (0x1CF50, 0x1CFC3),
    (0x1D1E9, 0x1D1EA), (0x1D2C0, 0x1D2D3), (0x1DF00, 0x1DF1E), (0x1DF25, 0x1DF2A),
    (0x1E030, 0x1E06D), (0x1E08F, 0x1E08F), (0x1E290, 0x1E2AE), (0x1E4D0, 0x1E4F9),
    (0x1E5D0, 0x1E5FA), (0x1E5FF, 0x1E5FF), (0x1E6C0, 0x1E6DE), (0x1E6E0, 0x1E6F5),
    (0x1E6FE, 0x1E6FF), (0x1E7E0, 0x1E7E6), (0x1E7E8, 0x1E7EB), (0x1E7ED, 0x1E7EE),
    (0x1E7F0, 0x1E7FE), (0x1F6D8, 0x1F6D8), (0x1F6DC, 0x1F6DF), (0x1F774, 0x1F7D9),
    (0x1F7F0, 0x1F7F0), (0x1F8B2, 0x1F8BB), (0x1F8C0, 0x1F8C1), (0x1F8D0, 0x1F8D8),
    (0x1F979, 0x1FA57), (0x1FA75, 0x1FA7C), (0x1FA87, 0x1FA8A), (0x1FA8E, 0x1FAC6),
    (0x1FAC8, 0x1FAC8), (0x1FACD, 0x1FADC), (0x1FADF, 0x1FAEA), (0x1FAEF, 0x1FAF8),
    (0x1FBCB, 0x1FBFA), (0x2A6DE, 0x2A6DF), (0x2B735, 0x2B73F), (0x2CEA2, 0x2CEAD),
    (0x2EBF0, 0x2EE5D), (0x31350, 0x33479),
)
# fmt: on
_GO_PRINT_FIRST = tuple(r[0] for r in _GO_PRINT_EXTRA)


def is_print(ch: str) -> bool:
    """unicode.IsPrint (letters, marks, numbers, punctuation, symbols and ASCII space), as
    Go's Unicode version has it."""
    if ch == " ":
        return True
    if unicodedata.category(ch)[0] in "LMNPS":
        return True
    o = ord(ch)
    i = bisect.bisect_right(_GO_PRINT_FIRST, o) - 1
    return i >= 0 and o <= _GO_PRINT_EXTRA[i][1]


_is_print = is_print

#: unicode.ToLower where Python 3.10's str.lower (per character) differs: (first, last,
#: offset) ranges. U+0130 lowers to "i" (Python: "i" + U+0307), the rest are case pairs
#: of Unicode 14..17. Checked against the Go toolchain like _GO_PRINT_EXTRA.
_GO_LOWER_EXTRA = (
    (0x130, 0x130, -199),
    (0x1C89, 0x1C89, 1),
    (0x2C2F, 0x2C2F, 48),
    (0xA7C0, 0xA7C0, 1),
    (0xA7CB, 0xA7CB, -42343),
    (0xA7CC, 0xA7CC, 1),
    (0xA7CE, 0xA7CE, 1),
    (0xA7D0, 0xA7D0, 1),
    (0xA7D2, 0xA7D2, 1),
    (0xA7D4, 0xA7D4, 1),
    (0xA7D6, 0xA7D6, 1),
    (0xA7D8, 0xA7D8, 1),
    (0xA7DA, 0xA7DA, 1),
    (0xA7DC, 0xA7DC, -42561),
    (0x10570, 0x1057A, 39),
    (0x1057C, 0x1058A, 39),
    (0x1058C, 0x10592, 39),
    (0x10594, 0x10595, 39),
    (0x10D50, 0x10D65, 32),
    (0x16EA0, 0x16EB8, 27),
)
_GO_LOWER = {
    chr(c): chr(c + offset)
    for first, last, offset in _GO_LOWER_EXTRA
    for c in range(first, last + 1)
}


def to_lower(s: str) -> str:
    """strings.ToLower: unicode.ToLower of each rune (simple case mapping: no final sigma,
    no multi-character results), as Go's Unicode version has it."""
    if s.isascii():
        return s.lower()
    return "".join(_GO_LOWER.get(c) or c.lower() for c in s)


def quote(s: str, ascii_only: bool = False) -> str:
    """strconv.Quote / QuoteToASCII."""
    charge(len(s) >> 1)  # a Python step per character (limits.charge)
    out = ['"']
    for ch in s:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:  # an invalid UTF-8 byte
            out.append(f"\\x{o - 0xDC00:02x}")
        elif ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif o < 0x80 and _is_print(ch) or not ascii_only and o >= 0x80 and _is_print(ch):
            out.append(ch)
        else:
            out.append(_escape_rune(ch))
    out.append('"')
    return "".join(out)


def _escape_rune(ch: str) -> str:
    o = ord(ch)
    simple = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}
    if o in simple:
        return simple[o]
    if o < 0x20 or o == 0x7F:
        return f"\\x{o:02x}"
    if o < 0x10000:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def quote_rune(o: int, ascii_only: bool = False) -> str:
    """fmtQc: strconv.QuoteRune(ToASCII); what is no rune (negative: a huge uint64 in Go,
    too large, a surrogate) quotes U+FFFD."""
    if o < 0 or o > 0x10FFFF or 0xD800 <= o < 0xE000:
        o = 0xFFFD
    ch = chr(o)
    if ch == "'" or ch == "\\":
        return "'\\" + ch + "'"
    if (o < 0x80 or not ascii_only) and _is_print(ch):
        return "'" + ch + "'"
    return "'" + _escape_rune(ch) + "'"


def _can_backquote(s: str) -> bool:
    for ch in s:
        o = ord(ch)
        if ch == "`" or ch == "\ufeff" or 0xDC80 <= o <= 0xDCFF:
            return False
        if o < 0x20 and ch != "\t" or o == 0x7F:
            return False
    return True


# ----------------------------------------------------------------------------- floats


def shortest_digits(f: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of abs(f) and the decimal point position
    (``abs(f) == 0.DIGITS * 10**dp``), read off ``repr`` (Python's repr is the shortest
    round-trip form, as strconv's): a string split, as printing runs once per value."""
    if f == 0:
        return "0", 1
    mantissa, _, exp = float.__repr__(abs(f)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    stripped = digits.lstrip("0")
    dp = len(whole) - (len(digits) - len(stripped)) + (int(exp) if exp else 0)
    return stripped.rstrip("0") or "0", dp


def format_float(f: float, verb: str, prec: int) -> str:
    """strconv.FormatFloat(f, verb, prec, 64) for verbs e E f g G x X b (prec -1: shortest)."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    neg = math.copysign(1.0, f) < 0
    sign = "-" if neg else ""
    lower = verb.lower()
    if lower == "x":
        return _format_hex_float(f, verb, prec)
    if lower == "b":  # fmtB: the stored mantissa (implicit bit added) and exponent
        _, mant, exp = _float_bits(f)
        return f"{sign}{mant}p{exp - 52:+d}"
    if prec >= 0:
        if lower == "g":
            p = prec or 1
            text = f"{abs(f):.{p}{verb}}"
            if "e" in text.lower():
                mant, _, exp = text.partition("e" if verb == "g" else "E")
                text = mant + ("e" if verb == "g" else "E") + _exp2(exp)
            return sign + text
        return sign + f"{abs(f):.{prec}{verb}}"
    digits, dp = shortest_digits(f)
    nd = len(digits)
    if lower == "g":
        exp = dp - 1
        if exp < -4 or exp >= 6:
            return sign + _fmt_e(digits, dp, nd - 1, "e" if verb == "g" else "E")
        return sign + _fmt_f(digits, dp, max(nd - dp, 0))
    if lower == "e":
        return sign + _fmt_e(digits, dp, nd - 1, verb)
    return sign + _fmt_f(digits, dp, max(nd - dp, 0))


def _exp2(exp: str) -> str:
    s, digits = exp[0], exp[1:].lstrip("0")
    return s + digits.rjust(2, "0")


def _fmt_e(digits: str, dp: int, prec: int, e: str) -> str:
    text = digits[0]
    if prec > 0:
        text += "." + digits[1 : prec + 1].ljust(prec, "0")
    exp = dp - 1 if digits != "0" else 0
    return f"{text}{e}{'-' if exp < 0 else '+'}{abs(exp):02d}"


def _fmt_f(digits: str, dp: int, prec: int) -> str:
    integer = digits[:dp].ljust(dp, "0") if dp > 0 else "0"
    if prec <= 0:
        return integer
    frac = ("0" * min(max(-dp, 0), prec) + digits[max(dp, 0) :])[:prec].ljust(prec, "0")
    return integer + "." + frac


def _float_bits(f: float) -> tuple[bool, int, int]:
    """(negative, mantissa with the implicit bit, unbiased exponent) as strconv decodes a
    float64 (a subnormal: exponent -1022, no implicit bit)."""
    bits = struct.unpack("<Q", struct.pack("<d", f))[0]
    exp = (bits >> 52) & 0x7FF
    mant = bits & ((1 << 52) - 1)
    if exp == 0:
        exp = 1
    else:
        mant |= 1 << 52
    return bool(bits >> 63), mant, exp - 1023


def _format_hex_float(f: float, verb: str, prec: int) -> str:
    """strconv's fmtX (uint64 arithmetic): normalised to 1.xxx also for subnormals, digits
    rounded to ``prec`` (half to even) when 0 <= prec < 15."""
    neg, mant, exp = _float_bits(f)
    if mant == 0:
        exp = 0
    mant <<= 60 - 52
    while mant != 0 and mant & (1 << 60) == 0:
        mant <<= 1
        exp -= 1
    if 0 <= prec < 15:
        shift = prec * 4
        extra = (mant << shift) & ((1 << 60) - 1)
        mant >>= 60 - shift
        if extra | (mant & 1) > 1 << 59:
            mant += 1
        mant <<= 60 - shift
        if mant & (1 << 61):  # wrapped around
            mant >>= 1
            exp += 1
    digits = "0123456789ABCDEF" if verb == "X" else "0123456789abcdef"
    out = ["-" if neg else "", "0", verb, str((mant >> 60) & 1)]
    mask = (1 << 64) - 1
    mant = (mant << 4) & mask  # drop the leading digit
    if prec < 0 and mant != 0:
        out.append(".")
        while mant != 0:
            out.append(digits[(mant >> 60) & 15])
            mant = (mant << 4) & mask
    elif prec > 0:
        out.append(".")
        for _ in range(prec):
            out.append(digits[(mant >> 60) & 15])
            mant = (mant << 4) & mask
    out.append("P" if verb == "X" else "p")
    out.append("-" if exp < 0 else "+")
    out.append(f"{abs(exp):02d}")
    return "".join(out)


def format_float_json(f: float) -> str | None:
    """encoding/json's float64 encoding (None for NaN and infinities: an error)."""
    if math.isnan(f) or math.isinf(f):
        return None
    a = abs(f)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        text = format_float(f, "e", -1)
        if len(text) >= 4 and text[-4] == "e" and text[-3] == "-" and text[-2] == "0":
            text = text[:-2] + text[-1]  # e-07 -> e-7
        return text
    return format_float(f, "f", -1)


# ----------------------------------------------------------------------------- fmt


class _Flags:
    __slots__ = (
        "erroring",
        "minus",
        "plus",
        "plus_v",
        "prec",
        "sharp",
        "sharp_v",
        "space",
        "wid",
        "zero",
    )

    def __init__(self) -> None:
        self.plus = self.minus = self.sharp = self.space = self.zero = False
        self.plus_v = self.sharp_v = False
        self.erroring = False  # inside a bad verb's %!x(T=...): no String methods
        self.wid: int | None = None
        self.prec: int | None = None


_PLAIN = _Flags()


def _pad(s: str, f: _Flags) -> str:
    if f.wid is None:
        return s
    n = f.wid - len(s)
    if n <= 0:
        return s
    if f.minus:
        return s + " " * n
    return ("0" if f.zero else " ") * n + s


def _fmt_integer(v: int, verb: str, f: _Flags, unsigned: bool = False) -> str:
    if verb == "c":
        return _pad(chr(v) if 0 <= v <= 0x10FFFF and not 0xD800 <= v < 0xE000 else "\ufffd", f)
    if verb == "q":
        return _pad(quote_rune(v, f.plus), f)
    if verb == "U":
        text = f"U+{v:04X}" if v >= 0 else f"U+{v & 0xFFFFFFFFFFFFFFFF:04X}"
        if f.sharp and 0 <= v <= 0x10FFFF and _is_print(chr(v)):
            text += " '" + chr(v) + "'"
        return _pad(text, f)
    base = {"d": 10, "v": 10, "b": 2, "o": 8, "O": 8, "x": 16, "X": 16}[verb]
    neg = v < 0
    digits = _to_base(abs(v), base, verb == "X")
    if f.prec is not None:
        if f.prec == 0 and v == 0:
            digits = ""
        digits = digits.rjust(f.prec, "0")
    prefix = ""
    if f.sharp:
        if base == 8 and not digits.startswith("0"):
            prefix = "0"
        elif base == 16:
            prefix = "0X" if verb == "X" else "0x"
        elif base == 2:
            prefix = "0b"
    if verb == "O":
        prefix = "0o"
    sign = "-" if neg else ("+" if f.plus else (" " if f.space else ""))
    body = prefix + digits
    if f.zero and f.wid is not None and not f.minus and f.prec is None:
        body = body.rjust(f.wid - len(sign), "0")
    return _pad(sign + body, _no_zero(f))


def _sharp(f: _Flags) -> _Flags:
    """``f`` with the ``#`` flag (fmt0x64's leading 0x), the other flags kept."""
    g = _Flags()
    for name in _Flags.__slots__:
        setattr(g, name, getattr(f, name))
    g.sharp = True
    return g


def _no_zero(f: _Flags) -> _Flags:
    if not f.zero:
        return f
    g = _Flags()
    g.minus, g.wid = f.minus, f.wid
    return g


def _to_base(n: int, base: int, upper: bool) -> str:
    if base == 10:
        return str(n)
    text = {2: format(n, "b"), 8: format(n, "o"), 16: format(n, "x")}[base]
    return text.upper() if upper else text


def _fmt_float(v: float, verb: str, f: _Flags) -> str:
    prec = f.prec if f.prec is not None else (6 if verb in "fFeE" else -1)
    real_verb = {"v": "g", "F": "f"}.get(verb, verb)
    num = format_float(v, real_verb, prec)
    if not num.startswith(("-", "+")):
        num = "+" + num
    if f.space and num[0] == "+" and not f.plus:
        num = " " + num[1:]
    if num[1] in "IN":
        if num[1] == "N" and not f.space and not f.plus:
            num = num[1:]
        return _pad(num, _no_zero(f))
    if f.sharp and verb != "b":
        num = _sharp_float(num, verb, prec)
    if f.plus or num[0] != "+":
        if f.zero and not f.minus and f.wid is not None and f.wid > len(num):
            return num[0] + "0" * (f.wid - len(num)) + num[1:]
        return _pad(num, f)
    return _pad(num[1:], f)


def _sharp_float(num: str, verb: str, prec: int) -> str:
    digits = 0
    if verb in "vgGxX":
        digits = 6 if prec == -1 else prec
    tail = ""
    for i in range(1, len(num)):
        if num[i] in "pP" or (num[i] in "eE" and verb not in "xX"):
            tail, num = num[i:], num[:i]
            break
    has_point = "." in num
    saw_nonzero = False
    for ch in num[1:]:
        if ch == ".":
            continue
        if ch != "0":
            saw_nonzero = True
        if saw_nonzero:
            digits -= 1
    if not has_point:
        if len(num) == 2 and num[1] == "0":
            digits -= 1
        num += "."
    return num + "0" * max(digits, 0) + tail


def _fmt_complex(v: complex, verb: str, f: _Flags) -> str:
    if verb not in "vbgGxXfFeE":
        return None  # type: ignore[return-value]
    g = _Flags()
    for attr in _Flags.__slots__:
        setattr(g, attr, getattr(f, attr))
    g.wid = f.wid
    real = _fmt_float(v.real, verb, g)
    g.plus = True
    imag = _fmt_float(v.imag, verb, g)
    return "(" + real + imag + "i)"


def _fmt_string(s: str, verb: str, f: _Flags) -> str | None:
    if f.prec is not None and verb in "vsq":
        s = s[: f.prec]
    if verb in "vs":
        if f.sharp_v:
            return _pad(quote(s), f)
        return _pad(s, f)
    if verb == "q":
        if f.sharp and _can_backquote(s):
            return _pad("`" + s + "`", f)
        return _pad(quote(s, f.plus), f)
    if verb in "xX":
        return _pad(_hex_bytes(to_bytes(s), verb, f), f)
    return None


def _hex_bytes(b: bytes, verb: str, f: _Flags) -> str:
    """fmt's fmtSbx: two digits a byte (``bytes.hex``, in C: a Python string a byte took ~60
    bytes a character while it was made), spaced with ``% x``, ``0x`` before the first byte
    with ``%#x`` or before each with ``%# x``."""
    if f.prec is not None:
        b = b[: f.prec]
    if not b:
        return ""
    text = b.hex(" ") if f.space else b.hex()
    prefix = "0x"
    if verb == "X":
        text, prefix = text.upper(), "0X"
    if f.sharp:
        text = prefix + (text.replace(" ", " " + prefix) if f.space else text)
    return text


def _bad_verb(verb: str, v: Any, f: _Flags = _PLAIN) -> str:
    """fmt's badVerb: the operand printed with %v, keeping the flags (width, precision, +,
    #) of the bad verb, without calling String methods (p.erroring)."""
    if v is None:
        return f"%!{verb}(<nil>)"
    g = _Flags()
    for name in _Flags.__slots__:
        setattr(g, name, getattr(f, name))
    g.erroring = True
    return f"%!{verb}({go_type(v)}={_format(v, 'v', g, 0)})"


def _sorted_keys(d: dict) -> list:
    """internal/fmtsort order (keys of one kind: numbers, strings, bools)."""
    try:
        return sorted(d, key=_sort_key)
    except TypeError:
        return list(d)


def _sort_key(k: Any) -> Any:
    if isinstance(k, str):
        return to_bytes(k)
    return k


def _format(v: Any, verb: str, f: _Flags, depth: int) -> str:
    """fmt's printArg / printValue for one operand."""
    if f is not _PLAIN and ((f.wid or 0) > 4096 or (f.prec or 0) > 4096):
        # a wide field is padded for each operand, and for each item of a list or map with
        # the same flags: paid for as it is made (the width was checked once, per format)
        charge(max(f.wid or 0, f.prec or 0) // OUTPUT_PER_UNIT)
    if v is None:
        if depth > 0:  # a nil interface inside a slice, map or struct (printValue)
            return "interface {}(nil)" if f.sharp_v else "<nil>"
        if verb in "vT":
            return _pad("<nil>", f)
        return _bad_verb(verb, None)
    if verb == "T":
        return _pad(go_type(v), f)
    if isinstance(v, bool):
        if verb in "tv":
            return _pad("true" if v else "false", f)
        return _bad_verb(verb, v, f)
    if isinstance(v, int):
        if verb == "v" and f.sharp_v and type(v) is GoUint8:  # fmt0x64: unsigned %#v in hex
            return _fmt_integer(int(v), "x", _sharp(f))
        if verb in "vdboOxXcqU":
            return _fmt_integer(int(v), verb, f)
        return _bad_verb(verb, v, f)
    if isinstance(v, float):
        if verb == "v" and f is _PLAIN and 1e-4 <= abs(v) < 1e6:
            # %v is strconv's shortest 'g': fixed notation for exponents -4..5, where it is
            # Python's repr less a trailing ".0" (the common case, kept cheap: printing
            # runs once per value)
            text = float.__repr__(v)
            return text[:-2] if text.endswith(".0") else text
        if verb in "vbgGxXfFeE":
            return _fmt_float(v, verb, f)
        return _bad_verb(verb, v, f)
    if isinstance(v, complex):
        out = _fmt_complex(v, verb, f)
        return out if out is not None else _bad_verb(verb, v, f)
    if is_stringer(v) and verb in "vsxXq" and not f.sharp_v and not f.erroring:
        return _fmt_string(v.String(), verb, f) or ""
    if isinstance(v, str):
        out = _fmt_string(v, verb, f)
        return out if out is not None else _bad_verb(verb, v, f)
    if isinstance(v, GoNil):
        if verb == "v" and f.sharp_v:  # fmtPointer: the type, then nil
            return f"({v.go_type})(nil)"
        if verb == "v":
            return _pad("<nil>", f)
        if verb == "p":
            return _pad("0x0", f)
        if verb in "bodxX":  # fmtPointer: the address as an integer
            return _fmt_integer(0, verb, f, unsigned=True)
        return _bad_verb(verb, v, f)
    if isinstance(v, (bytes, bytearray)):
        if verb in "sqxX":
            return _fmt_string(from_bytes(bytes(v)), verb, f) or ""
        items = [_format(GoUint8(b), verb, f, depth + 1) for b in v]  # elements are uint8s
        if f.sharp_v:  # printArg names a top-level []uint8 "[]byte" (fmtBytes)
            name = go_type(v)
            name = "[]byte" if depth == 0 and name == "[]uint8" else name
            return name + ("(nil)" if getattr(v, "nil", False) else "{" + ", ".join(items) + "}")
        return "[" + " ".join(items) + "]"
    if isinstance(v, GoStruct):
        if v.go_pointer and depth > 0:  # printValue: only a top-level pointer shows "&{...}"
            if verb in "vp":  # fmtPointer (the address; masked when compared)
                if f.sharp_v:
                    return f"({go_type(v)})(0xc000010000)"
                return _pad("0xc000010000", f)
            if verb in "bodxX":
                return _fmt_integer(0xC000010000, verb, f, unsigned=True)
            return _bad_verb(verb, v, f)  # the operand printed with %v at depth 0: &{...}
        prefix = "&" if v.go_pointer and depth == 0 else ""
        opaque = getattr(v, "go_opaque", False)  # one unexported pointer field: an address
        if opaque:
            name, inner = opaque  # the field's name and Go type
            if f.sharp_v:
                return f"{prefix}{v.go_type}{{{name}:({inner})(0xc000010000)}}"
            return prefix + ("{" + name + ":0xc000010000}" if f.plus_v else "{0xc000010000}")
        parts = []
        charge(2 * len(v.go_fields))
        for field in v.go_fields:
            name = field[0]
            text = _format(getattr(v, name), verb, f, depth + 1)
            parts.append(f"{name}:{text}" if (f.plus_v or f.sharp_v) else text)
        if f.sharp_v:
            return prefix + v.go_type + "{" + ", ".join(parts) + "}"
        return prefix + "{" + " ".join(parts) + "}"
    if isinstance(v, dict):
        charge(2 * len(v))  # printing walks every entry in Python (limits.charge)
        keys = _sorted_keys(v)
        if f.sharp_v:
            if getattr(v, "nil", False):
                return go_type(v) + "(nil)"
            items = ", ".join(
                _format(k, verb, f, depth + 1) + ":" + _format(v[k], verb, f, depth + 1)
                for k in keys
            )
            return go_type(v) + "{" + items + "}"
        items = " ".join(
            _format(k, verb, f, depth + 1) + ":" + _format(v[k], verb, f, depth + 1) for k in keys
        )
        return "map[" + items + "]"
    if isinstance(v, (list, tuple)):
        charge(2 * len(v))
        if f.sharp_v:
            if getattr(v, "nil", False):
                return go_type(v) + "(nil)"
            return go_type(v) + "{" + ", ".join(_format(e, verb, f, depth + 1) for e in v) + "}"
        return "[" + " ".join(_format(e, verb, f, depth + 1) for e in v) + "]"
    return _pad(str(v), f)


def format_value(v: Any, verb: str = "v") -> str:
    """``fmt.Sprintf("%" + verb, v)`` with no flags."""
    f = _PLAIN
    if verb == "+v":
        f = _Flags()
        f.plus_v = True
        verb = "v"
    elif verb == "#v":
        f = _Flags()
        f.sharp_v = True
        verb = "v"
    return _format(v, verb, f, 0)


def sprint(*args: Any) -> str:
    """fmt.Sprint: spaces between operands when neither is a string."""
    out = []
    prev_string = False
    size = 0
    for i, arg in enumerate(args):
        is_string = arg is not None and kind(arg) == "string"
        if i > 0 and not is_string and not prev_string:
            out.append(" ")
        text = _format(arg, "v", _PLAIN, 0)
        out.append(text)
        size = _grown(size, text, "print")
        prev_string = is_string
    return _made("".join(out), "print")


def sprintln(*args: Any) -> str:
    out = []
    size = 0
    for arg in args:
        text = _format(arg, "v", _PLAIN, 0)
        out.append(text)
        size = _grown(size, text, "println")
    return _made(" ".join(out) + "\n", "println")


def _grown(size: int, text: str, what: str) -> int:
    """``size`` plus the length of ``text``, a piece of the text ``print``, ``printf`` or
    ``println`` is making: past :data:`SHORT` characters, refused past ``Limits.output``
    before the pieces are joined (one value printed by 20,000 operands, or by ``%[1]s``
    20,000 times, joined 2 GB; the check on the result came after the join)."""
    size += len(text)
    if size >= SHORT:
        check_making(size, what)
    return size


def _made(text: str, what: str) -> str:
    """A text ``print``, ``printf`` or ``println`` made, which a template can keep and print
    again (``{{$x = print $x $x}}`` in a ``range`` doubles it): past SHORT characters,
    charged and refused past ``Limits.output``, as a Jinja ``~`` is (``check_built``)."""
    if len(text) >= SHORT:
        check_built(len(text), what)
    return text


#: formats of only flagless verbs (``"%v: %s"``), split once: (texts, verbs) or None
_SIMPLE_FORMATS: dict = {}
_SIMPLE_VERBS = frozenset("vsdtqxXT")


def _simple_format(fmt: str) -> Any:
    """``fmt`` as (literal texts, verbs) when every ``%`` is a verb without flags, width,
    precision or index (or ``%%``); None otherwise. Cached: a template's formats are
    constants, and printf runs once per item in a loop."""
    known = _SIMPLE_FORMATS.get(fmt, False)
    if known is not False:
        return known
    texts, verbs, piece = [], [], []
    i, end = 0, len(fmt)
    simple: Any = True
    while i < end:
        j = fmt.find("%", i)
        if j < 0:
            piece.append(fmt[i:])
            break
        piece.append(fmt[i:j])
        verb = fmt[j + 1 : j + 2]
        if verb == "%":
            piece.append("%")
        elif verb in _SIMPLE_VERBS and verb:
            texts.append("".join(piece))
            piece = []
            verbs.append(verb)
        else:
            simple = None
            break
        i = j + 2
    if simple:
        texts.append("".join(piece))
        simple = (tuple(texts), tuple(verbs))
    if len(_SIMPLE_FORMATS) >= 512:
        _SIMPLE_FORMATS.clear()
    _SIMPLE_FORMATS[fmt] = simple
    return simple


def sprintf(fmt: str, *args: Any) -> str:
    """fmt.Sprintf (a port of fmt/print.go doPrintf); a format of flagless verbs with one
    operand each takes the short way (the same ``_format`` calls, without the parse)."""
    simple = _simple_format(fmt)
    if simple is not None and len(simple[1]) == len(args):
        texts, verbs = simple
        out = [texts[0]]
        for text, verb, arg in zip(texts[1:], verbs, args):
            out.append(_format(arg, verb, _PLAIN, 0))
            out.append(text)
        return _made("".join(out), "printf")
    return _made(_sprintf(fmt, args), "printf")


def _sprintf(fmt: str, args: tuple) -> str:
    charge(3 * fmt.count("%"))  # parsing flags, widths, verbs in Python: ~3 units a verb
    out: list[str] = []
    size = len(fmt)  # the format's own text, and each operand's as it is made (``_grown``)
    state = _PrintfState(len(args))
    end = len(fmt)
    i = 0
    while i < end:
        state.good = True
        j = fmt.find("%", i)
        if j < 0:
            out.append(fmt[i:])
            break
        out.append(fmt[i:j])
        i = j + 1
        f = _Flags()
        while i < end and fmt[i] in "#0+- ":
            c = fmt[i]
            if c == "#":
                f.sharp = True
            elif c == "0":
                f.zero = True
            elif c == "+":
                f.plus = True
            elif c == "-":
                f.minus = True
            else:
                f.space = True
            i += 1
        i, after_index = state.arg_number(fmt, i)
        if i < end and fmt[i] == "*":
            i += 1
            wid, ok = state.int_from_arg(args)
            if not ok:
                out.append("%!(BADWIDTH)")
                wid = None
            elif wid < 0:
                wid, f.minus = -wid, True
            f.wid = wid
            after_index = False
        else:
            f.wid, i = _parsenum(fmt, i, end)
            if after_index and f.wid is not None:
                state.good = False
        if i + 1 < end and fmt[i] == ".":
            i += 1
            if after_index:
                state.good = False
            i, after_index = state.arg_number(fmt, i)
            if i < end and fmt[i] == "*":
                i += 1
                prec, ok = state.int_from_arg(args)
                if ok and prec < 0:
                    prec, ok = None, False
                if not ok:
                    out.append("%!(BADPREC)")
                    prec = None
                f.prec = prec
                after_index = False
            else:
                f.prec, i = _parsenum(fmt, i, end)
                if f.prec is None:
                    f.prec = 0
        if not after_index:
            i, after_index = state.arg_number(fmt, i)
        if (f.wid or 0) > 4096 or (f.prec or 0) > 4096:  # Go allows 1e6: so do we, to a limit
            check_size(max(f.wid or 0, f.prec or 0), "a printf width")
        if i >= end:
            out.append("%!(NOVERB)")
            break
        verb = fmt[i]
        i += 1
        if f.minus:
            f.zero = False
        if verb == "%":
            out.append("%")
        elif not state.good:
            out.append(f"%!{verb}(BADINDEX)")
        elif state.argnum >= len(args):
            out.append(f"%!{verb}(MISSING)")
        else:
            if verb in "vw":
                verb = "v"
                f.sharp_v, f.sharp = f.sharp, False
                f.plus_v, f.plus = f.plus, False
            text = _format(args[state.argnum], verb, f, 0)
            out.append(text)
            size = _grown(size, text, "printf")
            state.argnum += 1
    if not state.reordered and state.argnum < len(args):
        extra = ", ".join(
            "<nil>" if a is None else f"{go_type(a)}={_format(a, 'v', _PLAIN, 0)}"
            for a in args[state.argnum :]
        )
        out.append(f"%!(EXTRA {extra})")
    return "".join(out)


class _PrintfState:
    __slots__ = ("argnum", "good", "numargs", "reordered")

    def __init__(self, numargs: int) -> None:
        self.argnum = 0
        self.numargs = numargs
        self.reordered = False
        self.good = True

    def arg_number(self, fmt: str, i: int) -> tuple[int, bool]:
        """An explicit argument index "[n]" at ``fmt[i]`` (print.go argNumber)."""
        if i >= len(fmt) or fmt[i] != "[":
            return i, False
        self.reordered = True
        index, width, ok = _parse_arg_number(fmt[i:])
        if ok and 0 <= index < self.numargs:
            self.argnum = index
            return i + width, True
        self.good = False
        return i + width, ok

    def int_from_arg(self, args: tuple) -> tuple[Any, bool]:
        if self.argnum >= len(args):
            return 0, False
        v = args[self.argnum]
        self.argnum += 1
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) <= 1_000_000:
            return int(v), True
        return 0, False


def _parse_arg_number(fmt: str) -> tuple[int, int, bool]:
    if len(fmt) < 3:
        return 0, 1, False
    for i in range(1, len(fmt)):
        if fmt[i] == "]":
            num, newi = _parsenum(fmt, 1, i)
            if num is None or newi != i:
                return 0, i + 1, False
            return num - 1, i + 1, True
    return 0, 1, False


def _parsenum(s: str, start: int, end: int) -> tuple[int | None, int]:
    i = start
    num = 0
    while i < end and "0" <= s[i] <= "9":
        if num > 1_000_000:  # Go's tooLarge, tested before each digit: up to 10,000,009
            return None, end
        num = num * 10 + ord(s[i]) - 48
        i += 1
    return (num, i) if i > start else (None, i)


# ----------------------------------------------------------------------------- encoding/json


class JSONError(Exception):
    pass


def _json_escapes() -> dict:
    table = {o: f"\\u{o:04x}" for o in range(0x20)}
    table.update({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"})
    table.update({ord('"'): '\\"', ord("\\"): "\\\\"})
    table.update({o: f"\\u{o:04x}" for o in (ord("<"), ord(">"), ord("&"), 0x2028, 0x2029)})
    table.update({o: "\\ufffd" for o in range(0xD800, 0xE000)})  # invalid UTF-8 in Go
    return table


_JSON_ESCAPES = _json_escapes()


def _json_string(s: str) -> str:
    """encoding/json string encoding, HTML-escaped (<, >, & as \\u003c ...)."""
    return '"' + s.translate(_JSON_ESCAPES) + '"'


def marshal(v: Any) -> str:
    """encoding/json.Marshal. Raises JSONError for values Go cannot encode.

    The fast way (``json_text``) writes the common values directly, strings through the
    json module's encoder, Go's HTML escaping applied to the whole text after. Anything it
    does not cover (an error, a float Python would write otherwise, keys that are not
    strings or not valid UTF-8) goes the exact way, value by value.
    """
    try:
        text = _json_text(v)
    except (_Unusual, TypeError, RecursionError):
        return _marshal_exact(v)
    # the walk (Python, ~250 ns an item: about one a comma) and the escapes (C, at most ~8 ns a
    # character): a unit per 4 items and per 64 characters (a unit per 16 characters ran a
    # 12 MB tool argument, Go's 40 ms, out of fuel: red team s8u F4)
    charge((len(text) >> 6) + (text.count(",") >> 2))
    if text.isascii():
        escapes = _ASCII_HTML_ESCAPES
    elif _SURROGATE.search(text):
        return _marshal_exact(v)  # invalid UTF-8: Go writes \ufffd (and sorts keys by bytes)
    else:
        escapes = _JSON_HTML_ESCAPES
    for ch, escape in escapes:
        if ch in text:
            text = text.replace(ch, escape)
    return text


class _Unusual(Exception):
    """A value the fast JSON path leaves to the exact one."""


#: A JSON string as Go writes it before its HTML escaping: only " \\ and control characters
#: escaped (\b \f \n \r \t short, \u00xx in lower case for the rest); non-ASCII as it is.
json_string = json.encoder.encode_basestring
_JSON_HTML_ESCAPES = tuple((ch, f"\\u{ord(ch):04x}") for ch in "<>&\u2028\u2029")
_ASCII_HTML_ESCAPES = _JSON_HTML_ESCAPES[:3]  # (ASCII text has no U+2028, U+2029)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_text(v: Any) -> str:
    """encoding/json's text of ``v`` before the HTML escaping, for the values it covers;
    raises _Unusual (or TypeError) for the others."""
    t = type(v)
    if t is str:
        return json_string(v)
    if v is None:
        return "null"
    if t is dict:  # (a plain dict: never a nil map)
        keys = sorted(v)  # strings sort by code point: their UTF-8 order (surrogates excluded)
        # json_string raises TypeError for a key that is no string
        return "{" + ",".join([json_string(k) + ":" + _json_text(v[k]) for k in keys]) + "}"
    if t is list:
        return "[" + ",".join([_json_text(e) for e in v]) + "]"
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return int.__repr__(v)
    if t is float:
        return _json_float(v)
    conv = _JSON_CONVERTERS.get(t)
    if conv is None:
        conv = _JSON_CONVERTERS[t] = _json_converter(t)
    return conv(v)


json_text = _json_text


def _json_float(f: float) -> str:
    """A float64 as Go writes it, where Python's repr agrees: integral ones below 2**53,
    others not below 1e-4 (repr's fixed notation); the rest the exact way."""
    a = abs(f)
    if a < 9007199254740992.0:
        if f == int(f):
            if f == 0 and math.copysign(1.0, f) < 0:
                raise _Unusual  # -0
            return int.__repr__(int(f))
        if a >= 1e-4:
            return float.__repr__(f)
    raise _Unusual


def _json_map(d: dict) -> str:
    if getattr(d, "nil", False):
        return "null"
    keys = sorted(d)  # strings sort by code point: their UTF-8 order (surrogates excluded)
    # json_string raises TypeError for a key that is no string
    return "{" + ",".join([json_string(k) + ":" + _json_text(d[k]) for k in keys]) + "}"


def _json_list(s: Any) -> str:
    if getattr(s, "nil", False):
        return "null"
    return "[" + ",".join([_json_text(e) for e in s]) + "]"


def _json_unusual(v: Any) -> Any:
    raise _Unusual


_JSON_CONVERTERS: dict = {}


def _json_converter(t: type) -> Any:
    """The fast path's text of values of type ``t`` (checked in _marshal_exact's order)."""
    hook = getattr(t, "go_json_text", None)  # the type's own
    if hook is not None:
        return hook
    if hasattr(t, "MarshalJSON"):
        return _json_unusual
    if issubclass(t, bool):
        return lambda v: "true" if v else "false"
    if issubclass(t, int):
        return lambda v: int.__repr__(int(v))
    if issubclass(t, float):
        return lambda v: _json_float(float(v))
    if issubclass(t, str):
        return json_string
    if issubclass(t, GoNil):
        return lambda v: "null"
    if issubclass(t, GoStruct):
        return _json_struct_converter(t)
    if issubclass(t, dict):
        return _json_map
    if issubclass(t, list):
        return _json_list
    return _json_unusual


def _json_struct_converter(t: type) -> Any:
    # (attribute, '"key":', omitempty: 0 never, 1 when nil (an interface), 2 when empty)
    fields = tuple(
        (
            name,
            json_string(json_name or name) + ":",
            (1 if typ == "interface {}" else 2) if omitempty else 0,
        )
        for name, typ, json_name, omitempty in t.go_fields
    )

    def convert(v: Any) -> str:
        parts = []
        for name, key, omit in fields:
            value = getattr(v, name)
            if omit:
                if omit == 1:
                    if value is None:
                        continue
                elif not value and not isinstance(value, GoStruct):
                    continue  # isEmptyValue
            parts.append(key + _json_text(value))
        return "{" + ",".join(parts) + "}"

    return convert


def _marshal_exact(v: Any) -> str:
    """encoding/json.Marshal, value by value (every case; ``marshal`` tries a faster way first)."""
    t = type(v)  # exact plain types first (no MarshalJSON, no nil flag): the common case
    if t is str:
        return '"' + v.translate(_JSON_ESCAPES) + '"'
    if t is dict:
        return (
            "{"
            + ",".join(_json_string(str(k)) + ":" + _marshal_exact(v[k]) for k in _sorted_keys(v))
            + "}"
        )
    if t is list:
        return "[" + ",".join([_marshal_exact(e) for e in v]) + "]"
    if t is int:
        return str(v)
    if v is None:
        return "null"
    if hasattr(type(v), "MarshalJSON"):
        return compact(v.MarshalJSON())
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        text = format_float_json(v)
        if text is None:
            raise JSONError(f"json: unsupported value: {format_float(v, 'g', -1)}")
        return text
    if isinstance(v, complex):
        raise JSONError("json: unsupported type: complex128")
    if isinstance(v, str):
        return _json_string(v)
    if isinstance(v, GoNil):
        return "null"
    if isinstance(v, (bytes, bytearray)):
        if getattr(v, "nil", False):  # a nil []byte (a JSON null image)
            return "null"
        import base64

        return '"' + base64.b64encode(bytes(v)).decode("ascii") + '"'
    if isinstance(v, GoStruct):
        parts = []
        for name, typ, json_name, omitempty in v.go_fields:
            value = getattr(v, name)
            if omitempty and not _json_nonempty(value, typ):
                continue
            parts.append(_json_string(json_name or name) + ":" + _marshal_exact(value))
        return "{" + ",".join(parts) + "}"
    if isinstance(v, dict):
        if getattr(v, "nil", False):
            return "null"
        keys = _sorted_keys(v)
        return "{" + ",".join(_json_string(str(k)) + ":" + _marshal_exact(v[k]) for k in keys) + "}"
    if isinstance(v, (list, tuple)):
        if getattr(v, "nil", False):
            return "null"
        return "[" + ",".join(_marshal_exact(e) for e in v) + "]"
    raise JSONError(f"json: unsupported type: {go_type(v)}")


def _json_nonempty(v: Any, typ: str = "") -> bool:
    """isEmptyValue's negation (omitempty): false, 0, "", nil, empty slice/map are empty.
    A field of interface type is empty only when the interface itself is nil."""
    if typ == "interface {}":
        return v is not None
    if isinstance(v, GoStruct):
        return True
    return bool(v)


def compact(text: str) -> str:
    """json.Compact with HTML escaping (what Marshal does to MarshalJSON output)."""
    out = []
    in_string = False
    escape = False
    for ch in text:
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            if ch in "<>&" or ch in "\u2028\u2029":
                out.append(f"\\u{ord(ch):04x}")
                continue
            out.append(ch)
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch not in " \t\r\n":
            out.append(ch)
    return "".join(out)
