"""transformers' ``strftime_now`` and the clock it reads (``CLOCK[0]``, which tests replace
to freeze time). A format whose text depends on the date alone is formatted once a day and
LC_TIME locale: ``strftime`` costs ~1.2 us, the kept text ~0.6 us with the clock's read.
Standard library only; ``datetime`` and ``locale`` are imported on first use.
"""

from __future__ import annotations

from functools import partial as functools_partial

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


#: ``strftime_now`` reads this clock; tests replace it to freeze time.
def _now() -> Any:
    import datetime

    return datetime.datetime.now()


def strftime_now(format: str) -> str:
    """transformers' ``strftime_now``: ``datetime.now().strftime(format)``. A format whose
    text depends on the date alone (:func:`_date_only`: ``"%d %b %Y"``, ``"%Y-%m-%d"``) is
    formatted once a day and locale (``strftime`` costs ~1.2 us; the kept text ~0.6 us)."""
    if type(format) is str and len(format) > LONG_FORMAT:
        _check_format(format)
    now = CLOCK[0]()
    known = _DATE_ONLY.get(format) if type(format) is str else False
    if known is None:
        known = _date_only(format)
    if known and type(now) is _DATETIME[0]:
        day, where = now.toordinal(), _LOCALE_TIME[0]()
        seen = _DAY_TEXTS.get(format)
        if seen is not None and seen[0] == day and seen[1] == where:
            return seen[2]
        text = now.strftime(format)
        if format in _DAY_TEXTS or len(_DAY_TEXTS) < FORMATS_KEPT:
            _DAY_TEXTS[format] = (day, where, text)
        return text
    return now.strftime(format)


CLOCK: list = [_now]

#: a format longer than this is measured before ``strftime`` runs: CPython lets a format
#: make up to 256 times its length (a field width, ``%250Y``, pads to it), and 256 times
#: this is the longest string a render makes unmarked (``limits.UNMARKED``)
LONG_FORMAT = 2048


def _check_format(format: str) -> None:
    """A long format's text, bounded (16 characters a character of the format, the longest
    a conversion makes, plus every field width) and refused past ``limits.UNMARKED`` (red
    team s9h F5: ``'%250Y' * 200000`` made 256M characters in one call). It neither charges
    nor marks the render (``compiler/quiet.py`` counts ``strftime_now`` quiet)."""
    import re

    from ..limits import UNMARKED, RenderLimitExceeded

    bound = 16 * len(format) + sum(map(int, re.findall(r"%[-_0^#]*([0-9]+)", format)))
    if bound > UNMARKED:
        raise RenderLimitExceeded(
            "value", f"strftime_now's format could make {bound:,} characters (limit {UNMARKED:,})"
        )

#: how many formats ``strftime_now`` keeps (a template cannot grow the tables past it)
FORMATS_KEPT = 64
#: format -> (day ordinal, LC_TIME locale, its text that day)
_DAY_TEXTS: dict = {}
#: format -> whether its text depends on the date alone (:func:`_date_only`)
_DATE_ONLY: dict = {}
#: strftime directives whose text is the date's (names in the LC_TIME locale): year, month,
#: day, weekday, day of the year, week numbers; ``%%`` a percent sign
_DATE_DIRECTIVES = frozenset("aAbBdjmUwWyYGuV%")


def _date_only(format: str) -> bool:
    """Every directive of ``format`` is one of :data:`_DATE_DIRECTIVES` (no time of day,
    time zone, locale's date-and-time, or platform extension); kept in :data:`_DATE_ONLY`.
    Also binds what the cached path reads (the ``datetime`` type, the locale's query)."""
    i, n, known = 0, len(format), True
    while known and i < n:
        i = format.find("%", i)
        if i < 0:
            break
        known = i + 1 < n and format[i + 1] in _DATE_DIRECTIVES
        i += 2
    if len(_DATE_ONLY) < FORMATS_KEPT:
        _DATE_ONLY[format] = known
    if _DATETIME[0] is None:
        import datetime
        import locale

        _DATETIME[0] = datetime.datetime
        _LOCALE_TIME[0] = functools_partial(locale.setlocale, locale.LC_TIME)
    return known


#: ``datetime.datetime`` and ``setlocale(LC_TIME)`` (the locale whose names ``%a``/``%b``
#: write), bound at the first date-only format (the
#: runtime imports neither at import)
_DATETIME: list = [None]
_LOCALE_TIME: list = [None]

