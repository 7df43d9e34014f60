"""``strftime_now`` (issue 15): a format whose text depends on the date alone is formatted
once a day and LC_TIME locale; its text is always ``now.strftime(format)``, whatever the
clock does, for every format, and the tables it keeps stay bounded."""

from __future__ import annotations

import datetime
import locale

import pytest

from tmpl2py.runtime.jinja import clock as objects  # the clock and its tables

DATE_FORMATS = ["%d %b %Y", "%Y-%m-%d", "%A, %B %d", "%j %U %W %w %y %G %V %u", "100%% %Y", "plain"]
OTHER_FORMATS = ["%H:%M:%S", "%Y-%m-%d %H", "%c", "%x", "%d %p", "%s", "%Y %", "%Y%e", "%Z%Y"]


@pytest.fixture
def clock():
    saved = objects.CLOCK[0]
    now = [datetime.datetime(2024, 7, 26, 23, 59, 58)]
    objects.CLOCK[0] = lambda: now[0]
    objects._DATE_ONLY.clear()  # each test starts with the tables empty
    objects._DAY_TEXTS.clear()
    try:
        yield now
    finally:
        objects.CLOCK[0] = saved


def _same(fmt: str, now: datetime.datetime) -> None:
    try:
        expected = ("ok", now.strftime(fmt))
    except Exception as e:  # the format's own error, raised as strftime raises it
        expected = ("err", f"{type(e).__name__}: {e}")
    try:
        got = ("ok", objects.strftime_now(fmt))
    except Exception as e:
        got = ("err", f"{type(e).__name__}: {e}")
    assert got == expected, fmt


@pytest.mark.parametrize("fmt", DATE_FORMATS + OTHER_FORMATS)
def test_the_text_is_strftime_of_now_as_the_clock_moves(clock, fmt: str) -> None:
    for step in [datetime.timedelta(0), datetime.timedelta(seconds=1), datetime.timedelta(seconds=1),
                 datetime.timedelta(days=1), datetime.timedelta(days=400), datetime.timedelta(hours=5)]:
        clock[0] = clock[0] + step
        for _ in range(2):  # the second call of a day reads the kept text
            _same(fmt, clock[0])


def test_only_date_formats_are_kept(clock) -> None:
    for fmt in DATE_FORMATS:
        objects.strftime_now(fmt)
        assert objects._DATE_ONLY[fmt] is True
    for fmt in OTHER_FORMATS:
        try:
            objects.strftime_now(fmt)
        except ValueError:
            pass
        assert objects._DATE_ONLY.get(fmt, False) is False
        assert fmt not in objects._DAY_TEXTS


def test_the_tables_stay_bounded(clock) -> None:
    for i in range(3 * objects.FORMATS_KEPT):
        fmt = f"%Y-{i}-%m"
        assert objects.strftime_now(fmt) == clock[0].strftime(fmt)
    assert len(objects._DATE_ONLY) <= objects.FORMATS_KEPT
    assert len(objects._DAY_TEXTS) <= objects.FORMATS_KEPT


def test_a_changed_time_locale_is_seen(clock) -> None:
    saved = locale.setlocale(locale.LC_TIME)
    try:
        for name in ("C", "C.UTF-8", "POSIX"):
            try:
                locale.setlocale(locale.LC_TIME, name)
            except locale.Error:
                continue
            _same("%A %B %Y", clock[0])
            assert objects._DAY_TEXTS["%A %B %Y"][1] == locale.setlocale(locale.LC_TIME)
    finally:
        locale.setlocale(locale.LC_TIME, saved)


def test_a_clock_that_is_no_datetime_formats_each_time() -> None:
    saved = objects.CLOCK[0]
    objects.CLOCK[0] = lambda: datetime.date(2024, 7, 26)
    try:
        assert objects.strftime_now("%d %b %Y") == "26 Jul 2024"
    finally:
        objects.CLOCK[0] = saved
