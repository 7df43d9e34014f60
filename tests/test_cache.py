"""The compiled-module cache (tmpl2py/cache.py): hits, corrupted entries, modes, folders,
other processes and many writers at once."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tmpl2py_paths import ROOT

import tmpl2py
from tmpl2py.cache import CacheWarning, ModuleCache, default_cache_dir
from tmpl2py.compiler import api

QWEN = (ROOT / "examples" / "seed001_qwen.jinja").read_text(encoding="utf-8")
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def store(tmp_path: Path) -> ModuleCache:
    return ModuleCache(tmp_path / "cache")


def entry_files(store: ModuleCache) -> list[Path]:
    return sorted(p for p in store.directory.iterdir() if not p.name.startswith("."))


def test_a_hit_skips_the_compiler(store: ModuleCache, monkeypatch: pytest.MonkeyPatch) -> None:
    first = tmpl2py.compile_template(QWEN, cache=store, name="q")
    files = entry_files(store)
    assert [p.suffix for p in files] == [".code", ".py"]
    text = files[1].read_text(encoding="utf-8")
    assert text.startswith("# tmpl2py-cache ") and text.split("\n", 1)[1] == first.python_source

    def refuse(*args: object) -> None:
        raise AssertionError("compiled again on a cache hit")

    monkeypatch.setattr(api, "generate", refuse)
    again = tmpl2py.compile_template(QWEN, cache=store, name="q")
    assert again.python_source == first.python_source
    assert again.render_conversation(HI) == first.render_conversation(HI)
    monkeypatch.undo()
    assert again.ir == first.ir  # the IR is made again when asked for


def test_a_key_shared_by_two_inputs_never_mixes_their_code(store: ModuleCache) -> None:
    """Keys are checksums, not cryptographic hashes: an entry records its whole inputs, and
    a hit compares them, so two inputs that share a key each get their own code."""

    def built(value: str):  # type: ignore[no-untyped-def]
        text = f"VALUE = {value!r}\n"
        return lambda: (text, compile(text, "<t>", "exec"))

    def make(text, code):  # type: ignore[no-untyped-def]
        namespace: dict = {}
        exec(code, namespace)
        return namespace["VALUE"], text()

    assert store.get_or_build("k", b"first", built("a"), make) == ("a", "VALUE = 'a'\n")
    assert store.get_or_build("k", b"second", built("b"), make) == ("b", "VALUE = 'b'\n")
    assert store.inputs_of("k") == b"second"
    assert store.get_code("k", b"first") is None
    assert store.get_or_build("k", b"second", built("never"), make) == ("b", "VALUE = 'b'\n")


def test_the_inputs_are_the_whole_template_and_its_options() -> None:
    from tmpl2py.cache import entry_inputs, entry_key

    one = entry_inputs("{{ x }}", dialect="jinja", name="t")
    assert b"{{ x }}" in one and b"'jinja'" in one
    assert one == entry_inputs("{{ x }}", name="t", dialect="jinja")  # order-free
    others = [
        entry_inputs("{{ y }}", dialect="jinja", name="t"),
        entry_inputs("{{ x }}", dialect="go", name="t"),
        entry_inputs("{{ x }}", dialect="jinja", name="u"),
        entry_inputs("{{ x }}\ud800", dialect="jinja", name="t"),  # lone surrogates kept
    ]
    assert len({one, *others}) == 5
    assert len({entry_key(i) for i in (one, *others)}) == 5


def test_a_hit_reads_the_text_only_when_asked(store: ModuleCache) -> None:
    """A hit runs the code file alone; the module text (for ``python_source``, an error's
    position) is read when first needed, and checked against the code file's record then."""
    first = tmpl2py.compile_template(QWEN, cache=store, name="q")
    text = entry_files(store)[1]
    text.write_text("# tmpl2py-cache damaged\n")
    again = tmpl2py.compile_template(QWEN, cache=store, name="q")
    assert again.render_conversation(HI) == first.render_conversation(HI)
    assert text.read_text() == "# tmpl2py-cache damaged\n"  # not read, not rewritten yet
    assert again.python_source == first.python_source  # read: damaged, so built again
    assert text.read_text(encoding="utf-8").split("\n", 1)[1] == first.python_source


def test_the_key_covers_what_changes_the_code(store: ModuleCache) -> None:
    tmpl2py.compile_template(QWEN, cache=store, name="q")
    tmpl2py.compile_template(QWEN, cache=store, name="other")  # the name is in the header
    tmpl2py.compile_template(QWEN, cache=store, name="q", profile="plain")
    tmpl2py.compile_template(QWEN, cache=store, name="q", optimize=False)
    assert len(entry_files(store)) == 8


def test_the_key_covers_the_compilers_own_files(store: ModuleCache, tmp_path: Path) -> None:
    """An entry made by other compiler code under the same version (a checkout edited since,
    another worktree's editable install) is not taken: the key holds ``build_id``, the
    version and the sizes and times of the compiler's and the runtime's files."""
    from tmpl2py.compiler import version

    first = version.build_id()
    assert first.startswith(version.__version__ + "+")
    tmpl2py.compile_template(QWEN, cache=store, name="q")
    files = entry_files(store)
    source = Path(version.__file__)
    stamp = source.stat()
    try:
        os.utime(source, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000_000))
        version._BUILD_ID = None
        assert version.build_id() != first
        tmpl2py.compile_template(QWEN, cache=store, name="q")
        assert len(entry_files(store)) == len(files) + 2  # a new entry, not the old one
    finally:
        os.utime(source, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        version._BUILD_ID = None
    assert version.build_id() == first


@pytest.mark.parametrize(
    "damage",
    [
        "truncate-text",
        "remove-text",
        "edit-text",
        "bad-header",
        "truncate-code",
        "garbage-code",
        "flip-code",
        "code-of-other",
        "raises",
    ],
)
def test_a_corrupted_entry_is_recompiled(store: ModuleCache, damage: str) -> None:
    good = tmpl2py.compile_template(QWEN, cache=store, name="q")
    code, text = entry_files(store)
    if damage == "truncate-text":
        text.write_bytes(text.read_bytes()[:500])
    elif damage == "remove-text":
        text.unlink()
    elif damage == "edit-text":  # valid Python, but not what the header's hash says
        text.write_text(text.read_text().replace("<|im_start|>", "<|EVIL|>"))
    elif damage == "bad-header":
        text.write_text("# tmpl2py-cache nonsense\n" + good.python_source)
    elif damage == "truncate-code":
        code.write_bytes(code.read_bytes()[:100])
    elif damage == "garbage-code":
        data = code.read_bytes()
        code.write_bytes(data[: len(data) // 2] + b"\x00garbage" * 10)
    elif damage == "flip-code":  # one byte of a constant: still a valid code object, wrong text
        data = code.read_bytes()
        assert b"<|im_start|>" in data
        code.write_bytes(data.replace(b"<|im_start|>", b"<|im_stArt|>", 1))
    elif damage == "code-of-other":  # a whole code file of another template under this name
        tmpl2py.compile_template("{{ 1 }}", cache=ModuleCache(store.directory / "o"), name="o")
        other = next((store.directory / "o").glob("*.code"))
        code.write_bytes(other.read_bytes())
    elif damage == "raises":  # a consistent entry whose module fails to run
        body = "raise RuntimeError('boom')\n"
        key = text.name[:-3]
        store.put(key, body, inputs=store.inputs_of(key))
        assert store.get_code(key, store.inputs_of(key)) is not None  # a hit, that fails to run
    again = tmpl2py.compile_template(QWEN, cache=store, name="q")
    assert again.python_source == good.python_source
    assert again.render_conversation(HI) == good.render_conversation(HI)
    assert ModuleCache(store.directory).get(text.name[:-3])[0] == good.python_source  # rewritten


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_modes_follow_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        store = ModuleCache(tmp_path / f"c{umask:o}")
        tmpl2py.compile_template("{{ x }}", cache=store, name="m")
    finally:
        os.umask(old)
    for p in entry_files(store):
        assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~umask, p
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o777 & ~umask
    assert not [p for p in store.directory.iterdir() if p.name.startswith(".")]  # no temp files


def test_the_default_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPL2PY_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("TMPL2PY_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "tmpl2py"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # ignored, as the XDG spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "tmpl2py"
    monkeypatch.setenv("TMPL2PY_CACHE_DIR", str(tmp_path / "env"))
    tmpl2py.compile_template("{{ y }}", cache=True)
    assert len(entry_files(ModuleCache(tmp_path / "env"))) == 2


def test_an_unwritable_folder_warns_and_still_compiles(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    store = ModuleCache(blocker / "cache")
    with pytest.warns(CacheWarning, match="cannot write the compile cache"):
        t = tmpl2py.compile_template("{{ z }}", cache=store)
    assert t.render({"z": 1}) == "1"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tmpl2py.compile_template("{{ z }}!", cache=store)  # warned once per cache


def test_bad_cache_argument() -> None:
    with pytest.raises(TypeError, match="cache must be True"):
        tmpl2py.compile_template("x", cache=3)


_CHILD = textwrap.dedent(
    """
    import sys, json
    before = set(sys.modules)
    import tmpl2py
    t = tmpl2py.load(sys.argv[1])
    out = t.apply_chat_template([{"role": "user", "content": "hi"}])
    # the pipeline (Lark, the IR, the passes) is imported only when a module must be made
    pipeline = sorted(m for m in sys.modules if m.split(".")[:3] in (
        ["tmpl2py", "compiler", "build"], ["tmpl2py", "compiler", "ir"], ["lark"]))
    # nor is what only a compile, an error or another kind of file needs
    unneeded = {"_sha256", "_sha2", "hashlib", "tmpl2py.compiler.bounds",
        "tmpl2py.compiler.positions", "tmpl2py.formats", "tmpl2py.combine",
        "tmpl2py.runtime.jinja.loading", "tmpl2py.runtime.jinja.blocks"}
    extra = sorted(m for m in sys.modules if m in unneeded and m not in before)
    print(json.dumps({"compiled": int(bool(pipeline)), "pipeline": pipeline, "extra": extra,
        "out": out}))
    """
)


def _child(path: Path, cache_dir: Path) -> dict:
    import json

    env = {**os.environ, "TMPL2PY_CACHE_DIR": str(cache_dir)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_from_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "qwen.jinja"
    path.write_text(QWEN, encoding="utf-8")
    first = _child(path, tmp_path / "cache")
    second = _child(path, tmp_path / "cache")
    assert (first["compiled"], second["compiled"]) == (1, 0)
    assert second["extra"] == []
    assert first["out"] == second["out"] == tmpl2py.compile_template(QWEN).render_conversation(HI)


def test_many_writers_at_once(store: ModuleCache) -> None:
    """Threads racing on one key all get a working template and leave one whole entry."""
    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(lambda _: tmpl2py.compile_template(QWEN, cache=store, name="q"), range(16)))
    assert len({t.python_source for t in made}) == 1
    assert len(entry_files(store)) == 2
    assert not [p for p in store.directory.iterdir() if p.name.startswith(".")]


def test_many_processes_start_at_once(tmp_path: Path) -> None:
    """Processes racing on an empty cache: every one renders, one whole entry is left."""
    path = tmp_path / "small.jinja"
    path.write_text("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}", encoding="utf-8")
    env = {**os.environ, "TMPL2PY_CACHE_DIR": str(tmp_path / "cache")}
    procs = [
        subprocess.Popen([sys.executable, "-c", _CHILD, str(path)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]  # fmt: skip
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    assert {o.strip().splitlines()[-1].split('"out": ')[1] for o, _ in outs} == {'"<user>hi"}'}
    store = ModuleCache(tmp_path / "cache")
    assert len(entry_files(store)) == 2
    assert not [p for p in store.directory.iterdir() if p.name.startswith(".")]


def test_the_source_hash_is_sha256() -> None:
    """names.sha256_hex (the standard library's SHA-256 without OpenSSL, where Python has it
    apart) is hashlib's SHA-256 of the UTF-8 text, lone surrogates kept."""
    import hashlib

    from tmpl2py.compiler.names import sha256_hex

    for text in ("", "{{ x }}", "\ud800 é \U0001f600" * 100):
        want = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        assert sha256_hex(text) == sha256_hex(text.encode("utf-8", "surrogatepass")) == want
