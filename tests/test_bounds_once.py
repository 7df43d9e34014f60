"""Two rules of the work bounds' cost (issue #18): a loop of render's straight code compares its
count with its share of uncounted fuel instead of subtracting it, and the render's end still
sums its pieces before the join past SETTLE_PIECES (a piece may be an input of any length).
Each with the attack it could have opened, still refused."""

from __future__ import annotations

import tracemalloc

import pytest

from tmpl2py.compiler import compile_template
from tmpl2py.runtime import limits
from tmpl2py.runtime.limits import RenderLimitExceeded

from reference import ref_render


def test_past_settle_pieces_the_pieces_are_summed_before_any_join() -> None:
    """Past SETTLE_PIECES pieces the end sums them before the join, whatever bound the render's
    own strings have: a piece may be an input value of any length (300 prints of a 10 MB
    message would be a 3 GB join; joining first to measure one string was tried and undone),
    and the peak memory stays that of the pieces."""
    from tmpl2py.compiler.fuel import SETTLE_PIECES

    source = "{% for i in range(n) %}{{ big }}{% endfor %}"
    big = "x" * 10_000_000
    tracemalloc.start()
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(source).render({"n": SETTLE_PIECES + 44, "big": big})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert info.value.limit == "output" and limits.live() is None
    assert peak < 100_000_000  # (the join would have been 3 GB)
    context = {"n": SETTLE_PIECES + 44, "big": "ab\u00e9"}
    assert compile_template(source).render(context) == ref_render(source, context)[1]


def test_a_loop_of_straight_code_compares_its_count_for_its_first_items() -> None:
    """A loop in render's straight code starts once a render: its first ``ONCE_FREE // cost``
    items only compare their count (nothing subtracted), for the first ``ONCE_LOOPS`` such
    loops of a template; a loop in a loop or in a macro, and later loops, subtract as they
    start. Past its share a loop is charged as before: the count stays exact there."""
    from tmpl2py.compiler.fuel import ONCE_FREE, ONCE_LOOPS

    loop = "{% for i in range(n) %}{{ i }}{% endfor %}"
    source = loop * (ONCE_LOOPS + 1) + "{% macro m() %}" + loop + "{% endmacro %}{{ m() }}"
    source += "{% for j in range(2) %}" + loop + "{% endfor %}"
    code = compile_template(source).python_source
    assert code.count(f"> {ONCE_FREE} or holding:") == ONCE_LOOPS
    # (under each comparison too; then the fifth, the macro's, the outer `j` loop and its inner)
    assert code.count("_fuel -= length_hint(") == ONCE_LOOPS + 4
    context = {"n": 40}
    assert compile_template(source).render(context) == ref_render(source, context)[1]
    # past its share the loop is charged in full, and the fuel limit holds
    big = "{% for i in range(n) %}{% endfor %}"
    with pytest.raises(RenderLimitExceeded) as info:
        compile_template(big).render({"n": 3_000}, limits={"fuel": 2_000})
    assert info.value.limit == "fuel"
    assert compile_template(big).render({"n": 3_000}, limits={"fuel": 5_000}) == ""
