"""The source formats that are more than a text file: GGUF metadata and Ollama's Modelfile.

Parsers only: ``sources.load`` reads a file of one of these kinds through them and makes its
``TemplateSource`` objects (a model folder or template file never imports this module). A
malformed input raises :class:`FormatError`, which ``sources`` reports as its
``SourceError`` naming the file.
"""

from __future__ import annotations

from typing import Any, Optional

#: Ollama's Modelfile commands (``parser.ParseFile``'s list)
MODELFILE_COMMANDS = (
    "from", "license", "template", "system", "adapter", "draft", "renderer", "parser",
    "parameter", "message", "requires",
)  # fmt: skip


class FormatError(ValueError):
    """A GGUF file or Modelfile that cannot be read; ``code`` as ``SourceError``'s."""

    def __init__(self, message: str, code: str = "malformed") -> None:
        super().__init__(message)
        self.code = code


#: GGUF token-id keys (llama.cpp spelling, ``seperator`` included) -> the template variable.
_GGUF_TOKEN_IDS = {
    "tokenizer.ggml.bos_token_id": "bos_token",
    "tokenizer.ggml.eos_token_id": "eos_token",
    "tokenizer.ggml.unknown_token_id": "unk_token",
    "tokenizer.ggml.seperator_token_id": "sep_token",
    "tokenizer.ggml.padding_token_id": "pad_token",
    "tokenizer.ggml.cls_token_id": "cls_token",
    "tokenizer.ggml.mask_token_id": "mask_token",
}


# ----------------------------------------------------------------------------- GGUF


def read_gguf(path: str) -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    """A GGUF file's chat templates, as (name, text, metadata key), and special tokens.

    Read with the standard library from a memory map of the file, keeping only the keys it
    needs: the header and the metadata in order, each value read or stepped over by its size
    (an array of numbers in one step, bounds-checked against the file before anything is
    made; strings one length at a time), tensors never reached. (``gguf.GGUFReader`` parses
    every metadata value into numpy views: ~700 bytes and 9 us a byte of an array, so a 3 MB
    file with one junk array took 2 GB: red team s8h F2.)"""
    import mmap

    with open(path, "rb") as f:
        try:
            data: Any = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            data = b""
    try:
        return _GGUFMetadata(data).read()
    finally:
        if not isinstance(data, bytes):
            data.close()


#: GGUF value types whose values have a fixed size (bytes) -> that size
_GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
#: GGUF integer value types -> their ``struct`` format
_GGUF_INTS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 10: "Q", 11: "q"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9
#: the deepest arrays of arrays read, and the most strings of arrays stepped over: a file past
#: them is refused (each level and each string cost a step of Python: a file of nested array
#: headers took 8x its size in memory, one of empty strings ~1 us a string; red team s8h F7)
_GGUF_NESTING = 8
_GGUF_STRINGS = 4_000_000
_TEMPLATE_KEY = "tokenizer.chat_template"


class _GGUFMetadata:
    """One pass over a GGUF file's metadata (``read_gguf``)."""

    def __init__(self, data: Any) -> None:
        self.data = data
        self.end = len(data)
        self.pos = 0
        self.order = "<"
        self.count = "Q"  # counts and string lengths: uint64 (GGUF v1: uint32)
        self.strings = 0  # the strings of arrays stepped over so far

    def fail(self, why: str) -> FormatError:
        return FormatError(f"malformed GGUF file: {why}")

    def take(self, fmt: str) -> tuple:
        import struct

        fmt = self.order + fmt
        size = struct.calcsize(fmt)
        if self.pos + size > self.end:
            raise self.fail(f"truncated at byte {self.pos:,}")
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values

    def skip(self, size: int) -> None:
        if size > self.end - self.pos:
            raise self.fail(f"truncated at byte {self.pos:,}")
        self.pos += size

    def string(self) -> tuple[int, int]:
        """(start, length) of the string at the position, stepped over."""
        (length,) = self.take(self.count)
        start = self.pos
        self.skip(length)
        return start, length

    def text(self, start: int, length: int) -> str:
        return bytes(self.data[start : start + length]).decode("utf-8", "replace")

    def skip_array(self, item: int, count: int) -> None:
        """Step over an array's items (nested arrays one level at a time, no recursion; at
        most :data:`_GGUF_NESTING` levels: real files nest one)."""
        stack = [[item, count]]
        while stack:
            top = stack[-1]
            kind, left = top
            if left == 0:
                stack.pop()
            elif kind in _GGUF_SIZES:
                self.skip(_GGUF_SIZES[kind] * left)
                stack.pop()
            elif kind == _GGUF_STRING:
                self.skip_strings(left)
                stack.pop()
            elif kind == _GGUF_ARRAY:
                if len(stack) >= _GGUF_NESTING:
                    raise self.fail(f"arrays nested more than {_GGUF_NESTING} deep")
                top[1] -= 1
                stack.append([*self.take("I"), *self.take(self.count)])
            else:
                raise self.fail(f"unknown value type {kind}")

    def skip_strings(self, count: int) -> None:
        """Step over ``count`` strings (a length each: one step a string, ~0.2 us; at most
        :data:`_GGUF_STRINGS` in the whole file, as real vocabularies and merges hold
        under a million)."""
        import struct

        length = struct.Struct(self.order + self.count)
        read, size, data, end, pos = length.unpack_from, length.size, self.data, self.end, self.pos
        if count > (end - pos) // size:  # each one holds its length at least
            raise self.fail(f"truncated at byte {pos:,}")
        self.strings += count
        if self.strings > _GGUF_STRINGS:
            raise self.fail(f"more than {_GGUF_STRINGS:,} strings in its metadata")
        for _ in range(count):
            if pos + size > end:
                raise self.fail(f"truncated at byte {pos:,}")
            pos += size + read(data, pos)[0]
        if pos > end:
            raise self.fail(f"truncated at byte {end:,}")
        self.pos = pos

    def read(self) -> tuple[list[tuple[str, str, str]], dict[str, str]]:
        if bytes(self.data[:4]) != b"GGUF":
            raise self.fail("no GGUF magic")
        self.pos = 4
        (version,) = self.take("I")
        if version & 0xFFFF == 0 and version:  # written big-endian
            self.order = ">"
            version = int.from_bytes(version.to_bytes(4, "little"), "big")
        if version not in (1, 2, 3):
            raise self.fail(f"unsupported version {version}")
        if version == 1:
            self.count = "I"
        _tensors, pairs = self.take(self.count * 2)
        templates: dict[str, tuple[str, str]] = {}  # key -> (name, text); the first of a key
        ids: dict[str, int] = {}
        tokens: Optional[tuple[int, int]] = None  # (position, count) of the token strings
        for _ in range(pairs):
            key = self.text(*self.string())
            (kind,) = self.take("I")
            if kind == _GGUF_STRING:
                start, length = self.string()
                if key == _TEMPLATE_KEY or key.startswith(_TEMPLATE_KEY + "."):
                    name = "default" if key == _TEMPLATE_KEY else key[len(_TEMPLATE_KEY) + 1 :]
                    templates.setdefault(key, (name, self.text(start, length)))
            elif kind == _GGUF_ARRAY:
                item, count = self.take("I") + self.take(self.count)
                if key == "tokenizer.ggml.tokens" and item == _GGUF_STRING and tokens is None:
                    tokens = (self.pos, count)
                self.skip_array(item, count)
            elif kind in _GGUF_INTS and key in _GGUF_TOKEN_IDS:
                (value,) = self.take(_GGUF_INTS[kind])
                ids.setdefault(key, value)
            elif kind in _GGUF_SIZES:
                self.skip(_GGUF_SIZES[kind])
            else:
                raise self.fail(f"unknown value type {kind} for {key!r}")
        found = [(name, text, key) for key, (name, text) in templates.items()]
        found.sort(key=lambda t: t[0] != "default")  # the default first, the others in order
        if not found:
            raise FormatError("no 'tokenizer.chat_template' metadata", "no-template")
        return found, self.special_tokens(ids, tokens)

    def special_tokens(self, ids: dict[str, int], tokens: Optional[tuple[int, int]]) -> dict[str, str]:
        """The tokens the id keys name: the token list read up to the largest id wanted."""
        if tokens is None:
            return {}
        start, count = tokens
        wanted = {i for i in ids.values() if 0 <= i < count}
        texts: dict[int, str] = {}
        self.pos = start
        for index in range(max(wanted) + 1 if wanted else 0):
            span = self.string()
            if index in wanted:
                texts[index] = self.text(*span)
        return {
            _GGUF_TOKEN_IDS[key]: texts[i] for key, i in ids.items() if i in texts
        }


# ----------------------------------------------------------------------------- Modelfile


def parse_modelfile(text: str) -> list[tuple[str, str]]:
    """Ollama's ``parser.ParseFile`` state machine: a list of (command, argument).

    Commands are lower-cased (``from`` is reported as ``model``, a ``PARAMETER`` as its
    name). Values may be bare (to the end of the line), ``"quoted"`` or ``\"\"\"multi-line\"\"\"``;
    non-printable characters outside a value's line breaks are dropped, as Ollama does.
    A ``FROM`` line is not required here (templates are read from fragments too).
    """
    parser = _ModelfileParser()
    for ch in text.lstrip("\ufeff"):
        parser.feed(ch)
    return parser.finish()


class _ModelfileParser:
    def __init__(self) -> None:
        self.commands: list[tuple[str, str]] = []
        self.state, self.line, self.buf, self.name, self.role = "nil", 1, [], "", ""

    def feed(self, ch: str) -> None:
        if ch in "\r\n":
            self.line += 1
        nxt, out = _modelfile_step(ch, self.state, self.line)
        if nxt != self.state:
            nxt = self._leave(self.state, "".join(self.buf), ch, nxt)
            if nxt is None:  # a value goes on (inside quotes, or a space)
                self.buf.append(ch)
                return
            self.buf = []
            self.state = nxt
        if out is not None and out.isprintable():
            self.buf.append(out)

    def _leave(self, state: str, value: str, ch: str, nxt: str) -> Optional[str]:
        """Finish the buffer of ``state``; the next state (None: stay in the value)."""
        if state == "name":
            word = value.lower()
            if word not in MODELFILE_COMMANDS:
                raise FormatError(f"line {self.line}: unknown Modelfile command {value!r}"
                )
            if word in ("parameter", "message"):
                nxt = word
            self.name = "model" if word == "from" else word
        elif state == "parameter":
            self.name = value
        elif state == "message":
            if value not in ("system", "user", "assistant"):
                raise FormatError(f'line {self.line}: message role must be one of "system", "user", or "assistant"',
                )
            self.role = value
        elif state == "value":
            unquoted = _unquote(value.strip())
            if unquoted is None or ch in " \t":
                return None
            self._command(unquoted)
        return nxt

    def _command(self, value: str) -> None:
        self.commands.append((self.name, f"{self.role}: {value}" if self.role else value))
        self.role = ""

    def finish(self) -> list[tuple[str, str]]:
        if self.state == "value":
            unquoted = _unquote("".join(self.buf).strip())
            if unquoted is None:
                raise FormatError("unexpected end of file inside a quoted value")
            self._command(unquoted)
        elif self.state not in ("nil", "comment"):
            raise FormatError("unexpected end of file")
        return self.commands


def _modelfile_step(ch: str, state: str, line: int) -> tuple[str, Optional[str]]:
    space, newline = ch in " \t", ch in "\r\n"
    if state == "nil":
        if ch == "#":
            return "comment", None
        if space or newline:
            return "nil", None
        return "name", ch
    if state == "name":
        if ch.isascii() and ch.isalpha():
            return "name", ch
        if space:
            return "value", None
        raise FormatError(f"line {line}: a Modelfile command must be followed by a space")
    if state == "value":
        return ("nil", ch) if (newline or space) else ("value", ch)
    if state in ("parameter", "message"):
        if ch.isascii() and (
            ch.isalpha() or (state == "parameter" and (ch.isdigit() or ch == "_"))
        ):
            return state, ch
        if space:
            return "value", None
        raise FormatError(f"line {line}: unexpected character {ch!r} in a {state.upper()} line"
        )
    return ("nil", None) if newline else ("comment", None)


def _unquote(s: str) -> Optional[str]:
    if s.startswith('"""'):
        return s[3:-3] if len(s) >= 6 and s.endswith('"""') else None
    if s.startswith('"'):
        return s[1:-1] if len(s) >= 2 and s.endswith('"') else None
    return s


def modelfile_template(text: str) -> dict[str, Any]:
    """What a Modelfile gives its template: ``template`` (the last ``TEMPLATE``), ``stop``
    (its ``PARAMETER stop`` values), ``system`` (the last ``SYSTEM``) and ``messages``."""
    commands = parse_modelfile(text)
    templates = [arg for cmd, arg in commands if cmd == "template"]
    if not templates:
        raise FormatError(
            "no TEMPLATE command (the template then comes from the FROM model)", "no-template"
        )
    systems = [arg for cmd, arg in commands if cmd == "system"]
    messages = []
    for cmd, arg in commands:
        if cmd == "message":  # "role: content", as the parser joins them (Ollama cuts there)
            role, _, content = arg.partition(": ")
            messages.append({"role": role, "content": content})
    return {
        "template": templates[-1],
        "stop": [arg for cmd, arg in commands if cmd == "stop"],
        "system": systems[-1] if systems else "",
        "messages": messages,
    }
