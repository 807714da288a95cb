"""SGLang's answer to a chat or completions request that does not fit ``--context-length``: a 400
before any output, or a smaller token limit. ``P`` is the prompt's length in tokens (usage's count,
``RequestContext.prompt_tokens``), ``M`` the ``context_length`` switch, ``L`` the request's
``max_completion_tokens``/``max_tokens`` (``max_new_tokens``).

Read in the sglang 0.5.23 wheel (``pip download --no-deps sglang==0.5.23``):

* ``TokenizerManager._validate_one_request`` (python/sglang/srt/managers/tokenizer_manager.py),
  without ``--allow-auto-truncate`` and with no speculative decoding (``num_reserved_tokens`` 0):
  ``P >= M`` raises ``ValueError("The input (P tokens) is longer than the model's context length
  (M tokens).")``; then ``L`` set and ``P + L > M`` raises ``Requested token count exceeds the
  model's maximum context length of M tokens. You requested a total of P+L tokens: P tokens from
  the input messages and L tokens for the completion. …``. The OpenAI layer answers both with
  ``create_error_response(str(e))`` (python/sglang/srt/entrypoints/openai/serving_base.py): 400, the
  flat ``ErrorResponse``, ``type`` ``BadRequestError``; a stream too, as its first chunk is awaited
  before HTTP 200 (``_handle_streaming_request`` of serving_chat.py and serving_completions.py).
* The scheduler (python/sglang/srt/managers/scheduler.py ``init_req_max_new_tokens`` and
  managers/utils.py ``validate_input_length``, with ``max_req_len = M - 1`` and
  ``max_req_input_len = max_req_len - 5`` from managers/tp_worker.py, a KV pool larger than the
  context assumed): a prompt of ``M - 6`` tokens or more is aborted with ``Input length (P tokens)
  exceeds the maximum allowed length (M-6 tokens). Use a shorter input or enable
  --allow-auto-truncate.``, which ``_handle_abort_finish_reason`` raises as a ``ValueError`` for a
  non-streamed request (a 400 as above). A stream gets the abort as a chunk after HTTP 200: not
  emulated, the stream is answered as if the prompt fitted. Otherwise the limit is ``min(L,
  M - P - 2)`` (``max_req_len - P - 1``), so a request without ``L`` is clamped there.

``/v1/responses`` is not covered (its ``to_sampling_params`` keeps 2 tokens of headroom and its
errors take another path), nor a completions request with several prompts (mockoss has the sum
of their lengths only).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from mockoss.profiles.context_room import holds_output

if TYPE_CHECKING:
    from mockoss.profiles.base import Reply
    from mockoss.profiles.sglang import SglangProfile

__all__ = ["fit_context"]


def fit_context(profile: SglangProfile, endpoint: str, completion: Any, request: Any, prompt_tokens: int) -> Any:
    """``request`` itself when it fits ``profile.context_length``; a copy whose ``max_tokens`` is
    the scheduler's bound ``M - P - 2`` when that cuts the scripted output; or SGLang's 400
    :class:`~mockoss.profiles.base.Reply` (module docstring). Other endpoints come back unchanged."""
    if endpoint not in ("chat", "completions"):
        return request
    total, limit = profile.context_length, request.max_tokens
    bound = total - prompt_tokens - 2  # the scheduler's max_req_len - P - 1
    if prompt_tokens < total - 6 and (limit <= bound if limit is not None else holds_output(completion, bound)):
        return request  # the common case: it fits and nothing is clamped
    if endpoint == "completions" and len(request.prompts) != 1:
        return request
    if prompt_tokens >= total:
        return _error(f"The input ({prompt_tokens} tokens) is longer than the model's context length ({total} tokens).")
    if limit is not None and prompt_tokens + limit > total:
        message = (
            f"Requested token count exceeds the model's maximum context length of {total} tokens. You requested a "
            f"total of {prompt_tokens + limit} tokens: {prompt_tokens} tokens from the input messages and {limit} "
            "tokens for the completion. Please reduce the number of tokens in the input messages or the completion "
            "to fit within the limit."
        )
        return _error(message)
    if prompt_tokens >= total - 6:
        if request.stream:
            return request  # the abort arrives as a chunk after HTTP 200: not emulated
        message = (
            f"Input length ({prompt_tokens} tokens) exceeds the maximum allowed length ({total - 6} tokens). "
            "Use a shorter input or enable --allow-auto-truncate."
        )
        return _error(message)
    if (limit is not None and limit <= bound) or (limit is None and holds_output(completion, bound)):
        return request
    return dataclasses.replace(request, max_tokens=max(0, bound))


def _error(message: str) -> Reply:
    """``create_error_response(str(e))`` (serving_base.py): 400, the flat ``ErrorResponse``
    (``type`` ``BadRequestError``, not the validation handler's ``Bad Request``), by orjson."""
    from mockoss.profiles.base import Reply
    from mockoss.profiles.wire import dumps

    body = {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}
    return Reply(status=400, body=dumps(body).encode())
