"""Seeds 000 and 001 against transformers, through render() and render_conversation(),
on the project's own fixtures (always) and the shared corpus fixtures (when present)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tmpl2py_paths import ROOT, SHARED
from reference import ours_conversation, ours_render, ref_conversation, ref_render, same_outcome

SEEDS = {
    "seed000": ROOT / "examples" / "seed000_command.jinja",
    "seed001": ROOT / "examples" / "seed001_qwen.jinja",
}


def _fixtures() -> list:
    paths = sorted((ROOT / "tests" / "fixtures").glob("*.json"))
    shared = SHARED / "corpus" / "jinja" / "fixtures"
    if shared.exists():
        paths += sorted(shared.glob("*.json"))
    return paths


def _id(p: Path) -> str:
    return ("shared/" if SHARED in p.parents else "") + p.stem


def _variants(fixture: dict) -> list[dict]:
    """The fixture, and the same conversation with the seeds' own switches flipped."""
    out = [fixture]
    out.append({**fixture, "add_generation_prompt": not fixture.get("add_generation_prompt", False)})
    out.append({**fixture, "reasoning": False, "grounding": "enabled", "skip_thinking": True,
                "regen_tool_call_ids": False, "developer_instruction": "Be formal."})
    out.append({**fixture, "response_format": {"type": "json_object", "schema": {"type": "object"}},
                "platform_instruction_override": "Custom platform rules.", "convert_first_system_msg": False})
    return out


@pytest.mark.parametrize("seed", sorted(SEEDS))
@pytest.mark.parametrize("fixture_path", _fixtures(), ids=_id)
def test_seed_render_conversation(seed: str, fixture_path: Path) -> None:
    source = SEEDS[seed].read_text(encoding="utf-8")
    for fixture in _variants(json.loads(fixture_path.read_text(encoding="utf-8"))):
        ref = ref_conversation(source, fixture)
        ours = ours_conversation(source, fixture)
        assert same_outcome(ours, ref), f"\nexpected: {ref[1][:3000]!r}\n     got: {ours[1][:3000]!r}"


@pytest.mark.parametrize("seed", sorted(SEEDS))
@pytest.mark.parametrize("fixture_path", _fixtures(), ids=_id)
def test_seed_render(seed: str, fixture_path: Path) -> None:
    """render(context) equals _compile_jinja_template(source).render(**context) on raw data."""
    source = SEEDS[seed].read_text(encoding="utf-8")
    fixture = json.loads(fixture_path.read_text(encoding="utf-8"))
    context = {"tools": None, "documents": None, **fixture}
    ref = ref_render(source, context)
    ours = ours_render(source, context)
    assert same_outcome(ours, ref), f"\nexpected: {ref[1][:3000]!r}\n     got: {ours[1][:3000]!r}"


def test_seed000_file_starts_with_name_line() -> None:
    """The shared seed 000 file carries a name line and a blank line that are not template text."""
    shared = SHARED / "seeds" / "000_c767023982045a07.txt"
    if not shared.exists():
        pytest.skip("../shared/seeds is absent")
    text = shared.read_text(encoding="utf-8")
    assert text.startswith("chat_template.jinja\n\n")
    assert text[len("chat_template.jinja\n\n"):] == SEEDS["seed000"].read_text(encoding="utf-8")
