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

Both are valid Harmony for both parsers. mockoss keeps the first layout for scripted completions, so
the scenario and fault libraries emit the same tokens whichever library is installed (and the
recipient-in-channel layout stays available through the fault library's ``recipient_position``).
The pieces are tokenized the way the 0.0.8 renderer does: each text piece on its own, as ordinary
text (special-token strings inside a piece are not special), special tokens by id.
"""

from __future__ import annotations

import functools

from openai_harmony import Message, Role

from mockoss.harmony.encoding import encode_text, load_encoding

__all__ = ["render_assistant_message"]

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


def render_assistant_message(message: Message) -> list[int]:
    """Tokens of ``message`` in openai-harmony 0.0.8's render layout, whichever library is installed.

    Shape: ``<|start|>`` ``assistant`` [``:NAME``] [`` to=R``] [``<|channel|>`` C] [`` CT`` |
    `` <|constrain|>REST``] ``<|message|>`` text… then ``<|call|>`` when the message has a recipient,
    else ``<|end|>`` (openai/harmony@ec7606d:src/encoding.rs, ``impl Render<Message>``). A recipient
    ``all`` is not rendered. Text contents are joined in order.

    Raises:
        ValueError: the message is not an assistant message, or holds non-text content.
    """
    if message.author.role != Role.ASSISTANT:
        raise ValueError(f"a scripted message is an assistant message, got role {message.author.role.value!r}")
    tokens = [START, *_ordinary("assistant")]
    if message.author.name is not None:
        tokens += _ordinary(f":{message.author.name}")
    if message.recipient is not None and message.recipient != "all":
        tokens += _ordinary(f" to={message.recipient}")
    if message.channel is not None:
        tokens.append(CHANNEL)
        tokens += _ordinary(message.channel)
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
