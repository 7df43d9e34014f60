"""Shared test fixtures: where ../shared is, the frozen clock, the Jinja reference renderer."""

from __future__ import annotations

import datetime

import pytest

from tmpl2py_paths import ROOT, SHARED, shared_or_skip  # noqa: F401

FROZEN = datetime.datetime(2024, 7, 26, 12, 0, 0)


@pytest.fixture(autouse=True)
def frozen_clock():
    """Freeze strftime_now on our side (the reference side is frozen in reference.py)."""
    import tmpl2py.runtime.jinja as rj

    saved = rj.CLOCK[0]
    rj.CLOCK[0] = lambda: FROZEN
    yield
    rj.CLOCK[0] = saved


@pytest.fixture(autouse=True)
def clear_render_account():
    """Each test starts with its context's meter clear, as a render does: a test that calls a
    charging helper outside any render (a filter, ``limits.charge``) leaves what it owes in the
    context, and the next render there would start owing it (a fuel error in an unrelated test,
    depending on what random inputs charged before it)."""
    from tmpl2py.runtime import limits

    limits.clear()
    yield
    limits.clear()
