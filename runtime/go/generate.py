"""Ollama's /api/generate: the template values its GenerateHandler fills, and the Modelfile
defaults (``SYSTEM``, ``MESSAGE``) of both request kinds.

Standard library only. Reproduced from Ollama's server/routes.go (GenerateHandler,
ChatHandler) and server/prompt.go (chatPrompt, renderPrompt), as tests/goref/generate.go
reproduces them:

- ``raw``: the prompt as it is, no template (raw with ``system`` / ``template`` / ``context``
  is refused, as Ollama refuses it); an empty prompt only loads the model: nothing to render;
- with a ``suffix`` (fill-in-middle): the template runs once on ``Prompt, Suffix,
  Response: "", Think, ThinkLevel, IsThinkSet`` and nothing else (``.System`` is then no
  value, ``<no value>`` when printed);
- otherwise the messages: the request's ``system`` (or else the Modelfile's ``SYSTEM``), the
  Modelfile's ``MESSAGE`` lines, then the prompt as a user message with the images. The
  model's own template takes the chat-like flow (chatPrompt: each image tagged ``[img-N]``,
  numbered over the conversation, in place of the content's first ``[img]`` or in front;
  ``.Tools`` an empty, non-nil list); a template sent in the request takes the legacy flow
  (Template.Execute on those messages: no tags, ``.Tools`` nil).

Not modelled (they depend on the model, not the template): renderers and built-in parsers,
the thinking capability's default ``think: true``, chatPrompt's truncation to the context
window (the prompt is taken to fit), and ``context`` token ids (detokenizing needs the model).
"""

from __future__ import annotations

from typing import Any

from . import ollama
from .ollama import RequestError, decode_image

#: ChatHandler / GenerateHandler answer these requests without rendering a template.
EMPTY_PROMPT = "empty prompt: Ollama only loads the model (no template is rendered)"
NO_MESSAGES = "no messages: Ollama only loads the model (no template is rendered)"
RAW_REFUSED = "raw mode does not support template, system, or context"
CONTEXT_REFUSED = "context: detokenizing token ids needs the model"


def _text(value: Any, field: str) -> str:
    """A string field of the request (None: absent, ""), as Go's JSON binding takes it."""
    if value is None:
        return ""
    if type(value) is not str:
        raise RequestError(
            f"json: cannot unmarshal {type(value).__name__} into Go struct field"
            f" GenerateRequest.{field} of type string"
        )
    return value


def _modelfile_parts(modelfile: Any) -> tuple[str, list]:
    """``{"system": ..., "messages": [...]}`` (or None) -> (SYSTEM, MESSAGE lines)."""
    if modelfile is None:
        return "", []
    if not isinstance(modelfile, dict):
        raise RequestError("modelfile: expected an object with 'system' and 'messages'")
    messages = modelfile.get("messages") or []
    if not isinstance(messages, list):
        raise RequestError("modelfile: 'messages' must be a list of messages")
    return _text(modelfile.get("system"), "system"), list(messages)


def _role(message: Any) -> str:
    role = message.get("role") if isinstance(message, dict) else None
    return role.lower() if isinstance(role, str) else ""


def chat_messages(messages: Any, modelfile: Any) -> list:
    """ChatHandler's Modelfile defaults: the MESSAGE lines before the request's messages,
    SYSTEM before all unless the request starts with a system message."""
    system, defaults = _modelfile_parts(modelfile)
    if not messages:
        raise RequestError(NO_MESSAGES)
    if not isinstance(messages, list):
        raise RequestError(
            "json: cannot unmarshal messages into Go struct field of type []api.Message"
        )
    merged = defaults + list(messages)
    if _role(messages[0]) != "system" and system:
        merged.insert(0, {"role": "system", "content": system})
    return merged


def image_tagged(messages: list) -> list:
    """chatPrompt's image tags (no renderer): each image an ID counted over the whole
    conversation; ``[img-ID]`` replaces the content's first ``[img]``, or goes in front."""
    out = []
    count = 0
    for message in messages:
        images = message.get("images") if isinstance(message, dict) else None
        if not images or not isinstance(images, list):
            out.append(message)
            continue
        prefix, content = "", message.get("content") or ""
        if type(content) is not str:  # the binding's error comes from collate
            out.append(message)
            continue
        for _ in images:
            tag = f"[img-{count}]"
            count += 1
            if "[img]" not in content:
                prefix += tag
            else:
                content = content.replace("[img]", tag, 1)
        out.append({**message, "content": prefix + content})
    return out


def _check_images(images: Any) -> None:
    """The request's images as Go's JSON binding decodes them (base64 strings, or bytes
    given directly), for every request kind: a bad one refuses the request."""
    if images is None:
        return
    if not isinstance(images, list):
        raise RequestError(
            "json: cannot unmarshal images into Go struct field GenerateRequest.images of type []api.ImageData"
        )
    for image in images:
        decode_image(image)  # (line breaks skipped, as Go's decoder does)


def _generate_messages(
    prompt: str, system: str, images: Any, modelfile: Any, has_context: bool
) -> list:
    model_system, defaults = _modelfile_parts(modelfile)
    messages: list = []
    if system:
        messages.append({"role": "system", "content": system})
    elif model_system:
        messages.append({"role": "system", "content": model_system})
    if not has_context:
        messages.extend(defaults)
    user: dict = {"role": "user", "content": prompt}
    if images:
        user["images"] = list(images)
    messages.append(user)
    return messages


def render_generate(
    namespace: Any,
    prompt: Any,
    *,
    suffix: Any = None,
    system: Any = None,
    images: Any = None,
    think: Any = None,
    raw: bool = False,
    context: Any = None,
    template_in_request: bool = False,
    modelfile: Any = None,
    now: Any = None,
    **_ignored: Any,
) -> str:
    """The prompt Ollama's GenerateHandler builds for this request with the compiled module
    ``namespace`` as the model's template (``template_in_request``: as the request's
    ``template``). ``modelfile``: the model's defaults, ``{"system": ..., "messages": [...]}``.
    Other request keys (model, options, stream, ...) are ignored as Ollama ignores them."""
    prompt, suffix, system = _text(prompt, "prompt"), _text(suffix, "suffix"), _text(system, "system")
    _check_images(images)
    if raw and (template_in_request or system or context):
        raise RequestError(RAW_REFUSED)
    if not prompt:
        raise RequestError(EMPTY_PROMPT)
    if raw:
        return prompt
    if context is not None:
        raise RequestError(CONTEXT_REFUSED)
    think_value, level, is_set = ollama.think_values(think)
    if suffix:
        data = {
            "Prompt": prompt,
            "Suffix": suffix,
            "Response": "",
            "Think": think_value,
            "ThinkLevel": level,
            "IsThinkSet": is_set,
        }
        return ollama.render_data(namespace, data, now)
    messages = _generate_messages(prompt, system, images, modelfile, context is not None)
    if template_in_request:  # the legacy flow: Template.Execute on the values
        return ollama.render_conversation(namespace, messages, None, think, now)
    # the chat-like flow: chatPrompt(..., values.Messages, []api.Tool{}, req.Think, ...)
    return ollama.render_conversation(namespace, image_tagged(messages), [], think, now)


def render_chat(
    namespace: Any, messages: Any, modelfile: Any, tools: Any = None, think: Any = None,
    now: Any = None,
) -> str:
    """``render_conversation`` with the Modelfile's SYSTEM and MESSAGE defaults applied."""
    return ollama.render_conversation(
        namespace, chat_messages(messages, modelfile), tools, think, now
    )


__all__ = ["render_generate", "render_chat", "chat_messages", "image_tagged"]
