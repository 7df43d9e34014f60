"""transformers' input handling for ``render_conversation`` (profile ``hf``).

A standard-library port of what ``transformers.utils.chat_template_utils.render_jinja_template``
does to its inputs before rendering: every value rebuilt from plain JSON types (subclasses
cast down, unknown objects replaced by ``"<TypeName>"``), reasoning fields aliased,
``tools``/``documents`` always passed (``None`` when absent), ``continue_final_message``, and the
``{% generation %}`` spans of ``return_assistant_tokens_mask``.
"""

from __future__ import annotations

import sys

from collections.abc import Mapping
from importlib import import_module
from types import FunctionType, MethodType
from typing import Any, Callable, Optional

from .objects import track_generation

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


#: the exact types of JSON's scalars: kept as they are (``plain_data``; ``loader``'s
#: ``_objects_to_dicts``)
JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain_data(value: Any) -> Any:
    """transformers' ``_plain_template_data``: the value rebuilt from plain JSON types.

    A dict's or a list's scalar items are taken as they are without a call (the usual
    message: a dict of strings), everything else as transformers does, in its order."""
    kind = type(value)
    if kind is dict:  # (a ``Mapping``: its keys and items rebuilt)
        scalars = JSON_SCALARS
        return {
            (k if type(k) in scalars else plain_data(k)): (v if type(v) in scalars else plain_data(v))
            for k, v in value.items()
        }
    if kind is list:
        scalars = JSON_SCALARS
        return [v if type(v) in scalars else plain_data(v) for v in value]
    if kind in JSON_SCALARS:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain_data(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain_data(v) for v in value)
    numpy = sys.modules.get("numpy")  # (a numpy value exists only where numpy is loaded)
    if numpy is not None and isinstance(value, numpy.generic):  # a scalar: its Python value
        return plain_data(value.item())
    if hasattr(type(value), "__dataclass_fields__"):  # a dataclass instance (its module is loaded)
        import dataclasses

        return {f.name: plain_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return plain_data(value.model_dump())
    return f"<{type(value).__name__}>"


def alias_reasoning(chat: list) -> list:
    """transformers' ``_alias_reasoning_fields`` (a message holding none of the fields is
    kept without a search)."""
    out = []
    for message in chat:
        if isinstance(message, dict) and (
            "reasoning_content" in message or "thinking" in message or "reasoning" in message
        ):
            reasoning = next(
                (message[k] for k in REASONING_FIELDS if message.get(k) is not None), None
            )
            if reasoning is not None:
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


def tool_schemas(tools: Any) -> Optional[list]:
    """transformers' tools: iterated once into a new list (a generator's tools are kept), each a
    JSON schema (a dict) or a function or method, made one by ``get_json_schema`` (imported from
    transformers when one is given: the runtime does not need it otherwise)."""
    if tools is None:
        return None
    schemas = []
    for tool in tools:
        if isinstance(tool, dict):
            schemas.append(tool)
        elif isinstance(tool, (FunctionType, MethodType)):  # (inspect's isfunction / ismethod)
            try:  # (by name: a standalone module imports nothing but the standard library)
                get_json_schema = import_module("transformers.utils").get_json_schema
            except ImportError:
                raise ValueError(
                    "tools given as Python functions are converted to JSON schemas by"
                    " transformers' get_json_schema, and transformers is not installed: pass JSON"
                    " schemas"
                ) from None
            schemas.append(get_json_schema(tool))
        else:
            raise ValueError(
                "Tools should either be a JSON schema, or a callable function with type hints "
                "and a docstring suitable for auto-conversion to a schema."
            )
    return schemas


def conversation_context(
    messages: Any,
    tools: Optional[list] = None,
    documents: Optional[list] = None,
    add_generation_prompt: bool = False,
    **kwargs: Any,
) -> dict:
    """The keyword arguments transformers renders a chat template with."""
    tools = tool_schemas(tools)
    if documents is not None:
        for document in documents:
            if not isinstance(document, dict):
                raise TypeError("Documents should be a list of dicts with 'title' and 'text' keys!")
    chat = getattr(messages, "messages", messages)
    chat = plain_data(chat)
    for message in chat:
        if not isinstance(message, dict):
            raise TypeError(
                f"Chat messages should be dicts, dataclasses or pydantic models, but got {message!r}."
            )
    chat = alias_reasoning(chat)
    context = plain_data(kwargs)  # (a new dict: ``kwargs`` is one)
    context["messages"] = chat
    context["tools"] = plain_data(tools)
    context["documents"] = plain_data(documents)
    context["add_generation_prompt"] = add_generation_prompt
    return context


#: ``render_jinja_template``'s own parameters that ``render_conversation`` has no keyword for:
#: passed again through its ``**kwargs``, transformers' call refuses them at once
_ENTRY_PARAMETERS = frozenset({"conversations", "chat_template"})


def render_conversation(
    render: Callable[[dict], str],
    source: str,
    messages: Any,
    /,
    tools: Optional[list] = None,
    documents: Optional[list] = None,
    add_generation_prompt: bool = False,
    continue_final_message: Any = False,
    return_assistant_tokens_mask: bool = False,
    **kwargs: Any,
) -> Any:
    """``render_jinja_template(conversations=[messages], ...)``'s text for the one conversation.

    With ``return_assistant_tokens_mask``, ``(text, spans)``: the conversation's entries of
    both lists transformers returns, ``spans`` being the ``(start, end)`` character offsets of
    every ``{% generation %}`` block (``[]`` when the template has none). Like transformers,
    the spans are measured on the render *before* ``continue_final_message`` cuts it.

    A keyword that names one of ``render_jinja_template``'s own parameters, or ``messages``
    (which it passes the template itself), is transformers' TypeError, raised where
    transformers raises it (``messages`` by the template's render, after the input checks).
    """
    twice = False  # ``messages`` passed as a keyword too
    if kwargs and not (_ENTRY_PARAMETERS.isdisjoint(kwargs) and "messages" not in kwargs):
        for key in kwargs:
            if key in _ENTRY_PARAMETERS:
                raise TypeError(
                    "transformers.utils.chat_template_utils.render_jinja_template() got multiple"
                    f" values for keyword argument '{key}'"
                )
        kwargs = dict(kwargs)
        del kwargs["messages"]
        twice = True
    context = conversation_context(messages, tools, documents, add_generation_prompt, **kwargs)
    if continue_final_message:
        final_message = _tag_final_message(context["messages"], source, continue_final_message)
    if twice:
        raise TypeError(
            "jinja2.environment.Template.render() got multiple values for keyword argument 'messages'"
        )
    if return_assistant_tokens_mask:
        with track_generation() as spans:
            rendered = render(context)
    else:
        rendered = render(context)
    if continue_final_message:
        rendered = _cut_at_tag(rendered, final_message)
    return (rendered, spans) if return_assistant_tokens_mask else rendered


def _tag_final_message(chat: list, source: str, continue_final_message: Any) -> str:
    """Append ``CONTINUE_TAG`` to the text to continue; returns that text (untagged)."""
    if not chat:
        raise ValueError("continue_final_message is set but the conversation is empty!")
    field = continue_final_message if isinstance(continue_final_message, str) else "content"
    final_message = chat[-1].get(field)
    if final_message is None:
        raise ValueError(
            f'continue_final_message is set but the final message has no "{field}" to continue!'
        )
    fields = [field]
    if field in REASONING_FIELDS:
        fields = [f for f in REASONING_FIELDS if chat[-1].get(f) == final_message]
    if not any(f in source for f in fields):
        raise ValueError(
            f'continue_final_message is set to "{field}" but this is not an accepted field in the chat_template'
        )
    elif isinstance(final_message, (list, tuple)):
        for block in reversed(final_message):
            if "text" in block:
                final_message = block["text"]
                block["text"] = block["text"] + CONTINUE_TAG
                break
        else:
            raise ValueError(
                "continue_final_message is set but we could not find any text to continue in the final message!"
            )
    else:
        for f in fields:
            chat[-1][f] = chat[-1][f] + CONTINUE_TAG
    return final_message


def _cut_at_tag(rendered: str, final_message: Any) -> str:
    """The render up to the tag (transformers' check that the final message survived)."""
    if final_message.strip() not in rendered or CONTINUE_TAG.strip() not in rendered:
        raise ValueError(
            "continue_final_message is set but the final message does not appear in the chat after "
            "applying the chat template! This can happen if the chat template deletes portions of "
            "the final message. Please verify the chat template and final message in your chat to "
            "ensure they are compatible."
            f"Final message to continue: {final_message.strip()}\nRendered chat:\n{rendered}"
        )
    tag_loc = rendered.rindex(CONTINUE_TAG.strip())
    if rendered[tag_loc : tag_loc + len(CONTINUE_TAG)] == CONTINUE_TAG:
        return rendered[:tag_loc]
    return rendered[:tag_loc].rstrip()
