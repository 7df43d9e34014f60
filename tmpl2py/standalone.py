"""``--standalone``: a generated module that carries the runtime it uses.

The result imports only the standard library. Layout, top to bottom: the module's own
header, metadata and render function(s) (unchanged), then the runtime:

- the source of every ``runtime`` module the template needs (the modules it imports,
  and theirs, in dependency order) as string constants, verbatim except that their
  ``from tmpl2py.runtime.x import ...`` / ``from .x import ...`` / ``from . import x`` lines
  become calls of the module's private loader, on the same line (line numbers, and so
  tracebacks, match the files in ``runtime/``);
- ``_tmpl2py_import(name)``: executes one embedded source, once, in a fresh module
  object named ``tmpl2py.runtime.<name>`` (so class ``__module__`` names and error messages are
  the normal module's), the way ``import`` would, circular imports included;
- the bindings of the names the template imported (``getattr_ = _tmpl2py_import("jinja").getattr_``).

Each runtime module keeps its own namespace, so module-level state shared across
modules (``GLOBALS``, the clock, ``gotmpl._NOW``) behaves as with the real package and
names never clash between runtime modules; the only names added to the generated
module (``_tmpl2py_import``, ``_RUNTIME``, ``_RUNTIME_SOURCES``, ``_RUNTIME_SOURCE_<name>``,
``_types``, ``_linecache``) are checked against the template's own and the runtime's.
"""

from __future__ import annotations

import ast
import hashlib
import sys
from pathlib import Path
from typing import Optional

LOADER = "_tmpl2py_import"
SOURCE_PREFIX = "_RUNTIME_SOURCE_"
_RESERVED = (LOADER, "_RUNTIME", "_RUNTIME_SOURCES", "_types", "_linecache")


class StandaloneError(Exception):
    """The module cannot be made standalone (a name clash, a runtime import out of place)."""


PACKAGE = "tmpl2py.runtime"


def runtime_dir() -> Path:
    from . import runtime

    return Path(runtime.__file__).resolve().parent


def module_path(name: str, folder: Optional[Path] = None) -> Path:
    """The file of runtime module ``name`` (``"jinja"`` -> ``jinja/__init__.py``,
    ``"jinja.core"`` -> ``jinja/core.py``)."""
    base = (folder or runtime_dir()).joinpath(*name.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


# ----------------------------------------------------------------------------- import analysis


def _star_names(module: str, folder: Optional[Path]) -> list[str]:
    """The ``__all__`` of a runtime module (a literal list of strings), for ``import *``."""
    tree = ast.parse(module_path(module, folder).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    raise StandaloneError(f"runtime/{module}: 'import *' of a module without a literal __all__")


def _runtime_target(
    node: ast.stmt, current: str = "", folder: Optional[Path] = None
) -> Optional[list[tuple[str, Optional[str], Optional[str]]]]:
    """For a runtime import: [(module, attribute or None, local or None)], else None.

    Module names are relative to ``tmpl2py.runtime`` (``"jinja"``, ``"go.ollama"``);
    ``current`` is the importing runtime module (for relative imports; ``""`` for the
    generated module). ``from tmpl2py.runtime.jinja import a as b`` -> [("jinja", "a", "b")];
    ``from . import execute as g`` in ``go.ollama`` -> [("go.execute", None, "g")];
    ``from .core import *`` in ``jinja`` -> one entry per name of core's ``__all__``;
    ``import tmpl2py.runtime.m`` -> [("m", None, None)] (binds nothing we use; checked).
    """
    folder = folder or runtime_dir()
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        if node.level:
            if not current:
                return None
            is_package = module_path(current, folder).name == "__init__.py"
            parts = current.split(".")
            base = parts if is_package else parts[:-1]
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            target = ".".join([*base, *([module] if module else [])])
        elif module == PACKAGE:
            target = ""
        elif module.startswith(PACKAGE + "."):
            target = module[len(PACKAGE) + 1 :]
        else:
            return None
        out: list[tuple[str, Optional[str], Optional[str]]] = []
        for a in node.names:
            sub = f"{target}.{a.name}" if target else a.name
            if a.name == "*":
                out += [(target, n, n) for n in _star_names(target, folder)]
            elif not target or module_path(sub, folder).is_file():  # a submodule
                out.append((sub, None, a.asname or a.name))
            else:
                out.append((target, a.name, a.asname or a.name))
        return out
    if isinstance(node, ast.Import):
        hits = [a for a in node.names if a.name == PACKAGE or a.name.startswith(PACKAGE + ".")]
        if not hits:
            return None
        if len(hits) != len(node.names):
            raise StandaloneError(
                f"line {node.lineno}: mixed runtime and other imports in one statement"
            )
        out = []
        for a in hits:
            if a.name == PACKAGE:
                raise StandaloneError(
                    f"line {node.lineno}: 'import {PACKAGE}' (a whole package) cannot be inlined"
                )
            out.append((a.name[len(PACKAGE) + 1 :], None, a.asname))  # type: ignore[arg-type]
        return out
    return None


def _replacement(targets: list[tuple[str, Optional[str], Optional[str]]]) -> str:
    parts = []
    for module, attr, local in targets:
        call = f"{LOADER}({module!r})"
        if attr is None and local is None:
            parts.append(call)
        elif attr is None:
            parts.append(f"{local} = {call}")
        else:
            parts.append(f"{local} = {call}.{attr}")
    return "; ".join(parts)


def rewrite_runtime_source(
    name: str, text: str, folder: Optional[Path] = None
) -> tuple[str, list[str]]:
    """A runtime module's source with its runtime imports turned into loader calls (same
    line count), and the runtime modules it imports."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    deps: list[str] = []
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        targets = _runtime_target(node, name, folder)
        if targets is None:
            continue
        if lines[node.lineno - 1][: node.col_offset].strip():
            raise StandaloneError(
                f"runtime/{name}.py:{node.lineno}: a runtime import must start its line"
            )
        deps += [t[0] for t in targets if t[0] not in deps]
        indent = " " * node.col_offset  # an import inside a function: imported when it runs
        edits.append((node.lineno, node.end_lineno or node.lineno, indent + _replacement(targets)))
    for ident in (n.id for n in ast.walk(tree) if isinstance(n, ast.Name)):
        if ident == LOADER:
            raise StandaloneError(f"runtime/{name}.py uses the reserved name {LOADER!r}")
        if ident == "tmpl2py":
            raise StandaloneError(
                f"runtime/{name}.py reads the name 'tmpl2py' (bound by a package import)"
            )
    for start, end, new in sorted(edits, reverse=True):
        ending = "\n" if lines[end - 1].endswith("\n") else ""
        lines[start - 1 : end] = [new + ending] + ["\n"] * (end - start)
    return "".join(lines), deps


def needed_modules(roots: list[str], folder: Optional[Path] = None) -> list[tuple[str, str]]:
    """(name, rewritten source) of every runtime module reachable from ``roots``, each
    after the modules it imports (in a cycle, the module reached first first)."""
    folder = folder or runtime_dir()
    sources: dict[str, tuple[str, list[str]]] = {}
    pending = list(roots)
    while pending:
        name = pending.pop(0)
        if name in sources:
            continue
        path = module_path(name, folder)
        if not path.is_file():
            raise StandaloneError(f"no runtime module {name!r} ({path})")
        sources[name] = rewrite_runtime_source(name, path.read_text(encoding="utf-8"), folder)
        pending += sources[name][1]
    order = _dependency_order({name: deps for name, (_, deps) in sources.items()})
    return [(name, sources[name][0]) for name in order]


# ----------------------------------------------------------------------------- emission


def _dependency_order(deps: dict[str, list[str]]) -> list[str]:
    """Each module after those it imports; in a cycle, the module reached first first."""

    def reaches(start: str, goal: str) -> bool:
        seen, stack = set(), [start]
        while stack:
            name = stack.pop()
            if name == goal:
                return True
            if name not in seen:
                seen.add(name)
                stack += deps[name]
        return False

    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        for dep in deps[name]:
            if not reaches(dep, name):  # a module it imports (not one that imports it back) first
                visit(dep)
        order.append(name)
        for dep in deps[name]:
            visit(dep)

    for name in deps:
        visit(name)
    return order


def _triple_quoted(text: str) -> str:
    """A readable ``\"\"\"...\"\"\"`` literal for ``text`` (checked to evaluate back to it)."""
    out: list[str] = []
    last = len(text) - 1
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            # escape quotes in runs of two or more, and a final one: none can close the literal
            runs = (i > 0 and text[i - 1] == '"') or (i < last and text[i + 1] == '"')
            out.append('\\"' if runs or i == last else '"')
        elif ch == "\n" or ch == "\t" or (ch.isprintable() and ch != "\r"):
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    literal = '"""' + "".join(out) + '"""'
    if ast.literal_eval(literal) != text:  # pragma: no cover - a bug in the escaping above
        raise StandaloneError("cannot embed a runtime source as a string literal")
    return literal


_LOADER_CODE = '''

def {loader}(name):
    """Load an embedded runtime module once, as ``import tmpl2py.runtime.<name>`` would."""
    module = _RUNTIME.get(name)
    if module is None:
        source = _RUNTIME_SOURCES[name]
        path = name.replace(".", "/")
        if any(other.startswith(name + ".") for other in _RUNTIME_SOURCES):
            path += "/__init__"  # a package
        filename = "<tmpl2py standalone: runtime/" + path + ".py>"
        _linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        module = _types.ModuleType("tmpl2py.runtime." + name)
        module.__dict__["{loader}"] = {loader}
        _RUNTIME[name] = module
        try:
            exec(compile(source, filename, "exec"), module.__dict__)
        except BaseException:
            del _RUNTIME[name]
            raise
    return module
'''


#: The runtime module of each profile's conversation entry point.
CONVERSATION_MODULES = {"hf": "jinja.hf", "ollama": "go.ollama"}

_CONVERSATION = {
    "hf": '''

def render_conversation(messages, /, **options):
    """transformers' ``render_jinja_template(conversations=[messages], ...)[0][0]``
    (tools, documents, add_generation_prompt, continue_final_message, **kwargs)."""
    return {loader}("jinja.hf").render_conversation(render, TEMPLATE_SOURCE, messages, **options)
''',
    "ollama": '''

def render_conversation(messages, **options):
    """Ollama's ``Template.Execute`` for /api/chat input (tools, think, now)."""
    return {loader}("go.ollama").render_conversation(globals(), messages, **options)
''',
}


def make_standalone(module_text: str, template_source: Optional[str] = None) -> str:
    """``module_text`` (a generated module) with the runtime it uses inlined.

    A single-template module of the ``hf`` or ``ollama`` profile also gets
    ``render_conversation(messages, **options)``, the profile's conversation entry point
    (as ``CompiledTemplate.render_conversation``), built on its own inlined runtime; the
    ``hf`` one needs ``template_source`` (transformers checks ``continue_final_message``
    fields against the template text).
    """
    from .compiler.build import format_module

    tree = ast.parse(module_text)
    part = _TemplatePart(tree)
    conversation = _conversation_profile(tree, part.own, template_source)
    entry = CONVERSATION_MODULES.get(conversation)
    if entry and entry not in part.roots:
        part.roots.append(entry)
    modules = needed_modules(part.roots)
    lines = module_text.splitlines()
    for start, end in sorted(part.drop, reverse=True):
        del lines[start - 1 : end]
    out = _with_header_note(lines, modules)
    out += _runtime_section(modules, part.bindings) + part.late
    if conversation == "hf":
        out += ["", f"TEMPLATE_SOURCE = {_triple_quoted(template_source or '')}"]
    if conversation:
        out.append(_CONVERSATION[conversation].format(loader=LOADER))
    text = format_module("\n".join(out) + "\n")
    compile(text, "<standalone>", "exec")
    check_stdlib_only(text)
    return text


class _TemplatePart:
    """The generated module's runtime imports (to drop and re-bind) and its own names."""

    def __init__(self, tree: ast.Module) -> None:
        self.bindings: list[str] = []
        self.roots: list[str] = []
        self.drop: list[tuple[int, int]] = []
        self.own: set[str] = set()
        self.late: list[str] = []  # module-level statements that must run after the bindings
        imported: set[str] = set()
        for node in tree.body:
            targets = _runtime_target(node)
            if targets is not None:
                self.drop.append((node.lineno, node.end_lineno or node.lineno))
                self.roots += [t[0] for t in targets if t[0] not in self.roots]
                self.bindings.append(_replacement(targets))
                self.own.update(t[2] for t in targets if t[2])
                imported.update(t[2] for t in targets if t[2])
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.own.add(node.name)
            elif isinstance(node, ast.Assign):
                self.own.update(
                    n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)
                )
                if any(
                    isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Name)
                    and n.func.id in imported
                    for n in ast.walk(node.value)
                ):  # calls the runtime at import (start values): moved after its bindings
                    self.drop.append((node.lineno, node.end_lineno or node.lineno))
                    self.late.append(ast.unparse(node))
        for node in ast.walk(tree):
            if (
                isinstance(node, (ast.Import, ast.ImportFrom))
                and node not in tree.body
                and _runtime_target(node)
            ):
                raise StandaloneError(
                    f"line {node.lineno}: a runtime import inside a block cannot be inlined"
                )
        clash = {n for n in self.own if n in _RESERVED or n.startswith(SOURCE_PREFIX)}
        if clash:
            raise StandaloneError(f"the module defines reserved names: {', '.join(sorted(clash))}")


def _with_header_note(lines: list[str], modules: list[tuple[str, str]]) -> list[str]:
    """The module's lines with a header line naming the inlined modules and the stdlib imports."""
    header_end = 0
    while header_end < len(lines) and lines[header_end].startswith("#"):
        header_end += 1
    digest = hashlib.sha256("".join(src for _, src in modules).encode("utf-8")).hexdigest()
    names = ", ".join(name for name, _ in modules) or "none"
    note = f"# standalone: runtime modules inlined ({names}; sha256 {digest[:16]}); imports only the standard library"
    out = lines[:header_end] + [note] + lines[header_end:]
    doc_end = _docstring_end(out)
    out[doc_end:doc_end] = ["", "import linecache as _linecache", "import types as _types"]
    return out


def _runtime_section(modules: list[tuple[str, str]], bindings: list[str]) -> list[str]:
    from . import __version__

    out = ["", "", f"# ---- the runtime, inlined from tmpl2py {__version__} ----", ""]
    for name, source in modules:
        out += [f"# runtime/{module_path(name).relative_to(runtime_dir()).as_posix()}", f"{SOURCE_PREFIX}{ident(name)} = {_triple_quoted(source)}", ""]
    table = ", ".join(f"{name!r}: {SOURCE_PREFIX}{ident(name)}" for name, _ in modules)
    out += ["_RUNTIME = {}", f"_RUNTIME_SOURCES = {{{table}}}"]
    out.append(_LOADER_CODE.format(loader=LOADER))
    return out + [""] + bindings


def ident(name: str) -> str:
    """A runtime module's name as part of a Python identifier (``go.ollama`` -> ``go_ollama``)."""
    return name.replace(".", "_")


def _conversation_profile(tree: ast.Module, own: set, template_source: Optional[str]) -> str:
    """``hf`` / ``ollama`` when the module gets ``render_conversation``, else ``""``."""
    if (
        "render" not in own
        or "TEMPLATES" in own
        or "render_conversation" in own
        or "TEMPLATE_SOURCE" in own
    ):
        return ""
    profile = ""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "PROFILE" for t in node.targets
        ):
            profile = ast.literal_eval(node.value)
    if profile == "ollama" or (profile == "hf" and template_source is not None):
        return profile
    return ""


def _docstring_end(lines: list[str]) -> int:
    """The index just after the module docstring (or the header comments)."""
    tree = ast.parse("\n".join(lines))
    first = tree.body[0] if tree.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first.end_lineno or 0
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    return i


# ----------------------------------------------------------------------------- checks


def imported_modules(text: str) -> set[str]:
    """Every module a standalone module imports: its own code and its embedded sources."""
    tree = ast.parse(text)
    found = _imports(tree)
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id.startswith(SOURCE_PREFIX)
        ):
            found |= _imports(ast.parse(ast.literal_eval(node.value)))
    return found


def _imports(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or ""))
    return out


def check_stdlib_only(text: str) -> None:
    bad = sorted(
        m for m in imported_modules(text) if m.split(".")[0] not in sys.stdlib_module_names
    )
    if bad:
        raise StandaloneError(f"the standalone module would import {', '.join(bad)}")
