"""Print IR as indented text, for tests and debugging (``python -m tmpl2py.compiler.ir_printer FILE``)."""

from __future__ import annotations

import sys
from typing import Any

from . import ir


def expr(node: Any) -> str:
    """One expression as a compact, Lisp-like string."""
    if isinstance(node, ir.Const):
        return repr(node.value)
    if isinstance(node, ir.Name):
        return f"{node.name}@{node.ident}" if node.ident else node.name
    if isinstance(node, ir.Local):
        return f"%{node.ident}"
    if isinstance(node, ir.Starred):
        return f"*{expr(node.value)}"
    if isinstance(node, ir.Helper):
        parts = [expr(a) for a in node.args] + [
            f"{k}={expr(v)}" if k is not None else f"**{expr(v)}" for k, v in node.kwargs
        ]
        return f"{node.name}({', '.join(parts)})"
    if isinstance(node, ir.Ref):
        return f"&{node.name}"
    if isinstance(node, ir.Hoisted):
        return f"once({expr(node.value)})"
    if isinstance(node, ir.ContextGet):
        return f"context[{node.name!r}]"
    if isinstance(node, ir.CallValue):
        parts = [expr(a) for a in node.args] + [
            f"{k}={expr(v)}" if k is not None else f"**{expr(v)}" for k, v in node.kwargs
        ]
        return f"call {expr(node.func)}({', '.join(parts)})"
    if isinstance(node, ir.CallFunc):
        return f"callfunc {node.ident}({', '.join(expr(a) for a in node.args)})"
    if isinstance(node, ir.DictLookup):
        kept = ""
        if node.cache or node.flag:
            kept = f" [{'again ' if node.again else ''}{node.cache or '-'} {node.flag or '-'}]"
        return f"dict-{node.mode}({expr(node.obj)}, {expr(node.key)}, {expr(node.fallback)}){kept}"
    if isinstance(node, ir.Bind):
        return f"(%{node.temp} := {expr(node.value)})"
    if isinstance(node, ir.LoopAttr):
        return f"{expr(node.loop)}.{node.attr}"
    if isinstance(node, ir.BinOp):
        return f"({expr(node.left)} {node.op} {expr(node.right)})"
    if isinstance(node, ir.UnaryOp):
        return f"({node.op}{expr(node.operand)})"
    if isinstance(node, ir.Not):
        return f"(not {expr(node.operand)})"
    if isinstance(node, ir.Compare):
        return "(" + expr(node.left) + "".join(f" {op} {expr(e)}" for op, e in node.ops) + ")"
    if isinstance(node, ir.BoolOp):
        return "(" + f" {node.op} ".join(expr(v) for v in node.values) + ")"
    if isinstance(node, ir.CondExpr):
        return f"({expr(node.body)} if {expr(node.test)} else {expr(node.orelse)})"
    if isinstance(node, ir.ListLit):
        return "[" + ", ".join(expr(i) for i in node.items) + "]"
    if isinstance(node, ir.TupleLit):
        return "(" + ", ".join(expr(i) for i in node.items) + ",)"
    if isinstance(node, ir.DictLit):
        return "{" + ", ".join(f"{expr(k)}: {expr(v)}" for k, v in node.items) + "}"
    if isinstance(node, ir.Capture):
        return "capture{" + "; ".join(dump(node.body).splitlines()) + "}"
    if isinstance(node, ir.Target):
        return "(" + ", ".join(expr(n) for n in node.names) + ")"
    return repr(node)


def dump(body: Any, indent: int = 0) -> str:
    """Statements, one per line, blocks indented by two spaces."""
    if isinstance(body, ir.Module):
        body = body.body
    pad = "  " * indent
    out: list[str] = []
    for node in body:
        if isinstance(node, ir.Text):
            out.append(f"{pad}text {node.text!r}")
        elif isinstance(node, ir.Output):
            out.append(f"{pad}out {expr(node.expr)}")
        elif isinstance(node, ir.Assign):
            out.append(f"{pad}set {expr(node.target)} = {expr(node.value)}")
        elif isinstance(node, ir.ExprStmt):
            out.append(f"{pad}do {expr(node.expr)}")
        elif isinstance(node, ir.If):
            out.append(f"{pad}if {expr(node.test)}")
            out.append(dump(node.body, indent + 1))
            if node.orelse:
                out.append(f"{pad}else")
                out.append(dump(node.orelse, indent + 1))
        elif isinstance(node, ir.For):
            extra = f" if {expr(node.filter)}" if node.filter is not None else ""
            loop = f" loop={node.loop}" if node.loop else ""
            out.append(
                f"{pad}for {expr(node.target)} in {expr(node.iter)}{extra}{loop}{' recursive' if node.recursive else ''}"
            )
            out.append(dump(node.body, indent + 1))
            if node.else_:
                out.append(f"{pad}else")
                out.append(dump(node.else_, indent + 1))
        elif isinstance(node, ir.FuncDef):
            params = ", ".join(
                expr(p.name) + (f"={expr(p.default)}" if p.default is not None else "")
                for p in node.params
            )
            out.append(f"{pad}def {node.name}@{node.ident}({params})")
            out.append(dump(node.body, indent + 1))
        elif isinstance(node, ir.Scoped):
            out.append(f"{pad}scope")
            out.append(dump(node.body, indent + 1))
        elif isinstance(node, (ir.Break, ir.Continue)):
            out.append(f"{pad}{type(node).__name__.lower()}")
        elif isinstance(node, ir.Return):
            out.append(f"{pad}return {expr(node.value)}")
        else:
            out.append(f"{pad}{node!r}")
    return "\n".join(line for line in out if line)


def main(argv: list[str]) -> int:
    from .build import parse
    from .passes import pipeline

    path = argv[0]
    dialect = "go" if path.endswith((".gotmpl", ".tmpl")) else "jinja"
    module = parse(open(path, encoding="utf-8").read(), dialect)
    if "--resolved" in argv:
        module = pipeline.run(module, profile=module.profile)
    print(dump(module))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
