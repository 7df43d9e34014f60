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
