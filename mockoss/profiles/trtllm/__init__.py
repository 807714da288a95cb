"""Profile ``trtllm``: how TensorRT-LLM's OpenAI-compatible server (``trtllm-serve``) serves gpt-oss.

For a ``gpt_oss`` model ``trtllm-serve`` routes ``/v1/chat/completions`` to ``chat_harmony``, which
renders the prompt and parses the output with openai-harmony (pinned ``openai-harmony==0.0.4`` in
its ``requirements.txt``) through its own Harmony adapter, ``tensorrt_llm/serve/harmony_adapter.py``.
:mod:`.adapter` reproduces the adapter's own mapping rules (the parser is mockoss's genuine
openai-harmony trace), :mod:`.chat` the wire, :mod:`.releases` the dated changes.

Sources (NVIDIA/TensorRT-LLM; its mirror is over ``fetch``'s size limit and its wheels are not on
the package index, so files were read one by one in the search tool's index, each at the commit it
is stored at): ``tensorrt_llm/serve/harmony_adapter.py@38134b130944ed5c037949456df20300126ec728``
(read whole), ``tests/unittest/llmapi/apps/test_harmony_parsing.py@2d6bc80262dd1d2c073bbcd2fb3bb57b39c305b7``
and ``tests/unittest/llmapi/apps/test_harmony_channel_validation.py@30d2c50cffa7cb02284d339c0caa335431df007b``
(the later behaviour, which these tests pin), and stored versions of ``openai_server.py``
(routes, ``create_error_response``, ``chat_harmony``), ``openai_protocol.py`` (the models and
their field order), ``postprocess_handlers.py`` and ``executor/result.py`` (stop handling), whose
commits the index does not name.

What was checked, and how: ``tools/trtllm_adapter_diff.py`` runs the adapter module itself
(``harmony_adapter.py`` at 38134b13, in a scratch venv with TensorRT-LLM's pinned
``openai-harmony==0.0.4``; its runtime imports and protocol models stubbed) against this profile at
``trtllm@2025.09.19``, the behaviour of that commit: ``handle_non_streaming_response`` and
``handle_streaming_response`` called per engine response as ``chat_harmony`` does, on every
completion of the built-in scenarios and 300 seeded malformed ones, whole and cut at 7 tokens,
without tools, with tools and with ``tool_choice: "none"``, streamed with ``stream_interval`` 1 and
3: 6,318 replies (4,212 streamed), 0 differ byte for byte with ``harmony_library:
openai-harmony-0.0.8`` (ids and ``created`` normalised); with ``oss-harmony`` 6 differ (the doubled
``<|channel|>`` header, as expected). The module was brought onto the machine by copying the text
the search tool's index stores (the mirror is over ``fetch``'s limit, the wheels are not on the
package index): 73,533 characters, equal in length page by page; never committed. TensorRT-LLM's own
adapter tests are converted in ``tests/conformance/upstream/test_trtllm_upstream.py`` (66 of 67
reproduced). Not checked by running: the behaviours after that commit (the switches dated 2026,
built from the tests and PR descriptions that name them, their code not read), the engine's stop
handling (``executor/result.py`` read: ``<|return|>`` as the end id, not output; ``<|call|>`` a
stop token, trimmed, ``stop_reason`` 200012), what an aborted stream (``should_stop``) sends after
its usage chunk (here nothing but ``[DONE]``), the protocol models (stubbed from the stored
``openai_protocol.py`` of that period), and the routes and error bodies (read).

``/v1/responses`` is :mod:`.responses`, from ``responses_utils.py`` of the same period
(NVIDIA/TensorRT-LLM@83ab45a50d169b08e29e9bf2f46fc66b3838cc37:tensorrt_llm/serve/responses_utils.py), checked
the same way (``tools/trtllm_responses_diff.py``: 4,212 replies, 0 differ); it answers as that
version whatever the release. ``/v1/completions`` is :mod:`.completions`, read from
``openai_server.py`` ``openai_completion``, the completion post-processors of
``postprocess_handlers.py`` and the ``openai_protocol.py`` models of two stored versions (the
Harmony period's and the newest), ``llmapi/tokenizer.py`` and ``sampling_params.py``; TensorRT-LLM's
own completion tests (``_test_openai_completions.py``) are converted in
``tests/conformance/upstream/test_trtllm_completions_upstream.py`` (8 of 8 reproduced).
``tools/trtllm_completions_diff.py`` runs TensorRT-LLM's own completion post-processors (copied
from the index's text: the Harmony period's, 4,938 characters, and the newest, 7,715; protocol
models, ``PostprocArgs`` and ``nvtx_range_debug`` stubbed) on this profile's engine emulation for
every scenario completion and 300 seeded ones, whole and cut at 7 tokens, six request shapes,
streamed with ``stream_interval`` 1 and 3 and not: 11,232 replies (8,424 streamed) per version,
0 differ from ``trtllm@2025.09.19`` and from the defaults respectively (ids by order of appearance,
``created`` zeroed). Not checked by running: the engine's stop handling and the Hugging Face
tokenizer's detokenization (o200k_harmony's decode stands in for it; both sides get the same
text), ``openai_completion`` itself (several prompts, errors), the newest protocol models (the
period's stand in), the stable stream id's shape (``cmpl-`` and the executor's integer request
id there, 32 hex digits here, as for chat), and PR #9514's code (``generation_config_stops`` is
from its title). Not emulated: ``/health_generate``, ``/metrics``, ``/perf_metrics``, the prompt TensorRT-LLM
renders (its own system message: ``prompt_tokens`` is mockoss's rendering), logprobs, and
``DISABLE_HARMONY_ADAPTER=1`` (the plain chat route).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mockoss.harmony.library import HARMONY_LIBRARIES
from mockoss.profiles.base import ChatRequestView, Reply, RequestContext, ServerInfo, check_bool_switches
from mockoss.profiles.fastapi_body import NOT_AN_OBJECT, body_errors, echo_cut, unparsed_body
from mockoss.profiles.wire import dumps

__all__ = ["TrtllmProfile"]

_CHOICES = {
    "stream_usage": ("never", "always", "stream_options"),
    "role_chunk": ("never", "every_batch", "first"),
    "harmony_library": HARMONY_LIBRARIES,
    "completion_usage_chunk": ("chat_chunk", "text_completion"),
    "openai_sdk_keys": ("openai-2.24", "openai-2.40", "openai-2.54", "openai-3.57"),
}
_BOOLS = (
    "channel_validation",
    "tool_calls_on_analysis",
    "reasoning_content_alias",
    "flush_final_batch",
    "merge_deltas",
    "cached_tokens_in_usage",
    "stable_stream_ids",
    "generation_config_stops",
    "completion_cached_tokens",
    "responses_store",
    "responses_retrieve",
)


@dataclass(frozen=True, slots=True)
class TrtllmProfile:
    """``trtllm-serve openai/gpt-oss-20b`` (the PyTorch backend), chat completions through its
    Harmony adapter. Switch values are the newest behaviour known; :mod:`.releases` dates each.

    Attributes:
        harmony_library: the parser library (TensorRT-LLM pins openai-harmony 0.0.4; the closest
            emulated is ``openai-harmony-0.0.8``).
        stream_interval: ``stream_interval`` of the LLM API: tokens per streamed engine response.
        channel_validation: ``_check_channel_valid`` (PR #7849): a message on a third channel after
            analysis and final ends the stream (``finish_reason: "stop"``, generation aborted) and
            is dropped from a non-streamed reply.
        stream_usage: the usage chunk at the end of a stream: ``never`` (before PR #7849),
            ``always`` (#7849), ``stream_options`` (PR #12292: unless ``include_usage`` is false).
        role_chunk: the ``{"role": "assistant"}`` chunk: ``never`` (before #7849), ``every_batch``
            (one before every engine response's chunks: the bug PR #10808 fixed), ``first``.
        tool_calls_on_analysis: PR #12046: ``to=functions.X`` on the analysis channel is a tool
            call (before, its arguments were reasoning), a bare recipient on commentary
            (``to=python``) is streamed as a call (before, as preamble content), and ``code``
            calls lose the ``functions.`` prefix.
        reasoning_content_alias: PR #12046: ``reasoning_content`` repeats ``reasoning``.
        flush_final_batch: PR #12046: the tokens of the last engine response are parsed (before,
            dropped: a stream cut by ``max_tokens`` loses its last ``stream_interval`` tokens).
        merge_deltas: PR #12292: consecutive deltas of one kind within an engine response are
            one chunk.
        cached_tokens_in_usage: PR #12292: ``prompt_tokens_details: {"cached_tokens": 0}``
            (before, ``null``).
        stable_stream_ids: PR #14708: one ``id`` for every chunk of a stream (before, each chunk
            had a fresh ``chatcmpl-`` / ``cmpl-`` id).
        generation_config_stops: PR #9514: generation_config's ``eos_token_id`` list becomes the
            request's stop token ids, so on ``/v1/completions`` ``<|call|>`` and ``<|endoftext|>``
            stop the engine (trimmed, ``stop_reason`` their id); before, only the end id
            ``<|return|>`` did (chat adds the Harmony stop tokens itself either way).
        completion_usage_chunk: the ``/v1/completions`` stream's usage chunk: ``chat_chunk`` (a
            ``ChatCompletionStreamResponse``, as the stored Harmony-period code builds it) or
            ``text_completion`` (the newest code); the PR between them is unknown.
        completion_cached_tokens: ``/v1/completions`` usage has ``prompt_tokens_details:
            {"cached_tokens": 0}`` (the stored Harmony-period and newest post-processors; an older
            stored one, and TensorRT-LLM's completion test at 019a200a, have none: ``null``).
        version: what ``GET /version`` reports.
        responses_store: trtllm-serve's Responses store, on unless the server runs with
            ``TRTLLM_RESPONSES_API_DISABLE_STORE`` set (``openai_server.py``): a
            ``previous_response_id`` it did not store is its 404; off, the id is not looked at
            (:mod:`mockoss.profiles.trtllm.responses_input`). A deployment setting, not a release.
            Off, ``GET``/``DELETE /v1/responses/{id}`` are 400 ``Response storage is disabled``.
        responses_retrieve: NVIDIA/TensorRT-LLM#9937: ``GET`` and ``DELETE
            /v1/responses/{response_id}`` (before, FastAPI's 404); see
            :mod:`mockoss.profiles.trtllm.stored`.
        openai_sdk_keys: the openai SDK installed beside trtllm-serve (``openai`` is unpinned in
            its ``requirements.txt``), which decides whether a Responses ``function_call`` item is
            found as a call (a key or ``null`` its TypedDict does not take makes pydantic pick the
            SDK model, which ``construct_harmony_messages`` finds): ``openai-2.24``,
            ``openai-2.40`` (``namespace``), ``openai-2.54`` (``caller``), ``openai-3.57``
            (``async``, from 3.22.1 on), read in those wheels
            (:data:`mockoss.profiles.trtllm.responses_input.SDK_KEYS`). A deployment setting, not
            a release: no release pins it.
    """

    #: The served model name: the model argument of ``trtllm-serve`` (a directory's basename).
    default_model: ClassVar[str] = "openai/gpt-oss-20b"
    #: trtllm-serve does not check a request's ``model``; the reply echoes it.
    model_check: ClassVar[bool] = False

    name: str = "trtllm"
    endpoints: frozenset[str] = frozenset({"chat", "responses", "completions"})
    harmony_library: Literal["oss-harmony", "openai-harmony-0.0.8"] = "openai-harmony-0.0.8"
    stream_interval: int = 1
    channel_validation: bool = True
    stream_usage: Literal["never", "always", "stream_options"] = "stream_options"
    role_chunk: Literal["never", "every_batch", "first"] = "first"
    tool_calls_on_analysis: bool = True
    reasoning_content_alias: bool = True
    flush_final_batch: bool = True
    merge_deltas: bool = True
    cached_tokens_in_usage: bool = True
    stable_stream_ids: bool = True
    generation_config_stops: bool = True
    completion_usage_chunk: Literal["chat_chunk", "text_completion"] = "text_completion"
    completion_cached_tokens: bool = True
    version: str = "1.2.1"
    responses_store: bool = True
    responses_retrieve: bool = True
    openai_sdk_keys: Literal["openai-2.24", "openai-2.40", "openai-2.54", "openai-3.57"] = "openai-3.57"

    def __post_init__(self) -> None:
        for switch, choices in _CHOICES.items():
            if getattr(self, switch) not in choices:
                raise ValueError(f"{switch} must be one of {', '.join(choices)}, got {getattr(self, switch)!r}")
        check_bool_switches(self, _BOOLS)
        if (
            isinstance(self.stream_interval, bool)
            or not isinstance(self.stream_interval, int)
            or self.stream_interval < 1
        ):
            raise ValueError(f"stream_interval must be a positive integer, got {self.stream_interval!r}")
        if not isinstance(self.version, str):
            raise ValueError(f"version must be a string, got {self.version!r}")  # noqa: TRY004

    def with_switches(self, **switches: Any) -> TrtllmProfile:
        """Return a copy with some switches changed (``TypeError`` for an unknown name)."""
        return dataclasses.replace(self, **switches)

    def surface(self, endpoint: str, completion: Any, request: Any, ctx: RequestContext) -> Reply:
        """``chat`` (:mod:`.chat`), ``responses`` (:mod:`.responses`) or ``completions``
        (:mod:`.completions`); ``ValueError`` for another endpoint."""
        if endpoint == "responses":
            from mockoss.profiles.trtllm.responses import surface_responses

            return surface_responses(self, completion, request, ctx)
        if endpoint == "completions":
            from mockoss.profiles.trtllm.completions import surface_completions

            return surface_completions(self, completion, request, ctx)
        if endpoint != "chat":
            raise ValueError(f"profile trtllm does not serve endpoint {endpoint!r}")
        return self.chat(completion, request, ctx)

    def chat(self, completion: Any, request: ChatRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/chat/completions``, streamed or not."""
        from mockoss.profiles.trtllm.chat import surface_chat

        return surface_chat(self, completion, request, ctx)

    def error(self, status: int, message: str, *, param: str | None = None, kind: str | None = None) -> Reply:
        """``create_error_response``: ``ErrorResponse(object="error", message, type, param, code)``
        dumped whole. Request validation is a 400 ``BadRequestError`` (the handler passes
        ``str(exc)``; the wording here is mockoss's); an exception in ``chat_harmony`` is a 400 with
        type ``internal_error``; other statuses take ``BadRequestError`` below 500, else
        ``InternalServerError``, unless ``kind`` names it (``InvalidRequestError`` for a bad
        ``previous_response_id``). ``param`` is always null: ``create_error_response`` takes none."""
        kind = kind or ("BadRequestError" if status < 500 else "InternalServerError")
        return Reply(
            status=status,
            body=dumps({"object": "error", "message": message, "type": kind, "param": None, "code": status}).encode(),
        )

    def body_refusal(self, body: Any, raw: bytes | None) -> Reply | None:
        """TensorRT-LLM's answer to a body FastAPI parsed (or found empty) that is not a JSON object
        (:func:`mockoss.profiles.fastapi_body.body_errors`), on chat, completions and responses
        (each route takes one pydantic body model). Its ``validation_exception_handler`` answers the
        ``RequestValidationError`` with ``create_error_response(message=str(exc))``: 400
        ``BadRequestError`` whose message is ``str(exc)``, which under the fastapi it pins
        (0.115.4 to 0.121.3, see :meth:`content_type_refusal`) is ``str()`` of the error list
        (``ValidationException`` has no ``__str__``): ``"[{'type': 'json_invalid', 'loc': ('body',
        1), 'msg': 'JSON decode error', 'input': {}, 'ctx': {'error': 'Expecting value'}}]"``;
        empty or ``null``: ``missing`` at ``('body',)``; other JSON: ``model_attributes_type``.
        Not UTF-8, too deep, a too long integer: FastAPI's ``HTTPException``, which the server
        does not handle: 400 ``{"detail":"There was an error parsing the body"}``. The handler
        read in the Harmony period's stored ``openai_server.py`` (``self.llm``, ``chat_harmony``,
        ``DisaggClusterWorker``; the index names no commit); run: a fastapi 0.121.3 app with that
        handler, 16 bodies byte for byte (``tools/fastapi_body_diff.py trtllm``). Not reproduced: the
        ``{"error": str(exc)}`` body of the later handler (NVIDIA/TensorRT-LLM@00057725, after the
        ``generator`` rename; date unknown), as for every validation error of this profile.
        ``None`` for an in-process call with neither body nor bytes."""
        errors = body_errors(body, raw, null_missing=True)
        if errors is None or isinstance(errors, str):
            return None if errors is None else Reply(status=400, body=dumps({"detail": errors}).encode())
        return self._validation_reply(errors)

    def _validation_reply(self, errors: list[dict[str, Any]], marker: str = "") -> Reply:
        """``validation_exception_handler``'s 400 with ``str(exc)`` (the error list's ``str()``),
        then ``marker`` (mockoss's, see :meth:`content_type_refusal`); Starlette's 500 when that
        ``str()`` recurses too deep (the handler raises)."""
        try:
            message = str(errors) + marker
        except RecursionError:  # the handler raises: Starlette's ServerErrorMiddleware
            return Reply(
                status=500, body=b"Internal Server Error", headers=(("content-type", "text/plain; charset=utf-8"),)
            )
        return self.error(400, message)

    def content_type_refusal(self, endpoint: str, content_type: str | None, parsed: bool, raw: bytes) -> Reply | None:
        """TensorRT-LLM's 400 to a non-empty body FastAPI does not parse (``text/plain``,
        form-urlencoded, ...), else ``None``. The server has no media-type check: FastAPI hands
        the route's model the bytes and pydantic refuses them (``model_attributes_type`` at
        ``('body',)``, the bytes as ``input``, :mod:`mockoss.profiles.fastapi_body`), which its
        ``validation_exception_handler`` answers as it answers :meth:`body_refusal`'s errors: 400
        ``BadRequestError`` with ``str(exc)``, the error list's ``str()``, so the bytes' ``repr``:
        ``"[{'type': 'model_attributes_type', 'loc': ('body',), 'msg': 'Input should be a valid
        dictionary or object to extract fields from', 'input': b'{\"model\": ...}'}]"``. Run:
        fastapi 0.121.3 (starlette 0.49.3) with that handler, 11 Content-Types and 9 bodies under
        ``text/plain`` and ``application/octet-stream``, byte for byte (``tools/fastapi_body_diff.py``
        ``build("trtllm")``).

        mockoss's bound: the ``repr`` is of the body's first
        :data:`~mockoss.profiles.fastapi_body.ECHO_BYTES` (1 MiB) bytes, then the marker
        ``" [mockoss: echo cut to the first N of M bytes: ...]"`` after the list
        (:func:`~mockoss.profiles.fastapi_body.echo_cut`). The server echoes the whole body, up to
        5 bytes of reply per byte of body (``repr``, then JSON): an 8 MiB ``text/plain`` body was
        a 40 MiB reply here. Under the bound the reply is the server's byte for byte.

        No ``Content-Type`` is parsed as JSON, as fastapi <= 0.131 does: TensorRT-LLM pins
        fastapi below 0.132 over the whole timeline (2025.08.27 to 2026.05.28):
        ``fastapi==0.115.4`` (NVIDIA/TensorRT-LLM@10bfbb57:requirements.txt), then
        ``fastapi>=0.120.1,<=0.121.3`` (NVIDIA/TensorRT-LLM@000867d9:requirements.txt, still so
        in the review of NVIDIA/TensorRT-LLM#18045, 2026-08-21), until NVIDIA/TensorRT-LLM#17650
        (opened 2026-08-13) raised it to ``>=0.136.3,<0.137``: a later release would refuse it."""
        if not unparsed_body(content_type, raw, strict=False):
            return None
        echoed, marker = echo_cut(raw)
        return self._validation_reply(
            [{"type": "model_attributes_type", "loc": ("body",), "msg": NOT_AN_OBJECT, "input": echoed}], marker
        )

    def model_not_found(self, model: str) -> Reply:
        """Never used (``model_check`` is false); a 404 in the error shape."""
        return self.error(404, f"The model `{model}` does not exist.", param="model")

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """``GET /health`` (200, empty body), ``GET /version`` (``{"version"}``) and
        ``GET /v1/models`` (``ModelList`` of one ``ModelCard``, ``owned_by: "tensorrt_llm"``)."""
        if method != "GET":
            return None
        if path == "/health":
            return Reply(status=200, body=b"")
        if path == "/version":
            return Reply(status=200, body=dumps({"version": self.version}).encode())
        if path == "/v1/models":
            cards = [
                {"id": name, "object": "model", "created": info.created, "owned_by": "tensorrt_llm"}
                for name in info.served_model_names[:1]
            ]
            return Reply(status=200, body=dumps({"object": "list", "data": cards}).encode())
        return None

    def stored_route(self, method: str, path: str, query: str, kept: Any) -> Reply | None:
        """``GET``/``DELETE /v1/responses/{response_id}`` against the server's kept responses
        (another method there: 405), else ``None``; see :mod:`mockoss.profiles.trtllm.stored`."""
        if not path.startswith("/v1/responses/"):
            return None
        from mockoss.profiles.trtllm.stored import stored_route

        return stored_route(self, method, path, query, kept)

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """FastAPI's own ``{"detail":"Not Found"}`` (404) or ``{"detail":"Method Not Allowed"}`` (405)."""
        return Reply(
            status=status, body=b'{"detail":"Not Found"}' if status == 404 else b'{"detail":"Method Not Allowed"}'
        )
