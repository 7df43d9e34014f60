"""The fuel counts work as it is, so that real conversations of any reasonable length render
(issue #18: "limits generous enough that no real template reaches them"): a look at the meter
in the middle of a chunk gives back the fuel in hand, and a string built up message by message
pays for its copies at the speed copying runs. Each with the hostile form that must still end
in a limit error."""

from __future__ import annotations

import pytest

from tmpl2py.compiler import compile_template
from tmpl2py.runtime.limits import RenderLimitExceeded

from reference import ref_render

#: a template whose straight code is long enough that the compiler writes a look at the meter
#: (``if active and live() is not None: refuel(...)``) inside the loop over the messages, with
#: a loop before it that makes the meter
LOOKED = (
    "{% for i in range(1100) %}{% endfor %}"
    + "".join("{%% set a%d = %d %%}" % (i, i) for i in range(60))
    + "{% for m in messages %}{% set r = m.role %}{% set c = m.content %}"
    "{% set x = r ~ c %}{{ x }}{% endfor %}"
)


def _messages(n: int, size: int = 2) -> list:
    return [{"role": "user", "content": "c" * size + str(i)} for i in range(n)]


def test_a_look_at_the_meter_costs_no_fuel() -> None:
    """Each look lent a new chunk and dropped the fuel still in hand (up to 4,096): 1,200 looks
    spent the whole default fuel, and a 1,500-message conversation failed where transformers
    renders it in milliseconds. The fuel in hand goes back to the pool now."""
    template = compile_template(LOOKED)
    assert "live() is not None" in template.python_source.split("for l_1_m in")[1]
    context = {"messages": _messages(5000)}
    assert template.render(context) == ref_render(LOOKED, context)[1]
    # the count is still exact: the first loop's 1,100 iterations pass a fuel of 1,000
    with pytest.raises(RenderLimitExceeded) as info:
        template.render(context, limits={"fuel": 1_000})
    assert info.value.limit == "fuel" and info.value.column == 1


ACCUMULATE = (
    "{% set ns = namespace(p='') %}{% for m in messages %}"
    "{% set ns.p = ns.p + '<|' + m.role + '|>' + m.content + '\\n' %}{% endfor %}{{ ns.p }}"
)


def test_a_prompt_built_message_by_message_pays_its_copies_at_copying_speed() -> None:
    """``ns.p = ns.p + ...`` copies the prompt so far at every step (quadratic, as in jinja2):
    charged a unit per 1,024 characters it builds (``limits.BUILT_PER_UNIT``), not per 32 (a
    printing helper's rate), which failed 200 messages of 1 KB (a 200 KB prompt, 10 ms in
    transformers). A prompt built so from many more messages still ends in a fuel error."""
    context = {"messages": _messages(400, 1000)}
    assert compile_template(ACCUMULATE).render(context) == ref_render(ACCUMULATE, context)[1]
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(ACCUMULATE).render({"messages": _messages(5000, 1000)})
    assert info.value.limit == "fuel"


def test_go_printf_accumulation_is_charged_as_the_jinja_one() -> None:
    """Go's ``$s = printf "%s%s" $s .Content`` in a range is the same quadratic build (400
    messages of 1 KB failed; Go renders them in milliseconds)."""
    source = '{{- $s := "" }}{{- range .Messages }}{{ $s = printf "%s%s" $s .Content }}{{ end }}{{ len $s }}'
    template = compile_template(source, dialect="go")
    messages = [{"Content": "x" * 1000} for _ in range(400)]
    assert template.render({"Messages": messages}) == "400000"
    with pytest.raises(RenderLimitExceeded) as info:
        template.render({"Messages": messages * 12})
    assert info.value.limit == "fuel"


@pytest.mark.parametrize(
    "source, dialect, raises",
    [
        ("{% set s = 'ab' * 40000 %}{% set t = s ~ s %}{% for i in range(3) %}{{ t|length }}{% endfor %}", "jinja", False),
        ("{% set s = 'ab' * 40000 %}{% set t = s ~ s %}{% for i in range(3) %}{{ t|length }}{% endfor %}{{ 1 / 0 }}", "jinja", True),
        ('{{ $s := printf "%099999d" 1 }}{{ $t := printf "%s%s" $s $s }}{{ range 3 }}{{ len $t }}{{ end }}', "go", False),
    ],
)
def test_a_render_holding_a_long_value_leaves_no_entry_in_holding(source: str, dialect: str, raises: bool) -> None:
    """``limits.holding`` (one entry per render holding a long value: its loops are looked at as
    they start) is exact after every way a render ends, as ``limits.active`` is: an entry left
    behind would make every later loop in the process call ``refuel_loop``."""
    from tmpl2py.runtime import limits

    options = {"dialect": dialect, **({"profile": "plain"} if dialect == "go" else {})}
    template = compile_template(source, **options)
    assert "holding" in template.python_source
    if raises:
        with pytest.raises(ZeroDivisionError):
            template.render({})
    else:
        assert template.render({}) == compile_template(source, bounded=False, **options).render({})
    assert limits.holding == [] and limits.active == []


# ----------------------------------------------------------------------------- loops of no length


@pytest.mark.parametrize(
    "source",
    [
        "{% for i in range(20000)|select %}{% endfor %}ok",
        "{% for i in range(20000)|map('abs') %}{% endfor %}ok",
        "{% for r in range(1) %}{% for k, v in d|items %}{% endfor %}{% endfor %}ok",  # by the mapping's size
    ],
)
def test_a_loop_over_items_of_no_length_is_counted_as_it_runs(source: str) -> None:
    """Red team s7h F6: ``length_hint`` of a generator is 0, so a loop over a lazy filter's
    result paid nothing for its iterations and never looked at the meter (a 1.5 KB template
    whose iterations each hid C-level work ran over 120 s). The compiled charge is
    ``length_hint(items, LAZY)``: such a loop runs the counter out, and ``refuel_loop``
    counts its items as they come (looking at the CPU time after 1, 4, 16... of them); a
    loop over ``x|items`` is charged the mapping's size. Here the filter's own charge (its
    input, ~200,000 fuel) fits the limit, the 20,000 iterations besides do not."""
    from tmpl2py.runtime.limits import Limits

    context = {"d": {str(i): i for i in range(20000)}}
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source, limits=Limits(fuel=210_000)).render(context)
    assert info.value.limit == "fuel"
    assert compile_template(source, limits=Limits(fuel=240_000)).render(context) == "ok"
    small = source.replace("20000", "30")
    assert compile_template(small).render({"d": {"a": 1}}) == ref_render(small, {"d": {"a": 1}})[1]


def test_go_pairs_are_charged_by_their_value_s_length() -> None:
    """Red team s7p F14: Go's ``range $i, $m := .Messages`` iterates pairs of no length: nested,
    such loops were charged nothing (18 s CPU at 10,000 messages, the budget ignored)."""
    nested = "{{ range $i, $m := .Messages }}{{ range $j, $n := $.Messages }}{{ end }}{{ end }}y"
    template = compile_template(nested, dialect="go")
    messages = [{"role": r, "content": "x"} for _ in range(2500) for r in ("user", "assistant")]
    with pytest.raises(RenderLimitExceeded) as info:
        template.render_conversation(messages)
    assert info.value.limit == "fuel"
    assert template.render_conversation(messages[:50]) == "y"
    # a value of no length whose pairs have one (nil: none) pays for its pairs, not LAZY
    nil = compile_template("{{ range 3 }}{{ range $i, $v := $.nothing }}{{ $i }}{{ end }}{{ end }}ok", dialect="go", profile="plain")
    assert nil.render({}) == "ok"


def test_a_loop_left_by_a_break_gives_back_what_it_did_not_run() -> None:
    """Red team s7p F13: a loop is charged all its iterations as it starts, so a look-ahead
    per message that stops at its first match was charged n**2 / 2 (4,000 messages refused,
    transformers 0.06 s); a break gives back the iterations it skipped (``limits.not_run``)."""
    source = (
        "{%- for m in messages -%}{%- set ns = namespace(next_role='none') -%}"
        "{%- for j in range(loop.index0 + 1, messages|length) -%}"
        "{%- if messages[j].role == 'assistant' -%}{%- set ns.next_role = messages[j].role -%}{%- break -%}{%- endif -%}"
        "{%- endfor -%}<{{ m.role }}:{{ ns.next_role }}>{%- endfor -%}"
    )
    messages = [{"role": r, "content": "c"} for _ in range(2000) for r in ("user", "assistant")]
    assert compile_template(source).render({"messages": messages}) == ref_render(source, {"messages": messages})[1]
    # a break does not make a loop free: 100 x 100,000 iterations, each breaking late, still run out
    late = "{% for j in range(100) %}{% for i in range(100000) %}{% if i > 99990 %}{% break %}{% endif %}{% endfor %}{% endfor %}"
    with pytest.raises(RenderLimitExceeded):
        compile_template(late).render({})


def test_functions_sharing_the_counter_find_it_defined() -> None:
    """Found by the Jinja differential property (a new seed): two ``{% block %}`` functions
    long enough to share the render's counter (``nonlocal _fuel, _m``) in a render whose own
    code counted nothing, which so never defined it: the module was refused ("no binding for
    nonlocal '_fuel'"). A function that shares the counter makes the render define it."""
    from pathlib import Path

    source = (Path(__file__).parent / "fixtures" / "nonlocal_fuel_blocks.jinja").read_text(encoding="utf-8")
    context = {"messages": [{"role": "user", "content": "hi"}], "d": {}, "n": 1, "xs": [], "s": "s"}
    assert compile_template(source).render(context) == ref_render(source, context)[1]


@pytest.mark.parametrize("flt", ["title", "striptags", "urlencode", "wordcount", "indent(2)", "list|length"])
def test_a_long_message_through_a_text_filter_is_charged_at_the_filter_s_speed(flt: str) -> None:
    """A filter's charge per character follows its slowest measured kind of text (rounded
    up): a 1 MB message of English through ``title``, ``striptags``, ``urlencode`` (charged a
    unit a character or two: 0.5-1M units, over the fuel) renders as in transformers, which
    takes 30-80 ms (red team s7h F8); 16 MB of the filter's slowest text still runs out."""
    source = "{% for m in messages %}{{ m.content|" + flt + " }}{% endfor %}"
    text = "Hello <b>world</b> see http://x.org/a. " * ((1 << 20) // 40)
    context = {"messages": [{"role": "user", "content": text}]}
    assert compile_template(source).render(context) == ref_render(source, context)[1]
    slow = {"title": "a ", "striptags": "<a>", "urlencode": "é", "wordcount": "a@b.cc ",
            "indent(2)": "\n", "list|length": "ab"}[flt]
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({"messages": [{"content": slow * ((16 << 20) // len(slow))}]})
    assert info.value.limit == "fuel"


def test_tojson_of_long_tool_results_is_charged_at_the_encoder_s_speed() -> None:
    """``tojson`` of a string is charged a unit per 64 characters (json's C encoder measured at
    most 8 ns a character): twelve 1 MB tool results, which transformers encodes in ~30 ms,
    render as there (a unit per 16 ran out of fuel: red team s8u F4); 40 MB of control
    characters, its slowest text, still runs out."""
    source = "{% for m in messages %}{{ m.content | tojson }}{% endfor %}"
    context = {"messages": [{"role": "tool", "content": "x" * 1_000_000} for _ in range(12)]}
    assert compile_template(source).render(context) == ref_render(source, context)[1]
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({"messages": [{"content": "\x01" * (40 << 20)}]})
    assert info.value.limit == "fuel"


def test_a_long_message_returned_by_a_macro_is_charged_at_the_output_s_rate() -> None:
    """A macro's output past ``LONG_BUILT`` is charged a unit per ``OUTPUT_PER_UNIT`` (128)
    characters: a 9.6M-character message through two macro calls that return it (GLM-4.6's
    ``visible_text`` and its callers), 20 ms in transformers, renders (at 32 a unit it ran out
    of fuel: red team s8u F4); 80M characters so still run out."""
    source = (
        "{% macro text(c) %}{{ c }}{% endmacro %}"
        "{% for m in messages %}{% set t = text(text(m.content)) %}{{ t }}{% endfor %}"
    )
    context = {"messages": [{"role": "user", "content": "lorem ipsum\n" * 800_000}]}
    assert compile_template(source).render(context) == ref_render(source, context)[1]
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({"messages": [{"content": "x" * 80_000_000}]})
    assert info.value.limit == "fuel"


def test_go_json_of_a_long_tool_argument_is_charged_at_the_encoder_s_speed() -> None:
    """Go's ``json`` is charged a unit per 64 characters of its text and per 4 items (about one
    a comma): a 12 MB tool call argument, which Ollama renders in ~40 ms, renders (a unit per 16
    characters ran out of fuel: red team s8u F4), as the Go reference does where Go is
    installed; 40M characters still run out."""
    source = "{{ range .Messages }}{{ range .ToolCalls }}{{ json .Function.Arguments }}{{ end }}{{ end }}"
    template = compile_template(source, dialect="go", profile="ollama")

    def request(size: int) -> list:
        call = {"function": {"name": "write", "arguments": {"text": "x" * size}}}
        return [{"role": "assistant", "content": "", "tool_calls": [call]}]

    text = template.render_conversation(request(12_000_000))
    assert len(text) == 12_000_011
    import goref_client

    if goref_client.go_available():
        assert goref_client.get_reference().ollama(source, {"messages": request(12_000_000)}) == (True, text)
    with pytest.raises(RenderLimitExceeded) as info:
        template.render_conversation(request(40_000_000))
    assert info.value.limit == "fuel"


@pytest.mark.parametrize(
    "source",
    [
        "{% for i in range(20) %}{{ [messages[0].content]|title|length }},{% endfor %}",
        "{% for i in range(20) %}{{ {'k': messages[0].content}|wordcount }},{% endfor %}",
        "{% for i in range(10) %}{{ messages[0]|urlencode|length }},{% endfor %}",
    ],
)
def test_a_text_filter_of_a_container_pays_for_its_text(source: str) -> None:
    """``title``, ``wordcount``, ``urlencode`` (and ``urlize``, ``striptags``, ``wordwrap``,
    ``indent``) of a list or dict work on its text: charged by the container's two items, a
    loop over a 4 MB message wrapped in one ran 5-17 s (red team s8h F1); its text is charged
    now (``limits.weigh``), and the fuel stops it at once. One short message renders as
    transformers does."""
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({"messages": [{"role": "user", "content": "a " * 2_000_000}]})
    assert info.value.limit == "fuel"
    context = {"messages": [{"role": "user", "content": "hello <b>world</b> x@y.org"}]}
    assert compile_template(source).render(context) == ref_render(source, context)[1]


def test_a_break_in_a_filtered_loop_gives_nothing_back() -> None:
    """A filtered loop's counter counts the items its test kept: a break at the first kept item
    gave back the iterations its test had run on (each a search of a 1 MB input here: 9 s,
    rendered; red team s8h F4). It gives nothing back now, and the fuel stops the render."""
    source = (
        "{% for i in range(120) %}{% for x in range(120) if 'zzz' in s or x == 119 %}"
        "{% break %}{% endfor %}{% endfor %}done"
    )
    assert "not_run" not in compile_template(source).python_source
    assert compile_template(source).render({"s": "ab"}) == ref_render(source, {"s": "ab"})[1]
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({"s": "a " * 500_000})
    assert info.value.limit == "fuel"
