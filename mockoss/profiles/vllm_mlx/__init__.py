"""Profile ``vllm-mlx``: how vllm-mlx (waybarrios/vllm-mlx, PyPI ``vllm-mlx``) serves gpt-oss.

Source: the 0.6.0 wheel and sdist (``pip download --no-deps vllm-mlx==0.6.0``), cited as
``waybarrios/vllm-mlx@v0.6.0:vllm_mlx/<file>``; history read in the GitHub repository (its tags end
at v0.4.1; 0.5.0 and 0.6.0 were read from their wheels). Started as
``vllm-mlx serve mlx-community/gpt-oss-20b-MXFP4-Q8 --reasoning-parser gpt_oss
--enable-auto-tool-choice --tool-call-parser harmony`` (the configuration of
waybarrios/vllm-mlx#562; ``gpt-oss`` is an alias of the ``harmony`` tool parser).

vllm-mlx parses gpt-oss output with its own regular expressions over the detokenized text, not
with openai-harmony: :mod:`.parsers` reproduces them; :mod:`.chat` the engine's text and the chat
reply, :mod:`.stream` the chat stream, :mod:`.completions`, :mod:`.responses` and
:mod:`.responses_stream` the other routes.
What a client sees, in short: streamed chat, ``reasoning_content`` and ``content`` from the
parsers, and a tool call only when the Harmony tool parser ever sees the commentary block (with
the ``gpt_oss`` or ``harmony`` reasoning parser it never does: the block falls in the reasoning
parser's "transition" or suppressed commentary state, so the call is lost; a streamed Responses
request parses the raw text again at the end and does return it). The ``harmony`` reasoning
parser looks for the channel name in the delta that holds ``<|channel|>``; streamed a token at a
time it never sees ``final``, so the answer streams as ``reasoning_content`` too. Non-streamed (chat,
text completions, Responses), the engine has already cleaned the text (``clean_output_text``), so
no reasoning, and without a final channel the analysis text and the call's arguments end up in
``content`` (``'Need the weather.{"city":"Paris"}'``, waybarrios/vllm-mlx#562's symptom).

What was checked against vllm-mlx's own code, and how: ``tools/vllm_mlx_diff.py`` imports the
0.6.0 wheel's ``server.py`` on Linux (``mlx[cpu]``, ``mlx-lm`` 0.31.3, ``transformers`` stubbed)
and serves its real FastAPI app in process, with its real reasoning and tool parsers, its
``clean_output_text`` and mlx-lm's real ``BPEStreamingDetokenizer``; only the engine is replaced,
by one that replays the scripted tokens the way ``SimpleEngine`` with ``MLXLanguageModel`` does
(read, not run: the engine's own code needs a model). Every completion of the built-in scenarios
and 300 seeded ones, under three parser configurations, as chat and Responses (no tools, a tool,
a tool with ``tool_choice: "none"``) and text completion, each streamed and not, with no limit and a
token limit, plus the probes, route errors and the model check, are compared byte for byte (ids
and timestamps normalised): 26,681 replies, 0 differ, on each release of the timeline (0.4.0,
0.4.1, 0.5.0, 0.6.0, with its switch values). The built-in scenarios' 2,448 replies of 0.6.0
are recorded as goldens that ``tests/golden/test_vllm_mlx_goldens.py`` replays in CI. The
parsers' own tests are converted in ``tests/conformance/upstream/test_vllm_mlx_upstream.py``.

Read, not run, so stated guesses: the engine's text (mlx-lm's detokenizer; the EOS set
``<|return|>``, ``<|call|>``, ``<|endoftext|>`` from gpt-oss's ``generation_config.json``); the
non-streamed ``completion_tokens`` without tools (the text re-encoded, here by o200k_harmony, by
the Hugging Face tokenizer there); ``prompt_tokens`` (mockoss's Harmony rendering, not the model's
Jinja template or openai-harmony's rendering). Not emulated: ``previous_response_id`` and the
response store,
``/v1/messages`` (404 here); of the generic tool parser that runs when the Harmony parser finds no
call (or when no tool parser is set), only its raw-JSON ``{"name", "arguments"}`` branch (other
model families' markup is left alone, and the generic *streaming* parser used with tools but no
``--tool-call-parser`` is not emulated: such a stream is parsed as if no tools were declared); the
continuous-batching engine,
``response_format``, ``enable_thinking`` and ``stop``; the exact pydantic entries of FastAPI's 422
for a JSON object the models refuse (mockoss's own validation answers a 422 with one ``value_error``
entry in its own words; a body that is not a JSON object, empty or malformed gets FastAPI's own
entries: :meth:`VllmMlxProfile.body_refusal`).
Timeline: :mod:`.releases`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from mockoss.profiles.base import ChatRequestView, Reply, RequestContext, ServerInfo, check_bool_switches
from mockoss.profiles.fastapi_body import body_errors, default_reply, fastapi_text_reply, unparsed_body
from mockoss.profiles.wire import dumps

__all__ = ["VllmMlxProfile"]


def _json(status: int, body: Any) -> Reply:
    return Reply(status=status, body=dumps(body).encode())

_REASONING = (None, "gpt_oss", "harmony")
_TOOLS = (None, "harmony")


@dataclass(frozen=True, slots=True)
class VllmMlxProfile:
    """``vllm-mlx serve`` (0.6.0) with gpt-oss and the SimpleEngine.

    Attributes:
        reasoning_parser: ``--reasoning-parser``: ``"gpt_oss"`` (``reasoning/gpt_oss_parser.py``),
            ``"harmony"`` (``reasoning/harmony_parser.py``) or ``None`` (streamed deltas have the
            Harmony tokens stripped; the rest of the markup text stays).
        tool_call_parser: ``--tool-call-parser harmony`` (or ``gpt-oss``) with
            ``--enable-auto-tool-choice``; ``None``: vllm-mlx's generic parser alone (its raw-JSON
            branch reproduced; streamed with tools, not emulated).
        max_tokens: ``--max-tokens``, the limit when a request sets none (32768).
        max_request_tokens: ``--max-request-tokens``: a larger ``max_tokens`` is a 400.
        healthy: ``/health`` says ``healthy``; false: ``unhealthy`` (a failed lazy load).
        harmony_call_fix: waybarrios/vllm-mlx#562 (0.4.1): a call may end at ``<|end|>``, the next
            channel or the end of the text, the stream gate knows the Harmony markers, and an
            analysis-only text is handed to the tool parser. ``False`` (0.2.6–0.4.0): a call must
            end in ``<|call|>``, which the engine never writes, so no call is ever returned.
        body_generation_metadata, chunk_generation_metadata: the ``"generation_metadata": null``
            field on responses (from 0.4.0) and on stream chunks (from 0.6.0).
        stream_finish_guard: a chat stream whose finished output a parser swallowed still ends
            with a ``finish_reason`` chunk (0.5.0, waybarrios/vllm-mlx#673 for #672); ``False``:
            the stream ends without one when the finished output carries text the parser holds,
            and (Responses stream) reasoning-parser content skips the tool parser.
        tool_parse_needs_tools: ``_parse_tool_calls_with_parser`` returns the text untouched when
            the request declares no tools (0.5.0); ``False``: the Harmony parser runs anyway, so a
            Responses request with no tools can get a ``function_call`` item.
    """

    #: The served model: vllm-mlx serves the model path given to ``serve``.
    default_model: ClassVar[str] = "mlx-community/gpt-oss-20b-MXFP4-Q8"
    #: ``_validate_model_name``: another ``model`` is a 404.
    model_check: ClassVar[bool] = True

    name: str = "vllm-mlx"
    endpoints: frozenset[str] = frozenset({"chat", "completions", "responses"})
    reasoning_parser: str | None = "gpt_oss"
    tool_call_parser: str | None = "harmony"
    max_tokens: int = 32768
    max_request_tokens: int = 32768
    healthy: bool = True
    harmony_call_fix: bool = True
    body_generation_metadata: bool = True
    chunk_generation_metadata: bool = True
    stream_finish_guard: bool = True
    tool_parse_needs_tools: bool = True

    def __post_init__(self) -> None:
        if self.reasoning_parser not in _REASONING:
            raise ValueError(f"reasoning_parser must be 'gpt_oss', 'harmony' or null, got {self.reasoning_parser!r}")
        if self.tool_call_parser == "gpt-oss":
            object.__setattr__(self, "tool_call_parser", "harmony")
        if self.tool_call_parser not in _TOOLS:
            raise ValueError(f"tool_call_parser must be 'harmony' (or 'gpt-oss') or null, got {self.tool_call_parser!r}")
        for switch in ("max_tokens", "max_request_tokens"):
            value = getattr(self, switch)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{switch} must be a positive integer, got {value!r}")
        check_bool_switches(self, ("healthy", "harmony_call_fix", "body_generation_metadata", "chunk_generation_metadata", "stream_finish_guard", "tool_parse_needs_tools"))

    def with_switches(self, **switches: Any) -> VllmMlxProfile:
        """Return a copy with some switches changed (``TypeError`` for an unknown name)."""
        return dataclasses.replace(self, **switches)

    def surface(self, endpoint: str, completion: Any, request: Any, ctx: RequestContext) -> Reply:
        """``chat`` (:mod:`.chat`), ``completions`` (:mod:`.completions`) or ``responses``
        (:mod:`.responses`, :mod:`.responses_stream`)."""
        if endpoint == "chat":
            return self.chat(completion, request, ctx)
        if endpoint == "responses":
            from mockoss.profiles.vllm_mlx.responses import surface_responses
            from mockoss.profiles.vllm_mlx.responses_input import previous_response_error

            if (refused := previous_response_error(self, request.body)) is not None:
                return refused
            return surface_responses(self, completion, request, ctx, request.model)
        if endpoint != "completions":
            raise ValueError(f"profile vllm-mlx does not serve endpoint {endpoint!r}")
        from mockoss.profiles.vllm_mlx.completions import surface_completions

        asked = request.body.get("max_tokens") if isinstance(request.body, dict) else None
        if isinstance(asked, int) and asked > self.max_request_tokens:
            return _json(400, {"detail": f"max_tokens exceeds server limit ({self.max_request_tokens})"})
        return surface_completions(self, completion, request, ctx, request.model)

    def chat(self, completion: Any, request: ChatRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/chat/completions``, streamed or not; a ``max_tokens`` above
        ``max_request_tokens`` is a 400 (``_resolve_request_max_tokens``)."""
        from mockoss.profiles.vllm_mlx.chat import surface_chat

        if request.max_tokens is not None and request.max_tokens > self.max_request_tokens:
            return _json(400, {"detail": f"max_tokens exceeds server limit ({self.max_request_tokens})"})
        return surface_chat(self, completion, request, ctx, request.model)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """vllm-mlx's error bodies (it registers no exception handler, so they are FastAPI's): a
        request mockoss's validation rejects (a 400 naming a ``param``, or a body that is not a
        JSON object known only parsed: :meth:`body_refusal` answers those with bytes) is FastAPI's request-validation 422 ``{"detail":[{…}]}`` (entry ``type:
        "value_error"``, ``loc`` from ``param``, mockoss's wording: the exact pydantic entries, e.g.
        ``missing`` / ``greater_than``, are not reproduced); anything else, a scripted
        ``error(400, …)`` included, is an ``HTTPException`` body ``{"detail": "<message>"}`` with its
        status."""
        if status == 400 and (param is not None or message.startswith("Invalid request")):
            loc = ["body", *(param.split(".") if param else ())]
            return _json(422, {"detail": [{"type": "value_error", "loc": loc, "msg": message, "input": None}]})
        return _json(status, {"detail": message})

    def body_refusal(self, body: Any, raw: bytes | None) -> Reply | None:
        """FastAPI's default answer to a body it parsed (or found empty) that is not a JSON object,
        on every route (``create_completion``, ``create_chat_completion``, ``create_response`` take
        one pydantic body model; no exception handler: waybarrios/vllm-mlx@v0.6.0:vllm_mlx/server.py,
        the same in the 0.4.0, 0.4.1 and 0.5.0 wheels): empty, 422 ``missing`` at ``["body"]`` (was
        mockoss's ``value_error``); not JSON, 422 ``json_invalid`` at ``["body", <position>]`` with
        ``json``'s message as ``ctx.error``; not UTF-8 or too deep, 400 ``{"detail":"There was an
        error parsing the body"}``; other JSON (``[1]``, ``null``), 422 ``model_attributes_type``
        (:func:`mockoss.profiles.fastapi_body.body_errors`, :func:`~mockoss.profiles.fastapi_body.default_reply`).
        ``null`` as fastapi >= 0.151.0 answers it (vllm-mlx sets no upper bound; 0.133-0.150 said
        ``missing``). ``None`` for an in-process call with neither body nor bytes."""
        errors = body_errors(body, raw)
        return None if errors is None else default_reply(errors)

    def content_type_refusal(self, endpoint: str, content_type: str | None, parsed: bool, raw: bytes) -> Reply | None:
        """FastAPI's default 422 to a non-empty body it does not parse, no ``Content-Type``
        included (500 for bytes that are not UTF-8: :func:`mockoss.profiles.fastapi_body.fastapi_text_reply`),
        else ``None``. vllm-mlx has no media-type check and no validation handler of its own
        (waybarrios/vllm-mlx@4b654c0:vllm_mlx/server.py; the 0.5.0 and 0.6.0 wheels' ``FastAPI(``
        sets no ``strict_content_type``).

        No header is refused as text, fastapi >= 0.132.0's ``strict_content_type``, on every
        release of the timeline: 0.4.0 to 0.6.0 require ``starlette>=1.0.1``
        (waybarrios/vllm-mlx@c6b5557:pyproject.toml, "require patched Starlette (#587)"; the 0.5.0
        and 0.6.0 wheels' metadata), and every fastapi before 0.133.0 caps starlette below 1.0
        (0.131.0 and 0.132.0: ``starlette<1.0.0``; 0.133.0: ``starlette>=0.40.0``)."""
        return fastapi_text_reply(raw) if unparsed_body(content_type, raw, strict=True) else None

    def model_not_found(self, model: str) -> Reply:
        """``_validate_model_name``: 404 naming the served model (the default name here)."""
        return _json(404, {"detail": f"The model `{model}` does not exist. Available model: `{self.default_model}`"})

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """``GET /health`` and ``GET /v1/models`` (``owned_by: "vllm-mlx"``), server.py ``health``
        and ``list_models``."""
        if method != "GET":
            return None
        name = info.served_model_names[0]
        if path == "/health":
            body = {
                "status": "healthy" if self.healthy else "unhealthy", "model_loaded": True, "model_name": name,
                "available_models": [name], "model_type": "llm", "engine_type": "simple", "mcp": None,
            }
            return Reply(status=200, body=json.dumps(body, separators=(",", ":")).encode())
        if path == "/v1/models":
            data = [{"id": n, "object": "model", "created": info.created, "owned_by": "vllm-mlx"} for n in info.served_model_names[:1]]
            return Reply(status=200, body=json.dumps({"object": "list", "data": data}, separators=(",", ":")).encode())
        return None

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """Starlette's routing errors: ``{"detail":"Not Found"}`` (404), ``{"detail":"Method Not
        Allowed"}`` (405)."""
        return Reply(status=status, body=b'{"detail":"Not Found"}' if status == 404 else b'{"detail":"Method Not Allowed"}')
