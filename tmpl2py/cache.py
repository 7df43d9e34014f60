"""The compiled-module cache shared by processes: compile a template once per machine, not per start.

Compiling a large template takes seconds (the passes, then black); a server that starts many
workers, or a script run again, should pay for it once. An entry is two files in the cache
folder, named by the entry's key (a sha256 of everything that changes the generated code:
the template's text, dialect, profile, name, ``optimize``, the compiler version, and the
Python version for the code object):

- ``<key>.py``: the generated module, readable, after one header line
  ``# tmpl2py-cache <key> <sha256 of the rest>``;
- ``<key>.<cache_tag>.code``: ``MAGIC``, the sha256 of the ``.py`` text, then the module's
  code object (``marshal``), so a hit skips Python's compile of a ~100 kB module.

Rules: an entry is trusted only when the ``.py`` header names its key and its hash matches
the text, and the ``.code`` file records that same text hash; anything else (truncated,
edited, from another version, or failing to run) is recompiled and rewritten. Files are
written atomically (a temporary file in the same folder, then ``os.replace``), so many
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
from contextlib import contextmanager
from pathlib import Path
from types import CodeType
from typing import Any, Callable, Iterator, Optional, TypeVar, Union

from tmpl2py.compiler.names import sha256_hex
from tmpl2py.runtime.budget import RenderBudgetExceeded

__all__ = ["CacheWarning", "ModuleCache", "as_cache", "default_cache_dir", "entry_key"]

#: Bumped when the entry format changes (old entries are then simply not found).
FORMAT = 2  # 2: keys are the parts' repr (1: their JSON)
MAGIC = b"TMPL2PY-CODE-1\n"
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


def entry_key(**parts: Any) -> str:
    """The key of an entry: a sha256 over the parts (their ``repr``, sorted by name: strings,
    numbers, booleans, None and tuples of them print the same in every process) and the
    Python tag."""
    parts = {**parts, "format": FORMAT, "python": sys.implementation.cache_tag}
    text = repr(sorted(parts.items()))
    return sha256_hex(text)


def _sha(text: str) -> str:
    return sha256_hex(text)


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
        """The entry's (module text, code object), or None when absent or not to be trusted."""
        text_path, code_path = self.paths(key)
        found = self._read_text(text_path, key)
        if found is None:
            return None
        text, sha = found
        code = self._read_code(code_path, sha)
        if code is None:  # a whole text without its code: compile the text, keep the code
            code = compile(text, f"<tmpl2py-cache:{key[:12]}>", "exec")
            self._store(code_path, MAGIC + sha.encode("ascii") + marshal.dumps(code))
        return text, code

    @staticmethod
    def _read_text(path: Path, key: str) -> Optional[tuple[str, str]]:
        """The entry's module text and its sha256, when the header vouches for both."""
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError:
            return None
        head, sep, body = raw.partition(b"\n")
        fields = head.split(b" ")
        if not sep or len(fields) != 4 or head[: len(_HEADER)] != _HEADER.encode("ascii"):
            return None
        sha = sha256_hex(body)
        if fields[2] != key.encode("ascii") or fields[3] != sha.encode("ascii"):
            return None
        try:
            return body.decode("utf-8"), sha
        except UnicodeDecodeError:
            return None

    @staticmethod
    def _read_code(path: Path, text_sha: str) -> Optional[CodeType]:
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError:
            return None
        start = len(MAGIC) + 64
        if raw[: len(MAGIC)] != MAGIC or raw[len(MAGIC) : start] != text_sha.encode("ascii"):
            return None
        try:
            code = marshal.loads(raw[start:])
        except (EOFError, ValueError, TypeError):
            return None
        return code if isinstance(code, CodeType) else None

    # ------------------------------------------------------------------------- writing

    def put(self, key: str, text: str, code: Optional[CodeType] = None) -> CodeType:
        """Store an entry (best effort: a folder that cannot be written warns once). Returns
        the code object of ``text``."""
        if code is None:
            code = compile(text, f"<tmpl2py-cache:{key[:12]}>", "exec")
        text_path, code_path = self.paths(key)
        sha = _sha(text)
        if self._store(text_path, f"{_HEADER}{key} {sha}\n{text}"):
            self._store(code_path, MAGIC + sha.encode("ascii") + marshal.dumps(code))
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
        build: Callable[[], tuple[str, CodeType]],
        make: Callable[[str, CodeType], T],
    ) -> T:
        """``make(text, code)`` of the cached entry; when there is none, or it fails to run
        (``make`` raising), ``build()`` the text and its code, store them and ``make`` that."""
        with _collector_paused():  # unmarshalling makes thousands of objects at once
            hit = self.get(key)
            if hit is not None:
                try:
                    return make(*hit)
                except RenderBudgetExceeded:
                    raise
                except (
                    Exception
                ):  # noqa: BLE001 - an entry that fails to run is rebuilt, never trusted
                    pass
        text, code = build()
        self.put(key, text, code)
        return make(text, code)


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
