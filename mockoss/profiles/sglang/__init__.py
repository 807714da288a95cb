"""Profile ``sglang``: how SGLang (sgl-project/sglang@v0.5.23) serves gpt-oss.

SGLang parses gpt-oss output with its own string parser, not openai-harmony:
:mod:`.harmony_text` reproduces it (with :mod:`.harmony_scan`, its marker scan, and
:mod:`.harmony_fallback`, its text fallback; same events, in time linear in the text, where SGLang
re-parses what it holds with every chunk), :mod:`.detectors` the reasoning and tool-call detectors on top
of it, :mod:`.chat` the Chat Completions wire format, :mod:`.detokenizer` the detokenizer's
incremental text (a character cut between tokens: its printable prefix first). Sources are the 0.5.23 wheel
(``pip download --no-deps sglang==0.5.23``), files under ``python/sglang/srt/`` cited in each module.

What was checked against SGLang's own code, and how:

* The string parser and the tool-call detector: ``tools/sglang_parser_diff.py`` loads
  ``parser/harmony_parser.py`` and ``function_call/gpt_oss_detector.py`` (with its base class) from
  the 0.5.23 wheel (no GPU; the protocol models and ``envs`` stubbed) and compares them with
  :mod:`.harmony_text` and :mod:`.detectors` on every completion of the built-in scenarios (stop
  token kept and trimmed, whole and one token's text at a time) and 3,000 seeded malformed
  strings: 6,196 parses and 3,098 tool-call detections (whole and streamed), 0 differences.
* SGLang's own tests of the parser and of both gpt-oss detectors are converted in
  ``tests/conformance/upstream/test_sglang_upstream.py`` (68 of 76 reproduced; the 8 others are
  cases SGLang 0.5.23's own modules fail the same way, each checked by running it); with the
  Responses cases below, 76 of 84.

All three generation endpoints: run. ``tools/sglang_serving_diff.py`` posts each request to SGLang
0.5.23's own FastAPI app (``http_server.app``) in process, with ``OpenAIServingChat``,
``OpenAIServingResponses`` (:mod:`.responses`, :mod:`.responses_stream`, :mod:`.responses_checks`;
openai-harmony, not the string parser) and ``OpenAIServingCompletion`` (:mod:`.completions`)
unchanged, under the openai 2.8.0 and openai-harmony 0.0.4 the wheel pins; only the engine
(``TokenizerManager.generate_request``: scripted tokens, its text made by SGLang's own
``DetokenizerManager._decode_batch_token_id_output``) and
the chat template's rendering (a real model's tokenizer; its token count comes from mockoss) stand
in. Every completion of the built-in scenarios and 200 seeded token soups: chat with and without a
tool, streamed and not (the built-in ones also with both parsers unset), 11 chat variants on 3
scenarios (``tool_choice`` forms, ``separate_reasoning``, limits, usage options, empty or invalid
``messages``), Responses streamed and not with and without a 9-token limit, Completions streamed
and not with ``skip_special_tokens`` on and off, plus 24 Responses requests ``create_responses``
rejects or echoes (``reasoning.summary``, ``encrypted_content``, no ``model``, ``request_id``, tool
outputs in ``input``; 2 refused by SGLang's request model compared without pydantic's message) and
8 Completions variants (``echo`` of a text and a token prompt, a token prompt, ``continuous_usage_stats``, ``no_stop_trim``,
``[""]``), and ``GET /v1/models`` and ``/v1/models/{model}`` (found and not): 3,284 exchanges
(1,241 chat, 1,028 Responses, 1,012 Completions, 3 model routes), byte for byte after replacing ids
and timestamps (65 streams SGLang drops compared as drops), 0 differences. Not compared: chat's
``reasoning_tokens`` (the scheduler counts them; see ``count_reasoning_tokens``), the prompt
rendering, the response store (``--enable-response-store``: ``previous_response_id``,
``background``, ``GET /v1/responses/{id}``), built-in tool servers, several prompts or ``n`` in a
completion, and ``web_search_call`` items when the browser call is not the last message (read).
SGLang's own Responses/Harmony unit tests are converted in
``tests/conformance/upstream/test_sglang_responses_upstream.py`` (8 of 8 reproduced, 2 of them with
the ``harmony_errors="skip"`` switch for the guard SGLang added after 0.5.23).
SGLang's answers on the built-in scenarios (879 exchanges, not the seeded soups) are recorded in
``tests/profiles/sglang-0.5.23.json`` (``--record``) and replayed in CI by
``tests/profiles/test_sglang_goldens.py``. ``/health`` (a real one-token generation) and
``/get_model_info`` are read, not run.
The releases from 0.5.2 (the first with this string parser) to 0.5.23 are a timeline
(:mod:`.releases`, ``sglang@0.5.2``), each change found by diffing the released wheels.

``tools/goldens/sglang_serving_code.py`` runs the same serving code with the model's own chat
template (SGLang's ``TemplateManager`` and ``_apply_jinja_template``) and the scheduler's
``Req.update_reasoning_tokens``: ``tests/golden/sglang-0.5.23`` (68 cases, 1,505 exchanges of
``mockoss.golden.sglang_cases``, conversations and tool turns included), compared by
``tests/golden/test_sglang_serving_goldens.py``: 1,505 identical, chat ``reasoning_tokens`` and
``prompt_tokens`` included: the model's chat template rendered as SGLang renders it
(:mod:`.template`, summed per message by :mod:`.template_pieces`; ``tool_choice: "none"`` renders no
tools), whose errors are SGLang's 400s with ``tool_description_required`` (:func:`.chat.template_refusal`).

Unverified, so switches or stated guesses: ``metadata.weight_version`` (``"default"``), and
``skip_special_tokens=true`` (0.5.23 forces it off for gpt-oss; the switch shows what the parser's
text fallback does with stripped markers).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from mockoss.profiles.base import (
    ChatRequestView,
    Reply,
    RequestContext,
    ServerInfo,
    check_bool_switches,
    check_choice_switches,
)
from mockoss.profiles.fastapi_body import SGLANG_MESSAGE, parse_error_first
from mockoss.profiles.sglang.context_length import fit_context
from mockoss.profiles.wire import dumps

__all__ = ["SglangProfile"]

#: ``type`` by status. 400: FastAPI's request validation, which SGLang answers with
#: ``HTTPStatus.BAD_REQUEST.phrase`` (http_server.py ``validation_exception_handler``): the 400s the
#: mock gives before any step are of that kind (its own checks, ``_validate_request``, say
#: ``BadRequestError``, e.g. ``Messages cannot be empty.``). 500: ``create_error_response``'s
#: ``InternalServerError`` (``Failed to parse reasoning content``).
_ERROR_TYPES = {400: "Bad Request", 404: "Not Found", 500: "InternalServerError", 503: "ServiceUnavailable"}
_PARSERS = (None, "gpt-oss")


@dataclass(frozen=True, slots=True)
class SglangProfile:
    """SGLang's OpenAI-compatible server serving ``openai/gpt-oss-20b``
    (``python -m sglang.launch_server --model openai/gpt-oss-20b --reasoning-parser gpt-oss
    --tool-call-parser gpt-oss``).

    Attributes:
        reasoning_parser: ``--reasoning-parser``: ``"gpt-oss"`` or ``None`` (off: the whole
            completion, markup and all, is ``content``).
        tool_call_parser: ``--tool-call-parser``: ``"gpt-oss"`` or ``None`` (off: no tool calls,
            and ``<|call|>`` is cut from the text like any stop token, so a call's block never
            closes and the string parser holds it: it vanishes).
        separate_reasoning: the request field's default (``true``); a request's own
            ``separate_reasoning`` wins. ``false`` skips the reasoning parser.
        forward_unknown_tools: ``SGLANG_FORWARD_UNKNOWN_TOOLS``: keep calls to undeclared tools
            (default: dropped).
        skip_special_tokens: strip special tokens before parsing (0.5.23 forces ``false`` for
            gpt-oss; ``true`` shows the text fallback, e.g. ``analysis…assistantfinal…``).
        context_length: ``--context-length``: ``max_model_len`` in ``/v1/models``; a chat or
            completions request that does not fit gets SGLang's 400 or a clamped limit
            (:mod:`mockoss.profiles.sglang.context_length`).
        stream_default_include_usage: ``--stream-response-default-include-usage``: every stream
            ends with the usage chunk, asked for or not.
        count_reasoning_tokens: report ``reasoning_tokens`` (up to the first ``<|end|>``), as the
            scheduler does with the model's chat template (checked: ``tests/golden/sglang-0.5.23``);
            ``false`` reports 0.
        hyphenated_tool_names: the call pattern takes ``-`` in tool names (from 0.5.4; before, a
            call to ``get-weather`` is not found and vanishes).
        stream_plain_text_passthrough: streamed with tools declared, text without Harmony markers
            reaches ``content`` (from 0.5.3; before, it stays in the tool parser's buffer and is
            lost). See :mod:`.releases`.
        harmony_library: the openai-harmony the Responses path parses with: SGLang 0.5.23 pins
            0.0.4, whose header parsing is 0.0.8's (mockoss's emulation, ``"openai-harmony-0.0.8"``:
            ``<|channel|>`` inside a header stays in the recipient); ``"oss-harmony"`` is the
            installed parser. Checked on the built-in scenarios by ``tools/sglang_serving_diff.py``.
        harmony_errors: what the Responses path does with a ``HarmonyError``: ``"raise"`` (0.5.23:
            400, or a dropped stream) or ``"skip"`` (the guard SGLang added after 0.5.23,
            ``HarmonyContext._process_token``, sgl-project/sglang#35299 (open when indexed), per its test at
            sgl-project/sglang@2573fb3e:test/registered/unit/entrypoints/test_harmony_context.py:
            the erroring tokens are skipped until the next ``<|start|>``, the malformed message
            is dropped). The guard's code was not found, so ``"skip"`` follows that test's
            description (the way vLLM's ``process_chunk`` skips; unverified beyond it).
        strict_content_type: the FastAPI the deployment runs (SGLang requires ``fastapi``
            unpinned: the 0.5.2 and 0.5.23 wheels): ``true``, fastapi >= 0.132.0 (what ``pip install`` resolves
            today); ``false``, <= 0.131. Only a request with no ``Content-Type`` whose non-empty
            body is not JSON differs: ``true``, the media-type 400 (:meth:`content_type_refusal`);
            ``false``, FastAPI's JSON error first.
        tool_description_required: the deployment renders prompts with openai/gpt-oss-20b's own
            chat template, whose render errors (a tool without a description, a ``tool`` message
            before any call, ``<|channel|>`` markup in assistant content, arguments that are not a
            JSON object) are SGLang's 400
            (:func:`.chat.template_refusal`, checked by ``tests/golden/sglang-0.5.23``); the
            request plays no scripted step. On by default, as a deployment of the model's own files
            runs; ``false``: such tools are served, as with a ``--chat-template`` that renders them.
    """

    #: The served model name: SGLang serves the model path unless ``--served-model-name`` is set.
    default_model: ClassVar[str] = "openai/gpt-oss-20b"
    #: SGLang does not check a request's ``model``; it echoes it.
    model_check: ClassVar[bool] = False

    name: str = "sglang"
    endpoints: frozenset[str] = frozenset({"chat", "responses", "completions"})
    reasoning_parser: str | None = "gpt-oss"
    tool_call_parser: str | None = "gpt-oss"
    separate_reasoning: bool = True
    forward_unknown_tools: bool = False
    skip_special_tokens: bool = False
    context_length: int = 131072
    stream_default_include_usage: bool = False
    count_reasoning_tokens: bool = True
    hyphenated_tool_names: bool = True
    stream_plain_text_passthrough: bool = True
    harmony_library: str = "openai-harmony-0.0.8"
    harmony_errors: str = "raise"
    strict_content_type: bool = True
    tool_description_required: bool = True

    def __post_init__(self) -> None:
        for switch in ("reasoning_parser", "tool_call_parser"):
            if getattr(self, switch) not in _PARSERS:
                raise ValueError(f"{switch} must be 'gpt-oss' or null, got {getattr(self, switch)!r}")
        check_bool_switches(self, ("separate_reasoning", "forward_unknown_tools", "skip_special_tokens", "stream_default_include_usage", "count_reasoning_tokens", "hyphenated_tool_names", "stream_plain_text_passthrough", "strict_content_type", "tool_description_required"))
        check_choice_switches(self, {"harmony_library": ("openai-harmony-0.0.8", "oss-harmony"), "harmony_errors": ("raise", "skip")})
        if isinstance(self.context_length, bool) or not isinstance(self.context_length, int) or self.context_length < 1:
            raise ValueError(f"context_length must be a positive integer, got {self.context_length!r}")

    def with_switches(self, **switches: Any) -> SglangProfile:
        """Return a copy with some switches changed (``TypeError`` for an unknown name)."""
        return dataclasses.replace(self, **switches)

    def surface(self, endpoint: str, completion: Any, request: Any, ctx: RequestContext) -> Reply:
        """Dispatch to :mod:`.chat`, :mod:`.responses` (and :mod:`.responses_stream`) or
        :mod:`.completions`.

        A chat or completions request that does not fit ``context_length`` gets SGLang's 400, or
        its limit clamped (:func:`mockoss.profiles.sglang.context_length.fit_context`). The chat
        template's 400 is :meth:`request_refusal`'s, which the server core calls before it surfaces
        any completion (a scripted step's, a given one's): a direct caller calls it first.

        Raises:
            ValueError: an endpoint this profile does not serve.
        """
        if endpoint == "chat":  # the chat template's prompt (chat_prompt_tokens); its refusal is request_refusal's
            from mockoss.profiles.sglang.chat import chat_prompt_tokens

            if (prompt := chat_prompt_tokens(request.body, ctx.prompt_tokens, ctx.raw_body)) != ctx.prompt_tokens:
                ctx = dataclasses.replace(ctx, prompt_tokens=prompt)
        if (fitted := fit_context(self, endpoint, completion, request, ctx.prompt_tokens)) is not request:
            if isinstance(fitted, Reply):
                return fitted
            request = fitted
        if endpoint == "chat":
            return self.chat(completion, request, ctx)
        if endpoint == "responses":
            from mockoss.profiles.sglang.responses_route import surface_responses

            return surface_responses(self, completion, request, ctx)
        if endpoint == "completions":
            from mockoss.profiles.sglang.completions import surface_completions

            return surface_completions(self, completion, request, ctx)
        raise ValueError(f"profile sglang does not serve endpoint {endpoint!r}")

    def request_refusal(self, endpoint: str, body: Any, raw: bytes = b"") -> Reply | None:
        """The chat template's 400 for tools it cannot render (:func:`.chat.template_refusal`, with
        ``tool_description_required``), before a scripted step is drawn or a given completion (the
        goldens', an upstream's) is surfaced: SGLang renders the prompt before it generates, so a
        refused request plays no step (:meth:`mockoss.profiles.base.Profile.request_refusal`;
        :meth:`surface` does not check again). ``raw``: the body's bytes (a body counted before
        is then a lookup in the whole-body cache, :func:`mockoss.endpoints.body_count`)."""
        if endpoint == "chat" and self.tool_description_required:
            from mockoss.profiles.sglang.chat import template_refusal

            return template_refusal(body, raw)
        return None

    def own_prompt_tokens(self, endpoint: str, body: Any, raw: bytes, harmony: Callable[[], int]) -> int:
        """``ctx.prompt_tokens`` for the server core (:meth:`mockoss.profiles.base.Profile.own_prompt_tokens`):
        a chat request's count is the chat template's (:func:`.chat.chat_prompt_tokens`, the same
        count :meth:`surface` makes), so the Harmony count ``harmony()`` is made only where that
        one falls back to it; other endpoints count the Harmony prompt. A conversation of
        ``PREFIX_MIN`` messages or more is still counted as Harmony too: that count stores its
        leading messages, which the next turn's validation finds and does not validate again
        (:func:`mockoss.harmony.prompt.seen.find_seen`: 400 messages, ~5 ms of pydantic
        otherwise), and it costs the new messages only."""
        if endpoint != "chat":
            return harmony()
        from mockoss.harmony.prompt.count import PREFIX_MIN
        from mockoss.profiles.sglang.chat import chat_prompt_tokens

        messages = body.get("messages") if type(body) is dict else None
        if type(messages) is list and len(messages) >= PREFIX_MIN:
            return chat_prompt_tokens(body, harmony(), raw)
        return chat_prompt_tokens(body, harmony, raw)

    def for_endpoint(self, endpoint: str) -> Any:
        """The profile as ``/v1/responses`` sees it: the nested OpenAI error shape and the model
        check of ``OpenAIServingResponses`` (see :class:`_ResponsesScope`); else itself."""
        return _responses_scope(self) if endpoint == "responses" else self

    def chat(self, completion: Any, request: ChatRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/chat/completions``, streamed or not."""
        from mockoss.profiles.sglang.chat import surface_chat

        profile = self
        separate = request.body.get("separate_reasoning") if isinstance(request.body, dict) else None
        if isinstance(separate, bool) and separate != self.separate_reasoning:
            profile = dataclasses.replace(self, separate_reasoning=separate)
        return surface_chat(profile, completion, request, ctx)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """SGLang's flat ``ErrorResponse``: ``{"object":"error","message","type","param","code"}``
        (protocol.py ``ErrorResponse``, written by serving_base.py ``create_error_response`` and
        http_server.py's validation handler), ``type`` as in ``_ERROR_TYPES``. The wording of a
        validation message is mockoss's (SGLang's is pydantic's ``str(exc)`` and its error list), and
        ``param`` is null as the handler writes it. An empty ``messages`` list, which mockoss's
        schema refuses first, gets ``_validate_request``'s ``Messages cannot be empty.``
        (``BadRequestError``), as SGLang answers it (checked by ``tools/sglang_serving_diff.py``)."""
        if status == 400 and param == "messages" and "at least 1 item" in message:
            body = {"object": "error", "message": "Messages cannot be empty.", "type": "BadRequestError", "param": None, "code": 400}
            return Reply(status=400, body=dumps(body).encode())
        kind = _ERROR_TYPES.get(status, "BadRequestError" if status < 500 else "InternalServerError")
        return Reply(status=status, body=dumps({"object": "error", "message": message, "type": kind, "param": None, "code": status}).encode())

    def model_not_found(self, model: str) -> Reply:
        """Never used by the server (``model_check`` is false); a 404 in the error shape."""
        return self.error(404, f"The model `{model}` does not exist.", param="model")

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """``GET /health`` (200, empty body), ``GET /v1/models`` (``owned_by: "sglang"``,
        ``root``, ``parent``, ``max_model_len``), ``GET /v1/models/{model}`` (the card, or 404
        ``code: "model_not_found"``), ``GET /model_info`` and ``/get_model_info`` (http_server.py
        ``available_models``, ``retrieve_model``, read)."""
        if method != "GET":
            return None
        if path in ("/health", "/health_generate"):
            return Reply(status=200, body=b"")
        name = info.served_model_names[0]
        if path == "/v1/models":
            cards = [self._card(n, info) for n in info.served_model_names]
            return Reply(status=200, body=dumps({"object": "list", "data": cards}).encode())
        if path.startswith("/v1/models/"):  # retrieve_model: 404 with its own error body
            model = path.removeprefix("/v1/models/")
            if model in info.served_model_names:
                return Reply(status=200, body=dumps(self._card(model, info)).encode())
            error = {"message": f"The model '{model}' does not exist", "type": "invalid_request_error", "param": "model", "code": "model_not_found"}
            return Reply(status=404, body=dumps({"error": error}).encode())
        if path in ("/model_info", "/get_model_info"):
            body = {
                "model_path": name, "served_model_name": name, "tokenizer_path": name, "is_generation": True,
                "preferred_sampling_params": None, "weight_version": "default", "load_format": "auto",
                "reasoning_parser": self.reasoning_parser, "tool_call_parser": self.tool_call_parser,
                "disaggregation_mode": "null", "has_image_understanding": False, "has_audio_understanding": False,
                "model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"],
            }
            return Reply(status=200, body=dumps(body).encode())
        return None

    def _card(self, name: str, info: ServerInfo) -> dict[str, Any]:
        """protocol.py ``ModelCard``: ``owned_by`` ``sglang``, ``root`` the name, ``max_model_len``."""
        return {"id": name, "object": "model", "created": info.created, "owned_by": "sglang", "root": name, "parent": None, "max_model_len": self.context_length}

    def content_type_refusal(self, endpoint: str, content_type: str | None, parsed: bool, raw: bytes) -> Reply | None:
        """SGLang's 400 to a generation ``POST`` not sent as ``application/json`` (no header
        included), in the flat ``ErrorResponse``; ``None`` when FastAPI's JSON parse error comes
        first (:func:`mockoss.profiles.fastapi_body.parse_error_first`). ``/v1/responses``:
        :meth:`_ResponsesScope.content_type_refusal`, the nested shape.

        sgl-project/sglang@v0.5.23:python/sglang/srt/entrypoints/http_server.py
        ``validate_json_request`` (lower-cases the header, cuts it at the first ``;``, refuses
        anything but ``application/json`` with a dict error, ``loc`` ``["header",
        "content-type"]``), answered by its ``validation_exception_handler``: ``f"{str(exc)}
        {str(exc.errors())}"`` (FastAPI's ``ValidationException.__str__``, fastapi 0.165.0
        ``fastapi/exceptions.py``), ``type`` ``Bad Request``, ``param`` null. Read in the 0.5.23
        wheel; the app sets no ``strict_content_type``."""
        if parse_error_first(content_type, parsed, raw, self.strict_content_type):
            return None
        body = {"object": "error", "message": SGLANG_MESSAGE, "type": "Bad Request", "param": None, "code": 400}
        return Reply(status=400, body=dumps(body).encode())

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """FastAPI's own ``{"detail":"Not Found"}`` (404) or ``{"detail":"Method Not Allowed"}``
        (405): Starlette's routing errors do not reach SGLang's ``fastapi.HTTPException`` handler."""
        return Reply(status=status, body=b'{"detail":"Not Found"}' if status == 404 else b'{"detail":"Method Not Allowed"}')


class _ResponsesScope:
    """An :class:`SglangProfile` answering ``/v1/responses``: the same replies, errors in the
    nested shape ``{"error":{"message","type","param","code"}}`` that http_server.py's handlers and
    ``OpenAIServingResponses.create_error_response`` write for that path (``type``: the status
    phrase, ``Bad Request`` for a validation error), and the model checked (``_validate_model``:
    404 ``The model 'X' does not exist``, ``param: "model"``, ``type: "invalid_request_error"``)."""

    __slots__ = ("_profile", "endpoints", "name")
    default_model: ClassVar[str] = "openai/gpt-oss-20b"
    model_check: ClassVar[bool] = True

    def __init__(self, profile: SglangProfile) -> None:
        self._profile = profile
        self.name = profile.name
        self.endpoints = profile.endpoints

    def surface(self, endpoint: str, completion: Any, request: Any, ctx: RequestContext) -> Reply:
        return self._profile.surface(endpoint, completion, request, ctx)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        from http import HTTPStatus

        from mockoss.profiles.sglang.responses import error_body

        try:
            kind = HTTPStatus(status).phrase
        except ValueError:
            kind = "InternalServerError"
        return Reply(status=status, body=error_body(message, kind, status, None))

    def model_not_found(self, model: str) -> Reply:
        from mockoss.profiles.sglang.responses import error_body

        return Reply(status=404, body=error_body(f"The model '{model}' does not exist", status=404, param="model"))

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        return self._profile.probe(method, path, info)

    def route_error(self, status: int, method: str, path: str) -> Reply:
        return self._profile.route_error(status, method, path)

    def content_type_refusal(self, endpoint: str, content_type: str | None, parsed: bool, raw: bytes) -> Reply | None:
        """:meth:`SglangProfile.content_type_refusal` on ``/v1/responses``: the same 400 in the
        nested shape (``{"error":{"message","type":"Bad Request","param":null,"code":400}}``)."""
        if parse_error_first(content_type, parsed, raw, self._profile.strict_content_type):
            return None
        return self.error(400, SGLANG_MESSAGE)


@functools.lru_cache(maxsize=64)
def _responses_scope(profile: SglangProfile) -> _ResponsesScope:
    return _ResponsesScope(profile)
