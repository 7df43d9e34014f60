"""Shared test fixtures: where ../shared is, the frozen clock, the Jinja reference renderer."""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
FROZEN = datetime.datetime(2024, 7, 26, 12, 0, 0)

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def shared_or_skip(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared is not beside this checkout ({path} missing): shared-corpus cases skipped")
    return path


@pytest.fixture(autouse=True)
def frozen_clock():
    """Freeze strftime_now on our side (the reference side is frozen in reference.py)."""
    import runtime.jinja as rj

    saved = rj.CLOCK[0]
    rj.CLOCK[0] = lambda: FROZEN
    yield
    rj.CLOCK[0] = saved
