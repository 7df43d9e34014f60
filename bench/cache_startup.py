"""Start-up benchmark of the compile cache: how long a fresh process takes to get a template ready.

Run ``python -m tmpl2py.bench.cache_startup [TEMPLATE] [--runs N]``. The template defaults to
the largest of ``../shared/corpus/jinja/templates`` (or ``$TMPL2PY_SHARED``). The cache
folder is a fresh temporary one: one process fills it (a full compile, timed once), then
``--runs`` fresh processes each time:

- ``import``: ``import tmpl2py`` (the interpreter's own start is not counted);
- ``ready``: ``tmpl2py.load(path)`` from the cache, up to an object ready to render (read
  the file, key, read and check the entry, unmarshal the code, run the module), then one
  ``apply_chat_template`` to prove it works (not counted).

Medians and the spread are printed in milliseconds, as wall-clock time (``perf_counter``) and
as the process's CPU time (``process_time``): on a machine with more runnable processes than
cores the wall time includes waiting for a core, the CPU time does not. The target for
``ready`` is <= 5 ms. The
processes run with Python's bytecode cache on (as an installed package runs), whatever
``PYTHONDONTWRITEBYTECODE`` says. On a shared, loaded machine the figures are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import tmpl2py
t1, c1 = time.perf_counter(), time.process_time()
t = tmpl2py.load(sys.argv[1])
t2, c2 = time.perf_counter(), time.process_time()
t.apply_chat_template([{"role": "user", "content": "hi"}])
print(json.dumps({"import": t1 - t0, "ready": t2 - t1, "import_cpu": c1 - c0, "ready_cpu": c2 - c1}))
"""


def largest_corpus_template() -> Path:
    root = Path(__file__).resolve().parents[1]
    shared = Path(os.environ.get("TMPL2PY_SHARED") or root.parent / "shared")
    folder = shared / "corpus" / "jinja" / "templates"
    found = sorted(folder.glob("*.jinja"), key=lambda p: (-p.stat().st_size, p.name))
    if not found:
        raise SystemExit(f"no templates in {folder}: pass a TEMPLATE path (or set TMPL2PY_SHARED)")
    return found[0]


def run_child(path: Path, cache_dir: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["TMPL2PY_CACHE_DIR"] = cache_dir
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], env=env, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"the child process failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ms(values: list) -> str:
    values = sorted(v * 1000 for v in values)
    return f"median {statistics.median(values):7.2f} ms  (min {values[0]:.2f}, max {values[-1]:.2f})"


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tmpl2py.bench.cache_startup")
    parser.add_argument("template", nargs="?", help="default: the largest shared corpus template")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    path = Path(args.template) if args.template else largest_corpus_template()
    with tempfile.TemporaryDirectory(prefix="tmpl2py-cache-bench-") as cache_dir:
        first = run_child(path, cache_dir)
        runs = [run_child(path, cache_dir) for _ in range(args.runs)]
    print(f"template: {path} ({path.stat().st_size} bytes)")
    print(f"first process (compiles, fills the cache): ready in {first['ready'] * 1000:.0f} ms")
    print(f"{args.runs} fresh processes from the cache:")
    print(f"  import tmpl2py  wall {_ms([r['import'] for r in runs])}")
    print(f"                  cpu  {_ms([r['import_cpu'] for r in runs])}")
    print(f"  ready           wall {_ms([r['ready'] for r in runs])}   (target <= 5 ms)")
    print(f"                  cpu  {_ms([r['ready_cpu'] for r in runs])}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} on {os.cpu_count()} cores: wall times include waiting for a core")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
