"""The public API: ``compile_template`` and the compiled template object.

Pipeline: frontend (Lark) -> IR -> passes -> emitter -> ``compile()``; black lays the module
out only where its text is asked for (``generate``, which writes files, and
``CompiledTemplate.python_source``), never on the way to a render function.
Errors are attached to the source (excerpt, template name) here, once.
"""

from __future__ import annotations

import functools
import hashlib
from contextlib import contextmanager
from types import CodeType
from typing import Any, Callable, Iterator, Optional

from . import ir
from .emit import MODULE_HEADER, emit
from .unparse import QUOTES_STRINGS
from .version import __version__
from .errors import CompileError
from .passes import pipeline
from tmpl2py.runtime.jinja import hf as _hf
from tmpl2py.runtime.go import generate as _go_generate
from tmpl2py.runtime.go import ollama as _ollama
from tmpl2py.runtime.go.execute import ExecError as GoExecError
from tmpl2py.runtime.budget import time_budget

DIALECTS = ("jinja", "go")
PROFILES = {"jinja": ("hf", "plain"), "go": ("ollama", "plain")}


class CompiledTemplate:
    """A compiled template: its Python source and the functions that render it."""

    def __init__(
        self,
        source: str,
        python_source: str,
        name: str,
        dialect: str,
        profile: str,
        module: Optional[ir.Module],
        code: Optional[CodeType] = None,
        optimize: bool = True,
    ):
        self.source = source
        self._emitted = python_source  # the emitter's text, compiled as it is
        self._formatted: Optional[str] = None
        self.name = name
        self.dialect = dialect
        self.profile = profile
        self._ir = module  # None for a module loaded from the cache: made again on demand
        self._optimize = optimize
        namespace: dict[str, Any] = {"__name__": f"tmpl2py_compiled.{_safe_ident(name)}"}
        if code is None:
            code = compile(python_source, f"<tmpl2py:{name}>", "exec")
        exec(code, namespace)  # our own generated code, never template text
        self.namespace = namespace
        self._render: Callable[[dict], str] = namespace["render"]
        # the profile's conversation entry point, chosen once (None: render() only)
        self._conversation: Optional[Callable[..., Any]] = None
        if profile == "hf":
            self._conversation = functools.partial(
                _hf.render_conversation, self._render, self.source
            )
        elif profile == "ollama":
            self._conversation = _ollama.conversation_entry(namespace)
            # the usual call without keyword repacking (an instance attribute: see below)
            self.render_conversation = _ollama_fast_entry(  # type: ignore[method-assign]
                self._conversation,
                functools.partial(CompiledTemplate.render_conversation, self),
                self._located,
            )

    @property
    def ir(self) -> ir.Module:
        """The final IR (a template loaded from the cache compiles it again when asked)."""
        if self._ir is None:
            self._ir = generate(self.source, self.dialect, self.profile, self.name, self._optimize)[1]
        return self._ir

    @property
    def python_source(self) -> str:
        """The generated module text, black-formatted (laid out on first access)."""
        if self._formatted is None:
            try:
                self._formatted = _format_cached(self._emitted)
            except CompileError as e:
                raise e.with_source(self.source, self.name) from None
        return self._formatted

    def render(self, context: Optional[dict] = None, *, budget: Optional[float] = None) -> str:
        """The engine's own render of exactly this data (no input shaping).

        ``budget`` (seconds) bounds the render's time: past it, ``RenderBudgetExceeded``.
        """
        if context is None and self.dialect == "jinja":  # Go data may be nil (JSON null)
            context = {}
        if budget is None:  # the fast path: no context managers around a hot call
            try:
                return self._render(context)
            except RecursionError:
                raise _too_deep(self.dialect) from None
            except GoExecError as e:
                raise self._located(e) from None
        try:
            with time_budget(budget), _recursion_guard(self.dialect):
                return self._render(context)
        except GoExecError as e:
            raise self._located(e) from None

    def _located(self, error: GoExecError) -> GoExecError:
        """A Go execution error with Go's prefix (its position), found on the error path."""
        from .gotmpl.exec_errors import locate

        return locate(error, self) if self.dialect == "go" else error

    def render_conversation(
        self, messages: Any, *, budget: Optional[float] = None, **options: Any
    ) -> Any:
        """The profile's conversation entry point (transformers' or Ollama's): the prompt.

        ``hf``: with ``return_assistant_tokens_mask=True``, ``(prompt, spans)`` instead, the
        ``(start, end)`` character spans of the ``{% generation %}`` blocks, as transformers'
        ``render_jinja_template`` returns them for one conversation.
        """
        entry = self._conversation
        if entry is None:
            raise TypeError(
                f"profile {self.profile!r} has no conversation entry point; use render()"
            )
        if self.profile == "ollama" and "modelfile" in options:  # SYSTEM / MESSAGE defaults
            messages = _go_generate.chat_messages(messages, options.pop("modelfile"))
        if budget is None:  # the fast path, as in render()
            try:
                return entry(messages, **options)
            except RecursionError:
                raise _too_deep(self.dialect) from None
            except GoExecError as e:
                raise self._located(e) from None
        try:
            with time_budget(budget), _recursion_guard(self.dialect):
                return entry(messages, **options)
        except GoExecError as e:
            raise self._located(e) from None

    def render_generate(
        self,
        prompt: Any,
        *,
        suffix: Any = None,
        system: Any = None,
        images: Any = None,
        think: Any = None,
        raw: bool = False,
        budget: Optional[float] = None,
        **request: Any,
    ) -> str:
        """Ollama's /api/generate prompt (``ollama`` profile): the values its generate handler
        fills from the request, this template as the model's (runtime/go/generate.py).
        ``request`` may add ``modelfile={"system": ..., "messages": [...]}`` (the model's
        defaults), ``template_in_request=True``, ``context``, ``now``; other keys are ignored."""
        if self.profile != "ollama":
            raise TypeError(f"profile {self.profile!r} has no generate entry point; use render()")
        values = dict(suffix=suffix, system=system, images=images, think=think, raw=raw)
        if budget is None:
            try:
                return _go_generate.render_generate(self.namespace, prompt, **values, **request)
            except RecursionError:
                raise _too_deep("go") from None
            except GoExecError as e:
                raise self._located(e) from None
        try:
            with time_budget(budget), _recursion_guard("go"):
                return _go_generate.render_generate(self.namespace, prompt, **values, **request)
        except GoExecError as e:
            raise self._located(e) from None
    def prefix_report(self, shapes: Any = None, max_examples: int = 200) -> Any:
        """Is the prompt of each turn a prefix of the next one's? (``tmpl2py.prefix``)"""
        from tmpl2py.prefix import SHAPES, prefix_report

        return prefix_report(self, SHAPES if shapes is None else shapes, max_examples)

    def conversation(self, **options: Any) -> Any:
        """A session that renders a growing conversation, only the new messages where the
        template is proven append-only (``tmpl2py.conversation``)."""
        from tmpl2py.conversation import Conversation

        return Conversation(self, **options)

    def __repr__(self) -> str:
        return f"<CompiledTemplate {self.name!r} {self.dialect}/{self.profile}>"


def _ollama_fast_entry(
    entry: Callable[..., Any], general: Callable[..., Any], located: Callable[..., Any]
) -> Callable[..., Any]:
    """``render_conversation`` of an ollama-profile template: Ollama's request keys passed on
    as they are (the general method repacks keywords, ~0.3 us of a ~3 us render); a budget
    or any other key takes the general way."""

    def render_conversation(
        messages: Any,
        tools: Any = None,
        think: Any = None,
        now: Any = None,
        *,
        budget: Optional[float] = None,
        **options: Any,
    ) -> str:
        """Ollama's Template.Execute for /api/chat input (``CompiledTemplate.render_conversation``)."""
        if budget is None and not options:
            try:
                return entry(messages, tools, think, now)
            except RecursionError:
                raise _too_deep("go") from None
            except GoExecError as e:
                raise located(e) from None
        return general(messages, tools=tools, think=think, now=now, budget=budget, **options)

    return render_conversation


@contextmanager
def _recursion_guard(dialect: str) -> Iterator[None]:
    """A template that recurses without end fails with a clear message, in the dialect's
    category: jinja2 lets Python's RecursionError through; Go reports an execution error."""
    try:
        yield
    except RecursionError:
        raise _too_deep(dialect) from None


def _too_deep(dialect: str) -> Exception:
    if dialect == "go":
        from tmpl2py.runtime.go.execute import ExecError

        # Go stops at a depth of 100,000; Python's stack ends sooner, with Go's words.
        return ExecError("exceeded maximum template depth (100000)")
    return RecursionError(
        "template recursion is too deep: a macro, recursive loop or template calls itself"
        " more times than Python's recursion limit allows"
    )


def _safe_ident(name: str) -> str:
    return "".join(c if c.isalnum() and c.isascii() else "_" for c in name) or "template"


def parse(
    source: str, dialect: str = "jinja", name: Optional[str] = None, profile: Optional[str] = None
) -> ir.Module:
    """Source -> IR module (frontend only)."""
    if dialect == "jinja":
        from .jinja.frontend import parse as parse_jinja

        return parse_jinja(source, name)
    if dialect == "go":
        from .gotmpl.frontend import parse as parse_go

        return parse_go(source, name, profile=profile or "ollama")
    raise ValueError(f"unknown dialect {dialect!r} (expected one of {', '.join(DIALECTS)})")


def generate(
    source: str,
    dialect: str = "jinja",
    profile: Optional[str] = None,
    name: Optional[str] = None,
    optimize: bool = True,
) -> tuple[str, ir.Module]:
    """Source -> (formatted Python module text, final IR).

    Compiling is a pure function of its arguments, so results are memoised (a server that
    compiles the same template per request, and the test suite, pay for it once)."""
    text, module = _generate(source, dialect, profile, name, optimize)
    try:
        return _format_cached(text), module
    except CompileError as e:
        raise e.with_source(source, name or "<template>") from None


def clear_cache() -> None:
    """Forget every memoised compilation and layout: the next compile is a real one."""
    _generate.cache_clear()
    _format_cached.cache_clear()


clear_compile_cache = clear_cache  # the benchmarks' name for it


@functools.lru_cache(maxsize=256)
def _format_cached(text: str) -> str:
    try:
        return format_module(text, strings_quoted=True)
    except RecursionError:
        raise CompileError("too-deep", "template nesting is too deep to format", 0, 0) from None


@functools.lru_cache(maxsize=256)
def _generate(
    source: str, dialect: str, profile: Optional[str], name: Optional[str], optimize: bool
) -> tuple[str, ir.Module]:
    """Source -> (the emitter's module text, not yet laid out by black; final IR)."""
    profile = profile or PROFILES.get(dialect, ("",))[0]
    if dialect not in PROFILES:
        raise ValueError(f"unknown dialect {dialect!r} (expected one of {', '.join(DIALECTS)})")
    if profile not in PROFILES[dialect]:
        raise ValueError(
            f"unknown profile {profile!r} for {dialect} (expected one of {', '.join(PROFILES[dialect])})"
        )
    name = name or "<template>"
    try:
        module = parse(source, dialect, name, profile)
        module = pipeline.run(module, profile=profile, optimize=optimize)
    except CompileError as e:
        raise e.with_source(source, name) from None
    except RecursionError:
        raise CompileError(
            "too-deep", "template nesting is too deep to compile", 0, 0, source, name
        ) from None
    sha = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    header = MODULE_HEADER.format(
        version=__version__, source=header_safe(name), sha256=sha, dialect=dialect, profile=profile
    )
    metadata = {
        "TEMPLATE_NAME": name,
        "SOURCE_SHA256": sha,
        "DIALECT": dialect,
        "PROFILE": profile,
        "COMPILER_VERSION": __version__,
    }
    metadata.update(dict(module.meta))
    try:
        text = emit(module, header, metadata)
    except RecursionError:
        raise CompileError(
            "too-deep", "template nesting is too deep to compile", 0, 0, source, name
        ) from None
    return text, module


def header_safe(name: str) -> str:
    """A template name for a comment line: printable ASCII only, no newlines."""
    return "".join(c if 32 <= ord(c) < 127 else "?" for c in name)[:200]


def format_module(text: str, strings_quoted: bool = False) -> str:
    """black, line length 100. ``strings_quoted``: the emitter wrote every string literal in
    black's quotes already (``unparse.QUOTES_STRINGS``), so black need not normalise them."""
    import black

    try:
        mode = black.Mode(line_length=100, string_normalization=not strings_quoted)
        return black.format_str(text, mode=mode)
    except RecursionError:
        raise
    except Exception as e:  # black refuses what it cannot lay out (extreme nesting)
        raise CompileError(
            "too-deep", f"the generated module cannot be formatted: {type(e).__name__}", 0, 0
        ) from None


def compile_template(
    source: str,
    dialect: str = "jinja",
    profile: Optional[str] = None,
    name: Optional[str] = None,
    optimize: bool = True,
    cache: Any = None,
) -> CompiledTemplate:
    """Compile a template; raises :class:`CompileError` for a malformed one.

    ``cache``: ``True`` (the user's cache folder), a folder path or a
    ``tmpl2py.cache.ModuleCache`` keeps the generated module across processes (see
    ``tmpl2py/cache.py``); the default ``None`` compiles in memory only."""
    profile = profile or PROFILES.get(dialect, ("",))[0]
    if cache is not None and cache is not False:
        return _compile_cached(cache, source, dialect, profile, name, optimize)
    python_source, module = _generate(source, dialect, profile, name, optimize)
    return _instantiate(source, python_source, name, dialect, profile, module, None, optimize)


def _compile_cached(
    cache: Any, source: str, dialect: str, profile: str, name: Optional[str], optimize: bool
) -> CompiledTemplate:
    """compile_template through the module cache (the key: everything that changes the code)."""
    from tmpl2py.cache import as_cache, entry_key

    store = as_cache(cache)
    sha = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    key = entry_key(
        source_sha256=sha,
        dialect=dialect,
        profile=profile,
        name=name,
        optimize=optimize,
        compiler=__version__,
    )
    built: list = []

    def build() -> tuple[str, CodeType]:
        text, module = generate(source, dialect, profile, name, optimize)  # a file: black
        built.append(module)
        try:
            return text, compile(text, f"<tmpl2py:{name or '<template>'}>", "exec")
        except SyntaxError as e:
            raise CompileError(
                "too-deep", f"the generated Python is rejected: {e.msg}", 0, 0, source, name
            ) from None
        except RecursionError:
            raise CompileError(
                "too-deep", "template nesting is too deep to compile", 0, 0, source, name
            ) from None

    def make(text: str, code: CodeType) -> CompiledTemplate:
        module = built[0] if built else None
        return _instantiate(source, text, name, dialect, profile, module, code, optimize)

    return store.get_or_build(key, build, make)


def _instantiate(
    source: str,
    python_source: str,
    name: Optional[str],
    dialect: str,
    profile: str,
    module: Optional[ir.Module],
    code: Optional[CodeType],
    optimize: bool,
) -> CompiledTemplate:
    try:
        return CompiledTemplate(
            source, python_source, name or "<template>", dialect, profile, module, code, optimize
        )
    except SyntaxError as e:  # e.g. "too many statically nested blocks"
        raise CompileError(
            "too-deep", f"the generated Python is rejected: {e.msg}", 0, 0, source, name
        ) from None
    except RecursionError:
        raise CompileError(
            "too-deep", "template nesting is too deep to compile", 0, 0, source, name
        ) from None
