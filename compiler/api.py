"""The public API: ``compile_template`` and the names around it.

A compile goes through the pipeline (``build``: Lark, the IR, the passes, the emitter), which
is imported only when a module must be made: a template found in the module cache
(``tmpl2py/cache.py``) is ready with the light ``compiled`` module alone. The pipeline's
public functions (``parse``, ``generate``, ``format_module``, ``clear_cache``) are reachable
from here too, imported on first use.
"""

from __future__ import annotations

import gc

from types import CodeType
from typing import Any, Callable, Optional

from .compiled import CompiledTemplate
from .errors import CompileError
from .names import DIALECTS, MAX_DEPTH, MAX_SIZE, PROFILES, default_profile
from .version import build_id
from tmpl2py.runtime import limits as _limits

#: the pipeline's names this module offers, imported from ``build`` on first use
_FROM_BUILD = frozenset(
    {"parse", "generate", "format_module", "clear_cache", "clear_compile_cache", "emitted"}
)

__all__ = [
    "CompileError",
    "CompiledTemplate",
    "DIALECTS",
    "PROFILES",
    "compile_template",
    *sorted(_FROM_BUILD),
]


def __getattr__(name: str) -> Any:
    """``parse``, ``generate`` and the other pipeline functions, from ``build`` on first use."""
    if name in _FROM_BUILD:
        from . import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def compile_template(
    source: str,
    dialect: str = "jinja",
    profile: Optional[str] = None,
    name: Optional[str] = None,
    optimize: bool = True,
    cache: Any = None,
    *,
    limits: Any = _limits.DEFAULT_LIMITS,
    max_size: Optional[int] = MAX_SIZE,
    max_depth: Optional[int] = MAX_DEPTH,
    bounded: bool = True,
) -> CompiledTemplate:
    """Compile a template; raises :class:`CompileError` for a malformed one.

    ``cache``: ``True`` (the user's cache folder), a folder path or a
    ``tmpl2py.cache.ModuleCache`` keeps the generated module across processes (see
    ``tmpl2py/cache.py``); the default ``None`` compiles in memory only.
    ``limits``: the render limits of this template (a ``runtime.limits.Limits``, a dict of
    its fields, None for none; a render's own ``limits=`` replaces them). ``max_size`` /
    ``max_depth``: the compile caps (``CompileError`` ``too-large`` / ``too-deep``).
    ``bounded=False`` leaves the work bounds' code out (no fuel counter, no size guards):
    the benchmarks' baseline for their cost, never for untrusted templates."""
    profile = profile or default_profile(dialect)
    if cache is not None and cache is not False:
        caps = (max_size, max_depth)
        return _compile_cached(
            cache, source, dialect, profile, name, optimize, limits, bounded, caps
        )
    from . import bounds, build

    bounds.check(source, dialect, name, max_size, max_depth)

    # the collector paused for the whole compile, Python's compile() of the module included
    # (as ``build.emitted`` pauses it for the pipeline): a collection's cost grows with the
    # live objects, so collections triggered by a large template's module made compile time
    # grow faster than its size
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        python_source, module, spans = build.emitted(
            source, dialect, profile, name, optimize, bounded
        )
        return _instantiate(
            source, python_source, name, dialect, profile, module, None, optimize, spans, limits
        )
    finally:
        if gc_was_enabled:
            gc.enable()


def _compile_cached(
    cache: Any,
    source: str,
    dialect: str,
    profile: str,
    name: Optional[str],
    optimize: bool,
    limits: Any,
    bounded: bool,
    caps: tuple,
) -> CompiledTemplate:
    """compile_template through the module cache (the key: everything that changes the code,
    and the compile caps ``(max_size, max_depth)``, checked when the entry is built: a hit
    passed them). A hit imports no part of the pipeline; a miss builds the module with it."""
    from tmpl2py.cache import as_cache, entry_inputs, entry_key

    store = as_cache(cache)
    inputs = entry_inputs(
        source,
        dialect=dialect,
        profile=profile,
        name=name,
        optimize=optimize,
        bounded=bounded,
        caps=caps,
        compiler=build_id(),
    )
    built: list = []

    def build() -> tuple[str, CodeType]:
        from . import bounds, build as pipeline_build
        from .names import module_filename

        bounds.check(source, dialect, name, *caps)
        text, module = pipeline_build.generate(  # a file: laid out by black
            source, dialect, profile, name, optimize, None, None, bounded
        )
        built.append(module)
        try:
            return text, compile(text, module_filename(name or "<template>", text), "exec")
        except (SyntaxError, RecursionError) as e:
            raise _python_refused(e, source, name) from None

    def make(text: Callable[[], str], code: CodeType) -> CompiledTemplate:
        module = built[0] if built else None
        return _instantiate(
            source, text, name, dialect, profile, module, code, optimize, None, limits
        )

    return store.get_or_build(entry_key(inputs), inputs, build, make)


def _instantiate(
    source: str,
    python_source: Any,
    name: Optional[str],
    dialect: str,
    profile: str,
    module: Any,
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
