"""``tmpl2py.load``: what users hold (a model folder, a file) in, a ready chat-template object out.

:func:`load` reads the templates and special tokens the way ``transformers`` 5 reads a saved
tokenizer (``AutoTokenizer.from_pretrained(folder)``), compiles them (through the compile
cache of ``tmpl2py/cache.py`` unless ``cache=False``) and returns a :class:`ChatTemplate` whose
``apply_chat_template(...)`` returns what ``tokenizer.apply_chat_template(..., tokenize=False)``
returns for that tokenizer, errors included.

=============================  ==============================================================
path                           templates and special tokens
=============================  ==============================================================
a model folder                 ``chat_template.jinja`` (``default``) and
                               ``additional_chat_templates/<name>.jinja``, which take priority
                               over ``tokenizer_config.json``'s ``chat_template`` (a string or
                               a list of ``{name, template}``), then ``chat_template.json``, then
                               a lone ``Modelfile`` or ``*.gguf``; special tokens from
                               ``tokenizer_config.json`` (and ``special_tokens_map.json`` when
                               the config has no ``added_tokens_decoder``), as transformers does
any file ``tmpl2py.sources``   a template file, ``tokenizer_config.json``, ``chat_template.json``,
reads                          a GGUF file (BOS/EOS ids mapped through ``tokenizer.ggml.tokens``),
                               an Ollama Modelfile or a bare Go template
=============================  ==============================================================

Reading is :mod:`tmpl2py.sources`' job (every failure a ``SourceError`` naming the file); this
module adds the folder layout, transformers' special-token rules and its ``apply_chat_template``
argument handling on top of ``CompiledTemplate.render_conversation``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional, Union

from . import cache as _cache_module  # noqa: F401 - load() compiles through it: imported once, here
from . import sources
from .compiler import CompileError, CompiledTemplate, compile_template
from .runtime.jinja.hf import JSON_SCALARS, tool_schemas
from .sources import SPECIAL_TOKENS, SourceError, TemplateSource

__all__ = ["ChatTemplate", "FallbackTemplate", "load", "read_model"]

FALLBACKS = (None, "jinja2")
CHAT_TEMPLATE_FILE = "chat_template.jinja"
CHAT_TEMPLATE_DIR = "additional_chat_templates"


class ModelSources:
    """What :func:`read_model` found: the templates by name (``TemplateSource``s), the
    special tokens transformers passes to templates (``tokenizer.special_tokens_map``), the
    extra special tokens and stop words. A plain class, as ``TemplateSource`` is."""

    def __init__(
        self,
        path: str,
        kind: str,
        templates: dict,
        special_tokens: dict,
        extra_special_tokens: Optional[list] = None,
        stop: Optional[list] = None,
    ) -> None:
        self.path = path
        self.kind = kind
        self.templates = templates
        self.special_tokens = special_tokens
        self.extra_special_tokens = [] if extra_special_tokens is None else extra_special_tokens
        self.stop = [] if stop is None else stop

    def __repr__(self) -> str:
        return f"<ModelSources {self.kind} {self.path!r}: {', '.join(self.templates)}>"


# ----------------------------------------------------------------------------- reading


def read_model(path: Any, dialect: Optional[str] = None) -> ModelSources:
    """The templates and special tokens of a model folder or a single file (``SourceError``)."""
    p = Path(path)
    if p.is_dir():
        return _read_folder(p)
    loaded = sources.load(p, dialect)
    special = dict(loaded[0].special_tokens)
    extra: list = []
    if loaded[0].kind == "tokenizer_config":  # transformers' rules, not only the seven names
        special, extra = special_tokens(sources.read_json_object(p), None, p)
    templates = {s.name: s for s in loaded}
    return ModelSources(str(p), loaded[0].kind, templates, special, extra, list(loaded[0].stop))


def _read_folder(folder: Path) -> ModelSources:
    config_path = folder / "tokenizer_config.json"
    config = sources.read_json_object(config_path) if config_path.is_file() else {}
    special_map = folder / "special_tokens_map.json"
    special, extra = special_tokens(
        config, special_map if special_map.is_file() else None, config_path
    )
    templates = _jinja_files(folder)
    if not templates and config.get("chat_template") is not None:
        templates = {s.name: s for s in sources.load(config_path)}
    if not templates and (folder / "chat_template.json").is_file():
        templates = {s.name: s for s in sources.load(folder / "chat_template.json")}
    if not templates:
        others = [
            f for f in sorted(folder.iterdir())
            if f.is_file() and (f.suffix.lower() == ".gguf" or sources.is_modelfile_name(f))
        ]  # fmt: skip
        if len(others) != 1:
            raise SourceError(
                folder,
                f"no chat template here (looked for {CHAT_TEMPLATE_FILE}, {CHAT_TEMPLATE_DIR}/, "
                "tokenizer_config.json's chat_template, chat_template.json, one Modelfile or .gguf)",
                "no-template",
            )
        inner = read_model(others[0])
        inner.special_tokens = {**inner.special_tokens, **special}
        return inner
    return ModelSources(str(folder), "folder", templates, special, extra)


def _jinja_files(folder: Path) -> dict:
    """``chat_template.jinja`` and ``additional_chat_templates/*.jinja``, read as transformers
    reads them (text mode: universal newlines)."""
    found = {}
    main = folder / CHAT_TEMPLATE_FILE
    if main.is_file():
        found["default"] = _as_read_by_transformers(main, "default")
    extra_dir = folder / CHAT_TEMPLATE_DIR
    if extra_dir.is_dir():
        for f in sorted(extra_dir.glob("*.jinja")):
            found[f.name[: -len(".jinja")]] = _as_read_by_transformers(f, f.name[: -len(".jinja")])
    return found


def _as_read_by_transformers(path: Path, name: str) -> TemplateSource:
    source = sources.load(path, "jinja")[0]
    text = source.text.replace("\r\n", "\n").replace("\r", "\n")
    return source.replace(name=name, text=text)


def _token_text(value: Any) -> Any:
    """A serialised ``AddedToken``'s content (``""`` when it has none, as ``AddedToken()``
    has); anything else unchanged (a dict without ``"__type": "AddedToken"`` is no token:
    transformers refuses it)."""
    if _is_added(value):
        return value.get("content", "")
    return value


def _as_added(value: Any) -> Any:
    """A token of ``special_tokens_map.json``: there a dict is an ``AddedToken`` whether or
    not it says so (transformers builds ``AddedToken(**value)``)."""
    return {"__type": "AddedToken", **value} if isinstance(value, Mapping) else value


def _is_added(value: Any) -> bool:
    """A serialised ``AddedToken`` (``{"__type": "AddedToken", "content": ...}``)."""
    return isinstance(value, Mapping) and value.get("__type") == "AddedToken"


def special_tokens(
    config: dict, special_map_path: Optional[Path], origin: Any = "tokenizer_config.json"
) -> tuple[dict, list]:
    """transformers 5's ``special_tokens_map`` and ``extra_special_tokens`` for a saved tokenizer:
    the seven named tokens (strings or ``AddedToken`` dicts; ``None`` left out), then the
    model-specific ones (other ``*_token`` string keys, and an ``extra_special_tokens`` dict);
    ``special_tokens_map.json`` overrides when the config has no ``added_tokens_decoder``."""
    values = dict(config)
    if "additional_special_tokens" in values and not values.get("extra_special_tokens"):
        values["extra_special_tokens"] = values.pop("additional_special_tokens")
    specific = {
        k: v for k, v in values.items()
        if k not in SPECIAL_TOKENS and k.endswith("_token") and (isinstance(v, str) or _is_added(v))
    }  # fmt: skip
    if isinstance(values.get("extra_special_tokens"), dict):
        specific.update(values.pop("extra_special_tokens"))
    if special_map_path is not None and "added_tokens_decoder" not in config:
        for key, value in sources.read_json_object(special_map_path).items():
            if key == "extra_special_tokens" and isinstance(value, list):
                existing = list(values.get("extra_special_tokens") or [])
                value = existing + [t for t in map(_as_added, value) if t not in existing]
            elif isinstance(value, dict) and key == "extra_special_tokens":
                specific.update(value)
                continue
            values[key] = _as_added(value)
    named = {}
    for key, raw in [(k, values.get(k)) for k in SPECIAL_TOKENS] + list(specific.items()):
        value = _token_text(raw)
        if value is None:
            continue
        if not isinstance(value, str):  # transformers refuses these too (a TypeError)
            what = (
                f"is an AddedToken whose content is {type(value).__name__}, not str"
                if _is_added(raw)
                else f"has to be either str or AddedToken but got: {type(raw)}"
            )
            raise SourceError(origin, f"special token {key} {what}")
        named[key] = value
    extra = [str(_token_text(t)) for t in (values.get("extra_special_tokens") or [])]
    return named, extra


# ----------------------------------------------------------------------------- fallback


class FallbackTemplate:
    """A template the compiler refused, rendered through transformers' own environment
    (``load(..., fallback="jinja2")``): the same ``render_conversation`` as a compiled one."""

    fallback = "jinja2"

    def __init__(self, source: str, name: str, error: CompileError) -> None:
        from transformers.utils import chat_template_utils

        self.source = source
        self.name = name
        self.error = error
        self.dialect, self.profile = "jinja", "hf"
        self._ctu = chat_template_utils

    def render_conversation(
        self, messages: Any, *, return_assistant_tokens_mask: bool = False, **options: Any
    ) -> Any:
        texts, spans = self._ctu.render_jinja_template(
            conversations=[messages],
            chat_template=self.source,
            return_assistant_tokens_mask=return_assistant_tokens_mask,
            **options,
        )
        return (texts[0], spans[0]) if return_assistant_tokens_mask else texts[0]

    def render_conversation_with(self, messages: Any, options: dict) -> Any:
        return self.render_conversation(messages, **options)

    def render(self, context: Optional[dict] = None) -> str:
        return str(self._ctu._compile_jinja_template(self.source).render(**(context or {})))

    def __repr__(self) -> str:
        return f"<FallbackTemplate {self.name!r} jinja2>"


Renderer = Union[CompiledTemplate, FallbackTemplate]


# ----------------------------------------------------------------------------- the object


class ChatTemplate:
    """A model's chat template(s), compiled, with its special tokens (see :func:`load`).

    ``chat_template`` is what transformers' ``tokenizer.chat_template`` holds (a string, or
    a dict of named templates); ``special_tokens_map`` what it passes to every render;
    ``bos_token`` ... ``mask_token`` (``None`` when absent), ``extra_special_tokens``
    (alias ``additional_special_tokens``) and ``all_special_tokens`` as on a tokenizer.
    ``fallback`` is ``"jinja2"`` when a template renders through transformers' environment.
    """

    def __init__(
        self, model: ModelSources, name: Optional[str], fallback: Optional[str], cache: Any
    ) -> None:
        self.path = model.path
        self.kind = model.kind
        self.sources = dict(model.templates)
        self.special_tokens_map = dict(model.special_tokens)
        self.extra_special_tokens = list(model.extra_special_tokens)
        self.stop = list(model.stop)
        self.dialect = next(iter(self.sources.values())).dialect
        texts = {n: s.text for n, s in self.sources.items()}
        # one template is a string, as on a tokenizer; a config's list of named ones stays a dict
        listed = any(s.origin.endswith("]") for s in self.sources.values())
        self.chat_template: Union[str, dict] = (
            texts["default"] if list(texts) == ["default"] and not listed else texts
        )
        if name is not None and name not in texts:
            raise SourceError(
                self.path,
                f"no template named {name!r} (available: {', '.join(sorted(texts))})",
                "no-template",
            )
        self.name = name
        self._fallback_allowed = fallback
        self._cache = cache
        self._by_text: dict[str, Renderer] = {}
        self.templates: dict[str, Renderer] = {
            n: self._compile(s.text, sources.display_name(s), s.dialect)
            for n, s in self.sources.items()
        }
        # a Modelfile's SYSTEM / MESSAGE lines, by template text: Ollama's defaults for a
        # request that names none (the ``modelfile=`` option of the ollama profile: its
        # handlers' flow, which also refuses an empty conversation, whatever the file holds)
        self._modelfile: dict[str, dict] = {}
        for s in self.sources.values():
            defaults = s.modelfile_defaults()
            if defaults is not None:
                self._modelfile.setdefault(s.text, defaults)

    # ------------------------------------------------------------------------- tokens

    def __getattr__(self, attr: str) -> Any:
        if attr in SPECIAL_TOKENS:  # bos_token ... mask_token: None when the model has none
            return self.__dict__.get("special_tokens_map", {}).get(attr)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    @property
    def additional_special_tokens(self) -> list:
        return self.extra_special_tokens

    @property
    def all_special_tokens(self) -> list:
        """The named then the extra special tokens, each once (as a tokenizer lists them)."""
        out: list = []
        for token in list(self.special_tokens_map.values()) + self.extra_special_tokens:
            if token not in out:
                out.append(token)
        return out

    @property
    def fallback(self) -> Optional[str]:
        """``"jinja2"`` when some template renders through transformers' environment."""
        used = [t for t in self._by_text.values() if isinstance(t, FallbackTemplate)]
        return "jinja2" if used else None

    # ------------------------------------------------------------------------- compiling

    def _compile(self, text: str, label: str, dialect: str = "jinja") -> Renderer:
        known = self._by_text.get(text)
        if known is not None:
            return known
        try:
            made: Renderer = compile_template(text, dialect, name=label, cache=self._cache or None)
        except CompileError as e:
            if e.code != "unsupported" or self._fallback_allowed != "jinja2" or dialect != "jinja":
                raise
            made = _fallback_or_raise(text, label, e)
        self._by_text[text] = made
        return made

    def template(self, chat_template: Optional[str] = None, tools: Any = None) -> Renderer:
        """The compiled template ``apply_chat_template`` would use (see :meth:`get_chat_template`)."""
        text = self.get_chat_template(chat_template, tools)
        return self._compile(text, "<chat_template argument>")

    def get_chat_template(self, chat_template: Optional[str] = None, tools: Any = None) -> str:
        """transformers' ``get_chat_template``: a name among the model's templates, a template
        text, or (``None``) ``tool_use`` when tools are given and it exists, else ``default``."""
        if chat_template is None and self.name is not None:
            chat_template = self.name
        return _select(self.chat_template, chat_template, tools)

    # ------------------------------------------------------------------------- rendering

    def render_conversation(self, messages: Any, /, **options: Any) -> Any:
        """The selected template's ``render_conversation`` (transformers' or Ollama's entry
        point); for Jinja the special tokens are passed too, as transformers passes them."""
        chosen = options.pop("chat_template", None)
        text = self.get_chat_template(chosen, options.get("tools"))
        renderer = self._compile(text, "<chat_template argument>")
        if self.dialect == "jinja":
            options = {**self.special_tokens_map, **options}
        elif text in self._modelfile and "modelfile" not in options:
            options["modelfile"] = self._modelfile[text]  # Ollama's ChatHandler applies them
        return renderer.render_conversation(messages, **options)

    def render_generate(self, prompt: Any, **options: Any) -> str:
        """Ollama's /api/generate prompt with the model's template (and its Modelfile's
        SYSTEM / MESSAGE defaults, unless ``modelfile=`` names others): a Go template's
        ``render_generate`` (``runtime/go/generate.py``)."""
        if self.dialect != "go":
            raise TypeError(f"{self.path}: render_generate is Ollama's (/api/generate): a Go template's")
        text = self.get_chat_template(options.pop("chat_template", None))
        if text in self._modelfile and "modelfile" not in options:
            options["modelfile"] = self._modelfile[text]
        return self._compile(text, "<chat_template argument>", "go").render_generate(prompt, **options)

    def apply_chat_template(
        self,
        conversation: Any,
        tools: Optional[list] = None,
        documents: Optional[list] = None,
        chat_template: Optional[str] = None,
        add_generation_prompt: bool = False,
        continue_final_message: Any = False,
        return_assistant_tokens_mask: bool = False,
        tokenize: bool = False,
        **kwargs: Any,
    ) -> Union[str, list]:
        """What ``tokenizer.apply_chat_template(conversation, ..., tokenize=False)`` returns:
        the prompt, or a list of prompts for a batch (a list of conversations).

        The tokenizer-only arguments (``padding``, ``truncation``, ``max_length``,
        ``return_tensors``, ``return_dict``, ``tokenizer_kwargs``) have no effect without
        tokenizing, as in transformers; ``tokenize=True`` is refused (tokenize the prompt with
        your tokenizer). As in transformers, ``return_assistant_tokens_mask=True`` needs
        tokenizing and raises its ValueError: the character spans it is built from come from
        ``render_conversation(messages, return_assistant_tokens_mask=True)``.
        """
        if self.dialect != "jinja":
            raise TypeError(
                f"{self.path}: a Go (Ollama) template has no apply_chat_template; "
                "use render_conversation(messages, tools=..., think=...)"
            )
        if tokenize:
            raise ValueError(
                "tmpl2py renders the prompt only: call apply_chat_template(..., tokenize=False) "
                "and tokenize the text with your tokenizer"
            )
        for key in ("padding", "truncation", "max_length", "return_tensors", "return_dict"):
            kwargs.pop(key, None)
        kwargs.pop("tokenizer_kwargs", None)
        sanitize = kwargs.pop("sanitize_control_tokens", False)
        if return_assistant_tokens_mask:  # return_dict is False without tokenizing
            raise ValueError(
                "`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`"
            )
        text = self.get_chat_template(chat_template, tools)
        conversations, batched = _conversations(conversation)
        if continue_final_message and add_generation_prompt:
            raise ValueError(
                "continue_final_message and add_generation_prompt are not compatible. Use "
                "continue_final_message when you want the model to continue the final message, "
                "and add_generation_prompt when you want to add a header that will prompt it to "
                "start a new assistant message instead."
            )
        if sanitize:
            raise ValueError(
                "`sanitize_control_tokens=True` requires `tokenize=True` and is not compatible with "
                "`return_assistant_tokens_mask=True`."
            )
        renderer = self._compile(text, "<chat_template argument>")
        tools = tool_schemas(tools)  # (once: a generator's tools serve every conversation)
        options = {**self.special_tokens_map, **kwargs}
        options.update(  # (every keyword reaches the template: none is an option of ours)
            tools=tools, documents=documents, add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message,
        )  # fmt: skip
        rendered = [renderer.render_conversation_with(chat, options) for chat in conversations]
        return rendered if batched else rendered[0]

    def __repr__(self) -> str:
        names = ", ".join(self.sources)
        return f"<ChatTemplate {self.path!r} {self.dialect} [{names}]>"


def _select(model_templates: Union[str, dict], chat_template: Optional[str], tools: Any) -> str:
    """transformers' ``PreTrainedTokenizerBase.get_chat_template`` on the model's templates."""
    if isinstance(model_templates, dict):
        if chat_template is not None and chat_template in model_templates:
            return model_templates[chat_template]
        if chat_template is None:
            if tools is not None and "tool_use" in model_templates:
                return model_templates["tool_use"]
            if "default" in model_templates:
                return model_templates["default"]
            raise ValueError(
                "This model has multiple chat templates with no default specified! Please either pass a chat "
                "template or the name of the template you wish to use to the `chat_template` argument. Available "
                f"template names are {sorted(model_templates.keys())}."
            )
        return chat_template
    return model_templates if chat_template is None else chat_template


def _conversations(conversation: Any) -> tuple[list, bool]:
    """transformers' batching rule and message normalisation: (conversations, is_batched)."""
    if isinstance(conversation, (list, tuple)) and len(conversation) == 0:
        raise ValueError(
            "Cannot apply chat template to an empty conversation. Provide at least one message."
        )
    if isinstance(conversation, (list, tuple)) and (
        isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages")
    ):
        return [_normalize_messages(c) for c in conversation], True
    return [_normalize_messages(conversation)], False


def _objects_to_dicts(value: Any) -> Any:
    """transformers' ``_message_objects_to_dicts`` (dataclasses and pydantic models to dicts);
    a dict's or list's JSON scalars are taken as they are without a call (a message)."""
    kind = type(value)
    if kind is dict:
        scalars = JSON_SCALARS
        return {k: (v if type(v) in scalars else _objects_to_dicts(v)) for k, v in value.items()}
    if kind is list:
        scalars = JSON_SCALARS
        return [v if type(v) in scalars else _objects_to_dicts(v) for v in value]
    if kind in JSON_SCALARS:
        return value
    if isinstance(value, Mapping):
        return {key: _objects_to_dicts(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_objects_to_dicts(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_objects_to_dicts(item) for item in value)
    if hasattr(type(value), "__dataclass_fields__"):  # a dataclass instance (its module is loaded)
        import dataclasses

        return {
            f.name: _objects_to_dicts(getattr(value, f.name)) for f in dataclasses.fields(value)
        }
    if callable(getattr(value, "model_dump", None)):
        return _objects_to_dicts(value.model_dump())
    return value


def _normalize_messages(conversation: Any) -> list:
    """transformers' ``_normalize_chat_messages``: messages as dicts, ``None`` values dropped.
    A list of dicts (the usual conversation, which cannot fail the check) is rebuilt in one
    pass: each message's values converted, then the ``None`` ones dropped."""
    messages = getattr(conversation, "messages", conversation)
    if type(messages) is list:
        for message in messages:
            if type(message) is not dict:
                break
        else:
            scalars = JSON_SCALARS
            return [
                {
                    k: made
                    for k, v in message.items()
                    if (made := v if type(v) in scalars else _objects_to_dicts(v)) is not None
                }
                for message in messages
            ]
    messages = _objects_to_dicts(messages)
    out = []
    for message in messages:
        if not isinstance(message, dict):
            raise TypeError(
                f"Chat messages should be dicts, dataclasses or pydantic models, but got {message!r}."
            )
        out.append({k: v for k, v in message.items() if v is not None})
    return out


def _fallback_or_raise(text: str, label: str, error: CompileError) -> FallbackTemplate:
    try:
        made = FallbackTemplate(text, label, error)
    except ImportError:
        raise error from None  # the declared fallback needs transformers: the refusal stands
    warnings.warn(
        f"tmpl2py: {error}; rendering {label} through transformers' jinja2 environment "
        "(fallback='jinja2')",
        RuntimeWarning,
        stacklevel=4,
    )
    return made


# ----------------------------------------------------------------------------- load


def load(
    path: Any,
    *,
    name: Optional[str] = None,
    dialect: Optional[str] = None,
    fallback: Optional[str] = None,
    cache: Any = True,
) -> ChatTemplate:
    """A model folder or template file, compiled and ready (see the module docstring).

    ``name`` fixes the named template used when ``apply_chat_template`` gets no
    ``chat_template`` (default: transformers' choice); ``dialect`` forces the dialect of a
    bare template file; ``fallback="jinja2"`` renders a template the compiler refuses as
    ``unsupported`` through transformers' environment (with a warning; ``.fallback`` says
    so) instead of raising ``CompileError``; ``cache`` is ``True`` (the user's cache folder),
    a folder, a ``tmpl2py.cache.ModuleCache`` or ``False``. Raises ``SourceError`` for files
    that cannot be read and ``CompileError`` for templates that do not compile.
    """
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback must be None or 'jinja2', not {fallback!r}")
    return ChatTemplate(read_model(path, dialect), name, fallback, cache)
