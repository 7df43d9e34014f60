"""``render_conversation`` options of the ``hf`` profile on the project's own templates, against
live transformers (``render_jinja_template``): ``{% generation %}`` spans
(``return_assistant_tokens_mask``) and ``continue_final_message``. Needs only transformers.

transformers records a span as ``(len of the top-level output so far, + len(body))`` when the
block ends, whatever buffer the block sits in (a macro, a ``set`` block, a call block): the
templates below put blocks in each of those places.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reference import compile_cached, ours_conversation, ref_conversation, same_outcome

CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi there"},
    {"role": "assistant", "content": "Hello! ünïcode ✓"},
    {"role": "user", "content": "2+2?"},
    {"role": "assistant", "content": "4 "},
]

#: id -> template. Every one uses {% generation %}, except "none".
GENERATION_TEMPLATES = {
    "top-level": "pre {% generation %}[{{ messages[0].content }}]{% endgeneration %} post",
    "if": (
        "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}A: {{ m.content }}"
        "{% endgeneration %}{% else %}{{ m.role }}: {{ m.content }}{% endif %}\n{% endfor %}"
    ),
    "for-in-generation": (
        "<s>{% generation %}{% for m in messages %}{{ m.content }}|{% endfor %}{% endgeneration %}</s>"
    ),
    "loop-index": (
        "{% for m in messages %}{{ loop.index }}.{% if m.role == 'assistant' %}{% generation %}"
        "{{ m.content }}#{{ loop.index }}/{{ loop.length }}{% endgeneration %}{% endif %}"
        "{% if not loop.last %};{% endif %}{% endfor %}"
    ),
    "macro": (
        "{% macro turn(m) %}<{{ m.role }}>{% if m.role == 'assistant' %}{% generation %}"
        "{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}</>{% endmacro %}"
        "HEAD{% for m in messages %}{{ turn(m) }}{% endfor %}TAIL"
    ),
    "macro-in-expression": (
        "{% macro g(x) %}..{% generation %}{{ x }}{% endgeneration %}{% endmacro %}"
        "abc{{ 'xyz' ~ g('q') ~ g('rr') }}{{ g('s') }}"
    ),
    "set-block": (
        "{% set last %}zz{% generation %}{{ messages[-1].content }}{% endgeneration %}{% endset %}"
        "abc{{ last }}{{ last }}"
    ),
    "set-block-with-filter": (
        "1234{% set x | upper %}a{% generation %}b{% endgeneration %}{% endset %}{{ x }}"
    ),
    "filter-block": "x{% filter upper %}yy{% generation %}zz{% endgeneration %}{% endfilter %}w",
    "call-block": (
        "{% macro wrap() %}<{{ caller() }}|{{ caller() }}>{% endmacro %}"
        "head{% call wrap() %}in{% generation %}G{% endgeneration %}{% endcall %}tail"
    ),
    "call-block-with-arguments": (
        "{% macro each(ms) %}{% for m in ms %}({{ caller(m) }}){% endfor %}{% endmacro %}"
        "## {% call(m) each(messages) %}{% generation %}{{ m.content }}{% endgeneration %}{% endcall %}"
    ),
    "nested": "a{% generation %}b{% generation %}cc{% endgeneration %}d{% endgeneration %}e",
    "recursive-loop": (
        "{% for n in [{'t': 'a', 'c': [{'t': 'b', 'c': []}, {'t': 'cc', 'c': []}]}] recursive %}"
        "{{ n.t }}{% generation %}[{{ n.t }}{{ loop(n.c) }}]{% endgeneration %}{% endfor %}!"
    ),
    "loop-controls": (
        "{% for m in messages %}{% if loop.first %}{% continue %}{% endif %}{% generation %}"
        "{{ m.content }}{% endgeneration %}{% if loop.index == 4 %}{% break %}{% endif %}{% endfor %}"
    ),
    "whitespace-control": (
        "{% for m in messages %}\n  {{ m.role }}\n  {%- generation -%}\n    {{ m.content }}  \n"
        "  {%- endgeneration -%}\n  ;\n{% endfor %}"
    ),
    "whitespace-trim-lstrip": (
        "{% for m in messages %}\n    {% generation %}\n{{ m.content }}\n    {% endgeneration %}\n"
        "{% endfor %}"
    ),
    "plus-sign": "  {%+ generation %}x{% endgeneration +%}  ",
    "empty-body": "a{% generation %}{% endgeneration %}b{% generation %}{% if false %}x{% endif %}{% endgeneration %}",
    "generation-prompt": (
        "{% for m in messages %}{{ m.content }}\n{% endfor %}"
        "{% if add_generation_prompt %}{% generation %}<assistant>{% endgeneration %}{% endif %}"
    ),
    "set-inside-generation": (
        "{% generation %}{% set x = 1 %}{{ x }}{% endgeneration %}[{{ x }}]"
        "{% set ns = namespace(n=0) %}{% generation %}{% set ns.n = 5 %}{% endgeneration %}{{ ns.n }}"
    ),
    # the body is a call block's caller macro: its own kwargs/varargs, macros defined in it
    "caller-macro-body": (
        "{% macro turn(m) %}{% generation %}{{ m.content }}{{ kwargs }}{{ varargs|length }}"
        "{% endgeneration %}{% endmacro %}{% for m in messages %}{{ turn(m, 1, k=2) }};"
        "{% generation %}{% macro inner() %}<{{ kwargs }}>{% endmacro %}{{ inner(z=loop.index) }}"
        "{% endgeneration %}{% endfor %}"
    ),
    "error-after-generation": (
        "{% generation %}ok{% endgeneration %}{{ raise_exception('stop: ' ~ messages|length) }}"
    ),
    # tracked, transformers joins the top-level output at the block: the TypeError comes first
    "non-string-output-before-generation": (
        "{% filter length %}abc{% endfilter %}{% generation %}x{% endgeneration %}"
        "{{ raise_exception('later') }}"
    ),
    "none": "{% for m in messages %}{{ m.content }}{% endfor %}",
}

CONVERSATIONS = {
    "chat": CHAT,
    "single": [{"role": "user", "content": "only"}],
    "empty-assistant": [{"role": "user", "content": "u"}, {"role": "assistant", "content": ""}],
}


def _check(template: str, fixture: dict, **options) -> tuple:
    ref = ref_conversation(template, fixture, **options)
    ours = ours_conversation(template, fixture, **options)
    assert same_outcome(ours, ref), f"\nexpected: {ref[1]!r}\n     got: {ours[1]!r}"
    return ref


@pytest.mark.parametrize("conversation", CONVERSATIONS)
@pytest.mark.parametrize("name", GENERATION_TEMPLATES)
def test_generation_spans(name: str, conversation: str) -> None:
    for agp in (False, True):
        fixture = {"messages": CONVERSATIONS[conversation], "add_generation_prompt": agp}
        _check(GENERATION_TEMPLATES[name], fixture, return_assistant_tokens_mask=True)
        _check(GENERATION_TEMPLATES[name], fixture)


def test_the_templates_record_spans() -> None:
    """The reference records spans for the templates above (so the comparison is not vacuous),
    including spans that start past the text of their own buffer (macro, set and call blocks)."""
    for name, template in GENERATION_TEMPLATES.items():
        fixture = {"messages": CHAT, "add_generation_prompt": True}
        outcome = ref_conversation(template, fixture, return_assistant_tokens_mask=True)
        if name in ("none", "error-after-generation", "non-string-output-before-generation"):
            assert outcome[0] == "err" or outcome[1][1] == [], name
        else:
            assert outcome[0] == "ok" and outcome[1][1], name


def test_spans_are_tuples_in_a_list() -> None:
    ref = ref_conversation(
        GENERATION_TEMPLATES["if"], {"messages": CHAT}, return_assistant_tokens_mask=True
    )
    ours = compile_cached(GENERATION_TEMPLATES["if"]).render_conversation(
        copy.deepcopy(CHAT), return_assistant_tokens_mask=True
    )
    assert type(ours) is tuple and type(ours[1]) is list
    assert [type(s) for s in ours[1]] == [type(s) for s in ref[1][1]] == [tuple, tuple]
    assert ours == ref[1]


def test_tracking_is_off_unless_asked() -> None:
    """Without the option the result is the text alone, render() works as before, and a tracked
    render does not leave tracking on for the next one."""
    template = compile_cached(GENERATION_TEMPLATES["macro"])
    text, spans = template.render_conversation(
        copy.deepcopy(CHAT), return_assistant_tokens_mask=True
    )
    assert template.render_conversation(copy.deepcopy(CHAT)) == text
    assert template.render({"messages": CHAT}) == text
    assert ref_conversation(GENERATION_TEMPLATES["macro"], {"messages": CHAT}) == ("ok", text)
    from tmpl2py.runtime.jinja import objects as jinja

    assert jinja._GENERATION_SPANS.get() is None
    again = template.render_conversation(
        copy.deepcopy(CHAT), return_assistant_tokens_mask=True, budget=5.0
    )
    assert again == (text, spans)


def test_spans_survive_an_error() -> None:
    template = compile_cached(GENERATION_TEMPLATES["error-after-generation"])
    with pytest.raises(Exception):
        template.render_conversation(copy.deepcopy(CHAT), return_assistant_tokens_mask=True)
    from tmpl2py.runtime.jinja import objects as jinja

    assert jinja._GENERATION_SPANS.get() is None


def test_only_templates_with_generation_name_the_top_level_output() -> None:
    assert "_top = _out" in compile_cached(GENERATION_TEMPLATES["macro"]).python_source
    assert "_top = _out" not in compile_cached(GENERATION_TEMPLATES["none"]).python_source


# ----------------------------------------------------------------------------- continue_final_message

CONTINUE_TEMPLATES = {
    "plain": "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor %}",
    "trimmed": "{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}</>{% endfor %}",
    "blocks": (
        "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}"
        "{% for b in m.content %}{% if b.type == 'text' %}{{ b.text }}{% else %}<img>{% endif %}"
        "{% endfor %}{% endif %};{% endfor %}"
    ),
    "drops-last": "{% for m in messages[:-1] %}{{ m.content }}{% endfor %}",
    "thinking": (
        "{% for m in messages %}{% if m.thinking %}<think>{{ m.thinking }}</think>{% endif %}"
        "{{ m.content }}{% endfor %}"
    ),
    "reasoning": (
        "{% for m in messages %}{% if m.reasoning_content %}<r>{{ m.reasoning_content }}</r>{% endif %}"
        "{{ m.content }}{% endfor %}"
    ),
    "generation": (
        "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}"
        "{% endgeneration %}{% else %}{{ m.content }}{% endif %}|{% endfor %}"
    ),
    "tag-at-end": "{{ messages[-1].content }}",
}

CONTINUE_CONVERSATIONS = {
    "assistant-last": CHAT,
    "user-last": CHAT[:4],
    "trailing-space": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "so  "}],
    "blocks": [
        {"role": "user", "content": "look"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "first"},
                {"type": "text", "text": "second"},
                {"type": "image", "url": "x.png"},
            ],
        },
    ],
    "blocks-without-text": [{"role": "assistant", "content": [{"type": "image"}]}],
    "reasoning": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "answer", "reasoning_content": "mulling"},
    ],
    "thinking-and-reasoning-differ": [
        {"role": "assistant", "content": "a", "thinking": "t1", "reasoning_content": "r1"}
    ],
    "no-content": [{"role": "assistant", "tool_calls": []}],
    "empty": [],
}

CONTINUE_OPTIONS = [True, "content", "reasoning_content", "thinking", "reasoning"]


@pytest.mark.parametrize("option", CONTINUE_OPTIONS, ids=str)
@pytest.mark.parametrize("conversation", CONTINUE_CONVERSATIONS)
@pytest.mark.parametrize("name", CONTINUE_TEMPLATES)
def test_continue_final_message(name: str, conversation: str, option) -> None:
    fixture = {"messages": CONTINUE_CONVERSATIONS[conversation]}
    _check(CONTINUE_TEMPLATES[name], fixture, continue_final_message=option)
    if name == "generation":  # the spans of the tagged render, as transformers measures them
        _check(
            CONTINUE_TEMPLATES[name],
            fixture,
            continue_final_message=option,
            return_assistant_tokens_mask=True,
        )


def test_continue_final_message_outcomes_are_varied() -> None:
    """The cases above reach both kinds of outcome, and several of transformers' errors."""
    outcomes = set()
    for name, template in CONTINUE_TEMPLATES.items():
        for messages in CONTINUE_CONVERSATIONS.values():
            for option in CONTINUE_OPTIONS:
                kind, value = ref_conversation(
                    template, {"messages": messages}, continue_final_message=option
                )
                outcomes.add(kind if kind == "ok" else value.split("!")[0][:60])
    assert "ok" in outcomes
    assert len(outcomes) >= 6, outcomes


def test_continue_final_message_leaves_the_messages_alone() -> None:
    messages = copy.deepcopy(CONTINUE_CONVERSATIONS["blocks"])
    before = copy.deepcopy(messages)
    compile_cached(CONTINUE_TEMPLATES["blocks"]).render_conversation(
        messages, continue_final_message=True
    )
    assert messages == before


# ----------------------------------------------------------------------------- tools


def _weather(city: str) -> str:
    """Get the weather.

    Args:
        city: The city.
    """
    return city


class _Tools:
    def lookup(self, key: int) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        return str(key)


TOOLS_TEMPLATE = "{{ tools|tojson }}|{% for m in messages %}{{ m.content }}{% endfor %}"


@pytest.mark.parametrize(
    "tools",
    [
        lambda: [_weather],
        lambda: [_Tools().lookup, {"type": "function", "function": {"name": "x"}}],
        lambda: (t for t in [{"a": 1}, {"b": 2}]),  # iterated once, kept
        lambda: iter([_weather]),
        lambda: [lambda city: city],  # no docstring: get_json_schema's own error
        lambda: ["not a schema"],
        lambda: [],
    ],
    ids=["function", "method-and-dict", "generator", "iterator", "lambda", "string", "empty"],
)
def test_tools_as_transformers_takes_them(tools: Any) -> None:
    """``render_conversation`` takes tools as ``render_jinja_template`` does: functions and
    methods become JSON schemas (``get_json_schema``), any iterable is read once."""
    import transformers.utils.chat_template_utils as ctu

    messages = [{"role": "user", "content": "hi"}]
    try:
        expected = ("ok", ctu.render_jinja_template(
            conversations=[messages], tools=tools(), chat_template=TOOLS_TEMPLATE
        )[0][0])
    except Exception as e:  # noqa: BLE001
        expected = ("err", type(e).__name__)
    try:
        ours = ("ok", compile_cached(TOOLS_TEMPLATE).render_conversation(messages, tools=tools()))
    except Exception as e:  # noqa: BLE001
        ours = ("err", type(e).__name__)
    assert ours == expected


def test_inputs_are_rebuilt_as_transformers_rebuilds_them() -> None:
    """``hf.plain_data`` (a dict's or list's scalars taken without a call) and
    ``hf.alias_reasoning`` (a message with no reasoning field kept without a search) against
    transformers' own ``_plain_template_data`` / ``_alias_reasoning_fields``, on random values
    of every kind they treat apart: exact scalars, str / int / float subclasses (an enum),
    dicts with non-string keys, ``Mapping``s, lists, tuples, dataclasses, objects with
    ``model_dump``, and anything else."""
    import collections
    import dataclasses
    import enum
    import random

    from transformers.utils import chat_template_utils as ctu

    from tmpl2py.runtime.jinja.hf import alias_reasoning, plain_data

    class Role(str, enum.Enum):
        USER = "user"

    class Count(int):
        pass

    @dataclasses.dataclass
    class Part:
        kind: Any
        items: list

    class Model:
        def model_dump(self) -> dict:
            return {"m": [1, (2, Role.USER)]}

    leaves = [None, "s", 1, 2.5, True, Role.USER, Count(3), 1.5e300, object(), Model(), Part(Role.USER, [Count(1)])]
    keys = ["role", "content", "reasoning_content", "thinking", "reasoning", 1, None, Role.USER, (1, 2), 2.0]
    rng = random.Random(8)

    def value(depth: int = 0) -> Any:
        if depth > 3 or rng.random() < 0.35:
            return rng.choice(leaves)
        n = rng.randint(0, 4)
        kind = rng.choice(["dict", "list", "tuple", "ordered", "default"])
        if kind == "dict":
            return {rng.choice(keys): value(depth + 1) for _ in range(n)}
        if kind == "list":
            return [value(depth + 1) for _ in range(n)]
        if kind == "tuple":
            return tuple(value(depth + 1) for _ in range(n))
        if kind == "ordered":
            return collections.OrderedDict((str(i), value(depth + 1)) for i in range(n))
        return collections.defaultdict(int, {"z": value(depth + 1)})

    def shape(v: Any) -> str:  # the value with its types (``==`` would take 1 == True)
        return repr((type(v).__name__, v))

    for _ in range(3000):
        v = value()
        assert shape(plain_data(v)) == shape(ctu._plain_template_data(v)), v
        chat = [m for m in (value(2) for _ in range(3)) if isinstance(m, dict)]
        chat += [{k: rng.choice([None, "", "r", 0]) for k in rng.sample(keys[:5], rng.randint(0, 5))}]
        assert repr(alias_reasoning(chat)) == repr(ctu._alias_reasoning_fields(chat))


def _model_and_standalone(folder, source: str) -> tuple:
    """``tmpl2py.load`` of a folder holding ``source`` as its chat template, and the namespace of
    its standalone module (the two entry points beside ``render_conversation``)."""
    import json

    import tmpl2py
    from tmpl2py.compiler.api import generate
    from tmpl2py.standalone import make_standalone

    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": source}))
    module: dict = {}
    exec(compile(make_standalone(generate(source, "jinja", name="t")[0], source), "<s>", "exec"), module)
    return tmpl2py.load(folder), module


def test_template_variables_named_like_the_entry_points_parameters_reach_the_template(tmp_path) -> None:
    """Every keyword of ``render_conversation`` but transformers' own reaches the template, as
    in ``render_jinja_template``: ``source`` and ``render`` (the runtime's first parameters),
    through ``render_conversation``, ``apply_chat_template``, a standalone module and a session
    (``template``, the session's first parameter). Red team s8u F1: a TypeError each."""
    import tmpl2py
    from transformers.utils.chat_template_utils import render_jinja_template

    source = "{{ source }}|{{ render }}|{{ template }}|{{ messages[0].content }}"
    messages = [{"role": "user", "content": "hi"}]
    model, module = _model_and_standalone(tmp_path, source)
    for kwargs in ({"source": "wiki"}, {"render": "R"}, {"template": "T"}):
        expected = render_jinja_template(conversations=[messages], chat_template=source, **kwargs)[0][0]
        template = tmpl2py.compile_template(source)
        assert template.render_conversation(messages, **kwargs) == expected
        assert model.apply_chat_template(messages, **kwargs) == expected
        assert module["render_conversation"](messages, **kwargs) == expected
        session = template.conversation(**kwargs)
        session.extend(messages)
        assert session.prompt() == expected


def test_keywords_naming_transformers_own_parameters_are_its_type_errors(tmp_path) -> None:
    """``conversations`` and ``chat_template`` (``render_jinja_template``'s parameters) passed
    as template keywords are transformers' TypeError at the call, ``messages`` the template
    render's, after the input checks (red team s9u F2: the first two reached the template);
    through ``render_conversation``, ``apply_chat_template`` and a standalone module."""
    import tmpl2py
    from transformers.utils.chat_template_utils import render_jinja_template

    source = "{{ messages[0].content }}|{{ conversations }}|{{ chat_template }}"
    messages = [{"role": "user", "content": "hi"}]
    model, module = _model_and_standalone(tmp_path, source)
    template = tmpl2py.compile_template(source)
    for kwargs in ({"conversations": "C"}, {"chat_template": "X"}, {"messages": "M"}, {"enable_thinking": 1, "messages": 2}):
        with pytest.raises(TypeError) as expected:
            render_jinja_template(conversations=[messages], chat_template=source, **kwargs)
        calls = [lambda: template.render_conversation(messages, **kwargs), lambda: module["render_conversation"](messages, **kwargs)]
        if "chat_template" not in kwargs:  # (``apply_chat_template`` has its own)
            calls.append(lambda: model.apply_chat_template(messages, **kwargs))
        for call in calls:
            with pytest.raises(TypeError) as ours:
                call()
            assert str(ours.value) == str(expected.value)
    # the input checks come first, as in transformers
    with pytest.raises(TypeError, match="Chat messages should be dicts"):
        template.render_conversation(["x"], messages="M")
