"""Paths the tests share (a uniquely named module: pytest puts several test folders on sys.path)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: ../shared, or where TMPL2PY_SHARED names it (a worktree checked out elsewhere)
SHARED = Path(os.environ.get("TMPL2PY_SHARED") or ROOT.parent / "shared")

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def shared_or_skip(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared is not beside this checkout ({path} missing): shared-corpus cases skipped")
    return path

#: The frozen clock of every reference output (strftime_now, currentDate).
import datetime  # noqa: E402

FROZEN = datetime.datetime(2024, 7, 26, 12, 0, 0)
