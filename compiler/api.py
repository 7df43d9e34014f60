"""The public API: ``compile_template`` and the compiled template object; long because every
entry point (render, conversation, generate, segments) shares one limits-and-positions path here.

Pipeline: frontend (Lark) -> IR -> passes -> emitter -> ``compile()``; black lays the module
out only where its text is asked for (``generate``, which writes files, and
``CompiledTemplate.python_source``), never on the way to a render function.
Errors are attached to the source (excerpt, template name) here, once.
"""

from __future__ import annotations

import functools
import gc
import hashlib
from types import CodeType
from typing import Any, Callable, Optional

from . import bounds, ir
from .emit import MODULE_HEADER, emit_with_spans
from .positions import PositionTable
from .unparse import QUOTES_STRINGS
from .version import __version__
from .errors import CompileError
from .passes import pipeline
from tmpl2py.runtime.jinja import hf as _hf
from tmpl2py.runtime.go import generate as _go_generate
from tmpl2py.runtime.go import ollama as _ollama
from tmpl2py.runtime import limits as _limits
from tmpl2py.runtime.go.execute import ExecError as GoExecError

DIALECTS = ("jinja", "go")
_DEFAULT: Any = object()  # ``limits=`` not passed: the template's own
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
        spans: Optional[tuple] = None,
        limits: Any = _limits.DEFAULT_LIMITS,
    ):
        #: this template's limits (``compile_template(..., limits=...)``); None: no limits
        self.limits = _limits.coerce(limits)
        self.source = source
        self._emitted = python_source  # the emitter's text, compiled as it is
        self._formatted: Optional[str] = None
        self.name = name
        self.dialect = dialect
        self.profile = profile
        self._ir = module  # None for a module loaded from the cache: made again on demand
        self._optimize = optimize
        namespace: dict[str, Any] = {"__name__": f"tmpl2py_compiled.{_safe_ident(name)}"}
        filename = module_filename(name, python_source)
        # Jinja render errors get their template position (compiler/positions.py): from the
        # emitter's spans, or (a module from the cache) from a compile redone on the first error
        self.positions: Optional[PositionTable] = None
        if dialect == "jinja":
            raw: Any = (python_source, spans) if spans is not None else self._emitted_spans
            self.positions = PositionTable(filename, name, source, python_source, raw)
            self.positions.register_source()
        if code is None:
            code = compile(python_source, filename, "exec")
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
                self,
                self._conversation, functools.partial(CompiledTemplate.render_conversation, self)
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

    def _emitted_spans(self) -> tuple:
        """(the emitter's text, its statement spans), compiled again (a cached module's)."""
        text, _, spans = _generate_full(
            self.source, self.dialect, self.profile, self.name, self._optimize
        )
        return text, spans

    def render(
        self,
        context: Optional[dict] = None,
        *,
        budget: Optional[float] = None,
        limits: Any = _DEFAULT,
    ) -> str:
        """The engine's own render of exactly this data (no input shaping).

        ``limits`` (a ``Limits``, a dict of its fields, or None for none) replaces the
        template's; ``budget`` (seconds) bounds the render's time: past it,
        ``RenderBudgetExceeded``. Past any limit, ``RenderLimitExceeded``. An error raised
        while rendering carries its template position (``compiler/positions.py``).
        """
        if context is None and self.dialect == "jinja":  # Go data may be nil (JSON null)
            context = {}
        try:
            if budget is None and limits is _DEFAULT and self.limits is _limits.DEFAULT_LIMITS:
                try:  # the fast path: the generated code reads the default limits itself
                    return self._render(context)
                except RecursionError as e:
                    raise _depth_error(e, self.dialect) from None
            return self._run(self._render, (context,), {}, budget, limits)
        except Exception as e:  # never swallowed: positioned, then raised on
            located = self._located(e)
            if located is e:
                raise
            raise located from None

    def _located(self, error: BaseException) -> BaseException:
        """``error`` with its template position, found on the error path only: a Jinja
        error gains attributes and a note (``positions``); a Go execution error becomes Go's
        whole text, ``template: NAME:LINE:COL: executing ...`` (``gotmpl/exec_errors``)."""
        if self.positions is not None:
            return self.positions.locate(error)
        if self.dialect == "go" and isinstance(error, GoExecError):
            from .gotmpl.exec_errors import locate

            return locate(error, self)
        return error

    def render_conversation(
        self,
        messages: Any,
        *,
        budget: Optional[float] = None,
        limits: Any = _DEFAULT,
        **options: Any,
    ) -> Any:
        """The profile's conversation entry point (transformers' or Ollama's): the prompt.

        ``hf``: with ``return_assistant_tokens_mask=True``, ``(prompt, spans)`` instead, the
        ``(start, end)`` character spans of the ``{% generation %}`` blocks, as transformers'
        ``render_jinja_template`` returns them for one conversation.
        """
        entry = self._conversation
        if options and options.get("segments"):
            return self._conversation_segments(messages, budget, options)
        if entry is None:
            raise TypeError(
                f"profile {self.profile!r} has no conversation entry point; use render()"
            )
        if self.profile == "ollama" and "modelfile" in options:  # SYSTEM / MESSAGE defaults
            messages = _go_generate.chat_messages(messages, options.pop("modelfile"))
        try:
            return self._run(entry, (messages,), options, budget, limits)
        except Exception as e:  # never swallowed: positioned, then raised on
            located = self._located(e)
            if located is e:
                raise
            raise located from None

    def _run(
        self, func: Callable[..., Any], args: tuple, kwargs: dict, budget: Any, limits: Any
    ) -> Any:
        """Call ``func`` under the limits of this call (the template's, ``limits=``,
        ``budget=``): the usual call (the template's default limits) sets nothing."""
        chosen = self.limits if limits is _DEFAULT else _limits.coerce(limits)
        if budget is not None:
            chosen = chosen.replace(budget=budget)
        try:
            if chosen is _limits.DEFAULT_LIMITS:  # what the generated code reads by default
                return func(*args, **kwargs)
            with _limits.using(chosen.started()):
                return func(*args, **kwargs)
        except RecursionError as e:
            raise _depth_error(e, self.dialect) from None

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
        limits: Any = _DEFAULT,
        **request: Any,
    ) -> str:
        """Ollama's /api/generate prompt (``ollama`` profile): the values its generate handler
        fills from the request, this template as the model's (runtime/go/generate.py).
        ``request`` may add ``modelfile={"system": ..., "messages": [...]}`` (the model's
        defaults), ``template_in_request=True``, ``context``, ``now``; other keys are ignored."""
        if self.profile != "ollama":
            raise TypeError(f"profile {self.profile!r} has no generate entry point; use render()")
        values = dict(suffix=suffix, system=system, images=images, think=think, raw=raw)
        try:
            return self._run(
                _go_generate.render_generate,
                (self.namespace, prompt),
                {**values, **request},
                budget,
                limits,
            )
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

    def render_segments(self, context: Optional[dict] = None) -> list:
        """``render(context)`` as a list of ``Segment(text, origin)`` pieces whose texts join
        to exactly the render: each piece says whether it is template text or which data
        paths it depends on (see ``docs/segments.md``). The segment function is compiled on
        the first call (a second module; ``render`` is untouched)."""
        render = self._segment_function()
        try:
            return render({} if context is None else context)
        except RecursionError as e:
            raise _depth_error(e, self.dialect) from None

    def _segment_function(self) -> Callable[[dict], list]:
        render = self.__dict__.get("_segments_render")
        if render is None:
            from .emit_segments import generate_segments

            sha = hashlib.sha256(self.source.encode("utf-8", "surrogatepass")).hexdigest()
            header = MODULE_HEADER.format(
                version=__version__,
                source=header_safe(self.name),
                sha256=sha,
                dialect=self.dialect,
                profile=self.profile,
            )
            text = generate_segments(
                self.source, self.dialect, self.profile, self.name, header, final=self.ir
            )
            namespace: dict[str, Any] = {"__name__": self.namespace["__name__"] + "_segments"}
            exec(compile(text, f"<tmpl2py-segments:{self.name}>", "exec"), namespace)
            namespace["_PLAIN"] = self._render
            self.segments_source = text  # our own generated code, never template text
            render = self._segments_render = namespace["render_segments"]
        return render

    def _conversation_segments(self, messages: Any, budget: Optional[float], options: dict) -> Any:
        """``render_conversation(..., segments=True)``: the prompt's segments (with
        ``return_assistant_tokens_mask``, ``(segments, spans)``); the profile's input handling
        lives with the segments (``runtime/segments.conversation_segments``)."""
        from tmpl2py.runtime.segments import conversation_segments

        options = {k: v for k, v in options.items() if k != "segments"}
        render = self._segment_function()
        return self._run(
            conversation_segments, (self, render, messages), options, budget, _DEFAULT
        )

    def __repr__(self) -> str:
        return f"<CompiledTemplate {self.name!r} {self.dialect}/{self.profile}>"


def _ollama_fast_entry(
    template: "CompiledTemplate", entry: Callable[..., Any], general: Callable[..., Any]
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
        if budget is None and not options and template.limits is _limits.DEFAULT_LIMITS:
            try:
                return entry(messages, tools, think, now)
            except RecursionError as e:
                raise _depth_error(e, "go") from None
            except GoExecError as e:
                raise template._located(e) from None
        return general(messages, tools=tools, think=think, now=now, budget=budget, **options)

    return render_conversation


def _depth_error(error: RecursionError, dialect: str) -> Exception:
    """The error to raise for a RecursionError out of a render (a limit error stays itself)."""
    if isinstance(error, _limits.RenderLimitExceeded):
        return error
    return _too_deep(dialect)


def _too_deep(dialect: str) -> Exception:
    """A RecursionError that reached an entry point, as the depth limit's error, in the
    dialect's category: jinja2 lets Python's RecursionError through (ours is one); Go
    reports an execution error (ours is one)."""
    if dialect == "go":
        from tmpl2py.runtime.go.execute import TemplateDepthExceeded

        return TemplateDepthExceeded()
    return _limits.RenderDepthExceeded(
        "template recursion is too deep: a macro, recursive loop or template calls itself"
        " (or data the template built nests) deeper than Python's recursion limit allows"
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
    max_size: Optional[int] = bounds.MAX_SIZE,
    max_depth: Optional[int] = bounds.MAX_DEPTH,
) -> tuple[str, ir.Module]:
    """Source -> (formatted Python module text, final IR).

    ``max_size`` / ``max_depth`` cap the template's characters and block nesting
    (``CompileError`` ``too-large`` / ``too-deep``; None: no cap; see ``bounds``).
    Compiling is a pure function of its arguments, so results are memoised (a server that
    compiles the same template per request, and the test suite, pay for it once)."""
    check_bounds(source, dialect, name, max_size, max_depth)
    text, module = _generate(source, dialect, profile, name, optimize)
    try:
        return _format_cached(text), module
    except CompileError as e:
        raise e.with_source(source, name or "<template>") from None


def check_bounds(
    source: str, dialect: str, name: Optional[str], max_size: Any, max_depth: Any
) -> None:
    """The compile caps (``bounds``), checked before any parsing."""
    try:
        bounds.check_size(source, max_size)
        bounds.check_depth(source, dialect, max_depth)
    except CompileError as e:
        raise e.with_source(source, name or "<template>") from None


def clear_cache() -> None:
    """Forget every memoised compilation and layout: the next compile is a real one."""
    _generate_full.cache_clear()
    _format_cached.cache_clear()


clear_compile_cache = clear_cache  # the benchmarks' name for it


@functools.lru_cache(maxsize=256)
def _format_cached(text: str) -> str:
    try:
        return format_module(text, strings_quoted=True)
    except RecursionError:
        raise CompileError("too-deep", "template nesting is too deep to format", 0, 0) from None


def _generate(
    source: str, dialect: str, profile: Optional[str], name: Optional[str], optimize: bool
) -> tuple[str, ir.Module]:
    """Source -> (the emitter's module text, not yet laid out by black; final IR)."""
    return _generate_full(source, dialect, profile, name, optimize)[:2]


def module_filename(name: str, text: str) -> str:
    """The file name a generated module's code is compiled under (and ``linecache`` knows)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"<tmpl2py:{name}:{digest}>"


@functools.lru_cache(maxsize=256)
def _generate_full(
    source: str, dialect: str, profile: Optional[str], name: Optional[str], optimize: bool
) -> tuple[str, ir.Module, tuple]:
    """Source -> (the emitter's module text, not yet laid out by black; final IR; the
    emitter's statement spans of that text, for render-error positions).

    The cyclic garbage collector is paused meanwhile: a compile makes many objects that stay
    alive and little garbage, and the collections it triggers cost ~20% of the time."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _generate_text(source, dialect, profile, name, optimize)
    finally:
        if gc_was_enabled:
            gc.enable()


def _generate_text(
    source: str, dialect: str, profile: Optional[str], name: Optional[str], optimize: bool
) -> tuple[str, ir.Module, tuple]:
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
        # the size guards are for the code that runs (the IR stays readable for inspection)
        text, spans = emit_with_spans(pipeline.before_emit(module), header, metadata)
    except RecursionError:
        raise CompileError(
            "too-deep", "template nesting is too deep to compile", 0, 0, source, name
        ) from None
    return text, module, spans


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
    *,
    limits: Any = _limits.DEFAULT_LIMITS,
    max_size: Optional[int] = bounds.MAX_SIZE,
    max_depth: Optional[int] = bounds.MAX_DEPTH,
) -> CompiledTemplate:
    """Compile a template; raises :class:`CompileError` for a malformed one.

    ``cache``: ``True`` (the user's cache folder), a folder path or a
    ``tmpl2py.cache.ModuleCache`` keeps the generated module across processes (see
    ``tmpl2py/cache.py``); the default ``None`` compiles in memory only.
    ``limits``: the render limits of this template (a ``runtime.limits.Limits``, a dict of
    its fields, None for none; a render's own ``limits=`` replaces them). ``max_size`` /
    ``max_depth``: the compile caps (``CompileError`` ``too-large`` / ``too-deep``)."""
    profile = profile or PROFILES.get(dialect, ("",))[0]
    check_bounds(source, dialect, name, max_size, max_depth)
    if cache is not None and cache is not False:
        return _compile_cached(cache, source, dialect, profile, name, optimize, limits)
    python_source, module, spans = _generate_full(source, dialect, profile, name, optimize)
    return _instantiate(
        source, python_source, name, dialect, profile, module, None, optimize, spans, limits
    )


def _compile_cached(
    cache: Any,
    source: str,
    dialect: str,
    profile: str,
    name: Optional[str],
    optimize: bool,
    limits: Any,
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
            return text, compile(text, module_filename(name or "<template>", text), "exec")
        except (SyntaxError, RecursionError) as e:
            raise _python_refused(e, source, name) from None

    def make(text: str, code: CodeType) -> CompiledTemplate:
        module = built[0] if built else None
        return _instantiate(
            source, text, name, dialect, profile, module, code, optimize, None, limits
        )

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
    spans: Optional[tuple] = None,
    limits: Any = _limits.DEFAULT_LIMITS,
) -> CompiledTemplate:
    try:
        return CompiledTemplate(
            source,
            python_source,
            name or "<template>",
            dialect,
            profile,
            module,
            code,
            optimize,
            spans,
            limits,
        )
    except (SyntaxError, RecursionError) as e:  # e.g. "too many statically nested blocks"
        raise _python_refused(e, source, name) from None


def _python_refused(error: Exception, source: str, name: Optional[str]) -> CompileError:
    """Python's refusal to compile or run a generated module, as the template's error."""
    if isinstance(error, SyntaxError):
        message = f"the generated Python is rejected: {error.msg}"
    else:
        message = "template nesting is too deep to compile"
    return CompileError("too-deep", message, 0, 0, source, name)
