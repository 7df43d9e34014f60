"""Go parse tree -> IR: text/template's execution rules (exec.go), resolved at compile time.
Long because exec.go's rules for every node kind (fields, calls, pipelines, if/with/range,
templates) resolve against one scope model that they all share.

Owns the lowering of every node to IR and Go's variable scoping. Variables live on a
stack exactly as in ``exec.go``: a declaration is pushed when it runs and popped at the
``{{end}}`` of the enclosing block, so which declaration a ``$x`` reads is known
statically and every ``Name`` gets its Python identifier here (no scope pass runs for
Go). A name Go's parser accepts but that is not on the run-time stack (declared in an
``if`` body, read in its ``else``; or only ever assigned) becomes the run-time error Go
raises. Function arity and constant argument types are checked here too, and become
the run-time errors Go raises when (and only if) the call executes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tmpl2py.runtime.go import ollama

from .. import ir
from . import nodes as n
from .literals import go_quote

BUILTINS = frozenset(
    {
        "and",
        "call",
        "html",
        "index",
        "slice",
        "js",
        "len",
        "not",
        "or",
        "print",
        "printf",
        "println",
        "urlquery",
        "eq",
        "ge",
        "gt",
        "le",
        "lt",
        "ne",
    }
)
OLLAMA_FUNCS = frozenset({"json", "currentDate", "yesterdayDate", "toTypeScriptType"})


@dataclass(frozen=True)
class _Sig:
    """A Go function signature: helper, fixed parameter types, variadic type, returns str."""

    helper: str
    fixed: tuple
    variadic: str | None = None
    returns_str: bool = False


_SIGNATURES = {
    "and": _Sig("", ("any",), "any"),
    "or": _Sig("", ("any",), "any"),
    "not": _Sig("", ("any",)),
    "call": _Sig("gotmpl.call", ("any",), "any"),
    "html": _Sig("gotmpl.html_escape", (), "any", True),
    "js": _Sig("gotmpl.js_escape", (), "any", True),
    "urlquery": _Sig("gotmpl.urlquery_escape", (), "any", True),
    "index": _Sig("gotmpl.index", ("any",), "any"),
    "slice": _Sig("gotmpl.slice_", ("any",), "any"),
    "len": _Sig("gotmpl.length", ("any",)),
    "print": _Sig("gotmpl.sprint", (), "any", True),
    "printf": _Sig("gotmpl.sprintf", ("string",), "any", True),
    "println": _Sig("gotmpl.sprintln", (), "any", True),
    "eq": _Sig("gotmpl.eq", ("any",), "any"),
    "ne": _Sig("gotmpl.ne", ("any", "any")),
    "lt": _Sig("gotmpl.lt", ("any", "any")),
    "le": _Sig("gotmpl.le", ("any", "any")),
    "gt": _Sig("gotmpl.gt", ("any", "any")),
    "ge": _Sig("gotmpl.ge", ("any", "any")),
    "json": _Sig("gotmpl.to_json", ("any",), None, True),
    "currentDate": _Sig("gotmpl.current_date", (), "string", True),
    "yesterdayDate": _Sig("gotmpl.yesterday_date", (), "string", True),
    "toTypeScriptType": _Sig("gotmpl.to_typescript_type", ("any",), None, True),
}

#: helper -> the Go function it is, for the functions that make a new value from their
#: arguments (not the comparisons): the operations a segment's origin records
HELPER_FUNCS = {
    s.helper: name
    for name, s in _SIGNATURES.items()
    if s.helper and name not in ("eq", "ne", "lt", "le", "gt", "ge", "call")
}

#: Helpers whose result is always a str (printing them needs no conversion).
_STR_HELPERS = frozenset(s.helper for s in _SIGNATURES.values() if s.returns_str)

#: Field reads and the helpers that read and print them (``to_str`` of the read).
_PRINT_FIELD = {
    "gotmpl.field": "gotmpl.print_field",
    "gotmpl.field_of_elem": "gotmpl.print_field_of_elem",
    "gotmpl.field_path": "gotmpl.print_field_path",
}


class _StaticFail(Exception):
    """An argument Go rejects when the call runs (e.g. a number where a string is needed)."""


@dataclass
class _Var:
    name: str
    ident: str
    state: str  # "live", "dead" (declared in a branch not taken) or "phantom" (only assigned)
    # holds a range element (an interface, possibly nil): True, or the name of the local
    # flag that tells at run time (also assigned other values: see _Lowerer.elem_flag)
    elem: bool | str = False


def _fail(message: str, *evaluated: ir.Expr | None) -> ir.Expr:
    """A Go run-time error; ``evaluated`` are the values Go computes before failing."""
    return ir.Helper(
        "gotmpl.fail", (ir.Const(message),) + tuple(e for e in evaluated if e is not None)
    )


def _span(node: Any) -> ir.Span:
    return (node.line, 0)


class _Lowerer:
    """Lowers one template set (the main tree and its defined templates) to IR statements."""

    def __init__(self, counter: Any, funcs: bool, zero: bool, templates: dict) -> None:
        self.counter = counter
        self.funcs = funcs  # Ollama's func map available at run time
        self.zero = zero  # missingkey=zero
        self.templates = templates  # name -> function local
        self.vars: list[_Var] = []
        #: each name's entries of ``vars``, in the same order (looked up by name: a scan of
        #: every variable for each assignment was quadratic in the template's size)
        self.by_name: dict[str, list[_Var]] = {}
        self.dot = ""
        self.dot_elem = False
        self.flags: list[str] = []  # element flags (elem_flag) of the body being lowered
        # Go's error positions (see _at): shared by the lowerers of one template set
        self.sites: dict = {}  # site -> its number (1-based), in order
        self.site_list: list = []  # the sites in that order
        self.tmpl_name = ""  # the name Go's error prefix says it is "executing"

    # -- names

    def _ident(self, prefix: str, name: str = "") -> str:
        clean = re.sub(r"[^0-9A-Za-z_]", "_", name)
        return (
            f"{prefix}_{clean}_{next(self.counter)}" if clean else f"{prefix}_{next(self.counter)}"
        )

    def _dot(self) -> ir.Name:
        return ir.Name(".", self.dot)

    def _at(self, expr: ir.Expr, node: Any, call: Any = None) -> ir.Expr:
        """``expr`` marked as evaluating Go node ``node``: its errors carry Go's prefix.

        A raising Helper (or CallValue) gets, as its span's column, 1 + the index of a
        site in ``GO_ERROR_SITES``: (template name, position and text of ``node``,
        position and text of ``call``, the command whose "error calling" messages the
        call's own failures are). The line stays the node's. Nothing else reads a Go
        expression's span column (0 otherwise). ``exec_errors`` maps a failing call back
        to its site when an ExecError escapes the render."""
        if not isinstance(expr, (ir.Helper, ir.CallValue)):
            return expr
        old = self.site_list[expr.span[1] - 1] if expr.span[1] else None
        if old is not None and old[1] >= 0:  # the innermost node wins (an argument's own)
            pos, text = old[1], old[2]
        elif node is None:
            pos, text = -1, ""
        else:
            pos, text = n.go_position(node), str(node)
        if old is not None and old[3] >= 0:
            cpos, ctext = old[3], old[4]
        elif call is not None:
            cpos, ctext = n.go_position(call), str(call)
        else:
            cpos, ctext = -1, ""
        site = (self.tmpl_name, pos, text, cpos, ctext)
        number = self.sites.get(site)
        if number is None:
            number = self.sites[site] = len(self.sites) + 1
            self.site_list.append(site)
        line = node.line if node is not None else expr.span[0]
        return replace(expr, span=(line, number))

    def _lookup(self, name: str) -> _Var | None:
        for var in reversed(self.by_name.get(name, ())):
            if var.state == "live":
                return var
        return None

    def _push(self, var: _Var) -> None:
        self.vars.append(var)
        self.by_name.setdefault(var.name, []).append(var)

    def _truncate(self, mark: int) -> None:
        """``vars`` back to its first ``mark`` entries (a block's own are out of scope)."""
        for var in reversed(self.vars[mark:]):
            self.by_name[var.name].pop()
        del self.vars[mark:]

    def _reset(self, var: _Var) -> None:
        self.vars, self.by_name = [], {}
        self._push(var)

    def _declare(self, name: str, elem: bool = False) -> _Var:
        var = _Var(name, self._ident("v", name.lstrip("$") or "root"), "live", elem)
        self._push(var)
        return var

    # -- templates

    def template_body(self, root: n.ListNode, dot_ident: str) -> list:
        self.dot, self.dot_elem = dot_ident, False
        self.flags = []
        if not _assigns_dollar(root):
            self._reset(_Var("$", dot_ident, "live"))  # "$" is dot itself
            body = self.list(root)
        else:
            root_var = self._ident("v", "root")  # "{{ $ = ... }}" changes $, not dot
            self._reset(_Var("$", root_var, "live"))
            body = [ir.Assign(ir.Name("$", root_var), ir.Name(".", dot_ident))]
            body += self.list(root)
        # element flags start false (a loop may read one before its range sets it)
        return [ir.Assign(ir.Name("$elem", f), ir.Const(False)) for f in self.flags] + body

    def elem_flag(self, var: _Var) -> str:
        """The run-time flag of a variable that holds a range element only sometimes: a
        range variable its body assigns (``$v = ...`` holds the value itself: exec.go's
        evalPipeline digs into interfaces), or a variable a ``range $v = ...`` sets."""
        if not isinstance(var.elem, str):
            var.elem = self._ident("e", var.name.lstrip("$"))
            self.flags.append(var.elem)
        return var.elem

    # -- statements

    def list(self, node: n.ListNode | None) -> list:
        out: list = []
        if node is None:
            return out
        for child in node.nodes:
            out.extend(self.stmt(child))
        return out

    def stmt(self, node: Any) -> list:
        if isinstance(node, n.Text):
            return [ir.Text(node.text, span=_span(node))]
        if isinstance(node, n.Action):
            return self.action(node)
        if isinstance(node, n.Branch):
            return getattr(self, "branch_" + node.kind)(node)
        if isinstance(node, n.TemplateCall):
            return self.template_call(node)
        if isinstance(node, n.Break):
            return [ir.Break(span=_span(node))]
        if isinstance(node, n.Continue):
            return [ir.Continue(span=_span(node))]
        raise AssertionError(f"unknown node {node!r}")  # pragma: no cover

    def action(self, node: n.Action) -> list:
        value = self.pipe(node.pipe)
        if node.pipe.decls:
            stmts, _ = self.bind(node.pipe, value)
            return stmts
        return [self.output(value, node)]

    def output(self, value: ir.Expr, node: Any) -> ir.Stmt:
        if isinstance(value, ir.Const) and type(value.value) is str:
            return ir.Text(value.value, span=_span(node))
        if isinstance(value, ir.Helper) and value.name in _STR_HELPERS:
            return ir.Output(value, span=_span(node))
        if isinstance(value, ir.Helper) and value.name in _PRINT_FIELD:
            # {{ .Field }}: read and print in one call
            return ir.Output(
                replace(value, name=_PRINT_FIELD[value.name]), span=_span(node)
            )
        return ir.Output(ir.Helper("gotmpl.to_str", (value,)), span=_span(node))

    def bind(self, pipe: n.Pipe, value: ir.Expr) -> tuple[list, ir.Expr]:
        """Declare or assign the pipeline's variables (exec.go evalPipeline)."""
        stmts: list = []
        first: ir.Expr | None = None
        for decl in pipe.decls:
            name = decl.idents[0]
            if pipe.is_assign:
                var = self._lookup(name)
                if var is None:
                    self._push(_Var(name, "", "phantom"))
                    stmts.append(
                        ir.ExprStmt(
                            self._at(
                                _fail(f"undefined variable: {name}", value), n.last_evaluated(pipe)
                            ),
                            span=_span(decl),
                        )
                    )
                    return stmts, ir.Const(None)
                entries = self.by_name[name]
                if entries[-1].ident != var.ident:  # (one more changes no lookup by ident)
                    self._push(_Var(name, var.ident, "phantom"))
            else:
                var = self._declare(name)
            target = ir.Name(name, var.ident)
            stmts.append(ir.Assign(target, value if first is None else first, span=_span(decl)))
            if isinstance(var.elem, str):  # now it holds a pipeline's value
                stmts.append(ir.Assign(ir.Name("$elem", var.elem), ir.Const(False)))
            if first is None:
                first = target
        return stmts, first if first is not None else value

    def _scoped(
        self,
        mark: int,
        body: n.ListNode,
        else_body: n.ListNode | None,
        body_dot: tuple,
        else_dot: tuple,
        elem_var: _Var | None = None,
        elem_outer: bool = False,
    ) -> tuple[list, list]:
        """Lower a branch body and its else: declarations of the body are not on Go's
        run-time stack in the else (its parser still accepts them there). ``elem_var``:
        the range's element variable, which holds the collection in the else (a range
        declaring it: no element there; an outer one assigned by the range keeps its
        flag, false in the else)."""
        saved = self.dot, self.dot_elem
        self.dot, self.dot_elem = body_dot
        after_pipe = len(self.vars)
        body_ir = self.list(body)
        for var in self.vars[after_pipe:]:
            if var.state == "live":
                var.state = "dead"
        if elem_var is not None and not elem_outer:
            elem_var.elem = False
        self.dot, self.dot_elem = else_dot
        else_ir = self.list(else_body)
        self.dot, self.dot_elem = saved
        self._truncate(mark)
        return body_ir, else_ir

    def branch_if(self, node: n.Branch) -> list:
        mark = len(self.vars)
        value = self.pipe(node.pipe)
        stmts, test = self.bind(node.pipe, value) if node.pipe.decls else ([], value)
        here = (self.dot, self.dot_elem)
        body, orelse = self._scoped(mark, node.body, node.else_body, here, here)
        return stmts + [ir.If(test, tuple(body), tuple(orelse), span=_span(node))]

    def branch_with(self, node: n.Branch) -> list:
        mark = len(self.vars)
        value = self.pipe(node.pipe)
        dot = self._ident("dot")
        stmts: list = [ir.Assign(ir.Name(".", dot), value, span=_span(node))]
        if node.pipe.decls:
            bound, _ = self.bind(node.pipe, ir.Name(".", dot))
            stmts += bound
        here = (self.dot, self.dot_elem)
        body, orelse = self._scoped(mark, node.body, node.else_body, (dot, False), here)
        return stmts + [ir.If(ir.Name(".", dot), tuple(body), tuple(orelse), span=_span(node))]

    def branch_range(self, node: n.Branch) -> list:
        mark = len(self.vars)
        pipe = node.pipe
        value = self.pipe(pipe)
        stmts: list = []
        coll = value
        if pipe.decls:
            if pipe.is_assign:  # an outer variable: from now on it may hold an element
                outer = self._lookup(pipe.decls[-1].idents[0])
                if outer is not None:
                    self.elem_flag(outer)
            # Go pushes (or sets) the range variables to the collection first: the else
            # branch sees them holding it.
            stmts, coll = self.bind(pipe, value)
        dot = self._ident("dot")
        pairs = len(pipe.decls) == 2
        helper = "gotmpl.range_pairs" if pairs else "gotmpl.range_values"
        prologue: list = []
        target: Any = ir.Name(".", dot)
        elem_var: _Var | None = None
        if pipe.decls:
            idents = [self._range_var(d.idents[0], pipe.is_assign) for d in pipe.decls]
            if pairs:
                target = ir.Target((ir.Name(pipe.decls[0].idents[0], idents[0]), ir.Name(".", dot)))
            if idents[-1]:
                prologue.append(
                    ir.Assign(ir.Name(pipe.decls[-1].idents[0], idents[-1]), ir.Name(".", dot))
                )
            for decl, ident in zip(pipe.decls, idents):
                var = self._var_by_ident(decl.idents[0], ident)
                if var is None:
                    continue
                if ident != idents[-1] or not ident:  # the index or key: a concrete value
                    if isinstance(var.elem, str):
                        prologue.append(ir.Assign(ir.Name("$elem", var.elem), ir.Const(False)))
                    continue
                elem_var = var
                name = decl.idents[0]
                if pipe.is_assign or isinstance(var.elem, str) or _assigns_var(node.body, name):
                    flag = self.elem_flag(var)
                    prologue.append(ir.Assign(ir.Name("$elem", flag), ir.Const(True)))
                else:
                    var.elem = True
        for name in _range_assigned(node.body):
            # a range inside this one sets an outer variable to an element: the next
            # iteration reads it before that range runs again, so it needs its flag now
            outer = self._lookup(name)
            if outer is not None:
                self.elem_flag(outer)
        here = (self.dot, self.dot_elem)
        body, orelse = self._scoped(
            mark, node.body, node.else_body, (dot, True), here, elem_var, pipe.is_assign
        )
        loop = ir.For(
            target,
            self._at(ir.Helper(helper, (coll,)), n.last_evaluated(pipe)),
            tuple(prologue + body),
            tuple(orelse),
            span=_span(node),
        )
        return stmts + [loop]

    def _var_by_ident(self, name: str, ident: str) -> _Var | None:
        """The live variable a range sets (declared by it, or assigned: an outer one)."""
        for var in reversed(self.by_name.get(name, ())):
            if var.ident == ident and var.state == "live":
                return var
        return None

    def _range_var(self, name: str, is_assign: bool) -> str:
        for var in reversed(self.by_name.get(name, ())):
            if var.ident:
                return var.ident
        return self._ident("v", "unset")  # the assignment already failed

    def template_call(self, node: n.TemplateCall) -> list:
        func = self.templates.get(node.name)
        if func is None:
            message = f"template {go_quote(node.name)} not defined"
            return [ir.ExprStmt(self._at(_fail(message), node), span=_span(node))]
        stmts: list = []
        value: ir.Expr = ir.Const(None)
        if node.pipe is not None:
            value = self.pipe(node.pipe)
            if node.pipe.decls:
                stmts, value = self.bind(node.pipe, value)
        call = ir.CallValue(ir.Local(func), (value,))
        return stmts + [ir.Output(call, span=_span(node))]

    # -- pipelines and commands

    def pipe(self, pipe: n.Pipe) -> ir.Expr:
        value: ir.Expr | None = None
        for cmd in pipe.cmds:
            value = self.command(cmd, value)
        assert value is not None
        return value

    def command(self, cmd: n.Command, final: ir.Expr | None) -> ir.Expr:
        first, rest = cmd.args[0], cmd.args[1:]
        if isinstance(first, n.Field):
            value = self.fields(self._dot(), first.idents, rest, final, self.dot_elem)
            return self._at(value, first)
        if isinstance(first, n.Chain):
            return self.chain(first, rest, final)
        if isinstance(first, n.Identifier):
            return self._at(self.call(first.name, rest, final, first), first, cmd)
        if isinstance(first, n.Variable):
            value, elem = self.variable(first.idents[0], first)
            if len(first.idents) == 1:
                if rest or final is not None:
                    return self._at(
                        _fail(f"can't give argument to non-function {first}", final), first
                    )
                return value
            return self._at(self.fields(value, first.idents[1:], rest, final, elem), first)
        if rest or final is not None:
            return self._at(_fail(f"can't give argument to non-function {first}", final), first)
        if isinstance(first, n.Pipe):
            return self.pipe(first)
        if isinstance(first, n.Nil):
            return self._at(_fail("nil is not a command"), first)
        return self.constant(first)

    def constant(self, node: Any) -> ir.Expr:
        if isinstance(node, n.Dot):
            return self._dot()
        if isinstance(node, n.Bool):
            return ir.Const(node.value)
        if isinstance(node, n.String):
            return ir.Const(node.value)
        if isinstance(node, n.Number):
            if node.kind == "overflow":
                return self._at(_fail(f"{node.text} overflows int"), node)
            return ir.Const(node.value)
        raise AssertionError(node)  # pragma: no cover

    def variable(self, name: str, node: Any = None) -> tuple[ir.Expr, bool]:
        var = self._lookup(name)
        if var is None:
            return self._at(_fail(f"undefined variable: {name}"), node), False
        return ir.Name(name, var.ident), var.elem or (var.ident == self.dot and self.dot_elem)

    @staticmethod
    def _elem_value(elem: bool | str) -> ir.Expr:
        """The ``elem`` argument of a field helper: a constant, or a variable's flag."""
        return ir.Name("$elem", elem) if isinstance(elem, str) else ir.Const(bool(elem))

    def chain(self, node: n.Chain, rest: Sequence, final: ir.Expr | None) -> ir.Expr:
        if isinstance(node.node, n.Nil):
            return self._at(_fail(f"indirection through explicit nil in {node}", final), node)
        receiver = self.arg(node.node, "any")
        value = self.fields(receiver, node.fields, rest, final, False)
        return self._at(value, n.last_evaluated(node.node))

    def fields(
        self,
        receiver: ir.Expr,
        names: Sequence[str],
        args: Sequence,
        final: ir.Expr | None,
        elem: bool | str,
    ) -> ir.Expr:
        kwargs: tuple = ()
        if elem:
            kwargs += (("elem", self._elem_value(elem)),)
        if not args and final is None:
            if len(names) == 1 and not isinstance(elem, str):
                helper = "gotmpl.field_of_elem" if elem else "gotmpl.field"
                return ir.Helper(helper, (receiver, ir.Const(names[0])))
            if self.zero:
                kwargs += (("zero", ir.Const(True)),)
            return ir.Helper("gotmpl.field_path", (receiver, ir.Const(tuple(names))), kwargs)
        if self.zero:
            kwargs += (("zero", ir.Const(True)),)
        values = [self.arg(a, "any") for a in args]
        if final is not None and not all(map(_trivial, [receiver, *values])):
            # Go evaluated the piped value (an earlier command) before this one's receiver
            # and arguments: take it first, pass it last
            func = ir.Helper("gotmpl.piped", (ir.Const("method_call"), final))
            return ir.CallValue(func, (receiver, ir.Const(tuple(names)), *values), kwargs)
        values += [final] if final is not None else []
        return ir.Helper("gotmpl.method_call", (receiver, ir.Const(tuple(names)), *values), kwargs)

    def call(
        self, name: str, args: Sequence, final: ir.Expr | None, ident: Any = None
    ) -> ir.Expr:
        if name in OLLAMA_FUNCS and not self.funcs:
            return _fail(f"{go_quote(name)} is not a defined function", final)
        sig = _SIGNATURES[name]
        num_in = len(args) + (final is not None)
        if sig.variadic is not None:
            if num_in < len(sig.fixed):
                return _fail(
                    f"wrong number of args for {name}: want at least {len(sig.fixed)} got {len(args)}",
                    final,
                )
        elif num_in != len(sig.fixed):
            return _fail(
                f"wrong number of args for {name}: want {len(sig.fixed)} got {num_in}", final
            )
        values: list = []
        for i, arg in enumerate(args):
            ptype = sig.fixed[i] if i < len(sig.fixed) else sig.variadic
            if name == "len" or (name == "slice" and i > 0):
                # the message of a failing call names the argument's static type
                values.append(self.slot_arg(arg, "length" if name == "len" else "index"))
                continue
            try:
                values.append(self.arg(arg, ptype or "any"))
            except _StaticFail as e:
                return self._at(_fail(str(e), final, *values), arg)
        if name == "len" and args:
            value = values[0]  # the length helper itself (slot_arg)
            if _is_helper(value, "gotmpl.length") and len(value.args) == 1:
                inner = value.args[0]
                if _is_helper(inner, "gotmpl.slice_") and not inner.kwargs:
                    # len (slice x i); its errors are slice's (at the slice command)
                    return replace(inner, name="gotmpl.slice_length")
            return value
        if name == "call":
            # Go names the callee by its node, or a piped callee by its reflect.Value String
            values.insert(0, ir.Const(str(args[0]) if args else None))
        if final is not None and not _trivial(final) and values:
            # The piped value comes from an earlier command of the pipeline: Go computed it
            # (and raised its errors) before this command's arguments, even those "and" /
            # "or" skip. Take it first, pass it last.
            if name in ("and", "or"):
                marker = ir.Helper("gotmpl.piped_final", ())
                chosen = ir.BoolOp(name, (*values, marker))
                return ir.CallValue(ir.Helper("gotmpl.piped_choice", (final,)), (chosen,))
            if not all(map(_trivial, values)):
                ptype = sig.fixed[num_in - 1] if num_in - 1 < len(sig.fixed) else sig.variadic
                short = sig.helper.partition(".")[2]
                piped_args: tuple = (ir.Const(short), final)
                if ptype == "string":
                    piped_args += (ir.Const(True),)
                return ir.CallValue(ir.Helper("gotmpl.piped", piped_args), tuple(values))
        if final is not None:
            ptype = sig.fixed[num_in - 1] if num_in - 1 < len(sig.fixed) else sig.variadic
            if ptype == "string":  # Go checks the piped value after this command's name
                final = self._at(ir.Helper("gotmpl.string_arg", (final,)), ident)
            values.append(final)
        if name in ("and", "or"):
            return values[0] if len(values) == 1 else ir.BoolOp(name, tuple(values))
        if name == "not":
            return ir.Not(values[0])
        if (
            name == "eq"
            and len(values) == 2
            and isinstance(values[0], ir.Helper)
            and values[0].name in _EXACT_INT_HELPERS
            and isinstance(values[1], ir.Const)
            and type(values[1].value) is int
        ):
            # eq (len x) 1: two exact ints, which eq compares with == (its errors are len's)
            return ir.Compare(values[0], (("==", values[1]),))
        return ir.Helper(sig.helper, tuple(values))

    def arg(self, node: Any, ptype: str) -> ir.Expr:
        """exec.go evalArg: an argument's value, checked against the parameter type."""
        if ptype == "string":
            if isinstance(node, n.String):
                return ir.Const(node.value)
            if isinstance(node, n.Nil):
                raise _StaticFail("cannot assign nil to string")
            if isinstance(node, (n.Bool, n.Number)):
                raise _StaticFail(f"expected string; found {node}")
            return self.slot_arg(node, "string_arg")
        if isinstance(node, n.Field):
            return self._at(self.fields(self._dot(), node.idents, (), None, self.dot_elem), node)
        if isinstance(node, n.Variable):
            value, elem = self.variable(node.idents[0], node)
            if len(node.idents) == 1:
                return value
            return self._at(self.fields(value, node.idents[1:], (), None, elem), node)
        if isinstance(node, n.Pipe):
            return self.pipe(node)
        if isinstance(node, n.Identifier):
            return self.call(node.name, (), None)
        if isinstance(node, n.Chain):
            return self.chain(node, (), None)
        if isinstance(node, n.Nil):
            return ir.Const(None)
        return self.constant(node)

    def slot_arg(self, node: Any, use: str) -> ir.Expr:
        """An argument whose static type shows in Go's error: ``use`` is "length" (len),
        "string_arg" (a string parameter) or "index" (an index of slice).

        A field chain passed straight to a function keeps the type of the slot it read
        (interface {} for an entry of a map[string]any: possibly a nil interface), and so
        does a range element (dot or a range variable) of a []any / map[string]any; every
        other argument (a pipeline, a variable, a constant) is the value itself. Chains go
        to ``gotmpl.<use>_path``, which knows the slot; range elements to the value
        helper with ``iface``."""
        path = self._path_arg(node)
        if path is not None:
            receiver, names, elem = path
            kwargs: tuple = (("zero", ir.Const(True)),) if self.zero else ()
            if elem:
                kwargs += (("elem", self._elem_value(elem)),)
            helper = f"gotmpl.{use}_path" if use != "index" else "gotmpl.index_arg_path"
            at = n.last_evaluated(node.node) if isinstance(node, n.Chain) else node
            return self._at(ir.Helper(helper, (receiver, ir.Const(tuple(names))), kwargs), at)
        value = self.arg(node, "any")
        elem = self._elem_of(node)
        at = n.last_evaluated(node)  # where Go is when it checks the value's type
        if elem:
            flag = self._elem_value(elem)
            if use == "index":
                return self._at(ir.Helper("gotmpl.elem_index_arg", (value, flag)), at)
            return self._at(ir.Helper(f"gotmpl.{use}", (value, flag)), at)
        return value if use == "index" else self._at(ir.Helper(f"gotmpl.{use}", (value,)), at)

    def _path_arg(self, node: Any) -> tuple | None:
        """(receiver, names, elem) when ``node`` is a field chain, else None."""
        if isinstance(node, n.Field):
            return self._dot(), node.idents, self.dot_elem
        if isinstance(node, n.Variable) and len(node.idents) > 1:
            value, elem = self.variable(node.idents[0], node)
            return value, node.idents[1:], elem
        if isinstance(node, n.Chain) and not isinstance(node.node, n.Nil):
            return self.arg(node.node, "any"), node.fields, False
        return None

    def _elem_of(self, node: Any) -> bool | str:
        """Is ``node`` a range element (dot in a range body, or a range variable)? True,
        False, or the variable's run-time flag."""
        if isinstance(node, n.Dot):
            return self.dot_elem
        if isinstance(node, n.Variable) and len(node.idents) == 1:
            return self.variable(node.idents[0])[1]
        return False


#: the helpers that return an exact int (or raise)
_EXACT_INT_HELPERS = frozenset({"gotmpl.length", "gotmpl.length_path", "gotmpl.slice_length"})


def _is_helper(expr: Any, name: str) -> bool:
    return isinstance(expr, ir.Helper) and expr.name == name


def _trivial(expr: ir.Expr) -> bool:
    """Evaluating ``expr`` cannot fail (a constant or a variable)."""
    return isinstance(expr, (ir.Const, ir.Name, ir.Local))


def _assigns_var(node: Any, name: str) -> bool:
    """Does any pipeline of this tree assign to the variable ``name`` (``{{ $v = ... }}``,
    ``range $v = ...``)? Conservative: shadowing declarations are not followed."""
    if isinstance(node, n.ListNode):
        return any(_assigns_var(c, name) for c in node.nodes)
    if isinstance(node, (n.Action, n.TemplateCall)):
        return node.pipe is not None and _assigns_var(node.pipe, name)
    if isinstance(node, n.Branch):
        return any(_assigns_var(x, name) for x in (node.pipe, node.body, node.else_body))
    if isinstance(node, n.Pipe):
        return node.is_assign and any(d.idents[0] == name for d in node.decls)
    return False


def _range_assigned(node: Any) -> set:
    """Names of the variables that ``range $v = ...`` (or ``range $i, $v = ...``) inside
    this tree sets to elements."""
    if isinstance(node, n.ListNode):
        return set().union(*(_range_assigned(c) for c in node.nodes))
    if isinstance(node, n.Branch):
        names = _range_assigned(node.body) | _range_assigned(node.else_body)
        if node.kind == "range" and node.pipe.is_assign and node.pipe.decls:
            names.add(node.pipe.decls[-1].idents[0])
        return names
    return set()


def _assigns_dollar(node: Any) -> bool:
    """Does any pipeline of this tree assign to ``$``?"""
    if isinstance(node, n.ListNode):
        return any(_assigns_dollar(c) for c in node.nodes)
    if isinstance(node, (n.Action, n.TemplateCall)):
        return node.pipe is not None and _assigns_dollar(node.pipe)
    if isinstance(node, n.Branch):
        return (
            _assigns_dollar(node.pipe)
            or _assigns_dollar(node.body)
            or _assigns_dollar(node.else_body)
        )
    if isinstance(node, n.Pipe):
        return node.is_assign and any(d.idents[0] == "$" for d in node.decls)
    return False


#: Ollama's view types (runtime.ollama) whose fields a template reads: a value of one is
#: always an instance of that class, its string fields exactly a str.
_VIEWS = {
    name: getattr(ollama, name)
    for name in (
        "TemplateMessage",
        "TemplateToolCall",
        "TemplateToolCallFunction",
        "TemplateTool",
        "TemplateToolFunction",
        "TemplateToolFunctionParameters",
        "ToolProperty",
    )
}
_VIEW_OF_GO_TYPE = {cls.go_type: name for name, cls in _VIEWS.items() if not cls.go_pointer}
#: the field-read helpers, and whether each prints the value it reads
_READ_HELPERS = {
    "gotmpl.field": False,
    "gotmpl.field_of_elem": False,
    "gotmpl.field_path": False,
    "gotmpl.print_field": True,
    "gotmpl.print_field_of_elem": True,
    "gotmpl.print_field_path": True,
}


def _view_chain(view: str, names: tuple) -> str | None:
    """The Go type ``.A.B.C`` on a value of the view type ``view`` ends on, when it reads
    struct fields only (every step but the last a struct value, never nil); else None."""
    go_types = _VIEWS[view].go_field_types
    for i, name in enumerate(names):
        go_type = go_types.get(name)
        if go_type is None:
            return None
        if i == len(names) - 1:
            return go_type
        if go_type not in _VIEW_OF_GO_TYPE:
            return None
        go_types = _VIEWS[_VIEW_OF_GO_TYPE[go_type]].go_field_types
    return None


def _direct_view_reads(body: tuple) -> tuple:
    """A field chain read on a variable (``.Role`` in a range over .Messages, ``.Function.Name``
    in one over .Tools): the attributes themselves when the variable holds a view type the
    chain reads through (``type(x) is ...``: what the helper would read, and print, since its
    strings are exactly str; printed through to_str, as the helper does, when the chain ends
    on another type), the helper for anything else.

    ``eq`` of such a read of a string and a string constant (``eq .Role "user"``) compares
    the two directly when the read is direct (an exact str each: eq's own comparison).

    (``ir.LoopAttr`` is the IR's plain attribute read.)"""
    string_reads: dict = {}  # id of a direct read's CondExpr ending on a string -> the read

    def fold(node: Any) -> Any:
        node = ir.map_children(node, fold)
        if (
            _is_helper(node, "gotmpl.eq")
            and len(node.args) == 2
            and not node.kwargs
            and string_reads.get(id(node.args[0])) is node.args[0]
            and isinstance(node.args[1], ir.Const)
            and type(node.args[1].value) is str
        ):
            read, const = node.args
            same = ir.Compare(read.body, (("==", const),))
            return ir.CondExpr(read.test, same, replace(node, args=(read.orelse, const)))
        if not (
            isinstance(node, ir.Helper)
            and node.name in _READ_HELPERS
            and isinstance(node.args[0], ir.Name)
            and isinstance(node.args[1], ir.Const)
        ):
            return node
        recv, names = node.args[0], node.args[1].value
        names = names if isinstance(names, tuple) else (names,)
        ends = {v: _view_chain(v, names) for v in _VIEWS}
        views = [v for v, end in ends.items() if end is not None]
        if not views:
            return node
        direct: ir.Expr = recv
        for name in names:
            direct = ir.LoopAttr(direct, name)
        if _READ_HELPERS[node.name] and any(ends[v] != "string" for v in views):
            direct = ir.Helper("gotmpl.to_str", (direct,))  # what the helper prints
        refs = tuple(ir.Ref(f"ollama.{v}") for v in views)
        kind = ir.Helper("builtins.type", (recv,))
        if len(refs) == 1:
            test = ir.Compare(kind, (("is", refs[0]),))
        else:
            test = ir.Compare(kind, (("in", ir.TupleLit(refs)),))
        read = ir.CondExpr(test, direct, node)
        if all(ends[v] == "string" for v in views):
            string_reads[id(read)] = read
        return read

    return fold(body)


def lower_template_set(parsed: Any, profile: str) -> ir.Module:
    """The IR module of a parsed template set (``frontend.GoTemplate``).

    The entry function's body defines the named templates (``define`` / ``block``) as
    local functions, then runs the main tree on ``context``. Metadata (module constants):
    ``GO_TEMPLATES`` (defined names); for the "ollama" profile also ``GO_IDENTIFIERS``
    (Ollama's ``Template.Vars``), ``GO_MODE`` ("messages" or "legacy") and ``GO_TOOLS_JSON``
    (True when the template only marshals its tools). In the legacy
    mode the body branches on ``ollama.is_cut_run(context)`` to run the tree cut after the
    first ``.Response`` (Ollama's last turn: no funcs, no defined templates, default
    missingkey), or ``GO_CUT_ERROR`` holds the panic Ollama's deleteNode raises instead.
    """
    counter = itertools.count()
    sites: dict = {}  # GO_ERROR_SITES: see _Lowerer._at
    site_list: list = []
    root = parsed.root
    meta: list = [("GO_TEMPLATES", tuple(sorted(parsed.templates)))]
    cut_stmts: list | None = None
    if profile == "ollama":
        names: set = set()
        for tree in [root, *parsed.templates.values()]:
            names.update(x.lower() for x in n.identifiers(tree))
        if "messages" not in names and "response" not in names:
            response = n.Action(n.Pipe((), False, (n.Command((n.Field(("Response",)),)),)))
            root = n.ListNode(root.nodes + (response,), pos=root.pos, line=root.line)
        mode = "messages" if "messages" in names else "legacy"
        meta += [("GO_IDENTIFIERS", tuple(sorted(names))), ("GO_MODE", mode)]
        if (
            mode == "messages"
            and "tools" in names
            and not parsed.templates
            and n.tools_only_marshalled(root)
        ):
            meta.append(("GO_TOOLS_JSON", True))  # ollama.JsonTool: see n.tools_only_marshalled
        if mode == "legacy":
            try:
                cut = n.cut_after_response(root)
            except n.CutPanic as e:
                meta.append(("GO_CUT_ERROR", str(e)))
            else:
                lowerer = _Lowerer(counter, funcs=False, zero=False, templates={})
                lowerer.sites, lowerer.site_list = sites, site_list
                context = ir.Helper("ollama.cut_data", (ir.Local("context"),))
                cut_stmts = [ir.Assign(ir.Name(".", "dot_cut"), context)]
                cut_stmts += lowerer.template_body(cut, "dot_cut")
    zero = funcs = profile == "ollama"
    locals_ = {name: f"tmpl_{i}" for i, name in enumerate(sorted(parsed.templates))}
    body: list = []
    for name in sorted(parsed.templates):
        lowerer = _Lowerer(counter, funcs, zero, locals_)
        lowerer.sites, lowerer.site_list, lowerer.tmpl_name = sites, site_list, name
        dot = f"dot_{locals_[name]}"
        stmts = lowerer.template_body(parsed.templates[name], dot)
        param = ir.Param(ir.Name(".", dot))
        body.append(ir.FuncDef(locals_[name], name, (param,), tuple(stmts)))
    lowerer = _Lowerer(counter, funcs, zero, locals_)
    lowerer.sites, lowerer.site_list = sites, site_list
    data: ir.Expr = ir.Local("context")
    if profile == "plain":
        data = ir.Helper("gotmpl.plain_data", (data,))  # JSON numbers are float64 in Go
    main = [ir.Assign(ir.Name(".", "dot"), data)] + lowerer.template_body(root, "dot")
    if cut_stmts is not None:
        body.append(
            ir.If(
                ir.Helper("ollama.is_cut_run", (ir.Local("context"),)),
                tuple(cut_stmts),
                tuple(main),
            )
        )
    else:
        body += main
    if profile == "ollama":
        body = list(_direct_view_reads(tuple(body)))
    if sites:
        meta.append(("GO_ERROR_SITES", tuple(site_list)))
    return ir.Module(tuple(body), "go", profile, tuple(meta))
