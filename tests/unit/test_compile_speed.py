"""Compile speed (issue 15): compile time grows linearly with template size, and the
in-memory path never runs black."""

from __future__ import annotations

import ast
import gc
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from tmpl2py.compiler import compile_template
from tmpl2py.compiler.api import clear_compile_cache, generate

UNIT = (
    "{% if m.role == 'user' %}<u>{{ m.content | trim }}</u>"
    "{% elif m.role == 'tool' %}{{ m['content'] }}{% set ns.n = ns.n + 1 %}{% endif %}\n"
)


def _compile_seconds(copies: int) -> float:
    source = "{% set ns = namespace(n=0) %}{% for m in messages %}" + UNIT * copies + "{% endfor %}"
    return _timed_compile(source)


def _assert_doubling_is_linear(timer: str, size: int) -> None:
    """``TIMERS[timer](2 * size)`` at most 2.2x ``TIMERS[timer](size)``, measured in a fresh
    interpreter (:func:`_measure`): in the test process, its heap grown by thousands of tests
    before, the larger size read 2.28x and 2.31x on two CI runs of code that reads 1.97-2.10x in
    a fresh one (the compiler's own work is what the test judges)."""
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
        f"import test_compile_speed as t; print(t._measure({timer!r}, {size}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    small, large = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    assert min(large) / min(small) <= 2.2, (timer, small, large)


def _measure(timer: str, size: int) -> tuple:
    """(small, large): one large compile first (the heap grown once, so the first small
    compile is not the only one in a fresh heap), then the two sizes in turn, seven times
    each (the fastest of each is compared: a burst of load slows both alike)."""
    seconds = TIMERS[timer]
    seconds(2 * size)
    small, large = [], []
    for _ in range(7):
        small.append(seconds(size))
        large.append(seconds(2 * size))
    return small, large


def test_compile_time_is_linear_in_template_size() -> None:
    """Doubling a template (at a size where fixed costs no longer dominate) at most ~2.2x its
    compile time; a pass or lookup that is quadratic in the template shows up as ~4x. The
    two sizes are compiled in turn (after one large compile), five times each, and the fastest of each compared (the
    machine is shared: a burst of load then slows both sizes alike)."""
    _assert_doubling_is_linear("template", 150)


def _macros_seconds(count: int) -> float:
    """A template of ``count`` macros, each calling the next (the last a value of the
    context), called from a loop that reads ``loop.last``: the passes that relate functions
    to each other (direct calls, pure functions) see every pair of them."""
    source = "".join(
        f"{{% macro m{i}(x) %}}{{{{ m{i + 1}(x) }}}}{{% endmacro %}}" for i in range(count)
    )
    source += f"{{% macro m{count}(x) %}}{{{{ f(x) }}}}{{% endmacro %}}"
    source += "{% for a in l %}{{ m0(a) }}{{ loop.last }}{% endfor %}"
    clear_compile_cache()
    t0 = time.process_time()
    compile_template(source)
    return time.process_time() - t0


def test_compile_time_is_linear_in_the_number_of_macros() -> None:
    """Doubling the macros at most ~2.2x the compile time (``direct_calls`` compared every
    macro with every later one and every statement before it: cubic, 0.37 s for 200 macros,
    12 s for 800)."""
    _assert_doubling_is_linear("macros", 150)


def test_in_memory_compile_does_not_run_black(monkeypatch) -> None:
    import black

    calls = []
    real = black.format_str
    monkeypatch.setattr(black, "format_str", lambda *a, **k: calls.append(1) or real(*a, **k))
    clear_compile_cache()
    t = compile_template("{% for m in messages %}{{ m.content }}{% endfor %}")
    assert t.render({"messages": [{"content": "a"}]}) == "a"
    assert calls == []
    text = t.python_source  # asked for: laid out now, once
    assert calls == [1] and text == generate(t.source, name=None)[0]
    assert t.python_source is text and calls == [1]


def test_the_in_memory_path_does_not_import_black() -> None:
    code = (
        "import sys\n"
        "from tmpl2py.compiler import compile_template\n"
        "compile_template('{% for m in messages %}{{ m.content }}{% endfor %}').render({})\n"
        "compile_template('{{ .Prompt }}', dialect='go').render({})\n"
        "print('black' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _go_assignments_seconds(count: int) -> float:
    """A Go template assigning a variable ``count`` times (each ``{{$x = ...}}`` noted the
    variable again, and each lookup scanned every note: quadratic, 48,000 of them took over
    two minutes)."""
    source = "{{ $x := 1 }}{{ $y := 2 }}" + "{{ $x = 2 }}{{ $y = $x }}" * count + "{{ $x }}{{ $y }}"
    clear_compile_cache()
    t0 = time.process_time()
    compile_template(source, dialect="go", profile="plain")
    return time.process_time() - t0


def test_go_compile_time_is_linear_in_the_number_of_assignments() -> None:
    _assert_doubling_is_linear("go-assignments", 500)


def _seconds_of(make_source: Callable[[int], str]) -> Callable[[int], float]:
    """A timer for ``_assert_doubling_is_linear``: the compile time of ``make_source(count)``."""

    def seconds(count: int) -> float:
        return _timed_compile(make_source(count))

    return seconds


def _timed_compile(source: str) -> float:
    """The CPU time of one compile of ``source``, with the cyclic garbage collector collected
    before and paused during it: its collections scale with every live object of the process
    (a larger template's parse holds more), so they made the larger size look superlinear by
    chance (2.28x on a CI run, 1.97-2.10x with them paused) where the compiler's own work is
    linear; what the test judges is the compiler's."""
    clear_compile_cache()
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        compile_template(source)
        return time.process_time() - t0
    finally:
        gc.enable()


def test_compile_time_is_linear_in_the_number_of_keyword_arguments() -> None:
    """A call's keywords: the lowering looked each up among the earlier ones, and CPython
    compares every keyword of a call with every other as it compiles it (30,000 took 21 s);
    past ``emit.MANY_KEYWORDS`` they are passed as one ``**{...}`` dict."""
    _assert_doubling_is_linear("keywords", 4000)


def test_compile_time_is_linear_in_the_number_of_macro_defaults() -> None:
    """A macro's defaults: the scope pass made the set of the parameters not filled in yet
    for each default (a copy per parameter: 20,000 took 8 s)."""
    _assert_doubling_is_linear("defaults", 2000)


def test_compile_time_is_linear_in_the_number_of_assignments() -> None:
    """A scope's assignments (a namespace of thousands of attributes, which ``ns_scalars``
    makes as many locals; thousands of ``set`` in a loop): ``drop_dead_inits`` copied the set
    of the names assigned so far at each one (quadratic: 40,000 took 114 s); one set changed
    in place, a branch's additions taken back by a trail."""
    _assert_doubling_is_linear("namespace", 2000)
    _assert_doubling_is_linear("set-in-a-loop", 2000)


#: the timers the linearity tests compare (by name: :func:`_measure` runs in a fresh interpreter)
TIMERS: dict = {
    "template": _compile_seconds,
    "macros": _macros_seconds,
    "go-assignments": _go_assignments_seconds,
    "keywords": _seconds_of(lambda n: "{{ f(" + ", ".join(f"a{i}=1" for i in range(n)) + ") }}"),
    "defaults": _seconds_of(
        lambda n: "{% macro m(" + ", ".join(f"a{i}=x" for i in range(n)) + ") %}{% endmacro %}{{ m() }}"
    ),
    "namespace": _seconds_of(
        lambda n: "{% set ns = namespace(" + ", ".join(f"a{i}=1" for i in range(n)) + ") %}{{ ns.a0 }}"
    ),
    "set-in-a-loop": _seconds_of(
        lambda n: "{% for m in messages %}" + "".join("{%% set v%d = m %%}" % i for i in range(n)) + "{% endfor %}"
    ),
}
