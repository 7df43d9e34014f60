"""Hostile templates that must end in a clean limit error, and the bounded way to run them. The
module is long because it is the one table of every hostile class (a case a line or two).

The case tables (imported by tests/test_limits.py and tests/test_hostile.py): DoS classes of
both dialects (loops, repetition, doubling, recursion, deep data), heavy per-item helpers in
nested loops (each must be paid for by the fuel), and growth through filters and methods.
:func:`results` renders every case once per test process in a child process under a
memory cap (``RLIMIT_AS`` 1 GiB) and a per-case alarm, so that a case that hangs or blows
up fails its test instead of hanging or killing CI; the child reports, per case, the
outcome (the limit hit, or the exception), the time it took, and where.

    python tests/hostile_cases.py      # the child: one JSON line per case on stdout
"""

from __future__ import annotations

import functools
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

#: the child's address-space cap: no case may need more
MEMORY_BYTES = 1 << 30
#: a case still running after this many seconds is a hang (the bound is one second, scaled)
ALARM_SECONDS = 30
#: the whole child run (every case) must end within this
TOTAL_SECONDS = 600

NS = "{% set ns = namespace(s='ab', l=[1, 2], t=()) %}"

#: one step of a text fed back (``X``: the text so far) that escapes what it holds: a
#: container's ``repr`` doubles a backslash, so each step doubles the text (bounded by
#: ``limits.check_text`` where the filter reads a value as text, charged as built elsewhere,
#: and charged when a namespace keeps it)
REPR_STEPS = {
    "string": "[X]|string", "format": "'%r'|format(X)", "percent": "'%r' % (X,)", "escape": "[X]|e",
    "safe": "[X]|safe", "replace": "[X]|replace('a', 'b')", "striptags": "[X]|striptags",
    "tojson": "[X]|tojson", "forceescape": "[X]|forceescape", "title": "[X]|title", "lower": "[X]|lower",
}

JINJA_DOS = {
    "nested-range": "{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}",
    # a loop paid for as it starts still checks its output every chunk of iterations: a new
    # 100 KB string each time, in render and in a macro; a long literal added in a loop
    "loop-new-strings": "{% for i in range(20000) %}{{ '" + "x" * 100_000 + "' + i|string }}{% endfor %}",
    "macro-loop-new-strings": "{% macro f() %}{% for i in range(20000) %}{{ '" + "x" * 100_000
    + "'|upper }}{% endfor %}{% endmacro %}{{ f() }}",
    "long-literal-accumulation": "{% set ns = namespace(s='') %}{% for i in range(20000) %}"
    "{% set ns.s = ns.s + '" + "x" * 100_000 + "' %}{% endfor %}{{ ns.s|length }}",
    "nested-range-empty": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    # a text filter of a container works on its text (its repr), 3.2M characters of words here:
    # charged by the container's two items it ran 7.5 s in one call (red team s8h F1)
    "urlize-of-a-list": "{% set ns = namespace(s='a ' * 50000) %}{% for i in range(5) %}"
    "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ [ns.s]|urlize|length }}",
    "string-repeat": "{{ 'x' * 10**9 }}",
    "string-repeat-left": "{{ (10**9) * 'ab' }}",
    "list-repeat": "{{ ([1, 2] * 10**9)|length }}",
    "power": "{{ 2 ** (10 ** 9) }}",
    "literal-repeat": "{{ 'x' * 1000000000 }}",
    "center": "{{ 'a'|center(10**10) }}",
    "indent": "{{ 'a\nb'|indent(10**9) }}",
    "indent-lines": "{{ ('a\n' * 50000)|indent(90000) }}",
    "wordwrap": "{{ ('a ' * 50000)|wordwrap(1, wrapstring='x' * 90000) }}",
    "batch": "{{ [1]|batch(10**9, 0)|list|length }}",
    "slice": "{{ [1]|slice(10**9)|list|length }}",
    "tojson-indent": "{{ ([[1, 2, 3]] * 1000)|tojson(indent=10**6) }}",
    "format-width": "{{ '%999999999d'|format(1) }}",
    "format-star": "{{ '%*d' % (999999999, 1) }}",
    "str-format-width": "{{ '{:999999999}'.format(1) }}",
    "replace": "{{ ('a' * 90000)|replace('a', 'b' * 90000) }}",
    # the environment's lorem ipsum: paragraphs x words, each a few Python steps
    "lipsum": "{{ lipsum(1000000)|length }}",
    "lipsum-words": "{{ lipsum(10, html=false, min=1000000, max=2000000)|length }}",
    "join": "{{ (['a'] * 90000)|join('x' * 90000) }}",
    "ns-doubling-tilde": NS + "{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
    "ns-doubling-plus": NS + "{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
    "ns-doubling-list": NS + "{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}",
    "ns-doubling-join": NS + "{% for i in range(64) %}{% set ns.s = [ns.s, ns.s]|join %}{% endfor %}{{ ns.s|length }}",
    "ns-doubling-sum": NS + "{% for i in range(64) %}{% set ns.l = [ns.l, ns.l]|sum(start=[]) %}{% endfor %}{{ ns.l|length }}",
    "macro-doubling": "{% macro d(s, n) %}{{ d(s + s, n - 1) if n else s|length }}{% endmacro %}{{ d('ab', 64) }}",
    "macro-fanout": "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}",
    # no cycle: 48 macros, each calling the next twice (2**48 calls; the closed ones at the
    # bottom, a tree of bounded cost, are paid by the first that pays above them)
    "macro-dag-fanout": "".join(
        "{% macro m" + str(i) + "() %}{{ m" + str(i + 1) + "() }}{{ m" + str(i + 1) + "() }}{% endmacro %}"
        for i in range(48)
    ) + "{% macro m48() %}x{% endmacro %}{{ m0() }}",
    # a cycle through values: a namespace's attribute, a name set to the macro
    "macro-fanout-namespace": "{% set ns = namespace() %}{% macro f(n) %}{% if n %}{{ ns.f(n - 1) }}"
    "{{ ns.f(n - 1) }}{% endif %}{% endmacro %}{% set ns.f = f %}{{ f(60) }}",
    "macro-fanout-alias": "{% macro g(n) %}{{ h(n) }}{{ h(n) }}{% endmacro %}{% macro f(n) %}{% if n %}"
    "{{ g(n - 1) }}{% endif %}{% endmacro %}{% set h = f %}{{ f(60) }}",
    "block-self-fanout": "{% block a %}{{ self.a() }}{{ self.a() }}{% endblock %}",
    # ... the calls in a loop's ``else`` (run once, but run), or in a parameter's default
    "macro-dag-forelse": "{% macro a0() %}x{% endmacro %}" + "".join(
        "{% macro a" + str(i) + "() %}{% for _ in [] %}{% else %}" + ("{{ a" + str(i - 1) + "() }}") * 4
        + "{% endfor %}{% endmacro %}" for i in range(1, 16)
    ) + "{{ a15() }}",
    "macro-default-self": "{% macro a(n, x=(a(n - 1) ~ a(n - 1)) if n > 0 else '') %}{{ x }}{% endmacro %}{{ a(40) }}",
    "macro-default-chain": "{% macro a0() %}x{% endmacro %}" + "".join(
        "{% macro a" + str(i) + "(x=a" + str(i - 1) + "() ~ a" + str(i - 1) + "()) %}{{ x }}{% endmacro %}"
        for i in range(1, 40)
    ) + "{{ a39()|length }}",
    # one call of a builtin method hiding much work on a text under the size checks
    "strip-long-chars": "{% set s = 'y' * 60000 %}{% set c = 'x' * 59999 ~ 'y' %}"
    "{% for i in range(400) %}{{ s.strip(c)|length }}{% endfor %}",
    "trim-long-chars": "{% set s = 'y' * 100000 %}{% set c = 'x' * 99999 ~ 'y' %}"
    "{% for i in range(1000) %}{{ s|trim(c)|length }}{% endfor %}",
    "split-kept-many-times": "{% set s = 'xab' * 21000 %}" + "".join(
        "{% set a" + str(i) + " = s.split('x') %}" for i in range(1000)
    ) + "{{ a0|length }}",
    # straight code calling a closed macro from thousands of sites (each call a tree of ~245)
    # (a call site pays at most 256 for a closed call: 3,000 sites are 0.2 s of work within the
    # fuel, 12,000 more than it; the template-size cap bounds the sites)
    "straight-calls-of-a-closed-macro": "{% macro L(x) %}" + "{{ (x ~ 'a')|trim }}" * 200
    + "{% endmacro %}" + "{{L(1)}}" * 12000,
    # straight code calling a long macro once a call site (no loop to pay for it)
    "straight-calls-of-a-long-macro": "{% macro L(x) %}" + "{{ (x ~ 'a')|trim }}" * 3000 + "{% endmacro %}"
    + "{{ L('b')|length }}" * 3000,
    "output": "{% for i in range(100000) %}{% for j in range(100) %}{{ 'x' * 90000 }}{% endfor %}{% endfor %}",
    "deep-list-print": NS + "{% for i in range(100000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}",
    "deep-list-tojson": NS + "{% for i in range(100000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l|tojson }}",
    "deep-dict-compare": "{% set ns = namespace(a={}, b={}) %}{% for i in range(100000) %}{% set ns.a = {'k': ns.a} %}"
    "{% set ns.b = {'k': ns.b} %}{% endfor %}{{ ns.a == ns.b }}",
    "deep-tuple-hash": NS + "{% for i in range(100000) %}{% set ns.t = (ns.t,) %}{% endfor %}{{ ns.t in {} }}",
    "macro-recursion": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "recursive-loop": "{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}",
    # one value held many times: a few objects that print to terabytes (each step doubles
    # what printing, serialising or comparing them walks, in C)
    "share-list-print": NS + "{% for i in range(64) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}",
    "share-dict-tojson": NS + "{% for i in range(64) %}{% set ns.l = {'a': ns.l, 'b': ns.l} %}{% endfor %}"
    "{{ ns.l|tojson }}",
    "share-tuple-hash": NS + "{% for i in range(64) %}{% set ns.t = (ns.t, ns.t) %}{% endfor %}{{ ns.t in {} }}",
    "share-compare": "{% set ns = namespace(a=[1], b=[1]) %}{% for i in range(64) %}{% set ns.a = [ns.a, ns.a] %}"
    "{% set ns.b = [ns.b, ns.b] %}{% endfor %}{{ ns.a == ns.b }}",
    "share-two-holders": NS + "{% for i in range(64) %}{% set ns.x = [ns.l] %}{% set ns.y = [ns.l] %}"
    "{% set ns.l = [ns.x, ns.y] %}{% endfor %}{{ ns.l }}",
    "share-static-chain": "{% set l = [1] %}" + "{% set l = [l, l] %}" * 64 + "{{ l|tojson|length }}",
    "share-macro-args": "{% macro f(l, n) %}{{ f([l, l], n - 1) if n else l|string|length }}{% endmacro %}{{ f([1], 64) }}",
    "share-varargs": "{% macro f(n) %}{{ f(n - 1, varargs, varargs) if n else varargs|string|length }}{% endmacro %}"
    "{{ f(64, 1) }}",
    "share-concat": NS + "{% set ns.l = [ns.l] %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l }}",
    "share-repeat-long-string": "{% set s = 'x' * 100000 %}{{ ([s] * 100000)|string|length }}",
    "share-fromkeys": "{% set s = 'x' * 100000 %}{{ dict.fromkeys(range(100000), s)|tojson|length }}",
    "share-dict-call": NS + "{% for i in range(64) %}{% set ns.l = dict(a=ns.l, b=ns.l) %}{% endfor %}{{ ns.l }}",
    "share-cycler": NS + "{% for i in range(64) %}{% set ns.l = cycler(ns.l, ns.l).items %}{% endfor %}{{ ns.l }}",
    "share-sum-start": NS + "{% set ns.l = [ns.l] %}{% for i in range(64) %}{% set ns.l = [ns.l]|sum(start=ns.l) %}"
    "{% endfor %}{{ ns.l }}",
    "share-batch-fill": "{% set s = 'x' * 100000 %}{{ [1]|batch(100000, fill_with=s)|list|string|length }}",
    "share-slice-fill": "{% set s = 'x' * 100000 %}{{ [1]|slice(100000, fill_with=s)|list|string|length }}",
    "share-map-default": "{% set s = 'x' * 100000 %}{{ range(100000)|map(attribute='q', default=s)|join|length }}",
    "share-map-filter": "{{ range(100000)|map('center', 100000)|join|length }}",
    "share-groupby": "{% set ns = namespace(l=[[1, 2]]) %}{% for i in range(64) %}{% set ns.l = ns.l|groupby(1)|list %}"
    "{% endfor %}{{ ns.l }}",
    "share-format-fields": "{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
    "{% set ns.s = '%(a)s%(a)s' % {'a': ns.s} %}{% endfor %}{{ ns.s|length }}",
    "share-str-format": "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = '{0}{0}'.format(ns.s) %}"
    "{% endfor %}{{ ns.s|length }}",
    "share-namespace-print": "{% set inner = namespace(s='x' * 100000) %}{{ ([inner] * 100000)|string|length }}",
    "share-pprint": NS + "{% for i in range(20) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l|pprint|length }}",
    # a + chain written out builds its value before the meter sees it: 24 strings of 51 MB
    "written-chain": "{% set ns = namespace(s='x' * 100000) %}{% for i in range(9) %}{% set ns.s = ns.s + ns.s %}"
    "{% endfor %}{{ '<s>' " + "+ ns.s " * 24 + "}}",
    # a literal of one computed item is weighed by what holds it next, not as it is built
    "share-one-item-twice": NS + "{% for i in range(64) %}{% set a = [ns.l] %}{% set ns.l = [a, a] %}{% endfor %}"
    "{{ ns.l }}",
    "share-one-item-added": NS + "{% for i in range(64) %}{% set a = {'k': ns.l} %}{% set ns.l = [a] + [a] %}"
    "{% endfor %}{{ ns.l|tojson }}",
    "share-one-item-grows": NS + "{% for i in range(64) %}{% set ns.l = ns.l + [ns.l] %}{% endfor %}{{ ns.l }}",
    "share-one-item-laundered": NS + "{% for i in range(64) %}{% set y = [ns.l]|list %}{% set ns.l = y + y %}"
    "{% endfor %}{{ ns.l }}",
    # a long string printed many times within the first chunk of fuel (no refuel looks at
    # the output): the render's end measures it before the join (25 GB of references else)
    "print-long-string-loop": "{% set s = ('x' * 100000)|replace('x', 'y' * 999) %}"
    "{% for i in range(250) %}{{ s }}{% endfor %}",
    "print-long-string-straight": "{% set s = ('x' * 100000)|replace('x', 'y' * 999) %}" + "{{ s }}" * 250,
    # a string no guard marks (60,000 characters), printed 2,000 times in straight code
    "print-unmarked-string-straight": "{% set s = (['x' * 4000] * 15)|join %}" + "{{ s }}" * 2000,
    # a function's text as a value feeds the next call: a macro or a block set printing its
    # input twice doubles it (the meter measures the render's buffer, not these)
    "double-through-macro": "{% macro d(x) %}{{ x }}{{ x }}{% endmacro %}{% set ns = namespace(s='ab') %}"
    "{% for i in range(64) %}{% set ns.s = d(ns.s) %}{% endfor %}{{ ns.s|length }}",
    "double-through-block-set": "{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
    "{% set t %}{{ ns.s }}{{ ns.s }}{% endset %}{% set ns.s = t %}{% endfor %}{{ ns.s|length }}",
    "double-through-caller": "{% macro c() %}{{ caller() }}{{ caller() }}{% endmacro %}"
    "{% macro w(s) %}{% call c() %}{{ s }}{% endcall %}{% endmacro %}{% set ns = namespace(s='ab') %}"
    "{% for i in range(64) %}{% set ns.s = w(ns.s) %}{% endfor %}{{ ns.s|length }}",
    # pairs of ``dictsort`` / ``items()`` hold a value of the template: fed back through a
    # namespace they nest a level an iteration, and hashing 100,000 levels crashes the process
    "deep-pairs-dictsort": "{% set ns = namespace(x=0) %}{% for j in range(3) %}{% for i in range(100000) %}"
    "{% set ns.x = ({'a': ns.x}|dictsort)[0] %}{% endfor %}{% endfor %}{{ ns.x in {} }}",
    "deep-pairs-items": "{% set ns = namespace(x=0) %}{% for j in range(3) %}{% for i in range(100000) %}"
    "{% set ns.x = {'a': ns.x}.items()|first %}{% endfor %}{% endfor %}{{ [ns.x]|unique|list|length }}",
    # ... nested in a list or a dict the namespace keeps (stored as a local or by ns_set)
    "deep-pairs-in-list": "{% set ns = namespace(l=[0]) %}{% for j in range(3) %}{% for i in range(100000) %}"
    "{% set ns.l = [({'a': ns.l[0]}|dictsort)[0]] %}{% endfor %}{% endfor %}{{ ns.l[0] in {} }}",
    "deep-pairs-in-dict": "{% set ns = namespace(d={'a': 0}) %}{% for j in range(3) %}{% for i in range(100000) %}"
    "{% set ns.d = {'a': ({'a': ns.d.a}|dictsort)[0]} %}{% endfor %}{% endfor %}{{ ns.d.a in {} }}",
    "deep-pairs-dict-key": "{% set ns = namespace(d={'k': 0}) %}{% set shared = ns %}{% for j in range(3) %}"
    "{% for i in range(100000) %}{% set ns.d = {({'a': ns.d|first}|dictsort)[0]: 1} %}{% endfor %}{% endfor %}{{ ns.d|first in {} }}",
    "deep-items-in-list": "{% set ns = namespace(l=[0]) %}{% set shared = ns %}{% for j in range(3) %}{% for i in range(100000) %}"
    "{% set ns.l = [{'a': ns.l[0]}.items()|first] %}{% endfor %}{% endfor %}{{ [ns.l[0]]|unique|list|length }}",
    # lazy filters fed back: a chain of 100,000 generators, each iterating the one inside
    "lazy-batch-chain": "{% set ns = namespace(g=[1]) %}{% for i in range(100000) %}{% set ns.g = ns.g|batch(1) %}{% endfor %}{{ ns.g|list|length }}",
    "lazy-unique-chain": "{% set ns = namespace(g=[1]) %}{% for i in range(100000) %}{% set ns.g = ns.g|unique %}{% endfor %}{{ ns.g|list|length }}",
    "lazy-map-chain": "{% set ns = namespace(g=[1]) %}{% for i in range(100000) %}{% set ns.g = ns.g|map('lower') %}{% endfor %}{{ ns.g|list|length }}",
    # a container's text escapes what it holds (repr doubles a backslash): fed back, it
    # doubles each step past what weighing the container showed
    **{
        f"repr-doubling-{name}": "{% set ns = namespace(s='\\\\') %}{% for i in range(40) %}{% set ns.s = "
        + step.replace("X", "ns.s") + " %}{% endfor %}{{ ns.s|length }}"
        for name, step in REPR_STEPS.items()
    },
    # ... or through a recursive macro's argument: the text a filter makes is charged
    **{
        f"macro-repr-doubling-{name}": "{% macro d(s, n) %}{{ d(" + REPR_STEPS[name].replace("X", "s")
        + ", n - 1) if n else s|length }}{% endmacro %}{{ d('\\\\', 64) }}"
        for name in ("tojson", "replace", "forceescape", "title")
    },
    # per-item work an argument decides, inside one C-level list/sorted/join: an attribute
    # path of 50,000 parts, a sort key of 20,000 attributes, a test's 100,000-item argument
    "attribute-path": "{{ (['x'] * 100000)|map(attribute='" + "0." * 50000 + "0')|join|length }}",
    "sort-many-attributes": "{{ (['x'] * 2000)|sort(attribute='" + ",".join(["0"] * 20000) + "')|length }}",
    "select-in-long-list": "{% set l = range(100000)|list %}{{ range(100000)|select('in', l)|list|length }}",
    # textwrap cuts each piece off the rest of a long word: its length squared over the width
    "wordwrap-long-word": "{% set w = 'a' * 100000 %}{{ (w ~ w ~ w ~ w)|wordwrap(1)|length }}",
    # a product of integers doubles their digits: one multiplication of millions of digits
    "bigint-product": "{% set ns = namespace(n=3) %}{% for i in range(40) %}{% set ns.n = ns.n * ns.n %}{% endfor %}{{ ns.n > 0 }}",
    "bigint-product-straight": "{% set a = 3 ** 60000 %}{% set b = a*a*a*a*a*a*a*a %}{% set c = b*b*b*b*b*b*b*b %}{{ c > 0 }}",
    # each iteration or statement scans a 3.2M-character string in one C-level step: the
    # CPU time is charged at the looks a long loop, or straight code holding a long value, makes
    "loop-scans-long-string": "{% set s = 'ab ' * 33333 %}{% set s = s ~ s ~ s ~ s ~ s ~ s ~ s ~ s %}"
    "{% set s = s ~ s ~ s ~ s %}{% for i in range(4000) %}{% if 'zz' in s %}{% endif %}{% endfor %}done",
    "straight-scans-long-string": "{% set s = 'ab ' * 33333 %}{% set s = s ~ s ~ s ~ s ~ s ~ s ~ s ~ s %}"
    "{% set s = s ~ s ~ s ~ s %}" + "{% if 'zz' in s %}{% endif %}" * 2000 + "done",
    # a loop its first chunk of fuel pays for, each iteration a C-level search of a million
    # items (26 ms): a render holding a long value has its loops looked at from their start
    "first-chunk-scans-long-list": "{% set l = range(100000)|list %}{% set l2 = l + l + l + l + l + l + l + l"
    " + l + l %}{% for i in range(1000) %}{% if 'x' in l2 %}{% endif %}{% endfor %}{{ l2|length }}",
    "first-chunk-counts-long-list": "{% set l = range(100000)|list %}{% set l2 = l + l + l + l + l + l + l + l"
    " + l + l %}{% for i in range(1000) %}{% if l2.count('x') %}{% endif %}{% endfor %}{{ l2|length }}",
    # a text of 100M characters made in one step, then one more step on it: x3 (a ligature's
    # upper case), x10 (an emoji escaped), 33M pieces of a split (each 1.6-2.4 GB)
    "one-step-100M-then-upper": "{% set s = ('x' * 100000)|replace('x', '\ufb03' * 999) %}{{ (s|upper)|length }}",
    "one-step-100M-then-escape": "{% set s = ('x' * 100000)|replace('x', '\U0001f600' * 999) %}"
    "{{ s.encode('unicode_escape')|length }}",
    "split-of-12M-characters": "{% set s = ('x' * 12000)|replace('x', 'ab ' * 333) %}{{ s.split()|length }}",
    # numbers of one hash (multiples of 2**61 - 1): a set or dict of them is quadratic in C
    "hash-flood-unique": "{% set l = range(0, 100000 * 2305843009213693951, 2305843009213693951)|list %}"
    "{{ l|unique|list|length }}{{ dict.fromkeys(l)|length }}",
    # a loop over a lazy filter's result (no length: charged nothing, never looked at its
    # meter), each iteration scanning a 60,000-character string 40 times: over 120 s
    "lazy-loop-hidden-work": "{% set s = 'ab' * 30000 %}{% for i in range(100000)|select %}"
    + "{% if 'zzz' in s %}{% endif %}" * 40 + "{% endfor %}done",
    # tuples of such numbers have one hash too (40,000 in ``unique``: 39 s)
    "hash-flood-tuples": "{% set ns = namespace(l=[]) %}{% for i in range(400) %}{% set ns.c = [] %}"
    "{% for j in range(100) %}{% set ns.c = ns.c + [((i * 100 + j) * 2305843009213693951,)] %}{% endfor %}"
    "{% set ns.l = ns.l + ns.c %}{% endfor %}{{ ns.l|unique|list|length }}{{ dict.fromkeys(ns.l)|length }}",
    # a division (or remainder) of big integers is quadratic in their digits: 0.26 s each
    "bigint-division": "{% set a = 2 ** 99999 %}{% set b = a * a %}{% set c = b * b - 1 %}{% set d = b + 12345 %}"
    "{% for i in range(1000) %}{{ (c // d) > 0 }}{% endfor %}",
    "bigint-remainder-straight": "{% set a = 2 ** 99999 %}{% set b = a * a %}{% set c = b * b - 1 %}"
    "{% set d = b + 12345 %}" + "{{ (c % d) > 0 }}" * 200,
    # red team s9h: any dict's ``fromkeys`` (a class method) is the ``dict`` global's, weighed
    # and its keys' hashes charged (F1: 16 s and 3.5 GB; a flood past 60 s)
    "fromkeys-method-sharing": "{% set s = 'x' * 100000 %}{% set d = {}.fromkeys(range(100000), s) %}{{ d|length }}{{ d }}",
    "fromkeys-method-flood": "{% set d = {}.fromkeys(range(0, 100000 * 2305843009213693951, 2305843009213693951)) %}"
    "{{ d|length }}",
    # every line break ``splitlines`` splits at, and urlize's words at any whitespace and of a
    # list's text (F2: 12.5 s and 3.8 GB; 1.26G characters)
    "indent-carriage-returns": "{{ ('a\\r' * 50000)|indent(90000)|length }}",
    "indent-line-separators": "{{ ('a\\u2028' * 50000)|indent('x' * 90000)|length }}",
    "wordwrap-carriage-returns": "{{ ('a\\r' * 50000)|wordwrap(100000, wrapstring='y' * 90000)|length }}",
    "urlize-tabs": "{{ ('www.a.com\\t' * 9000)|urlize(target='x' * 90000)|length }}",
    "urlize-list-target": "{{ ['ab.com ' * 14000]|urlize(target='x' * 90000)|length }}",
    "urlize-extra-schemes": "{{ ('a ' * 20000)|urlize(extra_schemes=['ab:'] * 50000)|length }}",  # F8
    "translate-list-table": "{% set t = ['y' * 90000] * 98 %}{{ ('a' * 90000).translate(t)|length }}",  # F3
    "tojson-separators": "{{ (range(100000)|list)|tojson(separators=('x' * 90000, ':'))|length }}",  # F4
    "strftime-widths": "{% set f = '%250Y' * 16000 %}{% set f = f ~ f ~ f ~ f ~ f ~ f ~ f ~ f %}"
    "{{ strftime_now(f)|length }}",  # F5
    "round-precision": "{{ 5|round(-100000000) }}",  # F7: a power of ten of 10**8 digits
    "round-precision-floor": "{{ 5|round(100000000, 'floor') }}",
    # F9: a string made an integer of any size; big integers divided inside a test
    "from-bytes": "{% set s = 'x' * 100000 %}{% set s = s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s %}"
    "{% set b = (0).from_bytes(s.encode(), 'big') %}{{ b is divisibleby(3 ** 100000 + 1) }}",
    "divisibleby-bigint": "{% set a = 7 ** 70000 %}{% set b = a * a - 1 %}{% set c = 3 ** 120000 + 1 %}"
    + "{{ b is divisibleby(c) }}" * 200,
    # chains of lazy filters, each over the last one's generator: every level charged for the
    # items at the chain's start, and no chain deeper than bounded.LAZY_DEPTH (red team s8h F3:
    # 100 maps of 100,000 items ran 4 s inside one ``list``, paid for at their first level)
    "lazy-map-chain": "{% set ns = namespace(x=range(100000)) %}{% for i in range(100) %}"
    "{% set ns.x = ns.x|map('string') %}{% endfor %}{{ ns.x|list|length }}",
    "lazy-select-chain": "{% set ns = namespace(x=range(100000)) %}{% for i in range(400) %}"
    "{% set ns.x = ns.x|select %}{% endfor %}{{ ns.x|join|length }}",
    "lazy-chain-deep": "{% set ns = namespace(x=[1, 2]) %}{% for i in range(100000) %}"
    "{% set ns.x = ns.x|rejectattr('real')|map('int') %}{% endfor %}{{ ns.x|list }}",
    "lazy-unique-chain": "{% set ns = namespace(x=range(100000)) %}{% for i in range(100) %}"
    "{% set ns.x = ns.x|unique %}{% endfor %}{{ ns.x|list|length }}",
    "lazy-batch-chain": "{% set ns = namespace(x=range(100000)) %}{% for i in range(100) %}"
    "{% set ns.x = ns.x|batch(1)|map('first') %}{% endfor %}{{ ns.x|list|length }}",
    # red team s9h2: long integers weigh their size (A: 100,000 of them made in one call held
    # 2.5 GB); wordwrap of a float width (B); integers past a product's cap from int(base=16),
    # from_bytes of an iterator, and what they cost in sum and round (C); hash keys of long
    # integers charged (D); chains from a sized iterator or from items (E)
    "range-of-long-integers": "{{ range(7 ** 70000, 7 ** 70000 + 100000)|list|length }}",
    "map-of-long-integers": "{% set a = 7 ** 70000 %}{% set b = a * a %}{% set n = 0 - b %}"
    "{{ range(100000)|map('abs')|map('string')|list|length }}{{ ([n] * 100000)|map('abs')|list|length }}",
    "wordwrap-float-width": "{{ ('a ' * 50000)|wordwrap(1.5, false, wrapstring='y' * 90000)|length }}",
    "int-base-16": "{% set s = 'f' * 100000 %}{% set s = s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s %}"
    "{% set s = s ~ s ~ s ~ s %}{% set b = s|int(base=16) %}{{ b.bit_length() }}",
    "from-bytes-iterator": "{% set s = 'f' * 100000 %}{% set s = s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s %}"
    "{% set b = (0).from_bytes(s.encode()|reverse, 'big') %}{{ b.bit_length() }}",
    "sum-long-start": "{% set a = 7 ** 70000 %}{% set b = a * a %}{{ range(100000)|sum(start=b) > 0 }}",
    "round-long-integer": "{% set a = 7 ** 70000 %}{% set b = a * a %}" + "{{ b|round(-4096) > 0 }}" * 60,
    "unique-long-keys": "{% set a = 7 ** 70000 %}{% set b = a * a %}{{ ([b] * 100000)|unique|list|length }}",
    "lazy-chain-from-reversed": "{% set ns = namespace(g=range(1, 100001)|reverse) %}{% for i in range(250) %}"
    "{% set ns.g = ns.g|select %}{% endfor %}{{ ns.g|list|length }}",
    "lazy-chain-from-items": "{% set d = dict.fromkeys(range(100000), 1) %}{% set ns = namespace(g=d|items) %}"
    "{% for i in range(250) %}{% set ns.g = ns.g|select %}{% endfor %}{{ ns.g|list|length }}",
}

GO_DOS = {
    # one print repeating a 100 KB operand: measured as its pieces are made, not after the join
    "printf-index-repeats": ('{{ $s := printf "%099999d" 1 }}{{ len (printf "' + "%[1]s" * 2000 + '" $s) }}', {}),
    "printf-doubled-format": ('{{ $s := printf "%099999d" 1 }}{{ $f := "%[1]s" }}{{ range 14 }}'
                              '{{ $f = printf "%s%s" $f $f }}{{ end }}{{ len (printf $f $s) }}', {}),
    "print-many-operands": ('{{ $s := printf "%099999d" 1 }}{{ len (print' + " $s" * 1100 + ') }}', {}),
    "range-int": ("{{ range 1000000000 }}x{{ end }}", {}),
    "nested-range": ("{{ range $.a }}{{ range $.a }}{{ range $.a }}{{ . }}{{ end }}{{ end }}{{ end }}", {"a": ["ab"] * 1000}),
    "printf-width": ('{{ range $.a }}{{ printf "%999999d" 1 }}{{ end }}', {"a": list(range(1000))}),
    "printf-star": ('{{ printf "%*d" 999999 1 }}', {}),
    "template-recursion": ('{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}', {}),
    # a long string printed many times within the first chunk of fuel: measured at the end
    "print-long-string-loop": ('{{ $s := printf "%099999d" 1 }}{{ range 9 }}{{ $s = printf "%s%s" $s $s }}{{ end }}'
                               "{{ range 240 }}{{ $s }}{{ end }}", {}),
    "print-long-string-straight": ('{{ $s := printf "%099999d" 1 }}{{ range 9 }}{{ $s = printf "%s%s" $s $s }}{{ end }}'
                                   + "{{ $s }}" * 240, {}),
    "template-fanout": ('{{ define "f" }}{{ range $.a }}{{ template "f" $ }}{{ end }}{{ end }}{{ template "f" . }}', {"a": [1, 2]}),
    # print keeps what it makes: doubled in a range, it is charged and capped as it grows
    "print-doubling": ('{{ $x := "ab" }}{{ range 31 }}{{ $x = print $x $x }}{{ end }}{{ len $x }}', {}),
    "printf-doubling": ('{{ $x := "ab" }}{{ range 31 }}{{ $x = printf "%s%s" $x $x }}{{ end }}{{ len $x }}', {}),
    # a width pads each item of a list the same: paid for item by item
    "printf-width-per-item": ('{{ printf "%99999v" .a }}', {"a": [0] * 20000}),
}



#: Heavy per-item helpers in loops nested three deep (a billion iterations if nothing paid):
#: the fuel must charge what each does (limits.charge, fuel.body_cost, output), so each
#: ends in a fuel error within the second too.
HEAVY_DATA = {
    "a": list(range(1000)),
    "f": 1.2345678901234,
    "d": {f"k{i}": i * 1.5 for i in range(20)},
    "l": [1.5, "x", 2] * 7,
    "s": "Hello <b>world</b> http://x.org " * 3,
}
HEAVY_GO = {
    "float": "{{ $.f }}", "map": "{{ $.d }}", "list": "{{ $.l }}", "printf": '{{ printf "%v %v %v" $.f $.f $.f }}',
    "printf-flags": '{{ printf "%08.3f|%-6d|%q" $.f 7 $.s }}', "json": "{{ json $.d }}", "print": "{{ print $.l $.f }}",
    "println": "{{ println $.d }}", "html": "{{ html $.s }}", "js": "{{ js $.s }}", "urlquery": "{{ urlquery $.s }}",
    "len-index-slice": "{{ len $.l }}{{ index $.l 1 }}{{ slice $.s 1 5 }}", "eq": "{{ eq $.f 1.0 2.0 3.0 }}",
}
HEAVY_JINJA = {
    "dict": "{{ d }}", "tojson": "{{ d|tojson }}", "tojson-indent": "{{ d|tojson(indent=2) }}", "join": "{{ l|join(',') }}",
    "dictsort": "{{ d|dictsort }}", "upper": "{{ s|upper }}", "replace": "{{ s|replace('o', '00') }}",
    "format": "{{ '%s %r %f'|format(s, l, f) }}", "indent": "{{ s|indent(4, true) }}", "wordwrap": "{{ s|wordwrap(10) }}",
    "center": "{{ s|center(200) }}", "truncate": "{{ s|truncate(20) }}", "striptags": "{{ s|striptags }}",
    "urlize": "{{ s|urlize }}", "pprint": "{{ d|pprint }}", "unique": "{{ l|unique|list }}", "map": "{{ l|map('string')|join }}",
    "sum": "{{ a|sum }}", "max": "{{ a|max }}", "title": "{{ s|title }}", "escape": "{{ s|e }}",
    "str-format": "{{ '{} {} {}'.format(f, l, d) }}", "items": "{% for k, v in d.items() %}{{ k }}{% endfor %}",
}

#: Work hidden in one step: a loop of 100,000 iterations, each a C-level operation over a
#: value of 100,000 items or characters (a method scanning a string, a list searched,
#: compared or printed, a filter over a ``range``): ten billion steps nominally, with one
#: unit of fuel per iteration. Each must end in a fuel error within the second: a filter's
#: input is charged (a ``range`` included), and the meter charges the CPU time a loop takes
#: past its count (``Meter._timed``), so no step is free however it is written.
LOOP = "{% for i in range(100000) %}"
HIDDEN_WORK = {
    "range-sum": LOOP + "{{ range(100000)|sum }}{% endfor %}",
    "range-sort": LOOP + "{% if range(100000)|sort %}{% endif %}{% endfor %}",
    "range-join": LOOP + "{% if range(100000)|join %}{% endif %}{% endfor %}",
    "generator-loops": "{% for i in range(100000)|select %}{% for j in range(100000)|select %}{% endfor %}{% endfor %}",
    "list-string": "{% set l = range(100000)|list %}" + LOOP + "{% if l|string %}{% endif %}{% endfor %}",
    "list-compare": "{% set l = range(100000)|list %}" + LOOP + "{% if l == l[:] %}{% endif %}{% endfor %}",
    "list-in": "{% set l = range(100000)|list %}" + LOOP + "{% if 99999 in l %}{% endif %}{% endfor %}",
    "list-index": "{% set l = range(100000)|list %}" + LOOP + "{% if l.index(99999) %}{% endif %}{% endfor %}",
    "str-split": "{% set s = 'x ' * 50000 %}" + LOOP + "{% if s.split() %}{% endif %}{% endfor %}",
    "str-upper": "{% set s = 'x' * 100000 %}" + LOOP + "{% if s.upper() %}{% endif %}{% endfor %}",
    "str-upper-filter": "{% set s = 'x' * 100000 %}" + LOOP + "{% if s|upper %}{% endif %}{% endfor %}",
    "str-count": "{% set s = 'x' * 100000 %}" + LOOP + "{% if s.count('y') %}{% endif %}{% endfor %}",
    "str-replace": "{% set s = 'x' * 100000 %}" + LOOP + "{% if s|replace('x', 'y') %}{% endif %}{% endfor %}",
    "str-escape": "{% set s = 'x' * 100000 %}" + LOOP + "{% if s|e %}{% endif %}{% endfor %}",
    "str-int": "{% set s = '1' * 4000 %}" + LOOP + "{% if s|int %}{% endif %}{% endfor %}",
    "str-test": "{% set s = 'x' * 100000 %}" + LOOP + "{% if s is lower %}{% endif %}{% endfor %}",
}
GO_HIDDEN_WORK = {
    "html": '{{ $s := printf "%99999s" "<" }}{{ range 100000 }}{{ $x := html $s }}{{ end }}',
    "slice": '{{ $s := printf "%99999s" "<" }}{{ range 100000 }}{{ $x := slice $s 1 }}{{ end }}',
    "print": '{{ $s := printf "%99999s" "<" }}{{ range 100000 }}{{ $x := print $s $s }}{{ end }}',
    # Go's len / index / slice of a string are O(1); here each encodes it (red team s7h F5: a
    # range looked at its clock every 2,560 iterations: 55 s), in a counted range and in one
    # charged as it starts
    "slice-long": '{{ $s := printf "%99999s" "\U0001F600" }}{{ $s = print $s $s $s $s $s $s $s $s $s $s }}'
    '{{ range 100000 }}{{ $x := slice $s 1 }}{{ end }}',
    "index-long-short-range": '{{ $s := printf "%99999s" "\u00e9" }}{{ $s = print $s $s $s $s $s $s $s $s $s $s }}'
    '{{ range 3000 }}{{ $x := index $s 5 }}{{ $y := len $s }}{{ end }}',
}

#: Filters and methods that build a large value from small input: (hostile template, the
#: limit it must hit, the same template with small arguments, which must render exactly as
#: transformers' sandbox renders it).
GROWTH = {
    "replace-filter": ("{{ ('a' * 90000)|replace('a', 'b' * 90000) }}", "output", "{{ ('a' * 3)|replace('a', 'bc') }}"),
    "replace-filter-empty": ("{{ ('a' * 90000)|replace('', 'b' * 9000) }}", "output", "{{ 'aaa'|replace('', '-') }}"),
    "replace-method": ("{{ ('a' * 90000).replace('a', 'b' * 90000) }}", "output", "{{ 'aaa'.replace('a', 'bc') }}{{ 'aaa'.replace('a', 'b', 1) }}"),
    "replace-method-empty": ("{{ ('a' * 90000).replace('', 'xyz' * 1000) }}", "output", "{{ 'ab'.replace('', '.') }}"),
    "join-method": ("{{ ('x' * 90000).join(['a'] * 90000) }}", "output", "{{ ', '.join(['a', 'b']) }}{{ '-'.join('abc') }}"),
    "join-filter": ("{{ (['a'] * 90000)|join('x' * 90000) }}", "output", "{{ ['a', 'b']|join('--') }}"),
    "center-method": ("{{ 'x'.center(10**9) }}", "value", "{{ 'x'.center(7, '*') }}|"),
    "ljust-method": ("{{ 'x'.ljust(10**9) }}", "value", "{{ 'x'.ljust(4) }}|"),
    "rjust-method": ("{{ 'x'.rjust(10**9) }}", "value", "{{ 'x'.rjust(4, '0') }}"),
    "zfill-method": ("{{ '7'.zfill(10**9) }}", "value", "{{ '7'.zfill(3) }}{{ '-7'.zfill(4) }}"),
    "expandtabs-width": ("{{ '\t'.expandtabs(10**9) }}", "value", "{{ 'a\tb'.expandtabs(4) }}|{{ 'a\tb'.expandtabs() }}"),
    "expandtabs-many": ("{{ ('\t' * 90000).expandtabs(9000) }}", "output", "{{ ('\t' * 3).expandtabs(2) }}|"),
    "translate": ("{{ ('a' * 90000).translate({97: 'b' * 90000}) }}", "output", "{{ 'abc'.translate({97: 'xy'}) }}"),
    "center-filter": ("{{ 'a'|center(10**10) }}", "value", "{{ 'a'|center(5) }}|"),
    "format-filter-width": ("{{ '%999999999d'|format(1) }}", "value", "{{ '%5d|%-3s|'|format(1, 'a') }}"),
    "format-star": ("{{ '%*d' % (999999999, 1) }}", "value", "{{ '%*d' % (4, 1) }}"),
    "str-format-width": ("{{ '{:>999999999}'.format('x') }}", "value", "{{ '{:>4}'.format('x') }}"),
    "str-format-nested": ("{{ '{:{}}'.format('x', 999999999) }}", "value", "{{ '{:{}}|'.format('x', 3) }}"),
    "format-map-width": ("{{ '{x:999999999}'.format_map({'x': 1}) }}", "value", "{{ '{x:3}'.format_map({'x': 1}) }}"),
    "percent-dict-width": ("{{ '%(a)999999999s' % {'a': 1} }}", "value", "{{ '%(a)3s' % {'a': 1} }}"),
    "indent": ("{{ ('a\n' * 50000)|indent(90000) }}", "output", "{{ 'a\nb'|indent(2) }}|{{ 'a\nb'|indent('> ', true) }}"),
    "wordwrap": ("{{ ('a ' * 45000)|wordwrap(1, wrapstring='y' * 90000) }}", "output", "{{ 'aaa bbb ccc'|wordwrap(4, wrapstring='|') }}"),
    "urlize-target": ("{{ ('www.a.com ' * 9000)|urlize(target='x' * 90000) }}", "output", "{{ 'see www.a.com'|urlize(target='_blank') }}"),
    "batch-fill": ("{{ [1]|batch(10**9, 0)|list|length }}", "value", "{{ [1, 2, 3]|batch(2, 0)|list }}"),
    "slice-count": ("{{ [1]|slice(10**9)|list|length }}", "value", "{{ [1, 2, 3]|slice(2)|list }}"),
    "tojson-indent": ("{{ ([[1, 2, 3]] * 1000)|tojson(indent=10**6) }}", "output", "{{ [[1, 2]]|tojson(indent=2) }}"),
    "tojson-indent-str": ("{{ (range(90000)|list)|tojson(indent='x' * 90000) }}", "output", "{{ [1]|tojson(indent='--') }}"),
    "string-repeat": ("{{ 'x' * 10**9 }}", "value", "{{ 'x' * 3 }}{{ 3 * 'ab' }}"),
    "list-repeat": ("{{ ([1, 2] * 10**9)|length }}", "value", "{{ [1, 2] * 2 }}"),
    "power": ("{{ 2 ** (10 ** 9) }}", "value", "{{ 2 ** 10 }}"),
    "product": ("{{ ((3 ** 60000) * (3 ** 60000) * (3 ** 60000) * (3 ** 60000) * (3 ** 60000)) > 0 }}", "value", "{{ (3 ** 50) * (2 ** 70) }}"),
    # bytes repeat, pad and grow as strings do; an int's to_bytes pads to its length
    "bytes-repeat": ("{{ ('a'.encode() * 10**9)|length }}", "value", "{{ ('ab'.encode() * 2)|length }}"),
    "bytes-center": ("{{ 'a'.encode().center(10**9)|length }}", "value", "{{ 'a'.encode().center(5)|length }}"),
    "bytes-join": ("{{ ('x' * 90000).encode().join(['a'.encode()] * 90000)|length }}", "output", "{{ '-'.encode().join(['a'.encode(), 'b'.encode()])|length }}"),
    "int-to-bytes": ("{{ (1).to_bytes(10**9, 'big')|length }}", "value", "{{ (1).to_bytes(4, 'big')|length }}"),
    # a Markup's methods (Python wrappers of str's) are guarded as str's are
    "markup-center": ("{{ ('x'|escape).center(10**9) }}", "value", "{{ ('x'|escape).center(5) }}|"),
    "markup-replace": ("{{ (('a' * 90000)|escape).replace('a', 'b' * 90000)|length }}", "output", "{{ ('a<'|escape).replace('a', 'bc') }}"),
    # any method's text past 65,536 characters is charged and capped as it is made: a
    # round trip through bytes doubles (hex) or quadruples (utf-32) a string each step
    "hex-doubling": ("{% set ns = namespace(s='x' * 99999) %}{% for i in range(14) %}{% set ns.s = ns.s.encode().hex() %}{% endfor %}{{ ns.s|length }}",
                     "fuel", "{{ 'ab'.encode().hex() }}"),
    # a codec written in Python (punycode; idna runs it) scans the text once per distinct
    # character: one encode of 27,000 distinct characters ran 45 s; charged before it runs
    "punycode-distinct": ("{% set ns = namespace(s='') %}{% for i in range(4000) %}{% set ns.s = ns.s ~ '%c' % (19968 + i) %}{% endfor %}{{ ns.s.encode('punycode')|length }}",
                          "fuel", "{% set ns = namespace(s='') %}{% for i in range(40) %}{% set ns.s = ns.s ~ '%c' % (19968 + i) %}{% endfor %}{{ ns.s.encode('punycode') }}|{{ 'b\u00fccher'.encode('idna') }}|{{ 'b\u00fccher'.encode('punycode').decode('punycode') }}"),
    "punycode-loop": ("{% set s = '\u00e9\u4e00' * 4500 %}{% for i in range(300) %}{% if s.encode(encoding='punycode') %}{% endif %}{% endfor %}",
                      "fuel", "{{ ('\u00e9\u4e00' * 3).encode(encoding='punycode') }}"),
    # idna's decode encodes its result again to check it: 6,000 distinct characters 3.8 s
    "idna-decode": ("{{ 'xn--" + "".join(map(chr, range(0x4E00, 0x4E00 + 6000))).encode("punycode").decode()
                    + "'.encode().decode('idna')|length }}", "fuel",
                    "{{ 'xn--bcher-kva'.encode().decode('idna') }}|{{ 'abc'.encode().decode(encoding='idna') }}"),
    "codec-growth": ("{% set ns = namespace(s='x' * 99999) %}{% for i in range(9) %}{% set ns.s = ns.s.encode('utf-32').decode('latin-1') %}{% endfor %}{{ ns.s|length }}",
                     "fuel", "{{ 'ab'.encode('utf-32').decode('latin-1')|length }}"),
    # each ``~`` past 4,096 characters charges what it builds: the fuel stops the doubling
    # at ~16M characters built, before the output cap would
    "ns-doubling": (NS_DOUBLING := "{% set ns = namespace(s='ab') %}{% for i in range(N) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
                    "fuel", None),
    "ns-doubling-list": ("{% set ns = namespace(l=[1]) %}{% for i in range(N) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}",
                         "value", None),
    "sum-lists-doubling": ("{% set ns = namespace(l=[1]) %}{% for i in range(N) %}{% set ns.l = [ns.l, ns.l]|sum(start=[]) %}{% endfor %}{{ ns.l|length }}",
                           "value", None),
}


GO_GROWTH = {
    "printf-width": ('{{ printf "%999999s" "x" }}', '{{ printf "%5s|%-3d|" "x" 7 }}'),
    "printf-precision": ('{{ printf "%.999999f" 1.5 }}', '{{ printf "%.3f" 1.5 }}'),
    "printf-star-width": ('{{ printf "%*s" 999999 "x" }}', '{{ printf "%*s" 4 "x" }}'),
    "printf-star-precision": ('{{ printf "%.*f" 999999 1.5 }}', '{{ printf "%.*f" 2 1.5 }}'),
    "printf-zero-pad": ('{{ printf "%0999999d" 1 }}', '{{ printf "%05d" 1 }}'),
    "range-int": ("{{ range 1000000000 }}x{{ end }}", "{{ range 3 }}x{{ end }}"),
    "range-int-var": ("{{ $n := 1000000000 }}{{ range $i := $n }}{{ $i }}{{ end }}", "{{ $n := 3 }}{{ range $i := $n }}{{ $i }}{{ end }}"),
}




def growth_case(name: str) -> tuple:
    """(hostile template, its limit, the template with small arguments) of GROWTH[name]."""
    hostile, limit, small = GROWTH[name]
    if "range(N)" in hostile:
        return hostile.replace("range(N)", "range(64)"), limit, hostile.replace("range(N)", "range(4)")
    return hostile, limit, small


def cases() -> dict:
    """name -> (dialect, source, data) of every case the child runs."""
    out: dict = {}
    for name, source in JINJA_DOS.items():
        out[f"jinja-dos/{name}"] = ("jinja", source, {})
    for name, (source, data) in GO_DOS.items():
        out[f"go-dos/{name}"] = ("go", source, data)
    for name, body in HEAVY_JINJA.items():
        loops = "{% for i in a %}{% for j in a %}{% for k in a %}", "{% endfor %}{% endfor %}{% endfor %}"
        out[f"jinja-heavy/{name}"] = ("jinja", loops[0] + body + loops[1], HEAVY_DATA)
    for name, body in HEAVY_GO.items():
        loops = "{{ range $.a }}{{ range $.a }}{{ range $.a }}", "{{ end }}{{ end }}{{ end }}"
        out[f"go-heavy/{name}"] = ("go", loops[0] + body + loops[1], HEAVY_DATA)
    for name, source in HIDDEN_WORK.items():
        out[f"jinja-hidden/{name}"] = ("jinja", source, {})
    for name, source in GO_HIDDEN_WORK.items():
        out[f"go-hidden/{name}"] = ("go", source, {})
    for name in GROWTH:
        out[f"jinja-growth/{name}"] = ("jinja", growth_case(name)[0], {})
    for name, (source, _small) in GO_GROWTH.items():
        out[f"go-growth/{name}"] = ("go", source, {})
    return out


def slowdown() -> float:
    """How much slower than an idle machine this one runs now (>= 1): the time bounds are
    "one second on an idle machine", scaled, as test machines are shared."""
    best = min(_time_loop() for _ in range(3))
    return max(1.0, best / 0.006)  # 200,000 iterations of a Python loop: ~6 ms on an idle core


def _time_loop() -> float:
    start = time.perf_counter()
    x = 0
    for i in range(200_000):
        x += i
    return time.perf_counter() - start


class _Hang(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Hang()


def _child() -> None:
    """Render every case under the caps; one JSON line per case (flushed as it ends)."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    from tmpl2py.compiler import compile_template
    from tmpl2py.runtime.limits import RenderLimitExceeded

    signal.signal(signal.SIGALRM, _alarm)
    print(json.dumps({"slowdown": slowdown()}), flush=True)
    for name, (dialect, source, data) in cases().items():
        profile = "plain" if dialect == "jinja" else "ollama"
        template = compile_template(source, dialect=dialect, profile=profile, name=name)
        row: dict = {"case": name}
        signal.setitimer(signal.ITIMER_REAL, ALARM_SECONDS)
        start = time.perf_counter()
        try:
            template.render(data)
            row["outcome"] = "rendered"
        except RenderLimitExceeded as e:
            row.update(outcome="limit", limit=e.limit, where=e.where, message=str(e))
        except _Hang:
            row["outcome"] = "hang"
        except BaseException as e:  # noqa: BLE001 - reported: MemoryError, RecursionError...
            row.update(outcome=type(e).__name__, message=str(e)[:300])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        row["seconds"] = time.perf_counter() - start
        print(json.dumps(row), flush=True)


@functools.lru_cache(maxsize=None)
def results() -> dict:
    """case name -> the child's row (and "slowdown"), run once per test process. A case
    the child never reported (it was killed: past TOTAL_SECONDS, or by the memory cap in a
    way Python could not turn into MemoryError) is missing."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    try:
        proc = subprocess.run(
            [sys.executable, __file__], capture_output=True, text=True, timeout=TOTAL_SECONDS, env=env
        )
        stdout = proc.stdout
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    rows: dict = {}
    for line in stdout.splitlines():
        row = json.loads(line)
        if "slowdown" in row:
            rows["slowdown"] = row["slowdown"]
        else:
            rows[row["case"]] = row
    return rows


def bounded_row(case: str) -> dict:
    """The child's row for ``case``, asserted to be a limit error within one (scaled)
    second: what every case of the tables must end in."""
    rows = results()
    row = rows.get(case)
    assert row is not None, f"{case}: no result (the child was killed: memory cap or total time)"
    assert row["outcome"] == "limit", row
    second = 1.0 * rows["slowdown"]
    assert row["seconds"] < second, f"{case} took {row['seconds']:.2f} s (one idle second is {second:.2f} s now)"
    return row


if __name__ == "__main__":
    _child()
