"""What the Jinja lowering asks of a lowered body: which names it reads, and which of some
names it reads before anything assigns them (jinja2's ``find_undeclared``)."""

from __future__ import annotations

from typing import Any

from .. import ir


def uses_name(node: Any, name: str) -> bool:
    return any(isinstance(n, ir.Name) and n.name == name for n in ir.walk(node))


def find_undeclared(body: tuple, names: tuple) -> set:
    """jinja2's ``find_undeclared``: which of ``names`` the body reads before anything assigns
    them, in jinja2's visiting order (a ``set``, a loop target or a macro parameter of that name
    met first hides every later read, nested macros included)."""
    hidden: set = set()
    found: set = set()

    def store(target: Any) -> None:
        for n in ir.walk(target):
            if isinstance(n, ir.Name):
                hidden.add(n.name)

    def visit(node: Any) -> None:
        if isinstance(node, tuple):
            items = list(node)
            i = 0
            while i < len(items):
                item = items[i]
                if (
                    isinstance(item, ir.FuncDef)
                    and item.ident
                    and i + 1 < len(items)
                    and isinstance(items[i + 1], ir.Output)
                ):
                    visit(
                        items[i + 1]
                    )  # a call block: jinja2 visits the call before the caller's body
                    visit(item)
                    i += 2
                    continue
                visit(item)
                i += 1
            return
        if not isinstance(node, ir.Node):
            return
        if isinstance(node, ir.Name):
            if node.name in names and node.name not in hidden:
                found.add(node.name)
        elif isinstance(node, ir.Assign):
            store(node.target)
            visit(node.value)
        elif isinstance(node, ir.For):
            store(node.target)
            visit((node.iter, node.body, node.else_, node.filter))
        elif isinstance(node, ir.FuncDef):
            declared = node.wrap_args[1].value if len(node.wrap_args) > 1 else ()  # type: ignore[attr-defined]
            params = [p for p in node.params if p.name.name in declared]  # not the implicit ones
            store(tuple(p.name for p in params))
            visit((tuple(p.default for p in params), node.body))
        elif isinstance(node, ir.Helper) and node.name in ("jinja.ns_set", "jinja.ns_check"):
            visit(node.args[1:])  # jinja2's NSRef is no name read
        else:
            for f in ir.child_fields(type(node)):
                visit(getattr(node, f))

    visit(body)
    return found
