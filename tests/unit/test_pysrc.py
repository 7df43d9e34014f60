"""compiler/pysrc.py: its pieces write what ``unparse`` writes of the same ``ast`` trees
(random trees of every node the emitter writes, string constants that need escapes, the
unparser's quirks: BoolOp levels, NamedExpr values, int attributes, tuple subscripts)."""

from __future__ import annotations

import ast
import random

import pytest

from tmpl2py.compiler import pysrc
from tmpl2py.compiler.unparse import unparse

STRS = ["", "a", "it's", '"', "'\"", "a\nb", "\\", "\u2028", "é", "'''", "\x00", "{x}", "\t"]


def _tree(r: random.Random, depth: int, fstring: bool = False) -> tuple:
    """(an ast expression, its piece), built together."""
    quote = pysrc.fstring_quote if fstring else pysrc.quote_str
    if depth <= 0 or r.random() < 0.2:
        k = r.randrange(4)
        if k == 0:
            name = r.choice(["a", "b", "_x1"])
            return ast.Name(name, ast.Load()), pysrc.name(name)
        value = r.choice([r.choice(STRS), 0, 7, -3, True, None, 1.5, float("inf")])
        return ast.Constant(value), pysrc.const(value, quote)
    sub = lambda: _tree(r, depth - 1, fstring)  # noqa: E731
    k = r.randrange(16)
    if k == 0:
        (a, pa), (b, pb) = sub(), sub()
        op = r.choice(list(pysrc.BINOP_PREC))
        ops = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv,
               "%": ast.Mod, "**": ast.Pow, "&": ast.BitAnd}
        return ast.BinOp(a, ops[op](), b), pysrc.binop(pa, op, pb)
    if k == 1:
        op = r.choice(["-", "+", "not"])
        a, pa = sub()
        node = {"-": ast.USub, "+": ast.UAdd, "not": ast.Not}[op]()
        return ast.UnaryOp(node, a), pysrc.unary(op, pa)
    if k == 2:
        pairs = [sub() for _ in range(r.randrange(2, 5))]
        op = r.choice(["and", "or"])
        return (ast.BoolOp(ast.And() if op == "and" else ast.Or(), [a for a, _ in pairs]),
                pysrc.boolop(op, [p for _, p in pairs]))
    if k == 3:
        (a, pa), *rest = [sub() for _ in range(r.randrange(2, 4))]
        names = [r.choice(["==", "<", "in", "not in", "is", "is not"]) for _ in rest]
        cls = {"==": ast.Eq, "<": ast.Lt, "in": ast.In, "not in": ast.NotIn, "is": ast.Is, "is not": ast.IsNot}
        return (ast.Compare(a, [cls[n]() for n in names], [b for b, _ in rest]),
                pysrc.compare(pa, names, [p for _, p in rest]))
    if k == 4:
        (t, pt), (b, pb), (o, po) = sub(), sub(), sub()
        return ast.IfExp(t, b, o), pysrc.ifexp(pt, pb, po)
    if k == 5:
        a, pa = sub()
        return ast.NamedExpr(ast.Name("_n", ast.Store()), a), pysrc.named("_n", pa)
    if k == 6:
        items = [sub() for _ in range(r.randrange(0, 4))]
        return ast.Tuple([a for a, _ in items], ast.Load()), pysrc.tuple_([p for _, p in items])
    if k == 7:
        items = [sub() for _ in range(r.randrange(0, 4))]
        return ast.List([a for a, _ in items], ast.Load()), pysrc.list_([p for _, p in items])
    if k == 8:
        items = [(sub(), sub()) for _ in range(r.randrange(0, 3))]
        return (ast.Dict([k for (k, _), _ in items], [v for _, (v, _) in items]),
                pysrc.dict_([p for (_, p), _ in items], [p for _, (_, p) in items]))
    if k == 9:
        (f, pf), *args = [sub() for _ in range(r.randrange(1, 4))]
        return ast.Call(f, [a for a, _ in args], []), pysrc.call(pf, [p for _, p in args])
    if k == 10:
        a, pa = sub()
        return ast.Attribute(a, "x", ast.Load()), pysrc.attribute(pa, "x")
    if k == 11:
        (a, pa), (i, pi) = sub(), sub()
        return ast.Subscript(a, i, ast.Load()), pysrc.subscript(pa, pi)
    if k == 12:
        a, pa = sub()
        return ast.Starred(a, ast.Load()), pysrc.starred(pa)
    if k == 13:
        (a, pa), (b, pb) = sub(), sub()
        node = ast.Call(ast.Name("f", ast.Load()), [], [ast.keyword("k", a), ast.keyword(None, b)])
        return node, pysrc.call(pysrc.name("f"), [], [pysrc.keyword("k", pa), pysrc.keyword(None, pb)])
    if k == 14:
        (it, pit), (test, ptest) = sub(), sub()
        node = ast.GeneratorExp(ast.Name("i", ast.Load()), [ast.comprehension(
            ast.Tuple([ast.Name("i", ast.Store()), ast.Name("j", ast.Store())], ast.Store()), it, [test], 0)])
        target = pysrc.tuple_([pysrc.name("i"), pysrc.name("j")])
        return node, pysrc.generator(pysrc.name("i"), [pysrc.comprehension(target, pit, [ptest])])
    parts = [r.choice([lambda: r.choice(STRS), lambda: _tree(r, depth - 1, True)])() for _ in range(r.randrange(0, 4))]
    node = ast.JoinedStr([ast.Constant(p) if isinstance(p, str) else ast.FormattedValue(p[0], -1, None) for p in parts])
    piece = pysrc.fstring(
        [(p, True) if isinstance(p, str) else (pysrc.fstring_value(p[1]), False) for p in parts], inner=fstring
    )
    return node, piece


@pytest.mark.skipif(not pysrc.FSTRING_FAST, reason="this Python's unparser writes f-strings otherwise")
@pytest.mark.parametrize("seed", range(20))
def test_pieces_write_what_unparse_writes(seed: int) -> None:
    r = random.Random(seed)
    for _ in range(500):
        node, piece = _tree(r, 4)
        try:
            expected = unparse(node)
        except ValueError:  # the unparser refuses (a backslash in an f-string's expression)
            assert pysrc.REFUSED in piece[0]
            continue
        assert pysrc.w(piece, pysrc.TEST) == expected
