"""The differential-testing harness both dialects share.

A dialect (``differential.py`` for Jinja vs transformers, ``go/godiff.py`` for Go templates vs
tests/goref) supplies its strategies, its reference and its comparison rules (what counts as
the same outcome); everything else is here:

* running one side under a deadline and classifying how it ended (``attempt``, ``rendered``,
  ``Outcome``, ``Timeout``, ``where``);
* the checks that do not depend on a reference: two compilations give the same module
  (``compilations_differ``), the generated module compiles and imports only the runtime and
  the standard library (``generated_module_problem``);
* the Hypothesis profiles of a property (``profile``, ``register_budgets``) and reporting a
  divergence: fail with the case, or append it to ``TMPL2PY_DIVERGENCE_LOG`` (``Reporter``);
* shrinking a logged case (``ddmin``, ``reduce_source``) and the regression-case files
  (``case_text``, ``write_case``, ``read_case``, ``case_params``: a JSON head, a line
  ``---``, the template's exact text).
"""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

TIMEOUT_S = 10.0
PROFILE = os.environ.get("TMPL2PY_HYPOTHESIS_PROFILE", "ci")
if PROFILE not in ("ci", "deep"):
    PROFILE = "ci"
LOG = os.environ.get("TMPL2PY_DIVERGENCE_LOG")

# ----------------------------------------------------------------------------- running a side


class Timeout(BaseException):
    """A side took longer than TIMEOUT_S (a BaseException: templates never catch it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise Timeout()


class deadline:
    """Raise ``Timeout`` in the block after ``seconds`` (main thread only; elsewhere no limit)."""

    def __init__(self, seconds: Optional[float] = None) -> None:
        self.seconds = TIMEOUT_S if seconds is None else seconds  # read now: a run may raise it

    def __enter__(self) -> None:
        self.active = (
            hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        )
        if self.active:
            self.previous = signal.signal(signal.SIGALRM, _on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc: Any) -> None:
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


@dataclass
class Outcome:
    """How one side ended. ``kind``: ``ok`` or ``timeout`` here; the dialect names the
    failures (``compile-error``/``error`` for Jinja, ``parse``/``exec``/``request``/``internal``
    for Go). ``value``: the text (ok), else the exception class or message; ``where``: ours
    only, the innermost frame that raised."""

    kind: str
    value: str = ""
    message: str = ""
    where: str = ""

    def short(self) -> str:
        if self.kind == "ok":
            v = self.value if len(self.value) < 400 else self.value[:400] + "..."
            return f"ok: {v!r}"
        parts = [p for p in (self.value, self.message) if p]
        text = ": ".join(parts)
        text = text if len(text) < 300 else text[:300] + "..."
        at = f" [at {self.where}]" if self.where else ""
        return f"{self.kind}: {text}{at}"


def attempt(fn: Callable[[], Any], on_error: Callable[[Exception], Outcome]) -> Any:
    """``fn()`` under the deadline; ``Outcome("timeout")``, or ``on_error(exc)`` for the
    exception it raised (the dialect classifies it: every exception is an outcome here)."""
    try:
        with deadline():
            return fn()
    except Timeout:
        return Outcome("timeout")
    except Exception as e:  # noqa: BLE001 (classified by the dialect, never hidden)
        return on_error(e)


def rendered(fn: Callable[[], str], on_error: Callable[[Exception], Outcome]) -> Outcome:
    """``Outcome("ok", fn())``, or how it failed (see ``attempt``)."""
    return attempt(lambda: Outcome("ok", fn()), on_error)


_MARKERS = ("/compiler/", "/runtime/", "/jinja2/", "/transformers/", "/lark/", "/black/")


def where(exc: BaseException) -> str:
    """The innermost traceback frame, as ``file:line in function`` (path from the package)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    name = f.filename
    for marker in _MARKERS:
        if marker in name:
            name = marker.strip("/") + "/" + name.split(marker, 1)[1]
            break
    return f"{name}:{f.lineno} in {f.name}"


def message_of(exc: BaseException) -> str:
    """``str(exc)``; a broken ``__str__`` is itself reported, not raised."""
    try:
        return str(exc)
    except Exception as e:  # noqa: BLE001 (a broken __str__ is itself a finding)
        return f"<str() failed: {type(e).__name__}>"


def skip_black_from_env(*names: str) -> None:
    """When one of the environment variables ``names`` is ``1``, compile without black (the
    emitted module is compiled as it is: the same semantics, black only lays it out). Only
    for long exploratory runs, where black is most of a compile; never set in ci."""
    if "1" in (os.environ.get(n) for n in names):
        import tmpl2py.compiler.api as api

        api.format_module = lambda text, strings_quoted=False: text


# ----------------------------------------------------------------------------- reference-free checks


def compilations_differ(first: Any, second: Any) -> Optional[str]:
    """Two compilations of one template: None when they agree (the same failure, or the
    same ``python_source``), else what differs."""
    if isinstance(first, tuple) or isinstance(second, tuple):
        return None if first == second else f"compile outcomes differ: {first!r} / {second!r}"
    if first.python_source != second.python_source:
        import difflib

        diff = "\n".join(
            difflib.unified_diff(
                first.python_source.splitlines(),
                second.python_source.splitlines(),
                lineterm="",
                n=1,
            )
        )
        return f"python_source differs between two compilations:\n{diff}"
    return None


def allowed_import(module: str) -> bool:
    """A generated module imports the runtime (``tmpl2py.runtime``) and the stdlib only."""
    if module == "tmpl2py.runtime" or module.startswith("tmpl2py.runtime."):
        return True
    top = module.split(".")[0]
    return top == "__future__" or top in sys.stdlib_module_names


def generated_module_problem(python_source: str) -> Optional[str]:
    """None when the generated module compiles, imports only what ``allowed_import``
    allows and defines a top-level ``render``; else the problem."""
    try:
        compile(python_source, "<generated>", "exec")
        tree = ast.parse(python_source)
    except SyntaxError as e:
        return f"the generated module does not compile: {e}"
    bad = [
        name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for name in (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        )
        if not allowed_import(name)
    ]
    if bad:
        return f"the generated module imports {bad}"
    if not any(isinstance(n, ast.FunctionDef) and n.name == "render" for n in tree.body):
        return "the generated module has no top-level render() function"
    return None


# ----------------------------------------------------------------------------- profiles, reports


def register_budgets(budgets: dict, scale: float) -> None:
    """Register ``<profile>.<property>`` Hypothesis profiles from ``{profile: {prop: n}}``
    (on top of the base profiles ``ci`` and ``deep``, tests/property/conftest.py);
    ``TMPL2PY_HYPOTHESIS_EXAMPLES="render=5000,corpus=100"`` overrides single budgets."""
    from hypothesis import settings

    for item in filter(None, os.environ.get("TMPL2PY_HYPOTHESIS_EXAMPLES", "").split(",")):
        prop, _, n = item.partition("=")
        if prop.strip() in budgets.get(PROFILE, {}):
            budgets[PROFILE][prop.strip()] = int(n)
    for name, table in budgets.items():
        for prop, n in table.items():
            settings.register_profile(
                f"{name}.{prop}", settings.get_profile(name), max_examples=max(1, int(n * scale))
            )


def profile(prop: str) -> Any:
    """The settings of one property under the current profile (``@profile("render")``)."""
    from hypothesis import settings

    return settings(settings.get_profile(f"{PROFILE}.{prop}"))


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


class Reporter:
    """Fails a property with a readable case, or (with ``TMPL2PY_DIVERGENCE_LOG``) appends
    it to the log as one JSON line and goes on. ``signature(ref, ours)`` and the names of the
    data and reference fields (``context``/``reference``, ``data``/``go``) are the dialect's."""

    def __init__(self, signature: Callable[[Any, Any], str], data_key: str, ref_key: str) -> None:
        self.signature = signature
        self.data_key = data_key
        self.ref_key = ref_key
        self.counts: dict = {}

    def progress(self, prop: str) -> None:
        """Count examples per property (written to ``<log>.progress.<pid>`` in logging mode)."""
        self.counts[prop] = self.counts.get(prop, 0) + 1
        if LOG and self.counts[prop] % 100 == 0:
            with open(f"{LOG}.progress.{os.getpid()}", "w", encoding="utf-8") as fh:
                json.dump(self.counts, fh)

    def report(
        self,
        prop: str,
        problem: Optional[str],
        source: str,
        data: Any = None,
        ref: Optional[Outcome] = None,
        ours: Optional[Outcome] = None,
        label: str = "",
        **fields: Any,
    ) -> None:
        if problem is None:
            return
        if LOG:
            self._log(prop, problem, source, data, ref, ours, fields)
            return
        import pytest

        shown = (
            json.dumps(data, ensure_ascii=False, default=repr, indent=1) if data is not None else ""
        )
        head = f"template ({label})" if label else "template"
        pytest.fail(
            f"{problem}\n--- {head} ---\n{source}\n--- {self.data_key} ---\n{shown}", pytrace=False
        )

    def _log(self, prop: str, problem: str, source: str, data: Any, ref: Any, ours: Any,
             fields: dict) -> None:
        record = {
            "property": prop,
            **fields,
            "signature": self.signature(ref, ours) if ref and ours else problem.split("\n")[0][:200],
            "problem": problem,
            "template": source,
            self.data_key: _jsonable(data),
            self.ref_key: ref.short() if ref else None,
            "ours": ours.short() if ours else None,
        }
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def corpus_params(folder: Path, pattern: str) -> list:
    """One pytest param per corpus template, or one skipped param naming the missing folder."""
    import pytest

    if not folder.is_dir():
        reason = f"shared corpus not found at {folder}"
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="no-shared-corpus")]
    return [pytest.param(p, id=p.stem) for p in sorted(folder.glob(pattern))]


# ----------------------------------------------------------------------------- shrinking


def ddmin(items: list, keep: Callable[[list], bool], allow_empty: bool = True) -> list:
    """Delta debugging: a 1-minimal sublist of ``items`` for which ``keep`` holds."""
    n = 2
    while len(items) >= 2:
        chunk = max(1, len(items) // n)
        reduced = False
        for start in range(0, len(items), chunk):
            candidate = items[:start] + items[start + chunk :]
            if (candidate or allow_empty) and keep(candidate):
                items, n, reduced = candidate, max(n - 1, 2), True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(items), n * 2)
    return items


def reduce_source(
    source: str, ok: Callable[[str], bool], segment: "re.Pattern[str]", allow_empty: bool = True
) -> str:
    """``source`` shrunk while ``ok`` holds: whole segments (tags, text runs) first, then
    single characters."""
    segments = segment.findall(source)
    if "".join(segments) != source:
        segments = [source]
    source = "".join(ddmin(segments, lambda s: ok("".join(s)), allow_empty))
    return "".join(ddmin(list(source), lambda cs: ok("".join(cs)), allow_empty))


# ----------------------------------------------------------------------------- regression cases


def case_text(head: Any, source: str) -> str:
    """A regression case: the JSON head, a line ``---``, the template's exact text."""
    return json.dumps(head, ensure_ascii=False) + "\n---\n" + source


def write_case(path: Path, head: Any, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(case_text(head, source).encode("utf-8", "surrogateescape"))
    os.replace(tmp, path)  # never a half-written case
    return path


def read_case(path: Path) -> tuple:
    """(head, source) of a case file written by ``write_case``."""
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    head, sep, source = text.partition("\n---\n")
    if not sep:
        raise ValueError(f"{path}: no '---' line between the JSON head and the template")
    return json.loads(head), source


def case_params(folder: Path, known: Iterable[str]) -> list:
    """One pytest param per case file of ``folder``; ``known`` divergences are strict xfails."""
    import pytest

    known = set(known)
    params = []
    for path in sorted(folder.glob("*.txt")):
        marks = []
        if path.name in known:
            marks.append(pytest.mark.xfail(strict=True, reason="known divergence, not fixed yet"))
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params or [pytest.param(None, marks=pytest.mark.skip(reason="no cases"), id="none")]
