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
    """A GGUF file's chat templates, as (name, text, metadata key), and special tokens."""
    try:
        import gguf  # an optional extra: pip install 'tmpl2py[gguf]'
    except ImportError:
        raise FormatError(
            "reading GGUF files needs the optional 'gguf' package: pip install 'tmpl2py[gguf]'",
            "needs-gguf",
        ) from None
    try:
        # GGUFReader memory-maps the file and parses the header and metadata; tensor data
        # is only mapped, never read.
        reader = gguf.GGUFReader(path, "r")
        fields = reader.fields
        templates: list[tuple[str, str, str]] = []
        default = _gguf_string(fields.get("tokenizer.chat_template"))
        if default is not None:
            templates.append(("default", default, "tokenizer.chat_template"))
        prefix = "tokenizer.chat_template."
        for key in fields:
            if key.startswith(prefix) and key != "tokenizer.chat_templates":
                value = _gguf_string(fields[key])
                if value is not None:
                    templates.append((key[len(prefix) :], value, key))
        special = _gguf_special_tokens(fields)
    except Exception as e:  # noqa: BLE001 - the reader's ValueError / IndexError / struct errors
        raise FormatError(f"malformed GGUF file: {type(e).__name__}: {e}") from None
    if not templates:
        raise FormatError("no 'tokenizer.chat_template' metadata", "no-template")
    return templates, special


def _gguf_string(fld: Any) -> Optional[str]:
    """A string KV field's value (read from its parts: works across gguf versions)."""
    if fld is None or not fld.data:
        return None
    import gguf

    if fld.types[:1] != [gguf.GGUFValueType.STRING]:
        return None
    return bytes(fld.parts[fld.data[0]]).decode("utf-8", "replace")


def _gguf_special_tokens(fields: Any) -> dict[str, str]:
    tokens = fields.get("tokenizer.ggml.tokens")
    if tokens is None:
        return {}
    out = {}
    for key, var in _GGUF_TOKEN_IDS.items():
        fld = fields.get(key)
        if fld is None or not fld.data:
            continue
        index = int(fld.parts[fld.data[0]][0])
        if 0 <= index < len(tokens.data):
            out[var] = bytes(tokens.parts[tokens.data[index]]).decode("utf-8", "replace")
    return out


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
