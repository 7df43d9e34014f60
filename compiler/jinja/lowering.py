"""Lowering of the Jinja parse tree to IR (a Lark Transformer: one method per rule).
Long because it is one Lark Transformer with a method per grammar rule: the rule table reads
as one piece, next to grammar.lark.

Jinja semantics are chosen here: ``x.y`` becomes the sandboxed ``getattr_`` helper,
calls go through the sandbox's ``call``, ``{{ x }}`` prints with ``str``, filters and
tests become calls of their runtime functions. Names stay unresolved (``ident=""``);
``compiler.passes.scope`` applies jinja2's scoping rules afterwards.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import keyword
import operator
from typing import Any, Iterable, Optional

from lark import Token, Transformer, v_args

from .. import ir
from ..errors import CompileError
from ..lark_loops import returns_lone_child
from .analysis import find_undeclared, uses_name
from .autoescape import apply_autoescape
from .library import FILTER_FUNCS, TEST_FUNCS
from .statements import (
    CONSTANT_NAMES,
    BlockLowering,
    assignable,
    assignable_name,
    check_extends,
    generator_macros,
)

H = ir.Helper

def _span(tok: Any) -> ir.Span:
    if isinstance(tok, Token):
        return (tok.line or 0, tok.column or 0)
    return ir.NOSPAN


def _folded(node: Any) -> bool:
    """``node`` is a value jinja2's optimizer computes at compile time: a constant (a signed
    number too), or a list, tuple or dict literal of such."""
    return ir.literal_of(node, _signed_constant)


def _signed_constant(node: Any) -> bool:
    if isinstance(node, ir.UnaryOp) and node.op in ("-", "+"):
        node = node.operand
    return isinstance(node, ir.Const)


def _namespace_name(ns: Token) -> ir.Name:
    """The namespace of a ``{% set ns.attr ... %}`` target: a constant's name there
    (``none.b``, ``True.x``) is jinja2's compile-time ``can't assign to 'const'``, as the
    constant itself is as a target."""
    if str(ns) in CONSTANT_NAMES:
        raise CompileError("syntax", "can't assign to 'const'", *_span(ns))
    return ir.Name(str(ns), span=_span(ns))


def _nodes(args: Iterable[Any]) -> list:
    return [a for a in args if not isinstance(a, Token)]


def to_str(expr: ir.Expr) -> ir.Expr:
    return H("jinja.to_str", (expr,))


def apply_filter(value: ir.Expr, call: tuple, span: ir.Span) -> ir.Expr:
    name, args, kwargs, span = call
    func = FILTER_FUNCS.get(name)
    if func is None:  # jinja2 evaluates the operands, then fails on the missing filter
        # the second operand, jinja2's name for its stand-in function, is filled in by finish_calls
        return H("jinja.no_filter", (ir.Const(name), ir.Const(""), value, *args), kwargs, span=span)
    return H(func, (value, *args), kwargs, span=span)


@v_args(inline=True)
class Lowering(BlockLowering):
    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source
        self._ids = itertools.count(1)
        self._noelse: dict = {}  # the last link of each "a if b if c" chain, by id
        self.filter_names: set = set()  # every filter and test the template names (jinja2 numbers
        self.test_names: set = set()  # its stand-ins for unknown ones by their sorted order)
        self._spread = False  # a call has a ``**mapping`` operand (finish_calls checks it)

    # ------------------------------------------------------------------ template level

    def start(self, body: tuple) -> tuple:
        # each step only where the template has what it looks for (else it returns the body
        # as it is, after a walk of the whole tree)
        if self.has_extends:
            body = check_extends(body)
        body = self.with_blocks(body)
        if self.has_autoescape:
            body = apply_autoescape(body)
        if self.has_include_without_context:
            body = generator_macros(body)
        if self._finish_calls_needed():
            return finish_calls(body, self.filter_names, self.test_names)
        return body

    def _finish_calls_needed(self) -> bool:
        """Whether ``finish_calls`` can change or refuse anything: only an unknown filter or
        test, a ``**mapping`` operand or a keyword named ``_loop_vars`` (in the text) can."""
        return (
            self._spread
            or "_loop_vars" in self.source
            or any(n not in FILTER_FUNCS for n in self.filter_names)
            or any(n not in TEST_FUNCS for n in self.test_names)
        )

    def body(self, *items: Any) -> tuple:
        out: list = []
        for item in items:
            if isinstance(item, list):  # a call block lowers to two statements
                out.extend(item)
                continue
            if isinstance(item, Token):
                if item.type == "TEXT":
                    if item.value:
                        out.append(ir.Text(item.value, span=_span(item)))
                continue
            out.append(item)
        return tuple(out)

    def output(self, start: Token, expr: ir.Expr, _end: Token) -> ir.Stmt:
        if (
            isinstance(expr, ir.Helper)
            and expr.name == "jinja.subscript"
            and _folded(expr.args[0])
            and all(_folded(a) for a in expr.args[1].args)
        ):
            # a print of a constant sliced by constants is printed as jinja2's compiler
            # evaluates it (``as_const``: through the sandbox's getitem, so ``{{ 5[1:2] }}`` is
            # an undefined value, empty); anywhere else the slice is a plain subscript
            expr = dataclasses.replace(expr, name="jinja.getitem")
        return ir.Output(to_str(expr), span=_span(start))

    def if_stmt(self, tag: Token, test: ir.Expr, _end: Token, body: tuple, *rest: Any) -> ir.Stmt:
        clauses = _nodes(rest)
        orelse: tuple = ()
        for clause in reversed(clauses):
            if clause[0] == "else":
                orelse = clause[1]
            else:
                orelse = (ir.If(clause[1], clause[2], orelse, span=clause[3]),)
        return ir.If(test, body, orelse, span=_span(tag))

    def elif_clause(self, tag: Token, test: ir.Expr, _end: Token, body: tuple) -> tuple:
        return ("elif", test, body, _span(tag))

    def else_clause(self, tag: Token, _end: Token, body: tuple) -> tuple:
        return ("else", body)

    # ------------------------------------------------------------------ for

    def for_stmt(self, tag: Token, target: Any, *rest: Any) -> ir.Stmt:
        assignable(target)
        parts = _nodes(rest)
        recursive = any(isinstance(t, Token) and t.type == "RECURSIVE" for t in rest)
        iterable = parts.pop(0)
        test = None
        if parts and isinstance(parts[0], list):  # for_test
            test = parts.pop(0)[0]
        body = parts.pop(0)
        else_ = parts.pop(0)[1] if parts else ()
        # a name ``loop`` in the loop is made of a token "loop" in its text: no such text, no
        # walk of the loop's tree (outer loops walk their inner loops again)
        end = rest[-1].end_pos  # the end of ``{% endfor %}``
        loop = ""
        if recursive or (
            self.source.find("loop", tag.start_pos, end) >= 0
            and uses_name((iterable, test, body, else_), "loop")
        ):
            loop = "loop"
        return ir.For(
            target,
            iterable,
            body,
            else_,
            test,
            loop,
            "jinja.loop_context",
            recursive,
            else_counts_completed=True,
            span=_span(tag),
        )

    @returns_lone_child
    def for_target(self, target: Any) -> Any:
        return target

    def target_list(self, *items: Any) -> ir.Target:
        return ir.Target(tuple(_nodes(items)))

    def assign_name(self, name: Token) -> ir.Name:
        return ir.Name(str(name), span=_span(name))

    @returns_lone_child
    def for_iter(self, expr: ir.Expr) -> ir.Expr:
        return expr

    def tuple_iter(self, *items: Any) -> ir.Expr:
        return ir.TupleLit(tuple(_nodes(items)))

    def for_test(self, _if: Token, expr: ir.Expr) -> list:
        return [expr]

    # ------------------------------------------------------------------ set

    def set_stmt(self, tag: Token, target: Any, value: ir.Expr, _end: Token) -> Any:
        if isinstance(target, tuple):  # namespace attribute: jinja2 checks ns before the value
            ns, attr = target
            value = _nested_parts(value, ns.name)
            store = ir.ExprStmt(H("jinja.ns_set", (ns, ir.Const(attr), value)), span=_span(tag))
            if isinstance(value, (ir.Const, ir.Name)):  # cannot fail: ns_set's own check suffices
                return [store]
            return [ir.ExprStmt(H("jinja.ns_check", (ns,)), span=_span(tag)), store]
        return ir.Assign(assignable(target), value, span=_span(tag))

    @returns_lone_child
    def set_target(self, target: Any) -> Any:
        return target

    def ns_target(self, ns: Token, attr: Token) -> tuple:
        return (_namespace_name(ns), str(attr))

    def set_block(self, tag: Token, target: Any, *rest: Any) -> ir.Stmt:
        """``{% set x %}...{% endset %}``; a tuple target unpacks the block's text (jinja2's
        ``AssignBlock`` takes any assignment target: ``{% set a, b %}xy{% endset %}``)."""
        parts = _nodes(rest)
        filters = parts.pop(0) if len(parts) == 2 else []
        value: ir.Expr = ir.Capture(parts[0], span=_span(tag))
        for call in filters:
            value = apply_filter(value, call, _span(tag))
        return ir.Assign(assignable(target), value, span=_span(tag))

    def set_ns_block(self, tag: Token, ns: Token, attr: Token, *rest: Any) -> ir.Stmt:
        """``{% set ns.attr %}...{% endset %}``: jinja2 stores the block's text with
        ``ns[attr] = value``, without the namespace check of ``{% set ns.attr = v %}``."""
        parts = _nodes(rest)
        filters = parts.pop(0) if len(parts) == 2 else []
        value: ir.Expr = ir.Capture(parts[0], span=_span(tag))
        for call in filters:
            value = apply_filter(value, call, _span(tag))
        target = _namespace_name(ns)
        return ir.ExprStmt(H("jinja.ns_store", (target, ir.Const(str(attr)), value)), span=_span(tag))

    def filter_chain(self, *calls: Any) -> list:
        return list(calls)

    # ------------------------------------------------------------------ macros, call, filter blocks

    def macro_stmt(self, tag: Token, name: Token, *rest: Any) -> ir.Stmt:
        parts = _nodes(rest)
        params = parts.pop(0) if len(parts) == 2 else []
        body = parts[0]
        return self._funcdef("", assignable_name(name), params, body, _span(tag), (tag, rest[-1]))

    def _funcdef(
        self, ident: str, name: str, params: list, body: tuple, span: ir.Span, ends: tuple
    ) -> ir.FuncDef:
        """A macro, or the caller macro of a call block (``ident`` set), which jinja2 leaves
        unnamed (``<Macro anonymous>``, "macro None takes ..."); ``ends``: the first and the
        last token of its statement."""
        names = tuple(p.name.name for p in params)
        implicit = ("caller", "kwargs", "varargs")
        # a name the body reads is made of a token of the statement's text (the names made
        # here are parameters, which are not reads): none of the three there, no walk
        start, end = ends[0].start_pos, ends[1].end_pos
        undeclared: set = set()
        if any(self.source.find(n, start, end) >= 0 for n in implicit):
            undeclared = find_undeclared(body, implicit)
        flags = [n in undeclared and n not in names for n in ("caller", "kwargs", "varargs")]
        if "caller" in names and "caller" in undeclared:
            if next(p for p in params if p.name.name == "caller").default is None:
                raise CompileError(
                    "syntax",
                    'When defining macros or call blocks the special "caller" argument must be'
                    " omitted or be given a default.",
                    *span,
                )
        extra = tuple(
            ir.Param(ir.Name(n)) for n, used in zip(("caller", "kwargs", "varargs"), flags) if used
        )
        wrap_args = (
            ir.Const(None if ident else name),
            ir.Const(names),
            ir.Const(flags[1]),
            ir.Const(flags[2]),
            ir.Const(flags[0]),
        )
        return ir.FuncDef(
            ident,
            name,
            tuple(params) + extra,
            body,
            wrap="jinja.make_macro",
            wrap_args=wrap_args,
            missing_helper="jinja.missing_param",
            implicit=len(extra),  # caller, kwargs, varargs: the Macro (or the caller) passes them
            span=span,
        )

    def macro_params(self, *params: Any) -> list:
        seen: set = set()
        defaults = False
        for p in params:
            if p.default is not None:
                defaults = True
            elif defaults:  # jinja2's parser refuses it
                raise CompileError(
                    "syntax", "non-default argument follows default argument", *p.name.span
                )
            if p.name.name in seen:  # Python would refuse the function
                raise CompileError(
                    "syntax",
                    f"duplicate argument {p.name.name!r} in macro definition",
                    *p.name.span,
                )
            seen.add(p.name.name)
        return list(params)

    def macro_param(self, name: Token, default: Any = None) -> ir.Param:
        # (jinja2's parse_signature reads each name as an assignment's: ``assignable_name``)
        return ir.Param(ir.Name(assignable_name(name), span=_span(name)), default)

    def call_params(self, *params: Any) -> list:
        return params[0] if params else []

    def call_block(self, tag: Token, *rest: Any) -> list:
        parts = _nodes(rest)
        params = parts.pop(0) if len(parts) == 3 else []
        callee, body = parts[0], parts[1]
        if not (isinstance(callee, ir.Helper) and callee.name == "jinja.call"):
            raise CompileError("syntax", "expected call", *_span(tag))
        ident = f"caller_{next(self._ids)}"
        funcdef = self._funcdef(ident, "caller", params, body, _span(tag), (tag, rest[-1]))
        # jinja2 passes ``caller=caller`` after the call's own keywords, before ``**mapping``
        named = tuple(kw for kw in callee.kwargs if kw[0] is not None)
        spread = tuple(kw for kw in callee.kwargs if kw[0] is None)
        if any(k == "caller" for k, _ in named) and not any(keyword.iskeyword(k) for k, _ in named):
            raise CompileError("syntax", "keyword argument repeated: caller", *_span(tag))
        call = H(
            "jinja.call",
            callee.args,
            named + (("caller", ir.Local(ident)),) + spread,
            span=callee.span,
        )
        return [funcdef, ir.Output(to_str(call), span=_span(tag))]

    def filter_block(self, tag: Token, *rest: Any) -> ir.Stmt:
        parts = _nodes(rest)
        body = parts.pop()
        value: ir.Expr = ir.Capture(body, span=_span(tag))
        for call in parts:
            if call[0] not in FILTER_FUNCS:  # a filter block is its own frame: never "soft"
                raise CompileError("unknown-filter", f"No filter named {call[0]!r}.", *call[3])
            value = apply_filter(value, call, _span(tag))
        # jinja2 yields the filter's result as it is (no str()): a non-string fails the join.
        return ir.Output(value, span=_span(tag))

    def generation_block(self, tag: Token, _end: Token, body: tuple, *_rest: Any) -> list:
        """transformers' extension parses the block into a call block whose caller macro is the
        body, and calls it with no arguments: ``kwargs``, ``varargs`` and ``caller`` there are
        the caller's own (``{}``, ``()``, "No caller defined"), names it sets stay inside, and
        break/continue cannot cross it. Nothing reads the macro as a value, so its function is
        called directly, with those values."""
        ident = f"caller_{next(self._ids)}"
        funcdef = dataclasses.replace(
            self._funcdef(ident, "caller", [], body, _span(tag), (tag, _rest[-1])), bind=False
        )
        special = {
            "caller": H("jinja.no_caller"),
            "kwargs": ir.DictLit(()),
            "varargs": ir.TupleLit(()),
        }
        args = tuple(special[p.name.name] for p in funcdef.params)
        text = ir.CallFunc(ident, args, span=_span(tag))
        return [funcdef, ir.Output(H("jinja.generation", (text, ir.TOP_OUTPUT)), span=_span(tag))]

    def break_stmt(self, tag: Token, _end: Token) -> ir.Stmt:
        return ir.Break(span=_span(tag))

    def continue_stmt(self, tag: Token, _end: Token) -> ir.Stmt:
        return ir.Continue(span=_span(tag))

    # ------------------------------------------------------------------ expressions

    @returns_lone_child
    def tuple_expr(self, expr: ir.Expr) -> ir.Expr:
        return expr

    def tuple_one(self, expr: ir.Expr, *_: Any) -> ir.Expr:
        return ir.TupleLit((expr,))

    def tuple_many(self, *items: Any) -> ir.Expr:
        return ir.TupleLit(tuple(_nodes(items)))

    def empty_tuple(self) -> ir.Expr:
        return ir.TupleLit(())

    def paren(self, expr: ir.Expr) -> ir.Expr:
        self._noelse.pop(id(expr), None)  # "(a if b) if c": not a link of the same chain
        return expr

    def cond(
        self, body: ir.Expr, _if: Token, test: ir.Expr, _else: Token, orelse: ir.Expr
    ) -> ir.Expr:
        return ir.CondExpr(test, body, orelse)

    @v_args(meta=True, inline=True)
    def cond_noelse(self, meta: Any, body: ir.Expr, tok: Token, test: ir.Expr) -> ir.Expr:
        # The undefined names the line jinja2 gives the node: where the expression starts,
        # and for each further link of a chain ("a if b if c") the line of its "if".
        chained = self._noelse.pop(id(body), None) is body
        line = (tok.line if chained else meta.line) or 0
        node = ir.CondExpr(test, body, H("jinja.cond_undefined", (ir.Const(line),)))
        self._noelse[id(node)] = node
        return node

    @returns_lone_child
    def or_op(self, *items: Any) -> ir.Expr:
        values = _nodes(items)
        return values[0] if len(values) == 1 else ir.BoolOp("or", tuple(values))

    @returns_lone_child
    def and_op(self, *items: Any) -> ir.Expr:
        values = _nodes(items)
        return values[0] if len(values) == 1 else ir.BoolOp("and", tuple(values))

    def not_op(self, _not: Token, operand: ir.Expr) -> ir.Expr:
        return ir.Not(operand)

    @returns_lone_child
    def compare(self, left: ir.Expr, *rest: Any) -> ir.Expr:
        if not rest:
            return left
        ops = []
        for i in range(0, len(rest), 2):
            op = " ".join(str(t) for t in rest[i].children)
            ops.append((op, rest[i + 1]))
        return ir.Compare(left, tuple(ops))

    def _binop(op: str) -> Any:  # type: ignore[misc]
        def method(self: Any, left: ir.Expr, right: ir.Expr) -> ir.Expr:
            return ir.BinOp(op, left, right)

        return method

    add = _binop("+")
    sub = _binop("-")
    mul = _binop("*")
    div = _binop("/")
    floordiv = _binop("//")
    mod = _binop("%")
    power = _binop("**")

    @returns_lone_child
    def concat(self, *items: Any) -> ir.Expr:
        values = _nodes(items)
        return values[0] if len(values) == 1 else H("jinja.concat", tuple(values))

    def neg(self, operand: ir.Expr) -> ir.Expr:
        return ir.UnaryOp("-", operand)

    def pos(self, operand: ir.Expr) -> ir.Expr:
        return ir.UnaryOp("+", operand)

    def filter(self, value: ir.Expr, call: tuple) -> ir.Expr:
        return apply_filter(value, call, ir.NOSPAN)

    @v_args(meta=True, inline=True)
    def filter_called(self, meta: Any, value: ir.Expr, name: tuple, *calls: tuple) -> ir.Expr:
        """``x|f(a)(b)``: the filter's result called (jinja2's ``parse_filter_expr``)."""
        return self._called(meta, self.filter(value, self.filter_call(name, calls[0])), calls[1:])

    @v_args(meta=True, inline=True)
    def test_called(self, meta: Any, value: ir.Expr, _is: Token, *rest: Any) -> ir.Expr:
        """``x is t(a)(b)``: the test's result called."""
        first = next(i for i, r in enumerate(rest) if isinstance(r, tuple))
        return self._called(meta, self.test(value, _is, *rest[: first + 1]), rest[first + 1 :])

    def _called(self, meta: Any, func: ir.Expr, calls: tuple) -> ir.Expr:
        for args in calls:
            func = H("jinja.call", (func, *args[0]), args[1], span=(meta.line or 0, meta.column or 0))
        return func

    def filter_call(self, name: tuple, args: Any = None) -> tuple:
        self.filter_names.add(name[0])
        if args is None:
            return (name[0], (), (), name[1])
        return (name[0], args[0], args[1], name[1])

    def dotted_name(self, *names: Token) -> tuple:
        return (".".join(str(n) for n in names), _span(names[0]))

    def test_name(self, *names: Token) -> str:
        return ".".join(str(n) for n in names)

    def test(self, value: ir.Expr, _is: Token, *rest: Any) -> ir.Expr:
        negated = bool(rest) and isinstance(rest[0], Token) and rest[0].type == "NOT"
        parts = [r for r in rest if not (isinstance(r, Token) and r.type == "NOT")]
        name = parts[0]  # "x is False" names a test "False", which jinja2 does not have
        self.test_names.add(name)
        args: tuple = ()
        kwargs: tuple = ()
        if len(parts) > 1:
            arg = parts[1]
            if isinstance(arg, tuple) and len(arg) == 2 and isinstance(arg[0], tuple):
                args, kwargs = arg
            else:
                args = (arg,)
        func = TEST_FUNCS.get(name)
        node: ir.Expr
        if func is None:
            node = H(
                "jinja.no_test",
                (ir.Const(name), ir.Const(""), value, *args),
                kwargs,
                span=_span(_is),
            )
        else:
            node = H(func, (value, *args), kwargs, span=_span(_is))
        return ir.Not(node) if negated else node

    def getattr(self, obj: ir.Expr, name: Token) -> ir.Expr:
        return H("jinja.getattr_", (obj, ir.Const(str(name))))

    def getattr_int(self, obj: ir.Expr, num: Token) -> ir.Expr:
        return H("jinja.getitem", (obj, ir.Const(self._int(num))))

    def getitem(self, obj: ir.Expr, key: ir.Expr) -> ir.Expr:
        if isinstance(key, ir.Helper) and key.name == "builtins.slice":
            # jinja2 compiles a slice as a plain subscript (no sandbox getitem, no undefined)
            return H("jinja.subscript", (obj, key))
        return H("jinja.getitem", (obj, key))

    def subscript_tuple(self, *items: Any) -> ir.Expr:
        return ir.TupleLit(tuple(_nodes(items)))

    def slice(self, *items: Any) -> ir.Expr:
        parts: list = [None, None, None]
        idx = 0
        for item in items:
            if isinstance(item, Token) and item.value == ":":
                idx += 1
            elif not isinstance(item, Token):
                parts[idx] = item
        return H("builtins.slice", tuple(p if p is not None else ir.Const(None) for p in parts))

    @v_args(meta=True, inline=True)
    def call(self, meta: Any, func: ir.Expr, args: tuple) -> ir.Expr:
        return H("jinja.call", (func, *args[0]), args[1], span=(meta.line or 0, meta.column or 0))

    @v_args(meta=True, inline=True)
    def call_args(self, meta: Any, *items: Any) -> tuple:
        """``(args, kwargs)`` in jinja2's order checks (parser.py ``parse_call_args``): ``*x`` as a
        final ``Starred`` argument, ``**x`` as a final ``(None, x)`` keyword."""
        args: list = []
        kwargs: list = []
        named: set = set()  # the keywords so far (a set: a call of 30,000 was quadratic)
        star: Any = None
        starstar: Any = None

        def ensure(ok: bool) -> None:
            if not ok:  # jinja2 names the line of the "(" only
                raise CompileError(
                    "syntax",
                    "invalid syntax for function call expression",
                    meta.line or 0,
                    meta.column or 0,
                )

        for item in _nodes(items):
            kind, value = item
            if kind == "star":
                ensure(star is None and starstar is None)
                star = value
            elif kind == "starstar":
                ensure(starstar is None)
                starstar = value
            elif kind == "kw":
                ensure(starstar is None)
                name, expr, token = value
                if name in named and not _keyword_named(items):
                    # Python refuses the call (jinja2 passes keyword-named ones as a dict)
                    raise CompileError(
                        "syntax", f"keyword argument repeated: {name}", *_span(token)
                    )
                kwargs.append((name, expr))
                named.add(name)
            else:
                ensure(star is None and starstar is None and not kwargs)
                args.append(value)
        if star is not None:
            args.append(ir.Starred(star))
        if starstar is not None:
            kwargs.append((None, starstar))
            self._spread = True
        return (tuple(args), tuple(kwargs))

    def pos_arg(self, expr: ir.Expr) -> tuple:
        return ("pos", expr)

    def kw_arg(self, name: Token, expr: ir.Expr) -> tuple:
        return ("kw", (str(name), expr, name))

    def star_arg(self, expr: ir.Expr) -> tuple:
        return ("star", expr)

    def starstar_arg(self, expr: ir.Expr) -> tuple:
        return ("starstar", expr)

    def name(self, tok: Token) -> ir.Expr:
        return ir.Name(str(tok), span=_span(tok))

    def strings(self, *toks: Token) -> ir.Expr:
        parts = []
        for tok in toks:
            text = str(tok)[1:-1]
            if "\\" not in text:  # no escape: the round trip below gives the text back
                parts.append(text)
                continue
            try:
                parts.append(text.encode("ascii", "backslashreplace").decode("unicode-escape"))
            except Exception as e:  # jinja2 reports the codec's reason
                raise CompileError("syntax", str(e).split(":")[-1].strip(), *_span(tok)) from None
        return ir.Const("".join(parts))

    def _int(self, tok: Token) -> int:
        try:
            return int(str(tok).replace("_", ""), 0)
        except ValueError:
            raise CompileError(
                "syntax", f"invalid integer literal {str(tok)!r}", *_span(tok)
            ) from None

    def int_lit(self, tok: Token) -> ir.Expr:
        return ir.Const(self._int(tok))

    def float_lit(self, tok: Token) -> ir.Expr:
        return ir.Const(ast.literal_eval(str(tok).replace("_", "")))

    def true_lit(self, _tok: Token) -> ir.Expr:
        return ir.Const(True)

    def false_lit(self, _tok: Token) -> ir.Expr:
        return ir.Const(False)

    def none_lit(self, _tok: Token) -> ir.Expr:
        return ir.Const(None)

    def list_empty(self) -> ir.Expr:
        return ir.ListLit(())

    def list_lit(self, *items: Any) -> ir.Expr:
        return ir.ListLit(tuple(_nodes(items)))

    def dict_empty(self) -> ir.Expr:
        return ir.DictLit(())

    def dict_lit(self, *pairs: Any) -> ir.Expr:
        return ir.DictLit(tuple(_nodes(pairs)))

    def pair(self, key: ir.Expr, value: ir.Expr) -> tuple:
        return (key, value)


_UNKNOWN = ("jinja.no_filter", "jinja.no_test")  # what an unknown filter / test lowers to


def check_unknown_names(body: tuple) -> None:
    """jinja2 rejects an unknown filter or test at compile time, except inside an ``if``
    (statement or expression) of the same frame, where it fails only when evaluated. A loop's
    iterable is in the enclosing frame; its body, ``else`` and filter, macros and blocks that
    capture (and a set block's filters) are frames of their own."""
    if not any(isinstance(n, ir.Helper) and n.name in _UNKNOWN for n in ir.walk(body)):
        return  # (the usual template: nothing to look for, in a walk cheaper than ``visit``)

    def visit(node: Any, soft: bool) -> None:
        if isinstance(node, tuple):
            for n in node:
                visit(n, soft)
            return
        if not isinstance(node, ir.Node):
            return
        if isinstance(node, ir.Helper) and node.name in _UNKNOWN:
            if not soft:
                kind = "filter" if node.name == "jinja.no_filter" else "test"
                name = node.args[0].value  # type: ignore[attr-defined]
                raise CompileError(f"unknown-{kind}", f"No {kind} named {name!r}.", *node.span)
        if isinstance(node, ir.BoolOp) and _folds_short(node):
            return  # jinja2's optimizer folds it to a constant before it compiles the rest
        if isinstance(node, (ir.If, ir.CondExpr)):
            soft = True
        elif isinstance(node, ir.For):
            visit(node.iter, soft)
            visit((node.target, node.body, node.else_, node.filter), False)
            return
        elif isinstance(node, ir.Assign) and _filters_capture(node.value):
            soft = False
        elif isinstance(node, (ir.FuncDef, ir.Capture, ir.Scoped)):
            soft = False
        for f in ir.child_fields(type(node)):
            visit(getattr(node, f), soft)

    visit(body, False)


def _folds_short(node: ir.BoolOp) -> bool:
    """``node`` (``and`` / ``or``) short-circuits on constants alone (``false and x|f``):
    jinja2's optimizer folds it (``And.as_const``: the operands before the deciding one are
    constants too), so what comes after is never compiled, an unknown filter included."""
    for value in node.values:
        truth = _constant_truth(value)
        if truth is None:
            return False
        if truth is (node.op == "or"):
            return True
    return False


def _constant_truth(node: Any) -> Optional[bool]:
    """The truth of a constant (``true``, ``0``, ``'a'``, ``not none``), or None."""
    if isinstance(node, ir.Const) and type(node.value) in (bool, int, float, str, type(None)):
        return bool(node.value)
    if isinstance(node, ir.Not):
        inner = _constant_truth(node.operand)
        return None if inner is None else not inner
    if isinstance(node, (ir.ListLit, ir.TupleLit, ir.DictLit)) and _folded(node):
        return bool(node.items)
    return None


def _filters_capture(node: Any) -> bool:
    """Whether ``node`` is a set block's value: filters applied to a ``Capture``."""
    while isinstance(node, ir.Helper) and node.args:
        node = (
            node.args[2] if node.name == "jinja.no_filter" and len(node.args) > 2 else node.args[0]
        )
    return isinstance(node, ir.Capture)


def _nested_parts(value: ir.Expr, ns: str) -> ir.Expr:
    """A value stored in namespace ``ns``, with what it adds to what the namespace held
    checked by ``limits.nested``: a loop feeds a namespace attribute back, and pairs
    (``dictsort``, ``items()``) nest one tuple deeper each time, in the attribute or in a list
    or dict it holds (``ns.l = [({'a': ns.l[0]}|dictsort)[0]]``), until hashing one
    overflows the C stack. The namespace's own attributes were checked when stored, so an
    operator's or a literal's parts are checked one by one (``ns.l + [x]`` checks ``x``, not
    the whole list again: no walk a step of a loop that grows it); a tuple literal bounds its
    depth as it is made (``limits.make_tuple``: a list or dict in it stops a hash's descent);
    constants and strings hold no tuple."""
    if isinstance(value, ir.TupleLit):
        return value  # ``limits.make_tuple`` measures a tuple's tuples as it is made
    if isinstance(value, ir.ListLit):
        return dataclasses.replace(value, items=tuple(_nested_parts(v, ns) for v in value.items))
    if isinstance(value, ir.DictLit):
        return dataclasses.replace(
            value, items=tuple((_nested_parts(k, ns), _nested_parts(v, ns)) for k, v in value.items)
        )
    if isinstance(value, ir.BinOp):
        if value.op != "*" and (value.op != "+" or _adds_a_string(value)):
            return value  # a number or a string (``-``, ``/``, ``%``...; ``+`` with a text)
        return dataclasses.replace(
            value, left=_nested_parts(value.left, ns), right=_nested_parts(value.right, ns)
        )
    if isinstance(value, ir.CondExpr):
        return dataclasses.replace(
            value, body=_nested_parts(value.body, ns), orelse=_nested_parts(value.orelse, ns)
        )
    if isinstance(value, ir.BoolOp):
        return dataclasses.replace(value, values=tuple(_nested_parts(v, ns) for v in value.values))
    if isinstance(value, (ir.Const, ir.Compare, ir.Not, ir.UnaryOp)) or (
        isinstance(value, ir.Helper) and value.name in ("jinja.concat", "jinja.to_str")
    ):
        return value  # a constant, a truth, a number or a string
    if (
        isinstance(value, ir.Helper)
        and value.name == "jinja.getattr_"
        and isinstance(value.args[0], ir.Name)
        and isinstance(value.args[1], ir.Const)
        and (
            value.args[0].name == ns  # the namespace's own attribute: checked when stored
            or value.args[0].name == "loop" and value.args[1].value in ir.LOOP_SCALAR_ATTRS
        )
    ):
        return value
    return H("limits.nested", (value,), span=value.span)


def _adds_a_string(value: ir.BinOp) -> bool:
    """A ``+`` chain with a string constant among its operands: its value is a string (or
    the ``+`` raises), whatever the others are (``ns.s + '<' + m``)."""
    operands = [value]
    while operands:
        node = operands.pop()
        if isinstance(node, ir.BinOp) and node.op == "+":
            operands += (node.left, node.right)
        elif isinstance(node, ir.Const) and type(node.value) is str:
            return True
    return False


def check_loop_stores(body: tuple) -> None:
    """jinja2 refuses, as it compiles a ``for``, any name ``loop`` stored anywhere in it (its
    target, a ``set``, a ``with``, a nested loop's target, in a macro defined there): the
    loop object's name is reserved in the whole statement."""
    if not _stores_loop(body):  # (the usual case: one walk)
        return
    for node in ir.walk(body):
        if isinstance(node, ir.For):
            stored = _stores_loop((node.target, node.body, node.else_), node.target)
            if stored is not None:
                raise CompileError(
                    "syntax", "Can't assign to special loop variable in for-loop target", *stored.span
                )


def _stores_loop(root: Any, target: Any = None) -> Optional[ir.Name]:
    """The first target name ``loop`` of an assignment or loop at or under ``root`` (or in
    ``target``); a ``with`` binding's is none (jinja2's ``With`` targets are parameters)."""
    nodes = ir.walk(root)
    bindings = {id(b) for n in nodes if isinstance(n, ir.Scoped) for b in n.bindings}
    for node in [None, *nodes]:
        if node is None or isinstance(node, (ir.Assign, ir.For)) and id(node) not in bindings:
            stored = [target if node is None else node.target]
            while stored:
                name = stored.pop()
                if isinstance(name, ir.Target):
                    stored.extend(reversed(name.names))
                elif isinstance(name, ir.Name) and name.name == "loop":
                    return name
    return None


def check_loop_controls(body: tuple, in_loop: bool) -> None:
    """``break``/``continue`` must sit in a loop of the same function (jinja2 emits them as
    Python statements, and Python refuses them elsewhere)."""
    for node in body:
        if isinstance(node, (ir.Break, ir.Continue)) and not in_loop:
            word = "break" if isinstance(node, ir.Break) else "continue"
            raise CompileError("bad-loop-control", f"'{word}' outside loop", *node.span)
        if isinstance(node, ir.For):
            check_loop_controls(node.body, True)
            check_loop_controls(node.else_, in_loop)
        elif isinstance(node, ir.If):
            check_loop_controls(node.body, in_loop)
            check_loop_controls(node.orelse, in_loop)
        elif isinstance(node, ir.FuncDef):
            check_loop_controls(node.body, False)
        elif isinstance(node, ir.Scoped):
            check_loop_controls(node.body, in_loop)
        elif isinstance(node, (ir.Assign, ir.Output)):
            value = node.value if isinstance(node, ir.Assign) else node.expr
            for sub in _direct_captures(value):
                check_loop_controls(sub.body, in_loop)


def _direct_captures(node: Any) -> list:
    """Captures in an expression, not those nested inside another capture's body."""
    if isinstance(node, ir.Capture):
        return [node]
    if isinstance(node, tuple):
        return [c for n in node for c in _direct_captures(n)]
    if isinstance(node, ir.Node):
        return [c for f in ir.child_fields(type(node)) for c in _direct_captures(getattr(node, f))]
    return []


def _keyword_named(items: tuple) -> bool:
    """Whether a call has a keyword argument named like a Python keyword (``f(def=1)``)."""
    return any(k[0] == "kw" and keyword.iskeyword(k[1][0]) for k in _nodes(items))


#: How CPython names ``SandboxedEnvironment.call``, through which jinja2 makes every call.
SANDBOX_CALL = "jinja2.sandbox.SandboxedEnvironment.call"


def finish_calls(body: tuple, filter_names: set, test_names: set) -> tuple:
    """What jinja2's code generator adds to calls (compiler.py ``signature``, ``visit_Call``):

    - an unknown filter or test gets the name of jinja2's stand-in function, ``t_N`` numbered
      by the sorted names of all the template's filters, then its tests (``pull_dependencies``);
    - the operand of ``**mapping`` is checked (``jinja.star_kwargs``) against the keywords the
      call already has, with CPython's messages naming the function jinja2 calls there;
    - a call in a loop body (jinja2's loop frame, through ``if`` but not into macros, blocks of
      their own, a loop's ``else`` or filter) also passes ``_loop_vars``: a template keyword
      of that name is repeated (a ``SyntaxError`` in jinja2's compile), a mapping's is a
      ``TypeError``. (When a keyword is named like a Python keyword, jinja2 passes them all as
      one dict, where nothing is ever repeated.)
    """
    numbers = {("filter", n): i for i, n in enumerate(sorted(filter_names), 1)}
    numbers.update(
        {("test", n): i for i, n in enumerate(sorted(test_names), len(filter_names) + 1)}
    )

    def helper(node: ir.Helper, loop: bool) -> ir.Helper:
        from .autoescape import REFERENCE_NAMES as AUTOESCAPE_NAMES
        from .library import REFERENCE_NAMES

        args = node.args
        func = SANDBOX_CALL if node.name == "jinja.call" else REFERENCE_NAMES.get(node.name, "")
        func = func or AUTOESCAPE_NAMES.get(node.name, "")  # a filter's autoescape version
        if node.name in ("jinja.no_filter", "jinja.no_test"):
            kind = "filter" if node.name == "jinja.no_filter" else "test"
            func = f"root.<locals>.t_{numbers[(kind, args[0].value)]}"  # type: ignore[attr-defined]
            args = (args[0], ir.Const(func)) + args[2:]
        named = [k for k, _ in node.kwargs if k is not None]
        as_dict = any(keyword.iskeyword(k) for k in named)
        in_loop = loop and node.name == "jinja.call" and not as_dict
        if in_loop and "_loop_vars" in named:
            raise CompileError("syntax", "keyword argument repeated: _loop_vars", *node.span)
        kwargs = node.kwargs
        if kwargs and kwargs[-1][0] is None:
            assert func, node.name
            names = () if as_dict else tuple(named) + (("_loop_vars",) if in_loop else ())
            check = H(
                "jinja.star_kwargs",
                (kwargs[-1][1], ir.Const("dict" if as_dict else func), ir.Const(names)),
            )
            kwargs = kwargs[:-1] + ((None, check),)
        if args is node.args and kwargs is node.kwargs:
            return node
        return ir.Helper(node.name, args, kwargs, span=node.span)

    # each node is rebuilt only where a call in it changed (the same object otherwise)
    def walk(node: Any, loop: bool) -> Any:
        if isinstance(node, tuple):
            return ir.map_children(node, in_loop if loop else outside)
        if not isinstance(node, ir.Node):
            return node
        if isinstance(node, ir.For):
            parts = (node.iter, node.filter, node.body, node.else_)
            new = (walk(node.iter, loop), outside(node.filter), inside(node.body), outside(node.else_))
            if all(map(operator.is_, new, parts)):
                return node
            return dataclasses.replace(node, iter=new[0], filter=new[1], body=new[2], else_=new[3])
        if isinstance(node, (ir.FuncDef, ir.Capture)):
            loop = False
        node = ir.map_children(node, in_loop if loop else outside)
        if isinstance(node, ir.Helper):
            return helper(node, loop)
        return node

    def in_loop(node: Any) -> Any:
        return walk(node, True)

    def outside(node: Any) -> Any:
        return walk(node, False)

    inside = in_loop
    return walk(body, False)
