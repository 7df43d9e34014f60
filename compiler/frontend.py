"""What the two frontends share: the Lark bootstrap, terminal names, error translation.

Each dialect's frontend (``jinja/frontend.py``, ``gotmpl/frontend.py``) supplies its grammar
(``grammar.lark`` next to it, its LALR tables prebuilt in ``grammar_tables.py``), its post-lexer, its table of human token names and its own
wording; this module builds the parser (``build_parser``, the one place a ``Lark`` is
constructed), caches it (``LazyParser``), names terminals for "unexpected X" messages
(``TokenNames``) and turns what Lark raises into ``CompileError`` (``run_parser``), so both
dialects report a bad template the same way: a typed error at a template position.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Optional, TypeVar

from . import lark_loops, lark_tables
from lark import Discard, Lark, Token, Transformer, Tree
from lark.exceptions import GrammarError, UnexpectedInput, VisitError
from lark.parsers.lalr_parser_state import ParseConf, ParserState
from lark.visitors import _vargs_inline, _vargs_meta_inline

from .errors import CompileError, position

T = TypeVar("T")


def build_parser(grammar_dir: str, postlex: Any) -> Lark:
    """The frontends' Lark parser: the grammar of the frontend package beside ``grammar_dir``
    (a module's ``__file__``), LALR with the contextual lexer, positions kept, ``postlex``
    applied to the token stream; loaded from its prebuilt tables when they are current
    (``lark_tables``). Every frontend parser is made here (one place to tune construction)."""
    return lark_tables.load_parser(Path(grammar_dir).resolve().parent.name, postlex)


class LazyParser:
    """A frontend's parser, built on first use and then kept (building one takes a while)."""

    def __init__(self, grammar_dir: str, postlex: Callable[[], Any]) -> None:
        self._grammar_dir = grammar_dir
        self._postlex = postlex
        self._parser: Optional[Lark] = None

    def __call__(self) -> Lark:
        if self._parser is None:
            self._parser = build_parser(self._grammar_dir, self._postlex())
        return self._parser


_NO_CALLBACK = object()


class CachedTransformer(Transformer):
    """A Lark ``Transformer`` that looks each rule's and token type's callback up once per
    instance, not once per tree node (Lark's ``getattr`` of a ``v_args`` method makes a new
    bound wrapper, ``functools.update_wrapper`` included, on every call), calls an inline
    ``v_args`` callback's method directly, and visits a tree's children in one loop. The
    callbacks are called with what Lark passes them, ``__default__`` and ``Discard`` as in
    Lark, and an error they raise is wrapped in ``VisitError`` as Lark wraps it."""

    def __init__(self, visit_tokens: bool = True) -> None:
        super().__init__(visit_tokens)
        self._callbacks: dict = {}  # rule or token type -> ``_callback``'s answer

    def _callback(self, name: str) -> Any:
        """(how to call, callable) for a rule or token type: ``inline`` / ``meta``: the
        method itself, with the children (and ``meta`` first); ``wrapped``: through its
        ``visit_wrapper``; ``plain``: with the list of children; None: no callback."""
        cache = self._callbacks
        hit = cache.get(name)
        if hit is None:
            f = getattr(self, name, _NO_CALLBACK)
            wrapper = getattr(f, "visit_wrapper", None)
            if f is _NO_CALLBACK:
                hit = (None, None)
            elif wrapper is _vargs_inline:
                hit = ("inline", f.base_func)
            elif wrapper is _vargs_meta_inline:
                hit = ("meta", f.base_func)
            elif wrapper is not None:
                hit = ("wrapped", f)
            else:
                hit = ("plain", f)
            cache[name] = hit
        return hit

    def _transform_tree(self, tree: Any) -> Any:
        children = []
        visit_tokens = self.__visit_tokens__
        for c in tree.children:
            if isinstance(c, Tree):
                c = self._transform_tree(c)
            elif visit_tokens and isinstance(c, Token):
                c = self._call_userfunc_token(c)
            if c is not Discard:
                children.append(c)
        return self._call_userfunc(tree, children)

    def _call_userfunc(self, tree: Any, new_children: Any = None) -> Any:
        children = new_children if new_children is not None else tree.children
        how, f = self._callbacks.get(tree.data) or self._callback(tree.data)
        if how is None:
            return self.__default__(tree.data, children, tree.meta)
        try:
            if how == "inline":
                return f(*children)
            if how == "meta":
                return f(tree.meta, *children)
            if how == "wrapped":
                return f.visit_wrapper(f, tree.data, children, tree.meta)
            return f(children)
        except GrammarError:
            raise
        except Exception as e:  # wrapped as Lark wraps it (``run_parser`` unwraps it)
            raise VisitError(tree.data, tree, e)

    def _call_userfunc_token(self, token: Any) -> Any:
        how, f = self._callbacks.get(token.type) or self._callback(token.type)
        if how is None:
            return self.__default_token__(token)
        try:
            return f(token)  # as Lark calls it (an inline wrapper's method takes the token too)
        except GrammarError:
            raise
        except Exception as e:  # as above
            raise VisitError(token.type, token, e)


def parse_and_transform(parser: Lark, text: str, make: Any) -> Any:
    """``make().transform(parser.parse(text))``, the same value, the same calls of the
    transformer's methods in the same order, with each rule's method called as the parser
    reduces the rule (``FastParser.parse_lowered``) instead of on a tree built first and
    walked after: no ``Tree`` is made (but for a rule with no method, where the transformer's
    ``__default__`` makes one) and no walk. An error of the post-lexer is raised as it is
    (``lark_loops.StreamError``); anything else raised on the way (an error of the text,
    of a method, a tree deeper than ``LOWERING_DEPTH``) and a transformer or parser this does
    not know (see ``_lowering_step``) go Lark's way, with a fresh transformer, from the
    start: what is raised is what Lark's way raises (a syntax error after a method's error in
    the text is the error, as when the whole tree was built first), the way ``run_parser``
    expects it (a method's error in a ``VisitError``)."""
    front = parser.parser  # ParsingFrontend -> LALR_Parser -> _Parser
    inner = front.parser.parser
    transformer = make()
    if (
        type(inner) is lark_loops.FastParser
        and _lowers_as_cached(type(transformer))
        and inner._lowering_table(type(transformer)) is not None
    ):
        try:
            stream = front._make_lexer_thread(text)
            conf = ParseConf(inner.parse_table, inner.callbacks, front._verify_start(None))
            return inner.parse_lowered(ParserState(conf, stream), transformer)
        except lark_loops.StreamError as e:  # what Lark's way raises too
            raise e.error from None
        except Exception:  # noqa: BLE001 - Lark's way says what it is
            transformer = make()
    return transformer.transform(parser.parse(text))


def _lowers_as_cached(cls: type) -> bool:
    """``cls`` transforms as ``CachedTransformer`` does (what ``parse_lowered`` repeats)."""
    return (
        issubclass(cls, CachedTransformer)
        and cls.transform is Transformer.transform
        and cls._transform_tree is CachedTransformer._transform_tree
        and cls._call_userfunc is CachedTransformer._call_userfunc
        and cls._call_userfunc_token is CachedTransformer._call_userfunc_token
        and cls.__default_token__ is Transformer.__default_token__
    )



class TokenNames:
    """Human names of a grammar's terminals, for "unexpected X" messages: the dialect's own
    table first, else the terminal's literal text (``'('``), else its name in lower case."""

    def __init__(self, table: Mapping[str, str], parser: Callable[[], Lark]) -> None:
        self.table = table
        self._parser = parser
        self._literals: Optional[dict] = None

    def __contains__(self, terminal: str) -> bool:
        return terminal in self.table

    def get(self, terminal: str, default: Optional[str] = None) -> Optional[str]:
        return self.table.get(terminal, default)

    def describe(self, terminal: str) -> str:
        if terminal in self.table:
            return self.table[terminal]
        literal = self.literal(terminal)
        return repr(literal) if literal is not None else terminal.lower()

    def literal(self, terminal: str) -> Optional[str]:
        """The text a terminal matches when it is a fixed string, else None."""
        if self._literals is None:
            self._literals = {
                t.name: t.pattern.value for t in self._parser().terminals if t.pattern.type == "str"
            }
        return self._literals.get(terminal)


def run_parser(
    build: Callable[[], T],
    known: tuple[type[BaseException], ...],
    convert: Callable[[Any], CompileError],
    syntax: Callable[[UnexpectedInput], CompileError],
) -> T:
    """``build()`` (parse and transform), with every error it raises as a ``CompileError``:
    a ``known`` error (raised by the post-lexer, or inside a transformer, where Lark wraps it
    in ``VisitError``) through ``convert``, a Lark parse error through ``syntax``. Anything
    else is a bug and propagates unchanged."""
    try:
        return build()
    except VisitError as e:
        if isinstance(e.orig_exc, known):
            raise convert(e.orig_exc) from None
        line, column = _where(e.obj)
        if isinstance(e.orig_exc, RecursionError):  # a rule's tree nests past Python's stack
            raise CompileError("too-deep", "template nesting is too deep to compile", line, column) from None
        if isinstance(e.orig_exc, UnicodeError):  # a lone surrogate (a JSON ``\ud800``)
            raise CompileError("syntax", f"the template's text is not valid Unicode: {e.orig_exc.reason}", line, column) from None
        raise
    except known as e:
        raise convert(e) from None
    except UnexpectedInput as e:
        raise syntax(e) from None


def _where(obj: Any) -> tuple:
    """The 1-based (line, column) a Lark tree or token starts at, (0, 0) when unknown."""
    meta = getattr(obj, "meta", None)
    line = getattr(meta, "line", None) if meta is not None else getattr(obj, "line", None)
    column = getattr(meta, "column", None) if meta is not None else getattr(obj, "column", None)
    return (line, column) if isinstance(line, int) and isinstance(column, int) else (0, 0)


def error_at(
    source: str, name: Optional[str], code: str, message: str, offset: int
) -> CompileError:
    """A ``CompileError`` at a character offset of ``source`` (clamped to its end)."""
    line, column = position(source, min(offset, len(source)))
    return CompileError(code, message, line, column, source, name)
