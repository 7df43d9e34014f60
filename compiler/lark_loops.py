"""The loaded parsers' inner loops, each Lark's own step for step, in fewer Python calls
(``lark_tables.load_parser`` installs them; ``tests/unit/test_parser_loading.py`` and
``tests/unit/test_lark_tables.py`` compare them with Lark's loops over the shared corpus).
Long because it is every loop a compile runs inside Lark, each beside what it replaces.

- ``with_span_starts``: each rule's tree built and given the start of its text in one call
  (``TreeBuilder``; Lark's ``propagate_positions`` computed ten attributes per reduction);
- ``with_fast_driver``: the LALR loop over a table made once (``FastParser``: no ``Rule``
  hashed or compared per reduction, a one-symbol ``?rule`` passes its child up without a
  call; ``parse_lowered`` lowers in the reductions) and the contextual lexer with
  ``BasicLexer.next_token`` inlined, matching a terminal's own pattern where it is the one
  that can start with the next character (``FastContextualLexer``).
"""

from __future__ import annotations

import functools
import types
from typing import Any, Optional

from lark import Lark, Token, Tree
from lark.tree import Meta
from lark.exceptions import LexError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import BasicLexer, ContextualLexer
from lark.parse_tree_builder import ChildFilterLALR_NoPlaceholders, ExpandSingleChild
from lark.parsers.lalr_analysis import Shift
from lark.parsers.lalr_interactive_parser import InteractiveParser
from lark.parsers.lalr_parser import _Parser as _LarkParser
from lark.parsers.lalr_parser_state import ParserState
from lark.visitors import _VArgsWrapper, _vargs_inline, _vargs_meta_inline


def with_span_starts(parser: Lark) -> Lark:
    """``parser`` (loaded without ``propagate_positions``) with every rule's tree given the
    start of its text, as Lark's ``propagate_positions`` gives it: ``meta.line`` /
    ``meta.column`` (what the frontends read) and ``meta.container_line`` /
    ``container_column``, nothing else (no end positions). Lark's wrapper computes all ten
    attributes of every reduction and cost about as much as the LALR parse itself."""
    callbacks = parser._callbacks  # the dict the LALR parser calls (Lark's ``ParserConf``)
    for rule, build in list(callbacks.items()):
        callbacks[rule] = TreeBuilder.of(build) or SpanStart(build)
    return parser


class SpanStart:
    """A rule's tree builder, then Lark's position rule for the start: a tree's text starts
    where its first positioned child's does (a token's own position, a subtree's container:
    the start of its whole text, inlined parts and filtered tokens included); a tree that had
    its position already (a single child passed up) keeps ``line`` and gets the container."""

    __slots__ = ("build",)

    def __init__(self, build: Any) -> None:
        self.build = build

    def __call__(self, children: list) -> Any:
        res = self.build(children)
        if len(children) == 1 and children[0] is res:
            return res  # passed up whole: its start and container are its own already
        if isinstance(res, Tree):
            for c in children:
                if isinstance(c, Tree):
                    meta = c.meta
                    if not meta.empty:
                        line, column = meta.container_line, meta.container_column
                        break
                elif isinstance(c, Token):
                    line, column = c.line, c.column
                    break
            else:
                return res
            meta = res.meta
            if meta.empty:
                meta.line, meta.column, meta.empty = line, column, False
            meta.container_line, meta.container_column = line, column
        return res


class TreeBuilder:
    """``SpanStart(build)`` in one call, for the builders Lark makes for our rules: a
    ``Tree(name, ...)``, under ``ExpandSingleChild`` (``?rule``) or not, under the LALR child
    filter (tokens filtered out, ``_rule`` children inlined) or not, each step as Lark does it."""

    __slots__ = ("name", "include", "expand1")

    def __init__(self, name: str, include: Optional[list], expand1: bool) -> None:
        self.name, self.include, self.expand1 = name, include, expand1

    @classmethod
    def of(cls, build: Any) -> Optional["TreeBuilder"]:
        """The builder for Lark's ``build``, or None when it is not of that shape."""
        include = None
        if type(build) is ChildFilterLALR_NoPlaceholders:
            include, build = list(build.to_include), build.node_builder
        expand1 = type(build) is ExpandSingleChild
        if expand1:
            build = build.node_builder
        if (
            type(build) is functools.partial
            and build.func is Tree
            and len(build.args) == 1
            and not build.keywords
            and type(build.args[0]) is str
        ):
            return cls(build.args[0], include, expand1)
        return None

    def __call__(self, children: list) -> Any:
        include = self.include
        if include is None:
            filtered = children
        else:  # ChildFilterLALR_NoPlaceholders
            filtered = []
            for i, to_expand in include:
                if to_expand:
                    if filtered:
                        filtered += children[i].children
                    else:  # as Lark: the inlined child's own list (left recursion)
                        filtered = children[i].children
                else:
                    filtered.append(children[i])
        res = None
        if self.expand1 and len(filtered) == 1:  # ExpandSingleChild
            res = filtered[0]
            if len(children) == 1 and children[0] is res:
                return res  # passed up whole (as ``SpanStart``)
            if not isinstance(res, Tree):
                return res
        for c in children:  # ``SpanStart``; a tree's ``_meta``: None until ``meta`` is read
            if isinstance(c, Tree):
                meta = c._meta
                if meta is not None and not meta.empty:
                    line, column = meta.container_line, meta.container_column
                    break
            elif isinstance(c, Token):
                line, column = c.line, c.column
                break
        else:
            return Tree(self.name, filtered) if res is None else res
        if res is None:  # a new tree, made with its meta
            meta = Meta()
            meta.line, meta.column, meta.empty = line, column, False
            meta.container_line, meta.container_column = line, column
            return Tree(self.name, filtered, meta)
        meta = res.meta
        if meta.empty:
            meta.line, meta.column, meta.empty = line, column, False
        meta.container_line, meta.container_column = line, column
        return res


def with_fast_driver(parser: Lark) -> Lark:
    """``parser`` with its LALR loop replaced by ``FastParser.parse_from_state`` (the same
    shifts, reductions, callbacks and errors as Lark's ``ParserState.feed_token``, from a
    table made once: no ``Rule`` is hashed or compared per reduction). A parser whose
    callbacks include token callbacks (none of ours) keeps Lark's loop."""
    inner = parser.parser.parser.parser  # Lark -> ParsingFrontend -> LALR_Parser -> _Parser
    if type(inner) is _LarkParser and not any(type(k) is str for k in inner.callbacks):
        inner.__class__ = FastParser
    lexer = getattr(parser.parser.lexer, "lexer", None)  # under the post-lexer's connector
    if type(lexer) is ContextualLexer and all(
        type(sub) is BasicLexer for sub in lexer.lexers.values()
    ):
        lexer.__class__ = FastContextualLexer
    return parser


class FastContextualLexer(ContextualLexer):
    """Lark's contextual lexer with ``BasicLexer.next_token`` inlined in ``lex`` (the same
    matches, tokens, line counting, callbacks and errors: a position no terminal matches is
    left to Lark's ``next_token``, which raises what it raises)."""

    #: an ASCII character -> the names of the terminals a match can start with it
    #: (``lark_tables`` sets it from the prebuilt tables; without it, no character is known)
    first_chars: dict = {}

    def _state_lexer(self, state: Any) -> tuple:
        """(lexer, its scanner's patterns, ignored types, newline types, callbacks, the
        ``_only_terminal`` table of its terminals) of the parser state ``state``: what
        ``lex`` reads per token, looked up once per state."""
        lexer = self.lexers[state]
        scanner = lexer._scanner
        if scanner is None:
            scanner = lexer.scanner  # builds it, and the lexer's ``callback``
        by_char = self.__dict__.setdefault("_by_char", {}).setdefault(id(scanner), {})
        entry = (lexer, scanner._mres, lexer.ignore_types, lexer.newline_types, lexer.callback,
                 by_char)
        self.__dict__.setdefault("_by_state", {})[state] = entry
        return entry

    def _only_terminal(self, lexer: Any, by_char: dict, char: str) -> Any:
        """(pattern, name) of the one terminal of ``lexer`` a match can start with ``char``
        at (``first_chars``), else False (more, or ``char`` not known); remembered in
        ``by_char``. Such a terminal's own pattern matches where the alternation of all
        would, the same text (no other branch can match there)."""
        only: Any = False
        names = self.first_chars.get(char)
        if names is not None:
            scanner = lexer._scanner
            found = scanner.allowed_types.intersection(names)
            if len(found) == 1:
                (name,) = found
                made = self.__dict__.setdefault("_own_patterns", {})
                pattern = made.get(name)
                if pattern is None:
                    t = next(t for t in scanner.terminals if t.name == name)
                    pattern = made[name] = lexer.re.compile(
                        t.pattern.to_regexp(), scanner.g_regex_flags
                    )
                only = (pattern, name)
        by_char[char] = only
        return only

    def lex(self, lexer_state: Any, parser_state: Any) -> Any:
        by_state = self.__dict__.get("_by_state") or {}
        source = lexer_state.text
        text, end = source.text, source.end
        line_ctr = lexer_state.line_ctr
        nl = line_ctr.newline_char
        new_token = Token._future_new
        # the parser's state: ``parser_state.position``, read off the stack Lark's loops and
        # ours change in place (another kind of state is asked its ``position``)
        stack = parser_state.state_stack if type(parser_state) is ParserState else None
        try:
            while True:
                state = stack[-1] if stack is not None else parser_state.position
                entry = by_state.get(state)
                if entry is None:
                    entry = self._state_lexer(state)
                    by_state = self.__dict__["_by_state"]
                lexer, mres, ignore, newline, callback, by_char = entry
                while True:
                    pos = line_ctr.char_pos
                    if pos >= end:
                        raise EOFError(lexer)
                    char = text[pos]
                    only = by_char.get(char)
                    if only is None:
                        only = self._only_terminal(lexer, by_char, char)
                    if only and (m := only[0].match(text, pos, end)):
                        type_ = only[1]  # the one terminal that can match here
                    else:
                        for mre in mres:
                            m = mre.match(text, pos, end)
                            if m:
                                break
                        else:
                            lexer.next_token(lexer_state, parser_state)  # raises
                            raise AssertionError("unreachable")  # pragma: no cover
                        type_ = m.lastgroup
                    value = m.group(0)
                    line = line_ctr.line
                    column = line_ctr.column
                    if type_ in newline:  # LineCounter.feed
                        newlines = value.count(nl)
                        if newlines:
                            line_ctr.line += newlines
                            line_ctr.line_start_pos = pos + value.rindex(nl) + 1
                    line_ctr.char_pos = new_pos = pos + len(value)
                    line_ctr.column = new_pos - line_ctr.line_start_pos + 1
                    if type_ not in ignore:
                        t = new_token(type_, value, pos, line, column, line_ctr.line,
                                      line_ctr.column, new_pos)
                        if type_ in callback:
                            t = callback[type_](t)
                            if not isinstance(t, Token):
                                raise LexError("Callbacks must return a token (returned %r)" % t)
                        lexer_state.last_token = t
                        break
                    if type_ in callback:  # an ignored token's callback (its value unused)
                        t = new_token(type_, value, pos, line, column, line_ctr.line,
                                      line_ctr.column, new_pos)
                        callback[type_](t)
                yield t
        except EOFError:
            pass
        except UnexpectedCharacters as e:  # as ContextualLexer.lex
            try:
                last_token = lexer_state.last_token
                token = self.root_lexer.next_token(lexer_state, parser_state)
                raise UnexpectedToken(
                    token,
                    e.allowed,
                    state=parser_state,
                    token_history=[last_token],
                    terminals_by_name=self.root_lexer.terminals_by_name,
                )
            except UnexpectedCharacters:
                raise e


def _passes_single_child_up(callback: Any) -> bool:
    """A one-symbol rule's callback that returns its one child as it is: Lark's
    ``ExpandSingleChild`` (a ``?rule``) with no child filter, under ``SpanStart`` (which
    leaves a child passed up whole alone)."""
    if isinstance(callback, TreeBuilder):
        return callback.expand1 and callback.include is None
    build = callback.build if isinstance(callback, SpanStart) else callback
    return type(build) is ExpandSingleChild


class FastParser(_LarkParser):
    """Lark's LALR ``_Parser`` with ``parse_from_state`` run over one table per state:
    token type or rule name -> the next state (an ``int``: a shift or a goto) or
    ``(size, callback, rule name)`` (a reduction). A state that is not a fresh start (an
    interactive parser resuming after an error) goes through Lark's own loop."""

    def _fast_table(self) -> list:
        table = self.__dict__.get("_table")
        if table is None:
            callbacks = self.callbacks

            def reduction(rule: Any) -> tuple:
                size, callback = len(rule.expansion), callbacks[rule]
                if size == 1 and _passes_single_child_up(callback):
                    callback = None
                return (size, callback, rule.origin.name)

            table = self._table = self._made_table(reduction)
        return table

    def _made_table(self, reduction: Any) -> list:
        """The table, each reduction's entry ``reduction(rule)`` (made once per rule)."""
        states = self.parse_table.states
        # by the rule's id: a ``Rule`` hashes in Python, ~13,000 times here
        reductions: dict = {}
        table: list = [None] * (max(states) + 1)
        for state, row in states.items():  # one pass (a cold process makes it once)
            made = table[state] = {}
            for k, (action, arg) in row.items():
                if action is Shift:
                    made[k] = arg
                else:
                    entry = reductions.get(id(arg))
                    if entry is None:
                        entry = reductions[id(arg)] = reduction(arg)
                    made[k] = entry
        return table

    def parse_from_state(self, state: Any, last_token: Any = None) -> Any:
        if len(state.state_stack) != 1 or state.value_stack:
            return super().parse_from_state(state, last_token)
        table = self._fast_table()
        conf = state.parse_conf
        end_state = conf.end_state
        state_stack = state.state_stack
        value_stack = state.value_stack
        push_state, push_value = state_stack.append, value_stack.append
        try:
            token = last_token
            for token in state.lexer.lex(state):
                ttype = token.type
                while True:
                    try:
                        action = table[state_stack[-1]][ttype]
                    except KeyError:
                        raise self._unexpected(state, token)
                    if action.__class__ is int:
                        push_state(action)
                        push_value(token)
                        break
                    size, callback, origin = action
                    if callback is None:  # ``?rule`` of one symbol: its value passes up
                        del state_stack[-1]
                        push_state(table[state_stack[-1]][origin])
                        continue
                    if size:
                        children = value_stack[-size:]
                        del state_stack[-size:]
                        del value_stack[-size:]
                    else:
                        children = []
                    value = callback(children)
                    push_state(table[state_stack[-1]][origin])
                    push_value(value)
            end_token = (
                Token.new_borrow_pos("$END", "", token) if token else Token("$END", "", 0, 1, 1)
            )
            while True:
                try:
                    action = table[state_stack[-1]]["$END"]
                except KeyError:
                    raise self._unexpected(state, end_token)
                size, callback, origin = action  # $END is never shifted
                if callback is None:
                    del state_stack[-1]
                    push_state(table[state_stack[-1]][origin])
                    if state_stack[-1] == end_state:
                        return value_stack[-1]
                    continue
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value = callback(children)
                push_state(table[state_stack[-1]][origin])
                push_value(value)
                if state_stack[-1] == end_state:
                    return value_stack[-1]
        except UnexpectedInput as e:
            e.interactive_parser = InteractiveParser(self, state, state.lexer)
            raise e

    def _lowering_table(self, transformer: type) -> Optional[list]:
        """The table of ``_fast_table`` with each reduction's callback replaced by its
        ``_lowering_step`` for ``transformer`` (a class; made once per class), or None when
        a step is not known or a token type has a callback (``parse_lowered`` calls none)."""
        tables = self.__dict__.setdefault("_lowering_tables", {})
        if transformer in tables:
            return tables[transformer]
        callbacks = self.callbacks
        known = [True]

        def reduction(rule: Any) -> tuple:
            size, callback, origin = len(rule.expansion), callbacks[rule], rule.origin.name
            step = None  # a ``?rule``'s one child passed up
            if not (size == 1 and _passes_single_child_up(callback)):
                step = _lowering_step(transformer, callback, origin)
                known[0] = known[0] and step is not None
                if size == 1 and step is not None and _returns_lone_child(step):
                    size = -1  # ``parse_lowered`` passes a value that is not a token up
            return (size, step, origin)

        table: Optional[list] = self._made_table(reduction)
        upper = [name for name in dir(transformer) if name.isupper()]
        if not known[0] or any(name in row for name in upper for row in table if row):
            table = None
        tables[transformer] = table
        return table

    def parse_lowered(self, state: Any, transformer: Any) -> Any:
        """``parse_from_state`` from a fresh start, each reduction lowered by ``transformer``
        as ``_lowering_step`` says (``frontend.parse_and_transform``). Beside the value stack,
        for each value: the first token of its text (None: no token), from which a new
        tree's ``meta`` start is made as ``TreeBuilder`` makes it, and the depth of the tree
        Lark's way would have built (raises ``_LowerAsLark`` past ``LOWERING_DEPTH``)."""
        table = self._lowering_table(type(transformer))
        end_state = state.parse_conf.end_state
        state_stack = state.state_stack
        value_stack = state.value_stack
        starts: list = []  # the first token of each value's text, or None
        depths: list = []  # the depth of each value's tree (a token: 0)
        push_state, push_value = state_stack.append, value_stack.append
        push_start, push_depth = starts.append, depths.append

        def reduce(size: int, step: tuple) -> Any:
            """The value of a reduction of ``size`` symbols (off the stacks, its start and
            depth pushed)."""
            if size == 1:
                children = [value_stack.pop()]
                first = starts.pop()
                depth = depths.pop()
                del state_stack[-1]
            elif size:
                children = value_stack[-size:]
                first = starts[-size]
                if first is None:
                    for first in starts[-size:]:
                        if first is not None:
                            break
                depth = max(depths[-size:])
                del state_stack[-size:], value_stack[-size:], starts[-size:], depths[-size:]
            else:
                children, first, depth = [], None, 0
            how, include, expand1, function, name = step
            if include is None:
                filtered = children
            else:  # as ``TreeBuilder`` (an ``_rule``'s value is its list of children)
                filtered = []
                for i, to_expand in include:
                    if to_expand:
                        if filtered:
                            filtered += children[i]
                        else:
                            filtered = children[i]
                    else:
                        filtered.append(children[i])
            push_start(first)
            if how == _INLINED:
                push_depth(depth)
                return filtered
            if expand1 and len(filtered) == 1:  # a ``?rule``'s one child passed up
                push_depth(depth)
                return filtered[0]
            depth += 1
            if depth > LOWERING_DEPTH:
                raise _LowerAsLark()
            push_depth(depth)
            if how == _INLINE:
                return function(transformer, *filtered)
            meta = Meta()
            if first is not None:
                meta.line, meta.column, meta.empty = first.line, first.column, False
                meta.container_line, meta.container_column = first.line, first.column
            if how == _META:
                return function(transformer, meta, *filtered)
            if how == _PLAIN:
                return function(transformer, filtered)
            return transformer.__default__(name, filtered, meta)

        units = self.__dict__.setdefault("_units", {}).setdefault(transformer.__class__, {})
        token = None
        tokens = state.lexer.lex(state)
        try:
            for token in tokens:
                ttype = token.type
                while True:
                    try:
                        action = table[state_stack[-1]][ttype]
                    except KeyError:
                        raise self._unexpected(state, token)
                    if action.__class__ is int:
                        push_state(action)
                        push_value(token)
                        push_start(token)
                        push_depth(0)
                        break
                    size, step, origin = action
                    if step is None or size < 0:
                        # a value passed up (a ``?rule`` of one symbol, or a ``returns_lone_child``
                        # method's one child, a level deeper), with the passes up that follow
                        # it before this token: one step to the state they end in
                        key = (state_stack[-2], origin, ttype)
                        hit = units.get(key)
                        if hit is None:
                            hit = units[key] = _units_from(table, *key)
                        top, levels = hit
                        if step is not None:
                            levels += 1
                        if not levels:
                            state_stack[-1] = top
                            continue
                        if not isinstance(value_stack[-1], Token):
                            depth = depths[-1] + levels
                            if depth > LOWERING_DEPTH:
                                raise _LowerAsLark()
                            depths[-1] = depth
                            state_stack[-1] = top
                            continue
                        # a token the method is called with: one step at a time
                    if step is None:
                        del state_stack[-1]
                    else:
                        push_value(reduce(size if size >= 0 else 1, step))
                    push_state(table[state_stack[-1]][origin])
        except Exception as e:  # noqa: BLE001 - re-raised, as it is or marked
            raised_by = e.__traceback__.tb_next if e.__traceback__ else None
            if (
                raised_by is not None
                and raised_by.tb_frame.f_code is getattr(tokens, "gi_code", None)
                and not isinstance(e, UnexpectedInput)
            ):
                raise StreamError(e) from None
            raise
        end_token = Token.new_borrow_pos("$END", "", token) if token else Token("$END", "", 0, 1, 1)
        while True:
            try:
                size, step, origin = table[state_stack[-1]]["$END"]  # never shifted
            except KeyError:
                raise self._unexpected(state, end_token)
            if step is None:
                del state_stack[-1]
            elif size >= 0:
                push_value(reduce(size, step))
            elif isinstance(value_stack[-1], Token):
                push_value(reduce(1, step))
            else:  # as above
                del state_stack[-1]
                depth = depths[-1] + 1
                if depth > LOWERING_DEPTH:
                    raise _LowerAsLark()
                depths[-1] = depth
            push_state(table[state_stack[-1]][origin])
            if state_stack[-1] == end_state:
                return value_stack[-1]

    @staticmethod
    def _unexpected(state: Any, token: Any) -> UnexpectedToken:
        """Lark's error for a token the state has no action for (``feed_token``'s)."""
        row = state.parse_conf.states[state.state_stack[-1]]
        expected = {s for s in row.keys() if s.isupper()}
        return UnexpectedToken(token, expected, state=state, interactive_parser=None)


# ----------------------------------------------------------------------------- lowering in the reductions

#: a tree deeper than this is lowered again by Lark's way (``parse_and_transform``): the
#: transformer recursed once per level of the tree, and past Python's stack that was a
#: ``too-deep`` error at the rule it reached; the shared corpus nests 46 deep at most
LOWERING_DEPTH = 100

_INLINED, _INLINE, _META, _PLAIN, _DEFAULT = range(5)  # what a reduction does (``_lowering_step``)


def _units_from(table: list, below: int, origin: str, token_type: str) -> tuple:
    """(state, levels): where the values passed up (``parse_lowered``) from a reduction to
    ``origin`` over state ``below`` stop before a token of ``token_type``, and how many
    ``returns_lone_child`` levels the values pass on the way (after the first)."""
    levels = 0
    top = table[below][origin]
    while True:
        action = table[top].get(token_type)
        if action is None or action.__class__ is int:
            return top, levels
        size, step, origin = action
        if step is not None:
            if size >= 0:
                return top, levels
            levels += 1
        top = table[below][origin]


def returns_lone_child(method: Any) -> Any:
    """Marks a transformer's ``v_args(inline=True)`` method that, called with one child
    that is not a ``Token``, returns that child (``x (OP x)* -> op``: the rule's alias
    makes a tree of one child, which Lark does not pass up): ``parse_lowered`` passes such
    a child up without the call (the tree's level still counted in the depth)."""
    method.returns_lone_child = True
    return method


def _returns_lone_child(step: tuple) -> bool:
    """The reduction ``step`` (of one symbol) calls a ``returns_lone_child`` method with
    its one child as it is."""
    how, include, expand1, function, _name = step
    return (
        how == _INLINE
        and include is None
        and not expand1
        and getattr(function, "returns_lone_child", False) is True
    )


class StreamError(Exception):
    """Raised by ``FastParser.parse_lowered`` for ``error``, raised by its token stream (a
    post-lexer's error; not a Lark error of the text): Lark's way (``parse_and_transform``)
    raises that error too, at the same token (its parse reads the same tokens and calls no
    transformer method before the end), so it need not parse the text again to know it."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


class _LowerAsLark(Exception):
    """Raised by ``FastParser.parse_lowered`` for a tree deeper than ``LOWERING_DEPTH``."""


def _lowering_step(transformer: type, callback: Any, origin: str) -> Optional[tuple]:
    """What the reduction of a rule does for ``transformer`` (a ``CachedTransformer``
    class), from the rule's ``TreeBuilder``: ``(how, include, expand1, function, name)``;
    None where this does not know the transformer's callback (Lark's way then).

    ``how``: ``_INLINED``, an ``_rule`` (its children are spliced into the parent's, as
    Lark's child filter splices its tree's); else, after the child filter and a ``?rule``'s
    single child passed up, the method of the tree's name: ``_INLINE`` (``v_args(inline)``),
    ``_META`` (``v_args(meta, inline)``: the tree's ``meta`` first), ``_PLAIN`` (the list of
    children) or ``_DEFAULT`` (none: ``__default__``, which makes the tree)."""
    if not isinstance(callback, TreeBuilder):
        return None
    if origin.startswith("_"):
        return None if callback.expand1 else (_INLINED, callback.include, False, None, None)
    name = callback.name
    # the class's own attribute (``getattr`` would make a bound ``_VArgsWrapper``, ~5 us)
    found = next((c.__dict__[name] for c in transformer.__mro__ if name in c.__dict__), None)
    if found is None:
        return (_DEFAULT, callback.include, callback.expand1, None, name)
    how = _PLAIN
    if isinstance(found, _VArgsWrapper):
        how = {_vargs_inline: _INLINE, _vargs_meta_inline: _META}.get(found.visit_wrapper)
        found = found.base_func
    if how is None or type(found) is not types.FunctionType:
        return None
    return (how, callback.include, callback.expand1, found, name)
