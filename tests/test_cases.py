"""File-per-case tests: ``tests/corpus/cases/<name>.txt`` holds a JSON context, a line
``---`` and the template (exact bytes). Each renders through transformers' environment and
through tmpl2py; the outcomes must be identical (``err_*`` cases are expected to fail, alike)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tmpl2py_paths import ROOT
from reference import ours_render, ref_render, same_outcome

CASES = sorted((ROOT / "tests" / "corpus" / "cases").glob("*.txt"))


def load_case(path: Path) -> tuple[dict, str]:
    text = path.read_bytes().decode("utf-8")
    head, sep, template = text.partition("\n---\n")
    assert sep, f"{path.name}: no '---' line"
    return json.loads(head), template


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path: Path) -> None:
    context, template = load_case(path)
    ref = ref_render(template, context)
    ours = ours_render(template, context)
    if path.stem.startswith("err_"):
        assert ref[0] == "err", f"{path.name} is named err_* but the reference renders it"
    else:
        assert ref[0] == "ok", f"{path.name}: the reference fails: {ref[1]}"
    assert same_outcome(ours, ref), f"\nexpected: {ref[1][:3000]!r}\n     got: {ours[1][:3000]!r}"
