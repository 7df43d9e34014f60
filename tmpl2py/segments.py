"""Uses of rendered segments (``CompiledTemplate.render_segments``): assistant masks for any
template, special-token injection reports, and a tokenization plan that never turns data into
control tokens.

- ``assistant_spans(segments, roles, fields, include_end)``: character spans of the text that
  derives from the given roles' messages (content, reasoning, tool calls), optionally with the
  template literal that closes each turn (the end-of-turn token a trainer wants learned);
- ``find_injections(segments, special_tokens)``: every special-token string inside a data
  segment, with the segment's origin;
- ``tokenize_segments(segments, tokenizer)``: token ids where the template's own control
  tokens are control tokens and the same strings in data are plain text (the pieces are cut
  and encoded as transformers' ``sanitize_control_tokens=True`` does, so the ids agree with it
  where it applies), with the assistant mask in tokens.
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple, Optional, Sequence

from tmpl2py.runtime.segments import (
    SHAPE,
    TEMPLATE,
    Origin,
    Segment,
    describe,
    merge_adjacent,
    sorted_paths,
)

#: message fields whose text counts as the message's own (``assistant_spans``): transformers'
#: message keys and the fields of Ollama's messages (Go templates: ``.Messages``)
MESSAGE_FIELDS = (
    "content", "reasoning_content", "thinking", "reasoning", "tool_calls",
    "Content", "Thinking", "ToolCalls",
)
#: the context names of the conversation's messages (Jinja's, Go's)
MESSAGE_LISTS = ("messages", "Messages")


# ----------------------------------------------------------------------------- assistant spans


def _field_path(path: Any, fields: Sequence[str]) -> bool:
    return (
        path is not None
        and len(path) >= 3
        and path[0] in MESSAGE_LISTS
        and type(path[1]) is int
        and path[2] in fields
        and path[-1] is not SHAPE
    )


def _message_of(origin: Origin, fields: Sequence[str], messages: Sequence[Any], wanted: set) -> Any:
    """The message whose ``fields`` the segment's text comes from: the message of its
    ``source`` path, else the one message of the wanted roles among those whose fields the
    value depends on (None: no one, or several)."""
    if _field_path(origin.source, fields):
        return origin.source[1]
    found = {p[1] for p in origin.paths if _field_path(p, fields)}
    if len(found) > 1:
        found = {i for i in found if _role(messages, i) in wanted}
    return found.pop() if len(found) == 1 else None


def _closes(origin: Origin, index: int) -> bool:
    """Whether a template segment was emitted under a decision about message ``index``."""
    return origin.kind == TEMPLATE and any(
        len(p) >= 2 and p[0] in MESSAGE_LISTS and p[1] == index and p[-1] is not SHAPE
        for p in origin.cond
    )


def assistant_spans(
    segments: Sequence[Segment],
    roles: Iterable[str] = ("assistant",),
    fields: Optional[Iterable[str]] = None,
    include_end: bool = False,
    messages: Optional[Sequence[Any]] = None,
) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of the text derived from the messages of ``roles``
    (their ``fields``, default ``MESSAGE_FIELDS``), adjacent pieces merged. With
    ``include_end``, each message's last span also takes the template text right after it
    that was emitted under a decision about that message (``<|im_end|>\\n``).

    ``messages``: the conversation as rendered (default: the segments' own context)."""
    if messages is None:
        context = getattr(segments, "context", None)
        messages = []
        if isinstance(context, dict):  # (a legacy Go render's turns have no messages)
            messages = context.get("messages") or context.get("Messages") or []
    wanted = set(roles)
    fields = tuple(MESSAGE_FIELDS if fields is None else fields)
    spans: list[list[int]] = []
    owner: list[int] = []
    offset = 0
    last_index: Optional[int] = None
    taken = 0  # template segments taken after the message's text
    for seg in segments:
        start, offset = offset, offset + len(seg.text)
        index = None
        if seg.origin.kind != TEMPLATE:
            index = _message_of(seg.origin, fields, messages, wanted)
        if index is not None and _role(messages, index) in wanted:
            if spans and owner[-1] == index and spans[-1][1] == start:
                spans[-1][1] = offset
            else:
                spans.append([start, offset])
                owner.append(index)
            last_index, taken = index, 0
            continue
        if include_end and last_index is not None and seg.origin.kind == TEMPLATE:
            # the literal right after the text, and more while decided by this message
            if taken == 0 or _closes(seg.origin, last_index):
                spans[-1][1] = offset
                taken += 1
                continue
        last_index = None
    return [(a, b) for a, b in spans]


def _role(messages: Sequence[Any], index: int) -> Any:
    if not 0 <= index < len(messages):
        return None
    message = messages[index]
    if isinstance(message, dict):
        return message.get("role")
    return getattr(message, "Role", None)  # one of Ollama's messages


# ----------------------------------------------------------------------------- injections


class Injection(NamedTuple):
    """A special-token string found in data: the token, its character span in the prompt,
    and the segment (index and origin) it sits in."""

    token: str
    start: int
    end: int
    segment: int
    origin: Origin


def find_injections(segments: Sequence[Segment], special_tokens: Iterable[str]) -> list[Injection]:
    """Every occurrence of a special token inside a segment that is not template text (longer
    tokens first, occurrences not overlapping), in prompt order."""
    tokens = sorted({t for t in special_tokens if t}, key=len, reverse=True)
    found: list[Injection] = []
    offset = 0
    for i, seg in enumerate(segments):
        if seg.origin.kind != TEMPLATE and tokens:
            found.extend(_occurrences(seg.text, tokens, offset, i, seg.origin))
        offset += len(seg.text)
    return found


def _occurrences(text: str, tokens: list, offset: int, index: int, origin: Origin) -> list:
    out, pos = [], 0
    while pos < len(text):
        hits = [(text.find(t, pos), -len(t), t) for t in tokens]
        hits = [h for h in hits if h[0] >= 0]
        if not hits:
            break
        at, _, token = min(hits)
        out.append(Injection(token, offset + at, offset + at + len(token), index, origin))
        pos = at + len(token)
    return out


class InjectionError(ValueError):
    """A special token in data, under the policy ``"raise"``."""

    def __init__(self, injections: list[Injection]) -> None:
        self.injections = injections
        first = injections[0]
        super().__init__(
            f"{len(injections)} special token(s) in data, first {first.token!r} at "
            f"{first.start} (template line {first.origin.line})"
        )


def check_injections(
    segments: Sequence[Segment], special_tokens: Iterable[str], policy: str = "raise"
) -> list[Injection]:
    """``policy="raise"``: raise ``InjectionError`` when data holds a special token;
    ``"report"``: return them."""
    if policy not in ("raise", "report"):
        raise ValueError(f"unknown policy {policy!r} (expected 'raise' or 'report')")
    found = find_injections(segments, special_tokens)
    if found and policy == "raise":
        raise InjectionError(found)
    return found


# ----------------------------------------------------------------------------- tokenization


class TokenPlan(NamedTuple):
    """Token ids of a prompt, one offset pair per token (characters of the prompt), the
    assistant mask in tokens (1 where a token overlaps an assistant span), and the injected
    special tokens that were encoded as plain text."""

    ids: list
    offsets: list
    assistant_mask: list
    injections: list


class _Encoder:
    """One interface over a ``tokenizers.Tokenizer`` and a transformers fast tokenizer:
    ``encode(text, as_text)`` -> (ids, offsets), special tokens recognised unless ``as_text``."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.raw = hasattr(tokenizer, "encode_special_tokens") and not hasattr(
            tokenizer, "added_tokens_encoder"
        )

    def encode(self, text: str, as_text: bool) -> tuple[list, list]:
        if self.raw:
            saved = self.tokenizer.encode_special_tokens
            self.tokenizer.encode_special_tokens = as_text
            try:
                enc = self.tokenizer.encode(text, add_special_tokens=False)
            finally:
                self.tokenizer.encode_special_tokens = saved
            return list(enc.ids), [tuple(o) for o in enc.offsets]
        enc = self.tokenizer(
            text,
            add_special_tokens=False,
            split_special_tokens=as_text,
            return_offsets_mapping=True,
        )
        return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]

    def special_tokens(self) -> list[str]:
        if self.raw:
            decoder = self.tokenizer.get_added_tokens_decoder()
        else:
            decoder = self.tokenizer.added_tokens_decoder
        return [t.content for t in decoder.values() if t.special]


def _piece(encoder: _Encoder, text: str, as_text: bool, newline: list) -> tuple[list, list]:
    """A piece from the middle of the prompt, encoded after a newline that is then dropped
    (so SentencePiece adds no prefix space), as transformers' ``encode_marked_chat`` does."""
    ids, offsets = encoder.encode("\n" + text, as_text)
    if ids[: len(newline)] == newline:
        shifted = [(max(a - 1, 0), max(b - 1, 0)) for a, b in offsets[len(newline) :]]
        return ids[len(newline) :], shifted
    return encoder.encode(text, as_text)


def tokenize_segments(
    segments: Sequence[Segment],
    tokenizer: Any,
    special_tokens: Optional[Iterable[str]] = None,
    spans: Optional[Sequence[tuple[int, int]]] = None,
) -> TokenPlan:
    """Encode the prompt so that special tokens written by the template are control tokens and
    the same strings in data are text: the prompt is cut at each special token found in data
    (``find_injections``); the text between is encoded normally, each injected token as plain
    text. ``special_tokens``: default, the tokenizer's special added tokens. ``spans``: the
    character spans of the assistant mask (default ``assistant_spans(segments)``)."""
    encoder = _Encoder(tokenizer)
    tokens = list(encoder.special_tokens() if special_tokens is None else special_tokens)
    injections = find_injections(segments, tokens)
    text = "".join(s.text for s in segments)
    newline, _ = encoder.encode("\n", False)
    ids: list = []
    offsets: list = []
    cuts = [(0, 0, None)] + [(i.start, i.end, i) for i in injections]
    pieces: list[tuple[int, int, bool]] = []
    for (_, end, _), (start, stop, _) in zip(cuts, cuts[1:] + [(len(text), len(text), None)]):
        pieces.append((end, start, False))
        if stop > start:
            pieces.append((start, stop, True))
    for n, (start, stop, as_text) in enumerate(pieces):
        if stop <= start:
            continue
        chunk = text[start:stop]
        if n == 0:  # the prompt's start, encoded as it is
            piece_ids, piece_offsets = encoder.encode(chunk, as_text)
        else:
            piece_ids, piece_offsets = _piece(encoder, chunk, as_text, newline)
        ids.extend(piece_ids)
        offsets.extend((a + start, b + start) for a, b in piece_offsets)
    if spans is None:
        spans = assistant_spans(segments)
    return TokenPlan(ids, offsets, token_mask(offsets, spans), injections)


def token_mask(offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list:
    """1 for each token overlapping a span (transformers' rule for its assistant mask)."""
    mask = [0] * len(offsets)
    ordered = sorted(spans)
    k = 0
    for i, (start, end) in enumerate(offsets):
        while k < len(ordered) and start >= ordered[k][1]:
            k += 1
        if k == len(ordered):
            break
        if end > ordered[k][0]:
            mask[i] = 1
    return mask


# ----------------------------------------------------------------------------- display

_COLOURS = ("\x1b[36m", "\x1b[33m", "\x1b[32m", "\x1b[35m", "\x1b[34m", "\x1b[31m")
_DIM, _RESET = "\x1b[2m", "\x1b[0m"


def _jsonable_path(path: tuple) -> list:
    return [k if isinstance(k, (str, int, float, bool)) or k is None else repr(k) for k in path]


def segment_records(segments: Sequence[Segment]) -> list[dict]:
    """Plain data for each segment (JSON): text, kind, line, paths, ops, cond, offsets."""
    out, offset = [], 0
    for seg in segments:
        o = seg.origin
        out.append(
            {
                "text": seg.text,
                "start": offset,
                "end": offset + len(seg.text),
                "kind": o.kind,
                "line": o.line,
                "paths": [_jsonable_path(p) for p in sorted_paths(o.paths)],
                "ops": list(o.ops),
                "cond": [_jsonable_path(p) for p in sorted_paths(o.cond)],
            }
        )
        offset += len(seg.text)
    return out


def format_segments(
    segments: Sequence[Segment], as_json: bool = False, colour: bool = False
) -> str:
    """The prompt with origins: JSON records, the prompt coloured by origin (a terminal:
    template text dim, data coloured per source, a legend after it), or one line per piece."""
    if as_json:
        import json

        records = [json.dumps(r, ensure_ascii=False) for r in segment_records(segments)]
        return "[\n" + ",\n".join(records) + "\n]\n"
    merged = merge_adjacent(list(segments))
    if not colour:
        return "".join(f"{seg.text!r:<50} {describe(seg.origin)}\n" for seg in merged)
    legend: dict = {}
    out = []
    for seg in merged:
        if seg.origin.kind == TEMPLATE:
            out.append(_DIM + seg.text + _RESET)
            continue
        key = describe(seg.origin)
        code = legend.setdefault(key, _COLOURS[len(legend) % len(_COLOURS)])
        out.append(code + seg.text + _RESET)
    lines = ["".join(out), "", "--- origins ---"]
    lines += [f"{code}\u2588{_RESET} {key}" for key, code in legend.items()]
    return "\n".join(lines) + "\n"
