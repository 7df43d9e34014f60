"""Hostile templates: sandbox parity with transformers' environment, injection-proof code
generation, bounded work. Every case must fail (or render) exactly as the reference does,
and the generated Python must never carry template text outside string literals."""

from __future__ import annotations

import ast
import re

import pytest

from tmpl2py.compiler import CompileError, compile_template
from reference import ours_render, ref_render, same_outcome
from hostile_cases import GO_GROWTH, GROWTH, bounded_row, growth_case
from tmpl2py.runtime.budget import RenderBudgetExceeded
from tmpl2py.runtime.go.execute import ExecError
from tmpl2py.runtime.limits import RenderLimitExceeded

ESCAPES = [
    "{{ ''.__class__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ ''['__class__'] }}",
    "{{ ''|attr('__class__') }}",
    "{{ (''|attr('__class__')).__mro__ }}",
    "{{ x.__dict__ }}",
    "{{ x.__class__.__init__.__globals__ }}",
    "{{ range.__self__ }}",
    "{{ range.__globals__ }}",
    "{{ namespace.__init__.__globals__ }}",
    "{{ namespace.__init__ }}",
    "{% set ns = namespace() %}{{ ns.__class__ }}",
    "{% set ns = namespace() %}{{ ns._Namespace__attrs }}",
    "{% set ns = namespace(_x=1) %}",
    "{% set ns = namespace() %}{% set ns.__class__ = 1 %}",
    "{{ dict.__class__ }}",
    "{{ dict.fromkeys([1]) }}",
    "{{ raise_exception.__globals__ }}",
    "{{ raise_exception.__code__ }}",
    "{{ strftime_now.__globals__['os'] }}",
    "{{ lipsum.__globals__ }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ joiner.__call__ }}",
    "{% for x in [1] %}{{ loop.__class__ }}{{ loop._iterator }}{% endfor %}",
    "{% for x in [1] %}{{ loop._recurse }}{% endfor %}",
    "{% macro m() %}{% endmacro %}{{ m.__globals__ }}",
    "{% macro m() %}{% endmacro %}{{ m._func }}{{ m._func.__globals__ }}",
    "{{ m.role.__class__ }}",
    "{{ [].append(1) }}",
    "{{ [1].pop() }}",
    "{{ [3, 1].sort() }}",
    "{{ {}.update(a=1) }}",
    "{{ {}.setdefault('a', 1) }}",
    "{{ {}.clear() }}",
    "{% set f = [].append %}{{ f(1) }}",
    "{% set l = [] %}{{ l.extend([1]) }}{{ l }}",
    "{{ '{0.__class__.__mro__}'.format('x') }}",
    "{{ '{0.__class__}'.format('x') }}",
    "{% set f = 'a{0.__class__.__init__.__globals__}'.format %}{{ f('x') }}",
    "{{ '{0[__class__]}'.format({}) }}",
    "{{ '{x.__class__}'.format_map({'x': 1}) }}",
    "{{ ('%s' % 'a').__class__ }}",
    "{{ (x|map(attribute='__class__')|list) }}",
    "{{ (['a']|map(attribute='__class__.__mro__')|list) }}",
    "{{ ([{'a': 1}]|sort(attribute='__class__')) }}",
    "{{ ([m]|selectattr('__class__')|list) }}",
    "{{ self }}",
    "{{ self.__init__ }}",
    "{{ __builtins__ }}",
    "{{ __import__('os') }}",
    "{{ getattr_ }}{{ _w }}{{ _out }}{{ context }}{{ render }}{{ resolve }}{{ str }}",
    "{% set _w = 1 %}{% set context = 2 %}{% set str = 3 %}{{ _w }}{{ context }}{{ str }}",
    "{% set def = 1 %}{{ def }}",
    "{% set class = 1 %}{% set lambda = 2 %}{% set return = 3 %}{{ class }}{{ lambda }}{{ return }}",
    "{% macro import() %}x{% endmacro %}{{ import() }}",
    "{% for yield in [1] %}{{ yield }}{% endfor %}",
    "{{ range(100001) }}",
    "{{ range(0, 10**9, 10**3)|length }}",
    "{{ range(10**6, 0, -1)|list|length }}",
]

INJECTIONS = [
    "\"\"\"; import os; os.system('echo pwned'); \"\"\"",
    "''' + __import__('os').getcwd() + '''",
    "a\\\nb {{ 'c\\\nd' }}",
    "nul\x00byte {{ 'x\x00y' }}",
    "lone\rcarriage {{ 'r\rr' }}",
    "tab\tand\vvertical\ffeed",
    "# line 1: not a comment\n{{ '# also' }}",
    "{{ \"\\\"; import os #\" }}",
    "{{ '\\x00\\u2028\\U0001F600' }}",
    "\u2028\u2029 separators {{ 1 }}",
    "{# \"\"\" #}{{ '\"\"\"' }}{% raw %}'''\"\"\"{% endraw %}",
    "{% macro x(a='\"\"\"') %}{{ a }}{% endmacro %}{{ x() }}",
    "{% set é = 1 %}{{ é }}{% set ﬁ = 2 %}{{ fi }}{{ ﬁ }}",
]

ALLOWED_NAME = re.compile(r"^(l_\d+_\w+|_f_l_\d+_\w+|_f_tmpl_\d+|v_\w+|dot\w*|tmpl_\d+|_[a-z]+\d*|caller_\d+|render|context|budget|limits|BaseException|str|slice|len|list|dict|tuple|isinstance|type|enumerate)$")


def _assert_no_template_text_in_code(template) -> None:
    """Every identifier in the generated module is ours: mangled locals, compiler locals,
    imported runtime helpers; template text appears only inside string constants."""
    tree = ast.parse(template.python_source)
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assigned_globals = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            assert node.id in imported or node.id in assigned_globals or ALLOWED_NAME.match(node.id), node.id
        elif isinstance(node, ast.FunctionDef):
            assert ALLOWED_NAME.match(node.name) or re.fullmatch(r"_f_(l_\d+_\w+|tmpl_\d+)", node.name), node.name
        elif isinstance(node, ast.arg):
            assert ALLOWED_NAME.match(node.arg), node.arg
        elif isinstance(node, ast.Attribute):
            assert node.attr in ("append", "join", "get"), node.attr  # dict.get: ours too
    for line in template.python_source.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            assert re.fullmatch(
                r"# (line \d+: [a-z ]+\w*|Generated by tmpl2py .*|source: [ -~]*|sha256: [0-9a-f]{64}|dialect: \w+  profile: \w+)",
                stripped,
            ), stripped


@pytest.mark.parametrize("source", ESCAPES + INJECTIONS)
def test_hostile_template_matches_sandbox(source: str) -> None:
    context = {"x": {"a": 1}, "m": {"role": "user"}}
    ref = ref_render(source, context)
    ours = ours_render(source, context)
    assert same_outcome(ours, ref), f"\nexpected: {ref[1][:500]!r}\n     got: {ours[1][:500]!r}"
    try:
        template = compile_template(source, name="hostile\n\"\"\"name")
    except CompileError:
        return
    compile(template.python_source, "<check>", "exec")
    _assert_no_template_text_in_code(template)


def test_hostile_template_name_cannot_break_the_header() -> None:
    template = compile_template("{{ 1 }}", name="evil\nimport os\r\"\"\"#")
    header = template.python_source.split('"""', 1)[0]
    assert all(line.startswith("#") or not line.strip() for line in header.splitlines())
    assert "import os" not in [line.strip() for line in template.python_source.splitlines()]


@pytest.mark.parametrize("depth", [5, 19, 21, 40])
def test_deep_loop_nesting_compiles_or_is_refused_clearly(depth: int) -> None:
    source = "{% for i in [1] %}" * depth + "x" + "{% endfor %}" * depth
    try:
        template = compile_template(source)
    except CompileError as e:
        assert e.code == "too-deep"
        return
    assert template.render({}) == "x"


@pytest.mark.parametrize("depth", [50, 400, 5000])
def test_deep_parentheses_compile_or_are_refused_clearly(depth: int) -> None:
    source = "{{ " + "(" * depth + "1" + ")" * depth + " }}"
    try:
        template = compile_template(source)
    except CompileError as e:
        assert e.code == "too-deep"
        return
    assert template.render({}) == "1"


@pytest.mark.parametrize(
    "source, dialect",
    [
        # nesting the tag scan does not see (inside one expression)
        ("{{ " + "x|default(" * 3000 + "1" + ")" * 3000 + " }}", "jinja"),
        ("{{ " + "1 if x else " * 9000 + "2 }}", "jinja"),
        # a chain of more links than MAX_CHAIN: refused by the tag scan, at the link past it
        ("{% if x %}" + "{% elif x %}" * 501 + "{% endif %}", "jinja"),
        ("{{if 0}}" + "{{else if 0}}" * 501 + "{{else}}x{{end}}", "go"),
        ("{{with 0}}" + "{{else with 0}}" * 501 + "{{else}}x{{end}}", "go"),
    ],
)
def test_nesting_past_the_stack_is_a_compile_error(source: str, dialect: str) -> None:
    """Nesting past Python's stack is the ``too-deep`` CompileError wherever the compile
    meets it: while Lark's transformer builds a rule's tree (then at that rule's position),
    never Lark's VisitError; or in a later step (then without a position)."""
    with pytest.raises(CompileError) as info:
        compile_template(source, dialect=dialect).render({})
    assert info.value.code == "too-deep"
    assert info.value.line in (0, 1)


@pytest.mark.parametrize("links", [60, 100])
def test_long_elif_chains_compile(links: int) -> None:
    """A chain of ``elif`` (``else if``) links is no nesting for the depth cap, and the IR
    nests each link in the last: up to ``bounds.MAX_CHAIN`` links compile within Python's
    recursion limit (never raised: the limit is the process's, and other threads' renders
    recursing in C under a raised limit could overflow their stacks)."""
    source = "{% if x == 0 %}a" + "".join(f"{{% elif x == {i} %}}v{i}" for i in range(1, links)) + "{% endif %}"
    for x in (0, links // 2, links - 1, links):
        assert same_outcome(ours_render(source, {"x": x}), ref_render(source, {"x": x}))
    go = '{{if eq .x "0"}}a' + "".join(f'{{{{else if eq .x "{i}"}}}}v{i}' for i in range(1, links)) + "{{end}}"
    assert compile_template(go, dialect="go", profile="plain").render({"x": str(links - 1)}) == f"v{links - 1}"


def test_a_compile_never_changes_the_recursion_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team s7h F2/F3: a compile that raised the process's recursion limit for a long
    chain let a render in another thread recurse in C past its stack (SIGSEGV on 1 MiB
    thread stacks), and crashed its own compile of deep parentheses on such a thread."""
    import sys
    import threading

    calls: list = []
    monkeypatch.setattr(sys, "setrecursionlimit", lambda n: calls.append(n))
    chain = "{% if x == 0 %}a" + "{% elif x %}b" * 99 + "{% endif %}"
    go = "{{ " + "(" * 1500 + "1" + ")" * 1500 + " }}{{ if .x }}a" + "{{ else if .x }}b" * 99 + "{{ end }}"
    outcomes: list = []

    def compile_both() -> None:
        outcomes.append(compile_template(chain).render({"x": 1}))
        try:
            compile_template(go, dialect="go")
        except CompileError as e:
            outcomes.append(e.code)

    threading.stack_size(1 << 20)
    try:
        thread = threading.Thread(target=compile_both)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(0)
    assert outcomes == ["b", "too-deep"] and calls == []



def test_lone_surrogates_are_clear_errors() -> None:
    """A lone surrogate (a JSON ``\\ud800`` escape) in a Go template: in a string constant, a
    syntax CompileError (its text is no UTF-8); in text, the execution error keeps Go's
    byte position (three bytes for it), as Go's would."""
    with pytest.raises(CompileError) as info:
        compile_template('{{"\ud800"}}', dialect="go")
    assert info.value.code == "syntax" and info.value.column == 3
    with pytest.raises(Exception) as error:
        compile_template("\ud800{{index 1 9}}", dialect="go").render({})
    assert str(error.value).startswith('template: :1:5: executing "" at <index 1 9>')


def test_unbounded_recursion_fails_like_jinja2() -> None:
    source = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"
    assert ref_render(source, {})[1].startswith("RecursionError")
    with pytest.raises(RecursionError, match="template recursion is too deep"):
        compile_template(source).render({})


def test_render_budget_stops_runaway_loops() -> None:
    template = compile_template("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
    with pytest.raises(RenderBudgetExceeded):  # the fuel (on by default) would stop it first
        template.render({}, budget=0.2, limits={"fuel": None})
    fast = compile_template("{{ x }}")
    assert fast.render({"x": "ok"}, budget=5.0) == "ok"


# ----------------------------------------------------------------------------- Go

GO_HOSTILE = [
    ('"""; import os; os.system("x"); """ {{ "\\"\\"\\"" }}', {}),
    ("{{ `''' + __import__('os')` }}", {}),
    ("a\\\nb {{ \"c\\\\\\nd\" }}", {}),
    ("nul\x00 {{ \"\\x00\" }} lone\rcr", {}),
    ("{{ $def := 1 }}{{ $class := 2 }}{{ $__builtins__ := 3 }}{{ $_w := 4 }}{{ $def }}{{ $class }}{{ $__builtins__ }}{{ $_w }}", {}),
    ('{{ define "a\\"b" }}x{{ end }}{{ template "a\\"b" . }}', {}),
    ("{{ .__class__ }}{{ .__dict__ }}", {"__class__": "k"}),
    ("{{ .x.__class__ }}", {"x": {"__class__": 1}}),
    ("{{ index . \"__globals__\" }}", {}),
    ("{{ call .f }}", {"f": 1}),
    ('{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}', {}),
    ("{{ range $i := 3 }}{{ $i }}{{ end }}", {}),
    ("{{ printf \"%v %s %d\" . .a }}", {"a": [1, "x", None]}),
]


@pytest.mark.parametrize("source,data", GO_HOSTILE, ids=[str(i) for i in range(len(GO_HOSTILE))])
def test_go_hostile_template_matches_go(source: str, data: dict) -> None:
    goref = pytest.importorskip("goref_client")
    try:
        template = compile_template(source, dialect="go", profile="plain", name='x"""\nimport os')
    except CompileError as e:
        ours = ("err", f"parse: {e.message}")
    else:
        compile(template.python_source, "<check>", "exec")
        _assert_no_template_text_in_code(template)
        try:
            ours = ("ok", template.render(data))
        except Exception as e:  # noqa: BLE001
            # the depth limit's error is an ExecError too (TemplateDepthExceeded)
            kind = "ExecError" if isinstance(e, ExecError) else type(e).__name__
            ours = ("err", f"{kind}: {e}")
    if not goref.go_available():
        pytest.skip("`go` is not available: generated-code checks done, reference comparison skipped")
    ok, out = goref.get_reference().plain(source, data)
    if ok:
        assert ours == ("ok", out)
    else:
        assert ours[0] == "err"
        kind = out.split(":", 1)[0]
        assert (kind == "parse") == ours[1].startswith("parse:"), (out, ours)
        if kind == "exec":
            assert ours[1].startswith("ExecError: ") and out.endswith(ours[1][len("ExecError: "):]), (out, ours)


# ----------------------------------------------------------------------------- helper objects

#: jinja2's own helper objects as a template reaches them: (before, expression, after)
HELPER_OBJECTS = {
    "self": ("", "self", ""),
    "loop": ("{% for x in [1] %}", "loop", "{% endfor %}"),
    "recursive-loop": ("{% for x in [[1]] recursive %}", "loop", "{% endfor %}"),
    "caller": ("{% macro m() %}", "caller", "{% endmacro %}{% call m() %}x{% endcall %}"),
    "varargs": ("{% macro m() %}", "varargs", "{% endmacro %}{{ m(1, 2) }}"),
    "kwargs": ("{% macro m() %}", "kwargs", "{% endmacro %}{{ m(a=1) }}"),
    "namespace": ("{% set ns = namespace(a=1) %}", "ns", ""),
    "macro": ("{% macro mm() %}{% endmacro %}", "mm", ""),
    "cycler": ("{% set c = cycler(1, 2) %}", "c", ""),
    "joiner": ("{% set j = joiner() %}", "j", ""),
    "range": ("", "range(3)", ""),
    "range-global": ("", "range", ""),
    "dict-global": ("", "dict", ""),
    "namespace-global": ("", "namespace", ""),
    "lipsum": ("", "lipsum", ""),
    "raise_exception": ("", "raise_exception", ""),
    "loop-cycle": ("{% for x in [1] %}", "loop.cycle", "{% endfor %}"),
    "undefined": ("", "nothing", ""),
}
PRIVATE_NAMES = [
    "_TemplateReference__context", "_context", "__class__", "__dict__", "_iterator", "_after", "_length",
    "_recurse", "_func", "_argument_count", "_environment", "_Namespace__attrs", "__init__", "__weakref__",
    "__len__", "__call__", "__next__", "_pos", "_x", "__x",
    # the classic escape routes and the rest of jinja2's helpers' private names
    "__globals__", "mro", "func_globals", "func_code", "im_func", "__code__", "__self__", "__func__",
    "__closure__", "__defaults__", "__kwdefaults__", "__wrapped__", "__module__", "__mro__", "__bases__",
    "__base__", "__subclasses__", "__getitem__", "__iter__", "__reduce__", "__reduce_ex__", "__getattribute__",
    "__setattr__", "__repr__", "__str__", "__hash__", "__doc__", "__name__", "__qualname__", "__annotations__",
    "_current", "_iterable", "_before", "_last_changed_value", "_undefined", "_peek_next", "_to_iterator",
    "_invoke", "_async_invoke", "_default_autoescape", "_items", "_Cycler__pos", "items", "gi_frame",
    "gi_code", "cr_frame", "f_globals", "start", "stop", "step", "index", "count",
]
#: the ways a template reaches an attribute, and uses it (the sandbox refuses in two stages)
FORMS = (
    "{{ %s.%s.x }}", "{{ %s['%s'].x }}", "{{ (%s|attr('%s')).x }}", "{{ %s.%s is defined }}",
    "{{ %s.%s() }}", "{{ %s.%s|string }}", "{{ [%s]|map(attribute='%s')|list }}",
)


def _masked(outcome: tuple) -> tuple:
    """An outcome with object addresses masked (a printed bound method shows one)."""
    return outcome[0], re.sub(r"0x[0-9a-f]+", "0x?", outcome[1])


@pytest.mark.parametrize("obj", list(HELPER_OBJECTS))
def test_private_attributes_of_helper_objects_refused_like_the_sandbox(obj: str) -> None:
    """Each private or dunder name: SecurityError where the attribute exists on jinja2's own
    object, UndefinedError where it does not, through ``.``, ``[]`` and ``|attr``."""
    before, expr, after = HELPER_OBJECTS[obj]
    for name in PRIVATE_NAMES:
        for form in FORMS:
            source = before + form % (expr, name) + after
            expected = ref_render(source, {})
            ours = _masked(ours_render(source, {}))
            assert same_outcome(ours, _masked(expected)), (source, expected, ours)


# ----------------------------------------------------------------------------- growth guards

@pytest.mark.parametrize("name", list(GROWTH))
def test_growth_is_refused_with_the_limit_and_small_arguments_render_like_the_sandbox(name: str) -> None:
    """The hostile template in the bounded child (1 GiB, a hang alarm): its limit, where;
    the same template with small arguments here, against transformers' sandbox."""
    hostile, limit, small = growth_case(name)
    row = bounded_row(f"jinja-growth/{name}")
    assert row["limit"] == limit, row
    assert row["where"].startswith(f"jinja-growth/{name}:1:"), row
    expected = ref_render(small, {})
    assert expected[0] == "ok", expected  # the reference accepts the template with small arguments
    assert compile_template(small, profile="plain").render({}) == expected[1]


@pytest.mark.parametrize("name", list(GO_GROWTH))
def test_go_growth_is_refused_and_small_arguments_render_like_go(name: str) -> None:
    hostile, small = GO_GROWTH[name]
    assert bounded_row(f"go-growth/{name}")["limit"] in ("value", "fuel")
    goref = pytest.importorskip("goref_client")
    if not goref.go_available():
        pytest.skip("`go` is not available: the small case is not compared")
    ok, out = goref.get_reference().plain(small, {})
    assert ok, out
    assert compile_template(small, dialect="go", profile="plain").render({}) == out


def test_go_slice_and_index_with_huge_arguments_fail_like_go() -> None:
    """Go's slice and index check bounds before building anything: an error, no limit."""
    goref = pytest.importorskip("goref_client")
    for source in ('{{ slice "abc" 0 1000000000 }}', "{{ index .a 1000000000 }}", '{{ slice .a 999999999 }}'):
        template = compile_template(source, dialect="go", profile="plain")
        with pytest.raises(ExecError):
            template.render({"a": [1, 2]})
        if goref.go_available():
            ok, out = goref.get_reference().plain(source, {"a": [1, 2]})
            assert not ok, out


# ----------------------------------------------------------------------------- positions


def test_limit_errors_carry_the_template_position() -> None:
    jinja = compile_template("line one\n  {{ 'x' * 10**9 }}", name="t.jinja")
    with pytest.raises(RenderLimitExceeded) as info:
        jinja.render({})
    assert (info.value.where, info.value.line, info.value.column) == ("t.jinja:2:3", 2, 3)
    assert str(info.value).startswith("t.jinja:2:3: a repetition")
    loop = compile_template("a\n{% for i in range(10) %}{% for j in range(500) %}{% endfor %}{% endfor %}", name="l")
    with pytest.raises(RenderLimitExceeded) as info:
        loop.render({}, limits={"fuel": 1000})  # the general path (limits given) too
    assert info.value.limit == "fuel" and info.value.where == "l:2:25"  # the inner loop's tag
    long = compile_template("a\n{% for i in range(3000) %}{% endfor %}", name="l")
    with pytest.raises(RenderLimitExceeded) as info:  # a loop longer than the fuel: at its start
        long.render({}, limits={"fuel": 1000})
    assert info.value.limit == "fuel" and info.value.where == "l:2:1"
    deep = compile_template("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}\n{{ f(0) }}", name="d")
    with pytest.raises(RenderLimitExceeded) as info:
        deep.render({})
    assert info.value.limit == "depth" and info.value.where == "d:1:17"


def test_go_limit_errors_carry_go_positions() -> None:
    """Go: ``LINE:COL`` as Go's own errors count them (the column a 0-based byte offset)."""
    cases = [
        ("a\n  {{ range 1000000000 }}x{{ end }}", {}, "fuel", "2:11"),  # the range's pipeline
        ('{{ range $.a }}\n{{ printf "%999999d" 1 }}{{ end }}', {"a": [1]}, "value", "2:3"),
        ("é{{ range $.a }}{{ range $.a }}{{ range $.a }}x{{ end }}{{ end }}{{ end }}", {"a": list(range(1000))}, "fuel", "1:42"),  # the innermost range's .a: byte 42, character 41
    ]
    for source, data, limit, where in cases:
        template = compile_template(source, dialect="go", profile="plain")
        with pytest.raises(RenderLimitExceeded) as info:
            template.render(data)  # located by CompiledTemplate._located (exec_errors.locate)
        error = info.value
        assert (error.limit, error.where) == (limit, where), (source, error.where)
        assert error.line == int(where.split(":")[0]) and str(error).startswith(where + ": ")


def test_go_limit_positions_through_every_entry_point() -> None:
    """The ollama profile's entry points (the fast render_conversation, the general one with
    a budget, render_generate) give a limit error its Go position as render() does."""
    source = "{{ .Prompt }}\n  {{ range 1000000000 }}x{{ end }}"
    template = compile_template(source, dialect="go", profile="ollama")
    calls = [
        lambda: template.render_conversation([{"role": "user", "content": "hi"}]),
        lambda: template.render_conversation([{"role": "user", "content": "hi"}], budget=60.0),
        lambda: template.render_generate("hi"),
    ]
    for call in calls:
        with pytest.raises(RenderLimitExceeded) as info:
            call()
        assert (info.value.limit, info.value.where) == ("fuel", "2:11")


def test_unsafe_methods_of_a_str_subclass_stay_refused() -> None:
    """A str subclass's methods (``Markup``'s, or the caller's own) go through the string
    guards, after the sandbox's refusal of a method marked unsafe, as jinja2 refuses it."""
    from jinja2.sandbox import unsafe

    class Text(str):
        @unsafe
        def boom(self) -> str:
            return "BOOM"

        def fine(self) -> str:
            return "fine"

    source = "{{ s.fine() }}|{{ s.boom() }}"
    ours, ref = ours_render(source, {"s": Text("x")}), ref_render(source, {"s": Text("x")})
    assert same_outcome(ours, ref) and ours[0] == "err" and "SecurityError" in ours[1]
    assert compile_template("{{ s.fine() }}").render({"s": Text("x")}) == "fine"


def test_urlize_trailing_punctuation_is_found_from_the_end() -> None:
    """``urlize`` splits off a word's trailing ``)``, ``>``, ``.``, ``,``, newlines and
    ``&gt;``: jinja2's ``re.search(r"([)>.,\\n]|&gt;)+$", word)`` tries every start and
    backtracks from each (a message of 30,000 dots and a letter took 17 s, in jinja2 too);
    the scan from the end finds the same start, on random words of those pieces, and the
    long message renders as jinja2 renders a shorter one of the same shape."""
    import random

    from tmpl2py.runtime.jinja.filters import _trailing_punctuation

    pieces = ["a", ")", ">", ".", ",", "\n", "&gt;", "&", "g", "t", ";", " ", "("]
    rng = random.Random(7)
    for _ in range(20000):
        word = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        match = re.search(r"([)>.,\n]|&gt;)+$", word)
        assert _trailing_punctuation(word) == (match.start() if match else len(word)), repr(word)
    template = "{{ m|urlize }}"
    for message in ("." * 300 + "x)", "see (www.a.org).. ok", "a&gt;&gt;." + "," * 50):
        assert same_outcome(ours_render(template, {"m": message}), ref_render(template, {"m": message}))
    long = compile_template(template).render({"m": "." * 30000 + "x)"})
    assert long == "." * 30000 + "x)"


#: red team s9h's filters and methods with ordinary arguments: rendered as jinja2 renders them
#: (the guards of the hostile forms, in ``hostile_cases.JINJA_DOS``, change nothing here)
S9H_SMALL = [
    ("{{ {}.fromkeys([1, 2], 'v') }}|{{ {}.fromkeys('ab')|length }}", {}),
    ("{{ ('a\\r' * 3)|indent(2) }}|{{ ('a\\u2028b' * 2)|indent('> ', true) }}", {}),
    ("{{ ('one two\\rthree' * 2)|wordwrap(5, wrapstring='|') }}", {}),
    ("{{ 'see www.x.com\\tand ab:y, mailto:a@b.c'|urlize(extra_schemes=['ab:'], target='t' * 20) }}", {}),
    ("{{ ['ab.com x.org']|urlize(target='_blank_window_target') }}", {}),
    ("{{ 'abc'.translate(['']*97 + ['XY', 'z']) }}|{{ 'abc'.translate({98: 'QQ'}) }}", {}),
    ("{{ [1, [2, {'a': 3}]]|tojson(separators=('-' * 20, '=' * 3)) }}", {}),
    ("{{ [1, [2, {'a': 3}]]|tojson(indent=20, separators=(', ', ': ')) }}", {}),
    ("{{ 1234|round(-2) }}|{{ 5.25|round(1, 'floor') }}|{{ 5.5|round(5000) }}|{{ 5|round(-5000) }}", {}),
    ("{{ (0).from_bytes('ab'.encode(), 'big') }}|{{ 12 is divisibleby(4) }}|{{ (7 ** 900) is divisibleby(7) }}", {}),
    ("{{ strftime_now('%Y') }}|{{ strftime_now('x' * 3000)|length }}", {}),
    ("{{ x|tojson(indent=20) }}", {"x": [1, [2], [2]]}),
    # round 2 (s9h2)
    ("{{ ('a ' * 5)|wordwrap(1.5, false, wrapstring='|') }}|{{ ('ab cd ' * 3)|wordwrap(true, false, wrapstring='-') }}", {}),
    ("{{ 'ff'|int(base=16) }}|{{ ('f' * 2000)|int(base=16) > 0 }}|{{ (0).from_bytes(bytes='ab'.encode(), byteorder='big') }}", {}),
    ("{{ range(2 ** 70, 2 ** 70 + 3)|list }}|{{ (range(3)|sum(start=2 ** 5000)) > 0 }}|{{ (3 ** 3000)|round(-5) > 0 }}", {}),
    ("{{ (x|items|select|map('first')|list) }}|{{ (x|items|reverse|list) }}|{{ (range(3)|reverse|select|list) }}", {"x": {"a": 1, "b": 2}}),
    ("{{ (x|items)|string|truncate(33, end='') }}|{{ x|items|list }}", {"x": {"k": [1]}}),
]


@pytest.mark.parametrize("source,context", S9H_SMALL, ids=[str(i) for i in range(len(S9H_SMALL))])
def test_red_team_s9h_filters_with_ordinary_arguments_render_as_jinja2(source: str, context: dict) -> None:
    assert same_outcome(ours_render(source, context), ref_render(source, context))


def test_tojson_indent_of_shared_or_cyclic_data_is_measured_once() -> None:
    """``tojson(indent=...)``'s guard walks each container once (red team s9h F6): data held
    many times is measured by its expansion at the cost of its size (a 60-level DAG: an
    output error at once, not a walk of 2**60 paths), and a list inside itself is json's
    ValueError, as jinja2 raises it (its walk never ended)."""
    x: list = [1]
    for _ in range(60):
        x = [x, x]
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template("{{ x|tojson(indent=20) }}").render({"x": x})
    assert info.value.limit == "output"
    cyclic: list = []
    cyclic.append(cyclic)
    source = "{{ l|tojson(indent=20) }}"
    assert ours_render(source, {"l": cyclic}) == ref_render(source, {"l": cyclic}) == (
        "err", "ValueError: Circular reference detected"
    )


def test_go_runs_of_one_role_are_merged_in_linear_time() -> None:
    """Ollama collates consecutive messages of one role (``collate``); each merge copied the
    run so far (``+=``: 100,000 one-line messages took 12.7 s before the template ran, red
    team s9h F10). The text is the same (checked against the Go reference for mixed runs)."""
    import time

    from hostile_cases import slowdown

    template = compile_template("{{ range .Messages }}[{{ .Role }}:{{ .Content }}]{{ end }}", dialect="go")
    roles = ["user", "user", "assistant", "user", "user", "user", "tool", "tool", "system", "system"]
    messages = [{"role": r, "content": f"m{i}"} for i, r in enumerate(roles)]
    ours = template.render_conversation(messages)
    goref = pytest.importorskip("goref_client")
    if goref.go_available():
        ok, expected = goref.get_reference().ollama(template.source, {"messages": messages})
        assert ok and ours == expected
    many = [{"role": "user", "content": f"m{i}"} for i in range(200_000)]
    start = time.perf_counter()
    assert compile_template("{{ len .Messages }}", dialect="go").render_conversation(many) == "1"
    assert time.perf_counter() - start < 2.0 * slowdown()
