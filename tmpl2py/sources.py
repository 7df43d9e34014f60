"""Where templates come from: the files users have, read into :class:`TemplateSource` objects.
Long because each source format (template files, tokenizer_config.json, GGUF, Modelfile) has
its own reader, and the combined module is built from what they read.

Owns reading templates out of the files models ship (never compiling them):

==========================  ===========================================================
file                        what is read
==========================  ===========================================================
``*.jinja`` ``*.j2``        the whole file (Jinja); ``chat_template.jinja`` included
``*.gotmpl`` ``*.tmpl``     the whole file (Go text/template, as Ollama stores it)
``tokenizer_config.json``   ``chat_template``: a string, or a list of ``{name, template}``
                            (every named template: default, tool_use, rag, ...); the
                            special tokens (``bos_token``, ...) transformers passes too
``chat_template.json``      a processor's ``{"chat_template": ...}`` (same shapes)
``*.gguf``                  ``tokenizer.chat_template`` and ``tokenizer.chat_template.<name>``
                            metadata (optional ``gguf`` package; tensors are never read)
``Modelfile``               Ollama's ``TEMPLATE`` (last one wins) and ``PARAMETER stop``
==========================  ===========================================================

The kind is told from the file name and extension, then from the content (GGUF magic
``b"GGUF"``, a JSON object, Modelfile commands, Jinja ``{%`` vs Go ``{{ .``). Every
failure is a :class:`SourceError` naming the file.

:func:`build_module` turns the templates of one source into one Python module: the
ordinary module for a single template; for several named templates, one module with a
``render_<name>`` function each, ``TEMPLATES = {name: function}`` and
``render = render_default`` (see :func:`combine_modules`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    import ast

#: Template file extensions and their dialect.
EXTENSIONS = {".jinja": "jinja", ".j2": "jinja", ".jinja2": "jinja", ".gotmpl": "go", ".tmpl": "go"}

#: transformers' ``SPECIAL_TOKENS_ATTRIBUTES``: passed to every chat template render.
SPECIAL_TOKENS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)

#: GGUF token-id keys (llama.cpp spelling, ``seperator`` included) -> the template variable.
_GGUF_TOKEN_IDS = {
    "tokenizer.ggml.bos_token_id": "bos_token",
    "tokenizer.ggml.eos_token_id": "eos_token",
    "tokenizer.ggml.unknown_token_id": "unk_token",
    "tokenizer.ggml.seperator_token_id": "sep_token",
    "tokenizer.ggml.padding_token_id": "pad_token",
    "tokenizer.ggml.cls_token_id": "cls_token",
    "tokenizer.ggml.mask_token_id": "mask_token",
}

GGUF_MAGIC = b"GGUF"
_JSON_TEMPLATE_FILES = ("tokenizer_config.json", "chat_template.json")
_MODELFILE_COMMANDS = (
    "from", "license", "template", "system", "adapter", "draft", "renderer", "parser",
    "parameter", "message", "requires",
)  # fmt: skip


class SourceError(Exception):
    """A template source that cannot be read. ``str(err)`` reads ``path: message``.

    ``code`` is one of ``missing`` (no such file), ``no-template`` (the file holds no
    template), ``malformed`` (bad JSON / GGUF / Modelfile / encoding), ``unknown-kind``
    (cannot tell what the file is) and ``needs-gguf`` (the optional package is absent).
    """

    def __init__(self, path: Any, message: str, code: str = "malformed") -> None:
        self.path = str(path)
        self.message = message
        self.code = code
        super().__init__(f"{self.path}: {message}")


class TemplateSource:
    """One template read from a file.

    ``name`` is ``"default"`` or the template's own name (``tool_use``, ``rag``, ...);
    ``origin`` names the file and the key it came from (``path:chat_template[tool_use]``);
    ``stop`` holds a Modelfile's ``PARAMETER stop`` values; ``special_tokens`` the values
    transformers (or llama.cpp, for GGUF) passes to the template as variables; ``system``
    and ``messages`` a Modelfile's defaults (its last ``SYSTEM``, its ``MESSAGE`` lines as
    (role, content)). A plain record class rather than a dataclass: ``tmpl2py.load`` from the
    cache must not pay for importing ``dataclasses`` (~10 ms, with ``inspect``).
    """

    FIELDS = (
        "name", "text", "dialect", "origin", "stop", "path", "kind", "special_tokens",
        "system", "messages",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        text: str,
        dialect: str,
        origin: str,
        stop: Optional[list] = None,
        path: str = "",
        kind: str = "template",
        special_tokens: Optional[dict] = None,
        system: str = "",
        messages: Optional[list] = None,
    ) -> None:
        self.name = name
        self.text = text
        self.dialect = dialect
        self.origin = origin
        self.stop = [] if stop is None else stop
        self.path = path
        self.kind = kind
        self.special_tokens = {} if special_tokens is None else special_tokens
        self.system = system
        self.messages = [] if messages is None else messages

    def replace(self, **changes: Any) -> "TemplateSource":
        """A copy with ``changes`` applied (as ``dataclasses.replace``)."""
        return TemplateSource(**{**{f: getattr(self, f) for f in self.FIELDS}, **changes})

    def __eq__(self, other: object) -> bool:
        if type(other) is not TemplateSource:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS)
        return f"TemplateSource({fields})"

    def modelfile_defaults(self) -> Optional[dict]:
        """The Modelfile's ``SYSTEM`` / ``MESSAGE`` defaults as the ollama profile's
        ``modelfile=`` option takes them (None when the source is not a Modelfile)."""
        if self.kind != "modelfile":
            return None
        return {"system": self.system, "messages": [dict(m) for m in self.messages]}


# ----------------------------------------------------------------------------- detection


def is_modelfile_name(path: Path) -> bool:
    name = path.name.lower()
    return name == "modelfile" or name.endswith(".modelfile")


def is_template_file(path: Path) -> bool:
    """Whether a folder walk picks ``path`` up (by name and extension only)."""
    name = path.name.lower()
    return (
        path.suffix.lower() in EXTENSIONS
        or name in _JSON_TEMPLATE_FILES
        or path.suffix.lower() == ".gguf"
        or is_modelfile_name(path)
    )


def discover(directory: Any) -> list[Path]:
    """Every template file under ``directory`` (recursively, sorted; hidden folders skipped)."""
    root = Path(directory)
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            path = Path(folder) / name
            if not name.startswith(".") and is_template_file(path):
                found.append(path)
    return found


def detect_kind(path: Path, head: bytes) -> str:
    """``gguf``, ``json``, ``modelfile`` or ``template``, from the name, then the content."""
    if head.startswith(GGUF_MAGIC) or path.suffix.lower() == ".gguf":
        return "gguf"
    if path.suffix.lower() in EXTENSIONS:
        return "template"
    if path.suffix.lower() == ".json":
        return "json"
    if is_modelfile_name(path):
        return "modelfile"
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    if text.lstrip().startswith("{") and _looks_like_json_object(path):
        return "json"
    if _looks_like_modelfile(text):
        return "modelfile"
    return "template"


def _looks_like_json_object(path: Path) -> bool:
    import json  # JSON files only: a template file is read without it

    try:
        return isinstance(json.loads(path.read_text(encoding="utf-8")), dict)
    except (ValueError, OSError):
        return False


def _looks_like_modelfile(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        word = stripped.split(None, 1)[0].lower()
        return (
            word in _MODELFILE_COMMANDS
            and len(stripped) > len(word)
            and stripped[len(word)] in " \t"
        )
    return False


_GO_ACTION = re.compile(r"\{\{-?\s*(?:\.|\$|(?:if|range|with|define|template|block|end)\b)")


def sniff_dialect(text: str) -> Optional[str]:
    """Jinja if the text has ``{%``/``{#`` tags, Go if it has ``{{ .X }}``/``{{ if }}`` actions."""
    if "{%" in text or "{#" in text:
        return "jinja"
    if _GO_ACTION.search(text):
        return "go"
    return None


# ----------------------------------------------------------------------------- loading


def load(path: Any, dialect: Optional[str] = None) -> list[TemplateSource]:
    """Every template in the file at ``path`` (see the module docstring for the kinds).

    ``dialect`` overrides the dialect of a bare template file (and of a file whose dialect
    cannot be told from its name or content). Raises :class:`SourceError`.
    """
    p = Path(path)
    if not p.exists():
        raise SourceError(p, "no such file", "missing")
    if p.is_dir():
        raise SourceError(
            p, "is a folder (compile accepts folders: every template file inside)", "unknown-kind"
        )
    try:
        with open(p, "rb") as f:
            head = f.read(512)
    except OSError as e:
        raise SourceError(p, f"cannot read: {e.strerror or e}", "missing") from None
    kind = detect_kind(p, head)
    if kind == "gguf":
        return _load_gguf(p)
    if kind == "json":
        return _load_json(p)
    if kind == "modelfile":
        return [_load_modelfile(p)]
    text = _read_text(p)
    chosen = dialect or EXTENSIONS.get(p.suffix.lower()) or sniff_dialect(text)
    if chosen is None:
        raise SourceError(
            p,
            "cannot tell the dialect from the extension or the content; pass --dialect jinja|go",
            "unknown-kind",
        )
    return [TemplateSource("default", text, chosen, str(p), path=str(p), kind="template")]


def _read_text(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise SourceError(path, f"not UTF-8 text (byte {e.start}: {e.reason})") from None
    except OSError as e:
        raise SourceError(path, f"cannot read: {e.strerror or e}", "missing") from None


def read_json_object(path: Any) -> dict:
    """A JSON file holding an object (``tokenizer_config.json`` ...); raises :class:`SourceError`."""
    import json

    path = Path(path)
    text = _read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SourceError(
            path, f"malformed JSON at line {e.lineno} column {e.colno}: {e.msg}"
        ) from None
    if not isinstance(data, dict):
        raise SourceError(path, f"expected a JSON object, found {type(data).__name__}")
    return data


def _load_json(path: Path) -> list[TemplateSource]:
    data = read_json_object(path)
    kind = "processor" if path.name.lower() == "chat_template.json" else "tokenizer_config"
    if data.get("chat_template") is None:
        sibling = path.parent / "chat_template.jinja"
        hint = f" (the template is in {sibling}: read that file)" if sibling.exists() else ""
        raise SourceError(path, f"no 'chat_template' key{hint}", "no-template")
    special = _special_tokens(data)
    named = _named_templates(path, data["chat_template"], "chat_template")
    return [
        TemplateSource(
            name,
            tmpl,
            "jinja",
            f"{path}:{key}",
            path=str(path),
            kind=kind,
            special_tokens=dict(special),
        )
        for name, tmpl, key in named
    ]


def _named_templates(path: Path, value: Any, key: str) -> list[tuple[str, str, str]]:
    """(name, template, key) for a ``chat_template`` value: a string, a list of
    ``{name, template}`` (later duplicates win, as in transformers' dict) or a mapping."""
    if isinstance(value, str):
        return [("default", value, key)]
    items: list[tuple[Any, Any]]
    if isinstance(value, list):
        items = []
        for i, entry in enumerate(value):
            if not isinstance(entry, dict) or "name" not in entry or "template" not in entry:
                raise SourceError(path, f'\'{key}[{i}]\' is not a {{"name", "template"}} object')
            items.append((entry["name"], entry["template"]))
    elif isinstance(value, dict):
        items = list(value.items())
    else:
        raise SourceError(
            path,
            f"'{key}' must be a string or a list of named templates, not {type(value).__name__}",
        )
    out: dict[str, str] = {}
    for name, tmpl in items:
        if not isinstance(name, str) or not name or not isinstance(tmpl, str):
            raise SourceError(path, f"'{key}' has an entry whose name or template is not a string")
        out[name] = tmpl
    if not out:
        raise SourceError(path, f"'{key}' is an empty list", "no-template")
    return [(name, tmpl, f"{key}[{name}]") for name, tmpl in out.items()]


def _special_tokens(config: dict) -> dict[str, str]:
    """The special tokens transformers passes to templates (strings or AddedToken objects)."""
    out = {}
    for key in SPECIAL_TOKENS:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            out[key] = value
    return out


# ----------------------------------------------------------------------------- GGUF


def _load_gguf(path: Path) -> list[TemplateSource]:
    try:
        import gguf  # an optional extra: pip install 'tmpl2py[gguf]'
    except ImportError:
        raise SourceError(
            path,
            "reading GGUF files needs the optional 'gguf' package: pip install 'tmpl2py[gguf]'",
            "needs-gguf",
        ) from None
    try:
        # GGUFReader memory-maps the file and parses the header and metadata; tensor data
        # is only mapped, never read.
        reader = gguf.GGUFReader(str(path), "r")
        fields = reader.fields
        templates: list[tuple[str, str, str]] = []
        default = _gguf_string(fields.get("tokenizer.chat_template"))
        if default is not None:
            templates.append(("default", default, "tokenizer.chat_template"))
        prefix = "tokenizer.chat_template."
        for key in fields:
            if key.startswith(prefix) and key != "tokenizer.chat_templates":
                value = _gguf_string(fields[key])
                if value is not None:
                    templates.append((key[len(prefix) :], value, key))
        special = _gguf_special_tokens(fields)
    except SourceError:
        raise
    except Exception as e:  # noqa: BLE001 - the reader's ValueError / IndexError / struct errors
        raise SourceError(path, f"malformed GGUF file: {type(e).__name__}: {e}") from None
    if not templates:
        raise SourceError(path, "no 'tokenizer.chat_template' metadata", "no-template")
    return [
        TemplateSource(
            name,
            text,
            "jinja",
            f"{path}:{key}",
            path=str(path),
            kind="gguf",
            special_tokens=dict(special),
        )
        for name, text, key in templates
    ]


def _gguf_string(fld: Any) -> Optional[str]:
    """A string KV field's value (read from its parts: works across gguf versions)."""
    if fld is None or not fld.data:
        return None
    import gguf

    if fld.types[:1] != [gguf.GGUFValueType.STRING]:
        return None
    return bytes(fld.parts[fld.data[0]]).decode("utf-8", "replace")


def _gguf_special_tokens(fields: Any) -> dict[str, str]:
    tokens = fields.get("tokenizer.ggml.tokens")
    if tokens is None:
        return {}
    out = {}
    for key, var in _GGUF_TOKEN_IDS.items():
        fld = fields.get(key)
        if fld is None or not fld.data:
            continue
        index = int(fld.parts[fld.data[0]][0])
        if 0 <= index < len(tokens.data):
            out[var] = bytes(tokens.parts[tokens.data[index]]).decode("utf-8", "replace")
    return out


# ----------------------------------------------------------------------------- Modelfile


def parse_modelfile(text: str, path: Any = "<Modelfile>") -> list[tuple[str, str]]:
    """Ollama's ``parser.ParseFile`` state machine: a list of (command, argument).

    Commands are lower-cased (``from`` is reported as ``model``, a ``PARAMETER`` as its
    name). Values may be bare (to the end of the line), ``"quoted"`` or ``\"\"\"multi-line\"\"\"``;
    non-printable characters outside a value's line breaks are dropped, as Ollama does.
    A ``FROM`` line is not required here (templates are read from fragments too).
    """
    parser = _ModelfileParser(path)
    for ch in text.lstrip("\ufeff"):
        parser.feed(ch)
    return parser.finish()


class _ModelfileParser:
    def __init__(self, path: Any) -> None:
        self.path = path
        self.commands: list[tuple[str, str]] = []
        self.state, self.line, self.buf, self.name, self.role = "nil", 1, [], "", ""

    def feed(self, ch: str) -> None:
        if ch in "\r\n":
            self.line += 1
        nxt, out = _modelfile_step(ch, self.state, self.path, self.line)
        if nxt != self.state:
            nxt = self._leave(self.state, "".join(self.buf), ch, nxt)
            if nxt is None:  # a value goes on (inside quotes, or a space)
                self.buf.append(ch)
                return
            self.buf = []
            self.state = nxt
        if out is not None and out.isprintable():
            self.buf.append(out)

    def _leave(self, state: str, value: str, ch: str, nxt: str) -> Optional[str]:
        """Finish the buffer of ``state``; the next state (None: stay in the value)."""
        if state == "name":
            word = value.lower()
            if word not in _MODELFILE_COMMANDS:
                raise SourceError(
                    self.path, f"line {self.line}: unknown Modelfile command {value!r}"
                )
            if word in ("parameter", "message"):
                nxt = word
            self.name = "model" if word == "from" else word
        elif state == "parameter":
            self.name = value
        elif state == "message":
            if value not in ("system", "user", "assistant"):
                raise SourceError(
                    self.path,
                    f'line {self.line}: message role must be one of "system", "user", or "assistant"',
                )
            self.role = value
        elif state == "value":
            unquoted = _unquote(value.strip())
            if unquoted is None or ch in " \t":
                return None
            self._command(unquoted)
        return nxt

    def _command(self, value: str) -> None:
        self.commands.append((self.name, f"{self.role}: {value}" if self.role else value))
        self.role = ""

    def finish(self) -> list[tuple[str, str]]:
        if self.state == "value":
            unquoted = _unquote("".join(self.buf).strip())
            if unquoted is None:
                raise SourceError(self.path, "unexpected end of file inside a quoted value")
            self._command(unquoted)
        elif self.state not in ("nil", "comment"):
            raise SourceError(self.path, "unexpected end of file")
        return self.commands


def _modelfile_step(ch: str, state: str, path: Any, line: int) -> tuple[str, Optional[str]]:
    space, newline = ch in " \t", ch in "\r\n"
    if state == "nil":
        if ch == "#":
            return "comment", None
        if space or newline:
            return "nil", None
        return "name", ch
    if state == "name":
        if ch.isascii() and ch.isalpha():
            return "name", ch
        if space:
            return "value", None
        raise SourceError(path, f"line {line}: a Modelfile command must be followed by a space")
    if state == "value":
        return ("nil", ch) if (newline or space) else ("value", ch)
    if state in ("parameter", "message"):
        if ch.isascii() and (
            ch.isalpha() or (state == "parameter" and (ch.isdigit() or ch == "_"))
        ):
            return state, ch
        if space:
            return "value", None
        raise SourceError(
            path, f"line {line}: unexpected character {ch!r} in a {state.upper()} line"
        )
    return ("nil", None) if newline else ("comment", None)


def _unquote(s: str) -> Optional[str]:
    if s.startswith('"""'):
        return s[3:-3] if len(s) >= 6 and s.endswith('"""') else None
    if s.startswith('"'):
        return s[1:-1] if len(s) >= 2 and s.endswith('"') else None
    return s


def _load_modelfile(path: Path) -> TemplateSource:
    commands = parse_modelfile(_read_text(path), path)
    templates = [arg for cmd, arg in commands if cmd == "template"]
    if not templates:
        raise SourceError(
            path, "no TEMPLATE command (the template then comes from the FROM model)", "no-template"
        )
    stop = [arg for cmd, arg in commands if cmd == "stop"]
    systems = [arg for cmd, arg in commands if cmd == "system"]
    messages = []
    for cmd, arg in commands:
        if cmd == "message":  # "role: content", as the parser joins them (Ollama cuts there)
            role, _, content = arg.partition(": ")
            messages.append({"role": role, "content": content})
    return TemplateSource(
        "default",
        templates[-1],
        "go",
        f"{path}:TEMPLATE",
        stop=stop,
        path=str(path),
        kind="modelfile",
        system=systems[-1] if systems else "",
        messages=messages,
    )


# ----------------------------------------------------------------------------- naming


_GENERIC_STEMS = {"tokenizer_config", "chat_template", "modelfile", "template", "processor_config"}


def _ident(text: str) -> str:
    name = "".join(c if (c.isascii() and c.isalnum()) else "_" for c in text)
    if not name or name[0].isdigit():
        name = "t_" + name
    return name


_KNOWN_SUFFIXES = (*EXTENSIONS, ".json", ".gguf", ".modelfile")


def module_name(path: Any) -> str:
    """The module a template file compiles to: its whole stem made an identifier
    (``seed001_qwen.jinja`` -> ``seed001_qwen``, ``granite-3.0-instruct.jinja`` ->
    ``granite_3_0_instruct``, ``phi3.5.jinja`` -> ``phi3_5``); only a known extension is cut."""
    name = Path(path).name
    suffix = Path(name).suffix.lower()
    if suffix in _KNOWN_SUFFIXES and len(name) > len(suffix):
        name = name[: -len(suffix)]
    return _ident(name)


def output_names(paths: Sequence[Any]) -> dict[str, str]:
    """A distinct module name for each path: the stem, or for the generic names models
    use (``tokenizer_config.json``, ``chat_template.jinja``, ``Modelfile``) the folder's
    name. Names that still collide become ``<folder>_<stem>`` (generic) or
    ``<stem>_<folder>``, then get a counter."""
    first: dict[str, tuple[str, str]] = {}
    for p in paths:
        stem = module_name(p)
        folder = _ident(Path(p).resolve().parent.name or "root")
        if stem.lower() in _GENERIC_STEMS:
            first[str(p)] = (folder, f"{folder}_{stem}")
        else:
            first[str(p)] = (stem, f"{stem}_{folder}")
    counts: dict[str, int] = {}
    for plain, _ in first.values():
        counts[plain] = counts.get(plain, 0) + 1
    out: dict[str, str] = {}
    taken: set[str] = set()
    for p, (plain, qualified) in first.items():
        name = plain if counts[plain] == 1 else qualified
        base, n = name, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        out[p] = name
    return out


def display_name(source: TemplateSource) -> str:
    """The name recorded in the generated header: the path (relative to the working folder
    when possible), plus the key for templates read out of JSON, GGUF or a Modelfile."""
    p = Path(source.path or source.origin).resolve()
    try:
        shown = p.relative_to(Path.cwd()).as_posix()
    except ValueError:
        shown = p.name
    if source.kind == "template":
        return shown
    key = (
        source.origin[len(source.path) + 1 :]
        if source.origin.startswith(source.path + ":")
        else source.origin
    )
    return f"{shown}:{key}"


# ----------------------------------------------------------------------------- modules


def build_module(sources: Sequence[TemplateSource], profile: Optional[str] = None) -> str:
    """The Python module for the templates of one file (raises ``CompileError``)."""
    from .compiler.build import generate

    texts = [generate(s.text, s.dialect, profile, name=display_name(s))[0] for s in sources]
    if len(texts) == 1:
        return texts[0]
    label = display_name(sources[0])
    key = sources[0].origin[len(sources[0].path) + 1 :]
    if label.endswith(":" + key):
        label = label[: -len(key) - 1]
    return combine_modules([s.name for s in sources], texts, label)


def function_names(names: Iterable[str]) -> list[str]:
    """``render_<name>`` for each template name, made identifiers and distinct."""
    out: list[str] = []
    for name in names:
        ident = "render_" + "".join(c if (c.isascii() and c.isalnum()) else "_" for c in name)
        base, n = ident, 2
        while ident in out:
            ident, n = f"{base}_{n}", n + 1
        out.append(ident)
    return out


def combine_modules(names: Sequence[str], texts: Sequence[str], label: str = "<templates>") -> str:
    """One module from several generated modules (one per named template).

    Each generated module is a header, imports of runtime names, metadata constants and
    one ``render`` function that reads only its locals and the imported names. The
    combined module imports the union of the names, renames each ``render`` to
    ``render_<name>``, keeps each template's metadata in ``METADATA[name]`` (the default
    template's also as the usual top-level constants) and adds ``TEMPLATES``, ``render``
    and ``get_template`` (transformers' choice among named templates). An imported name
    that two templates bind to different runtime objects is renamed in the later one,
    exactly where its AST reads it.
    """
    import ast  # the multi-template module is built rarely: not at import

    funcs = function_names(names)
    imports: dict[str, tuple[str, str]] = {}
    bodies: list[str] = []
    metadata: list[dict[str, Any]] = []
    taken: set[str] = set()
    for k, (fname, text) in enumerate(zip(funcs, texts)):
        meta, func, lines, renames, statics = _parse_generated(text, imports)
        for stmt in statics:  # names the module computes at import (start values)
            for n in ast.walk(stmt.targets[0]):
                if isinstance(n, ast.Name):
                    if n.id in taken:
                        renames[n.id] = f"{n.id}_{k}"
                    taken.add(renames.get(n.id, n.id))
        body = _rename_reads(lines[func.lineno - 1 : func.end_lineno], func, renames)
        body[0] = body[0].replace("def render(", f"def {fname}(", 1)
        for stmt in statics:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and n.id in renames:
                    n.id = renames[n.id]
            body.insert(0, ast.unparse(stmt) + "\n\n")
        bodies.append("\n".join(body))
        metadata.append(meta)
    return _assemble(label, names, funcs, imports, bodies, metadata)


def _parse_generated(
    text: str, imports: dict[str, tuple[str, str]]
) -> tuple[dict, ast.FunctionDef, list[str], dict, list[ast.Assign]]:
    """A generated module's metadata, render function, lines and the assignments it runs at
    import (calls of the runtime); its imports are merged into ``imports`` (returning the
    renames that keep them apart)."""
    import ast  # the multi-template module is built rarely: not at import

    tree = ast.parse(text)
    meta: dict[str, Any] = {}
    renames: dict[str, str] = {}
    statics: list[ast.Assign] = []
    func: Optional[ast.FunctionDef] = None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                local = alias.asname or alias.name
                target = (node.module or "", alias.name)
                if local in imports and not _same_object(imports[local], target):
                    new = f"{local}_{len(imports)}"
                    while new in imports:
                        new += "_"
                    renames[local] = new
                    local = new
                imports.setdefault(local, target)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            statics.append(node)
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            meta[node.targets[0].id] = ast.literal_eval(node.value)
        elif isinstance(node, ast.FunctionDef) and node.name == "render":
            func = node
    if func is None:
        raise ValueError("a generated module without a render function")
    return meta, func, text.splitlines(), renames, statics


def _same_object(a: tuple[str, str], b: tuple[str, str]) -> bool:
    if a == b:
        return True
    import importlib

    try:
        return getattr(importlib.import_module(a[0]), a[1]) is getattr(
            importlib.import_module(b[0]), b[1]
        )
    except (ImportError, AttributeError):
        return False


def _rename_reads(lines: list[str], func: ast.FunctionDef, renames: dict[str, str]) -> list[str]:
    """Rename global reads inside ``func`` at their exact AST positions (no text search)."""
    import ast  # the multi-template module is built rarely: not at import

    if not renames:
        return list(lines)
    first = func.lineno
    hits = sorted(
        (
            (n.lineno, n.col_offset, n.id)
            for n in ast.walk(func)
            if isinstance(n, ast.Name) and n.id in renames
        ),
        reverse=True,
    )
    out = [line.encode("utf-8") for line in lines]
    for lineno, col, ident in hits:  # col_offset counts UTF-8 bytes
        row = out[lineno - first]
        assert row[col : col + len(ident)] == ident.encode()
        out[lineno - first] = row[:col] + renames[ident].encode() + row[col + len(ident) :]
    return [row.decode("utf-8") for row in out]


_GET_TEMPLATE = '''
def get_template(name=None, tools=None):
    """transformers' choice: the named template; else ``tool_use`` when tools are given
    and it exists; else ``default``."""
    if name is not None:
        return TEMPLATES[name]
    if tools is not None and "tool_use" in TEMPLATES:
        return TEMPLATES["tool_use"]
    if "default" in TEMPLATES:
        return TEMPLATES["default"]
    raise ValueError(
        "This model has multiple chat templates with no default specified! Available template names are "
        + repr(sorted(TEMPLATES))
        + "."
    )
'''


def _assemble(label, names, funcs, imports, bodies, metadata) -> str:  # type: ignore[no-untyped-def]
    import ast  # the multi-template module is built rarely: not at import

    from .compiler import __version__
    from .compiler.build import format_module
    from .compiler.names import header_safe

    default = names.index("default") if "default" in names else 0
    first = metadata[default]
    head = [
        f"# Generated by tmpl2py {__version__}. Do not edit: recompile instead.",
        f"# source: {header_safe(label)} ({len(names)} templates)",
    ]
    for name, meta in zip(names, metadata):
        head.append(f"# sha256: {meta.get('SOURCE_SHA256', '')}  {header_safe(name)}")
    head.append(f"# dialect: {first.get('DIALECT', '')}  profile: {first.get('PROFILE', '')}")
    out = head + [
        "",
        '"""Compiled chat templates: ``render(context)`` (the default), ``TEMPLATES[name](context)``."""',
        "",
    ]
    by_module: dict[str, list[str]] = {}
    for local, (module, fn) in imports.items():
        by_module.setdefault(module, []).append(fn if fn == local else f"{fn} as {local}")
    for module in sorted(by_module):
        out.append(f"from {module} import {', '.join(sorted(by_module[module]))}")
    out += ["", f"TEMPLATE_NAMES = {ast.unparse(ast.Constant(tuple(names)))}"]
    out.append(f"DEFAULT_TEMPLATE = {names[default]!r}")
    for key, value in first.items():
        out.append(f"{key} = {_literal(value)}")
    out.append(
        "METADATA = {" + ", ".join(f"{n!r}: {_literal(m)}" for n, m in zip(names, metadata)) + "}"
    )
    for body in bodies:
        out += ["", "", body]
    out += ["", "", "TEMPLATES = {" + ", ".join(f"{n!r}: {f}" for n, f in zip(names, funcs)) + "}"]
    out.append(f"render = {funcs[default]}")
    out.append(_GET_TEMPLATE)
    text = format_module("\n".join(out) + "\n")
    compile(text, "<combined>", "exec")
    return text


def _literal(value: Any) -> str:
    import ast  # the multi-template module is built rarely: not at import

    from .compiler.emit import const_node

    return ast.unparse(const_node(value))
