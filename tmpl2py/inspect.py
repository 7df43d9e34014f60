"""``tmpl2py inspect``: what a template reads, touches, supports and can raise, from its IR.
Long because the analysis of every construct (reads, writes, support, raise sites) and the
report built from it belong together.

Owns a static reading of the scope-resolved IR (``compiler.api.parse`` + the pass
pipeline without optimisations); nothing is rendered. For Jinja:

- **variables**: the context names the template reads (``jinja.resolve`` loads, followed
  through scope aliases; globals such as ``raise_exception`` and ``namespace`` are listed
  apart). A read *before* any ``set`` of the name counts; reads after one see the local.
  A variable is **required** when some read of it uses the value (prints it, iterates it,
  reads an attribute, passes it on) outside a guard, and **optional** when every read
  is guarded: the operand of ``is defined`` / ``is undefined`` / ``default``, a truth
  test or ``==``/``in`` comparison of the bare name, or any read inside the body of an
  ``if`` (or ``and``, conditional expression) whose test implies the name is defined
  (``if x``, ``if x is defined``, ``if x is string``, ``if x == 'a'``). A heuristic:
  with jinja2's lenient undefined, a missing "required" variable mostly prints as ''
  or loops zero times rather than failing.
- **fields**: constant attribute/item reads on values derived from a variable, as paths
  (``messages[].tool_calls[].function.name``): loop targets over a variable, ``x[0]``,
  slices, list filters (``selectattr``, ``reverse``, ...), ``set`` of such values and
  ``.get('k')`` are followed. **Message fields** are the first keys under ``messages[]``.
- **roles**: string constants compared (``==``, ``in``, ``selectattr(..., 'equalto')``)
  with any ``.role`` read.
- **capabilities**, each with its evidence: system role, tools, tool calls, tool results,
  reasoning, documents, generation prompt (reads ``add_generation_prompt``), content
  parts, generation spans (``{% generation %}``).
- **raises**: every ``raise_exception(...)`` call with its message (constant parts kept,
  the rest shown as ``{...}``), plus unknown filters/tests that fail when reached.

For Go (Ollama) templates the field names read are classified against Ollama's template
data (``.System``, ``.Messages``, ``.Tools``, ...); nothing is required (Ollama executes
with ``missingkey=zero``), and ``fail`` calls the frontend emitted are what can raise.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import Any, Optional

from .compiler import ir

#: Names the hf environment defines as globals (resolved when the context lacks them).
JINJA_GLOBALS = frozenset(
    {"range", "dict", "namespace", "raise_exception", "strftime_now", "lipsum", "cycler", "joiner"}
)

#: Tests that, when true, imply the tested value is defined.
_GUARD_TESTS = frozenset(
    {"defined", "string", "mapping", "number", "integer", "float", "boolean", "true", "false"}
)
#: Filters and tests whose first operand may be undefined without consequence.
_SAFE_OPERAND = frozenset({"test:defined", "test:undefined", "test:none", "filter:default"})
#: Filters whose result is the operand's list (or the operand's value, for strings).
_SAME_VALUE = frozenset(
    "filter:" + f
    for f in ("list", "reverse", "sort", "unique", "select", "reject", "selectattr", "rejectattr", "default",
              "lower", "upper", "trim", "string", "title", "capitalize")
)  # fmt: skip
_ELEMENT = frozenset({"filter:first", "filter:last", "filter:random"})
#: Attribute / item access helpers: ``x.k``, ``x[k]``, ``x[a:b]``.
_ACCESS = frozenset({"jinja.getattr_", "jinja.getitem", "jinja.subscript"})
_EQ_TESTS = frozenset({"equalto", "eq", "==", "sameas"})
_METHODS = frozenset(n for t in (str, dict, list) for n in dir(t) if not n.startswith("_"))

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
REASONING_VARS = ("enable_thinking", "thinking", "reasoning_effort", "reasoning", "think")
CAPABILITIES = (
    "system_role",
    "tools",
    "tool_calls",
    "tool_results",
    "reasoning",
    "documents",
    "generation_prompt",
    "content_parts",
    "generation_spans",
)


@dataclasses.dataclass
class Variable:
    name: str
    required: bool
    lines: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Raise:
    line: int
    message: str
    kind: str = "raise_exception"


@dataclasses.dataclass
class Report:
    """What :func:`inspect_template` found; ``as_dict()`` is the ``--json`` output."""

    name: str
    dialect: str
    variables: dict = dataclasses.field(default_factory=dict)  # name -> Variable
    globals_used: set = dataclasses.field(default_factory=set)
    fields: set = dataclasses.field(default_factory=set)  # path strings
    roles: set = dataclasses.field(default_factory=set)
    capabilities: dict = dataclasses.field(default_factory=dict)  # name -> [evidence]
    raises: list = dataclasses.field(default_factory=list)
    uses_generation: bool = False
    mode: str = ""

    @property
    def message_fields(self) -> list[str]:
        out = []
        for path in sorted(self.fields):
            if path.startswith("messages[]."):
                key = path[len("messages[].") :].split(".")[0].split("[")[0]
                if key and key not in out:
                    out.append(key)
        return sorted(out)

    def as_dict(self) -> dict:
        return {
            "template": self.name,
            "dialect": self.dialect,
            "variables": {
                n: {"required": v.required, "lines": sorted(set(v.lines))}
                for n, v in sorted(self.variables.items())
            },
            "required": sorted(n for n, v in self.variables.items() if v.required),
            "optional": sorted(n for n, v in self.variables.items() if not v.required),
            "globals": sorted(self.globals_used),
            "message_fields": self.message_fields,
            "fields": sorted(self.fields),
            "roles": sorted(self.roles),
            "capabilities": {c: sorted(set(self.capabilities.get(c, []))) for c in CAPABILITIES},
            "raises": [{"line": r.line, "message": r.message, "kind": r.kind} for r in self.raises],
            **({"mode": self.mode} if self.mode else {}),
        }


# ----------------------------------------------------------------------------- entry points


def inspect_template(
    source: str, dialect: str = "jinja", name: Optional[str] = None, profile: Optional[str] = None
) -> Report:
    """Analyse a template (raises ``CompileError`` for a malformed one)."""
    from .compiler.api import PROFILES, parse
    from .compiler.errors import CompileError
    from .compiler.passes import pipeline

    label = name or "<template>"
    profile = profile or PROFILES.get(dialect, ("",))[0]
    try:
        module = pipeline.run(
            parse(source, dialect, label), profile=profile, optimize=False, exact_undefined=False
        )
    except CompileError as e:
        raise e.with_source(source, label) from None
    report = Report(label, dialect)
    if dialect == "jinja":
        _JinjaReader(report).run(module.body)
    else:
        _go_report(report, module)
    _capabilities(report)
    return report


def format_text(report: Report) -> str:
    d = report.as_dict()
    out = [
        f"template: {report.name} ({report.dialect}{', ' + report.mode + ' mode' if report.mode else ''})",
        "",
    ]
    out.append("variables:")
    width = max([len(n) for n in d["variables"]] + [8])
    for n, v in d["variables"].items():
        lines = ", ".join(str(x) for x in v["lines"][:8]) + (", ..." if len(v["lines"]) > 8 else "")
        where = f"  (line {lines})" if lines else ""
        out.append(f"  {n:<{width}}  {'required' if v['required'] else 'optional'}{where}")
    if not d["variables"]:
        out.append("  (none)")
    if d["globals"]:
        out.append(f"globals used: {', '.join(d['globals'])}")
    out += ["", f"message fields: {', '.join(d['message_fields']) or '(none)'}"]
    others = [f for f in d["fields"]]
    if others:
        out.append("fields read:")
        out += [f"  {f}" for f in others]
    out.append(f"roles handled: {', '.join(repr(r) for r in d['roles']) or '(none named)'}")
    out += ["", "capabilities:"]
    for cap, evidence in d["capabilities"].items():
        mark = "yes" if evidence else "no "
        out.append(f"  {cap.replace('_', ' '):<18} {mark}  {'; '.join(evidence)}".rstrip())
    out += ["", "can raise:"]
    for r in d["raises"]:
        where = f"line {r['line']}" if r["line"] else "line ?"
        out.append(
            f"  {where}: {r['message']}"
            + ("" if r["kind"] == "raise_exception" else f"  [{r['kind']}]")
        )
    if not d["raises"]:
        out.append("  (nothing the template raises itself)")
    return "\n".join(out) + "\n"


def format_json(report: Report) -> str:
    return json.dumps(report.as_dict(), indent=2, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------------------- Jinja


_KINDS: dict[str, frozenset] = {}


def _kinds(helper: str) -> frozenset:
    """The filters and tests (``filter:default``, ``test:defined``) a helper implements."""
    if not _KINDS:
        from .compiler.jinja.library import FILTER_FUNCS, TEST_FUNCS

        table: dict[str, set] = {}
        for prefix, funcs in (("filter:", FILTER_FUNCS), ("test:", TEST_FUNCS)):
            for name, func in funcs.items():
                table.setdefault(func, set()).add(prefix + name)
        _KINDS.update({k: frozenset(v) for k, v in table.items()})
        _KINDS.setdefault("", frozenset())
    return _KINDS.get(helper, frozenset())


def _path_text(path: tuple) -> str:
    out = path[0]
    for step in path[1:]:
        out += "[]" if step == "[]" else f".{step}"
    return out


def _str_consts(node: Any) -> list[str]:
    if isinstance(node, ir.Const) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ir.Const) and isinstance(node.value, tuple):
        return [v for v in node.value if isinstance(v, str)]
    if isinstance(node, (ir.ListLit, ir.TupleLit)):
        return [i.value for i in node.items if isinstance(i, ir.Const) and isinstance(i.value, str)]
    return []


def _is_role_read(node: Any) -> bool:
    return (
        isinstance(node, ir.Helper)
        and node.name in _ACCESS
        and len(node.args) == 2
        and isinstance(node.args[1], ir.Const)
        and node.args[1].value == "role"
    )


class _JinjaReader:
    """One in-order walk of the resolved IR (see the module docstring for the rules)."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.origin: dict[str, str] = {}  # ident -> context variable it holds
        self.paths: dict[str, tuple] = {}  # ident -> value path (("messages", "[]"), ...)
        self.assigned: set[str] = set()  # idents a template `set` (or loop) has written
        self.guards: list[frozenset] = [frozenset()]
        self.line = 0

    def run(self, body: tuple) -> None:
        self.stmts(body)

    # ------------------------------------------------------------------ helpers

    def var_of(self, node: Any) -> Optional[str]:
        """The context variable a bare read holds (None for locals and globals)."""
        if (
            isinstance(node, ir.Name)
            and node.ident in self.origin
            and node.ident not in self.assigned
        ):
            var = self.origin[node.ident]
            return None if var in JINJA_GLOBALS else var
        if (
            isinstance(node, ir.Helper)
            and node.name == "jinja.resolve"
            and len(node.args) == 2
            and isinstance(node.args[1], ir.Const)
        ):
            return None if node.args[1].value in JINJA_GLOBALS else node.args[1].value
        return None

    def guarded(self, var: str) -> bool:
        return any(var in g for g in self.guards)

    def with_guards(self, extra: Iterable[str], fn: Any, *args: Any) -> Any:
        self.guards.append(frozenset(extra))
        try:
            return fn(*args)
        finally:
            self.guards.pop()

    def read(self, name: str, safe: bool) -> None:
        var = self.report.variables.get(name)
        if var is None:
            var = self.report.variables[name] = Variable(name, False)
        if self.line:
            var.lines.append(self.line)
        if not safe and not self.guarded(name):
            var.required = True

    def guards_of(self, test: Any, positive: bool) -> set[str]:
        """Variables known to be defined when ``test`` is truthy (positive) or falsy."""
        var = self.var_of(test)
        if var is not None:
            return {var} if positive else set()
        if isinstance(test, ir.Not):
            return self.guards_of(test.operand, not positive)
        if isinstance(test, ir.Helper) and test.args:
            inner = self.var_of(test.args[0])
            if inner is None:
                return set()
            kinds = _kinds(test.name)
            if positive and any(k[5:] in _GUARD_TESTS for k in kinds if k.startswith("test:")):
                return {inner}
            if "test:undefined" in kinds and not positive:
                return {inner}
            return set()
        if isinstance(test, ir.BoolOp):
            parts = [self.guards_of(v, positive) for v in test.values]
            if (test.op == "and") == positive:
                return set().union(*parts)
            return set.intersection(*parts) if parts else set()
        if (
            isinstance(test, ir.Compare)
            and positive
            and all(op in ("==", "in") for op, _ in test.ops)
        ):
            return {v for v in [self.var_of(test.left)] if v}
        return set()

    # ------------------------------------------------------------------ statements

    def stmts(self, body: Iterable[Any]) -> None:
        for stmt in body:
            self.stmt(stmt)

    def stmt(self, node: Any) -> None:
        if getattr(node, "span", (0, 0))[0]:
            self.line = node.span[0]
        if isinstance(node, ir.Assign):
            self.assign(node)
        elif isinstance(node, (ir.Output, ir.ExprStmt, ir.Return)):
            self.expr(node.expr if not isinstance(node, ir.Return) else node.value)
        elif isinstance(node, ir.If):
            self.expr(node.test, safe=True)
            self.with_guards(self.guards_of(node.test, True), self.stmts, node.body)
            self.with_guards(self.guards_of(node.test, False), self.stmts, node.orelse)
        elif isinstance(node, ir.For):
            self.for_(node)
        elif isinstance(node, ir.FuncDef):
            for p in node.params:
                self.assigned.add(p.name.ident)
                if p.default is not None:
                    self.expr(p.default)
            self.stmts(node.body)
            for a in node.wrap_args:
                self.expr(a)
        elif isinstance(node, ir.Scoped):
            self.stmts(node.body)

    def assign(self, node: ir.Assign) -> None:
        target, value = node.target, node.value
        if isinstance(target, ir.Name):
            if (
                isinstance(value, ir.Helper)
                and value.name == "jinja.resolve"
                and len(value.args) == 2
                and isinstance(value.args[0], ir.Local)
            ):  # a scope's entry load from the context
                self.origin[target.ident] = value.args[1].value  # type: ignore[union-attr]
                self.assigned.discard(target.ident)
                self.paths.pop(target.ident, None)
                return
            if isinstance(value, ir.Helper) and value.name == "jinja.undefined":
                self.origin.pop(target.ident, None)  # a scope's entry: a name first stored here
                self.paths.pop(target.ident, None)
                return
            if (
                isinstance(value, ir.Name)
                and value.name == target.name
                and value.ident != target.ident
            ):
                # a scope's entry alias of the enclosing scope's local
                for table in (self.origin, self.paths):
                    if value.ident in table:
                        table[target.ident] = table[value.ident]
                    else:
                        table.pop(target.ident, None)
                if value.ident in self.assigned:
                    self.assigned.add(target.ident)
                else:
                    self.assigned.discard(target.ident)
                return
        path = self.expr(value)
        for name in self._target_names(target):
            self.assigned.add(name.ident)
            self.paths.pop(name.ident, None)
        if isinstance(target, ir.Name) and path is not None:
            self.paths[target.ident] = path

    def _target_names(self, target: Any) -> list:
        if isinstance(target, ir.Name):
            return [target]
        out = []
        for t in getattr(target, "names", ()):
            out += self._target_names(t)
        return out

    def for_(self, node: ir.For) -> None:
        path = self.expr(node.iter)
        names = self._target_names(node.target)
        for name in names:
            self.assigned.add(name.ident)
        if node.loop:
            self.assigned.add(node.loop)
        if isinstance(node.target, ir.Name) and path is not None:
            self.paths[node.target.ident] = path + ("[]",)
        if node.filter is not None:
            self.expr(node.filter, safe=True)
        guards = self.guards_of(node.filter, True) if node.filter is not None else set()
        self.with_guards(guards, self.stmts, node.body)
        self.stmts(node.else_)

    # ------------------------------------------------------------------ expressions

    def expr(self, node: Any, safe: bool = False) -> Optional[tuple]:
        """Walk an expression; return the path of its value when it has one."""
        var = self.var_of(node)
        if var is not None:
            self.read(var, safe)
            return (var,)
        if isinstance(node, ir.Name):
            if (
                node.ident in self.origin
                and self.origin[node.ident] in JINJA_GLOBALS
                and node.ident not in self.assigned
            ):
                self.report.globals_used.add(self.origin[node.ident])
            return self.paths.get(node.ident)
        if isinstance(node, ir.Helper):
            return self.helper(node, safe)
        if isinstance(node, ir.Compare):
            self.compare(node)
            return None
        if isinstance(node, ir.BoolOp):
            return self.boolop(node, safe)
        if isinstance(node, ir.Not):
            self.expr(node.operand, safe=True)
            return None
        if isinstance(node, ir.CondExpr):
            self.expr(node.test, safe=True)
            body = self.with_guards(self.guards_of(node.test, True), self.expr, node.body, safe)
            orelse = self.with_guards(
                self.guards_of(node.test, False), self.expr, node.orelse, safe
            )
            return body or orelse
        if isinstance(node, ir.Capture):
            self.stmts(node.body)
            return None
        for f in getattr(node, "__dataclass_fields__", ()):  # literals, operators, calls of values
            value = getattr(node, f)
            for item in value if isinstance(value, tuple) else (value,):
                for part in item if isinstance(item, tuple) else (item,):  # kwargs / dict pairs
                    if isinstance(part, ir.Expr):
                        self.expr(part)
        return None

    def children(self, args: Iterable[Any], kwargs: Iterable[Any] = ()) -> None:
        for a in args:
            self.expr(a)
        for _, v in kwargs:
            self.expr(v)

    def field(self, base: Optional[tuple], key: Any) -> Optional[tuple]:
        if base is None:
            return None
        step = "[]" if not isinstance(key, str) else key
        path = base + (step,)
        if step != "[]":
            self.report.fields.add(_path_text(path))
        return path

    def boolop(self, node: ir.BoolOp, safe: bool) -> Optional[tuple]:
        result = None
        seen: set[str] = set()
        for value in node.values:
            path = self.with_guards(seen, self.expr, value, True)
            result = result or path
            seen |= self.guards_of(value, node.op == "and")
        return result

    def compare(self, node: ir.Compare) -> None:
        operands = [node.left] + [e for _, e in node.ops]
        safe_ops = all(op in ("==", "!=", "in", "not in") for op, _ in node.ops)
        paths = [self.expr(o, safe=safe_ops) for o in operands]
        for i, operand in enumerate(operands):
            consts = [c for j, o in enumerate(operands) if j != i for c in _str_consts(o)]
            if not consts:
                continue
            if _is_role_read(operand) or (paths[i] and paths[i][-1] == "role"):
                self.report.roles.update(consts)
            if (
                paths[i]
                and _path_text(paths[i]).startswith("messages[].content[].")
                and paths[i][-1] == "type"
            ):
                self.report.capabilities.setdefault("_content_types", []).extend(consts)

    def helper(self, node: ir.Helper, safe: bool) -> Optional[tuple]:
        name, args = node.name, node.args
        if name in _ACCESS and len(args) == 2:
            return self.access(args[0], args[1])
        if name == "jinja.call" and args:
            return self.call(node)
        if name in ("jinja.no_filter", "jinja.no_test"):
            kind = "filter" if name == "jinja.no_filter" else "test"
            what = args[0].value if args and isinstance(args[0], ir.Const) else "?"
            self.report.raises.append(
                Raise(self.line, f"No {kind} named {what!r} found.", f"unknown-{kind}")
            )
            return None
        if name == "jinja.generation":
            self.report.uses_generation = True
        kinds = _kinds(name)
        if kinds and args:
            return self.filter_or_test(node, kinds)
        self.children(args, node.kwargs)
        return None

    def access(self, obj: Any, key: Any) -> Optional[tuple]:
        """``obj.key`` / ``obj[key]``: a field for a constant key, the same list for a slice."""
        base = self.expr(obj)
        if (
            isinstance(key, ir.Const)
            and isinstance(key.value, (str, int))
            and not isinstance(key.value, bool)
        ):
            return self.field(base, key.value)
        if isinstance(key, ir.Helper) and key.name == "builtins.slice":
            self.children(key.args)
            return base
        self.expr(key)
        return None

    def filter_or_test(self, node: ir.Helper, kinds: frozenset) -> Optional[tuple]:
        args = node.args
        base = self.expr(args[0], safe=bool(kinds & _SAFE_OPERAND))
        self.children(args[1:], node.kwargs)
        if kinds & {"filter:selectattr", "filter:rejectattr"}:
            attr = _str_consts(args[1]) if len(args) > 1 else []
            element = self.field(base + ("[]",), attr[0]) if base is not None and attr else None
            test = _str_consts(args[2]) if len(args) > 2 else []
            if (
                element
                and element[-1] == "role"
                and len(args) > 3
                and test
                and test[0] in _EQ_TESTS
            ):
                self.report.roles.update(_str_consts(args[3]))
        if "filter:map" in kinds and base is not None:
            for key, value in node.kwargs:
                for attr in _str_consts(value) if key == "attribute" else ():
                    self.field(base + ("[]",), attr)
        if kinds & _SAME_VALUE:
            return base
        if kinds & _ELEMENT and base is not None:
            return base + ("[]",)
        return None

    def call(self, node: ir.Helper) -> Optional[tuple]:
        func, args, kwargs = node.args[0], node.args[1:], node.kwargs
        target = self.origin.get(func.ident) if isinstance(func, ir.Name) else None
        if (
            target == "raise_exception"
            and isinstance(func, ir.Name)
            and func.ident not in self.assigned
        ):
            self.report.globals_used.add("raise_exception")
            message = _message_text(args[0]) if args else ""
            self.report.raises.append(Raise(self.line, message))
            self.children(args, kwargs)
            return None
        if (
            isinstance(func, ir.Helper)
            and func.name == "jinja.getattr_"
            and len(func.args) == 2
            and isinstance(func.args[1], ir.Const)
            and func.args[1].value in _METHODS
        ):  # a method call: x.get('k'), x.items(), s.strip()
            base = self.expr(func.args[0])
            self.children(args, kwargs)
            if (
                func.args[1].value == "get"
                and args
                and isinstance(args[0], ir.Const)
                and isinstance(args[0].value, str)
            ):
                return self.field(base, args[0].value)
            return None
        self.expr(func)
        self.children(args, kwargs)
        return None


def _message_text(node: Any) -> str:
    """A raise message: constant parts as they are, anything else as ``{...}``."""
    if isinstance(node, ir.Const):
        return node.value if isinstance(node.value, str) else str(node.value)
    if isinstance(node, ir.Helper) and node.name == "jinja.concat":
        return "".join(_message_text(a) for a in node.args)
    if (
        isinstance(node, ir.Helper)
        and node.name in ("jinja.to_str", "builtins.str")
        and len(node.args) == 1
    ):
        return _message_text(node.args[0])
    if isinstance(node, ir.BinOp) and node.op == "+":
        return _message_text(node.left) + _message_text(node.right)
    return "{...}"


# ----------------------------------------------------------------------------- capabilities


def _capabilities(report: Report) -> None:
    caps: dict[str, list[str]] = {c: [] for c in CAPABILITIES}
    content_types = report.capabilities.pop("_content_types", [])
    fields = report.message_fields
    variables = report.variables
    go = report.dialect == "go"
    for role, cap in (("system", "system_role"), ("developer", "system_role"), ("tool", "tool_results"),
                      ("ipython", "tool_results"), ("function", "tool_results")):  # fmt: skip
        if role in report.roles:
            caps[cap].append(f"handles role {role!r}")
    if go and "System" in variables:
        caps["system_role"].append("reads .System")
    for var in ("tools", "custom_tools", "Tools"):
        if var in variables:
            caps["tools"].append(f"reads {var}")
    for f in ("tool_calls", "ToolCalls", "function_call"):
        if f in fields:
            caps["tool_calls"].append(f"reads message field {f}")
    for f in ("tool_call_id", "ToolCallID", "ToolName", "tool_name"):
        if f in fields:
            caps["tool_results"].append(f"reads message field {f}")
    for f in REASONING_FIELDS + ("Thinking",):
        if f in fields:
            caps["reasoning"].append(f"reads message field {f}")
    for var in REASONING_VARS + ("Think", "ThinkLevel", "IsThinkSet"):
        if var in variables:
            caps["reasoning"].append(f"reads {var}")
    if "documents" in variables:
        caps["documents"].append("reads documents")
    if "add_generation_prompt" in variables:
        caps["generation_prompt"].append("reads add_generation_prompt")
    if any(p.startswith("messages[].content[]") for p in report.fields):
        caps["content_parts"].append("reads parts of message content")
    for t in sorted(set(content_types)):
        caps["content_parts"].append(f"compares a content type to {t!r}")
    if report.uses_generation:
        caps["generation_spans"].append("{% generation %} marks assistant text")
    report.capabilities = caps


# ----------------------------------------------------------------------------- Go (Ollama)

#: Ollama's template data (template.Values / the legacy Prompt mode) and message fields.
GO_TOP = (
    "System",
    "Prompt",
    "Response",
    "Suffix",
    "Messages",
    "Tools",
    "Think",
    "ThinkLevel",
    "IsThinkSet",
)
GO_MESSAGE = ("Role", "Content", "Thinking", "Images", "ToolCalls", "ToolName", "ToolCallID")
#: Helpers reading a field chain: (receiver, name or names, ...).
_GO_FIELD_HELPERS = frozenset(
    "gotmpl." + h
    for h in (
        "field",
        "field_of_elem",
        "field_path",
        "print_field",
        "print_field_of_elem",
        "print_field_path",
        "method_call",
        "length_path",
        "string_arg_path",
        "index_arg_path",
    )
)


def _go_report(report: Report, module: ir.Module) -> None:
    meta = dict(module.meta)
    report.mode = str(meta.get("GO_MODE", ""))
    names: list[str] = []
    roles: set[str] = set()
    fails: list[Raise] = []
    line = 0
    stack: list[Any] = [module.body]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(reversed(node))
            continue
        if not isinstance(node, ir.Node):
            continue
        if getattr(node, "span", (0, 0))[0]:
            line = node.span[0]  # type: ignore[attr-defined]
        if isinstance(node, ir.Helper):
            if node.name in _GO_FIELD_HELPERS:
                if len(node.args) > 1 and isinstance(node.args[1], ir.Const):
                    value = node.args[1].value
                    names += list(value) if isinstance(value, tuple) else [value]
            elif node.name == "gotmpl.fail" and node.args and isinstance(node.args[0], ir.Const):
                fails.append(Raise(line, str(node.args[0].value), "exec-error"))
            elif node.name in ("gotmpl.eq", "gotmpl.ne") and any(_is_go_role(a) for a in node.args):
                roles.update(c for a in node.args for c in _str_consts(a))
        for f in node.__dataclass_fields__:  # type: ignore[attr-defined]
            if f != "span":
                stack.append(getattr(node, f))
    for n in dict.fromkeys(names):
        if n in GO_TOP:
            report.variables[n] = Variable(n, False)
        elif n in GO_MESSAGE:
            report.fields.add(f"messages[].{_go_snake(n)}")
        else:
            report.fields.add(n)
    report.roles = roles
    report.raises = fails


def _is_go_role(node: Any) -> bool:
    if isinstance(node, ir.CondExpr):  # the Go lowering's direct read of a view type's field,
        node = node.orelse  # the field helper otherwise
    return (
        isinstance(node, ir.Helper)
        and node.name.startswith("gotmpl.field")
        and len(node.args) > 1
        and isinstance(node.args[1], ir.Const)
        and node.args[1].value in ("Role", ("Role",))
    )


def _go_snake(name: str) -> str:
    return {"ToolCalls": "tool_calls", "ToolName": "tool_name", "ToolCallID": "tool_call_id"}.get(
        name, name.lower()
    )
