"""The compiler's version, written into every generated module's header and metadata."""

__version__ = "0.2.0"


def build_id() -> str:
    """``__version__`` and a checksum of the size and modification time of every source file
    of the compiler and the runtime: part of a cache entry's key (``api``), so a cached module
    made by other code under the same version (a development checkout, an editable install
    edited since) is never taken for this one's. Read once per process (~100 ``stat`` calls)."""
    global _BUILD_ID
    if _BUILD_ID is None:
        import os
        import zlib
        from pathlib import Path

        here = Path(__file__).resolve().parent
        parts = []
        for root in (here, here.parent / "runtime"):
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
                for filename in sorted(filenames):
                    if filename.endswith((".py", ".lark")):
                        st = os.stat(os.path.join(dirpath, filename))
                        parts.append(f"{dirpath[len(str(root)):]}/{filename}:{st.st_size}:{st.st_mtime_ns}")
        _BUILD_ID = f"{__version__}+{zlib.crc32(chr(10).join(parts).encode()):08x}"
    return _BUILD_ID


_BUILD_ID = None
