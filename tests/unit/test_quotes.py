"""``compiler/quotes.py`` quotes every string as black's own ``normalize_string_quotes``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from black.strings import normalize_string_quotes as black_quotes

from tmpl2py.compiler.quotes import normalize_string_quotes

TRICKY = ["", "'", '"', "'\"", "\\", "\\'", '\\"', "a'b\"c", "''\"\"", "\\\\'", "\n", "é\x00",
          "it's", 'say "hi"', "both ' and \"", "\\\\\\'\"", "'''", '"""', "{x}", "\t\r"]


def test_tricky_strings() -> None:
    for text in TRICKY:
        assert normalize_string_quotes(repr(text)) == black_quotes(repr(text)), text


@settings(max_examples=2000, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from("ab'\"\\\n{}é\x00 "), max_size=12) | st.text(max_size=8))
def test_same_as_black(text: str) -> None:
    assert normalize_string_quotes(repr(text)) == black_quotes(repr(text))
