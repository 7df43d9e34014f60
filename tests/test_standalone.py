"""``--standalone`` modules: standard library only, and byte-identical to the normal module."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tmpl2py_paths import ROOT

import tmpl2py.runtime.jinja as runtime_jinja
from tmpl2py.compiler import compile_template
from tmpl2py.compiler.api import generate
from tmpl2py.combine import build_module
from tmpl2py.sources import load
from tmpl2py.standalone import StandaloneError, imported_modules, make_standalone, needed_modules

STDLIB = set(sys.stdlib_module_names)
SEEDS = [ROOT / "examples" / "seed000_command.jinja", ROOT / "examples" / "seed001_qwen.jinja"]
FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("*.json")) + [ROOT / "examples" / "conversation.json"]
CASES = [
    ROOT / "tests" / "corpus" / "cases" / f"{name}.txt"
    for name in (
        "cycler_joiner",
        "loop_recursive",
        "macro_caller",
        "filters_tojson",
        "scope_namespace",
        "strftime_now",
        "err_raise_exception",
        "err_security_dunder",
        "err_undefined_attr",
        "err_namespace_underscore",
        "generation_block",
        "numbers_printing",
        "block_in_place_self",  # runtime.jinja's lazily imported helpers: blocks, loading
        "err_block_super",
        "err_include_no_loader",
        "err_import_no_loader",
    )
]


def _outcome(fn: Callable[..., str], *args: Any, **kwargs: Any) -> tuple[str, str]:
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - both outcomes are compared, errors included
        return ("err", f"{type(e).__name__}: {e}")


def _load_standalone(text: str) -> types.ModuleType:
    module = types.ModuleType("standalone_under_test")
    exec(compile(text, "<standalone>", "exec"), module.__dict__)
    if "jinja" in module._RUNTIME:  # the standalone copy has its own clock: follow the tests' frozen one
        module._RUNTIME["jinja"].CLOCK[0] = lambda: runtime_jinja.CLOCK[0]()
    return module


def _standalone(source: str, dialect: str = "jinja") -> tuple[str, types.ModuleType]:
    text = make_standalone(generate(source, dialect, name="t")[0], source)
    return text, _load_standalone(text)


def _all_imports(text: str) -> set[str]:
    """Every import statement's module: the module's own AST and each embedded source's."""
    found = set()
    tree = ast.parse(text)
    trees = [tree] + [
        ast.parse(ast.literal_eval(node.value))
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id.startswith("_RUNTIME_SOURCE_")
    ]
    for t in trees:
        for node in ast.walk(t):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                found.add("." * node.level + (node.module or ""))
    return found


def _load_case(path: Path) -> tuple[dict, str]:
    head, _, template = path.read_bytes().decode("utf-8").partition("\n---\n")
    return json.loads(head), template


@pytest.mark.parametrize("path", SEEDS, ids=[p.stem for p in SEEDS])
def test_seed_standalone_imports_only_the_standard_library(path: Path) -> None:
    text, _ = _standalone(path.read_text(encoding="utf-8"))
    imports = _all_imports(text)
    assert len(imports) > 5  # the embedded runtime's imports are seen too
    assert all(name.split(".")[0] in STDLIB for name in imports), sorted(imports)
    assert not any(name.startswith(("runtime", ".")) for name in imports)
    assert imports == imported_modules(text)


@pytest.mark.parametrize("path", SEEDS, ids=[p.stem for p in SEEDS])
def test_seed_standalone_renders_identically(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    _, module = _standalone(source)
    normal = compile_template(source)
    for fixture_path in FIXTURES:
        fixture = json.loads(fixture_path.read_text(encoding="utf-8"))
        options = dict(fixture)
        messages = options.pop("messages")
        ours = _outcome(module.render_conversation, messages, **options)
        assert ours == _outcome(normal.render_conversation, messages, **options), fixture_path.name
        assert _outcome(module.render, fixture) == _outcome(normal.render, fixture), fixture_path.name


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_corpus_case_standalone_renders_identically(path: Path) -> None:
    context, template = _load_case(path)
    _, module = _standalone(template)
    normal = compile_template(template)
    assert _outcome(module.render, context) == _outcome(normal.render, context)


def test_standalone_generation_spans() -> None:
    """``return_assistant_tokens_mask`` through the inlined runtime (its own tracker)."""
    context, template = _load_case(ROOT / "tests" / "corpus" / "cases" / "generation_block.txt")
    _, module = _standalone(template)
    normal = compile_template(template)
    messages = context["messages"]
    for options in ({}, {"continue_final_message": True}):
        options["return_assistant_tokens_mask"] = True
        spans = _outcome(module.render_conversation, messages, **options)
        assert spans == _outcome(normal.render_conversation, messages, **options)
        assert spans[0] == "ok" and spans[1][1]


def test_standalone_runs_where_runtime_cannot_be_imported(tmp_path: Path) -> None:
    source = SEEDS[1].read_text(encoding="utf-8")
    target = tmp_path / "qwen_standalone.py"
    target.write_text(make_standalone(generate(source, "jinja", name="q")[0], source), encoding="utf-8")
    code = (
        "import sys; [sys.modules.__setitem__(m, None) for m in ('runtime', 'compiler', 'jinja2', 'lark')];"
        f"sys.path.insert(0, {str(tmp_path)!r}); import qwen_standalone as m;"
        "print(m.render_conversation([{'role': 'user', 'content': 'hi'}], add_generation_prompt=True), end='')"
    )
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_runtime_errors_keep_their_module_names() -> None:
    """Classes live in modules named runtime.<name>, so messages naming types are unchanged."""
    _, module = _standalone("{{ x }}")
    jinja = module._RUNTIME["jinja"]
    assert jinja.TemplateRuntimeError.__module__ == "tmpl2py.runtime.jinja.core"
    # a class that names the reference's module for its messages keeps doing so
    assert jinja.Undefined.__module__ == "jinja2.runtime"
    assert module._RUNTIME["jinja"].__name__ == "tmpl2py.runtime.jinja"


def test_dependency_order_and_clash_checks() -> None:
    assert [n for n, _ in needed_modules(["jinja"])] == [
        "limits",  # the render limits every module counts against
        "jinja.core",
        "jinja.markup",
        "jinja.clock",  # strftime_now and the clock it reads
        "jinja.objects",
        "jinja.bounded",  # the size guards access.call runs for growing str methods
        "jinja.access",
        "jinja.loading",
        "jinja.blocks",
        "jinja",
    ]
    with pytest.raises(StandaloneError, match="reserved"):
        make_standalone("from tmpl2py.runtime.jinja import resolve\n\n_RUNTIME = 1\n\n\ndef render(context):\n    return ''\n")


def test_tracebacks_point_into_the_embedded_runtime() -> None:
    _, module = _standalone("{{ raise_exception('boom') }}")
    with pytest.raises(Exception) as err:
        module.render({})
    assert type(err.value).__name__ == "TemplateError" and str(err.value) == "boom"
    frames = [f.filename for f in __import__("traceback").extract_tb(err.value.__traceback__)]
    assert "<tmpl2py standalone: runtime/jinja/objects.py>" in frames


def test_multi_template_module_standalone(tmp_path: Path) -> None:
    config = tmp_path / "tokenizer_config.json"
    templates = [
        {"name": "default", "template": "{% for m in messages %}{{ m.content | upper }}{% endfor %}"},
        {"name": "tool_use", "template": "{{ tools | tojson }}"},
    ]
    config.write_text(json.dumps({"chat_template": templates}), encoding="utf-8")
    text = make_standalone(build_module(load(config)))
    module = _load_standalone(text)
    assert module.TEMPLATES["default"]({"messages": [{"content": "a"}]}) == "A"
    assert module.TEMPLATES["tool_use"]({"tools": [1]}) == "[1]"
    assert not hasattr(module, "render_conversation")  # one conversation entry point needs one template
    assert all(n.split(".")[0] in STDLIB for n in _all_imports(text))


def _go_or_skip() -> None:
    try:
        compile_template("{{ .Prompt }}", dialect="go")
    except Exception as e:  # noqa: BLE001 - the Go frontend is being written elsewhere
        pytest.skip(f"the Go frontend does not compile yet: {e}")


GO_TEMPLATE = (
    "{{- if .System }}<|system|>{{ .System }}<|end|>{{ end }}"
    "{{- range $i, $m := .Messages }}<|{{ $m.Role }}|>{{ $m.Content }}{{ if $m.ToolCalls }}"
    "{{ json $m.ToolCalls }}{{ end }}<|end|>{{ end }}<|assistant|>{{ printf \"%5.2f|%q\" 3.14159 \"x\" }}"
)


def test_go_standalone_renders_identically() -> None:
    _go_or_skip()
    text, module = _standalone(GO_TEMPLATE, "go")
    assert all(n.split(".")[0] in STDLIB for n in _all_imports(text))
    normal = compile_template(GO_TEMPLATE, dialect="go")
    for fixture_path in FIXTURES:
        fixture = json.loads(fixture_path.read_text(encoding="utf-8"))
        messages, tools = fixture["messages"], fixture.get("tools")
        ours = _outcome(module.render_conversation, messages, tools=tools)
        assert ours == _outcome(normal.render_conversation, messages, tools=tools), fixture_path.name
