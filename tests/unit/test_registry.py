"""Every helper a frontend emits resolves in compiler.registry to a real runtime function."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmpl2py.compiler import api, ir, registry
from tmpl2py.compiler.passes import pipeline
from tmpl2py_paths import ROOT, SHARED


def _helpers(node, out: set) -> set:
    if isinstance(node, tuple):
        for n in node:
            _helpers(n, out)
    elif isinstance(node, ir.Node):
        if isinstance(node, ir.Helper):
            out.add(node.name)
        if isinstance(node, (ir.For,)) and node.loop_helper:
            out.add(node.loop_helper)
        if isinstance(node, ir.FuncDef):
            for h in (node.wrap, node.missing_helper):
                if h:
                    out.add(h)
        for f in node.__dataclass_fields__:  # type: ignore[attr-defined]
            _helpers(getattr(node, f), out)
    return out


def _templates() -> list[Path]:
    paths = sorted((ROOT / "examples").glob("*.*"))
    paths += sorted((ROOT / "tests" / "corpus" / "cases").glob("*.txt"))
    for sub, ext in (("jinja", "*.jinja"), ("gotmpl", "*.gotmpl")):
        folder = SHARED / "corpus" / sub / "templates"
        if folder.exists():
            paths += sorted(folder.glob(ext))
    return [p for p in paths if p.suffix in (".jinja", ".gotmpl", ".txt")]


def test_every_emitted_helper_is_registered() -> None:
    seen: set = set()
    for path in _templates():
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        if path.suffix == ".txt":
            text = text.partition("\n---\n")[2]
        dialect = "go" if path.suffix == ".gotmpl" else "jinja"
        try:
            module = pipeline.run(api.parse(text, dialect), profile=api.PROFILES[dialect][0])
        except Exception:  # noqa: BLE001 - malformed on purpose
            continue
        seen |= _helpers(module.body, set())
    assert len(seen) > 40
    for name in sorted(seen):
        registry.resolve(name)  # raises UnknownHelper


def test_unknown_helpers_are_refused() -> None:
    for name in ("jinja._fail_with", "os.system", "builtins.eval", "builtins.__import__", "jinja.nosuch"):
        with pytest.raises(registry.UnknownHelper):
            registry.resolve(name)


def test_the_lazy_jinja_helpers_are_their_modules_own() -> None:
    """runtime.jinja imports its loading/blocks modules on first use: its table of their
    names is each module's ``__all__``, and every name resolves to that module's object."""
    import importlib

    import tmpl2py.runtime.jinja as package

    for module, names in package.LAZY.items():
        real = importlib.import_module(f"tmpl2py.runtime.jinja.{module}")
        assert tuple(real.__all__) == names
        for name in names:
            assert getattr(package, name) is getattr(real, name)
            assert name in package.__all__
    with pytest.raises(AttributeError):
        package.no_such_helper  # noqa: B018


def test_a_template_without_loads_or_blocks_does_not_import_them() -> None:
    import subprocess
    import sys

    code = (
        "import sys, tmpl2py\n"
        "t = tmpl2py.compile_template('{% for m in messages %}{{ m.content }}{% endfor %}')\n"
        "assert t.render({'messages': [{'content': 'x'}]}) == 'x'\n"
        "print(sorted(m for m in sys.modules if m.startswith('tmpl2py.runtime.jinja.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout
    assert "tmpl2py.runtime.jinja.core" in loaded
    assert "tmpl2py.runtime.jinja.loading" not in loaded
    assert "tmpl2py.runtime.jinja.blocks" not in loaded
