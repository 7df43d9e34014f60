"""Lark parsers loaded from prebuilt LALR tables, so no process pays for building them.

Building a frontend's parser from ``grammar.lark`` costs ~0.4 s (the LALR analysis), and
~1.5 s more when ``interegular`` is installed, because Lark then checks every pair of
terminals for regex collisions (``lark_import`` keeps Lark from importing it, or ``regex``,
before they are used). Both are properties of the grammar, not of the template, so
they are done once, ahead of time: ``TMPL2PY_UPDATE_TABLES=1 pytest tests/unit/test_lark_tables.py`` writes
each frontend's tables (Lark's own serialisation, pickled as ``Lark.save`` does) to ``<frontend>/grammar_tables.py``,
keyed by the sha256 of the grammar text, the Lark version and the options, together with
the parser loaded from them, pickled whole for the Python that wrote them (loading that
takes ~9 ms instead of ~40 ms of Lark's deserialisation; another Python uses the tables).
``load_parser`` uses them when the key matches and otherwise (a grammar edited since,
another Lark version) builds the parser with the collision check off, which
``tests/unit/test_lark_tables.py`` runs instead, strictly, together with a check that the
shipped tables are current. The loaded parser runs its LALR loop over a table of its own
(``lark_loops``).
"""
from __future__ import annotations

import _sre
import array
import hashlib
import importlib
import io
import pickle
import re
import sys
import threading
import types
import zlib
from pathlib import Path
from typing import Any, Optional


from . import lark_import  # noqa: E402,F401 - first: Lark imports regex and interegular
import lark  # noqa: E402
from lark import Lark  # noqa: E402
from lark.parsers.lalr_analysis import Action  # noqa: E402

from .lark_loops import FastContextualLexer, with_fast_driver, with_span_starts  # noqa: E402

#: The options every frontend builds its parser with (besides its post-lexer).
OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "lexer": "contextual",
    "propagate_positions": True,
    "maybe_placeholders": False,
}

#: The frontend packages (under ``tmpl2py.compiler``) that have a grammar. A post-lexer's
#: ``always_accept`` shapes the contextual lexer's states, so it is part of the key too.
FRONTENDS = ("jinja", "gotmpl")

_BUILD_LOCK = threading.Lock()


def grammar_path(frontend: str) -> Path:
    return Path(__file__).resolve().parent / frontend / "grammar.lark"


def tables_key(grammar_text: str, always_accept: tuple[str, ...]) -> str:
    """What the tables depend on: the grammar, Lark's version and the options."""
    options = sorted(OPTIONS.items()) + [("always_accept", tuple(always_accept))]
    blob = f"{lark.__version__}\n{options!r}\n{grammar_text}"
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def load_parser(frontend: str, postlex: Any) -> Lark:
    """The frontend's parser: from its shipped tables when they are current, else built."""
    text = grammar_path(frontend).read_text(encoding="utf-8")
    key = tables_key(text, tuple(postlex.always_accept))
    try:
        tables = importlib.import_module(f"{__package__}.{frontend}.grammar_tables")
    except ImportError:
        tables = None
    if tables is not None and getattr(tables, "KEY", None) == key:
        parser = _unpickled_parser(tables, postlex)
        if parser is None:
            data, memo = pickle.loads(zlib.decompress(tables.TABLES))
            parser = _loaded_parser(data, memo, postlex)
        if getattr(tables, "SRE_KEY", None) == sre_key():
            _use_precompiled(parser, tables.SRE)
        parser = with_fast_driver(with_span_starts(parser))
        lexer = parser.parser.lexer.lexer
        if isinstance(lexer, FastContextualLexer):
            lexer.first_chars = getattr(tables, "FIRST", {})
        return parser
    return build_parser(frontend, postlex, check_collisions=False)


def _loaded_parser(data: dict, memo: dict, postlex: Any) -> Lark:
    """Lark's parser from its serialised tables (``Lark._load_from_dict``)."""
    return Lark._load_from_dict(data, memo, postlex=postlex, propagate_positions=False)


def python_key() -> str:
    """What a pickled ``Lark`` object depends on besides the tables: the Python it was
    pickled by (its standard library classes inside) and Lark's version."""
    return f"{sys.version_info[0]}.{sys.version_info[1]} lark {lark.__version__}"


def _unpickled_parser(tables: Any, postlex: Any) -> Optional[Lark]:
    """The parser ``_loaded_parser`` makes, pickled whole when the tables were written
    (``PARSER``: ~9 ms to load instead of ~40 ms of Lark's deserialisation), when it was
    pickled by this Python and Lark; else None. The post-lexer, modules and Lark's action
    singletons are pickled by reference (``_ParserPickler``)."""
    if getattr(tables, "PARSER_KEY", None) != python_key():
        return None
    try:
        return _ParserUnpickler(io.BytesIO(zlib.decompress(tables.PARSER)), postlex).load()
    except Exception:  # noqa: BLE001 - any doubt: Lark's own loading, from the tables
        return None


class _ParserPickler(pickle.Pickler):
    """Pickles a loaded parser with what must stay one object by reference: the post-lexer
    (the caller's) and modules (``re``) as persistent ids, Lark's ``Shift`` / ``Reduce``
    (compared by ``is``) as the globals of ``lalr_analysis`` they are: pickle's memo then
    refers to each again without a call (as persistent ids, the ~10,000 actions of the
    tables cost a ``persistent_load`` call each, ~7 ms of a cold process)."""

    def __init__(self, file: Any, postlex: Any) -> None:
        super().__init__(file, protocol=4)
        self._postlex = postlex

    def persistent_id(self, obj: Any) -> Any:
        if obj is self._postlex:
            return ("postlex",)
        if isinstance(obj, types.ModuleType):
            return ("module", obj.__name__)
        return None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Action):  # pickled by name, checked to be that module's object
            return obj.name
        return NotImplemented


class _ParserUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, postlex: Any) -> None:
        super().__init__(file)
        self._postlex = postlex

    def persistent_load(self, pid: Any) -> Any:
        if pid == ("postlex",):
            return self._postlex
        if pid[0] == "module":
            return importlib.import_module(pid[1])
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")


def sre_key() -> str:
    """What compiled regular-expression code depends on: this exact interpreter build and
    its ``_sre`` engine (``re`` gives the code no other guarantee)."""
    return f"{sys.version} sre {_sre.MAGIC} {_sre.CODESIZE}"


def _lexers(parser: Lark) -> list:
    """The loaded parser's basic lexers: one per distinct set of terminals, and the root."""
    contextual = parser.parser.lexer.lexer
    found = {id(x): x for x in contextual.lexers.values()}
    found[id(contextual.root_lexer)] = contextual.root_lexer
    return list(found.values())


class PrecompiledRe:
    """Stands for the ``re`` module in the loaded parser's lexers. Lark compiles each
    lexer's scanner (one alternation of its terminals) on the lexer's first use, ~1 ms each,
    mostly in ``re``'s parser and code generator (pure Python): a cold process paid ~35 ms
    of them on a 15 kB template. ``compile`` (and ``match``) of a pattern whose code the
    tables hold (compiled when they were written, for ``sre_key()``) makes the pattern
    object from that code, as ``re._compiler.compile`` ends (``_sre.compile``; the result
    compares equal to ``re.compile``'s, which compares the code: the tables' test checks
    it); any other pattern, and every other name, is ``re``'s own."""

    def __init__(self, table: dict) -> None:
        self._table = table
        self._made: dict = {}

    def compile(self, pattern: Any, flags: Any = 0) -> Any:
        key = (pattern, int(flags))
        made = self._made.get(key)
        if made is None:
            entry = self._table.get(key)
            if entry is None:
                made = re.compile(pattern, flags)
            else:
                final_flags, code, groups, groupindex, indexgroup = entry
                made = _sre.compile(
                    pattern, final_flags, array.array("I", code).tolist(), groups,
                    dict(groupindex), indexgroup,
                )
            self._made[key] = made
        return made

    def match(self, pattern: Any, string: Any, flags: Any = 0) -> Any:
        return self.compile(pattern, flags).match(string)

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


def _use_precompiled(parser: Lark, blob: bytes) -> None:
    try:
        table = pickle.loads(zlib.decompress(blob))
    except Exception:  # noqa: BLE001 - any doubt: re compiles them
        return
    shim = PrecompiledRe(table)
    for lexer in _lexers(parser):
        if lexer.re is re:
            lexer.re = shim


def sre_table(parser: Lark) -> dict:
    """(pattern, flags) -> what ``_sre.compile`` takes for it, for every pattern the lexers
    of ``parser`` compile (each built once, then reset), computed as ``re._compiler.compile``
    computes it and checked against ``re.compile``."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    asked: dict = {}

    class Recorder:
        def compile(self, pattern: Any, flags: Any = 0) -> Any:
            compiled = re.compile(pattern, flags)  # raises as re does (Lark retries)
            asked[(pattern, int(flags))] = None
            return compiled

        def match(self, pattern: Any, string: Any, flags: Any = 0) -> Any:
            return self.compile(pattern, flags).match(string)

        def __getattr__(self, name: str) -> Any:
            return getattr(re, name)

    for lexer in _lexers(parser):
        saved = lexer.re, lexer._scanner
        lexer.re, lexer._scanner = Recorder(), None
        try:
            lexer.scanner  # noqa: B018 - builds it (and the callbacks' scanners)
            for t in lexer.scanner.terminals:  # each on its own (``FastContextualLexer``)
                lexer.re.compile(t.pattern.to_regexp(), lexer.scanner.g_regex_flags)
        finally:
            lexer.re, lexer._scanner = saved
    table = {}
    for pattern, flags in asked:
        p = _parser.parse(pattern, flags)
        code = _compiler._code(p, flags)
        groupindex = dict(p.state.groupdict)
        indexgroup = [None] * p.state.groups
        for k, i in groupindex.items():
            indexgroup[i] = k
        entry = (flags | p.state.flags, array.array("I", code).tobytes(), p.state.groups - 1,
                 groupindex, tuple(indexgroup))
        made = _sre.compile(pattern, entry[0], code, entry[2], groupindex, entry[4])
        assert made == re.compile(pattern, flags), pattern
        table[(pattern, flags)] = entry
    return table


def first_chars(parser: Lark) -> dict:
    """Each ASCII character -> the names of the terminals of ``parser`` a match can start
    with it (a terminal whose pattern ``_first_atoms`` cannot read: with every character),
    in a tuple (``FastContextualLexer.first_chars``: where one terminal of a state can
    match, the lexer matches its pattern alone)."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    flags = parser.parser.lexer.lexer.root_lexer.scanner.g_regex_flags
    chars = [chr(i) for i in range(128)]
    out: dict = {c: [] for c in chars}
    for t in sorted(parser.terminals, key=lambda t: t.name):  # all (a scanner may drop some)
        p = _parser.parse(t.pattern.to_regexp(), flags)
        atoms: list = []
        starts = chars  # can match the empty string, or starts with what is not read here
        if not _first_atoms(list(p), atoms) and None not in atoms:
            one = [_compiler.compile(_parser.SubPattern(p.state, [a]), flags | p.state.flags)
                   for a in atoms]
            starts = [c for c in chars if any(a.match(c) for a in one)]
        for c in starts:
            out[c].append(t.name)
    return {c: tuple(names) for c, names in out.items()}


def _first_atoms(items: list, atoms: list) -> bool:
    """Appends to ``atoms`` each one-character item of the parsed pattern ``items`` (``re``'s
    parser) a match can start with (None: one not read here: any character); returns
    whether the items can match the empty string. Zero-width items (lookarounds, anchors) are
    passed over: the characters found are a superset of the possible ones."""
    from re import _constants as c  # type: ignore[attr-defined]

    for op, av in items:
        if op in (c.LITERAL, c.NOT_LITERAL, c.IN, c.ANY):
            atoms.append((op, av))
            return False
        if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue
        if op is c.SUBPATTERN and not av[1] and not av[2]:  # a group without its own flags
            if not _first_atoms(list(av[3]), atoms):
                return False
        elif op is c.BRANCH:
            empty = [_first_atoms(list(branch), atoms) for branch in av[1]]
            if not any(empty):
                return False
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            low, _high, item = av
            if not _first_atoms(list(item), atoms) and low > 0:
                return False
        else:
            atoms.append(None)
            return False
    return True


def build_parser(frontend: str, postlex: Any, check_collisions: bool) -> Lark:
    """Build from the grammar. ``check_collisions``: Lark's interegular check, strictly (a
    collision raises); off, the check is skipped whether or not interegular is installed."""
    from lark import lexer as lark_lexer

    path = grammar_path(frontend)
    strict = {"strict": True} if check_collisions else {}
    with _BUILD_LOCK:  # Lark reads the module's flag while building its lexers
        saved = lark_lexer.has_interegular, getattr(lark_lexer, "interegular", None)
        if check_collisions:  # interegular is required here (ImportError otherwise)
            lark_lexer.interegular = importlib.import_module("interegular")
        lark_lexer.has_interegular = check_collisions
        try:
            return Lark.open(str(path), postlex=postlex, **strict, **OPTIONS)
        finally:
            lark_lexer.has_interegular = saved[0]
            if saved[1] is not None:
                lark_lexer.interegular = saved[1]


def tables_source(frontend: str, postlex: Any) -> str:
    """The text of ``<frontend>/grammar_tables.py`` for the current grammar and Lark."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    text = grammar_path(frontend).read_text(encoding="utf-8")
    parser = build_parser(frontend, postlex, check_collisions=False)
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k != "postlex"}
    tables = pickle.dumps((data, memo), protocol=4)
    data, memo = pickle.loads(tables)  # the loader's own copy (loading changes it)
    buffer = io.BytesIO()
    _ParserPickler(buffer, postlex).dump(_loaded_parser(data, memo, postlex))
    key = tables_key(text, tuple(postlex.always_accept))
    data, memo = pickle.loads(tables)
    sre = pickle.dumps(sre_table(_loaded_parser(data, memo, postlex)), protocol=4)
    return tables_text(
        frontend, key, zlib.compress(tables, 9), zlib.compress(buffer.getvalue(), 9),
        zlib.compress(sre, 9), first_chars(parser),
    )


def tables_text(
    frontend: str, key: str, tables: bytes, parser: bytes, sre: bytes, first: dict
) -> str:
    """The module text for ``tables`` (Lark's serialised parser, pickled as ``Lark.save``
    stores it) and ``parser`` (the ``Lark`` object loaded from them, pickled by
    ``_ParserPickler`` for ``python_key()``) and ``sre`` (``sre_table``, for ``sre_key()``),
    each zlib-compressed, and ``first`` (``first_chars``, a small dict). Bytes literals, because a
    process that compiles the module from source (no ``.pyc``, e.g. under
    ``PYTHONDONTWRITEBYTECODE``) spends ~0.17 s on the equivalent Python literals and ~2 ms
    on one compressed bytes constant (~18 ms uncompressed); decompressed in ~2 ms."""
    return (
        f'"""Prebuilt LALR tables of ``{frontend}/grammar.lark`` (generated by\n'
        "``TMPL2PY_UPDATE_TABLES=1 pytest tests/unit/test_lark_tables.py``; do not edit). Long because it is data:\n"
        "Lark's serialised parser, pickled as ``Lark.save`` does (``TABLES``), and the parser loaded\n"
        "from it, pickled whole (``PARSER``, for ``PARSER_KEY``), and its lexers' compiled patterns\n"
        "(``SRE``, for ``SRE_KEY``); zlib-compressed, read by ``lark_tables.load_parser``; the\n"
        "terminals each ASCII character can start (``FIRST``).\"\"\"\n\n"
        f"KEY = {key!r}\n"
        f"TABLES = {tables!r}\n"
        f"PARSER_KEY = {python_key()!r}\n"
        f"PARSER = {parser!r}\n"
        f"SRE_KEY = {sre_key()!r}\n"
        f"SRE = {sre!r}\n"
        f"FIRST = {first!r}\n"
    )


def write_tables(frontend: str, postlex: Any) -> Path:
    """Regenerate ``<frontend>/grammar_tables.py`` (atomically); returns its path."""
    target = grammar_path(frontend).with_name("grammar_tables.py")
    tmp = target.with_suffix(".py.tmp")
    tmp.write_text(tables_source(frontend, postlex), encoding="utf-8")
    tmp.replace(target)
    return target
