"""Python expression text for the emitter, written directly, as ``unparse`` writes ``ast`` nodes.

The emitter used to build an ``ast`` tree per expression and print it with ``unparse.unparse``
(half its time). It now writes the text itself, from *pieces*: ``(text, own)`` pairs, the
text of an expression as it reads unparenthesised and its own precedence (``_Precedence``'s
numbers: :data:`NAMED` ... :data:`ATOM`). A piece is parenthesised where it is used, by
:func:`w`, exactly when CPython's unparser parenthesises that node there: the precedence its
parent sets for it is higher than its own (``require_parens``). Each function below is one
``ast`` node's ``visit_*`` (CPython 3.11's ``ast._Unparser``): what precedence it gives each
child, and what it writes, so the text is the same as ``unparse`` of the same tree, quirks
included: a child whose parent sets no precedence (a call's arguments, a list's items, a
subscript's index) is read at ``TEST``; a ``BoolOp``'s values are read at a precedence one
higher each (``a and b and (c == d)``); a ``NamedExpr``'s value at ``ATOM``
(``(x := (a + b))``). A node the unparser reached more than once (the emitter put one
``ast`` object in two places) was read at the precedence set last before each visit: the
emitter passes such a piece through :func:`at` with that precedence.

Own precedences above every context's (:data:`ATOM` and up) never take parentheses:
:data:`INT` marks an int constant (an attribute of it reads ``1 .real``), :data:`FSTR` an
f-string. A non-empty tuple's piece (own :data:`TUPLE`) is its items without parentheses
(a subscript's index writes them so: ``x[a, b]``).

String constants are black's quotes (``unparse.black_quoted``), or ``repr``'s when the
unparser hook is unavailable (``unparse.UNPARSER`` None), as ``unparse`` writes them.
F-strings (:func:`fstring`) follow 3.11's unparser too, checked at import against the real
one on probes (:func:`_fstring_fast`); where it differs (another Python), :data:`FSTRING_FAST`
is False and the emitter builds the f-string's ``ast`` (its expressions parsed from their
text) and prints it with ``unparse`` instead.

Checked when it was written: the emitter's module text (and statement spans) equal the
previous emitter's (``ast`` + ``unparse``) over both corpora bounded and unbounded, every
compile the test suite makes, and 36,000 random IR modules of every expression kind.
"""

from __future__ import annotations

import ast
import sys
from typing import Any, Callable

from . import unparse as _unparse

#: ``ast._Precedence`` (CPython 3.9+), as plain ints
NAMED, TUPLE, YIELD, TEST, OR, AND, NOT, CMP, EXPR = 1, 2, 3, 4, 5, 6, 7, 8, 9
BOR, BXOR, BAND, SHIFT, ARITH, TERM, FACTOR, POWER, AWAIT, PATOM = 9, 10, 11, 12, 13, 14, 15, 16, 17, 18
#: own precedences of pieces that are never parenthesised (above every context's)
ATOM, INT, FSTR = 99, 100, 101

Piece = tuple  # (text, own precedence)


def w(piece: Piece, prec: int) -> str:
    """A piece's text where its parent reads it at precedence ``prec``."""
    return "(" + piece[0] + ")" if prec > piece[1] else piece[0]


def at(piece: Piece, prec: int) -> Piece:
    """``piece`` as it reads at ``prec`` whatever its parent sets (a node shared by two
    parents is read at the precedence set last: see the module's docstring)."""
    return (w(piece, prec), ATOM)


# ---------------------------------------------------------------------------- constants

_INFSTR = "1e" + repr(sys.float_info.max_10_exp + 1)


def quote_str(value: str) -> str:
    """A ``str`` literal as ``unparse`` writes it (black's quotes when the hook is there)."""
    if _unparse.UNPARSER is None:
        return repr(value)
    return _unparse.black_quoted(value)


def const(value: Any, quote: Callable[[str], str] = quote_str) -> Piece:
    """``emit.const_node(value)``'s text (``quote``: how a ``str`` is written)."""
    kind = type(value)
    if kind is str:
        return (quote(value), ATOM)
    if kind is int or kind is bool:
        return (repr(value), INT)
    if value is None:
        return ("None", ATOM)
    if kind is tuple:
        return tuple_([const(v, quote) for v in value])
    if kind is list:
        return ("[" + ", ".join([w(const(v, quote), TEST) for v in value]) + "]", ATOM)
    if kind is dict:
        items = [
            w(const(k, quote), TEST) + ": " + w(const(v, quote), TEST) for k, v in value.items()
        ]
        return ("{" + ", ".join(items) + "}", ATOM)
    if kind is float or kind is complex:
        return (repr(value).replace("inf", _INFSTR).replace("nan", f"({_INFSTR}-{_INFSTR})"), ATOM)
    # anything else (bytes, Ellipsis, a subclass of str or int): the unparser's own text
    if quote is not quote_str:  # (in an f-string's expression: ``fstring_quote``'s mode)
        text = _unparse.unparse_in_fstring(ast.Constant(value))
    else:
        text = _unparse.unparse(ast.Constant(value))
    return (text, INT if isinstance(value, int) else ATOM)


# ---------------------------------------------------------------------------- nodes


def name(ident: str) -> Piece:
    return (ident, ATOM)


def call(func: Piece, args: list, keywords: list = ()) -> Piece:  # type: ignore[assignment]
    """``func(args..., keywords...)``; ``keywords``: texts (:func:`keyword`)."""
    parts = [w(a, TEST) for a in args]
    if keywords:
        parts.extend(keywords)
    return (w(func, PATOM) + "(" + ", ".join(parts) + ")", ATOM)


def call_name(func: str, args: list) -> Piece:
    """``call(name(func), args)``."""
    return (func + "(" + ", ".join([w(a, TEST) for a in args]) + ")", ATOM)


def keyword(arg: Any, value: Piece) -> str:
    """A keyword argument's text (``arg`` None: ``**value``)."""
    return ("**" if arg is None else arg + "=") + w(value, TEST)


def attribute(value: Piece, attr: str) -> Piece:
    if value[1] == INT:  # ``1 .real``: ``1.real`` would be a syntax error
        return (value[0] + " ." + attr, ATOM)
    return (w(value, PATOM) + "." + attr, ATOM)


def subscript(value: Piece, index: Piece, index_prec: int = TEST) -> Piece:
    """``value[index]``: a non-empty tuple's items unparenthesised; any other index at
    ``index_prec`` (the subscript sets none: ``TEST``, or what a parent set last)."""
    inner = index[0] if index[1] == TUPLE else w(index, index_prec)
    return (w(value, PATOM) + "[" + inner + "]", ATOM)


def named(target: str, value: Piece) -> Piece:
    return (target + " := " + w(value, PATOM), NAMED)


def ifexp(test: Piece, body: Piece, orelse: Piece) -> Piece:
    return (w(body, OR) + " if " + w(test, OR) + " else " + w(orelse, TEST), TEST)


def boolop(op: str, values: list) -> Piece:
    """``and`` / ``or``: each value read one precedence higher than the one before."""
    own = AND if op == "and" else OR
    prec = own
    texts = []
    for value in values:
        if prec < PATOM:
            prec += 1
        texts.append(w(value, prec))
    return ((" " + op + " ").join(texts), own)


def compare(left: Piece, ops: list, comparators: list) -> Piece:
    text = w(left, EXPR)
    for op, value in zip(ops, comparators):
        text += " " + op + " " + w(value, EXPR)
    return (text, CMP)


#: each binary operator's precedence
BINOP_PREC = {"+": ARITH, "-": ARITH, "*": TERM, "/": TERM, "//": TERM, "%": TERM, "**": POWER, "&": BAND}


def binop(left: Piece, op: str, right: Piece) -> Piece:
    prec = BINOP_PREC[op]
    if op == "**":  # right-associative
        return (w(left, prec + 1) + " ** " + w(right, prec), prec)
    return (w(left, prec) + " " + op + " " + w(right, prec + 1), prec)


def unary(op: str, operand: Piece) -> Piece:
    """``-x`` / ``+x`` (no space) or ``not x``."""
    if op == "not":
        return ("not " + w(operand, NOT), NOT)
    return (op + w(operand, FACTOR), FACTOR)


def tuple_(elts: list) -> Piece:
    if not elts:
        return ("()", ATOM)
    if len(elts) == 1:
        return (w(elts[0], TEST) + ",", TUPLE)
    return (", ".join([w(e, TEST) for e in elts]), TUPLE)


def list_(elts: list) -> Piece:
    return ("[" + ", ".join([w(e, TEST) for e in elts]) + "]", ATOM)


def dict_(keys: list, values: list) -> Piece:
    """``{k: v, ...}``; a key None: ``**value`` (read at ``EXPR``)."""
    items = [
        "**" + w(v, EXPR) if k is None else w(k, TEST) + ": " + w(v, TEST)
        for k, v in zip(keys, values)
    ]
    return ("{" + ", ".join(items) + "}", ATOM)


def starred(value: Piece) -> Piece:
    return ("*" + w(value, EXPR), ATOM)


def generator(elt: Piece, comprehensions: list) -> Piece:
    """``(elt for ...)``; ``comprehensions``: texts (:func:`comprehension`)."""
    return ("(" + w(elt, TEST) + "".join(comprehensions) + ")", ATOM)


def comprehension(target: Piece, iterable: Piece, ifs: list = ()) -> str:  # type: ignore[assignment]
    text = " for " + w(target, TUPLE) + " in " + w(iterable, OR)
    for test in ifs:
        text += " if " + w(test, OR)
    return text


# ---------------------------------------------------------------------------- f-strings

_MULTI_QUOTES = ('"""', "'''")
_ALL_QUOTES = ("'", '"', '"""', "'''")


def _str_literal_helper(
    string: str, *, quote_types: Any = _ALL_QUOTES, escape_special_whitespace: bool = False
) -> tuple:
    """CPython 3.11's ``_Unparser._str_literal_helper``: (the literal's body, its possible
    quotes), minimising escapes."""

    def escape_char(c: str) -> str:
        if not escape_special_whitespace and c in "\n\t":
            return c
        if c == "\\" or not c.isprintable():
            return c.encode("unicode_escape").decode("ascii")
        return c

    escaped_string = "".join(map(escape_char, string))
    possible_quotes = quote_types
    if "\n" in escaped_string:
        possible_quotes = [q for q in possible_quotes if q in _MULTI_QUOTES]
    possible_quotes = [q for q in possible_quotes if q not in escaped_string]
    if not possible_quotes:
        string = repr(string)
        quote = next((q for q in quote_types if string[0] in q), string[0])
        return string[1:-1], [quote]
    if escaped_string:
        possible_quotes.sort(key=lambda q: q[0] == escaped_string[-1])
        if possible_quotes[0][0] == escaped_string[-1]:
            assert len(possible_quotes[0]) == 3
            escaped_string = escaped_string[:-1] + "\\" + escaped_string[-1]
    return escaped_string, possible_quotes


def fstring_quote(value: str) -> str:
    """A ``str`` literal inside an f-string's expression (3.11's ``_avoid_backslashes``)."""
    string, quote_types = _str_literal_helper(value)
    return quote_types[0] + string + quote_types[0]


#: the text of an f-string the unparser refuses (a backslash in an expression): the unparser
#: raised ``ValueError`` when it wrote the f-string, so the emitter raises it when the text
#: holds this (a NUL, which no written text can hold: ``Emitter.module``), not for a piece
#: it made and dropped (an unused operand of an invalid IR node)
REFUSED = "\x00"


def fstring_value(piece: Piece) -> str:
    """An f-string's ``{expression}`` part; ``piece`` written with :func:`fstring_quote`."""
    expr = w(piece, OR)
    if "\\" in expr:
        return REFUSED  # "Unable to avoid backslash in f-string expression part"
    return "{ " + expr + "}" if expr.startswith("{") else "{" + expr + "}"


def fstring(parts: list, inner: bool = False) -> Piece:
    """``f"..."`` of ``parts``: ``(text, constant)``, a constant's text the string itself, an
    expression's its :func:`fstring_value`; ``inner``: the f-string is itself in an
    f-string's expression (3.11 then quotes it avoiding backslashes)."""
    if any(not c and REFUSED in t for t, c in parts):
        return (REFUSED, FSTR)
    written = [(t.replace("{", "{{").replace("}", "}}") if c else t, c) for t, c in parts]
    if inner:
        string, quote_types = _str_literal_helper("".join([t for t, _ in written]))
        return ("f" + quote_types[0] + string + quote_types[0], FSTR)
    new_parts = []
    quote_types: Any = list(_ALL_QUOTES)
    fallback_to_repr = False
    for value, is_constant in written:
        value, new_quote_types = _str_literal_helper(
            value, quote_types=quote_types, escape_special_whitespace=is_constant
        )
        new_parts.append(value)
        if set(new_quote_types).isdisjoint(quote_types):
            fallback_to_repr = True
            break
        quote_types = new_quote_types
    if fallback_to_repr:
        quote_types = ["'''"]
        new_parts = [repr('"' + value)[2:-1] for value, _ in written]
    return ("f" + quote_types[0] + "".join(new_parts) + quote_types[0], FSTR)


def _fstring_probe(values: list) -> tuple:
    """(the real unparser's text of an f-string of ``values``, :func:`fstring`'s)."""
    node = ast.JoinedStr(
        [
            ast.Constant(v) if isinstance(v, str) else ast.FormattedValue(v, -1, None)
            for v in values
        ]
    )
    real = _unparse.unparse(node)
    parts = [
        (v, True) if isinstance(v, str) else (fstring_value(_probe_piece(v)), False)
        for v in values
    ]
    return real, fstring(parts)[0]


def _probe_piece(node: Any) -> Piece:
    """The pieces of the probes' expressions (names, strings, calls, f-strings)."""
    if isinstance(node, ast.Name):
        return name(node.id)
    if isinstance(node, ast.Constant):
        return (fstring_quote(node.value), ATOM)
    if isinstance(node, ast.Call):
        return call(_probe_piece(node.func), [_probe_piece(a) for a in node.args])
    if isinstance(node, ast.IfExp):
        return ifexp(_probe_piece(node.test), _probe_piece(node.body), _probe_piece(node.orelse))
    if isinstance(node, ast.JoinedStr):
        return fstring(
            [
                (v.value, True) if isinstance(v, ast.Constant) else (fstring_value(_probe_piece(v.value)), False)
                for v in node.values
            ],
            inner=True,
        )
    raise TypeError(node)


def _fstring_fast() -> bool:
    """:func:`fstring` writes what this Python's unparser writes (checked on probes)."""
    if _unparse.UNPARSER is None:
        return False
    n = ast.Name
    probes = [
        ["a", n("x"), "b\n{c}'\"", n("y")],
        [n("x"), "\t"],
        ["'''\"\"\"", n("x"), "\\"],
        [ast.Call(n("f"), [ast.Constant("it's \"q\"")], [])],
        [ast.Call(n("f"), [ast.Constant("a\nb")], []), "x"],
        [ast.IfExp(n("t"), ast.Constant("é\t"), n("z")), "'\u2028"],
        ["", ast.JoinedStr([ast.Constant("i'n"), ast.FormattedValue(n("k"), -1, None)]), "\"'"],
    ]
    try:
        return all(real == ours for real, ours in map(_fstring_probe, probes))
    except (AttributeError, TypeError, ValueError, AssertionError):
        return False


#: :func:`fstring` writes f-strings as ``unparse`` does on this Python
FSTRING_FAST: bool = _fstring_fast()
