"""The segment emitter: IR -> a module whose ``render_segments(context)`` returns segments.
Long because it is one emitter (a subclass of ``emit.Emitter``) plus the static analyses its
labels need (region reads, assigned names, loop exits); splitting them would scatter one idea.

The segment render computes exactly the values ``render`` computes, with the same helper
calls in the same order (the statements are the plain emitter's), and keeps beside each
value a *label* (``runtime.segments``): which context paths it depends on. Labels are
computed from a compile-time reading of each expression: context reads, constant-key
attribute and item reads (which narrow a path), loop items (whose path the container
registry finds by identity at run time); every other operation joins its operands' labels.
Control flow is labelled as well (``_pc``): a test's label joins every assignment made under
it, the variables a branch not taken would have assigned, and the segments it emits
(``cond``); a loop's shape labels its body; ``break``/``continue`` raise the loop's label.

Segments: each text run and each output is one segment; an output that is a concatenation
(``+``, ``~``) is split at its parts (checked at run time: only when every part is a str, so
errors and values stay the plain render's). Functions (macros, call blocks, recursive loops,
``{% block %}`` bodies, Go's defined templates) run as the plain emitter writes them: their
output is one segment labelled with everything they read (a Go template: its argument). An
autoescaped output is one segment (its escaping is one operation on all its parts); include,
import and extends fail as ``render`` fails (no loader). The plain ``render`` and its module are
untouched: this is a second module.

Go: the data is the value at the empty path (``runtime.segments.ROOT``); field reads
(``field``/``print_field``/``field_path`` and the direct reads of Ollama's view types) and
constant ``index`` keys narrow it, a method (``.ToMap``) does not; ``len`` reads a shape; the
type test of a direct view read adds nothing (both branches read the value it tests); loop
items are found below the data (``runtime.segments.GoRegistry``).
"""

from __future__ import annotations

import ast
from typing import Any, Optional

from tmpl2py.runtime.go import ollama

from . import ir
from .emit import Emitter, const_node, func_name, unparse
from .errors import attached_to
from .gotmpl.lower import HELPER_FUNCS
from .passes import pipeline
from .passes.typed_calls import GLOBAL_CALLS

#: attribute names that are methods of the data types: ``x.split`` is not a data path
METHOD_NAMES = frozenset(
    n for t in (str, dict, list, tuple, int, float) for n in dir(t) if not n.startswith("_")
)
#: loop attributes that depend only on the iterable's length
SHAPE_LOOP_ATTRS = ir.LOOP_SCALAR_ATTRS
RESOLVERS = frozenset({"jinja.resolve", "jinja.resolve_top", "jinja.resolve_missing"})
ACCESSORS = frozenset({"jinja.getattr_", "jinja.getitem"})
STATEFUL_GLOBALS = frozenset({"cycler", "joiner"})
STR_WRAPPERS = frozenset({"jinja.to_str", "builtins.str", "gotmpl.to_str"})
#: helpers whose value is their argument's (a name looked up) or its items (Go's range over a
#: slice, or a map's values by sorted key, with their keys): labelled as the argument
IDENTITY_HELPERS = frozenset({"jinja.load_name", "gotmpl.range_values", "gotmpl.range_pairs"})

#: Go: helpers whose value is the data itself, at the same paths (JSON numbers made float64;
#: the legacy mode's last turn), and the one test of the run's mode (no data in it)
GO_ROOTS = frozenset({"gotmpl.plain_data", "ollama.cut_data"})
GO_NO_DATA = frozenset({"ollama.is_cut_run"})
#: Go field reads ``(receiver, name or names)``: a field name narrows the receiver's path
GO_FIELDS = frozenset(
    {
        "gotmpl.field",
        "gotmpl.field_of_elem",
        "gotmpl.print_field",
        "gotmpl.print_field_of_elem",
        "gotmpl.field_path",
        "gotmpl.print_field_path",
    }
)
#: methods of the Go values a template sees (``.Properties.ToMap``): a read of one is a value
#: computed from the whole receiver, not a path below it
GO_METHOD_NAMES = frozenset(
    m for v in vars(ollama).values() if isinstance(v, type) for m in getattr(v, "go_methods", ())
)

SEGMENTS_RUNTIME = "tmpl2py.runtime.segments"
_E = "_E"  # the empty label's name in generated code
_TOP = "_TOP"


class SegmentEmitter(Emitter):
    def __init__(self, module: ir.Module) -> None:
        super().__init__()
        self.tracked = True  # emitting the segment function itself (not a nested function)
        self.sites: list[tuple] = []
        self.site_index: dict[tuple, int] = {}
        self.orgw = "_ow"
        self.buffers = ("_out", "_org")
        self.loops: list[tuple[str, frozenset]] = []  # (loop pc name, names the loop assigns)
        self.pending: dict[int, list[str]] = {}  # block (id) -> lines that open it
        self.local_labels: dict[str, str] = {}  # compiler local -> its label expression
        self.capture_labels: dict[int, str] = {}  # Capture (id) -> its label's local
        self.funcs = {n.ident: n for n in ir.walk(module.body) if isinstance(n, ir.FuncDef)}
        self.bound = {n.temp: n.value for n in ir.walk(module.body) if isinstance(n, ir.Bind)}
        self.func_labels: dict[str, str] = {}
        self.join_parts: dict[str, tuple] = {}  # a join's source -> the labels it joins
        self.derived_from: dict[str, str] = {}  # a computed value's label -> its operands' join
        self.inline = _inlinable_generations(module.body, self.funcs)
        self.shadowed = _tracked_names(module.body).union(
            *(_tracked_names(self.funcs[i].body) for i in self.inline)
        )
        self.ns_opaque = _ns_targets_in_funcs(module.body)
        self.stateful = bool(_context_names(module.body) & STATEFUL_GLOBALS)
        self.go = module.dialect == "go"
        self.loop_private = _loop_private(module.body)

    # ------------------------------------------------------------------ labels

    def shadow(self, ident: str) -> str:
        return f"_s_{ident}"

    def site(self, node: Any, kind: str, ops: tuple = ()) -> int:
        line = node.span[0] if getattr(node, "span", None) else 0
        key = (line, kind, ops)
        if key not in self.site_index:
            self.site_index[key] = len(self.sites)
            self.sites.append(key)
        return self.site_index[key]

    def rt(self, name: str) -> str:
        """A function or constant of ``runtime.segments`` (imported as ``_sg_<name>``)."""
        self.imports.setdefault(SEGMENTS_RUNTIME, set()).add(f"{name} as _sg_{name}")
        return f"_sg_{name}"

    def join(self, labels: list[Optional[str]]) -> Optional[str]:
        found: list[str] = []
        for lab in labels:  # nested joins flattened, repeated labels once
            for part in self.join_parts.get(lab, (lab,)) if lab is not None else ():
                if part not in found:
                    found.append(part)
        if not found:
            return None
        if _TOP in found:
            return _TOP
        if len(found) == 1:
            return found[0]
        src = f"(\"j\", {', '.join(found)})"
        self.join_parts[src] = tuple(found)
        return src

    def derived(self, labels: list[Optional[str]]) -> Optional[str]:
        """The label of a value *computed* from these (a filter's result, a literal container,
        an operator's): the join, never the same object as one of them, so that reading a
        key of it does not narrow a path (``[messages][0]`` is all of ``messages``, not
        ``messages[0]``; ``(messages|last).content`` reads some message's content)."""
        found = self.join(labels)
        if found is None or found == _TOP or found in self.join_parts:
            return found  # a join of several has no path of its own already
        wrapped = f'("j", {found})'
        self.derived_from[wrapped] = found
        return wrapped

    def flat(self, label: str) -> str:
        """Source of the set of paths ``label`` names (``runtime.segments.flat``)."""
        parts = self.join_parts.get(label, (label,))
        return f"(\"j\", {', '.join(parts)})"

    def label(self, node: Any) -> Optional[str]:
        """Python source of ``node``'s label (``None``: statically empty)."""
        method = getattr(self, "l_" + type(node).__name__, None)
        if method is None:
            children = [self.label(v) for v in _expr_children(node)]
            if isinstance(node, (ir.BoolOp, ir.Starred)):  # one of the operands itself
                return self.join(children)
            return self.derived(children)
        return method(node)

    def label_or_empty(self, node: Any) -> str:
        return self.label(node) or _E

    def l_Const(self, node: ir.Const) -> Optional[str]:
        return None

    l_Hoisted = l_Ref = l_Const

    def l_Name(self, node: ir.Name) -> Optional[str]:
        if node.ident in self.ns_opaque:
            return _TOP
        if node.ident in self.shadowed:
            return self.shadow(node.ident)
        if node.ident in self.funcs:
            return self.func_label(node.ident)
        return _TOP

    def l_Local(self, node: ir.Local) -> Optional[str]:
        if node == ir.TOP_OUTPUT:
            return None
        if self.go and node.ident == "context":  # Go's data: the root of every path
            return self.rt("ROOT")
        if self.go and node.ident in self.funcs:  # a defined template (its output: its dot's)
            return None
        if node.ident in self.bound:  # a value kept by a ``Bind``: that value's label
            return self.label(self.bound[node.ident])
        return self.local_labels.get(node.ident, _TOP)

    def l_Bind(self, node: ir.Bind) -> Optional[str]:
        return self.label(node.value)

    def l_ContextGet(self, node: ir.ContextGet) -> Optional[str]:
        return f"{self.rt('ctx')}(context, {unparse(const_node(node.name))})"

    def l_Starred(self, node: ir.Starred) -> Optional[str]:
        return self.label(node.value)

    def narrowed(self, obj: Any, key: Any, attr: bool = False) -> Optional[str]:
        item = _literal_item(obj, key, attr)
        if item is not None:  # ``[a, b][0]``, ``{"k": a}.k``: the item's own label
            return self.label(item)
        base = self.label(obj)
        if base is None or base == _TOP:
            return base
        index = _constant_key(key)
        if index is not None and _narrowable(index):
            if type(index) is int and index < 0:  # from the end: some item of the list
                return f"(\"n\", {base}, {self.rt('WILD')})"
            return f'("n", {base}, {unparse(const_node(index))})'
        return self.join([self.flat(base), self.label(key)])

    def l_Helper(self, node: ir.Helper) -> Optional[str]:
        args = node.args
        if self.go:
            found = self.go_helper(node)
            if found is not NotImplemented:
                return found
        if node.name in RESOLVERS and len(args) == 2 and isinstance(args[1], ir.Const):
            return f"{self.rt('ctx')}(context, {unparse(const_node(args[1].value))})"
        if node.name in ACCESSORS and len(args) == 2 and not node.kwargs:
            if isinstance(args[0], ir.Local) and args[0].ident in self.local_labels:
                return self.loop_attr(args[0], args[1])
            return self.narrowed(args[0], args[1], node.name == "jinja.getattr_")
        if node.name == "jinja.subscript" and len(args) == 2:
            base = self.label(args[0])
            if base is None or base == _TOP:
                return self.join([base, self.label(args[1])])
            return self.join([f'("s", {base})', self.label(args[1])])
        if node.name in IDENTITY_HELPERS and len(args) >= 1:
            return self.join([self.label(a) for a in args])
        parts = [self.label(a) for a in args] + [self.label(v) for _, v in node.kwargs]
        if self.stateful and node.name == "jinja.call":
            parts.append(_TOP)
        return self.derived(parts)

    def go_narrow(self, obj: Any, keys: tuple) -> Optional[str]:
        """The label of ``obj.A.B`` (Go fields, or constant ``index`` keys): each data key
        narrows the path; a method (``.ToMap``) makes a value of the whole receiver."""
        base = self.label(obj)
        for key in keys:
            if base is None or base == _TOP:
                return base
            if type(key) is str and key in GO_METHOD_NAMES or not _narrowable_go(key):
                base = self.flat(base)
            elif type(key) is int and key < 0:
                base = f"(\"n\", {base}, {self.rt('WILD')})"
            else:
                base = f"(\"n\", {base}, {unparse(const_node(key))})"
        return base

    def go_helper(self, node: ir.Helper) -> Any:
        """Labels of the Go helpers that read paths (``NotImplemented``: an ordinary one, its
        label the join of its operands')."""
        name, args = node.name, node.args
        extra = [self.label(v) for _, v in node.kwargs]
        if name in GO_NO_DATA:
            return None
        if name in GO_ROOTS and len(args) == 1:
            return self.label(args[0])
        if name in GO_FIELDS and len(args) == 2 and isinstance(args[1], ir.Const):
            keys = args[1].value if type(args[1].value) is tuple else (args[1].value,)
            return self.join([self.go_narrow(args[0], keys)] + extra)
        if name == "gotmpl.index" and args:
            keys = tuple(_constant_key(a) for a in args[1:])
            if all(k is not None for k in keys):
                return self.join([self.go_narrow(args[0], keys)] + extra)
        if name in ("gotmpl.length", "gotmpl.length_path") and args:
            if name == "gotmpl.length":
                base, rest = self.label(args[0]), args[1:]
            elif isinstance(args[1], ir.Const) and type(args[1].value) is tuple:
                base, rest = self.go_narrow(args[0], args[1].value), args[2:]
            else:
                return NotImplemented
            if base is not None and base != _TOP:
                base = f'("h", {base})'  # its length: the container's shape only
            return self.join([base] + [self.label(a) for a in rest] + extra)
        return NotImplemented

    def l_CondExpr(self, node: ir.CondExpr) -> Optional[str]:
        """A Go view read (``x.Role if type(x) is TemplateMessage else print_field(x,
        "Role")``): both branches read ``x`` and narrow its path, so any change to ``x``'s
        type is a change at a path their label names: the type test adds nothing."""
        if _fast_path(node):  # ``typed_calls`` / ``method_calls``: the general call's own value
            return self.label(node.orelse)
        body, orelse = self.label(node.body), self.label(node.orelse)
        if self.go and _type_test(node.test) is not None and body and orelse:
            name = _type_test(node.test)
            if all(_mentions(b, name) for b in (node.body, node.orelse)):
                return self.join([body, orelse])
        return self.join([self.label(node.test), body, orelse])

    def loop_attr(self, loop: ir.Local, attr: Any) -> Optional[str]:
        if isinstance(attr, ir.Const) and attr.value in SHAPE_LOOP_ATTRS:
            return self.local_labels[loop.ident]
        return self.local_labels.get(loop.ident + "*", _TOP)

    def l_LoopAttr(self, node: ir.LoopAttr) -> Optional[str]:
        if isinstance(node.loop, ir.Local) and node.loop.ident in self.local_labels:
            return self.loop_attr(node.loop, ir.Const(node.attr))
        if self.go:  # a field of one of Ollama's view types, read directly
            return self.go_narrow(node.loop, (node.attr,))
        return _TOP

    def l_DictLookup(self, node: ir.DictLookup) -> Optional[str]:
        return self.narrowed(node.bind if node.bind is not None else node.obj, node.key)

    def l_CallFunc(self, node: ir.CallFunc) -> Optional[str]:
        return self.derived([self.func_label(node.ident)] + [self.label(a) for a in node.args])

    def l_CallValue(self, node: ir.CallValue) -> Optional[str]:
        parts = [self.label(node.func)] + [self.label(a) for a in node.args]
        parts += [self.label(v) for _, v in node.kwargs]
        if self.stateful:
            parts.append(_TOP)
        return self.derived(parts)

    def l_Capture(self, node: ir.Capture) -> Optional[str]:
        return self.capture_labels.get(id(node), _TOP)

    def func_label(self, ident: str) -> Optional[str]:
        """Everything a function (macro) reads, at its call: the label of its output."""
        if ident not in self.func_labels:
            self.func_labels[ident] = _TOP  # a recursive function: bounded by TOP meanwhile
            self.func_labels[ident] = self.region_label(self.funcs[ident]) or _E
        found = self.func_labels[ident]
        return None if found == _E else found

    def region_label(self, node: Any) -> Optional[str]:
        """The label of everything code under ``node`` can read (context names, outer
        variables, other functions): for code that runs without labels of its own."""
        bound = _bound_names(node)
        parts: list[Optional[str]] = []
        for n in ir.walk(node):
            if isinstance(n, ir.ContextGet):
                parts.append(self.l_ContextGet(n))
            elif isinstance(n, ir.Helper) and n.name in RESOLVERS:
                parts.append(self.l_Helper(n))
            elif isinstance(n, ir.Name) and n.ident not in bound:
                parts.append(self.l_Name(n))
            elif isinstance(n, ir.CallFunc) and n.ident not in bound:
                parts.append(self.func_label(n.ident) if n.ident in self.funcs else _TOP)
            elif isinstance(n, ir.Local) and n.ident in self.local_labels:
                parts.append(self.local_labels.get(n.ident + "*", _TOP))
        if self.stateful:
            parts.append(_TOP)
        return self.join(sorted(set(p for p in parts if p is not None)))

    # ------------------------------------------------------------------ writes

    def record(self, site: int, label: Optional[str]) -> None:
        # printed, a value computed from one path is that path's text with the site's
        # operations (``m.content|trim``: source ``messages[i].content``, ops ``trim``)
        label = self.derived_from.get(label, label)  # type: ignore[arg-type]
        self.line(f"{self.orgw}(({site}, {label or 'None'}, _pc))")

    def s_Text(self, node: ir.Text) -> None:
        super().s_Text(node)
        if self.tracked:
            self.record(self.site(node, "template"), None)

    def s_Output(self, node: ir.Output) -> None:
        if not self.tracked:
            super().s_Output(node)
            return
        expr = node.expr
        if isinstance(expr, ir.CallFunc) and expr.ident in self.into:
            buf = self.fresh("qm")
            args = "".join(", " + self.src(a) for a in expr.args)
            self.line(f"{buf} = []")
            self.line(f"{func_name(expr.ident)}({buf}.append{args})")
            self.line(f'{self.writer}("".join({buf}))')
            self.record(self.site(node, "data", _ops(expr)), self.label(expr))
            return
        if _is_generation(expr) or _generation_call(expr) in self.inline:
            self.generation(node)
            return
        inner = expr.args[0] if _is_str_wrapper(expr) else expr
        if isinstance(inner, ir.BinOp) and inner.op == "+":
            self.split_sum(node, expr, inner)
            return
        if isinstance(inner, ir.Helper) and inner.name == "jinja.concat" and not inner.kwargs:
            if not any(isinstance(a, ir.Starred) for a in inner.args):
                self.split_concat(inner, node)
                return
        if isinstance(expr, ir.Const) and type(expr.value) is str:
            super().s_Output(node)
            self.record(self.site(node, "template"), None)
            return
        value = self.src(expr)
        self.line(f"{self.writer}({value})")
        self.record(self.site(node, "data", _ops(expr)), self.label(expr))

    def part_site(self, part: Any, parent: Any) -> int:
        if isinstance(part, ir.Const) and type(part.value) is str:
            return self.site(part if part.span[0] else parent, "template")
        return self.site(part if part.span[0] else parent, "data", _ops(part))

    def split_concat(self, node: ir.Helper, output: ir.Output) -> None:
        """``a ~ b ~ c``: every operand evaluated in order, then each printed (``concat``)."""
        temps = []
        for arg in node.args:
            temp = self.fresh("qp")
            self.line(f"{temp} = {self.src(arg)}")
            temps.append(temp)
        to_str = self.helper_name("builtins.str")
        for arg, temp in zip(node.args, temps):
            self.line(f"{self.writer}({to_str}({temp}))")
            self.record(self.part_site(arg, output), self.label(arg))

    def split_sum(self, node: ir.Output, expr: Any, total: ir.BinOp) -> None:
        """``a + b + c`` evaluated exactly as Python does (operands and additions in order),
        written part by part when every part is a str, else as one value."""
        parts: list[tuple[str, Any]] = []
        result = self.sum_into(total, parts)
        checks = [f"type({t}) is str" for t, p in parts if not _known_str(p)]
        wrap = self.helper_name("builtins.str") if expr is not total else ""
        if checks:
            self.line(f"if {' and '.join(checks)}:")
            self.indent += 1
        for temp, part in parts:
            self.line(f"{self.writer}({temp})")
            self.record(self.part_site(part, node), self.label(part))
        if checks:
            self.indent -= 1
            self.line("else:")
            self.indent += 1
            self.line(f"{self.writer}({wrap}({result}))")
            self.record(
                self.site(node, "data", _ops(expr)),
                self.join([self.label(p) for _, p in parts]),
            )
            self.indent -= 1

    def sum_into(self, node: Any, parts: list) -> str:
        if isinstance(node, ir.BinOp) and node.op == "+":
            left = self.sum_into(node.left, parts)
            right = self.sum_into(node.right, parts)
            temp = self.fresh("qr")
            self.line(f"{temp} = {left} + {right}")
            return temp
        temp = self.fresh("qp")
        self.line(f"{temp} = {self.src(node)}")
        parts.append((temp, node))
        return temp

    def generation(self, node: ir.Output) -> None:
        """``{% generation %}``: its body's segments kept, its span recorded as ``render``
        records it (the top-level text before it is the same)."""
        helper = node.expr
        capture = helper.args[0]
        if isinstance(capture, ir.CallFunc):  # the block's body, inlined (see __init__)
            capture = ir.Capture(self.funcs[capture.ident].body, span=node.span)
        assert isinstance(capture, ir.Capture)
        buf, org = self.tracked_capture(capture)
        rest = "".join(", " + self.src(a) for a in helper.args[1:])
        self.line(f'{self.helper_name(helper.name)}("".join({buf}){rest})')
        out, orgs = self.buffers
        self.line(f"{out}.extend({buf})")
        self.line(f"{orgs}.extend({org})")

    def tracked_capture(self, node: ir.Capture) -> tuple[str, str]:
        buf = self.fresh("qc")
        org = buf + "o"
        self.line(f"{buf} = []")
        self.line(f"{org} = []")
        saved = self.writer, self.orgw, self.buffers
        self.writer, self.orgw, self.buffers = f"{buf}.append", f"{org}.append", (buf, org)
        self.block(node.body, allow_empty=True)
        self.writer, self.orgw, self.buffers = saved
        self.capture_labels[id(node)] = f"{buf}L"
        self.line(f'{buf}L = ("c", {org}, _pc)')
        return buf, org

    def x_Capture(self, node: ir.Capture) -> ast.expr:
        if not self.tracked:
            return super().x_Capture(node)
        buf, _ = self.tracked_capture(node)
        return self.joined(buf, "a block's text")

    # ------------------------------------------------------------------ statements

    def block(self, body: tuple, allow_empty: bool = False) -> None:
        for text in self.pending.pop(id(body), ()):
            self.line(text)
        super().block(body, allow_empty)

    def assign_label(self, target: Any, label: str) -> None:
        names = _target_names(target)
        if isinstance(target, ir.Name):
            self.line(f'{self.shadow(target.ident)} = ("p", {label}, _pc)')
            return
        flat = f'("j", {label}, _pc)'
        self.line(" = ".join(self.shadow(n) for n in names) + f" = {flat}")

    def s_Assign(self, node: ir.Assign) -> None:
        super().s_Assign(node)
        if self.tracked:
            self.assign_label(node.target, self.label_or_empty(node.value))
            if self.go and _is_go_root(node.value) and isinstance(node.target, ir.Name):
                # Go's data (dot, before any range): loop items are found below it
                self.line(f"_root = {node.target.ident}")

    def s_ExprStmt(self, node: ir.ExprStmt) -> None:
        super().s_ExprStmt(node)
        expr = node.expr
        if self.tracked and isinstance(expr, ir.Helper) and expr.name in ("jinja.ns_set", "jinja.ns_store"):
            target = expr.args[0]
            if isinstance(target, ir.Name) and target.ident in self.shadowed:
                s = self.shadow(target.ident)
                value = self.label_or_empty(expr.args[2])
                self.line(f'{s} = ("j", {s}, {value}, _pc)')

    def upgrade(self, names: frozenset, label: str) -> None:
        """Labels of the variables a decision may assign, joined with its label (a loop's
        own targets need none: each iteration labels them before any read)."""
        for ident in sorted((names & self.shadowed) - self.loop_private):
            s = self.shadow(ident)
            self.line(f'{s} = ("p", {s}, {label})')

    @property
    def binds_in_tests(self) -> bool:  # type: ignore[override]
        """Not in the tracked function: there an assignment's value is labelled where it is
        written (:meth:`upgrade`), which a test that assigns would hide."""
        return not self.tracked

    def s_If(self, node: ir.If, keyword: str = "if", bound: Optional[tuple] = None) -> None:
        if not self.tracked or keyword != "if":
            super().s_If(node, keyword, bound)
            return
        tests, n = [], node
        while True:
            tests.append(n.test)
            if len(n.orelse) == 1 and isinstance(n.orelse[0], ir.If):
                n = n.orelse[0]
                continue
            break
        test = self.join([self.label(t) for t in tests])
        if test is None:  # nothing in the test depends on data
            super().s_If(node)
            return
        saved, label = self.fresh("qpc"), self.fresh("qt")
        self.line(f"{saved} = _pc")
        self.line(f"{label} = {test}")
        self.upgrade(_assigned(node), label)
        self.line(f'_pc = ("j", _pc, {label})')
        super().s_If(node)
        if self.loops and _exits(node):  # the rest of the loop depends on this test
            self.line(f'{self.loops[-1][0]} = ("j", {self.loops[-1][0]}, {label})')
        else:
            self.line(f"_pc = {saved}")

    def s_For(self, node: ir.For) -> None:
        if not self.tracked:
            super().s_For(node)
            return
        if node.recursive:
            self.comment(node, "for")
            saved = self.tracked
            self.tracked = False
            self._recursive_for(node)
            self.tracked = saved
            self.record(self.site(node, "data", ()), self.region_label(node))
            return
        items, lpc, saved = self.fresh("qi"), self.fresh("qlpc"), self.fresh("qpc")
        self.line(f"{items} = {self.label_or_empty(node.iter)}")
        self.line(f"{saved} = _pc")
        extra = f", {items}" if node.filter is not None else ""
        if node.filter is not None:
            flt = self.region_label(node.filter)
            extra += f", {flt}" if flt else ""
        self.line(f'{lpc} = ("j", _pc, ("h", {items}){extra})')
        assigned = _assigned_in(node.body + node.else_) | _target_set(node.target)
        self.upgrade(assigned, lpc)
        for local in (node.loop, node.counter, node.last):
            if local:
                self.local_labels[local] = f'("j", {lpc})'
                self.local_labels[local + "*"] = f'("j", {items}, {lpc})'
        if isinstance(node.target, ir.Name):
            item = f'({self.item_tag()}, {node.target.ident}, {items}, {lpc})'
            opening = [f"_pc = {lpc}", f"{self.shadow(node.target.ident)} = {item}"]
        elif self.go and len(node.target.names) == 2 and all(
            isinstance(t, ir.Name) for t in node.target.names
        ):  # Go's range $k, $v: the key is the shape's, the element found as a loop item
            key, elem = node.target.names
            item = f'({self.item_tag()}, {elem.ident}, {items}, {lpc})'
            opening = [
                f"_pc = {lpc}",
                f'{self.shadow(key.ident)} = ("j", ("h", {items}), {lpc})',
                f"{self.shadow(elem.ident)} = {item}",
            ]
        else:
            names = " = ".join(self.shadow(n) for n in _target_names(node.target))
            opening = [f"_pc = {lpc}", f'{names} = ("j", {items}, {lpc})']
        self.pending[id(node.body)] = opening
        if node.else_:
            self.pending[id(node.else_)] = [f"_pc = {lpc}"]
        self.loops.append((lpc, assigned))
        super().s_For(node)
        self.loops.pop()
        self.line(f"_pc = {saved}")

    def item_tag(self) -> str:
        """The start of a loop item's label: the container registry's tag and root (found
        by identity when an origin is read: ``runtime.segments.evaluate``)."""
        return '"g", _root' if self.go else '"q", context'

    def loop_exit(self, word: str) -> None:
        if self.tracked and self.loops:
            lpc, assigned = self.loops[-1]
            self.line(f'{lpc} = ("j", {lpc}, _pc)')
            self.upgrade(assigned, "_pc")
        self.line(word)

    def s_Break(self, node: ir.Break) -> None:
        self.loop_exit("break")

    def s_Continue(self, node: ir.Continue) -> None:
        self.loop_exit("continue")

    def s_FuncDef(self, node: ir.FuncDef) -> None:
        saved, loops = self.tracked, self.loops
        self.tracked, self.loops = False, []
        super().s_FuncDef(node)
        self.tracked, self.loops = saved, loops
        if saved and node.wrap and node.ident in self.shadowed:
            # the name assigned elsewhere too (an ``undefined`` placeholder before it): from
            # here it is the macro, whose output is labelled by everything it reads
            self.line(f'{self.shadow(node.ident)} = ("p", {self.func_label(node.ident) or _E}, _pc)')

    # ------------------------------------------------------------------ module

    def segments_module(self, module: ir.Module, header: str, metadata: dict[str, Any]) -> str:
        self.into = {n.ident for n in ir.walk(module.body) if isinstance(n, ir.FuncDef) and n.into}
        self.indent = 1
        for line in ("_out = []", "_w = _out.append", "_org = []", "_ow = _org.append"):
            self.line(line)
        prologue_end = len(self.lines)
        bounded = self.fuel_try(module)  # the work bounds end here as in render
        body_start = len(self.lines)
        self.block(module.body, allow_empty=True)
        if bounded:
            self.fuel_epilogue(body_start, module.body)
        prologue = ["    _pc = _E"]
        if self.shadowed:
            names = " = ".join(self.shadow(n) for n in sorted(self.shadowed))
            prologue.append(f"    {names} = _E")
        if self.uses_top:
            prologue.append(f"    {ir.TOP_OUTPUT.ident} = _out")
        if self.start_values:
            prologue.append("    _get = context.get")
            start = self.helper_name("jinja.start_values")
        prologue += self.fuel_prologue()  # the work bounds count here as in render
        self.lines[prologue_end:prologue_end] = prologue
        self.line(f"return {self.rt('finish')}(_out, _org, _SITES, context, _PLAIN)")
        empty, top = self.rt("EMPTY"), self.rt("TOP")
        wrap = self.rt("plain_errors")
        out = [header, '"""Segment render of a chat template: ``render_segments(context)``."""', ""]
        for mod in sorted(self.imports):
            out.append(f"from {mod} import {', '.join(sorted(self.imports[mod]))}")
        out.append("")
        for key, value in metadata.items():
            out.append(f"{key} = {unparse(const_node(value))}")
        out.append(f"_E, _TOP = {empty}, {top}")
        out.append(f"_SITES = {unparse(const_node(tuple(self.sites)))}")
        out.append(
            "_PLAIN = None  # the plain render (set by the loader): its error when the output fails"
        )
        if self.start_values:
            targets = ", ".join(self.start_values.values())
            names = unparse(const_node(tuple(self.start_values)))
            targets = f"({targets},)" if len(self.start_values) == 1 else targets
            out.append(f"{targets} = {start}({names})")
        for value, name in self.hoisted.items():
            out.append(f"{name} = {value}")
        out += ["", "", "def render_segments(context: dict) -> list:"]
        out.extend(self.lines)
        # its errors raised by the plain render (their wording and positions)
        draws = ", draws=True" if _draws_random(module) else ""
        out += ["", "", f"render_segments = {wrap}(render_segments{draws})"]
        return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- analyses


def _expr_children(node: Any) -> list:
    out = []
    for _, value in ir.children(node):
        if isinstance(value, tuple):
            for v in value:
                if isinstance(v, tuple):  # keyword pairs, dict items
                    out.extend(x for x in v if isinstance(x, ir.Expr))
                elif isinstance(v, ir.Expr):
                    out.append(v)
        elif isinstance(value, ir.Expr):
            out.append(value)
    return out


def _draws_random(module: ir.Module) -> bool:
    """Whether the template can draw from ``random`` (the ``random`` filter, also by name
    through ``map``, or the ``lipsum`` global): its segment render's error is then the plain
    render's from the same generator state (``runtime.segments.plain_errors``)."""
    for node in ir.walk(module.body):
        if isinstance(node, ir.Helper) and node.name.endswith(".do_random"):
            return True
        if isinstance(node, ir.Const) and node.value in ("random", "lipsum"):
            return True
        if isinstance(node, (ir.Name, ir.ContextGet)) and getattr(node, "name", None) == "lipsum":
            return True
    return False


def _literal_item(obj: Any, key: Any, attr: bool = False) -> Any:
    """The item a constant key reads from a list, tuple or dict literal (None: not one; an
    attribute read ``attr`` of a name dicts have, ``{"items": x}.items``, is the method)."""
    index = _constant_key(key)
    if index is None or attr and hasattr(dict, str(index)):
        return None
    if isinstance(obj, (ir.ListLit, ir.TupleLit)) and type(index) is int:
        items = obj.items
        if any(isinstance(i, ir.Starred) for i in items) or not -len(items) <= index < len(items):
            return None
        return items[index]
    if isinstance(obj, ir.DictLit) and type(index) is str:
        found = [v for k, v in obj.items if isinstance(k, ir.Const) and k.value == index]
        if len(found) == 1 and all(isinstance(k, ir.Const) for k, _ in obj.items):
            return found[0]
    return None


def _is_go_root(value: Any) -> bool:
    """``context`` itself, or a value at the same paths (``GO_ROOTS``)."""
    if isinstance(value, ir.Helper) and value.name in GO_ROOTS and len(value.args) == 1:
        value = value.args[0]
    return isinstance(value, ir.Local) and value.ident == "context"


def _constant_key(key: Any) -> Any:
    """The value of a constant key (``-1`` arrives as a negated constant), else None."""
    if isinstance(key, ir.Const):
        return key.value
    if isinstance(key, ir.UnaryOp) and key.op == "-" and isinstance(key.operand, ir.Const):
        if type(key.operand.value) is int:
            return -key.operand.value
    return None


def _narrowable(key: Any) -> bool:
    if type(key) is int:
        return True
    return type(key) is str and key not in METHOD_NAMES


def _narrowable_go(key: Any) -> bool:
    return type(key) is int or type(key) is str


def _type_test(test: Any) -> Optional[str]:
    """The variable ``test`` checks the type of (``type(x) is C``, ``type(x) in (...)``)."""
    if (
        isinstance(test, ir.Compare)
        and len(test.ops) == 1
        and test.ops[0][0] in ("is", "in")
        and isinstance(test.left, ir.Helper)
        and test.left.name == "builtins.type"
        and len(test.left.args) == 1
        and isinstance(test.left.args[0], ir.Name)
    ):
        return test.left.args[0].ident
    return None


def _fast_path(node: ir.CondExpr) -> bool:
    """``node`` is a pass's fast path for one value, whose ``orelse`` (the general call)
    computes the same: ``v.m(args) if type(v) is T else <general>`` (``v`` a variable or a
    ``Bind``, ``T`` a builtin), ``v if type(v) is str else soft_str(v)``, or ``f(args) if f is
    G else call(f, args)`` (``G`` an environment global)."""
    test = node.test
    if not (isinstance(test, ir.Compare) and len(test.ops) == 1 and test.ops[0][0] == "is"):
        return False
    kind = test.ops[0][1]
    if not isinstance(kind, ir.Ref):
        return False
    left = test.left
    if isinstance(left, ir.Helper) and left.name == "builtins.type" and len(left.args) == 1:
        if kind.name not in ("builtins.str", "builtins.dict"):
            return False
        value = left.args[0]
        read = ir.Local(value.temp) if isinstance(value, ir.Bind) else value
        body = node.body
        if isinstance(body, ir.CallValue) and isinstance(body.func, ir.LoopAttr):
            body = body.func.loop
        return isinstance(read, (ir.Name, ir.Local)) and body == read
    return (
        kind.name in GLOBAL_CALLS.values()
        and isinstance(left, ir.Name)
        and isinstance(node.body, ir.CallValue)
        and node.body.func == left
    )


def _mentions(expr: Any, ident: str) -> bool:
    return any(isinstance(n, ir.Name) and n.ident == ident for n in ir.walk(expr))


def _is_str_wrapper(expr: Any) -> bool:
    return (
        isinstance(expr, ir.Helper)
        and expr.name in STR_WRAPPERS
        and len(expr.args) == 1
        and not expr.kwargs
        and not isinstance(expr.args[0], ir.Starred)
    )


def _generation_call(expr: Any) -> str:
    """The function a ``{% generation %}`` output calls for its body ("" if none)."""
    if (
        isinstance(expr, ir.Helper)
        and expr.name == "jinja.generation"
        and expr.args
        and isinstance(expr.args[0], ir.CallFunc)
        and not expr.args[0].args
    ):
        return expr.args[0].ident
    return ""


def _inlinable_generations(body: tuple, funcs: dict) -> frozenset:
    """Generation bodies (functions without parameters, called once, by the generation
    output of the same function, that return only at their end) that the segment function
    runs inline, labelled."""
    calls: dict = {}
    for n in _statements(body):
        if isinstance(n, ir.Output):
            ident = _generation_call(n.expr)
            if ident:
                calls[ident] = calls.get(ident, 0) + 1
    uses: dict = {}
    for n in ir.walk(body):
        if isinstance(n, ir.CallFunc) or (isinstance(n, ir.Name) and n.ident in funcs):
            uses[n.ident] = uses.get(n.ident, 0) + 1
    top = _top_functions(body)
    return frozenset(
        ident
        for ident, count in calls.items()
        if count == 1
        and uses.get(ident) == 1
        and ident in funcs
        and ident not in top_nested(funcs, top)
        and not funcs[ident].params
        and not funcs[ident].prologue
        and not funcs[ident].into
        and not _returns(funcs[ident].body)
    )


def _returns(body: tuple) -> bool:
    """Whether a function body returns early (jinja2's generator quirk: a caller body with an
    ``{% include %}`` returns a generator): inlined, it would return from the segment function."""
    return any(isinstance(n, ir.Return) for n in _statements(body))


def _top_functions(body: tuple) -> set:
    """Idents of the functions the segment function itself defines (not nested ones)."""
    out: set = set()
    stack = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, ir.FuncDef):
            out.add(n.ident)
            continue
        if isinstance(n, ir.Node):
            for _, v in ir.children(n):
                stack.extend(v if isinstance(v, tuple) else (v,))
    return out


def top_nested(funcs: dict, top: set) -> set:
    """Functions defined inside other functions (their bodies see those functions' locals)."""
    return set(funcs) - top


def _is_generation(expr: Any) -> bool:
    return (
        isinstance(expr, ir.Helper)
        and expr.name == "jinja.generation"
        and bool(expr.args)
        and isinstance(expr.args[0], ir.Capture)
    )


def _known_str(expr: Any) -> bool:
    from .passes.util import is_str

    return is_str(expr)


def _ops(expr: Any) -> tuple:
    """The operations applied to the data, innermost first: filters and method calls."""
    ops = []
    for n in ir.walk(expr):
        if isinstance(n, ir.Helper):
            module, _, fn = n.name.partition(".")
            if n.name in HELPER_FUNCS:  # a Go function
                ops.append(HELPER_FUNCS[n.name])
            elif module == "jinja_filters" and fn.startswith("do_"):
                ops.append(fn[3:])
            elif n.name == "jinja.call" and n.args:
                func = n.args[0]
                key = None
                if isinstance(func, ir.Helper) and func.name in ACCESSORS and len(func.args) == 2:
                    key = func.args[1]
                elif isinstance(func, ir.DictLookup):
                    key = func.key
                if isinstance(key, ir.Const) and type(key.value) is str:
                    ops.append(key.value)
    return tuple(reversed(ops))


def _target_names(target: Any) -> list:
    if isinstance(target, ir.Name):
        return [target.ident]
    out = []
    for t in target.names:
        out.extend(_target_names(t))
    return out


def _target_set(target: Any) -> frozenset:
    return frozenset(_target_names(target))


def _tracked_names(body: tuple) -> frozenset:
    """Idents assigned by the segment function itself (not inside nested functions)."""
    out: set = set()
    stack = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, ir.FuncDef):
            continue
        if isinstance(n, (ir.Assign, ir.For)):
            out.update(_target_names(n.target))
        if isinstance(n, ir.Node):
            for _, v in ir.children(n):
                stack.extend(v if isinstance(v, tuple) else (v,))
    return frozenset(out)


def _statements(body: tuple, into_loops: bool = True):
    """Statements under ``body`` (not inside nested functions; optionally not in loops)."""
    stack = list(body)
    while stack:
        n = stack.pop()
        if not isinstance(n, ir.Node) or isinstance(n, ir.FuncDef):
            continue
        yield n
        if isinstance(n, ir.For) and not into_loops:
            continue
        for _, v in ir.children(n):
            stack.extend(v if isinstance(v, tuple) else (v,))


def _assigned_in(body: tuple) -> frozenset:
    out: set = set()
    for n in _statements(body):
        if isinstance(n, (ir.Assign, ir.For)):
            out.update(_target_names(n.target))
        elif isinstance(n, ir.Helper) and n.name in ("jinja.ns_set", "jinja.ns_store") and n.args:
            if isinstance(n.args[0], ir.Name):
                out.add(n.args[0].ident)
    return frozenset(out)


def _assigned(node: ir.If) -> frozenset:
    return _assigned_in(node.body + node.orelse)


def _exits(node: ir.If) -> bool:
    """Whether a branch of ``node`` can leave the enclosing loop's iteration early."""
    return any(
        isinstance(n, (ir.Break, ir.Continue))
        for n in _statements(node.body + node.orelse, into_loops=False)
    )


def _loop_private(body: tuple) -> frozenset:
    """Idents that only a ``For`` assigns (as its target) and that are read only inside
    that loop's body: each iteration labels them before the body reads them, so the
    decisions around them never need to upgrade their labels. (Occurrences are counted:
    the IR may share a node.)"""
    assigned: set = set()  # (and the names a function reads: it may run after the loop)
    for n in ir.walk(body):
        if isinstance(n, ir.Assign):
            assigned.update(_target_names(n.target))
        elif isinstance(n, ir.FuncDef):
            assigned.update(_name_counts(n.body))
    total = _name_counts(body)
    out: set = set()
    for loop in ir.walk(body):
        if isinstance(loop, ir.For):
            inside = _name_counts((loop.target, loop.body))
            out.update(
                t
                for t in _target_names(loop.target)
                if t not in assigned and inside.get(t) == total.get(t)
            )
    return frozenset(out)


def _name_counts(node: Any) -> dict:
    counts: dict = {}
    for n in ir.walk(node):
        if isinstance(n, ir.Name):
            counts[n.ident] = counts.get(n.ident, 0) + 1
    return counts


def _ns_targets_in_funcs(body: tuple) -> frozenset:
    """Namespace variables that a function (macro) stores into: their labels are TOP."""
    out: set = set()
    for f in ir.walk(body):
        if isinstance(f, ir.FuncDef):
            for n in ir.walk(f.body):
                if isinstance(n, ir.Helper) and n.name in ("jinja.ns_set", "jinja.ns_store") and n.args:
                    if isinstance(n.args[0], ir.Name):
                        out.add(n.args[0].ident)
    return frozenset(out)


def _bound_names(node: Any) -> set:
    out: set = set()
    for n in ir.walk(node):
        if isinstance(n, (ir.Assign, ir.For)):
            out.update(_target_names(n.target))
        elif isinstance(n, ir.FuncDef):
            out.update(p.name.ident for p in n.params)
            out.add(n.ident)
    return out


def _context_names(body: tuple) -> set:
    out = set()
    for n in ir.walk(body):
        if isinstance(n, ir.ContextGet):
            out.add(n.name)
        elif isinstance(n, ir.Helper) and n.name in RESOLVERS and len(n.args) == 2:
            if isinstance(n.args[1], ir.Const):
                out.add(n.args[1].value)
    return out


def emit_segments(module: ir.Module, header: str, metadata: dict[str, Any]) -> str:
    """The segment module's Python source (not black-formatted)."""
    return SegmentEmitter(module).segments_module(module, header, metadata)


__all__ = ["emit_segments", "generate_segments", "segment_ir", "segment_passes"]


# ----------------------------------------------------------------------------- pipeline


def segment_ir(source: str, dialect: str, profile: str, name: str) -> ir.Module:
    """An IR to emit the segment function from when ``render``'s own IR is not at hand:
    ``pipeline.run``'s passes but ``merge_text`` (each text run one piece of the source). Every
    pass keeps values identical, so the values are ``render``'s. ``CompiledTemplate`` uses its
    final IR (``generate_segments(final=...)``)."""
    if dialect == "go":
        from .gotmpl.frontend import parse as parse_go

        return pipeline.run(parse_go(source, name, profile=profile), profile)
    from .jinja.frontend import parse as parse_jinja

    return segment_passes(parse_jinja(source, name))


#: passes the segment module leaves out: ``merge_text`` (each text run stays one piece of the
#: source); and of ``pipeline.BEFORE_EMIT``, :data:`_SEGMENT_FINAL_SKIPS`
_SEGMENT_SKIPS = frozenset({"merge_text"})


#: ``fstrings`` (the segment emitter splits a ``+`` chain at its operands), and ``list_items``
#: with it, folded in its traversal (each lookup keeps its path: ``messages[0]``)
_SEGMENT_FINAL_SKIPS = frozenset({"fstrings"})


def segment_passes(module: ir.Module) -> ir.Module:
    """The passes of ``segment_ir`` on a parsed (Jinja) module: ``pipeline.PASSES`` without
    :data:`_SEGMENT_SKIPS`."""
    from .jinja.lowering import check_loop_controls, check_unknown_names
    from .passes import scope

    check_unknown_names(module.body)
    check_loop_controls(module.body, in_loop=False)
    exact_undefined = scope.uses_identity(module)
    module = scope.resolve(module, exact_undefined)
    for step in pipeline.PASSES:
        if step.name not in _SEGMENT_SKIPS and not (step.shared_undefined and exact_undefined):
            module = step.run(module)
    return module


def generate_segments(
    source: str,
    dialect: str,
    profile: str,
    name: str,
    header: str = "",
    parsed: Optional[ir.Module] = None,
    final: Optional[ir.Module] = None,
) -> str:
    """The segment module's source for a template (raises ``CompileError`` as compiling does);
    ``header``: the module's header comment; ``parsed``: the template's module as the
    frontend made it, when the caller has it; ``final``: the IR ``render`` was emitted from
    (its passes already run), which is used as it is."""
    import hashlib

    with attached_to(source, name):
        if final is not None:
            module = final
        elif parsed is not None and dialect == "jinja":
            module = segment_passes(parsed)
        else:
            module = segment_ir(source, dialect, profile, name)
        sha = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
        metadata = {"TEMPLATE_NAME": name, "SOURCE_SHA256": sha}
        final = pipeline.before_emit(module, skip=_SEGMENT_FINAL_SKIPS)
        return emit_segments(final, header, metadata)
