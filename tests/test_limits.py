"""The work bounds (runtime/limits.py): every DoS class ends in RenderLimitExceeded within a
second under the default limits, memory stays bounded (the cases run in a child process
capped at 1 GiB: tests/hostile_cases.py), the limits are configurable per call
and per template (None turns one off), the shared corpus renders identically far below
them, and compiling is capped (``too-large`` / ``too-deep``)."""

from __future__ import annotations

import copy
import json
import os
import threading
import time

import pytest

from tmpl2py.compiler import CompileError, compile_template
from tmpl2py.runtime.budget import RenderBudgetExceeded
from tmpl2py.runtime.go.execute import ExecError
from tmpl2py.runtime import limits
from tmpl2py.runtime.limits import DEFAULT_LIMITS, Limits, RenderDepthExceeded, RenderLimitExceeded
from pathlib import Path

from tmpl2py_paths import SHARED as _BESIDE
from reference import ref_render
from hostile_cases import (
    GO_DOS,
    GO_HIDDEN_WORK,
    HEAVY_GO,
    HEAVY_JINJA,
    HIDDEN_WORK,
    JINJA_DOS,
    NS,
    bounded_row,
    slowdown as _slowdown,
)

#: ../shared, or where TMPL2PY_SHARED points (a worktree whose parent does not hold it)
SHARED = Path(os.environ.get("TMPL2PY_SHARED", str(_BESIDE)))



@pytest.mark.parametrize("name", list(JINJA_DOS))
def test_jinja_dos_ends_in_a_limit_error(name: str) -> None:
    """In a child process capped at 1 GiB, with a hang alarm (tests/hostile_cases.py)."""
    row = bounded_row(f"jinja-dos/{name}")
    assert row["limit"] in ("fuel", "output", "value", "depth") and row["message"]
    assert row["where"].startswith(f"jinja-dos/{name}:")


@pytest.mark.parametrize("name", list(GO_DOS))
def test_go_dos_ends_in_a_limit_error(name: str) -> None:
    bounded_row(f"go-dos/{name}")


@pytest.mark.parametrize("name", [f"jinja-heavy/{n}" for n in HEAVY_JINJA] + [f"go-heavy/{n}" for n in HEAVY_GO])
def test_heavy_per_item_helpers_in_loops_are_paid_for(name: str) -> None:
    """Each heavy helper, a billion times nominally: the fuel charges its work, so the
    render ends in a fuel error within the second."""
    assert bounded_row(name)["limit"] == "fuel"


@pytest.mark.parametrize(
    "name", [f"jinja-hidden/{n}" for n in HIDDEN_WORK] + [f"go-hidden/{n}" for n in GO_HIDDEN_WORK]
)
def test_work_hidden_in_one_step_is_paid_for(name: str) -> None:
    """A loop whose every iteration is one long C-level operation (a string scanned, a list
    searched or printed, a filter over a ``range``): a fuel error within the second."""
    assert bounded_row(name)["limit"] == "fuel"


def test_cpu_time_past_the_count_is_charged() -> None:
    """The meter charges the CPU time a render spends past the fuel it counted (ten units a
    microsecond, ``FUEL_PER_CPU_US``): a loop of cheap-looking iterations that each take
    ~100 us runs out of a 20,000-unit fuel within a few dozen iterations, where counting
    alone would allow 20,000; a loop of the same length whose iterations are cheap renders."""
    slow = compile_template(
        "{% set l = range(100000)|list %}{% for i in range(n) %}{% if 99999 in l %}{% endif %}{% endfor %}"
    )
    with pytest.raises(RenderLimitExceeded) as info:
        slow.render({"n": 19_000}, limits={"fuel": 20_000})
    assert info.value.limit == "fuel" and "CPU time" in str(info.value)
    cheap = compile_template("{% for i in range(n) %}{% endfor %}")  # ~30 ns an iteration
    assert cheap.render({"n": 19_000}, limits={"fuel": 20_000}) == ""
    # off with the fuel: no clock is read
    assert slow.render({"n": 300}, limits={"fuel": None}) == ""


def test_depth_errors_keep_the_dialects_categories() -> None:
    jinja = compile_template(JINJA_DOS["macro-recursion"])
    with pytest.raises(RecursionError, match="template recursion is too deep") as info:
        jinja.render({})
    assert isinstance(info.value, RenderDepthExceeded) and info.value.limit == "depth"
    go = compile_template(GO_DOS["template-recursion"][0], dialect="go", profile="plain")
    with pytest.raises(ExecError, match="exceeded maximum template depth") as info2:
        go.render({})
    assert isinstance(info2.value, RenderLimitExceeded)


@pytest.mark.parametrize(
    "source,context",
    [
        ("{{ '-' * 80 }}{{ 'ab' * 3 }}{{ [1] * 3 }}{{ 2 ** 10 }}{{ '%5d|%-4s' % (3, 'x') }}", {}),
        ("{{ x * n }}{{ (x, y) }}{{ ((x,),) }}{{ x + y }}{{ [x] + [y] }}", {"x": "ab", "y": "c", "n": 3}),
        ("{{ 'a<b>c<!-- d -->e'|striptags }}{{ 'x'|center(9) }}{{ 'a\nb'|indent(2, true) }}", {}),
        ("{{ [1, 2, 3]|batch(2, 0)|list }}{{ [1, 2, 3]|slice(2)|list }}{{ {'a': [1]}|tojson(indent=2) }}", {}),
        ("{{ '{:>6}'.format('x') }}{{ ['a', 'b']|join(', ') }}{{ [[1], [2]]|sum(start=[]) }}", {}),
        (NS + "{% for i in range(5) %}{% set ns.s = ns.s ~ ns.s %}{% set ns.t = (ns.t, i) %}{% endfor %}{{ ns.s }}{{ ns.t }}", {}),
        ("{% macro f(n) %}{% for i in range(n) %}{{ i }}{% endfor %}{% endmacro %}{% for n in range(4) %}{{ f(n) }}{% endfor %}", {}),
    ],
)
def test_guarded_operations_render_like_transformers(source: str, context: dict) -> None:
    expected = ref_render(source, context)
    assert expected[0] == "ok", expected
    assert compile_template(source).render(context) == expected[1]


@pytest.mark.parametrize(
    "source,context,guarded",
    [
        # a loop counter, a loop attribute, number arithmetic: ``%`` formats nothing
        ("{% for m in ms %}{{ loop.index0 % 2 }}{{ (loop.index + 1) % 3 }}{% endfor %}", {"ms": [1, 2, 3]}, False),
        # a constant format without wide fields builds its own text and its arguments'
        ("{{ '%s: %5d|%-4s' % (a, 3, 'x') }}{% set t = '%s!' % a %}{{ t }}", {"a": "hi"}, False),
        ("{{ '%.3f' % x }}{{ '%(k)s' % d }}{{ '%(k)s%(j)s' % d }}", {"x": 2.5, "d": {"k": "v", "j": 1}}, False),
        # one name in two fields prints its value twice: weighed (doubling through a loop)
        ("{{ '%(k)s%(k)s' % d }}", {"d": {"k": "v"}}, True),
        # a computed format, a '*' width, a wide field: checked before Python pads
        ("{{ f % a }}", {"f": "%s?", "a": "x"}, True),
        ("{{ '%*d' % (n, 1) }}", {"n": 3}, True),
        ("{{ '%9999d' % n }}", {"n": 3}, True),
        ("{{ n % m }}", {"n": 7, "m": 4}, True),
    ],
)
def test_modulo_is_guarded_where_it_can_format_wide(source: str, context: dict, guarded: bool) -> None:
    """A type rule: ``%`` goes through ``limits.mod`` only where it can be printf-style
    formatting with a width the template does not show; either way it renders like jinja2."""
    from tmpl2py.compiler.build import emitted

    expected = ref_render(source, context)
    assert expected[0] == "ok", expected
    assert compile_template(source).render(context) == expected[1]
    code = emitted(source, "jinja", "hf", None, True)[0]
    assert ("mod(" in code) is guarded, code


def test_wide_formats_stay_refused() -> None:
    with pytest.raises(RenderLimitExceeded, match="format width"):
        compile_template("{{ '%*d' % (n, 1) }}").render({"n": 10**9})
    with pytest.raises(RenderLimitExceeded, match="format width"):
        compile_template("{{ '%999999999d' % 1 }}").render({})


def test_loops_pay_at_their_start_and_leaf_macros_at_their_callers() -> None:
    """A loop is charged for all its iterations before the first (one subtraction, not one
    per iteration); a macro that calls no other pays nothing itself (its callers' loops
    count the call); a macro that calls others pays each call: an exponential tree of
    calls without a loop ends in the fuel limit."""
    from tmpl2py.compiler.build import emitted

    # (a loop over the template's own count: one over the input's parts with a light body
    # is not charged at all, tests/unit/test_input_loops.py)
    source = "{% macro leaf(x) %}[{{ x }}]{% endmacro %}{% for m in range(n) %}{{ leaf(m) }}{% endfor %}"
    code = emitted(source, "jinja", "hf", None, True)[0]
    assert "_fuel -= length_hint(" in code and code.count("_fuel -=") == 1, code
    assert "nonlocal" not in code  # the leaf counts nothing: render's counter stays a local
    assert compile_template(source).render({"n": 2}) == "[0][1]"
    tree = "{% macro f0() %}x{% endmacro %}" + "".join(
        f"{{% macro f{i}() %}}{{{{ f{i - 1}() }}}}{{{{ f{i - 1}() }}}}{{% endmacro %}}" for i in range(1, 31)
    ) + "{{ f30()|length }}"
    with pytest.raises(RenderLimitExceeded, match="loop iterations") as info:
        compile_template(tree).render({})
    assert info.value.limit == "fuel"
    ok = compile_template(tree.replace("f30()|length", "f8()|length"))
    assert ok.render({}) == ref_render(tree.replace("f30()|length", "f8()|length"), {})[1] == "256"


def test_limits_are_configurable_per_call_and_per_template() -> None:
    source = "{{ 'x' * 200000 }}"
    with pytest.raises(RenderLimitExceeded, match="repetition") as info:
        compile_template(source).render({})
    assert info.value.limit == "value"
    assert len(compile_template(source).render({}, limits=None)) == 200000
    assert len(compile_template(source).render({}, limits={"value": None})) == 200000
    lenient = compile_template(source, limits=Limits(value=10**6))
    assert len(lenient.render({})) == 200000
    with pytest.raises(RenderLimitExceeded):
        lenient.render({}, limits=DEFAULT_LIMITS)  # the call's limits replace the template's
    loop = compile_template("{% for i in range(3000) %}{% endfor %}ok")
    assert loop.render({}) == "ok"
    with pytest.raises(RenderLimitExceeded, match="loop iterations") as info:
        loop.render({}, limits={"fuel": 1000})
    assert info.value.limit == "fuel"
    assert loop.render({}, limits={"fuel": None}) == "ok"
    conv = compile_template("{% for m in messages %}{% for i in range(1000) %}{% endfor %}{{ m.content }}{% endfor %}")
    messages = [{"role": "user", "content": "hi"}] * 3
    assert conv.render_conversation(messages) == "hihihi"
    with pytest.raises(RenderLimitExceeded):
        conv.render_conversation(messages, limits={"fuel": 2000})


@pytest.mark.parametrize("dialect, source", [
    ("jinja", "{{ x }}{{ x }}"),
    ("jinja", "{% macro f(m) %}{{ m + m }}{% endmacro %}{{ f(x) }}"),
    ("jinja", "{% for m in messages %}{{ m.content }}{% endfor %}"),
    ("go", "{{ .x }}{{ .x }}{{ range .messages }}{{ .content }}{{ end }}"),
])
def test_an_output_cap_of_its_own_is_exact(dialect: str, source: str) -> None:
    """A cap smaller than the default's is enforced on a short render too (a few pieces,
    no long value built: an end that the default cap lets skip measuring), per call and per
    template; at the cap exactly, the text is returned."""
    context = {"x": "a" * 5000, "messages": [{"content": "a" * 5000}] * 2}
    template = compile_template(source, dialect=dialect)
    size = len(template.render(context))
    assert size >= 10000
    assert len(template.render(context, limits={"output": size})) == size
    with pytest.raises(RenderLimitExceeded, match=f"{size - 1:,} characters") as info:
        template.render(context, limits={"output": size - 1})
    assert info.value.limit == "output"
    capped = compile_template(source, dialect=dialect, limits=Limits(output=1000))
    with pytest.raises(RenderLimitExceeded):
        capped.render(context)
    if dialect == "jinja":  # the generated function's own entry (a module used on its own)
        with pytest.raises(RenderLimitExceeded):
            template._render(context, limits={"output": 1000})
        with pytest.raises(RenderLimitExceeded):
            template.render_conversation(context["messages"], limits={"output": 1000}, x="a" * 5000)


@pytest.mark.parametrize(
    "source",
    [
        # render's loop and a macro's loop
        "{% macro g() %}{% for i in range(6000) %}{% endfor %}{% endmacro %}"
        "{% for i in range(6000) %}{% endfor %}{{ g() }}ok",
        # a call block's body and a recursive loop count in the functions' box too
        "{% macro g() %}{{ caller() }}{% endmacro %}{% for i in range(6000) %}{% endfor %}"
        "{% call g() %}{% for i in range(6000) %}{% endfor %}{% endcall %}ok",
        "{% for i in range(6000) %}{% endfor %}{% for x in [range(6000)] recursive %}"
        "{% for i in x %}{% endfor %}{% endfor %}ok",
    ],
)
def test_render_and_its_functions_draw_on_one_pool(source: str) -> None:
    """render counts in a local, its functions in a box of their own: both lend from the one
    meter, so half the work on each side of the limit still exceeds it."""
    template = compile_template(source)
    assert template.render({}, limits={"fuel": 13_000}) == "ok"
    with pytest.raises(RenderLimitExceeded, match="loop iterations"):
        template.render({}, limits={"fuel": 10_000})
    with pytest.raises(RenderLimitExceeded, match="loop iterations"):
        template.render({}, limits={"fuel": 11_500})  # just below the whole work


def test_go_conversation_takes_limits() -> None:
    t = compile_template("{{ range .Messages }}{{ range $.Messages }}{{ end }}{{ .Content }}{{ end }}", dialect="go")
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}] * 20
    assert t.render_conversation(messages) == "qa" * 20
    with pytest.raises(RenderLimitExceeded):
        t.render_conversation(messages, limits={"fuel": 500})
    assert t.render_conversation(messages, limits=None) == "qa" * 20


def test_budget_is_a_deadline_without_a_thread() -> None:
    template = compile_template(JINJA_DOS["nested-range-empty"])
    threads = threading.active_count()
    start = time.perf_counter()
    with pytest.raises(RenderBudgetExceeded) as info:
        template.render({}, budget=0.05, limits={"fuel": None})
    assert time.perf_counter() - start < 1.0 * _slowdown()
    assert info.value.limit == "budget" and isinstance(info.value, RenderLimitExceeded)
    assert threading.active_count() == threads
    with pytest.raises(RenderBudgetExceeded):
        template.render({}, budget=0)
    assert compile_template("{{ x }}").render({"x": "ok"}, budget=5.0) == "ok"


def test_limits_do_not_leak_between_threads() -> None:
    template = compile_template("{% for i in range(3000) %}{% endfor %}ok")
    results: list = []

    def other() -> None:
        results.append(template.render({}))

    from tmpl2py.runtime.limits import using

    with using(Limits(fuel=100)):
        with pytest.raises(RenderLimitExceeded):
            template.render({})
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
    assert results == ["ok"]


def test_striptags_is_linear_and_exact() -> None:
    from markupsafe import Markup

    from tmpl2py.runtime.jinja.filters import do_striptags as striptags

    tricky = ["<!<!--x-->--y-->z", "<!-<!--a-->->b", "a<<b>>c", "<!-- <a> -->t<!--", "<!--->x-->y", "&amp; <b>x</b>"]
    for text in tricky:
        assert striptags(text) == Markup(text).striptags(), text
    big = "<a>x " * 200_000
    second = 1.0 * _slowdown()
    start = time.perf_counter()
    try:
        with limits.using(limits.UNLIMITED):  # called directly, its work is charged: no fuel cap
            assert striptags(big) == ("x " * 200_000).strip()
    finally:
        # called outside a render, its charge stays in the context: cleared as a render's end
        # clears it (the next render would find this account and count its time from here)
        limits.clear()
    assert time.perf_counter() - start < second


def test_compile_caps() -> None:
    with pytest.raises(CompileError) as info:
        compile_template("x" * 500_001)
    assert info.value.code == "too-large"
    assert compile_template("x" * 600_000, max_size=None).render({}) == "x" * 600_000
    deep = "{% if x %}" * 70 + "y" + "{% endif %}" * 70
    with pytest.raises(CompileError) as info:
        compile_template(deep)
    assert info.value.code == "too-deep" and info.value.line == 1
    chain = "{% if x == 0 %}a" + "".join(f"{{% elif x == {i} %}}b" for i in range(1, 70)) + "{% endif %}"
    assert compile_template(chain).render({"x": 7}) == "b"  # an elif chain is one level
    with pytest.raises(CompileError) as info:
        compile_template("{{ range 1 }}" * 70 + "{{ end }}" * 70, dialect="go")
    assert info.value.code == "too-deep"


@pytest.mark.parametrize("dialect, one", [
    ("jinja", "{%% macro m%d() %%}x{%% endmacro %%}"),
    ("jinja", "{%% macro m%d() %%}{{ caller() }}{%% endmacro %%}"),
    ("go", '{{define "d%d"}}x{{end}}'),
])
def test_a_template_defines_a_bounded_number_of_functions(dialect: str, one: str) -> None:
    """Each macro / Go template is a function nested in the render, which CPython compiles
    in time quadratic in their number: past MAX_FUNCTIONS, a ``too-large`` error at the one
    past the cap, before any parsing; ``max_size=None`` lifts it."""
    from tmpl2py.compiler.names import MAX_FUNCTIONS

    many = "".join(one % i for i in range(MAX_FUNCTIONS))
    compile_template(many, dialect=dialect)  # at the cap: compiles
    more = many + one % MAX_FUNCTIONS
    with pytest.raises(CompileError) as info:
        compile_template(more, dialect=dialect)
    assert info.value.code == "too-large"
    assert info.value.column == len(many) + 1  # the first function past the cap
    compile_template(more, dialect=dialect, max_size=None)


# ----------------------------------------------------------------------------- the shared corpus

STRICT = Limits(
    fuel=DEFAULT_LIMITS.fuel // 100, output=DEFAULT_LIMITS.output // 100, value=DEFAULT_LIMITS.value // 100
)


def _corpus(dialect: str):
    root = SHARED / "corpus" / dialect
    if not root.is_dir():
        pytest.skip(f"{root} is absent: the shared corpus is not beside this checkout")
    return root


def test_long_agentic_conversations_render_under_the_defaults() -> None:
    """1,000 tool-call messages (the corpus's tool-call conversation, repeated) through every
    corpus template: each renders under the default limits exactly as without any. Templates
    that scan the conversation once per message count over a million units here, in well
    under the half second of CPU time the default fuel stands for."""
    root = _corpus("jinja")
    fixture = json.loads((root / "fixtures" / "tool_calls_dict_args.json").read_text(encoding="utf-8"))
    messages = (fixture["messages"] * 1000)[:1000]
    rendered = 0
    for path in sorted((root / "templates").glob("*.jinja")):
        try:
            template = compile_template(path.read_bytes().decode("utf-8"), name=path.stem)
        except CompileError:
            continue
        try:
            free = template.render_conversation(
                messages, tools=fixture.get("tools"), add_generation_prompt=True, limits=None
            )
        except Exception:  # noqa: BLE001 - the template refuses this conversation: not a case
            continue
        got = template.render_conversation(messages, tools=fixture.get("tools"), add_generation_prompt=True)
        assert got == free, path.stem
        rendered += 1
    assert rendered >= 25  # the templates that accept this conversation (29 of the corpus)


def test_jinja_corpus_renders_identically_far_below_the_limits() -> None:
    """Every template x fixture renders as recorded with the defaults on, and also with limits
    a hundred times smaller (so the corpus uses under 1% of each)."""
    from reference import ours_conversation, same_outcome  # noqa: F401 (the shared comparison)

    root = _corpus("jinja")
    fixtures = sorted((root / "fixtures").glob("*.json"))
    cases = 0
    for path in sorted((root / "templates").glob("*.jinja")):
        try:
            template = compile_template(path.read_bytes().decode("utf-8"), name=path.stem)
        except CompileError as e:  # recorded as transformers' own failure: compared per case
            template, compile_error = None, ("err", f"CompileError: {e.message}")
        for fixture in fixtures:
            context = json.loads(fixture.read_text(encoding="utf-8"))
            base = root / "expected" / path.stem / fixture.stem
            expected = base.with_suffix(".txt")
            want = (
                ("ok", expected.read_text(encoding="utf-8"))
                if expected.exists()
                else ("err", base.with_suffix(".error").read_text(encoding="utf-8"))
            )
            if template is None:
                assert same_outcome(compile_error, want), f"{path.stem}/{fixture.stem}"
                continue
            for limits in (DEFAULT_LIMITS, STRICT):
                ctx = copy.deepcopy(context)
                messages = ctx.pop("messages")
                try:
                    got = ("ok", template.render_conversation(messages, limits=limits, **ctx))
                except RenderLimitExceeded as e:
                    pytest.fail(f"{path.stem}/{fixture.stem}: {e}")
                except Exception as e:  # noqa: BLE001 (the recorded error is compared)
                    got = ("err", f"{type(e).__name__}: {e}")
                assert same_outcome(got, want), f"{path.stem}/{fixture.stem}"
            cases += 1
    assert cases > 100


def test_go_corpus_renders_identically_far_below_the_limits() -> None:
    root = _corpus("gotmpl")
    cases = 0
    for path in sorted((root / "templates").glob("*.gotmpl")):
        template = compile_template(
            path.read_bytes().decode("utf-8", "surrogateescape"), dialect="go", name=path.stem
        )
        for fixture in sorted((root / "fixtures").glob("*.json")):
            request = json.loads(fixture.read_text(encoding="utf-8"))
            want = (root / "expected" / path.stem / f"{fixture.stem}.txt").read_bytes()
            for limits in (DEFAULT_LIMITS, STRICT):
                got = template.render_conversation(
                    request.get("messages"), tools=request.get("tools"), think=request.get("think"),
                    now="2024-07-26", limits=limits,
                )
                assert got.encode("utf-8", "surrogateescape") == want, f"{path.stem}/{fixture.stem}"
            cases += 1
    assert cases > 100


# ----------------------------------------------------------------------------- weights


def test_weights_count_each_path_and_cost_o_of_the_objects() -> None:
    """``limits.weigh``: what printing a value costs, each value counted as often as it is
    held, computed once per object (a doubling of 60 steps is weighed in 60 steps)."""
    node = limits.NODE
    assert limits.weigh("abc", {}) == node + 3
    assert limits.weigh(7, {}) == node
    assert limits.weigh(["ab", 1], {}) == node + (node + 2) + node
    assert limits.weigh({"k": "v"}, {}) == node + 2 * (node + 1)
    shared: list = ["x"]
    for _ in range(60):
        shared = [shared, shared]
    # w(0) = node + (node + 1); w(k) = node + 2 * w(k - 1)
    assert limits.weigh(shared, {}) == 2**60 * (2 * node + 1) + (2**60 - 1) * node
    cyclic: list = [1]
    cyclic.append(cyclic)  # prints as [1, [...]]: the cycle counts one item
    assert limits.weigh(cyclic, {}) == 3 * node
    assert limits.weigh({}.items(), {}) == node


def test_real_accumulations_stay_far_below_the_weight_limit() -> None:
    """Templates that collect messages, tools or parts into lists render as jinja2 does,
    with a long conversation (a list the template builds, holding what the data holds)."""
    source = (
        "{% set ns = namespace(msgs=[], roles=[]) %}{% for m in messages %}"
        "{% set ns.msgs = ns.msgs + [m] %}{% set ns.roles = ns.roles + [m.role] %}{% endfor %}"
        "{% set pair = [ns.msgs, ns.msgs] %}{{ pair|length }}{{ ns.msgs|tojson|length }}"
        "{{ ns.roles|unique|list }}{{ (ns.msgs|map(attribute='content')|list)[-1] }}"
        "{{ dict(a=ns.roles[:3], b=ns.roles[:3]) }}"
    )
    messages = [
        {"role": ("user", "assistant")[i % 2], "content": f"message {i} " + "x" * 200} for i in range(4000)
    ]
    expected = ref_render(source, {"messages": messages})
    assert expected[0] == "ok", expected
    assert compile_template(source).render({"messages": messages}) == expected[1]


def test_a_charge_before_the_first_refuel_counts() -> None:
    """A heavy helper called before the render's first refuel (no loop yet) is charged to
    an account the render then adopts, not forgotten (a list holding one namespace 100,000
    times prints it 100,000 times, each charged)."""
    source = "{% set inner = namespace(s='x' * 10000) %}{{ ([inner] * 20000)|string|length }}"
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({})
    assert info.value.limit == "fuel"
    small = "{% set inner = namespace(s='x' * 10) %}{{ ([inner] * 3)|string|length }}"
    expected = ref_render(small, {})
    assert compile_template(small).render({}) == expected[1]


def test_the_fuel_limit_is_exact_at_any_chunk_size() -> None:
    """Chunks grow (each twice the last, up to ``CHUNK_MAX``) and the last one lends what the
    pool holds, so the largest loop a fuel allows grows in proportion to the fuel: a render
    is stopped when it has used more than its fuel, never a chunk early."""
    template = compile_template("{% for i in range(n) %}{% endfor %}")

    def largest(fuel: int) -> int:
        low, high = 0, fuel + 1  # the loop costs at least one unit per iteration
        while high - low > 1:
            mid = (low + high) // 2
            try:
                template.render({"n": mid}, limits={"fuel": fuel})
                low = mid
            except RenderLimitExceeded:
                high = mid
        return low

    one = largest(10_000)
    assert one > 0
    for factor in (3, 7):
        assert abs(largest(10_000 * factor) - factor * one) <= factor
