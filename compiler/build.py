"""The pipeline behind ``compile_template``: frontend (Lark) -> IR -> passes -> emitter text,
and black's layout of that text where a file is written.

black lays a module out only where its text is asked for (``generate``, which writes files,
and ``CompiledTemplate.python_source``), never on the way to a render function. Every step is
a pure function of its arguments, memoised per process (a server that compiles the same
template per request, and the test suite, pay for it once). Errors are attached to the source
(excerpt, template name) here, once. A template loaded from the module cache never imports
this module (``compiled``).
"""

from __future__ import annotations

import functools
import gc
import hashlib
from typing import Any, Optional

from . import bounds, ir
from .emit import MODULE_HEADER, emit_with_spans
from .errors import CompileError, attached_to
from .names import DIALECTS, PROFILES, default_profile, header_safe
from .passes import pipeline
from .unparse import QUOTES_STRINGS
from .version import __version__


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
    bounded: bool = True,
) -> tuple[str, ir.Module]:
    """Source -> (formatted Python module text, final IR).

    ``max_size`` / ``max_depth`` cap the template's characters and block nesting
    (``CompileError`` ``too-large`` / ``too-deep``; None: no cap; see ``bounds``);
    ``bounded`` as for ``emitted``."""
    bounds.check(source, dialect, name, max_size, max_depth)
    text, module = emitted(source, dialect, profile, name, optimize, bounded)[:2]
    try:
        return formatted(text), module
    except CompileError as e:
        raise e.with_source(source, name or "<template>") from None


def clear_cache() -> None:
    """Forget every memoised compilation and layout: the next compile is a real one."""
    emitted.cache_clear()
    formatted.cache_clear()


clear_compile_cache = clear_cache  # the benchmarks' name for it


@functools.lru_cache(maxsize=256)
def formatted(text: str) -> str:
    try:
        return format_module(text, strings_quoted=QUOTES_STRINGS)
    except RecursionError:
        raise CompileError("too-deep", "template nesting is too deep to format", 0, 0) from None


@functools.lru_cache(maxsize=256)
def emitted(
    source: str,
    dialect: str,
    profile: Optional[str],
    name: Optional[str],
    optimize: bool,
    bounded: bool = True,
) -> tuple[str, ir.Module, tuple]:
    """Source -> (the emitter's module text, not yet laid out by black; final IR; the
    emitter's statement spans of that text, for render-error positions).

    ``bounded=False`` leaves the work bounds out of the code (no fuel counter, no size
    guards: ``runtime/limits``): the benchmarks' baseline for what the bounds cost, never a
    way to render untrusted templates.

    The cyclic garbage collector is paused meanwhile: a compile makes many objects that stay
    alive and little garbage, and the collections it triggers cost ~20% of the time."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _generate_text(source, dialect, profile, name, optimize, bounded)
    finally:
        if gc_was_enabled:
            gc.enable()


def _generate_text(
    source: str,
    dialect: str,
    profile: Optional[str],
    name: Optional[str],
    optimize: bool,
    bounded: bool,
) -> tuple[str, ir.Module, tuple]:
    profile = profile or default_profile(dialect)
    if dialect not in PROFILES:
        raise ValueError(f"unknown dialect {dialect!r} (expected one of {', '.join(DIALECTS)})")
    if profile not in PROFILES[dialect]:
        raise ValueError(
            f"unknown profile {profile!r} for {dialect} (expected one of {', '.join(PROFILES[dialect])})"
        )
    name = name or "<template>"
    try:
        return _generated(source, dialect, profile, name, optimize, bounded)
    finally:
        ir.forget_walks()


def _generated(
    source: str, dialect: str, profile: str, name: str, optimize: bool, bounded: bool
) -> tuple[str, ir.Module, tuple]:
    with attached_to(source, name):
        module = parse(source, dialect, name, profile)
        module = pipeline.run(module, profile=profile, optimize=optimize)
    sha = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    header = module_header(name, sha, dialect, profile)
    metadata = {
        "TEMPLATE_NAME": name,
        "SOURCE_SHA256": sha,
        "DIALECT": dialect,
        "PROFILE": profile,
        "COMPILER_VERSION": __version__,
    }
    metadata.update(dict(module.meta))
    with attached_to(source, name):
        # the size guards are for the code that runs (the IR stays readable for inspection)
        final = pipeline.before_emit(module, bounded=bounded, optimize=optimize)
        text, spans = emit_with_spans(final, header, metadata, fuel=bounded)
    return text, module, spans


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


def module_header(name: str, sha256: str, dialect: str, profile: str) -> str:
    """The comment lines a generated module starts with (its source, hash and compiler)."""
    return MODULE_HEADER.format(
        version=__version__,
        source=header_safe(name),
        sha256=sha256,
        dialect=dialect,
        profile=profile,
    )


def segments_module(source: str, dialect: str, profile: str, name: str, final: ir.Module) -> str:
    """The text of the segment renderer's module (``emit_segments``) for this template."""
    from .emit_segments import generate_segments

    sha = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    header = module_header(name, sha, dialect, profile)
    return generate_segments(source, dialect, profile, name, header, final=final)
