"""Long-running compiler fuzzer (issue: untrusted templates). Not collected by pytest.

    python tests/fuzz/fuzz_compiler.py --count 1000000 --workers 2

Inputs: mutations of real templates (the shared corpus when present, else the project's
examples and case files) and random text built from template syntax fragments. Each input
goes through the frontend, the passes, the emitter and ``compile()``; one in ``--full-every``
also through black and a render under the default limits (no budget: the limits alone must
stop it). Anything other than ``CompileError`` (or, for renders, an error the template itself
raises, limit errors included) is a failure: it is saved under ``tests/fuzz/crashes/``. An
input that takes longer than ``--timeout`` seconds is a hang; a render that takes longer than
``--slow`` seconds (one second: the limits' promise) is saved as ``slow``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import signal
import sys
import os
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

FRAGMENTS = [
    "{{", "}}", "{%", "%}", "{#", "#}", "{%-", "-%}", "{{-", "-}}", "{%+", "+%}", " if ", " for ", " in ",
    " endif ", " endfor ", " else ", " elif ", " set ", " macro ", " endmacro ", " call ", " endcall ",
    " filter ", " endfilter ", " raw ", " endraw ", " generation ", " endgeneration ", " break ", " continue ",
    " recursive ", "loop.index", "loop", "(", ")", "[", "]", "{", "}", ",", ":", ".", "|", "~", "+", "-",
    "*", "/", "//", "%", "**", "==", "!=", "<", ">=", " and ", " or ", " not ", " is ", " defined ", "'",
    '"', "\\", "\n", "\r\n", "\r", "\t", " ", "x", "messages", "m.role", "0", "1.5", "1e3", "0x1f",
    "none", "true", "'a'", '"b\\n"', "|trim", "|tojson", "|default(1)", "namespace(", "range(", "caller()",
    "{{ .Messages }}", "{{ range . }}", "{{ end }}", "{{ if .X }}", "{{ else }}", "{{ $x := 1 }}", "{{/* c */}}",
    "{{- ", " -}}", "`raw`", "'c'", "$", "$x", "printf", " eq ", "\x00", "é", "\U0001F600", "\u2028",
]


def corpus() -> list[tuple[str, str]]:
    out = []
    shared = Path(os.environ.get("TMPL2PY_SHARED") or ROOT.parent / "shared") / "corpus"
    for sub, ext, dialect in (("jinja", "*.jinja", "jinja"), ("gotmpl", "*.gotmpl", "go")):
        folder = shared / sub / "templates"
        if folder.exists():
            out += [(p.read_bytes().decode("utf-8", "surrogateescape"), dialect) for p in sorted(folder.glob(ext))]
    for p in sorted((ROOT / "examples").glob("*.*")):
        if p.suffix in (".jinja", ".gotmpl"):
            out.append((p.read_text(encoding="utf-8"), "go" if p.suffix == ".gotmpl" else "jinja"))
    for p in sorted((ROOT / "tests" / "corpus" / "cases").glob("*.txt")):
        out.append((p.read_text(encoding="utf-8").partition("\n---\n")[2], "jinja"))
    return out


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        i = rng.randint(0, len(text))
        if op < 0.3 and text:  # delete a span
            j = min(len(text), i + rng.randint(1, 40))
            text = text[:i] + text[j:]
        elif op < 0.6:  # insert a fragment
            text = text[:i] + rng.choice(FRAGMENTS) + text[i:]
        elif op < 0.8 and text:  # duplicate a span
            j = min(len(text), i + rng.randint(1, 80))
            text = text[:i] + text[i:j] + text[i:]
        else:  # swap with another spot
            j = rng.randint(0, len(text))
            a, b = sorted((i, j))
            text = text[:a] + text[b:] + text[a:b]
    return text


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 30)))


class Hang(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise Hang()


def worker(args: tuple) -> dict:
    seed, count, full_every, timeout, crash_dir, slow, stop_at = args
    from tmpl2py.compiler import CompileError, api
    from tmpl2py.compiler.emit import emit
    from tmpl2py.compiler.passes import pipeline
    from tmpl2py.runtime.limits import RenderLimitExceeded

    signal.signal(signal.SIGALRM, _alarm)
    rng = random.Random(seed)
    seeds = corpus()
    stats = {"inputs": 0, "compile_errors": 0, "compiled": 0, "full": 0, "limit_errors": 0, "failures": 0,
             "hangs": 0, "slow": 0}
    for n in range(count):
        if time.time() > stop_at:
            break
        if rng.random() < 0.8:
            base, dialect = rng.choice(seeds)
            source = mutate(rng, base)
        else:
            source, dialect = random_text(rng), rng.choice(("jinja", "go"))
        stats["inputs"] += 1
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            if n % full_every == 0:
                stats["full"] += 1
                t = api.compile_template(source, dialect=dialect)
                start = time.perf_counter()
                try:
                    t.render({"messages": [{"role": "user", "content": "hi"}]})
                except RenderLimitExceeded:
                    stats["limit_errors"] += 1
                except Exception as e:  # noqa: BLE001 - a template may fail; our internals must not
                    if _internal(e):
                        raise
                if time.perf_counter() - start > slow:
                    stats["slow"] += 1
                    _save(crash_dir, "slow", seed, n, source, dialect, f"{time.perf_counter() - start:.2f} s")
            else:
                module = pipeline.run(api.parse(source, dialect), profile=api.PROFILES[dialect][0])
                compile(emit(module, "", {}), "<fuzz>", "exec")
            stats["compiled"] += 1
        except CompileError:
            stats["compile_errors"] += 1
        except Hang:
            stats["hangs"] += 1
            _save(crash_dir, "hang", seed, n, source, dialect, "")
        except Exception as e:  # noqa: BLE001
            if isinstance(getattr(e, "orig_exc", None), Hang):  # Lark wraps it (VisitError)
                stats["hangs"] += 1
                _save(crash_dir, "hang", seed, n, source, dialect, "")
                continue
            stats["failures"] += 1
            _save(crash_dir, "crash", seed, n, source, dialect, traceback.format_exc())
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return stats


def _internal(e: BaseException) -> bool:
    """Errors that can only come from our own code, never from a template."""
    return isinstance(e, (AssertionError, NameError, UnboundLocalError, ImportError, SyntaxError))


def _save(crash_dir: str, kind: str, seed: int, n: int, source: str, dialect: str, tb: str) -> None:
    path = Path(crash_dir) / f"{kind}-{dialect}-{seed}-{n}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{tb}\n---\n{source}", encoding="utf-8", errors="surrogateescape")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=5000)
    ap.add_argument("--full-every", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=None, help="stop after this long (wall clock)")
    ap.add_argument("--slow", type=float, default=1.0, help="seconds a render may take (default limits)")
    ap.add_argument("--crash-dir", default=str(Path(__file__).parent / "crashes"))
    args = ap.parse_args()
    stop_at = float("inf") if args.seconds is None else time.time() + args.seconds
    jobs = [(args.seed * 1_000_003 + i, min(args.chunk, args.count - i * args.chunk), args.full_every,
             args.timeout, args.crash_dir, args.slow, stop_at) for i in range((args.count + args.chunk - 1) // args.chunk)]
    total: dict = {}
    start = time.time()
    with mp.Pool(args.workers) as pool:
        for stats in pool.imap_unordered(worker, jobs):
            for k, v in stats.items():
                total[k] = total.get(k, 0) + v
            print(f"{time.time() - start:7.0f}s {total}", flush=True)
    print("done:", total)
    return 1 if total.get("failures") or total.get("hangs") or total.get("slow") else 0


if __name__ == "__main__":
    raise SystemExit(main())
