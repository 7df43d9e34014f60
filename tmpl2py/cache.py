"""The compiled-module cache shared by processes: compile a template once per machine, not per start.

Compiling a large template takes seconds (the passes, then black); a server that starts many
workers, or a script run again, should pay for it once. An entry is two files in the cache
folder, named by the entry's key. Its *inputs* are everything that changes the generated
code: the template's text, dialect, profile, name, ``optimize``, the work bounds, the compile
caps, the compiler version, and the Python version for the code object (``entry_inputs``);
the key is a checksum of them (``entry_key``).

- ``<key>.py``: the generated module, readable, after one header line
  ``# tmpl2py-cache <key> <checksum of the rest>``;
- ``<key>.<cache_tag>.code``: ``MAGIC``, a line with the key, the ``.py`` text's checksum,
  the payload's checksum and the inputs' length, the inputs, then the payload: the module's
  code object (``marshal``), so a hit skips Python's compile of a ~100 kB module.

Rules: a hit runs the code file alone, and only when it names its key, holds exactly the
inputs asked for (compared byte for byte: no two templates ever share code, whatever their
keys) and its payload matches its checksum. The ``.py`` text is read when first needed (an
error's position, ``python_source``) and trusted only when its header names the key and
its checksum is both the text's and the one the code file records. Anything else
(truncated, edited, a flipped byte, from another version, or failing to run) is
recompiled and rewritten. Checksums and keys are CRC-32 and Adler-32 (``zlib``, already
loaded by every Python; ~20x faster than the standard library's SHA-256, whose import alone
costs a tenth of a hit): they guard against damage, not against an adversary. Whoever can
write the cache folder can write any Python into it, as into ``__pycache__``, so the folder
must be the user's own (the default is).

Files are written atomically (a temporary file in the same folder, then ``os.replace``), so many
processes may read and write one entry at once: each sees an old whole file or a new whole
file, and writers of one key write the same bytes. File modes follow the umask, as files
any tool creates do (``mkstemp`` alone would give 0600).

The folder: ``TMPL2PY_CACHE_DIR``, else ``$XDG_CACHE_HOME/tmpl2py``, else
``~/.cache/tmpl2py``. A folder that cannot be written is not an error: the template is
compiled as without a cache, with one ``CacheWarning``.

This module knows nothing of the compiler: :meth:`ModuleCache.get_or_build` takes the
functions that compile (``build``) and that turn text and code into the result (``make``).
"""

from __future__ import annotations

import gc
import marshal
import os
import sys
import threading
import warnings
import zlib
from contextlib import contextmanager
from pathlib import Path
from types import CodeType
from typing import Any, Callable, Iterator, Optional, TypeVar, Union

from tmpl2py.runtime.limits import RenderLimitExceeded

__all__ = [
    "CacheWarning",
    "ModuleCache",
    "as_cache",
    "default_cache_dir",
    "entry_inputs",
    "entry_key",
]

#: Bumped when the entry format changes (old entries are then simply not found).
FORMAT = 3  # 3: keys and checksums from zlib, inputs recorded (2: SHA-256; 1: JSON keys)
MAGIC = b"TMPL2PY-CODE-3\n"
_HEADER = "# tmpl2py-cache "

T = TypeVar("T")


class CacheWarning(UserWarning):
    """The cache folder cannot be written (the template is compiled without the cache)."""


def default_cache_dir() -> Path:
    """``TMPL2PY_CACHE_DIR``, else ``$XDG_CACHE_HOME/tmpl2py``, else ``~/.cache/tmpl2py``."""
    explicit = os.environ.get("TMPL2PY_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec: a relative value is ignored
        return Path(xdg) / "tmpl2py"
    return Path.home() / ".cache" / "tmpl2py"


def entry_inputs(source: str, **parts: Any) -> bytes:
    """Everything that changes an entry's code, as bytes: the parts (their ``repr``, sorted by
    name: strings, numbers, booleans, None and tuples of them print the same in every
    process), the Python tag, the entry format, then the template text itself."""
    parts = {**parts, "format": FORMAT, "python": sys.implementation.cache_tag}
    head = repr(sorted(parts.items()))
    return f"{head}\n{source}".encode("utf-8", "surrogatepass")


def entry_key(inputs: bytes) -> str:
    """The key of an entry: CRC-32 and Adler-32 of its inputs, and their length, in hex. Not a
    cryptographic hash, and it need not be: an entry records its whole inputs and a hit
    compares them byte for byte (two inputs that share a key only take turns in one entry)."""
    return f"{zlib.crc32(inputs):08x}{zlib.adler32(inputs):08x}{len(inputs):x}"


def checksum(data: Union[str, bytes]) -> str:
    """The CRC-32 of ``data`` (text as UTF-8, lone surrogates kept), as 8 hex digits."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}"


def _code_file(key: str, text_sum: str, code: CodeType, inputs: bytes) -> bytes:
    """A code file: ``MAGIC``, a line ``<key> <text checksum> <payload checksum> <inputs
    length>``, the inputs, then the payload (the marshalled code object)."""
    payload = marshal.dumps(code)
    line = f"{key} {text_sum} {checksum(payload)} {len(inputs)}\n"
    return MAGIC + line.encode("ascii") + inputs + payload


_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask (from /proc where it can be read; else set and restored under a lock)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def write_atomic(path: Path, data: Union[str, bytes]) -> None:
    """Write ``data`` to ``path``: a temporary file beside it, mode ``0o666 & ~umask``, renamed
    into place (readers see the old file or the new one, never half)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    import tempfile  # writing only: a cache hit reads

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~current_umask())
            f.write(raw)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class ModuleCache:
    """Compiled modules in one folder (see the module docstring)."""

    def __init__(self, directory: Union[str, "os.PathLike[str]", None] = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self._warned = False

    def __repr__(self) -> str:
        return f"<ModuleCache {str(self.directory)!r}>"

    def paths(self, key: str) -> tuple[Path, Path]:
        """The entry's module text and code files."""
        tag = sys.implementation.cache_tag or "py"
        return self.directory / f"{key}.py", self.directory / f"{key}.{tag}.code"

    # ------------------------------------------------------------------------- reading

    def get(self, key: str) -> Optional[tuple[str, CodeType]]:
        """The entry stored under ``key`` as (module text, code object), both files checked,
        or None (for inspection: a compile's hit, :meth:`get_or_build`, also compares the
        inputs, and reads the text only when asked)."""
        text_path, code_path = self.paths(key)
        found = self._read_text(text_path, key)
        if found is None:
            return None
        text, text_sum = found
        code = self._read_code(code_path, key)
        if code is None or code[0] != text_sum:
            return None
        return text, code[2]

    def inputs_of(self, key: str) -> Optional[bytes]:
        """What the entry under ``key`` was built from (``entry_inputs``), or None."""
        found = self._read_code(self.paths(key)[1], key)
        return found[1] if found is not None else None

    def get_code(self, key: str, inputs: bytes) -> Optional[tuple[str, CodeType]]:
        """The entry's (text checksum, code object) from its code file alone, when it was
        built from ``inputs``; else None."""
        found = self._read_code(self.paths(key)[1], key)
        if found is None or found[1] != inputs:
            return None
        return found[0], found[2]

    def get_text(self, key: str, text_sum: str) -> Optional[str]:
        """The entry's module text, when it is the text whose checksum the code file holds."""
        found = self._read_text(self.paths(key)[0], key)
        return found[0] if found is not None and found[1] == text_sum else None

    @staticmethod
    def _read_text(path: Path, key: str) -> Optional[tuple[str, str]]:
        """The entry's module text and its checksum, when the header vouches for both."""
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError:
            return None
        head, sep, body = raw.partition(b"\n")
        fields = head.split(b" ")
        if not sep or len(fields) != 4 or head[: len(_HEADER)] != _HEADER.encode("ascii"):
            return None
        text_sum = checksum(body)
        if fields[2] != key.encode("ascii") or fields[3] != text_sum.encode("ascii"):
            return None
        try:
            return body.decode("utf-8"), text_sum
        except UnicodeDecodeError:
            return None

    @staticmethod
    def _read_code(path: Path, key: str) -> Optional[tuple[str, bytes, CodeType]]:
        """The code file's (text checksum, inputs, code object), when its key is ``key`` and
        its payload matches its checksum; else None."""
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError:
            return None
        if raw[: len(MAGIC)] != MAGIC:
            return None
        line, sep, rest = raw[len(MAGIC) : len(MAGIC) + 200].partition(b"\n")
        fields = line.split(b" ")
        if not sep or len(fields) != 4 or fields[0] != key.encode("ascii"):
            return None
        try:
            length = int(fields[3])
            text_sum = fields[1].decode("ascii")
        except (ValueError, UnicodeDecodeError):
            return None
        start = len(MAGIC) + len(line) + 1
        inputs, payload = raw[start : start + length], raw[start + length :]
        if len(inputs) != length or fields[2] != checksum(payload).encode("ascii"):
            return None
        try:
            code = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return None
        if not isinstance(code, CodeType):
            return None
        return text_sum, inputs, code

    # ------------------------------------------------------------------------- writing

    def put(
        self, key: str, text: str, code: Optional[CodeType] = None, inputs: bytes = b""
    ) -> CodeType:
        """Store an entry built from ``inputs`` (best effort: a folder that cannot be written
        warns once). Returns the code object of ``text``."""
        if code is None:
            code = compile(text, f"<tmpl2py-cache:{key[:12]}>", "exec")
        text_path, code_path = self.paths(key)
        text_sum = checksum(text)
        if self._store(text_path, f"{_HEADER}{key} {text_sum}\n{text}"):
            self._store(code_path, _code_file(key, text_sum, code, inputs))
        return code

    def _store(self, path: Path, data: Union[str, bytes]) -> bool:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
            return True
        except OSError as e:
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"tmpl2py: cannot write the compile cache {self.directory} ({e.strerror or e}); "
                    "compiling without it (set TMPL2PY_CACHE_DIR to a writable folder)",
                    CacheWarning,
                    stacklevel=4,
                )
            return False

    # ------------------------------------------------------------------------- both

    def get_or_build(
        self,
        key: str,
        inputs: bytes,
        build: Callable[[], tuple[str, CodeType]],
        make: Callable[[Callable[[], str], CodeType], T],
    ) -> T:
        """``make(text, code)`` of the entry built from ``inputs``; when there is none, or it fails to run
        (``make`` raising), ``build()`` the text and its code, store them and ``make`` that.

        ``text`` is a function returning the module text: a hit reads the code file alone,
        and the text (needed for an error's position, ``python_source``) when first asked;
        a text that is missing or not the one the code was compiled from is built again."""
        with _collector_paused():  # unmarshalling makes thousands of objects at once
            hit = self.get_code(key, inputs)
            if hit is not None:
                text_sum, code = hit

                def text() -> str:
                    found = self.get_text(key, text_sum)
                    if found is None:
                        found, again = build()
                        self.put(key, found, again, inputs)
                    return found

                try:
                    return make(text, code)
                except RenderLimitExceeded:  # a limit is never taken for damage
                    raise
                except (
                    Exception
                ):  # noqa: BLE001 - an entry that fails to run is rebuilt, never trusted
                    pass
        built_text, code = build()
        self.put(key, built_text, code, inputs)
        return make(lambda: built_text, code)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while an entry is read and run: the code objects and
    constants of a large module would otherwise set off several collections (~10 ms of a
    ~1.5 ms load). Left as found when the caller had it off."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def as_cache(cache: Any) -> ModuleCache:
    """``True`` -> the default folder; a path -> that folder; a :class:`ModuleCache` as is."""
    if isinstance(cache, ModuleCache):
        return cache
    if cache is True:
        return ModuleCache()
    if isinstance(cache, (str, os.PathLike)):
        return ModuleCache(cache)
    raise TypeError(
        f"cache must be True, a folder path or a tmpl2py.cache.ModuleCache, not {type(cache).__name__}"
    )
