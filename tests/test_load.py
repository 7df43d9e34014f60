"""``tmpl2py.load``: model folders, single files, GGUF, Modelfiles; special tokens as transformers
reads them; the declared jinja2 fallback; rendering from many threads.

Folder cases are checked against ``AutoTokenizer.from_pretrained`` of the same folder (its
``special_tokens_map``, ``extra_special_tokens``, ``chat_template`` and the rendered prompt).
"""

from __future__ import annotations

import json
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

from tmpl2py_paths import ROOT

import tmpl2py
from tmpl2py import CompileError, SourceError
from tmpl2py.cache import ModuleCache
from tmpl2py.loader import ChatTemplate, FallbackTemplate

QWEN = (ROOT / "examples" / "seed001_qwen.jinja").read_text(encoding="utf-8")
GO_SEED = (ROOT / "examples" / "seed002_gemma3_tools.gotmpl").read_text(encoding="utf-8")
SPECIALS = "{{ bos_token }}|{{ eos_token }}|{{ pad_token }}|{{ unk_token }}|{{ image_token }}|"
TEMPLATE = SPECIALS + "{% for m in messages %}{{ m.role }}:{{ m.content }}{% endfor %}"
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def cache(tmp_path: Path) -> ModuleCache:
    return ModuleCache(tmp_path / "cache")


def tokenizer_json(folder: Path) -> None:
    """A tiny WordLevel tokenizer.json (the ``tokenizers`` package; no download)."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {t: i for i, t in enumerate(["<unk>", "<s>", "</s>", "<pad>", "<image>", "hi"])}
    backend = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    folder.mkdir(parents=True, exist_ok=True)
    backend.save(str(folder / "tokenizer.json"))


def write_folder(folder: Path, config: dict, files: dict) -> Path:
    tokenizer_json(folder)
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", **config}), encoding="utf-8"
    )
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(text.encode("utf-8"))
    return folder


ADDED = {"__type": "AddedToken", "content": "</s>", "lstrip": False, "normalized": False,
         "rstrip": False, "single_word": False, "special": True}  # fmt: skip
FOLDERS = {
    "strings": ({"bos_token": "<s>", "eos_token": "</s>", "chat_template": TEMPLATE}, {}),
    "added-token-dict": ({"bos_token": "<s>", "eos_token": ADDED, "chat_template": TEMPLATE}, {}),
    "none-and-empty": ({"bos_token": None, "eos_token": "", "chat_template": TEMPLATE}, {}),
    "model-specific": ({"bos_token": "<s>", "image_token": "<image>", "chat_template": TEMPLATE}, {}),
    "extra-dict": ({"extra_special_tokens": {"image_token": "<image>"}, "chat_template": TEMPLATE}, {}),
    "additional-list": ({"additional_special_tokens": ["<image>"], "chat_template": TEMPLATE}, {}),
    "jinja-file-wins": ({"bos_token": "<s>", "chat_template": "config"}, {"chat_template.jinja": TEMPLATE}),
    "crlf-jinja-file": ({"pad_token": "<pad>"}, {"chat_template.jinja": "a\r\n{{ pad_token }}\rb"}),
    "special-tokens-map": (
        {"chat_template": TEMPLATE},
        {"special_tokens_map.json": json.dumps({"bos_token": {"content": "<s>"}, "pad_token": "<pad>"})},
    ),
    "named-list": (
        {"eos_token": "</s>", "chat_template": [{"name": "default", "template": TEMPLATE},
                                                {"name": "tool_use", "template": "T" + TEMPLATE}]},
        {},
    ),  # fmt: skip
    "named-list-of-one": (
        {"eos_token": "</s>", "chat_template": [{"name": "default", "template": TEMPLATE}]}, {}
    ),
    "added-token-without-content": ({"bos_token": {"__type": "AddedToken"}, "chat_template": TEMPLATE}, {}),
    "special-tokens-map-extra-dicts": (
        {"chat_template": TEMPLATE},
        {"special_tokens_map.json": json.dumps({"extra_special_tokens": [{"content": "<image>"}], "eos_token": {"content": "</s>"}})},
    ),
    "additional-dir": (
        {"eos_token": "</s>"},
        {"chat_template.jinja": TEMPLATE, "additional_chat_templates/rag.jinja": "R{{ eos_token }}"},
    ),
}


@pytest.mark.parametrize("case", sorted(FOLDERS))
def test_folder_as_transformers_reads_it(tmp_path: Path, cache: ModuleCache, case: str) -> None:
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    config, files = FOLDERS[case]
    folder = write_folder(tmp_path / "model", config, files)
    ref = AutoTokenizer.from_pretrained(folder)
    ours = tmpl2py.load(folder, cache=cache)
    assert ours.special_tokens_map == ref.special_tokens_map
    assert ours.extra_special_tokens == [str(t) for t in ref.extra_special_tokens]
    assert ours.chat_template == ref.chat_template
    for attr in ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token"):
        assert getattr(ours, attr) == (None if getattr(ref, attr) is None else str(getattr(ref, attr)))
    for options in ({}, {"tools": [{"type": "function", "function": {"name": "f"}}]}):
        expected = ref.apply_chat_template(HI, tokenize=False, **options)
        assert ours.apply_chat_template(HI, **options) == expected


@pytest.mark.parametrize(
    "config",
    [
        {"eos_token": {"content": "<E2>"}},  # a dict is an AddedToken only when it says so
        {"extra_special_tokens": {"image_token": {"content": "<i5>"}}},
        {"sep_token": 5},
        {"bos_token": {"__type": "AddedToken", "content": 7}},
    ],
)
def test_special_tokens_transformers_refuses_are_refused(tmp_path: Path, cache: ModuleCache, config: dict) -> None:
    """What ``AutoTokenizer.from_pretrained`` refuses with a TypeError (red team s9u F1: the
    first two rendered a prompt here), a SourceError naming the key; transformers' refusal
    checked on the same folder."""
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    folder = write_folder(tmp_path / "model", {**config, "chat_template": TEMPLATE}, {})
    with pytest.raises(TypeError):
        AutoTokenizer.from_pretrained(folder)
    with pytest.raises(SourceError) as info:
        tmpl2py.load(folder, cache=cache)
    key = next(iter(config if "extra_special_tokens" not in config else config["extra_special_tokens"]))
    assert f"special token {key} " in str(info.value)


def test_a_single_template_file_and_a_config_file(tmp_path: Path, cache: ModuleCache) -> None:
    path = tmp_path / "qwen.jinja"
    path.write_text(QWEN, encoding="utf-8")
    t = tmpl2py.load(path, cache=cache)
    assert isinstance(t, ChatTemplate) and t.kind == "template" and t.special_tokens_map == {}
    assert t.bos_token is None and t.chat_template == QWEN
    expected = tmpl2py.compile_template(QWEN).render_conversation(HI, add_generation_prompt=True)
    assert t.apply_chat_template(HI, add_generation_prompt=True) == expected
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": TEMPLATE, "bos_token": {"__type": "AddedToken", "content": "<s>"},
                                  "image_token": "<image>"}), encoding="utf-8")  # fmt: skip
    t = tmpl2py.load(config, cache=cache)
    assert t.special_tokens_map == {"bos_token": "<s>", "image_token": "<image>"}
    expected = tmpl2py.compile_template(TEMPLATE).render_conversation(
        HI, bos_token="<s>", image_token="<image>"
    )
    assert t.apply_chat_template(HI) == expected


def test_gguf_tokens_are_mapped_and_damage_is_reported(tmp_path: Path, cache: ModuleCache) -> None:
    gguf = pytest.importorskip("gguf", reason="the optional 'gguf' package is not installed")
    path = tmp_path / "model.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_chat_template(TEMPLATE)
    writer.add_token_list(["<unk>", "<s>", "</s>", "hi"])
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    t = tmpl2py.load(path, cache=cache)
    assert (t.kind, t.bos_token, t.eos_token) == ("gguf", "<s>", "</s>")
    assert t.apply_chat_template(HI).startswith("<s>|</s>|")
    damaged = tmp_path / "damaged.gguf"
    damaged.write_bytes(path.read_bytes()[:40])  # cut inside the metadata
    with pytest.raises(SourceError, match=r"damaged\.gguf: malformed GGUF file") as err:
        tmpl2py.load(damaged, cache=cache)
    assert err.value.code == "malformed"


def test_modelfile_and_bare_go_template(tmp_path: Path, cache: ModuleCache) -> None:
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text(f'FROM x\nTEMPLATE """{GO_SEED}"""\nPARAMETER stop "<end_of_turn>"\n')
    t = tmpl2py.load(modelfile, cache=cache)
    expected = tmpl2py.compile_template(GO_SEED, "go").render_conversation(HI)
    assert (t.dialect, t.stop) == ("go", ["<end_of_turn>"])
    assert t.render_conversation(HI) == expected
    with pytest.raises(TypeError, match="render_conversation"):
        t.apply_chat_template(HI)
    bare = tmp_path / "template"
    bare.write_text(GO_SEED)
    assert tmpl2py.load(bare, cache=cache).render_conversation(HI) == expected
    assert tmpl2py.load(tmp_path, cache=cache).stop == ["<end_of_turn>"]  # a folder with a Modelfile


def test_a_modelfile_s_system_and_messages_are_its_defaults(tmp_path: Path, cache: ModuleCache) -> None:
    """``load(Modelfile)`` renders as Ollama's ChatHandler and GenerateHandler do: the
    Modelfile's ``SYSTEM`` and ``MESSAGE`` lines are the defaults of a request that names none
    (as the CLI applies them), checked against the Go reference where Go is installed (red
    team s8u F3: the library dropped them, a prompt without the model's system text)."""
    template = "{{ range .Messages }}<{{ .Role }}>{{ .Content }}\n{{ end }}"
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text(
        f'FROM x\nTEMPLATE """{template}"""\nSYSTEM You are terse.\n'
        "MESSAGE user Is Paris in France?\nMESSAGE assistant yes\n"
    )
    t = tmpl2py.load(modelfile, cache=cache)
    defaults = {
        "system": "You are terse.",
        "messages": [{"role": "user", "content": "Is Paris in France?"}, {"role": "assistant", "content": "yes"}],
    }
    compiled = tmpl2py.compile_template(template, "go")
    chat = t.render_conversation(HI)
    assert chat == compiled.render_conversation(HI, modelfile=defaults)
    assert chat == "<system>You are terse.\n<user>Is Paris in France?\n<assistant>yes\n<user>hi\n"
    assert t.render_generate("hi") == compiled.render_generate("hi", modelfile=defaults)
    own = {"system": "Other.", "messages": []}
    assert t.render_conversation(HI, modelfile=own) == compiled.render_conversation(HI, modelfile=own)
    # an empty conversation is a model load for Ollama's ChatHandler, whatever the file holds
    # (red team s8u F5: rendered when the Modelfile had no SYSTEM / MESSAGE line)
    from tmpl2py.runtime.go.ollama import RequestError

    plain = tmp_path / "plain.Modelfile"
    plain.write_text(f'FROM x\nTEMPLATE """{template}"""\n')
    for model in (t, tmpl2py.load(plain, cache=cache)):
        with pytest.raises(RequestError, match="no messages"):
            model.render_conversation([])
    import goref_client

    if goref_client.go_available():
        ok, text = goref_client.get_reference().ollama(template, {"messages": HI}, modelfile=defaults)
        assert ok and chat == text
        ok, text = goref_client.get_reference().ollama(template, {"messages": []}, modelfile={"system": "", "messages": []})
        assert not ok and "no messages" in text


def test_load_errors(tmp_path: Path, cache: ModuleCache) -> None:
    with pytest.raises(SourceError, match="no such file"):
        tmpl2py.load(tmp_path / "missing", cache=cache)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="no chat template here") as err:
        tmpl2py.load(tmp_path / "empty", cache=cache)
    assert err.value.code == "no-template"
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% if x %}")
    with pytest.raises(CompileError) as cerr:
        tmpl2py.load(bad, cache=cache)
    assert cerr.value.code == "unclosed-block"
    (tmp_path / "ok.jinja").write_text("x")
    with pytest.raises(SourceError, match="no template named 'nope'"):
        tmpl2py.load(tmp_path / "ok.jinja", name="nope", cache=cache)
    config = tmp_path / "m" / "tokenizer_config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"chat_template": "x", "bos_token": 5}))
    with pytest.raises(SourceError, match=r"tokenizer_config\.json: special token bos_token has to be either str or AddedToken"):
        tmpl2py.load(config.parent, cache=cache)
    with pytest.raises(ValueError, match="fallback must be None or 'jinja2'"):
        tmpl2py.load(tmp_path / "ok.jinja", fallback="minijinja", cache=cache)


# ----------------------------------------------------------------------------- fallback


def _unsupported_template() -> str:
    """A template the compiler refuses as ``unsupported`` (and jinja2 renders)."""
    from reference import ref_render

    candidates = [
        "{% extends 'base.html' %}",
        "{% include 'x' %}",
        "{% import 'x' as y %}",
        "{% for m in messages %}{{ m.content }}{% endfor %}{% autoescape true %}{{ '<' }}{% endautoescape %}",
        "{{ messages | map(attribute='content') | join(',') }}{% with a = 1 %}{{ a }}{% endwith %}",
    ]
    for text in candidates:
        try:
            tmpl2py.compile_template(text)
        except CompileError as e:
            if e.code == "unsupported" and ref_render(text, {"messages": HI})[0] == "ok":
                return text
    pytest.skip("no candidate template is refused as unsupported")


def test_fallback_renders_through_transformers(tmp_path: Path, cache: ModuleCache) -> None:
    pytest.importorskip("transformers")
    from reference import ref_conversation

    text = _unsupported_template()
    path = tmp_path / "t.jinja"
    path.write_text(text)
    with pytest.raises(CompileError) as err:  # the default stays the refusal
        tmpl2py.load(path, cache=cache)
    assert err.value.code == "unsupported"
    with pytest.warns(RuntimeWarning, match="fallback='jinja2'"):
        t = tmpl2py.load(path, fallback="jinja2", cache=cache)
    assert t.fallback == "jinja2" and isinstance(t.templates["default"], FallbackTemplate)
    assert ("ok", t.apply_chat_template(HI)) == ref_conversation(text, {"messages": HI})
    ok = tmp_path / "ok.jinja"
    ok.write_text("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a template that compiles: no warning, no fallback
        assert tmpl2py.load(ok, fallback="jinja2", cache=cache).fallback is None


# ----------------------------------------------------------------------------- threads


CONVERSATIONS = [
    [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": "a" * i}]
    for i in range(12)
]


@pytest.mark.parametrize("budget", [None, 5.0])
def test_rendering_from_many_threads(tmp_path: Path, cache: ModuleCache, budget: Any) -> None:
    """Many threads render the same loaded templates (with and without budget=): each result
    equals the single-threaded render of that conversation."""
    path = tmp_path / "qwen.jinja"
    path.write_text(QWEN, encoding="utf-8")
    loaded = tmpl2py.load(path, cache=cache)
    compiled = loaded.templates["default"]
    go = tmpl2py.compile_template(GO_SEED, "go")
    options: dict = {} if budget is None else {"budget": budget}
    expected_hf = [loaded.apply_chat_template(c, add_generation_prompt=True) for c in CONVERSATIONS]
    expected_go = [go.render_conversation(c, **options) for c in CONVERSATIONS]
    results: dict = {}
    start = threading.Barrier(8)

    def work(worker: int) -> None:
        start.wait()
        out = []
        for round_ in range(25):
            i = (worker + round_) % len(CONVERSATIONS)
            hf = compiled.render_conversation(
                CONVERSATIONS[i], add_generation_prompt=True, **options
            )
            out.append((i, hf, go.render_conversation(CONVERSATIONS[i], **options)))
        results[worker] = out

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8
    for out in results.values():
        for i, hf, go_text in out:
            assert hf == expected_hf[i] and go_text == expected_go[i]
