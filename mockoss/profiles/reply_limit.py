"""mockoss's bound on one ``/v1/completions`` reply, in bytes (issue 9: memory bounded in bytes).

A batch (``"prompt": [...]``) is answered with one choice per prompt, and streamed with one frame
per generated token (or engine step) per prompt, so its reply grows with the number of prompts,
not with the request's bytes: 40,000 ``"hi"`` prompts (a 240 KB body) streamed 16 tokens each
were 640,000 frames, 162 MB, under vLLM's shape (the breaker's D8). A profile that builds such a
reply stops at :data:`MAX_REPLY_BYTES` and answers a 400 in its server's error shape with
:func:`reply_too_big`'s message. The servers have no such limit (vLLM and TensorRT-LLM queue every
prompt of a batch); it is mockoss's, as ``n > 1`` is (:mod:`mockoss.schemas.completions`).

The bound counts bytes as sent, not characters: both profiles write JSON with UTF-8 kept
(:func:`mockoss.profiles.wire.dumps`, ``ensure_ascii=False``), so a CJK character of a completion
or of an echoed prompt is 3 bytes, an emoji 4, and a control character (``\\u0001``) 6 once
escaped. Each check counts JSON text already written (:func:`wire_bytes`) or frames already
encoded. ``mockoss serve --max-reply-bytes N`` sets the bound; a test sets it with
``monkeypatch.setattr(reply_limit, "MAX_REPLY_BYTES", n)``.
"""

from __future__ import annotations

__all__ = ["MAX_REPLY_BYTES", "reply_too_big", "wire_bytes"]

#: Bytes one reply may take: the JSON body, or all the frames of a stream together. 32 MiB holds
#: 8,000 prompts streamed 16 tokens each under vLLM's shape (~4 KB a prompt), or ~100,000 not
#: streamed. Read per request (``mockoss serve --max-reply-bytes N`` sets it; a test may lower it).
MAX_REPLY_BYTES = 32 * 1024 * 1024


def reply_too_big(prompts: int, size: int, limit: int) -> str:
    """The 400 message for a reply of at least ``size`` bytes to ``prompts`` prompts, over ``limit``."""
    return (
        f"mockoss: the reply to these {prompts} prompts would be over {limit} bytes (at least {size}): "
        f"mockoss's limit on one /v1/completions reply (MAX_REPLY_BYTES; `mockoss serve --max-reply-bytes N` "
        f"raises it); send fewer prompts or a lower max_tokens"
    )


def wire_bytes(text: str) -> int:
    """Bytes ``text`` (JSON already written) takes in UTF-8: ``len(text)`` for ASCII text (checked
    first, at memory speed), else the length of its encoding. A lone surrogate counts 3 bytes
    (``surrogatepass``) rather than raising here: the reply's own encoding reports it (a 400,
    :mod:`mockoss.server.replies`)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
