"""Compiler fuzzing with Hypothesis (CI-sized; tests/fuzz/fuzz_compiler.py runs the long campaign):
arbitrary text and mutated real templates either compile into a module Python accepts,
or fail with CompileError — never another exception."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tmpl2py.compiler import CompileError, api
from tmpl2py.compiler.emit import emit
from tmpl2py.compiler.passes import pipeline

sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
import fuzz_compiler as F  # noqa: E402

EXAMPLES = int(os.environ.get("TMPL2PY_FUZZ_EXAMPLES", "300"))
SEEDS = F.corpus()
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check(source: str, dialect: str) -> None:
    try:
        module = pipeline.run(api.parse(source, dialect), profile=api.PROFILES[dialect][0])
    except CompileError as e:
        assert e.code and isinstance(e.line, int)
        return
    compile(emit(module, "", {}), "<fuzz>", "exec")


fragments = st.lists(st.sampled_from(F.FRAGMENTS) | st.text(max_size=5), max_size=30).map("".join)


@FUZZ
@given(source=fragments | st.text(max_size=200), dialect=st.sampled_from(["jinja", "go"]))
def test_arbitrary_text_compiles_or_fails_cleanly(source: str, dialect: str) -> None:
    _check(source, dialect)


@FUZZ
@given(index=st.integers(0, len(SEEDS) - 1), seed=st.integers(0, 2**32 - 1))
def test_mutated_templates_compile_or_fail_cleanly(index: int, seed: int) -> None:
    import random

    base, dialect = SEEDS[index]
    _check(F.mutate(random.Random(seed), base), dialect)
