"""compiler.sources: every kind of file templates come in, and multi-template modules."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from tmpl2py_paths import ROOT

from tmpl2py.compiler import compile_template
from tmpl2py.combine import build_module, combine_modules
from tmpl2py.formats import FormatError, parse_modelfile
from tmpl2py.sources import SourceError, discover, load, output_names, sniff_dialect

QWEN = (ROOT / "examples" / "seed001_qwen.jinja").read_text(encoding="utf-8")
SIMPLE = "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
RAG = "{% for d in documents %}[{{ d.title | upper }}]{% endfor %}{{ messages | length }}"


def _write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _go_available() -> bool:
    try:
        compile_template("{{ .Prompt }}", dialect="go")
    except Exception:  # noqa: BLE001 - the Go frontend is being written elsewhere
        return False
    return True


needs_go = pytest.mark.skipif(not _go_available(), reason="the Go frontend does not compile yet")


# ----------------------------------------------------------------------------- template files


def test_bare_template_files_take_the_dialect_from_the_extension(tmp_path: Path) -> None:
    j = tmp_path / "chat_template.jinja"
    j.write_bytes(b"{{ messages }}\r\n")
    g = tmp_path / "t.gotmpl"
    g.write_text("{{ .Prompt }}", encoding="utf-8")
    t = tmp_path / "t.tmpl"
    t.write_text("{{ .System }}", encoding="utf-8")
    [js] = load(j)
    assert (js.name, js.dialect, js.kind, js.origin) == ("default", "jinja", "template", str(j))
    assert js.text == "{{ messages }}\r\n"  # bytes kept: CRLF is the template's business
    assert load(g)[0].dialect == "go"
    assert load(t)[0].dialect == "go"


def test_unknown_extension_sniffs_the_dialect_or_asks(tmp_path: Path) -> None:
    a = tmp_path / "template"
    a.write_text("{% for m in messages %}{{ m.content }}{% endfor %}", encoding="utf-8")
    b = tmp_path / "blob"
    b.write_text("{{- range .Messages }}{{ .Content }}{{ end }}", encoding="utf-8")
    c = tmp_path / "plain.txt"
    c.write_text("no tags here", encoding="utf-8")
    assert load(a)[0].dialect == "jinja"
    assert load(b)[0].dialect == "go"
    with pytest.raises(SourceError) as err:
        load(c)
    assert err.value.code == "unknown-kind" and str(c) in str(err.value)
    assert load(c, dialect="jinja")[0].dialect == "jinja"
    assert sniff_dialect("{{ if .System }}x{{ end }}") == "go"
    assert sniff_dialect("{# c #}") == "jinja"


def test_missing_file_and_folder_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as err:
        load(tmp_path / "nope.jinja")
    assert err.value.code == "missing" and "nope.jinja" in str(err.value)
    with pytest.raises(SourceError, match="folder"):
        load(tmp_path)


def test_non_utf8_template_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "bad.jinja"
    p.write_bytes(b"{{ x }}\xff")
    with pytest.raises(SourceError, match=r"bad\.jinja: not UTF-8"):
        load(p)


# ----------------------------------------------------------------------------- JSON


def test_tokenizer_config_with_a_string(tmp_path: Path) -> None:
    p = _write_json(
        tmp_path / "tokenizer_config.json",
        {
            "chat_template": SIMPLE,
            "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": False},
            "eos_token": "</s>",
            "pad_token": None,
            "model_max_length": 4096,
        },
    )
    [s] = load(p)
    assert (s.name, s.dialect, s.kind) == ("default", "jinja", "tokenizer_config")
    assert s.text == SIMPLE
    assert s.origin == f"{p}:chat_template"
    assert s.special_tokens == {"bos_token": "<s>", "eos_token": "</s>"}


def test_tokenizer_config_with_a_list_gives_every_named_template(tmp_path: Path) -> None:
    p = _write_json(
        tmp_path / "tokenizer_config.json",
        {
            "chat_template": [
                {"name": "default", "template": "old"},
                {"name": "tool_use", "template": QWEN},
                {"name": "rag", "template": RAG},
                {"name": "default", "template": SIMPLE},  # later duplicates win, as in transformers' dict
            ]
        },
    )
    loaded = load(p)
    assert [s.name for s in loaded] == ["default", "tool_use", "rag"]
    assert loaded[0].text == SIMPLE
    assert loaded[1].origin == f"{p}:chat_template[tool_use]"


def test_processor_chat_template_json(tmp_path: Path) -> None:
    p = _write_json(tmp_path / "chat_template.json", {"chat_template": SIMPLE})
    [s] = load(p)
    assert (s.kind, s.text, s.dialect) == ("processor", SIMPLE, "jinja")


def test_json_errors_name_the_file(tmp_path: Path) -> None:
    no_key = _write_json(tmp_path / "tokenizer_config.json", {"eos_token": "</s>"})
    with pytest.raises(SourceError) as err:
        load(no_key)
    assert err.value.code == "no-template" and "no 'chat_template' key" in str(err.value)
    assert str(no_key) in str(err.value)

    (tmp_path / "chat_template.jinja").write_text(SIMPLE, encoding="utf-8")
    with pytest.raises(SourceError, match="chat_template.jinja"):  # points at the sibling file
        load(no_key)

    bad = tmp_path / "broken" / "tokenizer_config.json"
    bad.parent.mkdir()
    bad.write_text('{"chat_template": "x",}', encoding="utf-8")
    with pytest.raises(SourceError, match=r"tokenizer_config\.json: malformed JSON at line 1 column"):
        load(bad)

    wrong = _write_json(tmp_path / "w.json", {"chat_template": [{"template": "x"}]})
    with pytest.raises(SourceError, match=r"chat_template\[0\]"):
        load(wrong)
    array = _write_json(tmp_path / "a.json", ["x"])
    with pytest.raises(SourceError, match="expected a JSON object"):
        load(array)


# ----------------------------------------------------------------------------- GGUF


def _write_gguf(path: Path, templates: object = None, tokens: bool = True) -> Path:
    gguf = pytest.importorskip("gguf", reason="the optional 'gguf' package is not installed")
    writer = gguf.GGUFWriter(str(path), "llama")
    if templates is not None:
        writer.add_chat_template(templates)
    if tokens:
        writer.add_token_list(["<unk>", "<s>", "</s>", "hello"])
        writer.add_bos_token_id(1)
        writer.add_eos_token_id(2)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()  # none: metadata only
    writer.close()
    return path


def test_gguf_default_and_named_templates(tmp_path: Path) -> None:
    p = _write_gguf(
        tmp_path / "model.gguf",
        [{"name": "default", "template": SIMPLE}, {"name": "tool_use", "template": QWEN}, {"name": "rag", "template": RAG}],
    )
    loaded = load(p)
    assert [s.name for s in loaded] == ["default", "tool_use", "rag"]
    assert [s.text for s in loaded] == [SIMPLE, QWEN, RAG]
    assert loaded[0].origin == f"{p}:tokenizer.chat_template"
    assert loaded[1].origin == f"{p}:tokenizer.chat_template.tool_use"
    assert all(s.kind == "gguf" and s.dialect == "jinja" for s in loaded)
    assert loaded[0].special_tokens == {"bos_token": "<s>", "eos_token": "</s>"}


def test_gguf_is_recognised_by_its_magic(tmp_path: Path) -> None:
    p = _write_gguf(tmp_path / "weights.bin", SIMPLE, tokens=False)
    [s] = load(p)
    assert (s.kind, s.text, s.special_tokens) == ("gguf", SIMPLE, {})


def test_gguf_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    none = _write_gguf(tmp_path / "none.gguf", None)
    with pytest.raises(SourceError) as err:
        load(none)
    assert err.value.code == "no-template" and "tokenizer.chat_template" in str(err.value)
    damaged = tmp_path / "damaged.gguf"
    damaged.write_bytes(b"GGUF\x03\x00\x00\x00\xff")
    with pytest.raises(SourceError, match=r"damaged\.gguf: malformed GGUF"):
        load(damaged)
    named = _write_gguf(tmp_path / "named.gguf", SIMPLE)
    monkeypatch.setitem(sys.modules, "gguf", None)  # read with the standard library alone
    with pytest.raises(SourceError) as err:
        load(none)
    assert err.value.code == "no-template"
    assert load(named)[0].text == SIMPLE


def _junk_gguf(path: Path, junk: bytes) -> Path:
    """A GGUF v3 file: one key ``junk`` holding ``junk`` (a value's type and bytes), then the
    chat template (written by hand: the gguf package's writer checks its values)."""
    import struct

    def string(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    kv = string("junk") + junk + string("tokenizer.chat_template") + struct.pack("<I", 8) + string(SIMPLE)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + kv)
    return path


def test_hostile_gguf_metadata_is_stepped_over_or_refused(tmp_path: Path) -> None:
    """Only the keys a template needs are read: an array of 3M bytes before the template is
    stepped over at once (``gguf.GGUFReader`` parsed it into numpy views: 2 GB and a crash for a
    3 MB file, red team s8h F2), 100,000 strings one length each; arrays nested past 8 levels,
    an array or a string longer than the file, an unknown value type: ``malformed`` errors."""
    import struct
    import time

    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    big = _junk_gguf(tmp_path / "big.gguf", struct.pack("<IIQ", 9, 0, 3_000_000) + bytes(3_000_000))
    assert load(big)[0].text == SIMPLE
    nested = struct.pack("<IIQ", 9, 9, 1) + struct.pack("<IQ", 9, 1) * 2 + struct.pack("<IQ", 0, 0)
    assert load(_junk_gguf(tmp_path / "nested.gguf", nested))[0].text == SIMPLE
    strings = struct.pack("<IIQ", 9, 8, 100_000) + struct.pack("<Q", 0) * 100_000
    assert load(_junk_gguf(tmp_path / "strings.gguf", strings))[0].text == SIMPLE
    assert time.process_time() - start < 5 and resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000
    deep = struct.pack("<IIQ", 9, 9, 1) + struct.pack("<IQ", 9, 1) * 1_000_000 + struct.pack("<IQ", 0, 0)
    for name, junk in {
        "deep": deep,  # 12 MB of nested array headers took 8x that in memory (red team s8h F7)
        "long-array": struct.pack("<IIQ", 9, 0, 1 << 60),
        "long-strings": struct.pack("<IIQ", 9, 8, 1 << 40),
        "long-string": struct.pack("<IQ", 8, 1 << 50),
        "unknown-type": struct.pack("<I", 99),
    }.items():
        with pytest.raises(SourceError, match="malformed GGUF") as err:
            load(_junk_gguf(tmp_path / f"{name}.gguf", junk))
        assert err.value.code == "malformed"


# ----------------------------------------------------------------------------- Modelfile

MODELFILE = '''# an Ollama Modelfile
FROM llama3.2
template """{{ if .System }}<|system|>
{{ .System }}<|end|>
{{ end }}{{ range .Messages }}<|{{ .Role }}|>
{{ .Content }}<|end|>
{{ end }}<|assistant|>
"""
PARAMETER stop "<|end|>"
PARAMETER stop <|user|>
PARAMETER temperature 0.7
SYSTEM """You are "helpful"."""
'''


def test_modelfile_template_and_stop(tmp_path: Path) -> None:
    p = tmp_path / "Modelfile"
    p.write_text(MODELFILE, encoding="utf-8")
    [s] = load(p)
    assert (s.name, s.dialect, s.kind) == ("default", "go", "modelfile")
    assert s.text == (
        "{{ if .System }}<|system|>\n{{ .System }}<|end|>\n{{ end }}{{ range .Messages }}<|{{ .Role }}|>\n"
        "{{ .Content }}<|end|>\n{{ end }}<|assistant|>\n"
    )
    assert s.stop == ["<|end|>", "<|user|>"]
    assert s.origin == f"{p}:TEMPLATE"


def test_modelfile_single_line_template_last_one_wins(tmp_path: Path) -> None:
    p = tmp_path / "llama.modelfile"
    p.write_text('FROM x\nTEMPLATE "first"\nTEMPLATE [INST] {{ .Prompt }} [/INST]\n', encoding="utf-8")
    [s] = load(p)
    assert s.text == "[INST] {{ .Prompt }} [/INST]" and s.stop == []


def test_modelfile_is_sniffed_without_its_name(tmp_path: Path) -> None:
    p = tmp_path / "model.txt"
    p.write_text('\n# c\nFROM x\nTEMPLATE "{{ .Prompt }}"\n', encoding="utf-8")
    assert load(p)[0].kind == "modelfile"


def test_modelfile_parser_follows_ollama() -> None:
    commands = parse_modelfile('from  m\nPARAMETER num_ctx 4096\nMESSAGE user hi there\nLICENSE """a\n"b"\n"""\n')
    assert commands == [("model", "m"), ("num_ctx", "4096"), ("message", "user: hi there"), ("license", 'a\n"b"\n')]
    # non-printable characters are dropped (Ollama writes only strconv.IsPrint runes), tabs kept
    assert parse_modelfile("TEMPLATE a\x00b\u200bc\td\n") == [("template", "ab" + "c\td")]


def test_modelfile_errors(tmp_path: Path) -> None:
    no_template = tmp_path / "Modelfile"
    no_template.write_text("FROM x\nPARAMETER stop a\n", encoding="utf-8")
    with pytest.raises(SourceError) as err:
        load(no_template)
    assert err.value.code == "no-template" and "no TEMPLATE" in str(err.value)
    with pytest.raises(FormatError, match="unexpected end of file"):
        parse_modelfile('TEMPLATE """never closed\n')
    with pytest.raises(FormatError, match="line 2: unknown Modelfile command 'TEMPLAT'"):
        parse_modelfile("FROM x\nTEMPLAT y\n")
    with pytest.raises(FormatError, match="message role"):
        parse_modelfile("MESSAGE robot hi\n")
    bad = tmp_path / "bad.modelfile"
    bad.write_text("FROM x\nTEMPLAT y\n", encoding="utf-8")
    with pytest.raises(SourceError, match="line 2: unknown Modelfile command") as err:
        load(bad)
    assert err.value.code == "malformed" and err.value.path == str(bad)


@needs_go
def test_modelfile_template_compiles_and_renders(tmp_path: Path) -> None:
    p = tmp_path / "Modelfile"
    p.write_text(MODELFILE, encoding="utf-8")
    [s] = load(p)
    ns: dict = {}
    exec(build_module([s]), ns)
    t = compile_template(s.text, dialect="go")
    assert ns["render"]({"Messages": [], "System": "S"}) == t.render({"Messages": [], "System": "S"})


# ----------------------------------------------------------------------------- folders and names


def test_discover_walks_a_model_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "a" / "config.json").write_text("{}", encoding="utf-8")  # not a template file
    (tmp_path / "b" / "deep").mkdir(parents=True)
    (tmp_path / "b" / "deep" / "x.jinja").write_text("x", encoding="utf-8")
    (tmp_path / "b" / "Modelfile").write_text("FROM x", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "y.jinja").write_text("y", encoding="utf-8")
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    found = [p.relative_to(tmp_path).as_posix() for p in discover(tmp_path)]
    assert found == ["m.gguf", "a/tokenizer_config.json", "b/Modelfile", "b/deep/x.jinja"]


def test_output_names_use_the_folder_for_generic_file_names() -> None:
    names = output_names(
        [
            "models/Qwen2.5-7B/tokenizer_config.json",
            "models/Qwen2.5-7B/chat_template.jinja",
            "models/llama/Modelfile",
            "examples/seed001_qwen.jinja",
            "other/seed001_qwen.jinja",
            "x/other/seed001_qwen.jinja",
        ]
    )
    assert list(names.values()) == [
        "Qwen2_5_7B_tokenizer_config",
        "Qwen2_5_7B_chat_template",
        "llama",
        "seed001_qwen_examples",
        "seed001_qwen_other",
        "seed001_qwen_other_2",
    ]


# ----------------------------------------------------------------------------- multi-template modules


def _named_config(tmp_path: Path) -> Path:
    return _write_json(
        tmp_path / "tokenizer_config.json",
        {
            "chat_template": [
                {"name": "default", "template": SIMPLE},
                {"name": "tool_use", "template": QWEN},
                {"name": "rag", "template": RAG},
            ],
            "bos_token": "<s>",
        },
    )


def test_one_module_with_a_function_per_named_template(tmp_path: Path) -> None:
    loaded = load(_named_config(tmp_path))
    text = build_module(loaded)
    compile(text, "combined", "exec")
    module = types.ModuleType("combined")
    exec(text, module.__dict__)
    assert list(module.TEMPLATES) == ["default", "tool_use", "rag"]
    assert module.render is module.render_default is module.TEMPLATES["default"]
    assert module.TEMPLATE_NAMES == ("default", "tool_use", "rag")
    assert module.METADATA["rag"]["SOURCE_SHA256"] != module.METADATA["default"]["SOURCE_SHA256"]
    context = {
        "messages": [{"role": "user", "content": "hi"}],
        "documents": [{"title": "doc"}],
        "bos_token": "<s>",
        "add_generation_prompt": True,
    }
    for s in loaded:
        assert module.TEMPLATES[s.name](context) == compile_template(s.text).render(context)
    assert module.get_template() is module.render_default
    assert module.get_template(tools=[]) is module.render_tool_use  # transformers' choice
    assert module.get_template("rag") is module.render_rag
    assert build_module(loaded) == text  # deterministic


def test_combining_renames_a_clashing_import_where_it_is_read() -> None:
    a = 'from tmpl2py.runtime.jinja import resolve\n\nX = 1\n\n\ndef render(context):\n    return resolve(context, "a")\n'
    b = "from tmpl2py.runtime.jinja.filters import do_upper as resolve\n\nX = 2\n\n\ndef render(context):\n    return resolve(context['b'])\n"
    text = combine_modules(["a", "b-c"], [a, b], "x")
    ns: dict = {}
    exec(text, ns)
    assert ns["render_a"]({"a": "q"}) == "q"
    assert ns["render_b_c"]({"b": "q"}) == "Q"
    assert ns["METADATA"] == {"a": {"X": 1}, "b-c": {"X": 2}}
    assert ns["render"] is ns["render_a"]  # no 'default': the first template
