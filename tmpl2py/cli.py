"""The ``tmpl2py`` command line: compile, render, inspect, bench.

Exit codes (also in ``--help``): see ``EXIT_CODES``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional, TextIO

from . import cache as cache_mod
from . import combine
from . import sources as src_mod
from .compiler import __version__
from .compiler.api import PROFILES
from .compiler.errors import CompileError
from .sources import EXTENSIONS, SPECIAL_TOKENS, SourceError, TemplateSource

__all__ = ["EXTENSIONS", "EXIT_CODES", "build_parser", "main", "module_name"]

EXIT_CODES = """\
exit codes:
  0    success
  1    stale generated files (compile --check), or the template raised while rendering
  2    usage errors: bad arguments, unreadable or unrecognised sources, a bad context
  3    compile errors (the template is malformed or unsupported)
  130  interrupted (Ctrl-C)"""


def infer_dialect(path: str, explicit: Optional[str]) -> str:
    if explicit:
        return explicit
    suffix = Path(path).suffix.lower()
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    raise SystemExit(
        f"tmpl2py: cannot tell the dialect of {path!r} from its extension; pass --dialect jinja|go"
    )


def module_name(path: str) -> str:
    return src_mod.module_name(path)


def read_template(path: str) -> str:
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def write_atomic(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never half; the
    mode follows the umask. A file that already holds ``text`` is left alone (its mtime
    kept): returns whether the file was written."""
    try:
        if path.read_bytes() == text.encode("utf-8"):
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    cache_mod.write_atomic(path, text)
    return True


def _error(message: str) -> None:
    print(f"tmpl2py: {message}", file=sys.stderr)


def _input_error(error: Exception) -> int:
    """Print an error in what the user gave; its exit status: 3 for a template that does not
    compile, 2 for a file, a context or an argument."""
    _error(str(error))
    return 3 if isinstance(error, CompileError) else 2


# ----------------------------------------------------------------------------- progress


class Progress:
    """``[i/N] name`` on stderr once a run has taken longer than ``delay`` seconds.

    On a terminal the line is redrawn in place; otherwise a line is written at most
    every ``interval`` seconds. ``always`` shows every step from the start.
    """

    def __init__(self, total: int, stream: Optional[TextIO] = None, delay: float = 1.0,
                 interval: float = 1.0, always: bool = False, clock: Any = time.monotonic) -> None:  # fmt: skip
        self.total = total
        self.stream = stream or sys.stderr
        self.delay = 0.0 if always else delay
        self.interval = 0.0 if always else interval
        self.clock = clock
        self.start = clock()
        self.last: Optional[float] = None
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.shown = False

    def step(self, index: int, label: str) -> None:
        now = self.clock()
        if now - self.start < self.delay:
            return
        if self.last is not None and now - self.last < self.interval and index < self.total:
            return
        self.last = now
        self.shown = True
        text = f"[{index}/{self.total}] {label}"
        if self.tty:
            self.stream.write("\r\x1b[K" + text[:200])
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self, summary: str) -> None:
        if not self.shown:
            return
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"{summary} in {self.clock() - self.start:.1f}s\n")
        self.stream.flush()


# ----------------------------------------------------------------------------- compile


def _expand(inputs: Sequence[str]) -> tuple[list[Path], set[str], list[str]]:
    """Files to compile (folders expanded), the ones found in folders, and missing inputs."""
    files: list[Path] = []
    in_folder: set[str] = set()
    problems: list[str] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            found = src_mod.discover(path)
            if not found:
                problems.append(f"{item}: no template files in this folder")
            files += found
            in_folder.update(str(p) for p in found)
        else:
            files.append(path)
    unique = list(dict.fromkeys(files))
    return unique, in_folder, problems


def compile_sources(
    loaded: Sequence[TemplateSource], profile: Optional[str], standalone: bool
) -> str:
    """The module text for the templates of one file (raises CompileError / ValueError)."""
    text = combine.build_module(loaded, profile)
    if standalone:
        from .standalone import make_standalone

        text = make_standalone(text, loaded[0].text if len(loaded) == 1 else None)
    return text


def _load_all(
    files: Sequence[Path], in_folder: set, dialect: Optional[str], quiet: bool
) -> tuple[dict, int]:
    """Read every file's templates; a folder's files without a template are skipped."""
    loaded: dict[Path, list] = {}
    status = 0
    for path in files:
        try:
            loaded[path] = src_mod.load(path, dialect)
        except SourceError as e:
            if str(path) in in_folder and e.code == "no-template":
                if not quiet:
                    print(f"tmpl2py: skipped {e}", file=sys.stderr)
                continue
            _error(str(e))
            status = 2
    return loaded, status


def cmd_compile(args: argparse.Namespace) -> int:
    out_dir = Path(args.output)
    files, in_folder, problems = _expand(args.templates)
    for p in problems:
        _error(p)
    loaded, status = _load_all(files, in_folder, args.dialect, args.quiet)
    status = max(status, 2 if problems else 0)
    names = src_mod.output_names(list(loaded))
    stale: list[str] = []
    counts = {"ok": 0, "unchanged": 0, "failed": 0}
    progress = Progress(len(loaded), always=args.progress)
    for i, (path, sources) in enumerate(loaded.items(), 1):
        progress.step(i, str(path))
        try:
            text = compile_sources(sources, args.profile, args.standalone)
        except CompileError as e:
            _error(str(e))
            status = max(status, 3)
            counts["failed"] += 1
            continue
        except ValueError as e:  # e.g. --profile hf on a Go template
            _error(f"{path}: {e}")
            status = max(status, 2)
            counts["failed"] += 1
            continue
        counts["ok"] += 1
        target = out_dir / f"{names[str(path)]}.py"
        if args.check:
            current = target.read_text(encoding="utf-8") if target.exists() else None
            if current != text:
                stale.append(str(target))
            continue
        written = write_atomic(target, text)
        counts["unchanged"] += not written
        if not args.quiet and len(loaded) <= 5:
            print(target if written else f"{target} (unchanged)")
    progress.done(_summary(counts, args.check))
    if args.check and stale:
        print("stale generated files (run `tmpl2py compile` again):", file=sys.stderr)
        for s in stale:
            print(f"  {s}", file=sys.stderr)
        return status or 1
    return status


def _summary(counts: dict, check: bool) -> str:
    """``compiled N file(s)[, U unchanged][, F failed]`` (failed files are not counted as compiled)."""
    text = f"{'checked' if check else 'compiled'} {counts['ok']} file(s)"
    if counts["unchanged"]:
        text += f", {counts['unchanged']} unchanged"
    if counts["failed"]:
        text += f", {counts['failed']} failed"
    return text


# ----------------------------------------------------------------------------- render


def _load_context(spec: str) -> dict:
    """The JSON object of ``--context`` (a file, or ``-``: stdin); ``ValueError`` otherwise."""
    try:
        if spec == "-":
            context = json.load(sys.stdin)
        else:
            with open(spec, encoding="utf-8") as f:
                context = json.load(f)
    except RecursionError:  # arrays or objects nested past the decoder's depth
        raise ValueError("the JSON is nested too deeply") from None
    if not isinstance(context, dict):
        raise ValueError(f"the context must be a JSON object, not a JSON {_json_kind(context)}")
    return context


def _json_kind(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def choose_source(
    loaded: Sequence[TemplateSource], name: Optional[str], tools: Any = None
) -> TemplateSource:
    """The template to use: ``name`` if given; the only one; else transformers' rule
    (``tool_use`` when tools are passed and it exists, then ``default``)."""
    by_name = {s.name: s for s in loaded}
    if name is not None:
        if name not in by_name:
            raise SourceError(
                loaded[0].path,
                f"no template named {name!r} (available: {', '.join(by_name)})",
                "no-template",
            )
        return by_name[name]
    if len(loaded) == 1:
        return loaded[0]
    if tools is not None and "tool_use" in by_name:
        return by_name["tool_use"]
    if "default" in by_name:
        return by_name["default"]
    raise SourceError(
        loaded[0].path,
        f"several templates and no default: pass --name ({', '.join(by_name)})",
        "no-template",
    )


def _is_generate_request(context: Any) -> bool:
    """An Ollama /api/generate request: a ``prompt`` key (and no ``messages``)."""
    return isinstance(context, dict) and "prompt" in context and "messages" not in context


def _modelfile_option(options: dict, source: Any) -> None:
    """A Modelfile's SYSTEM / MESSAGE defaults (its handlers' flow, even with none), unless
    the request names its own."""
    defaults = source.modelfile_defaults()
    if defaults is not None:
        options.setdefault("modelfile", defaults)


def _render_generate(template: Any, source: Any, request: dict) -> str:
    """The prompt Ollama builds for an /api/generate request (runtime/go/generate.py)."""
    from .compiler.api import compile_template

    options = dict(request)
    prompt = options.pop("prompt")
    own = options.pop("template", None)
    if own:  # the request's template replaces the model's (Ollama's legacy flow)
        template = compile_template(own, "go", "ollama", name="request template")
        options["template_in_request"] = True
    _modelfile_option(options, source)
    return template.render_generate(prompt, **options)


def cmd_render(args: argparse.Namespace) -> int:
    from .compiler.api import compile_template
    from .loader import read_model

    if args.context is None:
        _error("render needs --context FILE (a JSON object), or --context - to read it from stdin")
        return 2
    try:
        context = _load_context(args.context)
    except (OSError, ValueError) as e:
        _error(f"cannot read the context {args.context}: {e}")
        return 2
    try:
        model = read_model(args.template, args.dialect)
        source = choose_source(list(model.templates.values()), args.name, context.get("tools"))
        template = compile_template(
            source.text, source.dialect, args.profile, name=src_mod.display_name(source),
            cache=None if args.no_cache else True,
        )  # fmt: skip
    except (SourceError, CompileError, ValueError) as e:
        return _input_error(e)
    conversation = not args.raw and template.profile in ("hf", "ollama") and "messages" in context
    tokens = {**model.special_tokens, **_token_flags(args)} if template.dialect == "jinja" else {}
    supplied = set(context) | (set(tokens) if conversation else set())
    _warn_unsupplied_tokens(source, template.profile, supplied)
    generate = not args.raw and template.profile == "ollama" and _is_generate_request(context)
    if generate and args.segments:
        _error("--segments renders chat requests (messages) or, with --raw, the data itself")
        return 2
    segments = {"segments": True} if args.segments else {}  # the same entry, in segments
    try:
        if generate:
            text = _render_generate(template, source, context)
        elif conversation:
            options = dict(context)
            messages = options.pop("messages")
            if template.profile == "ollama":
                options.pop("source", None)
                _modelfile_option(options, source)
            else:  # transformers passes the tokenizer's special tokens; the context wins
                options = {**tokens, **options}
            text = template.render_conversation(messages, **options, **segments)
        else:
            text = template.render_segments(context) if segments else template.render(context)
    except CompileError as e:  # (the segment function is compiled on its first call)
        _error(str(e))
        return 3
    except (
        Exception
    ) as e:  # noqa: BLE001 - the template's own error (raise_exception, undefined, ...)
        from .compiler.positions import describe

        located = describe(e)  # name:line:col: ErrorType: message, the line and a caret
        _error(f"render failed: {type(e).__name__}: {e}")
        if located is not None:
            print(located, file=sys.stderr)
        return 1
    if segments:
        from .segments import format_segments

        text = format_segments(text, as_json=args.json, colour=sys.stdout.isatty())
    sys.stdout.write(text)
    if args.newline:
        sys.stdout.write("\n")
    return 0


def _token_flags(args: argparse.Namespace) -> dict:
    return {
        name: value
        for name, value in (("bos_token", args.bos_token), ("eos_token", args.eos_token))
        if value is not None
    }


def _warn_unsupplied_tokens(source: TemplateSource, profile: Optional[str], supplied: set) -> None:
    """A warning on stderr for each special token the template reads and nothing supplies
    (neither the model's files, nor --bos-token/--eos-token, nor the context)."""
    if source.dialect != "jinja":
        return
    from .inspect import inspect_template

    try:
        read = inspect_template(source.text, source.dialect, source.name, profile).variables
    except CompileError:
        return
    missing = [n for n in read if (n in SPECIAL_TOKENS or n.endswith("_token")) and n not in supplied]
    for name in missing:
        flag = f" --{name.replace('_', '-')}" if name in ("bos_token", "eos_token") else ""
        print(
            f"tmpl2py: warning: the template reads {name}, which nothing supplies (render a model "
            f"folder or tokenizer_config.json, pass{flag or ' it in the context'}); it is undefined",
            file=sys.stderr,
        )


# ----------------------------------------------------------------------------- inspect


def cmd_inspect(args: argparse.Namespace) -> int:
    from .inspect import format_text, inspect_template

    if args.prefix or args.corpus:
        from .prefix_table import inspect_prefix

        return inspect_prefix(args)
    if args.template is None:
        _error("inspect: a TEMPLATE is required")
        return 2
    try:
        loaded = src_mod.load(args.template, args.dialect)
        chosen = [choose_source(loaded, args.name)] if args.name else loaded
        reports = []
        for s in chosen:
            report = inspect_template(s.text, s.dialect, src_mod.display_name(s), args.profile)
            reports.append((s, report))
    except (SourceError, CompileError, ValueError) as e:
        return _input_error(e)
    if args.json:
        sys.stdout.write(_inspect_json(str(args.template), reports))
        return 0
    for i, (s, report) in enumerate(reports):
        if i:
            sys.stdout.write("\n" + "-" * 60 + "\n\n")
        if len(reports) > 1 or s.name != "default":
            sys.stdout.write(f"[{s.name}]\n")
        sys.stdout.write(format_text(report))
        if s.stop:
            sys.stdout.write(f"stop (Modelfile): {', '.join(repr(x) for x in s.stop)}\n")
        if s.special_tokens:
            tokens = ", ".join(f"{k}={v!r}" for k, v in s.special_tokens.items())
            sys.stdout.write(f"special tokens passed by transformers: {tokens}\n")
    return 0


def _inspect_json(template: str, reports: list) -> str:
    docs = []
    for s, report in reports:
        doc = {"name": s.name, "origin": s.origin, **report.as_dict()}
        if s.stop:
            doc["stop"] = list(s.stop)
        if s.special_tokens:
            doc["special_tokens"] = dict(s.special_tokens)
        docs.append(doc)
    payload: Any = docs[0] if len(docs) == 1 else {"source": template, "templates": docs}
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------------------- bench


def cmd_bench(argv: Sequence[str]) -> int:
    from . import bench  # imported lazily: it pulls in optional engines

    return bench.main(list(argv))


# ----------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tmpl2py",
        description="Compile LLM chat templates to Python.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tmpl2py {__version__}")
    sub = parser.add_subparsers(dest="command")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--dialect", choices=sorted(PROFILES), help="template dialect (default: from the file)"
        )
        p.add_argument(
            "--profile", help="hf|plain for jinja, ollama|plain for go (default: hf / ollama)"
        )

    kinds = (
        "a template file, tokenizer_config.json, chat_template.json, a .gguf file or a Modelfile"
    )
    c = sub.add_parser(
        "compile",
        help="compile templates into Python modules",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("templates", nargs="+", metavar="TEMPLATE", help=f"{kinds}, or a folder of them")
    c.add_argument("-o", "--output", default="generated", help="output folder (default: generated)")
    c.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 and list stale files"
    )
    c.add_argument(
        "--standalone",
        action="store_true",
        help="inline the runtime: import only the standard library",
    )
    c.add_argument(
        "--progress", action="store_true", help="always show progress on stderr (default: after 1s)"
    )
    c.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    common(c)
    c.set_defaults(func=cmd_compile)

    r = sub.add_parser(
        "render",
        help="compile a template and print the prompt for a context",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("template", metavar="TEMPLATE", help=f"{kinds}, or a model folder")
    r.add_argument(
        "--context",
        metavar="FILE|-",
        help="required: a JSON object (with 'messages': a conversation); '-' reads it from stdin",
    )
    r.add_argument("--bos-token", help="the bos_token passed to the template (default: the model's)")
    r.add_argument("--eos-token", help="the eos_token passed to the template (default: the model's)")
    r.add_argument(
        "--no-cache", action="store_true", help="do not use the compile cache (TMPL2PY_CACHE_DIR)"
    )
    r.add_argument("--name", help="which named template (default: transformers' choice)")
    r.add_argument(
        "--raw",
        action="store_true",
        help="render the context as-is, without the profile's conversation shaping",
    )
    r.add_argument("--newline", action="store_true", help="print a newline after the prompt")
    r.add_argument(
        "--segments",
        action="store_true",
        help="show where each piece came from (template or data path); --json for JSON",
    )
    r.add_argument("--json", action="store_true", help="with --segments: print JSON")
    common(r)
    r.set_defaults(func=cmd_render)

    i = sub.add_parser(
        "inspect", help="variables, message fields, capabilities and errors of a template"
    )
    i.add_argument("template", metavar="TEMPLATE", nargs="?", help=kinds)
    i.add_argument("--json", action="store_true", help="print JSON")
    i.add_argument(
        "--prefix", action="store_true", help="prefix stability report (tmpl2py.prefix)"
    )
    i.add_argument("--corpus", metavar="DIR", help="--prefix for every template under DIR")
    i.add_argument("--markdown", action="store_true", help="with --corpus: the docs/prefix.md table")
    i.add_argument("--examples", type=int, default=200, help="--prefix: Hypothesis examples per shape")
    i.add_argument("-o", "--output", help="with --corpus: write the table here (atomically)")
    i.add_argument("--name", help="only this named template (default: all)")
    common(i)
    i.set_defaults(func=cmd_inspect)

    sub.add_parser("bench", help="benchmarks (arguments go to tmpl2py.bench.seeds)", add_help=False)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "bench":
            return cmd_bench(argv[1:])
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:  # bare `tmpl2py`: the help
            parser.print_help()
            return 0
        return int(args.func(args))
    except KeyboardInterrupt:
        print("tmpl2py: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
