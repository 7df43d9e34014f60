"""The compiled template: its Python module, run, and the entry points that render with it;
long because every entry point (render, conversation, generate, segments) shares one
limits-and-positions path here.

This module imports no part of the pipeline (``build``: Lark, the IR, the passes, the
emitter): a template loaded from the module cache (``tmpl2py/cache.py``) is ready without
them. What only the pipeline knows (the final IR, the emitter's statement spans for a
render error's position, the black layout, the segment renderer) is made again on demand.
"""

from __future__ import annotations

import functools
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable, Optional

from .names import module_filename, safe_ident
from tmpl2py.runtime import limits as _limits

if TYPE_CHECKING:
    from .positions import PositionTable

_DEFAULT: Any = _limits.NOT_GIVEN  # ``limits=`` not passed: the template's own


class CompiledTemplate:
    """A compiled template: its Python source and the functions that render it."""

    def __init__(
        self,
        source: str,
        python_source: "str | Callable[[], str]",
        name: str,
        dialect: str,
        profile: str,
        module: Any,
        code: Optional[CodeType] = None,
        optimize: bool = True,
        spans: Optional[tuple] = None,
        limits: Any = _limits.DEFAULT_LIMITS,
    ):
        self._limits = _limits.coerce(limits)
        self.source = source
        # the emitter's text, compiled as it is; or (a module from the cache, whose code is
        # given) a function that reads it, called when first needed
        given = isinstance(python_source, str)
        self._text: Optional[str] = python_source if given else None  # type: ignore[assignment]
        self._read_text: Optional[Callable[[], str]] = None if given else python_source  # type: ignore[assignment]
        self._formatted: Optional[str] = None
        self.name = name
        self.dialect = dialect
        self.profile = profile
        self._ir = module  # None for a module loaded from the cache: made again on demand
        self._optimize = optimize
        namespace: dict[str, Any] = {"__name__": f"tmpl2py_compiled.{safe_ident(name)}"}
        # the code's file name (a cached module's code was compiled under it already)
        filename = code.co_filename if code is not None else module_filename(name, self._emitted)
        # Jinja render errors get their template position (compiler/positions.py, imported on
        # the first error): from the emitter's spans, or (a module from the cache) from a
        # compile redone on the first error
        self._filename = filename
        self._spans = spans
        if code is None:
            code = compile(self._emitted, filename, "exec")
        exec(code, namespace)  # our own generated code, never template text
        self.namespace = namespace
        self._render: Callable[[dict], str] = namespace["render"]
        if dialect == "jinja":
            # the generated render is the entry point itself: a call with no context, a
            # budget or limits goes the general way, and an exit by an error is positioned
            # here (the module's ``render_entry`` / ``render_failed``: ``runtime/limits``)
            namespace["render_entry"] = self._render_entry
            namespace["render_failed"] = self._render_failed
        self._choose_render()
        # the profile's conversation entry point, chosen once (None: render() only)
        self._conversation: Optional[Callable[..., Any]] = None
        if profile == "hf":
            from tmpl2py.runtime.jinja import hf

            self._conversation = functools.partial(hf.render_conversation, self._render, source)
            # the usual call without keyword repacking (an instance attribute: see below)
            self.render_conversation = _hf_fast_entry(  # type: ignore[method-assign]
                self,
                self._conversation,
                functools.partial(CompiledTemplate.render_conversation, self),
            )
        elif profile == "ollama":
            from tmpl2py.runtime.go import ollama

            self._conversation = ollama.conversation_entry(namespace)
            # the usual call without keyword repacking (an instance attribute: see below)
            self.render_conversation = _ollama_fast_entry(  # type: ignore[method-assign]
                self,
                self._conversation,
                functools.partial(CompiledTemplate.render_conversation, self),
            )

    @property
    def limits(self) -> _limits.Limits:
        """This template's limits (``compile_template(..., limits=...)``; ``UNLIMITED``: none)."""
        return self._limits

    @limits.setter
    def limits(self, limits: Any) -> None:
        self._limits = _limits.coerce(limits)
        self._choose_render()

    def _choose_render(self) -> None:
        """``self.render``: the usual call (no budget, the template's default limits) straight
        to the generated function, an instance attribute shadowing the method (as for
        ollama's ``render_conversation``); a template with limits of its own, the method."""
        general = functools.partial(CompiledTemplate.render, self)
        if self._limits is not _limits.DEFAULT_LIMITS:
            self.render = general  # type: ignore[method-assign]
        elif self.dialect == "jinja":
            self.render = self._render  # type: ignore[method-assign]
        else:
            self.render = _fast_render(self, general)  # type: ignore[method-assign]

    def _render_entry(self, render: Any, context: Any, budget: Any, limits: Any) -> str:
        """The generated Jinja render called with no context, a budget or limits: the
        method's general way."""
        return CompiledTemplate.render(self, context, budget=budget, limits=limits)

    def _render_failed(self, error: BaseException) -> None:
        """The generated Jinja render's exit by an error (it raises ``error`` on after this
        returns): the meter cleared, a RecursionError raised as the depth limit's error, an
        error positioned in the template (in place, as Jinja errors are)."""
        try:
            _limits.render_failed(error)
        except _limits.RenderDepthExceeded as deep:
            raise self._located(deep) from None
        if isinstance(error, Exception):
            located = self._located(error)
            if located is not error:
                raise located from None

    @property
    def _emitted(self) -> str:
        """The generated module text the code was compiled from (read on first use)."""
        if self._text is None:
            assert self._read_text is not None
            self._text = self._read_text()
        return self._text

    @property
    def ir(self) -> Any:
        """The final IR (a template loaded from the cache compiles it again when asked)."""
        if self._ir is None:
            self._ir = self._pipeline_output()[1]
        return self._ir

    @property
    def python_source(self) -> str:
        """The generated module text, black-formatted (laid out on first access)."""
        if self._formatted is None:
            try:
                from . import build

                self._formatted = build.formatted(self._emitted)
            except CompileError as e:
                raise e.with_source(self.source, self.name) from None
        return self._formatted

    def _pipeline_output(self) -> tuple:
        """The pipeline's (emitter's text, final IR, statement spans) for this template,
        made again for a module loaded from the cache (the pipeline is imported only then)."""
        from . import build

        return build.emitted(self.source, self.dialect, self.profile, self.name, self._optimize)

    def _emitted_spans(self) -> tuple:
        """(the emitter's text, its statement spans), compiled again (a cached module's)."""
        text, _, spans = self._pipeline_output()
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

    @functools.cached_property
    def positions(self) -> Optional[PositionTable]:
        """The generated module's line -> template position map (Jinja; None for Go)."""
        if self.dialect != "jinja":
            return None
        from .positions import PositionTable

        spans = self._spans
        raw: Any = (self._emitted, spans) if spans is not None else self._emitted_spans
        return PositionTable(self._filename, self.name, self.source, self._emitted, raw)

    def _located(self, error: BaseException) -> BaseException:
        """``error`` with its template position, found on the error path only: a Jinja
        error gains attributes and a note (``positions``); a Go execution error becomes Go's
        whole text, ``template: NAME:LINE:COL: executing ...`` (``gotmpl/exec_errors``); a
        limit error of either dialect gains ``where`` / ``line`` / ``column``."""
        if self.positions is not None:
            return self.positions.locate(error)
        if self.dialect == "go":
            from tmpl2py.runtime.go.execute import ExecError

            if isinstance(error, (ExecError, _limits.RenderLimitExceeded)):
                from .gotmpl.exec_errors import locate

                return locate(error, self)
        return error

    def render_conversation(
        self,
        messages: Any,
        /,
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
        if options and options.get("segments"):
            return self._conversation_segments(messages, budget, options)
        return self.render_conversation_with(messages, options, budget, limits)

    def render_conversation_with(
        self, messages: Any, options: dict, budget: Optional[float] = None, limits: Any = _DEFAULT
    ) -> Any:
        """:meth:`render_conversation` with the entry point's keywords in a dict: every one
        reaches the template, whatever its name (``apply_chat_template`` passes its own
        keywords so: a template variable named ``budget``, ``limits`` or ``segments`` is the
        template's, as in transformers)."""
        entry = self._conversation
        if entry is None:
            raise TypeError(
                f"profile {self.profile!r} has no conversation entry point; use render()"
            )
        if self.profile == "ollama" and "modelfile" in options:  # SYSTEM / MESSAGE defaults
            from tmpl2py.runtime.go.generate import chat_messages

            messages = chat_messages(messages, options.pop("modelfile"))
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
                return _limits.within_output(func(*args, **kwargs), chosen)
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
        from tmpl2py.runtime.go.execute import ExecError
        from tmpl2py.runtime.go.generate import render_generate

        values = dict(suffix=suffix, system=system, images=images, think=think, raw=raw)
        try:
            return self._run(
                render_generate,
                (self.namespace, prompt),
                {**values, **request},
                budget,
                limits,
            )
        except (ExecError, _limits.RenderLimitExceeded) as e:
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
        if context is None and self.dialect == "jinja":  # Go data may be nil (JSON null)
            context = {}
        try:
            return render(context)
        except RecursionError as e:
            raise _depth_error(e, self.dialect) from None
        except Exception as e:  # never swallowed: positioned, then raised on
            located = self._located(e)
            if located is e:
                raise
            raise located from None

    def _segment_function(self) -> Callable[[dict], list]:
        render = self.__dict__.get("_segments_render")
        if render is None:
            from . import build

            text = build.segments_module(
                self.source, self.dialect, self.profile, self.name, self.ir
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
        try:
            return self._run(
                conversation_segments, (self, render, messages), options, budget, _DEFAULT
            )
        except Exception as e:  # never swallowed: positioned, then raised on
            located = self._located(e)
            if located is e:
                raise
            raise located from None

    def __repr__(self) -> str:
        return f"<CompiledTemplate {self.name!r} {self.dialect}/{self.profile}>"


def _fast_render(template: "CompiledTemplate", general: Callable[..., Any]) -> Callable[..., Any]:
    """``render`` of a template: a call without ``budget`` or ``limits`` while the template
    keeps the default limits goes straight to the generated function; any other call takes
    the method's way. Errors are positioned the same way. Measured on a one-line template:
    the method cost ~115 ns over the generated function, this entry ~75 ns (a Python frame
    with keyword defaults, the three checks and the try remain)."""
    run = template._render
    jinja = template.dialect == "jinja"
    default_limits = _limits.DEFAULT_LIMITS  # one object, never rebound (the argument default)

    def render(
        context: Optional[dict] = None,
        *,
        budget: Optional[float] = None,
        limits: Any = _DEFAULT,
    ) -> str:
        """The engine's own render of exactly this data (``CompiledTemplate.render``)."""
        if budget is None and limits is _DEFAULT and template.limits is default_limits:
            if context is None and jinja:  # Go data may be nil (JSON null)
                context = {}
            try:  # nested as in the method: a depth error is positioned too
                try:
                    return run(context)
                except RecursionError as e:
                    raise _depth_error(e, template.dialect) from None
            except Exception as e:  # never swallowed: positioned, then raised on
                located = template._located(e)
                if located is e:
                    raise
                raise located from None
        return general(context, budget=budget, limits=limits)

    return render


def _hf_fast_entry(
    template: "CompiledTemplate", entry: Callable[..., Any], general: Callable[..., Any]
) -> Callable[..., Any]:
    """``render_conversation`` of an hf-profile template: the usual call (no budget, the
    template's default limits, no segments) straight to transformers' input handling and the
    render, without the general method's repacking of keywords (~0.6 us of a ~7 us call)."""

    def render_conversation(
        messages: Any, /, *, budget: Optional[float] = None, limits: Any = _DEFAULT, **options: Any
    ) -> Any:
        """transformers' ``render_jinja_template`` for one conversation
        (``CompiledTemplate.render_conversation``)."""
        if (
            budget is None
            and limits is _DEFAULT
            and not options.get("segments")
            and template.limits is _limits.DEFAULT_LIMITS
        ):
            try:
                return entry(messages, **options)
            except RecursionError as e:
                raise _depth_error(e, "jinja") from None
            except Exception as e:  # never swallowed: positioned, then raised on
                located = template._located(e)
                if located is e:
                    raise
                raise located from None
        return general(messages, budget=budget, limits=limits, **options)

    return render_conversation


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
            except Exception as e:  # never swallowed: a Go error positioned, then raised on
                located = template._located(e)
                if located is e:
                    raise
                raise located from None
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
