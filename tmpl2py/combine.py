"""One Python module from the templates of one source: the ordinary module for a single
template; for several named templates, one module with a ``render_<name>`` function each,
``TEMPLATES = {name: function}`` and ``render = render_default`` (see :func:`combine_modules`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Optional

from .sources import TemplateSource, display_name

if TYPE_CHECKING:
    import ast


def build_module(sources: Sequence[TemplateSource], profile: Optional[str] = None) -> str:
    """The Python module for the templates of one file (raises ``CompileError``)."""
    from .compiler.build import generate

    texts = [generate(s.text, s.dialect, profile, name=display_name(s))[0] for s in sources]
    if len(texts) == 1:
        return texts[0]
    label = display_name(sources[0])
    key = sources[0].origin[len(sources[0].path) + 1 :]
    if label.endswith(":" + key):
        label = label[: -len(key) - 1]
    return combine_modules([s.name for s in sources], texts, label)


def function_names(names: Iterable[str]) -> list[str]:
    """``render_<name>`` for each template name, made identifiers and distinct."""
    out: list[str] = []
    for name in names:
        ident = "render_" + "".join(c if (c.isascii() and c.isalnum()) else "_" for c in name)
        base, n = ident, 2
        while ident in out:
            ident, n = f"{base}_{n}", n + 1
        out.append(ident)
    return out


def combine_modules(names: Sequence[str], texts: Sequence[str], label: str = "<templates>") -> str:
    """One module from several generated modules (one per named template).

    Each generated module is a header, imports of runtime names, metadata constants and
    one ``render`` function that reads only its locals and the imported names. The
    combined module imports the union of the names, renames each ``render`` to
    ``render_<name>``, keeps each template's metadata in ``METADATA[name]`` (the default
    template's also as the usual top-level constants) and adds ``TEMPLATES``, ``render``
    and ``get_template`` (transformers' choice among named templates). An imported name
    that two templates bind to different runtime objects is renamed in the later one,
    exactly where its AST reads it.
    """
    import ast  # the multi-template module is built rarely: not at import

    funcs = function_names(names)
    imports: dict[str, tuple[str, str]] = {}
    bodies: list[str] = []
    metadata: list[dict[str, Any]] = []
    taken: set[str] = set()
    for k, (fname, text) in enumerate(zip(funcs, texts)):
        meta, func, lines, renames, statics = _parse_generated(text, imports)
        for stmt in statics:  # names the module computes at import (start values)
            for n in ast.walk(stmt.targets[0]):
                if isinstance(n, ast.Name):
                    if n.id in taken:
                        renames[n.id] = f"{n.id}_{k}"
                    taken.add(renames.get(n.id, n.id))
        body = _rename_reads(lines[func.lineno - 1 : func.end_lineno], func, renames)
        body[0] = body[0].replace("def render(", f"def {fname}(", 1)
        for stmt in statics:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and n.id in renames:
                    n.id = renames[n.id]
            body.insert(0, ast.unparse(stmt) + "\n\n")
        bodies.append("\n".join(body))
        metadata.append(meta)
    return _assemble(label, names, funcs, imports, bodies, metadata)


def _parse_generated(
    text: str, imports: dict[str, tuple[str, str]]
) -> tuple[dict, ast.FunctionDef, list[str], dict, list[ast.Assign]]:
    """A generated module's metadata, render function, lines and the assignments it runs at
    import (calls of the runtime); its imports are merged into ``imports`` (returning the
    renames that keep them apart)."""
    import ast  # the multi-template module is built rarely: not at import

    tree = ast.parse(text)
    meta: dict[str, Any] = {}
    renames: dict[str, str] = {}
    statics: list[ast.Assign] = []
    func: Optional[ast.FunctionDef] = None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                local = alias.asname or alias.name
                target = (node.module or "", alias.name)
                if local in imports and not _same_object(imports[local], target):
                    new = f"{local}_{len(imports)}"
                    while new in imports:
                        new += "_"
                    renames[local] = new
                    local = new
                imports.setdefault(local, target)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            statics.append(node)
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            meta[node.targets[0].id] = ast.literal_eval(node.value)
        elif isinstance(node, ast.FunctionDef) and node.name == "render":
            func = node
    if func is None:
        raise ValueError("a generated module without a render function")
    return meta, func, text.splitlines(), renames, statics


def _same_object(a: tuple[str, str], b: tuple[str, str]) -> bool:
    if a == b:
        return True
    import importlib

    try:
        return getattr(importlib.import_module(a[0]), a[1]) is getattr(
            importlib.import_module(b[0]), b[1]
        )
    except (ImportError, AttributeError):
        return False


def _rename_reads(lines: list[str], func: ast.FunctionDef, renames: dict[str, str]) -> list[str]:
    """Rename global reads inside ``func`` at their exact AST positions (no text search)."""
    import ast  # the multi-template module is built rarely: not at import

    if not renames:
        return list(lines)
    first = func.lineno
    hits = sorted(
        (
            (n.lineno, n.col_offset, n.id)
            for n in ast.walk(func)
            if isinstance(n, ast.Name) and n.id in renames
        ),
        reverse=True,
    )
    out = [line.encode("utf-8") for line in lines]
    for lineno, col, ident in hits:  # col_offset counts UTF-8 bytes
        row = out[lineno - first]
        assert row[col : col + len(ident)] == ident.encode()
        out[lineno - first] = row[:col] + renames[ident].encode() + row[col + len(ident) :]
    return [row.decode("utf-8") for row in out]


_GET_TEMPLATE = '''
def get_template(name=None, tools=None):
    """transformers' choice: the named template; else ``tool_use`` when tools are given
    and it exists; else ``default``."""
    if name is not None:
        return TEMPLATES[name]
    if tools is not None and "tool_use" in TEMPLATES:
        return TEMPLATES["tool_use"]
    if "default" in TEMPLATES:
        return TEMPLATES["default"]
    raise ValueError(
        "This model has multiple chat templates with no default specified! Available template names are "
        + repr(sorted(TEMPLATES))
        + "."
    )
'''


def _assemble(label, names, funcs, imports, bodies, metadata) -> str:  # type: ignore[no-untyped-def]
    import ast  # the multi-template module is built rarely: not at import

    from .compiler import __version__
    from .compiler.build import format_module
    from .compiler.names import header_safe

    default = names.index("default") if "default" in names else 0
    first = metadata[default]
    head = [
        f"# Generated by tmpl2py {__version__}. Do not edit: recompile instead.",
        f"# source: {header_safe(label)} ({len(names)} templates)",
    ]
    for name, meta in zip(names, metadata):
        head.append(f"# sha256: {meta.get('SOURCE_SHA256', '')}  {header_safe(name)}")
    head.append(f"# dialect: {first.get('DIALECT', '')}  profile: {first.get('PROFILE', '')}")
    out = head + [
        "",
        '"""Compiled chat templates: ``render(context)`` (the default), ``TEMPLATES[name](context)``."""',
        "",
    ]
    by_module: dict[str, list[str]] = {}
    for local, (module, fn) in imports.items():
        by_module.setdefault(module, []).append(fn if fn == local else f"{fn} as {local}")
    for module in sorted(by_module):
        out.append(f"from {module} import {', '.join(sorted(by_module[module]))}")
    out += ["", f"TEMPLATE_NAMES = {ast.unparse(ast.Constant(tuple(names)))}"]
    out.append(f"DEFAULT_TEMPLATE = {names[default]!r}")
    for key, value in first.items():
        out.append(f"{key} = {_literal(value)}")
    out.append(
        "METADATA = {" + ", ".join(f"{n!r}: {_literal(m)}" for n, m in zip(names, metadata)) + "}"
    )
    for body in bodies:
        out += ["", "", body]
    out += ["", "", "TEMPLATES = {" + ", ".join(f"{n!r}: {f}" for n, f in zip(names, funcs)) + "}"]
    out.append(f"render = {funcs[default]}")
    out.append(_GET_TEMPLATE)
    text = format_module("\n".join(out) + "\n")
    compile(text, "<combined>", "exec")
    return text


def _literal(value: Any) -> str:
    import ast  # the multi-template module is built rarely: not at import

    from .compiler.emit import const_node

    return ast.unparse(const_node(value))
