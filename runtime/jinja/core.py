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

from ..limits import SHORT, check_built

TYPE_CHECKING = False  # typing is for annotations only: not imported when a server imports us
if TYPE_CHECKING:
    from typing import Any, Iterator, Optional

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
    __module__ = "jinja2.runtime"  # messages about an undefined's own attributes name jinja2's type

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # final: compiled code tests ``type(x) is Undefined`` for ``isinstance`` (one compare;
        # ``isinstance`` of a namespace calls its Python ``__getattribute__`` for ``__class__``)
        raise TypeError("Undefined cannot be subclassed")

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
        return iter(())  # empty; no generator object per loop over an absent value

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


def is_safe_attribute(obj: Any, attr: str) -> bool:
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


def unsafe_undefined(obj: Any, attribute: str) -> Undefined:
    return Undefined(
        f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe.",
        name=attribute,
        obj=obj,
        exc=SecurityError,
    )


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
    text = "".join([str(v) for v in values])
    if len(text) >= SHORT:  # doubling through a loop stops at the output limit
        check_built(len(text), "a ~ concatenation")
    return text


to_str = str

__all__ = [
    "TemplateError",
    "TemplateRuntimeError",
    "UndefinedError",
    "SecurityError",
    "TemplateAssertionError",
    "MISSING",
    "Undefined",
    "undefined",
    "missing_param",
    "cond_undefined",
    "is_undefined",
    "UNSAFE_GENERATOR_ATTRIBUTES",
    "UNSAFE_COROUTINE_ATTRIBUTES",
    "UNSAFE_ASYNC_GENERATOR_ATTRIBUTES",
    "is_safe_attribute",
    "unsafe_undefined",
    "star_kwargs",
    "concat",
    "to_str",
]
