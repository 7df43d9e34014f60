"""Runtime primitives for compiled Go text/template templates (Ollama's semantics).
Long because it holds every primitive generated Go-template code calls (truth, field and
index access, calls, builtins), one import for a generated module.

Standard library only; the generated modules call these functions. Values are modelled
as described in ``runtime.gotmpl_fmt`` (None is Go's "no value": an invalid reflect.Value
or a nil interface). What each operation does with the values Go distinguishes::

    operation            missing map key      nil (JSON null)       typed struct, no such field
    {{ .X }} prints      <no value>           <no value>            exec error: can't evaluate
                                                                    field X in type T
    truth (if/with/and)  false                false                 (structs are always true)
    .X.Y (chain)         <no value>; error    exec error: nil       exec error
                         with missingkey=zero pointer evaluating
                         (Ollama)             interface {}.Y
    print / printf %v    <nil>                <nil>                 -
    range                no iterations        no iterations         exec error: range can't
                         (else runs)          (else runs)           iterate over {...}
    eq / lt ...          nil == nil only      nil == nil only       incomparable: exec error
    json                 null                 null                  fields by Go name / tag

A missing key under missingkey=zero (Ollama) and a JSON null are *nil interfaces* (a valid
reflect.Value of type interface {} holding nil); a missing key otherwise is *no value* (an
invalid reflect.Value). Both are None here, and both print and compare alike; they differ
only where a field chain (or a range element) is passed straight to a function, which sees
the slot's static type: ``len`` ("len of nil pointer" vs reflect's zero Value panic), a
string parameter ("got interface {}" vs "invalid value") and ``slice``'s indexes (any
interface {} argument: "cannot index slice/array with type interface {}"). Pipelines and
variables hold the value itself (exec.go's evalPipeline digs into interfaces). The
lowering routes only those arguments through ``length_path`` / ``string_arg_path`` /
``index_arg_path`` (which know the slot the chain read) or passes ``iface=True`` for a
range element, so the common path pays nothing.

Printing follows fmt's %v (``map[a:1 b:2]`` with sorted keys, ``[a b]``, ``<nil>``,
floats as Go's %g shortest); maps range in sorted key order; ``len`` and ``slice`` of a
string count UTF-8 bytes. Execution errors raise ``ExecError`` with Go's message (the
part after "executing ... at <...>: ").
"""

from __future__ import annotations

import datetime
import functools
import operator
from collections.abc import Iterable
from typing import Any

from ..limits import RenderDepthExceeded, charge, check_iterations, counted_range

from .fmt import (
    GoBytes,
    GoMap,
    GoNil,
    GoSlice,
    GoString,
    GoStruct,
    GoUint8,
    JSONError,
    format_value,
    from_bytes,
    go_type,
    is_print,
    is_stringer,
    kind,
    marshal,
    sprint,
    sprintln,
    to_bytes,
)
from .fmt import (
    sprintf as _sprintf,
)

__all__ = [
    "ExecError",
    "GoBytes",
    "GoMap",
    "GoNil",
    "GoSlice",
    "GoString",
    "GoStruct",
    "GoUint8",
    "call",
    "current_date",
    "eq",
    "fail",
    "field",
    "field_of_elem",
    "field_path",
    "ge",
    "gt",
    "elem_index_arg",
    "html_escape",
    "index",
    "index_arg_path",
    "js_escape",
    "le",
    "length",
    "length_path",
    "lt",
    "method_call",
    "ne",
    "plain_data",
    "print_field",
    "print_field_of_elem",
    "print_field_path",
    "range_pairs",
    "range_values",
    "set_now",
    "slice_",
    "slice_length",
    "sprint",
    "sprintf",
    "sprintln",
    "string_arg",
    "string_arg_path",
    "to_json",
    "to_str",
    "to_typescript_type",
    "truth",
    "urlquery_escape",
    "yesterday_date",
]


class ExecError(Exception):
    """A Go template execution error (``template.ExecError``); the message is Go's.

    Raised with Go's message alone (``message``); when it escapes a render, the compiler
    gives it Go's prefix (``template: NAME:LINE:COL: executing "NAME" at <NODE>: ``, see
    ``tmpl2py.compiler.gotmpl.exec_errors``) and ``str(e)`` is Go's whole error text."""

    def __init__(self, message: str, prefix: str = "") -> None:
        super().__init__(prefix + message)
        self.message = message  # Go's message without the prefix
        self.prefix = prefix


class TemplateDepthExceeded(ExecError, RenderDepthExceeded):
    """Template calls nested past Python's recursion limit: Go's error (Go stops at a depth of
    100,000; Python's stack ends sooner), and the render limit error of the depth limit."""

    def __init__(self, where: str = "") -> None:
        RenderDepthExceeded.__init__(self, "exceeded maximum template depth (100000)", where)


def fail(message: str, *evaluated: Any) -> Any:
    """Raise Go's execution error ``message`` (after the arguments were evaluated)."""
    raise ExecError(message)


def truth(value: Any) -> bool:
    """Go's isTrue (Python truthiness agrees for every value of the model)."""
    return bool(value)


# ----------------------------------------------------------------------------- printing


def to_str(value: Any) -> str:
    """What ``{{ pipeline }}`` prints (exec.go printValue): ``<no value>`` for no value."""
    if type(value) is str:
        return value
    if value is None:
        return "<no value>"
    string = _STRINGERS.get(type(value))
    if string is not None:
        return string(value)
    if isinstance(value, GoStruct) and value.go_pointer:
        return format_value(value)[1:]  # printValue indirects the pointer: no "&"
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (list, dict)) and hasattr(type(value), "String"):
        # a fmt.Stringer (a view type): fmt prints what it returns
        string = _STRINGERS[type(value)] = type(value).String
        return string(value)
    return format_value(value)


#: list and dict types with a String method (fmt.Stringer view types), as to_str meets them
_STRINGERS: dict = {}


def sprintf(fmt: str, *args: Any) -> str:
    return _sprintf(fmt, *args)


def string_arg(value: Any, iface: bool = False) -> str:
    """A value passed where Go wants a string parameter (exec.go validateType); ``iface``:
    the argument is a range element, so None is a nil interface rather than no value."""
    if isinstance(value, str):
        return value
    if value is None:
        if iface:
            raise ExecError("wrong type for value; expected string; got interface {}")
        raise ExecError("invalid value; expected string")
    raise ExecError(f"wrong type for value; expected string; got {go_type(value)}")


def string_arg_path(recv: Any, names: tuple, zero: bool = False, elem: bool = False) -> str:
    """``.A.B`` passed as a string parameter: a nil interface slot says "got interface {}"."""
    if type(recv) is dict and len(names) == 1:
        value = recv.get(names[0])
        if type(value) is str:
            return value
    value, _, nil_iface = _walk(recv, names, zero, elem)
    return string_arg(value, nil_iface)


# ----------------------------------------------------------------------------- fields


def _is_plain(value: Any) -> bool:
    """Could this range element have come out of an interface slot ([]any, map[string]any)?
    (Ints cannot: JSON numbers are float64; an int element comes from ranging over an int.)"""
    return type(value) in (str, float, bool, list, dict, complex) or value is None


def _methods(value: Any) -> frozenset:
    return getattr(type(value), "go_methods", frozenset())


def _lookup(recv: Any, name: str, typ: str | None, zero: bool) -> tuple[Any, str | None, bool]:
    """One step of a field chain on a valid, non-nil receiver (exec.go evalField).

    Returns (value, static type of the slot it came from, whether a None value is a nil
    interface rather than an invalid value)."""
    if type(recv) is dict:
        if name in recv:
            return recv[name], "interface {}", True
        return None, "interface {}", zero
    if name in _methods(recv):
        return getattr(recv, name)(), None, False
    if isinstance(recv, GoStruct):
        ftype = recv.go_field_types.get(name)
        if ftype is not None:
            return getattr(recv, name), ftype, ftype == "interface {}"
    elif isinstance(recv, dict):
        if name in recv:
            return recv[name], recv.go_elem_type, recv.go_elem_type == "interface {}"
        value = recv.go_zero()
        return value, recv.go_elem_type, recv.go_elem_type == "interface {}"
    elif isinstance(recv, GoNil):  # (its methods were called above, nil receiver and all)
        if name in getattr(recv, "go_pointee_fields", (name,)):
            raise ExecError(f"nil pointer evaluating {recv.go_type}.{name}")
        raise ExecError(f"can't evaluate field {name} in type {recv.go_type}")
    raise ExecError(f"can't evaluate field {name} in type {typ or go_type(recv)}")


def field(recv: Any, name: str) -> Any:
    """``.name`` on a value (dot, a variable, a pipeline result); no value gives no value."""
    if type(recv) is dict:
        return recv.get(name)
    if recv is None:
        return None
    if name in getattr(
        recv, "go_field_types", ()
    ):  # a struct field (Go forbids a method of that name)
        return getattr(recv, name)
    return _lookup(recv, name, None, False)[0]


def field_of_elem(recv: Any, name: str) -> Any:
    """``.name`` on a range element: a nil element is a nil interface, an error in Go."""
    if type(recv) is dict:
        return recv.get(name)
    if name in getattr(recv, "go_field_types", ()):
        return getattr(recv, name)
    if recv is None:
        raise ExecError(f"nil pointer evaluating interface {{}}.{name}")
    return _lookup(recv, name, "interface {}" if _is_plain(recv) else None, False)[0]


def print_field(recv: Any, name: str) -> str:
    """``{{ .name }}``: ``to_str(field(recv, name))``."""
    value = recv.get(name) if type(recv) is dict else field(recv, name)
    return value if type(value) is str else to_str(value)


def print_field_of_elem(recv: Any, name: str) -> str:
    """``{{ .name }}`` on a range element: ``to_str(field_of_elem(recv, name))``."""
    if name in getattr(recv, "go_field_types", ()):
        value = getattr(recv, name)
    else:
        value = field_of_elem(recv, name)
    return value if type(value) is str else to_str(value)


def _walk(recv: Any, names: tuple, zero: bool, elem: bool) -> tuple[Any, str | None, bool]:
    """``.A.B.C`` on ``recv``: (value, static type of the slot it came from or None when
    that is the value's own type, whether a None value is a nil interface)."""
    value = recv
    typ: str | None = "interface {}" if elem and _is_plain(recv) else None
    nil_iface = elem
    for name in names:
        if value is None:
            if nil_iface:
                raise ExecError(f"nil pointer evaluating {typ or 'interface {}'}.{name}")
            return None, None, False
        value, typ, nil_iface = _lookup(value, name, typ, zero)
    return value, typ, nil_iface


def field_path(recv: Any, names: tuple, zero: bool = False, elem: bool = False) -> Any:
    """``.A.B.C``: a chain of fields (a missing key stays "no value" unless ``zero``,
    Ollama's missingkey=zero, where the next step fails as on a nil interface)."""
    value = recv
    for name in names:  # struct fields all the way (the view types): plain attribute reads
        if name not in getattr(value, "go_field_types", ()):
            return _walk(recv, names, zero, elem)[0]
        value = getattr(value, name)
    return value


def print_field_path(recv: Any, names: tuple, zero: bool = False, elem: bool = False) -> str:
    """``{{ .A.B.C }}``: ``to_str(field_path(...))``."""
    value = field_path(recv, names, zero, elem)
    return value if type(value) is str else to_str(value)


def method_call(recv: Any, names: tuple, *args: Any, zero: bool = False, elem: bool = False) -> Any:
    """``.A.Method arg...`` (or a field given the piped value as its argument)."""
    value, typ, nil_iface = _walk(recv, names[:-1], zero, elem)
    name = names[-1]
    if value is None:
        if nil_iface:
            raise ExecError(f"nil pointer evaluating {typ or 'interface {}'}.{name}")
        return None
    if name in _methods(value):
        raise ExecError(f"wrong number of args for {name}: want 0 got {len(args)}")
    if isinstance(value, GoStruct) and any(f[0] == name for f in value.go_fields):
        raise ExecError(f"{name} has arguments but cannot be invoked as function")
    if isinstance(value, dict):
        raise ExecError(f"{name} is not a method but has arguments")
    raise ExecError(f"can't evaluate field {name} in type {typ or go_type(value)}")


# ----------------------------------------------------------------------------- range


def _sorted_items(d: dict) -> list:
    try:
        if "".join(d).isascii():  # string keys, code point order their byte order
            return sorted(d.items(), key=_first)  # (by key alone: what sorted(d) orders)
    except TypeError:  # not all strings (or not comparable): the general way
        pass
    try:
        keys = sorted(d)
        ascii_strings = "".join(keys).isascii()  # then code point order is byte order
    except TypeError:  # not all strings
        ascii_strings = False
    if not ascii_strings:
        try:
            keys = sorted(d, key=lambda k: to_bytes(k) if isinstance(k, str) else k)
        except TypeError:
            keys = list(d)
    return [(k, d[k]) for k in keys]


_first = operator.itemgetter(0)


def _format_indirect(value: Any) -> str:
    """``%v`` of ``indirect(value)``: range reports the struct a pointer points to."""
    text = format_value(value)
    return text[1:] if isinstance(value, GoStruct) and value.go_pointer else text


def range_values(value: Any) -> Iterable[Any]:
    """The elements ``{{range}}`` visits: slices in order, maps by sorted key, 0..n-1."""
    if type(value) is list:
        return value
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return value
    if isinstance(value, bytes):
        return [GoUint8(b) for b in value]
    if isinstance(value, dict):
        return [v for _, v in _sorted_items(value)]
    if isinstance(value, int) and not isinstance(value, bool):
        if value > 4096:  # more iterations than the fuel allows: refused before the first
            check_iterations(value)
            # a loop at the render's top level over the data's parts is not charged as it
            # starts (``compiler/fuel.py``, ``InputLoops``): a count is paid for as it runs
            return counted_range(value)
        return range(value) if value > 0 else ()
    raise ExecError(f"range can't iterate over {_format_indirect(value)}")


def range_pairs(value: Any) -> Iterable[tuple]:
    """(index or key, element) pairs for ``{{range $i, $v := ...}}``."""
    if type(value) is list:
        return enumerate(value)
    if value is None:
        return ()
    if isinstance(value, dict):
        return _sorted_items(value)
    if isinstance(value, (list, tuple)):
        return enumerate(value)
    if isinstance(value, bytes):
        return enumerate(GoUint8(b) for b in value)
    if isinstance(value, int) and not isinstance(value, bool):
        raise ExecError(f"can't use {value} to iterate over more than one variable")
    raise ExecError(f"range can't iterate over {_format_indirect(value)}")


# ----------------------------------------------------------------------------- comparison

_BASIC = {"bool", "int", "uint", "float", "complex", "string"}


def _basic(value: Any) -> str:
    k = kind(value)
    return k if k in _BASIC else "invalid"


def _type_of(value: Any) -> str:
    return go_type(value)


def eq(arg1: Any, *args: Any) -> bool:
    """Go's eq: arg1 == args[0] || arg1 == args[1] || ...; basic kinds only."""
    if len(args) == 1 and type(arg1) is type(args[0]) and type(arg1) in (str, int):
        return arg1 == args[0]  # two strings or two ints
    if not args:
        raise ExecError("error calling eq: missing argument for comparison")
    k1 = _basic(arg1)
    for arg in args:
        k2 = _basic(arg)
        if k1 != k2:
            if {k1, k2} == {"int", "uint"}:
                truth = arg1 == arg
            elif arg1 is not None and arg is not None:
                raise ExecError(
                    f"error calling eq: incompatible types for comparison: {_type_of(arg1)} and {_type_of(arg)}"
                )
            else:
                truth = False
        elif k1 != "invalid":
            truth = arg1 == arg
        else:
            truth = _eq_other(arg1, arg)
        if truth:
            return True
    return False


def _eq_other(a: Any, b: Any) -> bool:
    ka, kb = kind(a), kind(b)
    if ka != kb and ka != "invalid" and kb != "invalid":
        raise ExecError(
            f"error calling eq: non-comparable types {format_value(a, 's')}: {_type_of(a)}, "
            f"{_type_of(b)}: {format_value(b)}"
        )
    if _is_nil(a) or _is_nil(b):
        return _is_nil(a) == _is_nil(b)
    if kb in ("slice", "map") or (kb == "struct" and not getattr(b, "go_comparable", False)):
        raise ExecError(
            f"error calling eq: non-comparable type {format_value(b, 's')}: {_type_of(b)}"
        )
    if kb == "ptr":
        return a is b
    return bool(a == b)


def _is_nil(value: Any) -> bool:
    if value is None or isinstance(value, GoNil):
        return True
    return bool(getattr(value, "nil", False))


def ne(arg1: Any, arg2: Any) -> bool:
    try:
        return not eq(arg1, arg2)
    except ExecError as e:
        raise ExecError(str(e).replace("error calling eq:", "error calling ne:", 1)) from None


def _lt(arg1: Any, arg2: Any, name: str) -> bool:
    k1, k2 = _basic(arg1), _basic(arg2)
    if k1 == "invalid" or k2 == "invalid":
        raise ExecError(f"error calling {name}: invalid type for comparison")
    if k1 != k2:
        if {k1, k2} == {"int", "uint"}:
            return arg1 < arg2
        raise ExecError(
            f"error calling {name}: incompatible types for comparison: {_type_of(arg1)} and {_type_of(arg2)}"
        )
    if k1 in ("bool", "complex"):
        raise ExecError(f"error calling {name}: invalid type for comparison")
    if k1 == "string":
        return to_bytes(arg1) < to_bytes(arg2)
    return arg1 < arg2


def lt(arg1: Any, arg2: Any) -> bool:
    return _lt(arg1, arg2, "lt")


def le(arg1: Any, arg2: Any) -> bool:
    if _lt(arg1, arg2, "le"):
        return True
    try:
        return eq(arg1, arg2)
    except ExecError as e:
        raise ExecError(str(e).replace("error calling eq:", "error calling le:", 1)) from None


def gt(arg1: Any, arg2: Any) -> bool:
    if _lt(arg1, arg2, "gt"):
        return False
    try:
        return not eq(arg1, arg2)
    except ExecError as e:
        raise ExecError(str(e).replace("error calling eq:", "error calling gt:", 1)) from None


def ge(arg1: Any, arg2: Any) -> bool:
    return not _lt(arg1, arg2, "ge")


# ----------------------------------------------------------------------------- len, index, slice


def _indirect_type(item: Any) -> str:
    """The type Go's len/index/slice report: ``indirect`` dereferences a struct pointer."""
    if isinstance(item, GoStruct) and item.go_pointer:
        return item.go_type
    return go_type(item)


def length(item: Any, iface: bool = False) -> int:
    """Go's len; ``iface``: the argument is a range element (None: a nil interface)."""
    if type(item) is str:
        return len(to_bytes(item)) if not item.isascii() else len(item)
    if isinstance(item, GoNil):
        raise ExecError("error calling len: len of nil pointer")
    if isinstance(item, str):
        return len(to_bytes(item))
    if isinstance(item, (list, tuple, dict, bytes)):
        return len(item)
    if item is None:  # no value: Go's reflect panics (a nil interface says "len of nil pointer")
        if iface:
            raise ExecError("error calling len: len of nil pointer")
        raise ExecError("error calling len: reflect: call of reflect.Value.Type on zero Value")
    raise ExecError(f"error calling len: len of type {_indirect_type(item)}")


def length_path(recv: Any, names: tuple, zero: bool = False, elem: bool = False) -> int:
    """``len .A.B``: the chain's value, seen through its slot (a nil interface or not)."""
    if type(recv) is dict and len(names) == 1:
        value = recv.get(names[0])
    else:
        value = _walk(recv, names, zero, elem)[0]
    if value is None:  # the error path: walk again to learn what the slot holds
        return length(None, _walk(recv, names, zero, elem)[2])
    return length(value)


class _Interface:
    """An argument of static type interface {} where ``slice`` wants an index."""

    __slots__ = ()


_INTERFACE = _Interface()


def index_arg_path(recv: Any, names: tuple, zero: bool = False, elem: bool = False) -> Any:
    """``.A.B`` passed as an index of ``slice`` (which, unlike ``index``, does not look into
    interfaces): read from an interface {} slot, it can only be rejected."""
    value, typ, nil_iface = _walk(recv, names, zero, elem)
    if typ == "interface {}" and (value is not None or nil_iface):
        return _INTERFACE
    return value


def elem_index_arg(value: Any, iface: bool = True) -> Any:
    """A range element passed as an index of ``slice``: from a []any or map[string]any (the
    only collections holding plain values and nil) it is an interface {}. ``iface``: the
    variable holds the element now (a flag when the template also assigns it)."""
    return _INTERFACE if iface and _is_plain(value) else value


def _index_arg(index: Any, cap: int, name: str) -> int:
    if index is None:
        raise ExecError(f"error calling {name}: cannot index slice/array with nil")
    if index is _INTERFACE:
        raise ExecError(f"error calling {name}: cannot index slice/array with type interface {{}}")
    if isinstance(index, bool) or not isinstance(index, int):
        raise ExecError(
            f"error calling {name}: cannot index slice/array with type {go_type(index)}"
        )
    if index < 0 or index > cap:
        raise ExecError(f"error calling {name}: index out of range: {index}")
    return int(index)


def index(item: Any, *indexes: Any) -> Any:
    """Go's index: item[i][j]...; a missing map key gives the element type's zero value."""
    if item is None:
        raise ExecError("error calling index: index of untyped nil")
    for idx in indexes:
        if item is None or isinstance(item, GoNil):
            raise ExecError("error calling index: index of nil pointer")
        if isinstance(item, str):
            data = to_bytes(item)
            x = _index_arg(idx, len(data), "index")
            if x >= len(data):
                raise ExecError("error calling index: reflect: string index out of range")
            item = GoUint8(data[x])
        elif isinstance(item, (list, tuple, bytes)):
            x = _index_arg(idx, len(item), "index")
            if x >= len(item):
                raise ExecError("error calling index: reflect: slice index out of range")
            item = GoUint8(item[x]) if isinstance(item, bytes) else item[x]
        elif isinstance(item, dict):
            if idx is None:
                raise ExecError("error calling index: value is nil; should be of type string")
            if not isinstance(idx, str):
                raise ExecError(
                    f"error calling index: value has type {go_type(idx)}; should be string"
                )
            if idx in item:
                item = item[idx]
            else:
                item = item.go_zero() if isinstance(item, GoMap) else None
        else:
            raise ExecError(f"error calling index: can't index item of type {_indirect_type(item)}")
    return item


def slice_(item: Any, *indexes: Any) -> Any:
    """Go's slice: item[i:j] / item[i:j:k]; strings slice by bytes."""
    if item is None:
        raise ExecError("error calling slice: slice of untyped nil")
    if isinstance(item, GoNil):
        raise ExecError("error calling slice: slice of nil pointer")
    if len(indexes) > 3:
        raise ExecError(f"error calling slice: too many slice indexes: {len(indexes)}")
    if isinstance(item, str):
        if len(indexes) == 3:
            raise ExecError("error calling slice: cannot 3-index slice a string")
        data: Any = to_bytes(item)
    elif isinstance(item, (list, tuple, bytes)):
        data = item
    else:
        raise ExecError(f"error calling slice: can't slice item of type {_indirect_type(item)}")
    cap = len(data)
    idx = [0, len(data), cap]
    for i, index_value in enumerate(indexes):
        idx[i] = _index_arg(index_value, cap, "slice")
    if idx[0] > idx[1]:
        raise ExecError(f"error calling slice: invalid slice index: {idx[0]} > {idx[1]}")
    if len(indexes) == 3 and idx[1] > idx[2]:
        raise ExecError(f"error calling slice: invalid slice index: {idx[1]} > {idx[2]}")
    part = data[idx[0] : idx[1]]
    if isinstance(item, str):
        return from_bytes(part)
    if type(item) is list:
        return part
    result = type(item)(part)
    attrs = getattr(item, "__dict__", None)
    if attrs and isinstance(result, GoSlice):  # (else the class has them all)
        # a nil slice sliced [0:0] stays nil (reflect keeps its nil data pointer)
        result.__dict__.update({k: v for k, v in attrs.items() if k != "nil"})
        if getattr(item, "nil", False):
            result.nil = True
    return result


def slice_length(item: Any, *indexes: Any) -> int:
    """``len (slice item i ...)``: the slice's length (a slice is never too long for len)."""
    if len(indexes) == 1 and isinstance(item, list):
        i = indexes[0]
        if type(i) is int and 0 <= i <= len(item):
            return len(item) - i  # item[i:] without making it
    return length(slice_(item, *indexes))


# ----------------------------------------------------------------------------- escaping


def _eval_args(args: tuple) -> str:
    """funcs.go evalArgs: fmt.Sprint of the printable values (no value: the string
    "<no value>"; a struct pointer: the struct it points to, which is no string either:
    Sprint puts a space between it and another operand that is not a string)."""
    if len(args) == 1 and isinstance(args[0], str):
        return str(args[0])
    if not any(isinstance(arg, GoStruct) and arg.go_pointer for arg in args):
        return sprint(*["<no value>" if arg is None else arg for arg in args])
    out = []
    prev_string = False
    for i, arg in enumerate(args):
        if arg is None:
            text, is_string = "<no value>", True
        elif isinstance(arg, GoStruct) and arg.go_pointer:
            text, is_string = to_str(arg), False
        else:
            text, is_string = format_value(arg), kind(arg) == "string"
        if i > 0 and not is_string and not prev_string:
            out.append(" ")
        out.append(text)
        prev_string = is_string
    return "".join(out)


def html_escape(*args: Any) -> str:
    s = _eval_args(args)
    if not any(c in s for c in "'\"&<>\0"):
        return s
    return (
        s.replace("&", "&amp;")
        .replace("'", "&#39;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&#34;")
        .replace("\0", "\ufffd")
    )


_JS_SPECIAL = {
    "\\": "\\\\",
    "'": "\\'",
    '"': '\\"',
    "<": "\\u003C",
    ">": "\\u003E",
    "&": "\\u0026",
    "=": "\\u003D",
}


def js_escape(*args: Any) -> str:
    s = _eval_args(args)
    charge(len(s) >> 1)  # a Python step per character (limits.charge)
    out = []
    for ch in s:
        o = ord(ch)
        if ch in _JS_SPECIAL:
            out.append(_JS_SPECIAL[ch])
        elif o < 0x20:
            out.append(f"\\u00{o:02X}")
        elif o < 0x80:
            out.append(ch)
        elif 0xD800 <= o <= 0xDFFF:  # bytes of invalid UTF-8 (a lone surrogate here): Go
            out.append(ch)  # decodes them as U+FFFD, printable, and copies them as they are
        else:
            out.append(ch if is_print(ch) else f"\\u{o:04X}")
    return "".join(out)


_URL_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")


def urlquery_escape(*args: Any) -> str:
    data = to_bytes(_eval_args(args))
    charge(len(data) >> 1)
    return "".join(chr(b) if b in _URL_SAFE else "+" if b == 0x20 else f"%{b:02X}" for b in data)


def call(callee: str | None, fn: Any, *args: Any) -> Any:
    """Go's call builtin: template data holds no functions, so this always fails as Go does.
    ``callee`` is the callee's node text; None for a piped callee, which Go names by its
    reflect.Value String (the string itself, else ``<T Value>``)."""
    if fn is None:
        raise ExecError("error calling call: call of nil")
    if not callable(fn) or isinstance(fn, (GoStruct, type)):
        if callee is None:
            callee = fn if isinstance(fn, str) else f"<{go_type(fn)} Value>"
        raise ExecError(f"error calling call: non-function {callee} of type {go_type(fn)}")
    return fn(*args)


# ----------------------------------------------------------------------------- pipelines

_PIPED_FINAL = object()


def piped(helper: str, final: Any, string: bool = False) -> Any:
    """``X | f a b``: Go evaluates X (an earlier command) before f's arguments. The generated
    code calls ``piped("f", X)(a, b)``: X is evaluated first and passed last (converted as a
    string parameter when ``string``, after the other arguments were checked)."""
    fn = globals()[helper]

    def run(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, string_arg(final) if string else final, **kwargs)

    return run


def piped_final() -> Any:
    """The marker standing for the piped value as the last operand of "and" / "or"."""
    return _PIPED_FINAL


def piped_choice(final: Any) -> Any:
    """``X | and a b``: ``piped_choice(X)(a and b and <marker>)``: X computed first, the
    operands still short-circuit, and the marker (no operand stopped) means X."""
    return lambda chosen: final if chosen is _PIPED_FINAL else chosen


# ----------------------------------------------------------------------------- Ollama's funcs

_NOW: datetime.date | None = None


def set_now(date: Any) -> None:
    """Freeze the clock of currentDate / yesterdayDate (a date, "YYYY-MM-DD" or None)."""
    global _NOW
    if isinstance(date, str):
        date = _parse_date(str.__str__(date))
    elif isinstance(date, datetime.datetime):
        date = date.date()
    _NOW = date


#: the dates set_now was given, parsed once (a server passes the same few)
_parse_date = functools.lru_cache(maxsize=64)(datetime.date.fromisoformat)


def _today() -> datetime.date:
    return _NOW if _NOW is not None else datetime.date.today()


def current_date(*args: str) -> str:
    """currentDate: today as 2006-01-02 (arguments accepted and ignored, as in Ollama)."""
    return _today().isoformat()


def yesterday_date(*args: str) -> str:
    return (_today() - datetime.timedelta(days=1)).isoformat()


def to_json(value: Any) -> str:
    """Ollama's json: encoding/json.Marshal, errors ignored (an empty string)."""
    try:
        return marshal(value)
    except JSONError:
        return ""


def to_typescript_type(value: Any) -> str:
    method = getattr(value, "ToTypeScriptType", None)
    if method is not None and getattr(value, "go_type", "") == "main.ToolProperty":
        return method()
    return "any"


# ----------------------------------------------------------------------------- data


def plain_data(value: Any) -> Any:
    """JSON data as Go's encoding/json decodes it into ``any``: every number a float64."""
    t = type(value)
    if t is str:
        return value
    if t is dict:
        return {k if type(k) is str else str(k): plain_data(v) for k, v in value.items()}
    if t is list:
        return [v if type(v) is str else plain_data(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        return value
    if isinstance(value, dict):
        return {str(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(v) for v in value]
    return value


_ = (is_stringer,)
