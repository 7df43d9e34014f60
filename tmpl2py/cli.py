"""The ``tmpl2py`` command line: compile, render, inspect, bench.

Exit codes: 0 success, 1 stale files (``compile --check``) or a render error,
2 usage errors and unreadable sources (``SourceError``), 3 compile errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional, TextIO

from . import sources as src_mod
from .compiler.api import PROFILES
from .compiler.errors import CompileError
from .sources import EXTENSIONS, SourceError, TemplateSource

__all__ = ["EXTENSIONS", "build_parser", "main", "module_name"]


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


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _error(message: str) -> None:
    print(f"tmpl2py: {message}", file=sys.stderr)


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
    text = src_mod.build_module(loaded, profile)
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
    progress = Progress(len(loaded), always=args.progress)
    for i, (path, sources) in enumerate(loaded.items(), 1):
        progress.step(i, str(path))
        try:
            text = compile_sources(sources, args.profile, args.standalone)
        except CompileError as e:
            _error(str(e))
            status = max(status, 3)
            continue
        except ValueError as e:  # e.g. --profile hf on a Go template
            _error(f"{path}: {e}")
            status = max(status, 2)
            continue
        target = out_dir / f"{names[str(path)]}.py"
        if args.check:
            current = target.read_text(encoding="utf-8") if target.exists() else None
            if current != text:
                stale.append(str(target))
            continue
        write_atomic(target, text)
        if not args.quiet and len(loaded) <= 5:
            print(target)
    progress.done(f"{'checked' if args.check else 'compiled'} {len(loaded)} file(s)")
    if args.check and stale:
        print("stale generated files (run `tmpl2py compile` again):", file=sys.stderr)
        for s in stale:
            print(f"  {s}", file=sys.stderr)
        return status or 1
    return status


# ----------------------------------------------------------------------------- render


def _load_context(spec: str) -> Any:
    if spec == "-":
        return json.load(sys.stdin)
    with open(spec, encoding="utf-8") as f:
        return json.load(f)


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


def cmd_render(args: argparse.Namespace) -> int:
    from .compiler.api import compile_template

    try:
        context = _load_context(args.context) if args.context else {}
    except (OSError, ValueError) as e:
        _error(f"cannot read the context {args.context}: {e}")
        return 2
    tools = context.get("tools") if isinstance(context, dict) else None
    try:
        source = choose_source(src_mod.load(args.template, args.dialect), args.name, tools)
        template = compile_template(
            source.text, source.dialect, args.profile, name=src_mod.display_name(source)
        )
    except SourceError as e:
        _error(str(e))
        return 2
    except CompileError as e:
        _error(str(e))
        return 3
    except ValueError as e:
        _error(str(e))
        return 2
    if args.segments:
        return _render_segments(template, context, source, args)
    try:
        if (
            not args.raw
            and template.profile in ("hf", "ollama")
            and isinstance(context, dict)
            and "messages" in context
        ):
            options = dict(context)
            messages = options.pop("messages")
            if template.profile == "ollama":
                options.pop("source", None)
            else:  # transformers passes the tokenizer's special tokens; the context wins
                options = {**source.special_tokens, **options}
            text = template.render_conversation(messages, **options)
        else:
            text = template.render(context)
    except (
        Exception
    ) as e:  # noqa: BLE001 - the template's own error (raise_exception, undefined, ...)
        _error(f"render failed: {type(e).__name__}: {e}")
        return 1
    sys.stdout.write(text)
    if args.newline:
        sys.stdout.write("\n")
    return 0


def _render_segments(template: Any, context: Any, source: Any, args: argparse.Namespace) -> int:
    """``render --segments``: the prompt with the origin of each piece (``tmpl2py.segments``)."""
    from .segments import format_segments

    try:
        conversation = isinstance(context, dict) and "messages" in context
        if not args.raw and template.profile == "hf" and conversation:
            options = {**source.special_tokens, **context}
            messages = options.pop("messages")
            segments = template.render_conversation(messages, segments=True, **options)
        else:
            segments = template.render_segments(context)
    except CompileError as e:
        _error(str(e))
        return 3
    except Exception as e:  # noqa: BLE001 - the template's own error, as in cmd_render
        _error(f"render failed: {type(e).__name__}: {e}")
        return 1
    sys.stdout.write(format_segments(segments, as_json=args.json, colour=sys.stdout.isatty()))
    return 0


# ----------------------------------------------------------------------------- inspect


def cmd_inspect(args: argparse.Namespace) -> int:
    from .inspect import format_text, inspect_template

    try:
        loaded = src_mod.load(args.template, args.dialect)
        chosen = [choose_source(loaded, args.name)] if args.name else loaded
        reports = []
        for s in chosen:
            report = inspect_template(s.text, s.dialect, src_mod.display_name(s), args.profile)
            reports.append((s, report))
    except SourceError as e:
        _error(str(e))
        return 2
    except CompileError as e:
        _error(str(e))
        return 3
    except ValueError as e:
        _error(str(e))
        return 2
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
    from .bench import seeds as bench  # imported lazily: it pulls in optional engines

    return int(bench.main(list(argv)))


# ----------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tmpl2py", description="Compile LLM chat templates to Python."
    )
    sub = parser.add_subparsers(dest="command", required=True)

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
    c = sub.add_parser("compile", help="compile templates into Python modules")
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
    c.add_argument("-q", "--quiet", action="store_true")
    common(c)
    c.set_defaults(func=cmd_compile)

    r = sub.add_parser("render", help="compile a template and print the prompt for a context")
    r.add_argument("template", metavar="TEMPLATE", help=kinds)
    r.add_argument(
        "--context", metavar="FILE|-", help="JSON context (with 'messages': a conversation)"
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
    i.add_argument("template", metavar="TEMPLATE", help=kinds)
    i.add_argument("--json", action="store_true", help="print JSON")
    i.add_argument("--name", help="only this named template (default: all)")
    common(i)
    i.set_defaults(func=cmd_inspect)

    sub.add_parser("bench", help="benchmarks (arguments go to tmpl2py.bench.seeds)", add_help=False)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        return cmd_bench(argv[1:])
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
