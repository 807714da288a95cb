"""The token layout of a scripted assistant message: what "the model" emits, fixed across libraries.

A scripted completion is the model's output, not the server's: it must not change when the server's
Harmony library changes. openai-harmony 0.0.8 and its fork oss-harmony 0.0.11 (which current vLLM
ships) render the same :class:`openai_harmony.Message` differently:

* openai-harmony 0.0.8 (openai/harmony@ec7606d:src/encoding.rs, ``impl Render<Message>``):
  ``<|start|>assistant to=R<|channel|>C CT<|message|>…``, the recipient in the role position and the
  content type as text (a leading ``<|constrain|>`` as the special token);
* oss-harmony 0.0.11 (measured with the wheel from the package index; no public source is
  reachable here): ``<|start|>assistant<|channel|>C to=R <|constrain|>CT<|message|>…``, the recipient
  after the channel and ``<|constrain|>`` put before a content type that lacks it.

Both are valid Harmony for both Harmony libraries' parsers (openai/harmony@ec7606d:docs/format.md,
"Receiving tool calls": "The recipient might be defined in the role or channel section of the
header"). mockoss keeps the first layout by default for scripted completions, so the scenario and
fault libraries emit the same tokens whichever library is installed, and replies recorded from real
servers stay as recorded.

Where the recipient goes (``recipient_position``): ``"role"`` (the default, above) or ``"channel"``
(``<|start|>assistant<|channel|>commentary to=functions.x <|constrain|>json<|message|>…``), which is
how gpt-oss itself usually writes a call (the function-calling example of
openai/harmony@ec7606d:docs/format.md) and what oss-harmony 0.0.11's renderer gives (same token
ids: ``tests/harmony/test_layout_recipient_position.py``). Servers that parse with a Harmony library
read both; servers with their own string parser read only the channel form in chat:

* both positions give the call: ``vllm`` and ``vllm-2025`` (the openai-harmony parser; vLLM 0.10.1's
  chat path returns no calls at all), ``ollama``, ``llamacpp``, ``lmstudio``, ``trtllm``, ``openai``,
  ``gptoss-reference``, and ``sglang``'s Responses API;
* only ``channel`` gives it: ``sglang``'s chat path (``GptOssDetector``: the pattern
  ``to=NAME\\s*<|constrain|>json<|message|>`` and, non-streamed, the
  ``<|start|>assistant<|channel|>commentary`` check, so a call that is the completion's first message
  stays text there: sgl-project/sglang@v0.5.23:python/sglang/srt/function_call/gpt_oss_detector.py,
  :mod:`mockoss.profiles.sglang.detectors`), and ``vllm-mlx`` when streamed (Responses; chat only with
  ``reasoning_parser: null``): its Harmony tool parser reads ``<|channel|>commentary to=functions.NAME``
  (waybarrios/vllm-mlx@v0.6.0:vllm_mlx/tool_parsers/harmony_tool_parser.py,
  :mod:`mockoss.profiles.vllm_mlx.parsers`); non-streamed, vllm-mlx cleans the text before parsing
  and returns no call in either position (waybarrios/vllm-mlx#562);
* neither: ``mlx-lm`` (no Harmony handling: the call is raw markup in ``content``,
  :mod:`mockoss.profiles.mlxlm`).

The pieces are tokenized the way the 0.0.8 renderer does: each text piece on its own, as ordinary
text (special-token strings inside a piece are not special), special tokens by id; in the channel
form ``<|channel|>`` C, `` to=R``, then the content type as in the role form.
"""

from __future__ import annotations

import functools

from openai_harmony import Message, Role

from mockoss.harmony.encoding import encode_text, load_encoding

# Where `` to={recipient}`` goes in a message header (re-exported): after the role (openai-harmony
# 0.0.8's renderer, mockoss's default) or after ``<|channel|>{channel}`` (as gpt-oss usually writes it).
from mockoss.recipient_position import RECIPIENT_POSITIONS, RecipientPosition, check_value

__all__ = ["RECIPIENT_POSITIONS", "RecipientPosition", "render_assistant_message"]

START, CHANNEL, MESSAGE, CONSTRAIN, END, CALL = 200006, 200005, 200008, 200003, 200007, 200012
_CONSTRAIN_TEXT = "<|constrain|>"


#: Longest text whose tokens :func:`_ordinary` keeps (channel names, recipients, content types and
#: short contents repeat; long contents are kept with their completion, by
#: :data:`mockoss.harmony.completion._interned` and the scenario cache, both bounded in bytes).
#: Kept for any length, 4,096 entries held every uploaded scenario's message text and tokens after
#: its session was gone (~3.5 MB per 169 KB upload; issue 9 review, finding 7).
CACHED_TEXT_CHARS = 1024


def _ordinary(text: str) -> tuple[int, ...]:
    """``text`` as ordinary o200k_harmony tokens (the renderer's ``encode_ordinary``); a long
    one by :func:`mockoss.harmony.encoding.encode_text`, which a caller may have sent to another
    process (``ENCODE_ELSEWHERE``: the same ids)."""
    if len(text) > CACHED_TEXT_CHARS:
        return tuple(encode_text(text, special=False))
    return _ordinary_cached(text)


def _encode_ordinary(text: str) -> tuple[int, ...]:
    return tuple(load_encoding().encode(text, allowed_special=set(), disallowed_special=()))


#: At most 4,096 texts of at most CACHED_TEXT_CHARS characters: ~4 MiB of text, a few times that with tokens.
_ordinary_cached = functools.lru_cache(maxsize=4096)(_encode_ordinary)


def render_assistant_message(message: Message, recipient_position: RecipientPosition = "role") -> list[int]:
    """Tokens of ``message`` in openai-harmony 0.0.8's render layout, whichever library is installed.

    Shape: ``<|start|>`` ``assistant`` [``:NAME``] [`` to=R``] [``<|channel|>`` C] [`` CT`` |
    `` <|constrain|>REST``] ``<|message|>`` text… then ``<|call|>`` when the message has a recipient,
    else ``<|end|>`` (openai/harmony@ec7606d:src/encoding.rs, ``impl Render<Message>``). A recipient
    ``all`` is not rendered. Text contents are joined in order.

    ``recipient_position="channel"`` moves `` to=R`` after ``<|channel|>`` C when the message has
    both (``<|start|>assistant<|channel|>commentary to=functions.x <|constrain|>json<|message|>…``,
    openai/harmony@ec7606d:docs/format.md's function-calling example, oss-harmony 0.0.11's render);
    a message without a (non-empty) channel or recipient, or with an author name, keeps the role
    form. That fallback serves the fault library, whose one ``recipient_position`` renders every
    message of a step (reasoning and answers too); a scripted message that asks for ``"channel"``
    without both is refused before it gets here (:func:`mockoss.recipient_position.check_message`:
    the YAML schema and ``mockoss.steps.Message``). See the module docstring for which servers
    parse which position.

    Raises:
        ValueError: the message is not an assistant message, or holds non-text content, or
            ``recipient_position`` is neither ``"role"`` nor ``"channel"``.
    """
    if message.author.role != Role.ASSISTANT:
        raise ValueError(f"a scripted message is an assistant message, got role {message.author.role.value!r}")
    check_value(recipient_position, unset=False)  # the words of mockoss.steps and the YAML schema
    tokens = [START, *_ordinary("assistant")]
    if message.author.name is not None:
        tokens += _ordinary(f":{message.author.name}")
    recipient = f" to={message.recipient}" if message.recipient is not None and message.recipient != "all" else None
    in_channel = (
        recipient_position == "channel"
        and bool(message.recipient)
        and bool(message.channel)
        and recipient is not None
        and message.author.name is None
    )
    if recipient is not None and not in_channel:
        tokens += _ordinary(recipient)
    if message.channel is not None:
        tokens.append(CHANNEL)
        tokens += _ordinary(message.channel)
        if in_channel:
            tokens += _ordinary(recipient)  # type: ignore[arg-type]
    if (content_type := message.content_type) is not None:
        if content_type.startswith(_CONSTRAIN_TEXT):
            tokens += _ordinary(" ")
            tokens.append(CONSTRAIN)
            if rest := content_type[len(_CONSTRAIN_TEXT) :]:
                tokens += _ordinary(rest)
        else:
            tokens += _ordinary(f" {content_type}")
    tokens.append(MESSAGE)
    for part in message.content:
        text = getattr(part, "text", None)
        if text is None:
            raise ValueError(f"a scripted message holds text content only, got {type(part).__name__}")
        tokens += _ordinary(text)
    tokens.append(CALL if message.recipient is not None else END)
    return tokens
