"""The public API: ``compile_template`` and the compiled template object.

Pipeline: frontend (Lark) -> IR -> passes -> emitter -> black -> ``compile()``.
Errors are attached to the source (excerpt, template name) here, once.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any, Callable, Optional

from . import __version__, bounds, ir
from .emit import MODULE_HEADER, emit
from .errors import CompileError
from .passes import limits as limit_guards
from .passes import pipeline
from tmpl2py.runtime.jinja import hf as _hf
from tmpl2py.runtime.go import ollama as _ollama
from tmpl2py.runtime import limits as _limits

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
        module: ir.Module,
        limits: Any = _limits.DEFAULT_LIMITS,
    ):
        #: this template's limits (``compile_template(..., limits=...)``); None: no limits
        self.limits = _limits.coerce(limits)
        self.source = source
        self.python_source = python_source
        self.name = name
        self.dialect = dialect
        self.profile = profile
        self.ir = module
        namespace: dict[str, Any] = {"__name__": f"tmpl2py_compiled.{_safe_ident(name)}"}
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
                self,
                self._conversation, functools.partial(CompiledTemplate.render_conversation, self)
            )

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
        ``RenderBudgetExceeded``. Past any limit, ``RenderLimitExceeded``.
        """
        if context is None and self.dialect == "jinja":  # Go data may be nil (JSON null)
            context = {}
        if budget is None and limits is _DEFAULT and self.limits is _limits.DEFAULT_LIMITS:
            try:  # the fast path: the generated code reads the default limits itself
                return self._render(context)
            except RecursionError as e:
                raise _depth_error(e, self.dialect) from None
        return self._run(self._render, (context,), {}, budget, limits)

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
        if entry is None:
            raise TypeError(
                f"profile {self.profile!r} has no conversation entry point; use render()"
            )
        return self._run(entry, (messages,), options, budget, limits)

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
    try:
        bounds.check_size(source, max_size)
        bounds.check_depth(source, dialect, max_depth)
    except CompileError as e:
        raise e.with_source(source, name or "<template>") from None
    return _generate(source, dialect, profile, name, optimize)


@functools.lru_cache(maxsize=256)
def _generate(
    source: str,
    dialect: str,
    profile: Optional[str],
    name: Optional[str],
    optimize: bool,
) -> tuple[str, ir.Module]:
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
        text = format_module(emit(limit_guards.run(module), header, metadata), strings_quoted=True)
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
    black's quotes already (``emit.unparse``), so black need not normalise them."""
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
    *,
    limits: Any = _limits.DEFAULT_LIMITS,
    max_size: Optional[int] = bounds.MAX_SIZE,
    max_depth: Optional[int] = bounds.MAX_DEPTH,
) -> CompiledTemplate:
    """Compile a template; raises :class:`CompileError` for a malformed one.

    ``limits``: the render limits of this template (a ``runtime.limits.Limits``, a dict of
    its fields, None for none; a render's own ``limits=`` replaces them). ``max_size`` /
    ``max_depth``: the compile caps (``CompileError`` ``too-large`` / ``too-deep``)."""
    profile = profile or PROFILES.get(dialect, ("",))[0]
    python_source, module = generate(
        source, dialect, profile, name, optimize, max_size=max_size, max_depth=max_depth
    )
    try:
        return CompiledTemplate(
            source, python_source, name or "<template>", dialect, profile, module, limits
        )
    except SyntaxError as e:  # e.g. "too many statically nested blocks"
        raise CompileError(
            "too-deep", f"the generated Python is rejected: {e.msg}", 0, 0, source, name
        ) from None
    except RecursionError:
        raise CompileError(
            "too-deep", "template nesting is too deep to compile", 0, 0, source, name
        ) from None
