"""Filters with an autoescape version (join, replace, xmlattr, urlize) called with ``*args`` /
``**kwargs`` inside ``{% autoescape %}``: the call's argument checks name jinja2's function
as for the plain filter (the autoescape version once had no reference name: an internal
AssertionError at compile time). Checked against transformers' environment."""

from __future__ import annotations

import pytest

from reference import ours_render, ref_render, same_outcome

CALLS = [
    "{{ 'a<'|replace('a', *['b'], **{'count': 1}) }}",
    "{{ 'a<'|replace(*['a', 'b<']) }}",
    "{{ ['<', 'b']|join(*['&']) }}",
    "{{ ['<', 'b']|join(**{'d': '&'}) }}",
    "{{ {'a': '<'}|xmlattr(*[True]) }}",
    "{{ 'see http://x.org <b>'|urlize(**{'trim_url_limit': 5}) }}",
    "{{ 'a'|replace(*[]) }}",
    "{{ ['a']|join(**{'bogus': 1}) }}",
]


@pytest.mark.parametrize("escape", ["true", "false"])
@pytest.mark.parametrize("call", CALLS)
def test_star_calls_of_autoescape_filters(call: str, escape: str) -> None:
    source = "{% autoescape " + escape + " %}" + call + "{% endautoescape %}"
    assert same_outcome(ours_render(source, {}), ref_render(source, {}))
