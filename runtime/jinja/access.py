"""Name lookups and calls in compiled Jinja templates: the environment's globals, the
template's start values, calls through the sandbox, unknown filters and tests inside ``if``.
Standard library only.
"""

from __future__ import annotations

import operator
import types

from ..limits import charge, charge_hashing, check_built, check_size, check_weight
from .bounded import call_str_method, guard_width

from .core import (
    MISSING,
    SecurityError,
    TemplateRuntimeError,
    Undefined,
    UndefinedError,
    is_safe_attribute,
    unsafe_undefined,
)
from .objects import (
    LoopContext,
    Cycler,
    Joiner,
    Macro,
    Namespace,
    TemplateDict,
    TemplateReference,
    generate_lorem_ipsum,
    raise_exception,
    safe_range,
    strftime_now,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Optional

_FORMATTER: Any = None


def _sandboxed_formatter_class() -> type:
    """str.format under the sandbox: fields are looked up with :func:`getattr_`. Made on
    first use (string imports re); a race makes two equal classes, which is harmless."""
    global _FORMATTER
    if _FORMATTER is None:
        from string import Formatter, _string  # type: ignore[attr-defined]

        class _SandboxedFormatter(Formatter):
            def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
                first, rest = _string.formatter_field_name_split(field_name)
                obj = self.get_value(first, args, kwargs)
                for is_attr, i in rest:
                    if is_attr:
                        obj = getattr_(obj, i)
                    else:
                        obj = getitem(obj, i)
                return obj, first

            def format_field(self, value: Any, format_spec: str) -> Any:
                _guard_format_spec(format_spec)
                return _counted(self, super().format_field(value, format_spec))

        _FORMATTER = _SandboxedFormatter
    return _FORMATTER


def _counted(formatter: Any, field: Any) -> Any:
    """A formatted field, its length added to what this ``format`` call built so far and
    that checked against ``Limits.output``: one value printed by many fields (``'{0}{0}'``)
    can make a string far longer than the template and its data."""
    formatter.built += len(field)
    if formatter.built > 4096:
        check_built(formatter.built, "a format")
    return field


def _guard_format_spec(spec: str) -> None:
    """A width or precision in a format spec (``{:999999999}``) is bounded by ``Limits.value``."""
    digits = ""
    for ch in spec + " ":
        if ch.isdigit():
            digits += ch
            continue
        if len(digits) > 3 and int(digits) > 4096:
            check_size(int(digits), "a format width")
        digits = ""


def _wrap_str_format(value: Any) -> Optional[Callable[..., str]]:
    if not isinstance(value, (types.MethodType, types.BuiltinMethodType)) or value.__name__ not in (
        "format",
        "format_map",
    ):
        return None
    f_self: Any = value.__self__
    if not isinstance(f_self, str):
        return None
    str_type = type(f_self)
    is_format_map = value.__name__ == "format_map"
    formatter_class = _sandboxed_formatter_class()
    formatter = formatter_class()
    escape = getattr(f_self, "escape", None)
    if escape is not None and hasattr(f_self, "__html__"):  # Markup: arguments are escaped

        def format_field(value: Any, format_spec: str) -> str:
            if hasattr(value, "__html_format__"):
                rv = _counted(formatter, value.__html_format__(format_spec))
            elif hasattr(value, "__html__"):
                rv = _counted(formatter, value.__html__())
            else:  # counted there
                rv = formatter_class.format_field(formatter, value, str(format_spec))
            return str(escape(rv))

        formatter.format_field = format_field  # type: ignore[method-assign]
    vformat = formatter.vformat
    cost = 4 * f_self.count("{")  # the sandboxed Formatter parses and formats each field in Python

    def wrapper(*args: Any, **kwargs: Any) -> str:
        charge(cost)
        formatter.built = 0
        if is_format_map:
            if kwargs:
                raise TypeError("format_map() takes no keyword arguments")
            if len(args) != 1:
                raise TypeError(f"format_map() takes exactly one argument ({len(args)} given)")
            kwargs = args[0]
            args = ()
        return str_type(vformat(f_self, args, kwargs))

    wrapper.__name__ = value.__name__
    wrapper.__qualname__ = getattr(value, "__qualname__", value.__name__)
    wrapper.__doc__ = value.__doc__
    wrapper.__wrapped__ = value  # type: ignore[attr-defined]
    return wrapper


#: Names a dict has as attributes (the sandbox finds them before keys); shared with the
#: compiler, which reads other keys of a dict inline.
DICT_ATTRS = _DICT_ATTRS = frozenset(dir(dict))
_METHOD_TYPES = (types.MethodType, types.BuiltinMethodType)
_BUILTIN_METHOD = types.BuiltinMethodType
_METHOD = types.MethodType
#: the receivers whose methods make text (``access.call``: ``bounded.call_str_method``)
_TEXTS = (str, bytes, bytearray)
LOOP_ATTRS = _LOOP_ATTRS = frozenset(
    "index index0 revindex revindex0 first last length previtem nextitem depth depth0 cycle changed".split()
)


#: Types whose instances have no ``__getattr__`` and reject every string subscript: an
#: attribute they do not have is undefined (the sandbox's two failed lookups, no exceptions).
_PLAIN_ATTRS = {
    t: frozenset(dir(t))
    for t in (str, list, tuple, int, float, bool, type(None), types.GeneratorType)
}  # a generator: what the lazy filters give (``items``, ``select``, ``map``)


#: The methods of the plain data types the sandbox allows, read without its probes: every
#: public name it finds safe on a value of the type, except ``format``/``format_map`` (the
#: sandbox wraps those). The verdict depends only on the type and the name (``core``); each
#: type's set is made on first use (``_safe_methods``: ~2 ms, not paid at import).
_SAFE_METHODS: dict = {}
_SAMPLES = {type(v): v for v in ("", [], (), {}, 0, 0.0, True, None, (x for x in ()))}


def _safe_methods(cls: type) -> frozenset:
    sample = _SAMPLES[cls]
    safe = frozenset(
        name
        for name in dir(sample)
        if name not in ("format", "format_map") and is_safe_attribute(sample, name)
    )
    return _SAFE_METHODS.setdefault(cls, safe)


def safe_methods(cls: type) -> frozenset:
    """The methods of ``cls`` (``str``, ``dict``, ``list``, ...: a type of ``_SAMPLES``) that
    the sandbox lets a template read and call on a value of exactly that type with no
    wrapping: a call ``value.name(...)`` then is the sandbox's ``call(getattr_(value,
    "name"), ...)`` (the compiler's ``method_calls`` pass calls them directly)."""
    return _SAFE_METHODS.get(cls) or _safe_methods(cls)


#: The ``_`` attributes (private and dunder) that jinja2's own helper objects have, for the
#: ones ours stand in for: the sandbox refuses those (SecurityError when used) and finds
#: no other (UndefinedError), whatever attributes our classes happen to have themselves.
#: (jinja2 3.1: ``dir()`` of a TemplateReference, LoopContext, Macro, Cycler, Joiner.)
_OBJECT_DUNDERS = (
    "__class__ __delattr__ __dict__ __dir__ __doc__ __eq__ __format__ __ge__ __getattribute__"
    " __getstate__ __gt__ __hash__ __init__ __init_subclass__ __le__ __lt__ __module__ __ne__"
    " __new__ __reduce__ __reduce_ex__ __repr__ __setattr__ __sizeof__ __str__"
    " __subclasshook__ __weakref__"
)
REFERENCE_PRIVATE = {
    TemplateReference: frozenset(f"{_OBJECT_DUNDERS} __getitem__ _TemplateReference__context".split()),
    LoopContext: frozenset(
        f"{_OBJECT_DUNDERS} __annotations__ __call__ __iter__ __len__ __next__ _after _before"
        " _current _iterable _iterator _last_changed_value _length _peek_next _recurse"
        " _to_iterator _undefined".split()
    ),
    Macro: frozenset(
        f"{_OBJECT_DUNDERS} __call__ _argument_count _async_invoke _default_autoescape"
        " _environment _func _invoke".split()
    ),
    Cycler: frozenset(f"{_OBJECT_DUNDERS} __next__".split()),
    Joiner: frozenset(f"{_OBJECT_DUNDERS} __call__".split()),
}


def private_attribute(obj: Any, attribute: str) -> Any:
    """``obj._name`` on one of jinja2's helper objects, as the sandbox answers it."""
    if attribute in REFERENCE_PRIVATE[type(obj)]:
        return unsafe_undefined(obj, attribute)
    return _no_attribute(obj, attribute)


_new = object.__new__


def _no_attribute(obj: Any, name: Any) -> Undefined:
    """``Undefined(obj=obj, name=name)``, built without the keyword call (twice as fast: an
    absent key is the common case of a chat template's lookups)."""
    value = _new(Undefined)
    value._undefined_hint = None
    value._undefined_obj = obj
    value._undefined_name = name
    value._undefined_exception = UndefinedError
    return value


#: a namespace's own attribute table, read past its ``__getattribute__`` (``objects.ns_attrs``)
_object_attribute = object.__getattribute__


#: What compiled code reads a namespace's attribute with, inline (``emit.Emitter.
#: namespace_attribute``): ``object_attribute(ns, "_Namespace__attrs")`` is its attribute
#: table when ``type(ns) is Namespace``; a value there whose type is one of ``NS_SLOW`` (no
#: such attribute, or a bound method: a stored ``str.format`` is wrapped) takes ``getattr_``.
object_attribute = _object_attribute
NS_SLOW = (type(MISSING), types.MethodType, types.BuiltinMethodType)


def getattr_(obj: Any, attribute: str) -> Any:
    """``obj.attribute`` under the sandbox: attribute first, then item, else undefined."""
    cls = type(obj)
    # Fast paths: chat data is dicts, and most lookups are keys ("message.role");
    # templates keep their state in namespaces ("ns.value").
    if cls is dict and attribute not in _DICT_ATTRS:
        value = obj.get(attribute, MISSING)
        return _no_attribute(obj, attribute) if value is MISSING else value
    if cls is Namespace:
        # its own attribute table (which never holds a name starting with "_": storing one
        # is refused), read past its ``__getattribute__``
        value = _object_attribute(obj, "_Namespace__attrs").get(attribute, MISSING)
        if value is not MISSING:
            if type(value) in _METHOD_TYPES:  # a stored str.format: the general path wraps it
                return _wrap_str_format(value) or value
            return value
        if attribute[:1] != "_":
            return _no_attribute(obj, attribute)
    if cls is LoopContext and attribute in _LOOP_ATTRS:
        return getattr(obj, attribute)
    names = _PLAIN_ATTRS.get(cls)
    if names is not None and attribute not in names:
        return _no_attribute(obj, attribute)
    if names is not None or cls is dict:  # "text.strip", "message.items": no probes
        if attribute in (_SAFE_METHODS.get(cls) or _safe_methods(cls)):
            return getattr(obj, attribute)
    if attribute[:1] == "_" and cls in REFERENCE_PRIVATE:
        return private_attribute(obj, attribute)
    try:
        value = getattr(obj, attribute)
    except AttributeError:
        try:
            return obj[attribute]
        except (TypeError, LookupError):
            pass
    else:
        fmt = _wrap_str_format(value)
        if fmt is not None:
            return fmt
        if is_safe_attribute(obj, attribute):
            return value
        return unsafe_undefined(obj, attribute)
    return _no_attribute(obj, attribute)


def getitem(obj: Any, argument: Any) -> Any:
    """``obj[argument]`` under the sandbox: item first, then (string keys) attribute."""
    if type(argument) is str:
        # Fast paths for a string key, with the outcome of the general path below: a dict
        # without that method name (the usual ``message["role"]``); a plain value (str,
        # list, number, None, ...) that has no such attribute rejects a string subscript, so
        # the key is undefined with no exception raised (a template iterating a string where
        # it expects a list of parts does this for every character).
        cls = type(obj)
        if cls is dict:
            if argument not in _DICT_ATTRS:
                value = obj.get(argument, MISSING)
                return _no_attribute(obj, argument) if value is MISSING else value
        else:
            names = _PLAIN_ATTRS.get(cls)
            if names is not None and argument not in names:
                value = _new(Undefined)  # _no_attribute(obj, argument), inline: per character
                value._undefined_hint = None
                value._undefined_obj = obj
                value._undefined_name = argument
                value._undefined_exception = UndefinedError
                return value
    try:
        return obj[argument]
    except (TypeError, LookupError):
        if isinstance(argument, str):
            if argument[:1] == "_" and type(obj) in REFERENCE_PRIVATE:
                return private_attribute(obj, argument)
            try:
                value = getattr(obj, argument)
            except AttributeError:
                pass
            else:
                fmt = _wrap_str_format(value)
                if fmt is not None:
                    return fmt
                if is_safe_attribute(obj, argument):
                    return value
                return unsafe_undefined(obj, argument)
    return _no_attribute(obj, argument)


#: ``obj[a:b:c]``: jinja2 compiles slices as plain Python subscripts (``operator.getitem``:
#: the subscript itself, called in C with no Python frame of its own)
subscript = operator.getitem



GLOBALS: dict = {
    "range": safe_range,
    "dict": TemplateDict(),
    "namespace": Namespace,
    "raise_exception": raise_exception,
    "strftime_now": strftime_now,
    "self": TemplateReference(),
    "lipsum": generate_lorem_ipsum,
    "cycler": Cycler,
    "joiner": Joiner,
}

#: The environment's own callables (ids of module-lifetime objects): known safe, so calls
#: skip the sandbox's attribute probes.
_SAFE_GLOBAL_IDS = frozenset(id(v) for v in GLOBALS.values())


def call(func: Any, /, *args: Any, **kwargs: Any) -> Any:
    """Call a value from template code (sandbox: refuse callables marked unsafe).

    Like jinja2's ``Context.call``, drops the keywords ``_loop_vars`` and ``_block_vars`` (its
    own, which a template can pass too)."""
    if kwargs and ("_loop_vars" in kwargs or "_block_vars" in kwargs):
        kwargs.pop("_loop_vars", None)
        kwargs.pop("_block_vars", None)
    cls = type(func)
    if cls is _BUILTIN_METHOD:  # cannot carry the sandbox's "unsafe" marks
        owner = func.__self__
        if isinstance(owner, _TEXTS):  # a growing one checked first, any one's result after
            return call_str_method(func, args, kwargs)
        name = func.__name__
        if name == "to_bytes" and type(owner) is int:
            guard_width(args[0] if args else kwargs.get("length", 1), "to_bytes")
        elif name == "from_bytes" and isinstance(owner, type):
            # an integer of 8 bits a byte: past ``4 * Limits.value`` bits, as a product is
            # refused (its argument's length first where it has one; the result in any case:
            # keywords, an iterator of bytes: red team s9h2 C)
            data = args[0] if args else kwargs.get("bytes")
            if hasattr(data, "__len__"):
                check_size(len(data) * 2, "from_bytes")
            made = func(*args, **kwargs)
            if type(made) is int and made.bit_length() > 4096:
                check_size(made.bit_length() >> 2, "from_bytes")
            return made
        elif name == "fromkeys" and isinstance(owner, type) and issubclass(owner, dict):
            # any dict's ``fromkeys`` (a class method) is the ``dict`` global's: the keys'
            # hashes charged, the dict weighed (one value under every key; red team s9h F1)
            if args:
                args = (charge_hashing(args[0]),) + args[1:]
            return check_weight(func(*args, **kwargs), "dict.fromkeys")
        return func(*args, **kwargs)
    if cls is Macro or id(func) in _SAFE_GLOBAL_IDS:
        # none of these can carry the sandbox's "unsafe" marks
        return func(*args, **kwargs)
    if getattr(func, "unsafe_callable", False) or getattr(func, "alters_data", False):
        raise SecurityError(f"{func!r} is not safely callable")
    if cls is _METHOD and isinstance(func.__self__, str):  # a str subclass's (Markup's)
        return call_str_method(func, args, kwargs)
    return func(*args, **kwargs)


def resolve(context: dict, name: str) -> Any:
    """Look a template name up: the render context, then the environment's globals."""
    value = context.get(name, MISSING)  # no exceptions on the common "absent" path
    if value is MISSING:
        value = GLOBALS.get(name, MISSING)
        if value is MISSING:
            return Undefined(name=name)
    return value


def resolve_missing(context: dict, name: str) -> Any:
    """jinja2's own start value of a name: its value, or MISSING (each read then builds its
    own undefined, ``load_name``). For templates that can tell undefined values apart."""
    value = context.get(name, MISSING)
    if value is MISSING:
        return GLOBALS.get(name, MISSING)
    return value


def unset() -> Any:
    """The start value of a name first assigned in its scope (with ``resolve_missing``)."""
    return MISSING


def load_name(value: Any, name: str) -> Any:
    """A read of a name that may hold MISSING: a new undefined then, as every read in jinja2."""
    return Undefined(name=name) if value is MISSING else value


_TOP_UNDEFINED: dict = {}


def resolve_top(context: dict, name: str) -> Any:
    """``resolve`` for the template's own start values: an absent name gets one shared
    undefined (each name is looked up once per render there, so none can tell it is shared)."""
    value = context.get(name, MISSING)
    if value is MISSING:
        value = GLOBALS.get(name, MISSING)
        if value is MISSING:
            value = _TOP_UNDEFINED.get(name)
            if value is None:
                value = _TOP_UNDEFINED.setdefault(name, Undefined(name=name))
    return value


def start_values(names: tuple) -> tuple:
    """What ``resolve_top`` answers for each name when the context lacks it: the defaults a
    compiled module computes once, at import, for its ``context.get(name, default)`` reads."""
    return tuple(resolve_top({}, n) for n in names)



def no_filter(name: str, func: str, /, *operands: Any, **kwoperands: Any) -> Any:
    """An unknown filter inside an ``if``: jinja2 compiles it, and fails when it runs.

    jinja2 calls a stand-in ``def t_N(*unused)`` there (``func`` is its name), which refuses
    keyword arguments before it can fail."""
    if kwoperands:
        raise TypeError(f"{func}() got an unexpected keyword argument '{next(iter(kwoperands))}'")
    raise TemplateRuntimeError(f"No filter named {name!r} found.")


def no_test(name: str, func: str, /, *operands: Any, **kwoperands: Any) -> Any:
    """An unknown test inside an ``if``: jinja2 compiles it, and fails when it runs."""
    if kwoperands:
        raise TypeError(f"{func}() got an unexpected keyword argument '{next(iter(kwoperands))}'")
    raise TemplateRuntimeError(f"No test named {name!r} found.")


__all__ = [
    "DICT_ATTRS",
    "NS_SLOW",
    "object_attribute",
    "LOOP_ATTRS",
    "getattr_",
    "getitem",
    "subscript",
    "GLOBALS",
    "call",
    "resolve",
    "resolve_missing",
    "unset",
    "load_name",
    "resolve_top",
    "safe_methods",
    "start_values",
    "no_filter",
    "no_test",
]
