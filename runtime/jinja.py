"""Runtime primitives for compiled Jinja templates (transformers' chat-template environment).

Standard library only. Every function here reproduces what jinja2 3.1's
``ImmutableSandboxedEnvironment`` does at run time; the generated modules call them.

Undefined values (jinja2's default ``Undefined``)::

    operation        undefined name / missing attribute      unsafe attribute (sandbox)
    print {{ x }}    ''                                      ''
    truth            False                                   False
    iterate          empty                                   empty
    length           0                                       0
    is defined       False                                   False
    x.attr / x[k]    UndefinedError                          SecurityError
    call, + - < ...  UndefinedError                          SecurityError
    x == y           True only if y is also undefined        same

Attribute access ``x.name`` tries the attribute, then the item; ``x[key]`` tries the item,
then (for string keys) the attribute. Attributes starting with ``_``, internal attributes
of functions, frames and generators, and methods that mutate lists, dicts, sets and deques
are unsafe: reading one gives an undefined that raises ``SecurityError`` when used.
"""

from __future__ import annotations

import types
from collections import abc, deque
from contextlib import contextmanager
from contextvars import ContextVar

TYPE_CHECKING = False  # typing is for annotations only: not imported when a server imports us
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator, Optional

# ----------------------------------------------------------------------------- errors


class TemplateError(Exception):
    """Base of every error a template raises (``raise_exception`` raises this one)."""

    def __init__(self, message: Optional[str] = None) -> None:
        super().__init__(message)

    @property
    def message(self) -> Optional[str]:
        return self.args[0] if self.args else None


class TemplateRuntimeError(TemplateError):
    pass


class UndefinedError(TemplateRuntimeError):
    pass


class SecurityError(TemplateRuntimeError):
    pass


class TemplateAssertionError(TemplateError):
    pass


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "missing"

    def __reduce__(self) -> str:
        return "MISSING"


#: The marker for "no value" (an absent macro argument, an absent context key).
MISSING: Any = _Missing()


# ----------------------------------------------------------------------------- undefined


def _object_type_repr(obj: Any) -> str:
    """jinja2.utils.object_type_repr: how error messages name a value's type."""
    if obj is None:
        return "None"
    if obj is Ellipsis:
        return "Ellipsis"
    cls = type(obj)
    if cls.__module__ == "builtins":
        return f"{cls.__name__} object"
    return f"{cls.__module__}.{cls.__name__} object"


class Undefined:
    """jinja2's default ``Undefined``: printable, falsy, iterable as empty; anything else raises."""

    __slots__ = ("_undefined_hint", "_undefined_obj", "_undefined_name", "_undefined_exception")

    def __init__(
        self,
        hint: Optional[str] = None,
        obj: Any = MISSING,
        name: Any = None,
        exc: type = UndefinedError,
    ) -> None:
        self._undefined_hint = hint
        self._undefined_obj = obj
        self._undefined_name = name
        self._undefined_exception = exc

    @property
    def _undefined_message(self) -> str:
        if self._undefined_hint:
            return self._undefined_hint
        if self._undefined_obj is MISSING:
            return f"{self._undefined_name!r} is undefined"
        if not isinstance(self._undefined_name, str):
            return (
                f"{_object_type_repr(self._undefined_obj)} has no"
                f" element {self._undefined_name!r}"
            )
        return (
            f"{_object_type_repr(self._undefined_obj)!r} has no"
            f" attribute {self._undefined_name!r}"
        )

    def _fail_with_undefined_error(self, *args: Any, **kwargs: Any) -> Any:
        raise self._undefined_exception(self._undefined_message)

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__" and name[-2:] == "__":
            raise AttributeError(name)
        return self._fail_with_undefined_error()

    __add__ = __radd__ = __sub__ = __rsub__ = _fail_with_undefined_error
    __mul__ = __rmul__ = __div__ = __rdiv__ = _fail_with_undefined_error
    __truediv__ = __rtruediv__ = _fail_with_undefined_error
    __floordiv__ = __rfloordiv__ = _fail_with_undefined_error
    __mod__ = __rmod__ = _fail_with_undefined_error
    __pos__ = __neg__ = _fail_with_undefined_error
    __call__ = __getitem__ = _fail_with_undefined_error
    __lt__ = __le__ = __gt__ = __ge__ = _fail_with_undefined_error
    __int__ = __float__ = __complex__ = _fail_with_undefined_error
    __pow__ = __rpow__ = _fail_with_undefined_error

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other)

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return id(type(self))

    def __str__(self) -> str:
        return ""

    def __len__(self) -> int:
        return 0

    def __iter__(self) -> Iterator[Any]:
        yield from ()

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "Undefined"


def undefined(name: str) -> Undefined:
    """The value of a template name that is not defined."""
    return Undefined(name=name)


def missing_param(name: str) -> Undefined:
    """The value of a macro parameter the caller did not pass."""
    return Undefined(f"parameter {name!r} was not provided", name=name)


def cond_undefined(lineno: int) -> Undefined:
    """The value of ``a if b`` (no else) when ``b`` is false."""
    return Undefined(
        f"the inline if-expression on line {lineno} evaluated to false and no else section was defined."
    )


def is_undefined(value: Any) -> bool:
    return isinstance(value, Undefined)


# ----------------------------------------------------------------------------- sandbox

UNSAFE_GENERATOR_ATTRIBUTES = {"gi_frame", "gi_code"}
UNSAFE_COROUTINE_ATTRIBUTES = {"cr_frame", "cr_code"}
UNSAFE_ASYNC_GENERATOR_ATTRIBUTES = {"ag_code", "ag_frame"}

_MUTABLE_SPEC: tuple = (
    (
        abc.MutableSet,
        frozenset(
            [
                "add",
                "clear",
                "difference_update",
                "discard",
                "pop",
                "remove",
                "symmetric_difference_update",
                "update",
            ]
        ),
    ),
    (abc.MutableMapping, frozenset(["clear", "pop", "popitem", "setdefault", "update"])),
    (
        abc.MutableSequence,
        frozenset(["append", "clear", "pop", "reverse", "insert", "sort", "extend", "remove"]),
    ),
    (
        deque,
        frozenset(
            [
                "append",
                "appendleft",
                "clear",
                "extend",
                "extendleft",
                "pop",
                "popleft",
                "remove",
                "rotate",
            ]
        ),
    ),
)


def _is_internal_attribute(obj: Any, attr: str) -> bool:
    """jinja2.sandbox.is_internal_attribute."""
    if isinstance(obj, types.FunctionType):
        pass
    elif isinstance(obj, types.MethodType):
        pass
    elif isinstance(obj, type):
        if attr == "mro":
            return True
    elif isinstance(obj, (types.CodeType, types.TracebackType, types.FrameType)):
        return True
    elif isinstance(obj, types.GeneratorType):
        if attr in UNSAFE_GENERATOR_ATTRIBUTES:
            return True
    elif isinstance(obj, types.CoroutineType):
        if attr in UNSAFE_COROUTINE_ATTRIBUTES:
            return True
    elif isinstance(obj, types.AsyncGeneratorType):
        if attr in UNSAFE_ASYNC_GENERATOR_ATTRIBUTES:
            return True
    return attr.startswith("__")


def _modifies_known_mutable(obj: Any, attr: str) -> bool:
    for typespec, unsafe in _MUTABLE_SPEC:
        if isinstance(obj, typespec):
            return attr in unsafe
    return False


_SAFE_CACHE: dict = {}


def _is_safe_attribute(obj: Any, attr: str) -> bool:
    """The sandbox's verdict; it depends only on the value's type and the name, so it is cached."""
    if attr.startswith("_"):
        return False
    key = (type(obj), attr)
    try:
        return _SAFE_CACHE[key]
    except KeyError:
        pass
    safe = not (_is_internal_attribute(obj, attr) or _modifies_known_mutable(obj, attr))
    if len(_SAFE_CACHE) < 4096:
        _SAFE_CACHE[key] = safe
    return safe


def _unsafe_undefined(obj: Any, attribute: str) -> Undefined:
    return Undefined(
        f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe.",
        name=attribute,
        obj=obj,
        exc=SecurityError,
    )


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

        _FORMATTER = _SandboxedFormatter
    return _FORMATTER


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
                rv = value.__html_format__(format_spec)
            elif hasattr(value, "__html__"):
                rv = value.__html__()
            else:
                rv = formatter_class.format_field(formatter, value, str(format_spec))
            return str(escape(rv))

        formatter.format_field = format_field  # type: ignore[method-assign]
    vformat = formatter.vformat

    def wrapper(*args: Any, **kwargs: Any) -> str:
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
LOOP_ATTRS = _LOOP_ATTRS = frozenset(
    "index index0 revindex revindex0 first last length previtem nextitem depth depth0 cycle changed".split()
)


#: Types whose instances have no ``__getattr__`` and reject every string subscript: an
#: attribute they do not have is undefined (the sandbox's two failed lookups, no exceptions).
_PLAIN_ATTRS = {t: frozenset(dir(t)) for t in (str, list, tuple, int, float, bool, type(None))}


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


def getattr_(obj: Any, attribute: str) -> Any:
    """``obj.attribute`` under the sandbox: attribute first, then item, else undefined."""
    cls = type(obj)
    # Fast paths: chat data is dicts, and most lookups are keys ("message.role");
    # templates keep their state in namespaces ("ns.value").
    if cls is dict and attribute not in _DICT_ATTRS:
        value = obj.get(attribute, MISSING)
        return _no_attribute(obj, attribute) if value is MISSING else value
    if cls is LoopContext and attribute in _LOOP_ATTRS:
        return getattr(obj, attribute)
    names = _PLAIN_ATTRS.get(cls)
    if names is not None and attribute not in names:
        return _no_attribute(obj, attribute)
    if cls is Namespace and attribute[:1] != "_":
        try:
            value = _ns_attrs(obj)[attribute]
        except KeyError:
            return _no_attribute(obj, attribute)
        if type(value) in _METHOD_TYPES:  # a stored str.format: the general path wraps it
            return _wrap_str_format(value) or value
        return value
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
        if _is_safe_attribute(obj, attribute):
            return value
        return _unsafe_undefined(obj, attribute)
    return _no_attribute(obj, attribute)


def getitem(obj: Any, argument: Any) -> Any:
    """``obj[argument]`` under the sandbox: item first, then (string keys) attribute."""
    try:
        return obj[argument]
    except (TypeError, LookupError):
        if isinstance(argument, str):
            try:
                value = getattr(obj, argument)
            except AttributeError:
                pass
            else:
                fmt = _wrap_str_format(value)
                if fmt is not None:
                    return fmt
                if _is_safe_attribute(obj, argument):
                    return value
                return _unsafe_undefined(obj, argument)
    return _no_attribute(obj, argument)


def subscript(obj: Any, key: Any) -> Any:
    """``obj[a:b:c]``: jinja2 compiles slices as plain Python subscripts."""
    return obj[key]


def call(func: Any, /, *args: Any, **kwargs: Any) -> Any:
    """Call a value from template code (sandbox: refuse callables marked unsafe).

    Like jinja2's ``Context.call``, drops the keywords ``_loop_vars`` and ``_block_vars`` (its
    own, which a template can pass too)."""
    if kwargs and ("_loop_vars" in kwargs or "_block_vars" in kwargs):
        kwargs.pop("_loop_vars", None)
        kwargs.pop("_block_vars", None)
    cls = type(func)
    if cls is Macro or cls is _BUILTIN_METHOD or id(func) in _SAFE_GLOBAL_IDS:
        # none of these can carry the sandbox's "unsafe" marks
        return func(*args, **kwargs)
    if getattr(func, "unsafe_callable", False) or getattr(func, "alters_data", False):
        raise SecurityError(f"{func!r} is not safely callable")
    return func(*args, **kwargs)


_HEAPTYPE = 1 << 9


def _tp_name(value: Any) -> str:
    """CPython's ``Py_TYPE(value)->tp_name``: how its own argument errors name a type."""
    cls = type(value)
    if cls.__flags__ & _HEAPTYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def star_kwargs(value: Any, func: str, names: tuple) -> Any:
    """The operand of ``**value`` in a call, checked as CPython checks it while it builds the
    call's keywords, with the reference's messages: ``func`` is how CPython names the function
    jinja2 calls there (``jinja2.sandbox.SandboxedEnvironment.call``, ``jinja2.filters.do_join``,
    ...) and ``names`` the keywords the call already has."""
    if type(value) is not dict:
        try:
            value = {key: value[key] for key in value.keys()}
        except AttributeError:
            raise TypeError(
                f"{func}() argument after ** must be a mapping, not {_tp_name(value)}"
            ) from None
        except KeyError as e:
            if len(e.args) != 1:
                raise
            raise TypeError(
                f"{func}() got multiple values for keyword argument '{e.args[0]}'"
            ) from None
    if names:
        for key in value:
            if key in names:
                raise TypeError(f"{func}() got multiple values for keyword argument '{key}'")
    return value


def concat(*values: Any) -> str:
    """The ``~`` operator: every operand converted with ``str`` and joined."""
    return "".join([str(v) for v in values])


to_str = str


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


# ----------------------------------------------------------------------------- namespace


class Namespace:
    """jinja2.utils.Namespace with transformers' rule: no names starting with ``_``.

    Named like transformers' class, because error messages print the type's name.
    """

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 (jinja2's signature trick)
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs) if args else kwargs  # kwargs is a fresh dict already
        for name in attrs:
            if type(name) is not str or name[:1] == "_":
                Namespace._check_name(name)
        object.__setattr__(self, "_Namespace__attrs", attrs)

    @staticmethod
    def _check_name(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(
                "Chat templates cannot store underscore-prefixed attributes on a namespace,"
                f" but got {name!r}. Please rename the attribute."
            )

    def __getattribute__(self, name: str) -> Any:
        if name in {"_Namespace__attrs", "__class__"}:
            return object.__getattribute__(self, name)
        try:
            return object.__getattribute__(self, "_Namespace__attrs")[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setitem__(self, name: str, value: Any) -> None:
        Namespace._check_name(name)
        object.__getattribute__(self, "_Namespace__attrs")[name] = value

    def __repr__(self) -> str:
        return f"<Namespace {object.__getattribute__(self, '_Namespace__attrs')!r}>"


# Error messages name the value's type ("Object of type TemplateNamespace is not JSON
# serializable"): use the reference's names.
Namespace.__name__ = "TemplateNamespace"
Namespace.__module__ = "transformers.utils.chat_template_utils"
# transformers defines it inside a function: {{ namespace }} prints that qualified name
Namespace.__qualname__ = "_cached_compile_jinja_template.<locals>.TemplateNamespace"


def _ns_attrs(ns: Namespace) -> dict:
    return object.__getattribute__(ns, "_Namespace__attrs")


def ns_check(ns: Any) -> None:
    """``{% set ns.attr = ... %}`` refuses a non-namespace before the value is computed."""
    if not isinstance(ns, Namespace):
        raise TemplateRuntimeError("cannot assign attribute on non-namespace object")


def ns_set(ns: Any, attr: str, value: Any) -> None:
    """``{% set ns.attr = value %}``."""
    if type(ns) is Namespace and attr[:1] != "_":
        _ns_attrs(ns)[attr] = value
        return
    if not isinstance(ns, Namespace):
        raise TemplateRuntimeError("cannot assign attribute on non-namespace object")
    ns[attr] = value


# ----------------------------------------------------------------------------- loops


class LoopContext:
    """The ``loop`` variable (jinja2.runtime.LoopContext); iterating yields the items."""

    index0 = -1
    _length: Optional[int] = None
    _after: Any = MISSING
    _current: Any = MISSING
    _before: Any = MISSING
    _last_changed_value: Any = MISSING

    def __init__(self, iterable: Iterable[Any], recurse: Any = None, depth0: int = 0) -> None:
        self._iterable = iterable
        self._iterator = iter(iterable)
        self._recurse = recurse
        self.depth0 = depth0

    @property
    def length(self) -> int:
        if self._length is not None:
            return self._length
        try:
            self._length = len(self._iterable)  # type: ignore[arg-type]
        except TypeError:
            iterable = list(self._iterator)
            self._iterator = iter(iterable)
            self._length = len(iterable) + self.index + (self._after is not MISSING)
        return self._length

    def __len__(self) -> int:
        return self.length

    @property
    def depth(self) -> int:
        return self.depth0 + 1

    @property
    def index(self) -> int:
        return self.index0 + 1

    @property
    def revindex0(self) -> int:
        return self.length - self.index

    @property
    def revindex(self) -> int:
        return self.length - self.index0

    @property
    def first(self) -> bool:
        return self.index0 == 0

    def _peek_next(self) -> Any:
        if self._after is not MISSING:
            return self._after
        self._after = next(self._iterator, MISSING)
        return self._after

    @property
    def last(self) -> bool:
        return self._peek_next() is MISSING

    @property
    def previtem(self) -> Any:
        if self.first:
            return Undefined("there is no previous item")
        return self._before

    @property
    def nextitem(self) -> Any:
        rv = self._peek_next()
        if rv is MISSING:
            return Undefined("there is no next item")
        return rv

    def cycle(self, *args: Any) -> Any:
        if not args:
            raise TypeError("no items for cycling given")
        return args[self.index0 % len(args)]

    def changed(self, *value: Any) -> bool:
        if self._last_changed_value != value:
            self._last_changed_value = value
            return True
        return False

    def __iter__(self) -> "LoopContext":
        return self

    def __next__(self) -> Any:
        if self._after is not MISSING:
            rv = self._after
            self._after = MISSING
        else:
            rv = next(self._iterator)
        self.index0 += 1
        self._before = self._current
        self._current = rv
        return rv

    def __call__(self, iterable: Iterable[Any]) -> str:
        if self._recurse is None:
            raise TypeError("The loop must have the 'recursive' marker to be called recursively.")
        return self._recurse(iterable, self.depth)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.index}/{self.length}>"


def loop_context(iterable: Iterable[Any], recurse: Any = None, depth0: int = 0) -> LoopContext:
    return LoopContext(iterable, recurse, depth0)


def loop_last(iterable: Any) -> tuple:
    """For a loop that reads only ``loop.last`` and counters: ``(last index, the list)`` for a
    list or tuple (nothing to look ahead for), else ``(None, its loop object)``."""
    if type(iterable) is list or type(iterable) is tuple:
        return len(iterable) - 1, iterable
    return None, LoopContext(iterable)


# ----------------------------------------------------------------------------- macros


class Macro:
    """A compiled ``{% macro %}`` as templates see it: binds arguments like jinja2.runtime.Macro.

    ``func`` takes every parameter positionally, then ``varargs``, ``kwargs`` and
    ``caller`` when the macro body uses them; absent parameters arrive as MISSING.
    """

    def __init__(
        self,
        func: Callable[..., str],
        name: str,
        arguments: tuple,
        catch_kwargs: bool,
        catch_varargs: bool,
        caller: bool,
    ) -> None:
        self._func = func
        self._argument_count = len(arguments)
        self.name = name
        self.arguments = arguments
        self.catch_kwargs = catch_kwargs
        self.catch_varargs = catch_varargs
        self.caller = caller
        self.explicit_caller = "caller" in arguments
        self._simple = not (caller or catch_kwargs or catch_varargs)

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        if self._simple and not kwargs and len(args) == self._argument_count:
            return self._func(*args)  # the common case: every parameter passed by position
        arguments = list(args[: self._argument_count])
        off = len(arguments)
        found_caller = False
        if off != self._argument_count:
            for name in self.arguments[len(arguments) :]:
                try:
                    value = kwargs.pop(name)
                except KeyError:
                    value = MISSING
                if name == "caller":
                    found_caller = True
                arguments.append(value)
        else:
            found_caller = self.explicit_caller
        if self.caller and not found_caller:
            caller = kwargs.pop("caller", None)
            if caller is None:
                caller = Undefined("No caller defined", name="caller")
            arguments.append(caller)
        if self.catch_kwargs:
            arguments.append(kwargs)
        elif kwargs:
            if "caller" in kwargs:
                raise TypeError(
                    f"macro {self.name!r} was invoked with two values for the special"
                    " caller argument. This is most likely a bug."
                )
            raise TypeError(f"macro {self.name!r} takes no keyword argument {next(iter(kwargs))!r}")
        if self.catch_varargs:
            arguments.append(args[self._argument_count :])
        elif len(args) > self._argument_count:
            raise TypeError(
                f"macro {self.name!r} takes not more than {len(self.arguments)} argument(s)"
            )
        return self._func(*arguments)

    def __repr__(self) -> str:
        name = "anonymous" if self.name is None else repr(self.name)
        return f"<{type(self).__name__} {name}>"


def make_macro(
    func: Callable[..., str],
    name: str,
    arguments: tuple,
    catch_kwargs: bool,
    catch_varargs: bool,
    caller: bool,
) -> Macro:
    return Macro(func, name, arguments, catch_kwargs, catch_varargs, caller)


# ----------------------------------------------------------------------------- globals


def raise_exception(message: Any) -> Any:
    """transformers' ``raise_exception``."""
    raise TemplateError(message)


#: ``strftime_now`` reads this clock; tests replace it to freeze time.
def _now() -> Any:
    import datetime

    return datetime.datetime.now()


def strftime_now(format: str) -> str:
    """transformers' ``strftime_now``."""
    return CLOCK[0]().strftime(format)


CLOCK: list = [_now]

# transformers defines both inside a function: argument errors name them so
for _f in (raise_exception, strftime_now):
    _f.__module__ = "transformers.utils.chat_template_utils"
    _f.__qualname__ = f"_cached_compile_jinja_template.<locals>.{_f.__name__}"


class TemplateDict:
    """transformers' ``dict`` global: calling it makes a plain dict; the type is never exposed."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        return dict.fromkeys(*args, **kwargs)


TemplateDict.__module__ = "transformers.utils.chat_template_utils"
# transformers defines it inside a function: its repr names it so ({{ dict }} prints it)
TemplateDict.__qualname__ = "_cached_compile_jinja_template.<locals>.TemplateDict"


MAX_RANGE = 100000


def safe_range(*args: int) -> range:
    """The sandbox's ``range``: refuses more than MAX_RANGE items."""
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise OverflowError(
            "Range too big. The sandbox blocks ranges larger than" f" MAX_RANGE ({MAX_RANGE})."
        )
    return rng


class TemplateReference:
    """jinja2's ``self``: prints as the template's reference; it has no blocks here."""

    def __getitem__(self, name: str) -> Any:
        raise KeyError(name)

    def __repr__(self) -> str:
        return "<TemplateReference None>"


#: The spans list of the render being tracked (``track_generation``), else None.
_GENERATION_SPANS: ContextVar[Optional[list]] = ContextVar("tmpl2py_generation_spans", default=None)


@contextmanager
def track_generation() -> Iterator[list]:
    """Collect the ``{% generation %}`` spans of the renders inside the ``with`` block.

    Yields the list that each generation block appends its ``(start, end)`` to: character
    offsets in the top-level output, as transformers' ``AssistantTracker`` records them.
    """
    spans: list = []
    token = _GENERATION_SPANS.set(spans)
    try:
        yield spans
    finally:
        _GENERATION_SPANS.reset(token)


def generation(text: str, top: list) -> str:
    """``{% generation %}``: its body's text, unchanged; records its span when tracked.

    ``top`` is the render function's own output list. Like transformers, the span starts at
    the length of the *top-level* output so far, even when the block sits in a macro, a
    ``set`` block or a call block whose own buffer is elsewhere (and it is joined as
    transformers joins it, so a non-string already output fails here, as there).
    """
    spans = _GENERATION_SPANS.get()
    if spans is not None:
        start = len("".join(top))
        spans.append((start, start + len(text)))
    return text


GLOBALS: dict = {
    "range": safe_range,
    "dict": TemplateDict(),
    "namespace": Namespace,
    "raise_exception": raise_exception,
    "strftime_now": strftime_now,
    "self": TemplateReference(),
}


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


def no_caller() -> Undefined:
    """``caller`` in a macro called without one (a ``{% generation %}`` body's caller)."""
    return Undefined("No caller defined", name="caller")


#: The environment's own callables (ids of module-lifetime objects): known safe, so calls
#: skip the sandbox's attribute probes. Filled in once the globals are complete.
_SAFE_GLOBAL_IDS: frozenset = frozenset()

# The filters module adds jinja2's remaining globals (lipsum, cycler, joiner) to GLOBALS.
import runtime.jinja_filters  # noqa: E402,F401
