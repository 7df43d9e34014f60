"""jinja2's runtime objects as transformers' environment exposes them. The module is
long because it holds every object the environment hands a template (kept together: each
reads the others' types).

``namespace``, the ``loop`` object, macros, ``dict``, ``range``, ``self``, ``cycler``,
``joiner`` and ``lipsum``, ``raise_exception`` / ``strftime_now``, and the
``{% generation %}`` span tracking. Standard library only.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from .core import (
    MISSING,
    SecurityError,
    TemplateError,
    TemplateRuntimeError,
    Undefined,
)

from .markup import Markup, escape
from ..limits import LONG_INT_BITS, NODE, charge, charge_hashing, check_size, check_total, check_weight, checked_weight, nested

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator, Optional

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
        attrs = object.__getattribute__(self, "_Namespace__attrs")
        # a namespace changes after it is built, so nothing weighed it: printing it charges
        # what its attributes weigh (a list holding it many times pays each time)
        charge(checked_weight(attrs, "a namespace") // NODE)
        return f"<Namespace {attrs!r}>"


# Error messages name the value's type ("Object of type TemplateNamespace is not JSON
# serializable"): use the reference's names.
Namespace.__name__ = "TemplateNamespace"
Namespace.__module__ = "transformers.utils.chat_template_utils"
# transformers defines it inside a function: {{ namespace }} prints that qualified name
Namespace.__qualname__ = "_cached_compile_jinja_template.<locals>.TemplateNamespace"


_new_object = object.__new__
_set_attribute = object.__setattr__
_get_attribute = object.__getattribute__


def new_namespace(**attrs: Any) -> Namespace:
    """``namespace(name=value, ...)`` as the compiled code calls it when the template's
    ``namespace`` is the environment's and every argument is a keyword whose name the
    compiler checked (none starts with ``_``): the namespace over the call's own fresh dict
    of them, without ``Namespace.__init__``'s checks (a third of the time)."""
    ns = _new_object(Namespace)
    _set_attribute(ns, "_Namespace__attrs", attrs)
    return ns


def ns_attrs(ns: Namespace) -> dict:
    return object.__getattribute__(ns, "_Namespace__attrs")


def ns_check(ns: Any) -> None:
    """``{% set ns.attr = ... %}`` refuses a non-namespace before the value is computed."""
    if not isinstance(ns, Namespace):
        raise TemplateRuntimeError("cannot assign attribute on non-namespace object")


def ns_set(ns: Any, attr: str, value: Any) -> None:
    """``{% set ns.attr = value %}`` (a tuple's nesting checked: ``limits.nested``)."""
    if type(value) is tuple:
        nested(value)
    if type(ns) is Namespace and attr[:1] != "_":
        _get_attribute(ns, "_Namespace__attrs")[attr] = value  # (``ns_attrs``, inline)
        return
    if not isinstance(ns, Namespace):
        raise TemplateRuntimeError("cannot assign attribute on non-namespace object")
    ns[attr] = value


def ns_store(ns: Any, attr: str, value: Any) -> None:
    """``{% set ns.attr %}...{% endset %}``: jinja2's ``ns[attr] = value``, with no check that
    ``ns`` is a namespace (anything else raises its own ``TypeError``, or takes the item)."""
    if type(value) is tuple:
        nested(value)
    if type(ns) is Namespace and attr[:1] != "_":
        _get_attribute(ns, "_Namespace__attrs")[attr] = value
        return
    if type(ns) is Undefined and ns._undefined_obj is MISSING and not ns._undefined_hint:
        # a name the context lacks is jinja2's ``missing`` sentinel there (resolve_or_missing)
        raise TypeError("'_MissingType' object does not support item assignment")
    ns[attr] = value


# ----------------------------------------------------------------------------- loops


class LoopContext:
    """The ``loop`` variable (jinja2.runtime.LoopContext); iterating yields the items."""

    __module__ = "jinja2.runtime"  # messages name the reference's type
    # slots: a loop reads and writes its state per item (a third faster than a __dict__)
    __slots__ = (
        "_iterable", "_iterator", "_recurse", "depth0", "index0", "_length", "_after",
        "_current", "_before", "_last_changed_value",
    )  # fmt: skip

    def __init__(self, iterable: Iterable[Any], recurse: Any = None, depth0: int = 0) -> None:
        self._iterable = iterable
        self._iterator = iter(iterable)
        self._recurse = recurse
        self.depth0 = depth0
        self.index0 = -1
        self._length: Optional[int] = None
        self._after = self._current = self._before = self._last_changed_value = MISSING

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
        after = self._after  # (``_peek_next``, inline: read per item)
        if after is MISSING:
            after = self._after = next(self._iterator, MISSING)
        return after is MISSING

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
        rv = self._after
        if rv is not MISSING:
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


#: a loop's ``loop`` object, as the compiled code makes it (the class itself: no call between)
loop_context = LoopContext


def loop_last(iterable: Any) -> tuple:
    """For a loop that reads only ``loop.last`` and counters: ``(last index, the list)`` for a
    list or tuple (nothing to look ahead for), else ``(None, its loop object)``."""
    if type(iterable) is list or type(iterable) is tuple:
        return len(iterable) - 1, iterable
    return None, LoopContext(iterable)


def loop_items_last(items: Any, mapping: Any) -> tuple:
    """``loop_last`` of a loop over ``mapping | items`` (``items``, that filter's generator, or
    the same pairs as the bounds hand them on) whose body cannot change ``mapping``: ``(last
    index, items)`` for a dict (its generator yields ``len(mapping)`` pairs), else ``(None,
    its loop object)``."""
    if type(mapping) is dict:
        return len(mapping) - 1, items
    return None, LoopContext(items)


# ----------------------------------------------------------------------------- macros


class Macro:
    """A compiled ``{% macro %}`` as templates see it: binds arguments like jinja2.runtime.Macro.

    ``func`` takes every parameter positionally, then ``varargs``, ``kwargs`` and
    ``caller`` when the macro body uses them; absent parameters arrive as MISSING.
    """

    __module__ = "jinja2.runtime"  # messages name the reference's type

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
            arguments.append(check_weight(kwargs, "a macro's kwargs") if kwargs else kwargs)
        elif kwargs:
            if "caller" in kwargs:
                raise TypeError(
                    f"macro {self.name!r} was invoked with two values for the special"
                    " caller argument. This is most likely a bug."
                )
            raise TypeError(f"macro {self.name!r} takes no keyword argument {next(iter(kwargs))!r}")
        if self.catch_varargs:  # f(varargs, varargs) holds them twice: weighed
            extra = args[self._argument_count :]
            arguments.append(check_weight(extra, "a macro's varargs") if extra else extra)
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


from .clock import CLOCK, strftime_now  # noqa: E402 (the clock's own module)

# transformers defines both inside a function: argument errors name them so
for _f in (raise_exception, strftime_now):
    _f.__module__ = "transformers.utils.chat_template_utils"
    _f.__qualname__ = f"_cached_compile_jinja_template.<locals>.{_f.__name__}"


class TemplateDict:
    """transformers' ``dict`` global: calling it makes a plain dict; the type is never exposed."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        if len(args) == 1 and not hasattr(args[0], "keys"):  # pairs: their keys' hashes charged
            pairs = args[0] if isinstance(args[0], (list, tuple)) else list(args[0])
            charge_hashing(pair[0] for pair in pairs if isinstance(pair, (list, tuple)) and pair)
            args = (pairs,)
        made = dict(*args, **kwargs)
        check_weight(made, "a dict")  # dict(a=l, b=l) holds l twice
        return made

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        if args:  # the keys' hashes charged (``limits.charge_hashing``)
            args = (charge_hashing(args[0]),) + args[1:]
        made = dict.fromkeys(*args, **kwargs)
        check_weight(made, "dict.fromkeys")  # one value under every key
        return made


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
    bits = max(abs(rng.start).bit_length(), abs(rng.stop).bit_length())
    if bits > LONG_INT_BITS and len(rng) > 1:  # each item a long integer of its own, once made
        check_total(len(rng) * (NODE + (bits >> 3)), "a range of long integers")
    return rng


class TemplateReference:
    """jinja2's ``self``: prints as the template's reference; ``self.NAME`` is a block of the
    template (see ``blocks.template_reference``; none for the global ``self``)."""

    __module__ = "jinja2.runtime"  # error messages name the type as jinja2's

    def __init__(self, blocks: Optional[dict] = None) -> None:
        self._blocks = blocks or {}  # name -> a factory of a new reference to the block

    __module__ = "jinja2.runtime"  # messages name the reference's type
    def __getitem__(self, name: str) -> Any:
        return self._blocks[name]()

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


def no_caller() -> Undefined:
    """``caller`` in a macro called without one (a ``{% generation %}`` body's caller)."""
    return Undefined("No caller defined", name="caller")


#: The environment's own callables (ids of module-lifetime objects): known safe, so calls

# ----------------------------------------------------------------------------- extra globals

LOREM_IPSUM_WORDS = """\
a ac accumsan ad adipiscing aenean aliquam aliquet amet ante aptent arcu at
auctor augue bibendum blandit class commodo condimentum congue consectetuer
consequat conubia convallis cras cubilia cum curabitur curae cursus dapibus
diam dictum dictumst dignissim dis dolor donec dui duis egestas eget eleifend
elementum elit enim erat eros est et etiam eu euismod facilisi facilisis fames
faucibus felis fermentum feugiat fringilla fusce gravida habitant habitasse hac
hendrerit hymenaeos iaculis id imperdiet in inceptos integer interdum ipsum
justo lacinia lacus laoreet lectus leo libero ligula litora lobortis lorem
luctus maecenas magna magnis malesuada massa mattis mauris metus mi molestie
mollis montes morbi mus nam nascetur natoque nec neque netus nibh nisi nisl non
nonummy nostra nulla nullam nunc odio orci ornare parturient pede pellentesque
penatibus per pharetra phasellus placerat platea porta porttitor posuere
potenti praesent pretium primis proin pulvinar purus quam quis quisque rhoncus
ridiculus risus rutrum sagittis sapien scelerisque sed sem semper senectus sit
sociis sociosqu sodales sollicitudin suscipit suspendisse taciti tellus tempor
tempus tincidunt torquent tortor tristique turpis ullamcorper ultrices
ultricies urna ut varius vehicula vel velit venenatis vestibulum vitae vivamus
viverra volutpat vulputate"""


def _lorem_paragraph(words: list, min: int, max: int) -> str:
    import random  # imported on first use: most templates never need it

    next_capitalized = True
    last_comma = last_fullstop = 0
    last = None
    p = []
    for idx, _ in enumerate(range(random.randrange(min, max))):
        while True:
            word = random.choice(words)
            if word != last:
                last = word
                break
        if next_capitalized:
            word = word.capitalize()
            next_capitalized = False
        if idx - random.randrange(3, 8) > last_comma:  # add commas
            last_comma = idx
            last_fullstop += 2
            word += ","
        if idx - random.randrange(10, 20) > last_fullstop:  # add end of sentences
            last_comma = last_fullstop = idx
            word += "."
            next_capitalized = True
        p.append(word)
    p_str = " ".join(p)
    if p_str.endswith(","):
        p_str = p_str[:-1] + "."
    elif not p_str.endswith("."):
        p_str += "."
    return p_str


def generate_lorem_ipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    """The ``lipsum`` global (jinja2.utils.generate_lorem_ipsum). ``n`` paragraphs of up to
    ``max`` words each: an amplification (``lipsum(10**6)`` in a few bytes), so their count
    is checked against ``Limits.value`` before any is made, and the words are charged as
    work (a few Python steps each)."""
    if type(n) is int and type(max) is int and n > 0 and max > 0:
        check_size(n * max, "lipsum")
        charge(n * max)
    words = LOREM_IPSUM_WORDS.split()
    result = [_lorem_paragraph(words, min, max) for _ in range(n)]
    if not html:
        return "\n\n".join(result)
    return Markup("\n".join(f"<p>{escape(x)}</p>" for x in result))


class Cycler:
    """The ``cycler`` global (jinja2.utils.Cycler)."""

    __module__ = "jinja2.utils"

    def __init__(self, *items: Any) -> None:
        if not items:
            raise RuntimeError("at least one item has to be provided")
        check_weight(items, "a cycler's items")  # cycler(l, l).items holds l twice
        self.items = items
        self.pos = 0

    def reset(self) -> None:
        self.pos = 0

    @property
    def current(self) -> Any:
        return self.items[self.pos]

    def next(self) -> Any:
        rv = self.current
        self.pos = (self.pos + 1) % len(self.items)
        return rv

    __next__ = next


class Joiner:
    """The ``joiner`` global (jinja2.utils.Joiner)."""

    __module__ = "jinja2.utils"

    def __init__(self, sep: str = ", ") -> None:
        self.sep = sep
        self.used = False

    def __call__(self) -> str:
        if not self.used:
            self.used = True
            return ""
        return self.sep

__all__ = [
    "Namespace",
    "new_namespace",
    "ns_attrs",
    "ns_check",
    "ns_set",
    "ns_store",
    "LoopContext",
    "loop_context",
    "loop_last",
    "loop_items_last",
    "Macro",
    "make_macro",
    "raise_exception",
    "strftime_now",
    "CLOCK",
    "TemplateDict",
    "MAX_RANGE",
    "safe_range",
    "TemplateReference",
    "track_generation",
    "generation",
    "no_caller",
    "LOREM_IPSUM_WORDS",
    "generate_lorem_ipsum",
    "Cycler",
    "Joiner",
]
