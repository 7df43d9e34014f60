"""The rules that make the work bounds cheaper (issue #18's cost target), each with the attack
it could have opened, still refused: the meter cleared as each render ends (no look at its
start), the output checked before the final join, namespaces and
other plain objects as leaves of the quick weighing, ``+`` of a known string with the size
check only, and variables that only their own ``+`` reads (self-fed) without weights."""

from __future__ import annotations

import tracemalloc

import pytest

from tmpl2py.compiler import compile_template
from tmpl2py.runtime import limits
from tmpl2py.runtime.jinja.objects import Namespace
from tmpl2py.runtime.limits import Limits, Meter, RenderLimitExceeded

from reference import ours_render, ref_render, same_outcome

NS = "{% set ns = namespace(s='ab', l=[1, 2], t=()) %}"


def _same_as_jinja2(source: str, context: dict) -> None:
    expected = ref_render(source, context)
    assert expected[0] == "ok", expected
    assert compile_template(source).render(context) == expected[1]


# ------------------------------------------------------------------ the meter cleared as a render ends


@pytest.mark.parametrize(
    "source",
    [
        # an early charge (an int owed), a refuel (the meter), both, and an error after them
        "{% set inner = namespace(s='x' * 10) %}{{ ([inner] * 300)|string|length }}",
        "{% for i in range(300) %}{% endfor %}{{ 'ok' }}",
        "{% for i in range(300) %}{% endfor %}{% set inner = namespace(s='x') %}"
        "{{ ([inner] * 300)|string|length }}",
        "{% set inner = namespace(s='x' * 10) %}{{ ([inner] * 300)|string|length }}"
        "{{ raise_exception('no') }}",
        "{% for i in range(300) %}{% endfor %}{{ 1 / 0 }}",
    ],
)
def test_every_render_leaves_its_context_clear(source: str) -> None:
    """A render clears its context's meter as it ends, returning or raising (the ``try``
    around its body), so the next render finds nothing there without looking (no
    ``begin`` in its prologue): its charges open its own account."""
    template = compile_template(source)
    expected = ref_render(source, {})
    for _ in range(2):
        if expected[0] == "ok":
            assert template.render({}) == expected[1]
        else:
            with pytest.raises(Exception):
                template.render({})
        assert limits.live() is None
    text = template.python_source
    # the render is its own entry point: its ``except`` clears the meter (``render_failed``)
    assert "except BaseException as _e:" in text and "render_failed(_e)" in text
    assert text.index("_fuel = 1024") < text.index("try:") if "_fuel" in text else True


def test_a_render_that_never_charged_reads_nothing_at_its_start() -> None:
    """The context's meter is looked at once, at the end, and only set when it was used."""
    text = compile_template("{% for m in messages %}{{ m }}{% endfor %}").python_source
    body = text[text.index("def render"):]
    assert "live()" not in body[: body.index("for ")]


def test_a_charge_after_a_clear_context_still_counts() -> None:
    """With nothing left in the context (no ``begin`` then), an early charge still makes the
    render's account, and the render is stopped by it (the test of test_limits, twice in a
    row: the first render's meter must not leak into the second's)."""
    source = "{% set inner = namespace(s='x' * 10000) %}{{ ([inner] * 20000)|string|length }}"
    template = compile_template(source)
    for _ in range(2):
        with pytest.raises(RenderLimitExceeded) as info:
            template.render({})
        assert info.value.limit == "fuel"
    small = compile_template("{{ 'ok' }}")
    assert small.render({}) == "ok"


def test_early_charges_are_owed_as_an_int_and_refused_as_the_meter_would() -> None:
    """Charges before the first refuel are kept as what they owe (no meter made), refused the
    moment the pool could not pay them, and taken by the first refuel in full; a unit of
    work costs ``FUEL_PER_UNIT`` fuel; a charge of a chunk of units or more (heavy work)
    makes the meter at once, so its clock runs."""
    unit = limits.FUEL_PER_UNIT
    limits.clear()
    try:
        with limits.using(Limits(fuel=1000 * unit + limits.FIRST_CHUNK)):
            limits.charge(10)  # a few units: the first chunk's slack
            assert limits.live() is None
            limits.charge(100)
            limits.charge(200)
            assert limits.live() == 300 * unit
            limits.charge(200)
            limits.charge(200)
            limits.charge(200)  # 900 units: the pool (1000 units past the first chunk) still pays
            assert limits.live() == 900 * unit
            with pytest.raises(RenderLimitExceeded) as info:
                limits.charge(200)  # 1,100 units: refused at once
            assert info.value.limit == "fuel" and limits.live() is None
            limits.charge(100)
            meter, fuel = limits.refuel(None, None, -5)
            assert fuel == limits.CHUNK
            assert meter.fuel == 1000 * unit - 100 * unit - 5 - limits.CHUNK
            with pytest.raises(RenderLimitExceeded):
                limits.charge(900)  # now charged to the meter itself
        limits.clear()
        with limits.using(Limits(fuel=1000 * unit + limits.FIRST_CHUNK)):
            limits.charge(limits.CHUNK)  # heavy work: the meter is made at once
            assert type(limits.live()) is limits.Meter
            assert limits.live().fuel == 1000 * unit - limits.CHUNK * unit
    finally:
        limits.clear()
    assert limits.active == []


JINJA_ENDS = [
    "{{ 'ok' }}",  # quiet
    "{% for i in range(3000) %}{% endfor %}{{ 'ok' }}",  # refuels
    "{% set inner = namespace(s='x' * 10) %}{{ ([inner] * 300)|string|length }}",  # an early charge
    "{{ ('x' * 70000)|length }}",  # a mark (a long value built)
    "{% for i in range(3000) %}{% endfor %}{{ 1 / 0 }}",  # refuels, then an error
    "{{ ('x' * 70000)|length }}{{ raise_exception('no') }}",  # a mark, then an error
]


@pytest.mark.parametrize("source", JINJA_ENDS)
def test_the_live_renders_count_is_kept_exactly(source: str) -> None:
    """``limits.active`` counts the contexts whose meter is set: every way a render ends,
    returning or raising, after a refuel, an early charge or a mark, leaves it as it found
    it (empty), so generated code's looks read the context only while some render has one."""
    assert limits.active == [] and limits.live() is None
    template = compile_template(source)
    for _ in range(2):
        try:
            template.render({})
        except Exception:
            pass
        assert limits.active == [] and limits.live() is None and limits._long.get() is None
    go = compile_template("{{range .}}{{.}}{{end}}{{index . 5000}}", dialect="go", profile="plain")
    for data in (list(range(3000)), list(range(6000)), [1]):
        try:
            go.render(data)
        except Exception:
            pass
        assert limits.active == [] and limits.live() is None


def test_a_render_while_another_thread_holds_a_meter_still_settles() -> None:
    """Another thread's meter makes ``active`` non-empty: this thread's looks then read its
    own context (nothing there), and its own charges and refuels are still settled as it
    ends, its count taken back; the other thread's entry stays until it clears."""
    import threading

    holding, release, done = threading.Event(), threading.Event(), threading.Event()

    def other() -> None:
        limits.charge(limits.CHUNK)  # this thread's context now holds a meter
        holding.set()
        release.wait(10)
        limits.clear()
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    try:
        assert holding.wait(10)
        assert len(limits.active) == 1 and limits.live() is None  # not this thread's
        for source in JINJA_ENDS[1:4]:
            template = compile_template(source)
            assert template.render({}) == ref_render(source, {})[1]
            assert len(limits.active) == 1 and limits.live() is None
        with pytest.raises(RenderLimitExceeded):
            compile_template("{% for i in range(10**5) %}{% for j in range(100) %}{% endfor %}{% endfor %}").render({})
        assert len(limits.active) == 1 and limits.live() is None
    finally:
        release.set()
        thread.join(10)
    assert done.is_set() and limits.active == []


# ------------------------------------------------------------------ quick weighing of leaves


class _Text(str):
    pass


class _Items(list):
    pass


@pytest.mark.parametrize(
    "value",
    [
        [Namespace(a=1)],
        [{"role": "system", "content": Namespace(x="y" * 100)}, "text"],
        [_Text("abc"), ["x", _Text("de")], {"k": _Text("v")}],
        [[Namespace()], _Items(["x", "y"])],  # a container subclass: the general walk
        ({"a": [1, 2, 3]}, {1, 2}, Namespace()),
    ],
)
def test_the_quick_weighing_weighs_as_the_general_walk(value: object) -> None:
    assert limits.weigh(value, {}) == limits._walk(value, {})


def test_namespace_items_still_double_into_a_refusal() -> None:
    """Lists holding namespaces are now weighed by the quick tree: doubling them is still
    refused before anything prints them."""
    source = (
        "{% set n = namespace(l=[namespace(s='x' * 1000), 'y']) %}"
        "{% for i in range(40) %}{% set n.l = [n.l, n.l] %}{% endfor %}{{ n.l }}"
    )
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({})
    assert info.value.limit == "output"
    source = "{% set m = namespace(x=1) %}{% set messages = [m] + messages %}{{ messages|length }}"
    assert compile_template(source).render({"messages": [{"role": "user"}]}) == "2"


# ------------------------------------------------------------------ + of a known string


def test_a_known_string_plus_checks_only_the_size() -> None:
    # (y in a namespace: a + of two parts of the input is not checked at all,
    # tests/unit/test_input_loops.py)
    source = "{% set n = namespace(y=y) %}{% set t = ('a' ~ x) + n.y %}{{ t }}"
    code = compile_template(source).python_source
    assert "concatenated(" in code and "added(" not in code and "type(_a" not in code
    _same_as_jinja2(source, {"x": "b", "y": "c"})


def test_a_known_string_doubling_is_still_refused() -> None:
    source = (
        "{% set ns = namespace(s='x' * 100000) %}"
        "{% for i in range(40) %}{% set ns.s = ns.s + ('' ~ ns.s) %}{% endfor %}{{ ns.s|length }}"
    )
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({})
    assert info.value.limit in ("output", "fuel")


def test_a_list_plus_a_known_string_still_raises() -> None:
    template = compile_template("{% set l = items + ('' ~ x) %}{{ l }}")
    with pytest.raises(TypeError):
        template.render({"items": [1, 2], "x": "ab"})


def test_a_plus_written_through_to_str_checks_only_the_size() -> None:
    """``{{ a + b }}`` of values of unknown types is converted to text and written, never
    kept: the size check only (no weight, no list tests)."""
    # (in a macro: its parameters are no parts of the input, whose + is not checked at all)
    source = (
        "{% macro m(bos_token, system, context) %}{{ bos_token + system }}"
        "{{ bos_token + system + context }}{% endmacro %}{{ m(bos_token, system, context) }}"
    )
    code = compile_template(source).python_source
    assert "concatenated(" in code and "added(" not in code and "_built" not in code
    _same_as_jinja2(source, {"bos_token": "<s>", "system": "hi", "context": "c"})
    _same_as_jinja2("{{ items + items }}", {"items": [1, "a"]})


def test_string_doubling_through_a_macros_written_plus_is_still_refused() -> None:
    """A macro's buffer is not read by the meter: its ``{{ x + x }}`` still charges a long
    concatenation as it builds it, so doubling a string through the macro's result stops."""
    source = (
        "{% macro d(x) %}{{ x + x }}{% endmacro %}{% set ns = namespace(s='x') %}"
        "{% for i in range(60) %}{% set ns.s = d(ns.s) %}{% endfor %}{{ ns.s|length }}"
    )
    with pytest.raises(RenderLimitExceeded):
        compile_template(source).render({})


# ------------------------------------------------------------------ l + [item]


@pytest.mark.parametrize(
    "left, item",
    [
        ([], "x"),
        (["a", "bb"], {"role": "user", "content": ["t", {"k": "v"}]}),
        ([["x"] * 3], ["x"] * 3),
        (["a"], Namespace(s="y" * 50)),
        ([1, 2], 3.5),
        ((1, 2), "tuple on the left: add's TypeError"),
        ("text", "str on the left"),
    ],
)
def test_add_item_is_add_of_a_one_item_list(left: object, item: object) -> None:
    """The same value (or error) and the same weight as ``add(built, left, [item])``."""
    built_a: dict = {}
    built_b: dict = {}
    try:
        expected = limits.add(built_a, left, [item])
    except TypeError as error:
        with pytest.raises(TypeError, match=str(error)[:20]):
            limits.add_item(built_b, left, item)
        return
    made = limits.add_item(built_b, left, item)
    assert made == expected
    assert built_b[id(made)][1] == built_a[id(expected)][1] == limits._walk(made, {})


def test_growing_a_list_by_one_item_is_still_weighed() -> None:
    """``l + [l]`` nests the list in itself (each step doubles what printing it costs) and
    ``l + [big]`` holds one long string many times: both refused before printing."""
    nested = (
        "{% set ns = namespace(l=['x' * 100]) %}"
        "{% for i in range(60) %}{% set ns.l = ns.l + [ns.l] %}{% endfor %}{{ ns.l }}"
    )
    held = (
        "{% set big = 'x' * 100000 %}{% set ns = namespace(l=[]) %}"
        "{% for i in range(5000) %}{% set ns.l = ns.l + [big] %}{% endfor %}{{ ns.l }}"
    )
    for source in (nested, held):
        template = compile_template(source)
        assert "add_item(" in template.python_source
        with pytest.raises(RenderLimitExceeded) as info:
            template.render({})
        assert info.value.limit == "output"


def test_a_short_list_grown_by_a_short_string_inline_is_still_weighed_later() -> None:
    """``l + [s]`` with ``l`` a list under ``GROWN_INLINE`` items and ``s`` a short ``str``
    is built inline, unregistered (``Emitter._grown_list``); the same template's longer
    list, other items and other left operands take ``add_item``. Each renders as jinja2
    does, and a list grown inline then doubled by nesting is walked, weighed and refused."""
    grow = (
        "{% set ns = namespace(l=[]) %}{% for i in range(100) %}{% set ns.l = ns.l + ['x' ~ i] %}"
        "{% endfor %}{% set t = (1, 2) %}{% set u = [1] + [t] %}"
        "{{ ns.l|length }} {{ ns.l[3] }} {{ ns.l[70] }} {{ u }} {{ ([] + [{'a': 1}])|tojson }}"
    )
    template = compile_template(grow)
    assert " + [_it" in template.python_source and "add_item(" in template.python_source
    assert same_outcome(ours_render(grow, {}), ref_render(grow, {}))
    doubled = (
        "{% set s = 'y' * 60000 %}{% set ns = namespace(l=[]) %}"
        "{% for i in range(60) %}{% set ns.l = ns.l + [s] %}{% endfor %}"
        "{% for i in range(40) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}"
    )
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(doubled).render({})
    assert info.value.limit == "output"


# ------------------------------------------------------------------ self-fed variables

#: a list of 4,096 copies of one 100,000-character string weighs ~400 MB, past the limit
_DOUBLE = "{% set big = 'x' * 100000 %}{% set l = [big] %}" + "{% set l = l + l %}" * 12


def test_a_variable_only_its_own_plus_reads_is_not_weighed() -> None:
    """``l`` holds 4,096 paths to one long string but nothing ever reads it: not refused."""
    template = compile_template(_DOUBLE + "done")
    assert "concatenated(" in template.python_source and "added(" not in template.python_source
    assert template.render({}) == "done"


@pytest.mark.parametrize(
    "read",
    [
        "{{ l }}",
        "{{ l|length }}",
        "{% set m = l %}",
        "{% for x in l %}{% endfor %}",
        "{% set n = [l] %}",
        "{% if l %}{% endif %}",
        "{% set k = l + l %}",  # another variable's +: k holds l
    ],
)
def test_a_self_fed_variable_read_through_another_path_is_still_weighed(read: str) -> None:
    template = compile_template(_DOUBLE + read)
    assert "added(" in template.python_source
    with pytest.raises(RenderLimitExceeded) as info:
        template.render({})
    assert info.value.limit == "output"


def test_a_self_fed_variable_a_macro_reads_is_still_weighed() -> None:
    source = "{% macro show() %}{{ l }}{% endmacro %}" + _DOUBLE + "{{ show() }}"
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({})
    assert info.value.limit == "output"


def test_self_fed_doubling_is_still_stopped_by_its_length() -> None:
    """Not weighed, but a ``+`` past ten times ``Limits.value`` items is still refused: a
    self-fed list cannot grow the process."""
    source = "{% set l = [1] %}" + "{% set l = l + l %}" * 40 + "done"
    template = compile_template(source)
    assert "added(" not in template.python_source
    with pytest.raises(RenderLimitExceeded) as info:
        template.render({})
    assert info.value.limit == "value"


def test_a_loops_copy_of_a_list_only_its_set_reads() -> None:
    """jinja2's scoping: a ``set`` in a loop body assigns the loop's own copy, which each
    iteration starts again from the outer list (Mistral's ``filtered_messages``): grown once
    an iteration from that fresh copy, it is the outer list and one item (a part: no check),
    and the outer list, read by the next loop, is not affected. Read twice by its ``+`` it
    would double within the iteration: checked."""
    source = (
        "{% set kept = [] %}{% for m in messages %}{% if m.role != 'tool' %}"
        "{% set kept = kept + [m] %}{% endif %}{% endfor %}"
        "{% for m in kept %}{{ m.role }}{% endfor %}{{ kept|length }}"
    )
    template = compile_template(source)
    assert "concatenated(" not in template.python_source and "added(" not in template.python_source
    _same_as_jinja2(source, {"messages": [{"role": "user"}, {"role": "tool"}]})
    doubled = source.replace("kept + [m]", "kept + kept + [m]")
    assert "concatenated(" in compile_template(doubled).python_source
    _same_as_jinja2(doubled, {"messages": [{"role": "user"}, {"role": "tool"}]})


def test_a_value_grown_once_an_iteration_from_a_fresh_one_is_not_checked() -> None:
    """``InputLoops.once``: a name an iteration sets from a part, then grows once (Llama 3's
    ``content = bos_token + content`` in the first iteration), holds a part in every
    iteration: its ``+`` needs no check and the render stays quiet (no look at the meter at
    its end). Fed across iterations (a namespace, or a name the next iteration reads before
    setting it), the same ``+`` is still checked, and doubling is still refused."""
    source = (
        "{% for m in messages %}{% set c = '<' + m.role + '>' + m.content %}"
        "{% if loop.index0 == 0 %}{% set c = bos_token + c %}{% endif %}{{ c }}{% endfor %}"
    )
    text = compile_template(source).python_source
    assert "concatenated(" not in text and "live()" not in text
    _same_as_jinja2(source, {"messages": [{"role": "user", "content": "hi"}] * 3, "bos_token": "<s>"})
    across = "{% set ns = namespace(c='ab') %}{% for m in messages %}{% set ns.c = ns.c + ns.c %}{% endfor %}{{ ns.c|length }}"
    with pytest.raises(RenderLimitExceeded):
        compile_template(across).render({"messages": [{"role": "user"}] * 64})


# ------------------------------------------------------------------ the output measured at the end

_LONG_JINJA = "{% set s = ('x' * 10000)|replace('x', 'y' * 999) %}"
_LONG_GO = '{{ $s := printf "%099999d" 1 }}{{ range 5 }}{{ $s = printf "%s%s" $s $s }}{{ end }}'


@pytest.mark.parametrize(
    "source, dialect, limit",
    [
        (_LONG_JINJA + "{% for i in range(250) %}{{ s }}{% endfor %}", "jinja", "output"),
        (_LONG_JINJA + "{{ s }}" * 250, "jinja", "output"),
        (_LONG_JINJA + "{% macro p() %}{{ s }}{% endmacro %}" + "{{ p() }}" * 250, "jinja", "output"),
        (_LONG_GO + "{{ range 240 }}{{ $s }}{{ end }}", "go", "fuel"),
        (_LONG_GO + "{{ $s }}" * 240, "go", "output"),
    ],
)
def test_a_long_string_printed_within_the_first_chunk_is_refused_before_the_join(
    source: str, dialect: str, limit: str
) -> None:
    """Straight prints: the render's end measures them (``limits.settle``) before ``"".join``
    would allocate 2.5 GB; a loop holding a long value is looked at after 1, 4, 16...
    iterations, its output measured (the cap) then charged (the fuel): Jinja's 10M-character
    string passes the cap at 160M, Go's 3.2M-character one the fuel first."""
    template = compile_template(source, dialect=dialect, profile="plain" if dialect == "go" else "hf")
    tracemalloc.start()
    with pytest.raises(RenderLimitExceeded) as info:
        template.render({})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert info.value.limit == limit and limits.live() is None
    assert peak < 300_000_000  # the long value and its copies, never the join


def test_a_render_that_refueled_is_settled_however_few_its_pieces() -> None:
    """The end tests ``active`` before the meter (``_m``): a refuel makes the context's meter,
    which ``active`` counts until the render clears it, so a render that refueled is
    settled: the 200 prints of a long value after it are measured before the join."""
    source = "{% for i in range(5000) %}{% endfor %}{% for i in range(200) %}{{ big }}{% endfor %}"
    template = compile_template(source)
    assert "active and (_m is not None" in template.python_source
    with pytest.raises(RenderLimitExceeded) as info:
        template.render({"big": "x" * 1_000_000})
    assert info.value.limit == "output"
    assert limits.live() is None and limits.active == []


@pytest.mark.parametrize("dialect", ["jinja", "go"])
def test_many_unmarked_pieces_are_measured_too(dialect: str) -> None:
    """Strings no guard marks are at most ``limits.UNMARKED`` characters; past SETTLE_PIECES pieces the
    end measures the output anyway (here under the cap: it renders as it would)."""
    from tmpl2py.compiler.fuel import SETTLE_PIECES

    calls = []
    settle = limits.settle
    limits.settle = lambda meter, out: calls.append(len(out)) or settle(meter, out)
    try:
        if dialect == "jinja":
            source = "{{ 'x' }}" + "{{ a }}{{ b }}" * SETTLE_PIECES
            template = compile_template(source)
        else:
            source = "{{ .a }}{{ .b }}" * SETTLE_PIECES
            template = compile_template(source, dialect="go", profile="plain")
        out = template.render({"a": "1", "b": "2"})
    finally:
        limits.settle = settle
    assert out == "x" * (dialect == "jinja") + "12" * SETTLE_PIECES
    assert calls and calls[0] > SETTLE_PIECES


def test_a_short_render_is_not_measured() -> None:
    calls = []
    settle = limits.settle
    limits.settle = lambda meter, out: calls.append(len(out)) or settle(meter, out)
    try:
        template = compile_template("{% for m in messages %}{{ m }}{% endfor %}")
        assert template.render({"messages": ["a", "b"]}) == "ab"
    finally:
        limits.settle = settle
    assert calls == []


def test_many_prints_of_an_unmarked_string_are_refused_at_the_end() -> None:
    """A 60,000-character string (no guard marks it) printed 2,000 times in straight code:
    120M characters, refused by the end's measure (more than SETTLE_PIECES pieces)."""
    source = "{% set s = (['x' * 4000] * 15)|join %}" + "{{ s }}" * 2000
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({})
    assert info.value.limit == "output"


def test_a_charged_render_with_few_pieces_is_not_summed() -> None:
    """A render charged for a long concatenation (not marked) writes at most
    ``len(out) * (UNMARKED + OUTPUT_PER_UNIT * owed / FUEL_PER_UNIT)`` characters: under the cap, no sum."""
    source = "{% set t = x + x %}{{ t|length }}"
    sums = []
    real_sum = limits.__builtins__["sum"] if isinstance(limits.__builtins__, dict) else sum
    template = compile_template(source)
    limits.sum = lambda items: sums.append(1) or real_sum(items)  # type: ignore[attr-defined]
    try:
        assert template.render({"x": "y" * 5000}) == "10000"
    finally:
        del limits.sum  # type: ignore[attr-defined]
    assert sums == [] and limits.live() is None


# ------------------------------------------------------------------ plain + where it cannot grow


def test_a_plus_of_a_known_number_stays_plain() -> None:
    """``loop.index0 + n`` (a loop counter, a numeric loop attribute): a number plus anything
    builds no sequence, or raises as Python does."""
    source = "{% for m in messages %}{{ loop.index0 + offset }}{% set k = loop.index + offset %}{{ k }}{% endfor %}"
    code = compile_template(source).python_source
    assert "added(" not in code and "concatenated(" not in code
    _same_as_jinja2(source, {"messages": [1, 2], "offset": 3})
    with pytest.raises(TypeError):
        compile_template("{% for m in messages %}{{ loop.index + s }}{% endfor %}").render({"messages": [1], "s": "x"})


def test_a_long_literal_added_in_straight_code_stays_plain() -> None:
    """Outside loops and functions a ``+`` runs once per render: a long literal grows the
    value by the template's own text once (in a loop it is still checked)."""
    long = "x" * 5000
    straight = "{% set s = date + '" + long + "' %}{{ s|length }}{{ bos + '" + long + "' }}"
    code = compile_template(straight).python_source
    assert "added(" not in code and "concatenated(" not in code
    _same_as_jinja2(straight, {"date": "today", "bos": "<s>"})
    # (over range: a part of the input plus a literal is a part, checked nowhere)
    looped = "{% for m in range(2) %}{% set s = m|string + '" + long + "' %}{{ s|length }}{% endfor %}"
    assert "concatenated(" in compile_template(looped).python_source
    in_macro = "{% macro f(m) %}{% set s = m + '" + long + "' %}{{ s|length }}{% endmacro %}{{ f(date) }}"
    assert "concatenated(" in compile_template(in_macro).python_source


def test_a_long_literal_in_a_loop_still_accumulates_into_a_refusal() -> None:
    source = (
        "{% set ns = namespace(s='') %}{% for i in range(20000) %}"
        "{% set ns.s = ns.s + '" + "x" * 100_000 + "' %}{% endfor %}{{ ns.s|length }}"
    )
    with pytest.raises(RenderLimitExceeded):
        compile_template(source).render({})


def test_a_capture_of_constant_text_is_not_checked() -> None:
    long = "y" * 5000
    source = "{% set t %}" + long + "{% endset %}{{ t|length }}{% set u %}{{ x }}" + long + "{% endset %}{{ u|length }}"
    code = compile_template(source).python_source
    assert code.count("check_built(") == 1  # u's only
    _same_as_jinja2(source, {"x": "z"})


def test_a_tuple_of_constants_and_one_string_is_built_inline() -> None:
    """``('type', t)``: depth 1, each value once: no helper when ``t`` is a ``str``; anything
    else (a tuple to nest, a list to weigh) still takes ``make_tuple``."""
    source = "{% for m in messages %}{% set p = ('role', m.role) %}{{ p }}{{ p[1] }}{% endfor %}"
    code = compile_template(source).python_source
    assert "is str\n" in code and "else make_tuple(" in code
    _same_as_jinja2(source, {"messages": [{"role": "user"}, {"role": ("x",)}, {"role": ["l"]}]})
    nesting = NS + "{% for i in range(100000) %}{% set ns.t = ('x', ns.t) %}{% endfor %}{{ ns.t in {} }}"
    with pytest.raises(RenderLimitExceeded):
        compile_template(nesting).render({})

