"""``tmpl2py.load(folder).apply_chat_template`` against a real transformers tokenizer.

Each case builds a ``PreTrainedTokenizerFast`` from a tiny WordLevel ``tokenizer.json`` made
here with the ``tokenizers`` package (no download), gives it special tokens and chat
template(s), saves it with ``save_pretrained`` and loads the folder back with
``AutoTokenizer.from_pretrained`` (what a server holds). The reference is that tokenizer's
``apply_chat_template(..., tokenize=False)``; outcomes compare as in test_corpus_jinja (the
same text, or the same exception type and message; a CompileError where jinja2 cannot parse).

The shared corpus is read from ../shared beside the checkout, or from ``$TMPL2PY_SHARED``
(a worktree elsewhere); its cases are skipped with a reason when neither exists.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tmpl2py_paths import ROOT, SHARED
from reference import same_outcome

import tmpl2py
from tmpl2py.cache import ModuleCache

transformers = pytest.importorskip("transformers", reason="transformers (test extra) is not installed")
tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")

CORPUS = Path(os.environ.get("TMPL2PY_SHARED") or SHARED) / "corpus" / "jinja"
SKIP_CORPUS = "../shared/corpus/jinja is absent (set TMPL2PY_SHARED): shared-corpus cases skipped"
QWEN = (ROOT / "examples" / "seed001_qwen.jinja").read_text(encoding="utf-8")
VOCAB = ["<unk>", "<s>", "</s>", "<pad>", "<|im_start|>", "<|im_end|>", "hello", "world"]
TOKENS = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}


def make_tokenizer(chat_template: Any, **special: Any) -> Any:
    """A real fast tokenizer: WordLevel over VOCAB, the given special tokens and template(s)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel({t: i for i, t in enumerate(VOCAB)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, **special)
    tok.chat_template = chat_template
    return tok


def saved(tmp: Path, chat_template: Any, **special: Any) -> tuple[Any, Path]:
    """The tokenizer saved to ``tmp`` and loaded back (the reference), and the folder."""
    from transformers import AutoTokenizer

    make_tokenizer(chat_template, **special).save_pretrained(tmp)
    return AutoTokenizer.from_pretrained(tmp), tmp


def outcome(call: Any) -> tuple[str, Any]:
    try:
        return ("ok", call())
    except tmpl2py.CompileError as e:
        return ("err", f"CompileError: {e.message}")
    except Exception as e:  # noqa: BLE001 - compared with the reference's exception
        return ("err", f"{type(e).__name__}: {e}")


def compare(ref_tok: Any, ours: Any, conversation: Any, **options: Any) -> None:
    ref = outcome(
        lambda: ref_tok.apply_chat_template(copy.deepcopy(conversation), tokenize=False, **options)
    )
    got = outcome(lambda: ours.apply_chat_template(copy.deepcopy(conversation), **options))
    if isinstance(ref[1], list) and isinstance(got[1], list):  # a batch: compare each
        assert got == ref
        return
    assert same_outcome(got, ref), f"\nexpected: {str(ref[1])[:1500]!r}\n     got: {str(got[1])[:1500]!r}"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> ModuleCache:
    return ModuleCache(tmp_path_factory.mktemp("cache"))


# ----------------------------------------------------------------------------- the corpus


def _corpus_cases() -> list:
    if not CORPUS.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason=SKIP_CORPUS))]
    return [pytest.param(t.stem, id=t.stem) for t in sorted((CORPUS / "templates").glob("*.jinja"))]


def fixture_options(context: dict) -> tuple[Any, dict]:
    """A corpus fixture as apply_chat_template arguments: (messages, keyword arguments)."""
    options = copy.deepcopy(context)
    return options.pop("messages"), options


@pytest.mark.parametrize("stem", _corpus_cases())
def test_corpus_template_x_fixtures(stem: str, tmp_path: Path, cache: ModuleCache) -> None:
    """Every shared template with the special tokens set, on every fixture, as transformers."""
    text = (CORPUS / "templates" / f"{stem}.jinja").read_bytes().decode("utf-8")
    ref_tok, folder = saved(tmp_path, text, extra_special_tokens=["<|im_start|>"], **TOKENS)
    loaded = outcome(lambda: tmpl2py.load(folder, cache=cache))
    for fixture in sorted((CORPUS / "fixtures").glob("*.json")):
        messages, options = fixture_options(json.loads(fixture.read_text(encoding="utf-8")))
        if loaded[0] == "err":  # the template does not compile: jinja2 must refuse it too
            ref = outcome(lambda: ref_tok.apply_chat_template(messages, tokenize=False, **options))
            assert same_outcome(loaded, ref), (fixture.stem, loaded, ref)
            continue
        compare(ref_tok, loaded[1], messages, **options)


# ----------------------------------------------------------------------------- selection


NAMED = {
    "default": "D:{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}",
    "tool_use": "T:{{ tools | tojson }}|{% for m in messages %}{{ m.content }}{% endfor %}",
    "rag": "R:{% for d in documents %}{{ d.title }};{% endfor %}{{ messages[-1].content }}",
}
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def named(tmp_path: Path, cache: ModuleCache) -> tuple[Any, Any]:
    ref_tok, folder = saved(tmp_path, dict(NAMED), **TOKENS)
    assert (folder / "additional_chat_templates" / "rag.jinja").exists()
    return ref_tok, tmpl2py.load(folder, cache=cache)


TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
DOCS = [{"title": "a", "text": "x"}, {"title": "b", "text": "y"}]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"tools": [TOOL]},  # tool_use is chosen
        {"documents": DOCS},  # transformers does not choose rag by documents: default
        {"chat_template": "rag", "documents": DOCS},
        {"chat_template": "tool_use"},
        {"chat_template": "X{{ messages | length }}{{ eos_token }}"},  # a template text
        {"tools": [TOOL], "chat_template": "default"},
        {"add_generation_prompt": True, "bos_token": "<<override>>"},  # kwargs win
    ],
    ids=lambda o: ",".join(o) or "none",
)
def test_named_template_selection(named: tuple[Any, Any], options: dict) -> None:
    ref_tok, ours = named
    compare(ref_tok, ours, HI, **options)


def test_no_default_template(tmp_path: Path, cache: ModuleCache) -> None:
    ref_tok, folder = saved(tmp_path, {"a": "A{{ messages }}", "b": "B"}, **TOKENS)
    ours = tmpl2py.load(folder, cache=cache)
    compare(ref_tok, ours, HI)  # ValueError: multiple chat templates with no default
    compare(ref_tok, ours, HI, chat_template="b")
    assert tmpl2py.load(folder, name="b", cache=cache).apply_chat_template(HI) == "B"


def test_legacy_config_template_list(tmp_path: Path, cache: ModuleCache) -> None:
    """``save_jinja_files=False``: the templates as a list of {name, template} in the config."""
    from transformers import AutoTokenizer

    make_tokenizer(dict(NAMED), **TOKENS).save_pretrained(tmp_path, save_jinja_files=False)
    assert isinstance(json.loads((tmp_path / "tokenizer_config.json").read_text())["chat_template"], list)
    ref_tok = AutoTokenizer.from_pretrained(tmp_path)
    ours = tmpl2py.load(tmp_path, cache=cache)
    for options in ({}, {"tools": [TOOL]}, {"chat_template": "rag", "documents": DOCS}):
        compare(ref_tok, ours, HI, **options)


# ----------------------------------------------------------------------------- arguments


@pytest.fixture
def qwen(tmp_path: Path, cache: ModuleCache) -> tuple[Any, Any]:
    ref_tok, folder = saved(tmp_path, QWEN, **TOKENS)
    return ref_tok, tmpl2py.load(folder, cache=cache)


@dataclasses.dataclass
class Message:
    role: str
    content: Any


CONV = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "hello", "tool_calls": None},
]


@pytest.mark.parametrize(
    "conversation,options",
    [
        (CONV, {"add_generation_prompt": True}),
        ([CONV, CONV[:2]], {"add_generation_prompt": True}),  # a batch: a list of str
        ((tuple(CONV[:2]), CONV), {}),  # a batch of a tuple and a list
        ([], {}),  # empty conversation
        ([[]], {}),  # a batch holding an empty conversation
        (CONV, {"continue_final_message": True}),
        (CONV[:2], {"continue_final_message": True}),  # the final message is the user's
        (CONV, {"continue_final_message": True, "add_generation_prompt": True}),
        (CONV, {"return_assistant_tokens_mask": True}),  # needs tokenize=True
        (CONV, {"sanitize_control_tokens": True}),
        ([Message("user", "from a dataclass")], {}),
        (["not a message"], {}),
        (CONV, {"tools": ["not a schema"]}),
        (CONV, {"documents": ["not a dict"]}),
        (CONV, {"padding": True, "truncation": True, "max_length": 3, "return_dict": True}),
        ([{"role": "user", "content": None}], {}),  # None values are dropped, then undefined
    ],
    ids=lambda v: json.dumps(v, default=repr)[:40] if isinstance(v, dict) else None,
)
def test_arguments_and_errors(qwen: tuple[Any, Any], conversation: Any, options: dict) -> None:
    ref_tok, ours = qwen
    compare(ref_tok, ours, conversation, **options)


def test_tools_as_python_functions(qwen: tuple[Any, Any]) -> None:
    def get_weather(city: str) -> str:
        """Get the weather.

        Args:
            city: The city.
        """
        return city

    ref_tok, ours = qwen
    compare(ref_tok, ours, CONV[:2], tools=[get_weather], add_generation_prompt=True)


@pytest.mark.parametrize("kwargs", [{"budget": 2048}, {"budget": "low"}, {"limits": 5}, {"segments": True}])
def test_every_keyword_reaches_the_template(tmp_path: Path, cache: ModuleCache, kwargs: dict) -> None:
    """transformers passes every extra keyword to the template: names of tmpl2py's own
    render options (``budget``, ``limits``, ``segments``) too."""
    ref_tok, folder = saved(tmp_path, "b={{ budget }}|l={{ limits }}|s={{ segments }}", **TOKENS)
    compare(ref_tok, tmpl2py.load(folder, cache=cache), HI, **kwargs)


def test_tokenize_true_is_refused(qwen: tuple[Any, Any]) -> None:
    with pytest.raises(ValueError, match="tokenize=False"):
        qwen[1].apply_chat_template(CONV, tokenize=True)


# ----------------------------------------------------------------------------- Hypothesis

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool"]), "content": _text}
)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    conversation=st.lists(_message, min_size=1, max_size=4),
    agp=st.booleans(),
    cfm=st.booleans(),
)
def test_hypothesis_conversations(qwen: tuple[Any, Any], conversation: list, agp: bool, cfm: bool) -> None:
    ref_tok, ours = qwen
    compare(ref_tok, ours, conversation, add_generation_prompt=agp, continue_final_message=cfm)


def test_rich_values_become_what_transformers_makes_them() -> None:
    """transformers rebuilds what a template sees from plain data (``_plain_template_data``): a
    numpy scalar becomes its Python value, any other numpy value (an image's array) the
    placeholder ``<ndarray>``, and the tools a new list. An array of one item was unwrapped
    here (``5``) and a larger one raised ``ValueError``; a tuple of tools stayed a tuple."""
    np = pytest.importorskip("numpy")
    from transformers.utils.chat_template_utils import render_jinja_template

    source = "{{ tools }}|{{ messages[0].content[0].image }}|{{ messages[0].content[1] }}"
    content = [
        {"type": "image", "image": np.zeros((2, 2))},
        {"type": "text", "n": np.array([5]), "f": np.float32(1.5), "b": np.bool_(False), "i": np.int64(3)},
    ]
    for tools in (({"a": 1},), (), None):
        messages = [{"role": "user", "content": content}]
        expected = render_jinja_template(conversations=[messages], tools=tools, chat_template=source)[0][0]
        assert tmpl2py.compile_template(source).render_conversation(messages, tools=tools) == expected


def test_messages_are_normalised_as_transformers_normalises_them() -> None:
    """``loader._normalize_messages`` (a list of dicts rebuilt in one pass, JSON scalars taken
    as they are) against transformers' ``_normalize_chat_messages`` on random conversations:
    objects with ``model_dump`` (one dumping ``None``: dropped as a ``None`` value), dataclasses,
    tuples, ``Mapping``s, enums, non-dict messages (the same ``TypeError``), a tuple of them."""
    import collections
    import dataclasses
    import enum
    import random

    from transformers.utils.chat_template_utils import _normalize_chat_messages

    from tmpl2py.loader import _normalize_messages

    class Role(str, enum.Enum):
        USER = "user"

    @dataclasses.dataclass
    class Call:
        name: Any
        arguments: list

    class Model:
        def model_dump(self) -> dict:
            return {"m": [1, (2, None)]}

    class Empty:
        def model_dump(self) -> None:
            return None

    thing = object()
    leaves = [None, "s", 1, 2.5, True, Role.USER, thing, Model(), Empty(), Call(Role.USER, [None])]
    rng = random.Random(5)

    def value(depth: int) -> Any:
        if depth > 3 or rng.random() < 0.4:
            return rng.choice(leaves)
        n = rng.randint(0, 4)
        kind = rng.choice(["dict", "list", "tuple", "ordered"])
        if kind == "dict":
            return {rng.choice(["a", "b", 1, None, Role.USER]): value(depth + 1) for _ in range(n)}
        if kind == "list":
            return [value(depth + 1) for _ in range(n)]
        if kind == "tuple":
            return tuple(value(depth + 1) for _ in range(n))
        return collections.OrderedDict((str(i), value(depth + 1)) for i in range(n))

    def outcome(normalise: Any, conversation: Any) -> str:
        try:
            made = normalise(conversation)
        except TypeError as e:
            return f"TypeError: {e}"
        return repr((type(made).__name__, made))

    for _ in range(5000):
        conversation: Any = [
            {rng.choice(["role", "content", "x", None]): value(1) for _ in range(rng.randint(0, 4))}
            if rng.random() < 0.85 else value(1)
            for _ in range(rng.randint(0, 3))
        ]
        if rng.random() < 0.1:
            conversation = tuple(conversation)
        ours = outcome(_normalize_messages, conversation)
        assert ours == outcome(_normalize_chat_messages, conversation), conversation
