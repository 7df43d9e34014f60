"""The ``tmpl2py`` command line: compile, render (and more subcommands as they land).

Exit codes: 0 success, 1 stale files (``compile --check``) or a render error,
2 usage errors, 3 compile errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence

from .api import PROFILES, generate
from .errors import CompileError

EXTENSIONS = {".jinja": "jinja", ".j2": "jinja", ".jinja2": "jinja", ".gotmpl": "go", ".tmpl": "go"}


def infer_dialect(path: str, explicit: Optional[str]) -> str:
    if explicit:
        return explicit
    suffix = Path(path).suffix.lower()
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    raise SystemExit(f"tmpl2py: cannot tell the dialect of {path!r} from its extension; pass --dialect jinja|go")


def module_name(path: str) -> str:
    stem = Path(path).name.split(".")[0]
    name = "".join(c if (c.isascii() and c.isalnum()) else "_" for c in stem)
    if not name or name[0].isdigit():
        name = "t_" + name
    return name


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


def _display_path(path: str) -> str:
    """The template path as recorded in the generated header (relative when possible)."""
    p = Path(path).resolve()
    try:
        return p.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return p.name


def cmd_compile(args: argparse.Namespace) -> int:
    out_dir = Path(args.output)
    stale: list[str] = []
    status = 0
    for i, path in enumerate(args.templates, 1):
        dialect = infer_dialect(path, args.dialect)
        try:
            text, _ = generate(read_template(path), dialect, args.profile, name=_display_path(path))
        except CompileError as e:
            print(f"tmpl2py: {e}", file=sys.stderr)
            status = 3
            continue
        target = out_dir / f"{module_name(path)}.py"
        if args.check:
            current = target.read_text(encoding="utf-8") if target.exists() else None
            if current != text:
                stale.append(str(target))
            continue
        write_atomic(target, text)
        if len(args.templates) > 5:
            print(f"[{i}/{len(args.templates)}] {target}", file=sys.stderr)
        elif not args.quiet:
            print(target)
    if args.check and stale:
        print("stale generated files (run `tmpl2py compile` again):", file=sys.stderr)
        for s in stale:
            print(f"  {s}", file=sys.stderr)
        return 1
    return status


def _load_context(spec: str) -> Any:
    if spec == "-":
        return json.load(sys.stdin)
    with open(spec, encoding="utf-8") as f:
        return json.load(f)


def cmd_render(args: argparse.Namespace) -> int:
    from .api import compile_template

    dialect = infer_dialect(args.template, args.dialect)
    try:
        template = compile_template(read_template(args.template), dialect, args.profile, name=args.template)
    except CompileError as e:
        print(f"tmpl2py: {e}", file=sys.stderr)
        return 3
    context = _load_context(args.context) if args.context else {}
    try:
        if not args.raw and template.profile in ("hf", "ollama") and isinstance(context, dict) and "messages" in context:
            options = dict(context)
            messages = options.pop("messages")
            if template.profile == "ollama":
                options.pop("source", None)
            text = template.render_conversation(messages, **options)
        else:
            text = template.render(context)
    except Exception as e:  # the template's own error (raise_exception, undefined, ...)
        print(f"tmpl2py: render failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    if args.newline:
        sys.stdout.write("\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tmpl2py", description="Compile LLM chat templates to Python.")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--dialect", choices=sorted(PROFILES), help="template dialect (default: from the extension)")
        p.add_argument("--profile", help="hf|plain for jinja, ollama|plain for go (default: hf / ollama)")

    c = sub.add_parser("compile", help="compile templates into Python modules")
    c.add_argument("templates", nargs="+", metavar="TEMPLATE")
    c.add_argument("-o", "--output", default="generated", help="output folder (default: generated)")
    c.add_argument("--check", action="store_true", help="write nothing; exit 1 and list stale files")
    c.add_argument("-q", "--quiet", action="store_true")
    common(c)
    c.set_defaults(func=cmd_compile)

    r = sub.add_parser("render", help="compile a template and print the prompt for a context")
    r.add_argument("template", metavar="TEMPLATE")
    r.add_argument("--context", metavar="FILE|-", help="JSON context (with 'messages': a conversation)")
    r.add_argument("--raw", action="store_true", help="render the context as-is, without the profile's conversation shaping")
    r.add_argument("--newline", action="store_true", help="print a newline after the prompt")
    common(r)
    r.set_defaults(func=cmd_render)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
