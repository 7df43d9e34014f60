"""Where templates come from: the files users have, read into :class:`TemplateSource` objects.

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

The GGUF and Modelfile readers live in ``formats`` (imported for those files only);
``combine`` turns the templates of one source into one Python module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

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

GGUF_MAGIC = b"GGUF"
_JSON_TEMPLATE_FILES = ("tokenizer_config.json", "chat_template.json")


class SourceError(Exception):
    """A template source that cannot be read. ``str(err)`` reads ``path: message``.

    ``code`` is one of ``missing`` (no such file), ``no-template`` (the file holds no
    template), ``malformed`` (bad JSON / GGUF / Modelfile / encoding) and ``unknown-kind``
    (cannot tell what the file is).
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
    except (ValueError, OSError, RecursionError):  # (JSON nested past the decoder's depth)
        return False


def _looks_like_modelfile(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        from .formats import MODELFILE_COMMANDS  # a file of no known name or extension

        word = stripped.split(None, 1)[0].lower()
        return (
            word in MODELFILE_COMMANDS
            and len(stripped) > len(word)
            and stripped[len(word)] in " \t"
        )
    return False


_GO_ACTION = r"\{\{-?\s*(?:\.|\$|(?:if|range|with|define|template|block|end)\b)"


def sniff_dialect(text: str) -> Optional[str]:
    """Jinja if the text has ``{%``/``{#`` tags, Go if it has ``{{ .X }}``/``{{ if }}`` actions."""
    if "{%" in text or "{#" in text:
        return "jinja"
    if re.search(_GO_ACTION, text):  # compiled on first use (re caches it): not at import
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
    text = read_text(p)
    chosen = dialect or EXTENSIONS.get(p.suffix.lower()) or sniff_dialect(text)
    if chosen is None:
        raise SourceError(
            p,
            "cannot tell the dialect from the extension or the content; pass --dialect jinja|go",
            "unknown-kind",
        )
    return [TemplateSource("default", text, chosen, str(p), path=str(p), kind="template")]


def read_text(path: Path) -> str:
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
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SourceError(
            path, f"malformed JSON at line {e.lineno} column {e.colno}: {e.msg}"
        ) from None
    except RecursionError:  # arrays or objects nested past the decoder's depth (a hostile file)
        raise SourceError(path, "malformed JSON: nested too deeply") from None
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


# ----------------------------------------------------------------------------- GGUF, Modelfile


def _load_gguf(path: Path) -> list[TemplateSource]:
    from . import formats  # GGUF files only

    try:
        templates, special = formats.read_gguf(str(path))
    except formats.FormatError as e:
        raise SourceError(path, str(e), e.code) from None
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


def _load_modelfile(path: Path) -> TemplateSource:
    from . import formats  # Modelfiles only

    try:
        found = formats.modelfile_template(read_text(path))
    except formats.FormatError as e:
        raise SourceError(path, str(e), e.code) from None
    return TemplateSource(
        "default",
        found["template"],
        "go",
        f"{path}:TEMPLATE",
        stop=found["stop"],
        path=str(path),
        kind="modelfile",
        system=found["system"],
        messages=found["messages"],
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
