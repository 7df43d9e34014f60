"""generated/ is product: fresh, deterministic, and importing only the standard library and runtime."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tmpl2py.compiler.api import generate
from tmpl2py.cli import EXTENSIONS, module_name
from tmpl2py_paths import ROOT

EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.suffix in EXTENSIONS)
STDLIB = set(sys.stdlib_module_names)


def _generated(template: Path) -> Path:
    return ROOT / "generated" / f"{module_name(str(template))}.py"


@pytest.mark.parametrize("template", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_generated_module_is_fresh(template: Path) -> None:
    target = _generated(template)
    assert target.exists(), f"{target} is missing: run `tmpl2py compile examples/* -o generated`"
    text, _ = generate(
        template.read_bytes().decode("utf-8"),
        EXTENSIONS[template.suffix],
        name=template.relative_to(ROOT).as_posix(),
    )
    assert target.read_text(encoding="utf-8") == text, (
        f"{target.name} is stale: run `tmpl2py compile examples/* -o generated` (or `tmpl2py compile --check`)"
    )


@pytest.mark.parametrize("template", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_generated_imports_only_stdlib_and_runtime(template: Path) -> None:
    tree = ast.parse(_generated(template).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            assert name.startswith("tmpl2py.runtime.") or top in STDLIB, f"{template.name}: imports {name}"


def test_compiling_is_deterministic_across_processes() -> None:
    source = EXAMPLES[0]
    code = (
        "import sys; sys.path.insert(0, %r); from compiler.api import generate; "
        "print(generate(open(%r, encoding='utf-8').read(), %r, name='x')[0])"
    ) % (str(ROOT), str(source), EXTENSIONS[source.suffix])
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout
        for seed in ("1", "2")
    }
    assert len(runs) == 1


def test_generated_module_renders_without_a_template_engine() -> None:
    """Import a generated module in a fresh interpreter where jinja2 and lark cannot be imported."""
    code = (
        "import sys; sys.modules['jinja2'] = None; sys.modules['lark'] = None; sys.modules['compiler'] = None;"
        "sys.path.insert(0, %r); import generated.seed001_qwen as m;"
        "print(m.render({'messages': [{'role': 'user', 'content': 'hi'}], 'add_generation_prompt': True, 'tools': None}), end='')"
    ) % str(ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
